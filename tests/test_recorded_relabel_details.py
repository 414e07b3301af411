"""Details of train.recorded (packed observations, the held-out split, decision tables, the deal runner, the refit
path checks), train.runlog (truncating scalars.csv and eval.jsonl on resume) and train.relabel (its refusals and
the network's labels), each checked against an independent computation."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml

from label_runs import tiny_label_run
from train.distill import LabelledDecisions
from train.recorded import (DecisionTable, PackedObservations, check_refit_paths, held_out_split, refit_saved_model,
                            run_deal_chunks, two_player_rules)
from train.relabel import chunk_paths, main, network_labels, relabel
from train.runlog import ScalarsCsv, truncate_log

PAIR = "models/suit_two_long_standard.npz+models/suit_three_standard.npz"


# --- packed observations ---------------------------------------------------------------------------------------

def test_packed_observations_give_back_the_float_rows_part_by_part():
    generator = np.random.default_rng(3)
    values = np.array([0.0, 1.0, 0.5, 12 / 66, 33 / 66, 2.0], dtype=np.float32)
    first = values[generator.integers(0, 3, size=(5, 4))]  # three values, then new ones in the second part
    second = values[generator.integers(0, 6, size=(7, 4))]
    packed = PackedObservations.pack(iter([first, second]), width=4)
    rows = np.concatenate([first, second])
    assert isinstance(packed, PackedObservations) and packed.codes.dtype == np.uint8
    assert len(packed) == 12 and packed.shape == (12, 4) and packed.ndim == 2
    assert np.array_equal(packed[:], rows) and packed[:].dtype == np.float32
    assert np.array_equal(packed[[11, 0, 6]], rows[[11, 0, 6]]) and np.array_equal(packed[5], rows[5])
    assert len(packed.table) == len(np.unique(rows))


def test_packing_holds_256_distinct_values_and_falls_back_to_floats_beyond():
    exactly = np.arange(256, dtype=np.float32).reshape(64, 4) / 7
    packed = PackedObservations.pack([exactly[:10], exactly[10:]], width=4)
    assert isinstance(packed, PackedObservations) and np.array_equal(packed[:], exactly)
    beyond = np.arange(257, dtype=np.float32).reshape(257, 1) / 7
    plain = PackedObservations.pack([beyond[:100], beyond[100:200], beyond[200:]], width=1)
    assert type(plain) is np.ndarray and plain.dtype == np.float32 and np.array_equal(plain, beyond)


def test_packing_no_rows_gives_an_empty_table_of_the_width():
    packed = PackedObservations.pack([], width=5)
    assert isinstance(packed, PackedObservations) and packed.shape == (0, 5) and packed[:].shape == (0, 5)


# --- held-out split ------------------------------------------------------------------------------------------------

def test_held_out_split_holds_out_whole_deals_in_the_share():
    deals = np.repeat(np.arange(10), 3)[np.random.default_rng(0).permutation(30)]  # each deal in three rounds
    training, validation = held_out_split(deals, 0.3, np.random.default_rng(1))
    assert sorted(np.concatenate([training, validation]).tolist()) == list(range(30))
    held = set(deals[validation].tolist())
    assert len(held) == 3 and held.isdisjoint(deals[training].tolist())
    assert len(validation) == 9  # every round of a held-out deal


def test_held_out_split_keeps_one_deal_on_each_side_and_none_out_at_share_zero():
    deals = np.array([4, 4, 9, 9, 9])
    for share in (0.01, 0.99):
        training, validation = held_out_split(deals, share, np.random.default_rng(2))
        assert {len(set(deals[training])), len(set(deals[validation]))} == {1}
    training, validation = held_out_split(deals, 0.0, np.random.default_rng(2))
    assert training.tolist() == [0, 1, 2, 3, 4] and validation.size == 0
    for share in (0.5, 0.7, 0.99):  # one deal: kept for training, not rounded into validation
        training, validation = held_out_split(np.array([7, 7]), share, np.random.default_rng(2))
        assert training.tolist() == [0, 1] and validation.size == 0
    for share in (-0.1, 1.0):
        with pytest.raises(ValueError, match=r"validation share must lie in \[0, 1\)"):
            held_out_split(deals, share, np.random.default_rng(2))


# --- decision tables -----------------------------------------------------------------------------------------------

@dataclass
class _Table(DecisionTable):
    FIELDS = ("xs", "ys")
    WHAT = "test data"
    xs: np.ndarray
    ys: np.ndarray


def test_a_decision_table_saves_reads_and_concatenates_its_fields(tmp_path):
    table = _Table(np.arange(3), np.array([0.5, 1.5, 2.5]))
    table.save(tmp_path / "t.npz")
    back = _Table.read(tmp_path / "t.npz")
    assert len(back) == 3 and np.array_equal(back.xs, table.xs) and np.array_equal(back.ys, table.ys)
    both = _Table.concatenate([table, _Table(np.array([9]), np.array([9.5]))])
    assert both.xs.tolist() == [0, 1, 2, 9] and both.ys.tolist() == [0.5, 1.5, 2.5, 9.5]
    np.savez(tmp_path / "old.npz", xs=np.arange(2))
    with pytest.raises(ValueError, match=r"test data '.*old.npz' lacks ys: it was not written by this version"):
        _Table.read(tmp_path / "old.npz")


def test_a_table_keeps_the_rules_it_was_recorded_under_and_refuses_a_damaged_entry(tmp_path):
    """R19-R20: the recorders mark their tables with the rules of their deals, the file keeps them, and the parts
    of one rule set concatenate to a table of it; a file without the entry (written before it existed) reads with
    none, parts of different rule sets concatenate to none (the refit checks each file first)."""
    from sixtysix_env.rules import Rules

    scharf = Rules.preset("scharf")
    table = _Table(np.arange(3), np.zeros(3))
    table.rules = scharf
    table.save(tmp_path / "t.npz")
    assert _Table.read(tmp_path / "t.npz").rules == scharf
    assert json.loads(str(np.load(tmp_path / "t.npz")["rules"])) == scharf.to_dict()
    plain = _Table(np.arange(2), np.zeros(2))
    assert plain.rules is None and _Table.rules is None  # setting one table's rules left the class alone
    plain.save(tmp_path / "plain.npz")
    assert _Table.read(tmp_path / "plain.npz").rules is None and "rules" not in np.load(tmp_path / "plain.npz")
    assert _Table.concatenate([table, _Table.read(tmp_path / "t.npz")]).rules == scharf
    assert _Table.concatenate([table, plain]).rules is None
    standard = _Table(np.arange(1), np.zeros(1))
    standard.rules = Rules.preset("standard")
    assert _Table.concatenate([table, standard]).rules is None
    for entry in ("not json", "[1, 2]", '{"no_such_switch": 1}'):
        np.savez(tmp_path / "bad.npz", xs=np.arange(2), ys=np.zeros(2), rules=np.array(entry))
        with pytest.raises(ValueError, match=r"test data '.*bad.npz': its 'rules' entry is not a rule set"):
            _Table.read(tmp_path / "bad.npz")


def test_load_refit_data_refuses_other_rules_up_to_the_match_scoring(tmp_path):
    """A file of the model's rules, or of rules that differ only in how Bummerls are scored (no observation reads
    them, R17-R18), or one that names no rules, is taken; one of other deal rules is refused naming it."""
    from sixtysix_env.actions import NUM_ACTIONS
    from sixtysix_env.observation import OBSERVATION_SIZE
    from sixtysix_env.rules import Rules
    from train.imitation import TeacherData
    from train.recorded import load_refit_data

    def teacher_file(name: str, rules: Rules | None) -> str:
        data = TeacherData(np.zeros((2, OBSERVATION_SIZE), np.float32), np.ones((2, NUM_ACTIONS), bool),
                           np.zeros(2, np.int64), np.zeros(2, np.float32), np.arange(2))
        data.rules = rules
        data.save(tmp_path / name)
        return str(tmp_path / name)

    standard = Rules.preset("standard")
    files = [teacher_file("same.npz", standard), teacher_file("none.npz", None),
             teacher_file("scoring.npz", Rules.preset("standard", schneider_bummerl=not standard.schneider_bummerl))]
    both = load_refit_data(TeacherData, "m.zip", standard, files)
    assert len(both) == 6 and both.rules is None
    assert load_refit_data(TeacherData, "m.zip", standard, files[:1]).rules == standard
    other = teacher_file("other.npz", Rules.preset("paderborn"))
    with pytest.raises(ValueError, match=r"--model 'm.zip' was fitted for the rules 'standard', not 'paderborn' "
                                         r"\(switches differ: .*\), and --data '.*other.npz' was recorded under"):
        load_refit_data(TeacherData, "m.zip", standard, [files[0], other])


# --- the deal runner -------------------------------------------------------------------------------------------

def _chunk_sum(chunk: tuple) -> int:
    return sum(chunk)


@pytest.mark.parametrize("workers", [1, 2])
def test_run_deal_chunks_returns_every_chunks_result_in_order(workers):
    chunks = [(1, 2), (3,), (4, 5, 6), (10,)]
    assert run_deal_chunks(_chunk_sum, chunks, [2, 1, 3, 1], workers, "sum", progress=False) == [3, 3, 15, 10]


# --- rules and refit paths ----------------------------------------------------------------------------------------

def test_two_player_rules_refuse_an_unknown_preset_and_the_three_player_game():
    assert two_player_rules("standard", "label.rules").players == 2
    with pytest.raises(ValueError, match="label.rules: "):
        two_player_rules("nonesuch", "label.rules")
    with pytest.raises(ValueError, match="label.rules: 'three' is the three-player game"):
        two_player_rules("three", "label.rules")


def test_check_refit_paths_refuses_an_out_that_is_not_a_zip_and_a_model_without_torch_weights(tmp_path):
    with pytest.raises(ValueError, match=r"--out must be a .zip path, got '.*out.npz'"):
        check_refit_paths("models/ppo_standard.zip", str(tmp_path / "out.npz"))
    stripped = tmp_path / "numpy_only.zip"
    with zipfile.ZipFile("models/ppo_standard.zip") as source, zipfile.ZipFile(stripped, "w") as target:
        for name in source.namelist():
            if name != "policy.pth":
                target.writestr(name, source.read(name))
    with pytest.raises(ValueError, match="has no policy.pth"):
        check_refit_paths(str(stripped), str(tmp_path / "out.zip"))
    check_refit_paths("models/ppo_standard.zip", str(tmp_path / "out.zip"))


# --- run logs ------------------------------------------------------------------------------------------------------

def test_truncating_scalars_keeps_the_header_and_rows_through_the_step_and_drops_a_torn_row(tmp_path):
    path = tmp_path / "scalars.csv"
    path.write_text("step,tag,value\n1,a,0.5\n\n2,a,0.6\n3,a,0.7\n2,b,0.1\n4,a,0.")
    truncate_log(path, 2)
    assert path.read_text().splitlines() == ["step,tag,value", "1,a,0.5", "2,a,0.6", "2,b,0.1"]
    truncate_log(path, -1)
    assert path.read_text().splitlines() == ["step,tag,value"]
    truncate_log(tmp_path / "missing.csv", 3)
    assert not (tmp_path / "missing.csv").exists()


def test_truncating_eval_lines_keeps_steps_through_the_step_and_refuses_an_unreadable_one(tmp_path):
    path = tmp_path / "eval.jsonl"
    rows = [{"step": 1, "x": 1}, {"step": 5, "x": 2}, {"step": 3, "x": 3}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows) + "\n" + '{"step": 9, "x"')
    truncate_log(path, 3)
    assert [json.loads(line) for line in path.read_text().splitlines()] == [rows[0], rows[2]]
    for bad in ('{"step": true}', '{"step": "2"}', '{"step": 2.0}', '{"x": 1}', "[1]"):
        path.write_text('{"step": 1}\n' + bad + "\n")
        with pytest.raises(ValueError, match=r"eval.jsonl' line 2 has no step to read"):
            truncate_log(path, 3)
    path.write_bytes(b'{"step": 1}\n\xff\xfe\n')
    with pytest.raises(ValueError, match=r"eval.jsonl' is not UTF-8 text"):
        truncate_log(path, 3)


def test_truncating_scalars_refuses_a_row_without_a_step_number(tmp_path):
    path = tmp_path / "scalars.csv"
    for bad in ("x,a,1", "1.5,a,1", "\u0661,a,1"):  # an Arabic-Indic one is a digit to str.isdigit
        path.write_text(f"step,tag,value\n1,a,1\n{bad}\n")
        with pytest.raises(ValueError, match=r"scalars.csv' line 3 has no step to read"):
            truncate_log(path, 3)
    path.write_text("step,tag,value\n-2,a,1\n4,a,1\n")
    truncate_log(path, 0)
    assert path.read_text().splitlines() == ["step,tag,value", "-2,a,1"]


def test_scalars_csv_writes_a_header_once_and_drops_rows_past_keep_through(tmp_path):
    path = tmp_path / "scalars.csv"
    path.write_text("")  # a kill before the header reached the disk
    with ScalarsCsv(path) as log:
        log.add(1, "loss", 0.5)
        log.add(2, "loss", 0.25)
        log.flush()
        assert path.read_text().splitlines() == ["step,tag,value", "1,loss,0.5", "2,loss,0.25"]
    with ScalarsCsv(path, keep_through=1) as log:
        log.add(2, "loss", 0.3)
    assert path.read_text().splitlines() == ["step,tag,value", "1,loss,0.5", "2,loss,0.3"]
    with ScalarsCsv(path) as log:
        pass
    assert path.read_text().splitlines() == ["step,tag,value", "1,loss,0.5", "2,loss,0.3"]


# --- relabel -------------------------------------------------------------------------------------------------------

class _FakeNetwork:
    def __init__(self, values):
        self.values, self.blocks = values, []

    def values_of_observations(self, observations, masks, block):
        self.blocks.append(block)
        return np.where(masks, self.values, np.nan)


def test_network_labels_take_the_best_legal_action_and_keep_the_rest_of_the_table():
    masks = np.array([[True, False, True], [False, True, True], [True, True, False]])
    values = np.array([[1.0, 9.0, 2.0], [5.0, -3.0, -4.0], [-1.0, -2.0, 7.0]])
    data = LabelledDecisions(observations=np.zeros((3, 2), np.float32), masks=masks, teacher_actions=np.zeros(3, int),
                             teacher_values=np.zeros((3, 3)), returns=np.array([1.0, 2.0, 3.0]),
                             phase2=np.array([True, False, True]), deals=np.array([4, 5, 6]))
    network = _FakeNetwork(values)
    labels = network_labels(data, network, block=17)
    assert network.blocks == [17]
    assert labels.teacher_actions.tolist() == [2, 1, 0] and labels.teacher_actions.dtype == np.int64
    assert np.array_equal(labels.teacher_values, np.where(masks, values, np.nan), equal_nan=True)
    assert labels.returns.tolist() == [1.0, 2.0, 3.0] and labels.deals.tolist() == [4, 5, 6]
    assert labels.phase2.tolist() == [True, False, True]


@pytest.fixture(scope="module")
def label_run(tmp_path_factory):
    return tiny_label_run(tmp_path_factory.mktemp("positions"), deals=4, chunk_deals=2, worlds=1)[1]


@pytest.fixture()
def positions(label_run, tmp_path):
    copy = tmp_path / "positions"
    shutil.copytree(label_run, copy)
    return copy


def _edit_config(run: Path, change) -> None:
    config = yaml.safe_load((run / "config.yaml").read_text())
    change(config)
    (run / "config.yaml").write_text(yaml.safe_dump(config))


def test_relabel_refuses_a_positions_run_without_chunks(positions, tmp_path):
    out = tmp_path / "out"
    for chunk in chunk_paths(positions):
        (positions / chunk).unlink()
    with pytest.raises(ValueError, match="holds no label chunks: run `sixtysix distill label` there"):
        relabel(positions, PAIR, out, quiet=True)
    assert not out.exists()


def test_relabel_refuses_a_teacher_fitted_for_other_rules(positions, tmp_path):
    _edit_config(positions, lambda config: config["label"].update(rules="paderborn"))
    with pytest.raises(ValueError, match="was fitted for the rules 'standard', .* are of 'paderborn'"):
        relabel(positions, PAIR, tmp_path / "out", quiet=True)
    assert not (tmp_path / "out").exists()


def test_relabel_refuses_a_positions_config_whose_run_is_not_a_mapping(positions, tmp_path):
    _edit_config(positions, lambda config: config.update(run=["tiny"]))
    with pytest.raises(ValueError, match="config key 'run' must be a mapping"):
        relabel(positions, PAIR, tmp_path / "out", quiet=True)
    assert not (tmp_path / "out").exists()


def test_relabel_refuses_to_resume_into_a_run_without_a_label_section(positions, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "config.yaml").write_text("run: {name: out}\n")
    with pytest.raises(ValueError, match="config.yaml' has no label section; is it a relabel run?"):
        relabel(positions, PAIR, out, quiet=True)
    assert sorted(path.name for path in out.iterdir()) == ["config.yaml"]


def test_relabel_main_labels_every_chunk_and_returns_zero(positions, tmp_path, capsys):
    out = tmp_path / "runs" / "teacher"
    started = time.perf_counter()
    assert main(["--positions", str(positions), "--teacher", PAIR, "--out", str(out), "--quiet"]) == 0
    elapsed = time.perf_counter() - started
    captured = capsys.readouterr()
    assert "'new_chunks': 2" in captured.out and captured.err == ""  # --quiet: no progress bars
    summary = json.loads((out / "summary.json").read_text())
    decisions = sum(len(LabelledDecisions.load(positions / chunk)) for chunk in chunk_paths(positions))
    assert summary["chunks"] == summary["new_chunks"] == 2 and summary["new_decisions"] == decisions
    assert 0 <= summary["wall_seconds"] <= elapsed + 0.1
    assert summary["decisions_per_second"] >= decisions / elapsed - 0.1  # labelled within the elapsed time
    config = yaml.safe_load((out / "config.yaml").read_text())
    assert config["run"]["name"] == "teacher" and config["run"]["out_dir"] == str(out.parent)
    assert config["label"]["source"] == "network" and config["label"]["deals"] == 4


def test_relabel_refuses_a_damaged_chunk_before_writing_anything(positions, tmp_path):
    out = tmp_path / "out"
    (positions / chunk_paths(positions)[-1]).write_bytes(b"not an npz archive")
    with pytest.raises(ValueError, match=r"chunk_\d+\.npz"):
        relabel(positions, PAIR, out, quiet=True)
    assert not out.exists()


def test_a_resumed_relabel_takes_string_paths_and_clears_a_killed_runs_temp_files(positions, tmp_path):
    out = tmp_path / "out"
    relabel(positions, PAIR, out, quiet=True)
    first = chunk_paths(out)[0]
    (out / first).unlink()
    stale = out / first.parent / f".{first.name}.abc123.tmp"
    stale.write_bytes(b"torn")
    figures = relabel(str(positions), PAIR, str(out), quiet=True)
    assert figures["new_chunks"] == 1 and not stale.exists() and (out / first).exists()
    assert figures["positions_from"] == str(positions)
    figures = relabel(positions, PAIR, out, quiet=True)
    assert (figures["new_chunks"], figures["new_decisions"], figures["decisions_per_second"]) == (0, 0, None)


def test_relabel_runs_as_a_module():
    result = subprocess.run([sys.executable, "-m", "train.relabel", "--help"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parent.parent, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("usage: python -m train.relabel")


@pytest.mark.parametrize("left_out", ["--positions", "--teacher", "--out"])
def test_relabel_main_requires_each_path_option(left_out, capsys):
    argv = {"--positions": "runs/p", "--teacher": PAIR, "--out": "runs/o"}
    del argv[left_out]
    with pytest.raises(SystemExit) as exit_info:
        main([word for pair in argv.items() for word in pair])
    assert exit_info.value.code == 2 and f"the following arguments are required: {left_out}" in capsys.readouterr().err


def test_run_deal_chunks_refuses_an_unknown_backend_before_running_a_chunk():
    ran = []
    with pytest.raises(ValueError, match="backend must be one of .*, got 'threads'"):
        run_deal_chunks(ran.append, [(1,)], [1], 1, "sum", progress=False, backend="threads")
    with pytest.raises(ValueError, match="an address names a Ray cluster"):
        run_deal_chunks(ran.append, [(1,)], [1], 1, "sum", progress=False, address="ray://head:10001")
    assert ran == []


def test_refit_saved_model_seeds_torch_and_refuses_a_model_of_another_format(tmp_path):
    import torch

    from agents.ppo import METADATA_ENTRY, read_model_metadata

    def fit(policy):
        return {"draw": float(torch.rand(1))}

    def provenance(figures):
        return {"refit_draw": figures["draw"]}

    first = refit_saved_model("models/ppo_standard.zip", tmp_path / "a.zip", 7, fit, provenance)
    assert refit_saved_model("models/ppo_standard.zip", tmp_path / "b.zip", 7, fit, provenance) == first
    # the seed given, not the one the model was trained with (its load seeds torch with that one)
    assert refit_saved_model("models/ppo_standard.zip", tmp_path / "b.zip", 8, fit, provenance) != first
    torch.manual_seed(7)
    assert first["draw"] == float(torch.rand(1))
    assert read_model_metadata(tmp_path / "a.zip")["refit_draw"] == first["draw"]
    other = tmp_path / "other.zip"
    with zipfile.ZipFile("models/ppo_standard.zip") as source, zipfile.ZipFile(other, "w") as target:
        for name in source.namelist():
            data = source.read(name)
            if name == METADATA_ENTRY:
                data = json.dumps(dict(json.loads(data), format="something-else")).encode()
            target.writestr(name, data)
    with pytest.raises(ValueError, match="is not a sixtysix PPO model"):
        refit_saved_model(other, tmp_path / "c.zip", 7, fit, provenance)
    assert not (tmp_path / "c.zip").exists()
