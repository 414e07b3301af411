"""Game records of tournament deals (``--records DIR``, eval/records.py) and ``sixtysix replay FILE`` / ``FILE#N``."""

from __future__ import annotations

import json
import re

import pytest

import sixtysix_cli
from eval import TournamentSettings, generate_deals, run_tournament
from eval.records import file_labels, load_replay, record_name, split_replay_source
from eval.tournament import JOURNAL_NAME, bummerl_deck
from sixtysix_env import CARD_NAMES, Rules
from sixtysix_env.record import load_record, record_to_game

STANDARD = Rules.preset("standard")


def settings_for(agents, count=3, match=False, seed=0):
    return TournamentSettings(
        agents=tuple(agents), rules=STANDARD, deals=tuple(generate_deals(seed, count, STANDARD)), master_seed=seed,
        match=match, bootstrap=0,
    )


def record_files(directory):
    return sorted(path.name for path in directory.glob("*.json"))


def test_records_hold_every_deal_per_seating_and_replay_to_the_results(tmp_path):
    settings = settings_for(["random", "greedy", "heuristic"], count=3)
    document = run_tournament(settings, progress=False, records_dir=tmp_path / "records")
    names = record_files(tmp_path / "records")
    assert len(names) == 3 * 3 * 2  # pairs x deals x seatings
    assert "deal0002_greedy_vs_heuristic.json" in names and "deal0002_heuristic_vs_greedy.json" in names
    for unit in document["units"]:
        a, b = settings.pairs[unit["pair"]]
        deal = settings.deals[unit["deal"]]
        for game in unit["games"]:
            seated = [settings.agents[a], settings.agents[b]][:: 1 if game["seat_a"] == 0 else -1]
            record = load_record(tmp_path / "records" / record_name(unit["deal"], seated))
            assert record["deck"] == [CARD_NAMES[card] for card in deal.deck]  # R4: the deal's deck, unchanged
            assert record["dealer"] == game["dealer"] == deal.dealer
            assert record["result"] == {key: game[key] for key in ("winner", "game_points", "reason", "points")}
            assert list(record_to_game(record).history) == game["actions"]


def test_match_mode_writes_every_deal_of_every_bummerl(tmp_path):
    settings = settings_for(["greedy", "random"], count=2, match=True)
    document = run_tournament(settings, progress=False, records_dir=tmp_path)
    expected = set()
    for unit in document["units"]:
        deal = settings.deals[unit["deal"]]
        for bummerl in unit["bummerls"]:
            seated = ["greedy", "random"] if bummerl["seat_a"] == 0 else ["random", "greedy"]
            for number, game in enumerate(bummerl["deals"]):
                name = record_name(unit["deal"], seated, number)
                expected.add(name)
                record = load_record(tmp_path / name)
                # R17: the Bummerl's k-th deck is derived from its first deal; the dealer alternates (R3).
                assert record["deck"] == [CARD_NAMES[c] for c in bummerl_deck(STANDARD, deal, number)]
                assert record["dealer"] == (deal.dealer + number) % 2
                assert record["result"]["points"] == game["points"]
    assert set(record_files(tmp_path)) == expected
    assert any(name.endswith("_bummerl02.json") for name in expected)  # a Bummerl to 7 takes at least 3 deals (R17)


def test_two_workers_write_the_same_records_as_one(tmp_path):
    settings = settings_for(["random", "greedy"], count=4)
    run_tournament(settings, workers=1, progress=False, records_dir=tmp_path / "one")
    run_tournament(settings, workers=2, progress=False, records_dir=tmp_path / "two")
    names = record_files(tmp_path / "one")
    assert len(names) == 8 and names == record_files(tmp_path / "two")
    for name in names:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_resume_writes_records_of_tasks_finished_before(tmp_path):
    settings = settings_for(["random", "greedy"], count=4)
    out, records = tmp_path / "run", tmp_path / "records"
    run_tournament(settings, out_dir=out, progress=False, records_dir=records)
    reference = {name: (records / name).read_bytes() for name in record_files(records)}
    # Interrupted after two of four tasks, in a run that wrote no records and left a stale file behind.
    journal = out / JOURNAL_NAME
    lines = journal.read_bytes().split(b"\n")
    journal.write_bytes(b"\n".join(lines[:3]) + b"\n")
    for path in records.iterdir():
        path.unlink()
    (records / "deal0000_greedy_vs_random.json").write_text("{stale")
    (records / "deal0001_greedy_vs_random.json").write_text("[" * 100_000 + "]" * 100_000)  # not a RecursionError
    run_tournament(settings, out_dir=out, progress=False, records_dir=records)
    assert {name: (records / name).read_bytes() for name in record_files(records)} == reference
    assert not [path.name for path in records.iterdir() if path.name.endswith(".tmp")]  # atomic writes leave none
    # A finished run started again with --records writes everything from the journal without playing.
    again = tmp_path / "again"
    run_tournament(settings, out_dir=out, progress=False, records_dir=again)
    assert {name: (again / name).read_bytes() for name in record_files(again)} == reference


