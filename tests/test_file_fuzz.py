"""Property-based fuzzing of every file the project reads: game records, deal files, tournament journals, training
configs and model metadata.

A valid file is mutated at random (a value replaced by junk — ``1.0`` for ``1``, ``true``, NaN, lowercase card
names, nested lists —, a key removed or added). Reading it must either refuse it with a ``ValueError`` (the CLI:
exit 2 and a message, never a traceback) or accept it only when nothing that matters changed: an accepted record
or deal file is exactly the canonical file of what it holds, and a resumed tournament reports the same results.
"""

from __future__ import annotations

import copy
import json
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sixtysix_cli
from eval import TournamentSettings, generate_deals, run_tournament, save_deals
from eval.deals import load_deals
from eval.tournament import JOURNAL_NAME
from sixtysix_env import Game, Rules
from sixtysix_env.record import game_to_record, load_record, record_to_game

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
FEW = settings(max_examples=30, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

json_junk = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 40), st.integers(-(2**70), 2**70), st.just(1.0), st.just(0.0),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6), st.sampled_from(["ah", "Ah", " AH", "play ah"]),
    st.lists(st.integers(0, 3), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _paths(value, prefix=()):
    """Every path (tuple of keys / indices) to a value inside a JSON document, the root excluded."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return []
    paths = []
    for key, inner in items:
        paths.append(prefix + (key,))
        paths.extend(_paths(inner, prefix + (key,)))
    return paths


mutations = st.lists(st.tuples(st.sampled_from(["replace", "delete", "add"]), st.integers(0, 10**6), json_junk),
                     min_size=1, max_size=3)


def mutate(document, operations):
    document = copy.deepcopy(document)
    for kind, choice, junk in operations:
        paths = _paths(document)
        if not paths:
            break
        path = paths[choice % len(paths)]
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        if kind == "replace":
            parent[key] = junk
        elif kind == "delete":
            del parent[key]
        elif isinstance(parent, dict):
            parent[f"extra_{choice % 7}"] = junk
        else:
            parent.insert(key, junk)
    return document


def _write(path, document) -> None:
    path.write_text(json.dumps(document))  # NaN and Infinity become the (non-JSON) tokens a reader must refuse


def _reference_record(preset: str) -> dict:
    game = Game.deal(Rules.preset(preset), seed=11, dealer=1)
    while not game.is_over:
        game.apply(game.legal_actions()[-1])
    return game_to_record(game)


REFERENCE_RECORDS = {preset: _reference_record(preset) for preset in ("paderborn", "three")}  # two and three seats


@pytest.mark.parametrize("preset", sorted(REFERENCE_RECORDS))
@FUZZ
@given(operations=mutations)
def test_fuzzed_game_records_are_refused_or_canonical(tmp_path, capsys, preset, operations):
    """A record, two-player or three-player (R21), is refused with a message or replays to exactly itself."""
    document = mutate(REFERENCE_RECORDS[preset], operations)
    path = tmp_path / "record.json"
    _write(path, document)
    try:
        loaded = load_record(path)
    except ValueError:
        accepted = False
    else:
        accepted = True
        assert game_to_record(record_to_game(loaded)) == with_later_switches(loaded), \
            "an accepted record must be exactly canonical"
    code = sixtysix_cli.main(["replay", str(path)])
    captured = capsys.readouterr()
    assert code == (0 if accepted else 2)
    if not accepted:
        assert captured.err.startswith("sixtysix replay: error: ") and "Traceback" not in captured.err


def _reference_deals(preset: str) -> tuple[list, Rules]:
    from eval.three_tournament import generate_three_player_deals

    rules = Rules.preset(preset)
    return (generate_three_player_deals(3, 2) if rules.players == 3 else generate_deals(3, 2, rules)), rules


REFERENCE_DEALS = {preset: _reference_deals(preset) for preset in ("standard", "three")}  # two and three seats


@pytest.mark.parametrize("preset", sorted(REFERENCE_DEALS))
@FUZZ
@given(operations=mutations)
def test_fuzzed_deal_files_are_refused_or_canonical(tmp_path, preset, operations):
    """A deal file of two-player or three-player (R21) deals is refused with a message, or it is exactly canonical:
    saved again, it is the same document."""
    reference, reference_rules = REFERENCE_DEALS[preset]
    original = tmp_path / "original.json"
    save_deals(original, reference, reference_rules, master_seed=3)
    document = mutate(json.loads(original.read_text()), operations)
    path = tmp_path / "deals.json"
    _write(path, document)
    try:
        deals, rules = load_deals(path)
    except ValueError:
        return
    again = tmp_path / "again.json"
    save_deals(again, deals, rules, master_seed=document.get("master_seed"))
    assert json.loads(again.read_text()) == with_later_switches(document), \
        "an accepted deal file must be exactly canonical"


def with_later_switches(document):
    """``document`` as written today: files from before the three-player switches (schema.LATER_SWITCHES) are
    still read, those switches taking their defaults; everything else must be exactly canonical."""
    from sixtysix_env.schema import LATER_SWITCHES

    if not isinstance(document, dict) or not isinstance(document.get("rules"), dict):
        return document
    defaults = Rules().to_dict()
    rules = {**document["rules"], **{name: defaults[name] for name in LATER_SWITCHES
                                     if name not in document["rules"]}}
    return {**document, "rules": rules}


JOURNAL_SETTINGS = TournamentSettings(agents=("random", "greedy"), rules=Rules(), deals=tuple(generate_deals(5, 2, Rules())),
                                      master_seed=5, bootstrap=0)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("journal") / "run"
    document = run_tournament(JOURNAL_SETTINGS, out_dir=out, progress=False)
    return (out / JOURNAL_NAME).read_text(), {"summary": document["summary"], "units": document["units"]}


@FEW
@given(operations=mutations, line=st.integers(1, 2))
def test_fuzzed_journal_lines_are_refused_or_give_the_same_results(tmp_path, finished_run, operations, line):
    """A resumed tournament over a tampered journal line refuses it, or reports exactly the untampered results
    (only timing fields may change without consequence)."""
    text, expected = finished_run
    lines = text.splitlines()
    lines[line] = json.dumps(mutate(json.loads(lines[line]), operations))
    with tempfile.TemporaryDirectory(dir=tmp_path) as scratch:  # a fresh output directory per example
        out = Path(scratch)
        (out / JOURNAL_NAME).write_text("\n".join(lines) + "\n")
        try:
            document = run_tournament(JOURNAL_SETTINGS, out_dir=out, progress=False)
        except ValueError as error:
            assert "journal" in str(error) or "output directory" in str(error)
            return
    assert {"summary": document["summary"], "units": document["units"]} == expected


@FEW
@given(operations=mutations)
def test_fuzzed_training_configs_are_refused_with_value_errors(tmp_path, operations):
    yaml = pytest.importorskip("yaml", reason="configs need the 'train' extra")
    config_module = pytest.importorskip("train.config", reason="configs need the 'train' extra")
    smoke = yaml.safe_load((Path(__file__).resolve().parent.parent / "configs" / "ppo_smoke.yaml").read_text())
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(mutate(smoke, operations)))
    try:
        config_module.load_config(path)
    except ValueError as error:
        assert str(error)


@FEW
@given(operations=mutations)
def test_fuzzed_model_metadata_is_refused_with_value_errors(tmp_path, operations):
    from agents.ppo import ACTOR_ENTRY, DEFAULT_MODEL, METADATA_ENTRY, PpoAgent

    with zipfile.ZipFile(DEFAULT_MODEL) as source:
        metadata = json.loads(source.read(METADATA_ENTRY))
        actor = source.read(ACTOR_ENTRY)
    path = tmp_path / "model.zip"
    with zipfile.ZipFile(path, "w") as target:
        target.writestr(METADATA_ENTRY, json.dumps(mutate(metadata, operations)))
        target.writestr(ACTOR_ENTRY, actor)
    try:
        PpoAgent(path=str(path))
    except ValueError as error:
        assert str(path) in str(error)



@pytest.fixture(scope="module")
def finished_three_player_run(tmp_path_factory):
    from eval.three_tournament import generate_three_player_deals, run_three_tournament

    deals = generate_three_player_deals(5, 2)
    out = tmp_path_factory.mktemp("journal3") / "run"
    document = run_three_tournament(["greedy", "random", "random"], Rules.preset("three"), deals, master_seed=5,
                                    out_dir=out, progress=False, bootstrap=0)
    return (out / "journal.jsonl").read_text(), deals, document


@FEW
@given(operations=mutations, line=st.integers(1, 2))
def test_fuzzed_three_player_journal_units_are_refused_or_resume_cleanly(tmp_path, finished_three_player_run,
                                                                         operations, line):
    """R21: every unit of the three-player journal is checked and its games replayed from their deal on resume. A
    tampered unit is refused with a ValueError naming the journal, or it resumes to the same summary (only the
    decision times, which no replay can check, may differ): never another exception, never other results."""
    from eval.three_tournament import run_three_tournament

    text, deals, finished = finished_three_player_run
    lines = text.splitlines()
    lines[line] = json.dumps(mutate(json.loads(lines[line]), operations))
    with tempfile.TemporaryDirectory(dir=tmp_path) as scratch:
        out = Path(scratch)
        (out / "journal.jsonl").write_text("\n".join(lines) + "\n")
        try:
            document = run_three_tournament(["greedy", "random", "random"], Rules.preset("three"), deals,
                                            master_seed=5, out_dir=out, progress=False, bootstrap=0)
        except ValueError as error:
            assert "journal.jsonl" in str(error)
            return
    assert document["summary"] == finished["summary"]