def test_file_labels_are_safe_and_unique():
    labels = file_labels(["pimc:samples=30,seconds=0.1", "ppo:path=models/ppo_standard.zip", "heuristic#2", "a/b", "a:b"])
    assert labels[:3] == ["pimc-samples=30-seconds=0.1", "ppo-path=models-ppo-standard.zip", "heuristic-2"]
    assert labels[3:] == ["a-b-3", "a-b-4"]  # would clash: the agent index tells them apart
    assert all("/" not in label and "_" not in label for label in labels)


def test_cli_match_and_tournament_take_records(tmp_path, capsys):
    assert sixtysix_cli.main(
        ["match", "heuristic", "random", "--deals", "2", "--records", str(tmp_path / "m"), "--no-progress"]
    ) == 0
    assert "game records written to" in capsys.readouterr().out
    assert len(record_files(tmp_path / "m")) == 4
    assert sixtysix_cli.main(
        ["tournament", "--agents", "random,greedy,pimc:samples=2,seconds=0.01", "--deals", "1", "--out",
         str(tmp_path / "t"), "--records", str(tmp_path / "t" / "records"), "--quiet", "--bootstrap", "0"]
    ) == 0
    names = record_files(tmp_path / "t" / "records")
    assert len(names) == 6 and "deal0000_greedy_vs_pimc-samples=2-seconds=0.01.json" in names
    assert capsys.readouterr().out == ""
    # Each record replays through `sixtysix replay`.
    assert sixtysix_cli.main(["replay", str(tmp_path / "t" / "records" / names[0])]) == 0
    assert "result: player" in capsys.readouterr().out


# --------------------------------------------------------------------------- replay FILE#N
def test_replay_of_a_deals_json_entry_shows_that_deck(tmp_path, capsys):
    out = tmp_path / "run"
    run_tournament(settings_for(["random", "greedy"], count=3, seed=7), out_dir=out, progress=False)
    deals = json.loads((out / "deals.json").read_text())["deals"]
    record = load_replay(f"{out / 'deals.json'}#2")
    assert record["deck"] == deals[2]["deck"] and record["dealer"] == deals[2]["dealer"] and record["actions"] == []
    assert sixtysix_cli.main(["replay", f"{out / 'deals.json'}#2"]) == 0
    text = capsys.readouterr().out
    hands_start = deals[2]["deck"]  # R4: forehand gets cards 1-3 and 7-9
    forehand_hand = sorted(hands_start[0:3] + hands_start[6:9])
    line = next(line for line in text.splitlines() if "(forehand):" in line)
    assert sorted(line.split(":", 1)[1].split()) == forehand_hand
    assert f"trump card {deals[2]['deck'][12]}" in text  # R4: the 13th card is turned up


def test_split_replay_source():
    assert split_replay_source("game.json") == ("game.json", None)
    assert split_replay_source("out/deals.json#12") == ("out/deals.json", 12)
    with pytest.raises(ValueError, match="deal number"):
        split_replay_source("deals.json#-1")
    with pytest.raises(ValueError, match="no file before '#'"):
        split_replay_source("#3")


def test_a_file_whose_name_holds_a_hash_sign_is_a_file(tmp_path):
    out = tmp_path / "run"
    run_tournament(settings_for(["random", "greedy"], count=1), progress=False, records_dir=out)
    source = out / "deal0000_greedy_vs_random.json"
    odd = tmp_path / "odd#1.json"
    odd.write_bytes(source.read_bytes())
    assert load_replay(str(odd)) == json.loads(source.read_text())


@pytest.mark.parametrize(
    "make_source, message",
    [
        (lambda d: f"{d}/missing.json", "replay file '.*missing.json' does not exist"),
        (lambda d: f"{d}/missing.json#0", "deal file '.*missing.json' does not exist"),
        (lambda d: f"{d}/run/deals.json#5", "holds deals 0..1, there is no deal 5"),
        (lambda d: f"{d}/run/deals.json#two", "after '#' comes a deal number .* got 'two'"),
        (lambda d: f"{d}/broken.json", "game record: not valid JSON"),
        (lambda d: f"{d}/broken.json#0", "deal file '.*broken.json': not valid JSON"),
        (lambda d: f"{d}/run/deals.json", r"is a deal file holding 2 deal\(s\), not a game record; pick a deal with FILE#N"),
        (lambda d: f"{d}/run/results.json#0", "is not a deal file .*format 'sixtysix-tournament-results'"),
        (lambda d: f"{d}/bad_deck.json#0", "deal 0: deck position 1 must be a card name.*got 'XX'"),
    ],
)
def test_bad_replay_input_exits_2_naming_the_problem(tmp_path, capsys, make_source, message):
    out = tmp_path / "run"
    run_tournament(settings_for(["random", "greedy"], count=2), out_dir=out, progress=False)
    (tmp_path / "broken.json").write_text('{"format": "sixtysix-record",')
    document = json.loads((out / "deals.json").read_text())
    document["deals"][0]["deck"][0] = "XX"
    (tmp_path / "bad_deck.json").write_text(json.dumps(document))
    assert sixtysix_cli.main(["replay", make_source(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Traceback" not in captured.err
    assert re.search(message, captured.err), captured.err


def test_records_path_that_cannot_be_a_directory_exits_2_before_playing(tmp_path, capsys):
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a directory")
    code = sixtysix_cli.main(["match", "random", "greedy", "--deals", "1", "--records", str(blocker / "records"),
                              "--no-progress"])
    assert code == 2
    error = capsys.readouterr().err
    assert f"game records folder '{blocker / 'records'}': cannot write files there" in error and "Traceback" not in error


# ------------------------------------------------------------------ found by a mutation review of eval/ (session 72)
def test_file_labels_drop_leading_dots_and_dashes_and_are_capped():
    """No record file name starts with a dot (hidden) or a dash (read as an option), and a long spec is cut to
    MAX_LABEL_LENGTH characters so the name stays far below the file system's limit."""
    from eval.records import MAX_LABEL_LENGTH

    assert file_labels([".hidden", "-x-", "..", "pimc:" + "a" * 300]) == [
        "hidden", "x", "agent", ("pimc-" + "a" * 300)[:MAX_LABEL_LENGTH]]
    assert record_name(3, ["a", "b"], 0) == "deal0003_a_vs_b_bummerl00.json"  # numbered from 0, as in results.csv


def test_records_are_written_once_and_checked_against_their_replay(tmp_path):
    """Resuming rewrites no record that already holds the right game; a game whose reported result is not what its
    actions replay to is refused (the record would show one result and the table count another)."""
    from eval.records import _replayed, write_records

    records = [("one.json", {"deck": ["AH"], "actions": [1]}), ("two.json", {"deck": ["TH"], "actions": []})]
    assert write_records(tmp_path, records) == 2
    assert write_records(tmp_path, records) == 0
    assert write_records(tmp_path, [("one.json", {"deck": ["AH"], "actions": [2]})]) == 1
    from sixtysix_env import Game

    rules = Rules.preset("standard")
    deal = generate_deals(4, 1, rules)[0]
    game, actions = Game.deal(rules, deck=list(deal.deck), dealer=deal.dealer), []
    while not game.is_over:
        actions.append(game.legal_actions()[0])
        game.apply(actions[-1])
    result = game.result
    entry = {"dealer": deal.dealer, "winner": result.winner, "game_points": result.game_points,
             "reason": result.reason, "points": list(result.points), "actions": actions}
    assert len(_replayed(rules, list(deal.deck), entry)["actions"]) == len(actions)  # by name
    for wrong in ({"winner": 1 - result.winner}, {"game_points": result.game_points % 3 + 1},
                  {"points": list(result.points)[::-1]}):
        with pytest.raises(ValueError, match="do not replay to the reported outcome"):
            _replayed(rules, list(deal.deck), {**entry, **wrong})


def test_a_deal_number_past_the_deal_file_is_refused_by_name(tmp_path):
    from eval import save_deals

    rules = Rules.preset("standard")
    save_deals(tmp_path / "deals.json", generate_deals(4, 2, rules), rules)
    assert load_replay(f"{tmp_path / 'deals.json'}#1")["actions"] == []
    with pytest.raises(ValueError, match="holds deals 0..1, there is no deal 2"):
        load_replay(f"{tmp_path / 'deals.json'}#2")
