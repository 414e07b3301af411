"""Bad input to the training tools (train.plots, train.critic, train.relabel, train.rollout_improvement,
train.imitation, train.suit_network, train.tune_playout_policy, train.tune_heuristic): a short ``error: ...`` naming the bad value or
file, exit code 2, no traceback, and nothing written. Every check happens before the long work: the work itself is
replaced by a function that raises, so a check that came too late fails the test at once instead of training."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import yaml

for _module in ("yaml", "torch", "stable_baselines3", "sb3_contrib"):
    pytest.importorskip(_module, reason="training needs the 'train' extra")

from sixtysix_env.actions import NUM_ACTIONS  # noqa: E402
from sixtysix_env.observation import OBSERVATION_SIZE  # noqa: E402
from sixtysix_env.rules import Rules  # noqa: E402
from train import (critic, imitation, plots, relabel, rollout_improvement, suit_network,  # noqa: E402
                   tune_heuristic, tune_playout_policy)
from train.distill import LabelledDecisions  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
SUIT_WEIGHTS = MODELS / "suit_a_standard.npz"  # a q network of the standard rules (a relabel teacher)
PPO_MODEL = MODELS / "ppo_standard.zip"


class WorkStarted(Exception):
    """Raised by a tool's patched main work: the tool got past its checks."""


def _refuse_work(*_args, **_kwargs):
    raise WorkStarted


def _files(folder: Path) -> set[Path]:
    return set(folder.rglob("*"))


def _refused(main: Callable, argv: list[str], capsys) -> str:
    """Run ``main(argv)``; assert it exits with code 2 (returned or by ``parser.error``) and no traceback, and
    return its stderr."""
    try:
        code = main([str(arg) for arg in argv])
    except SystemExit as stop:
        code = stop.code
    error = capsys.readouterr().err
    assert code == 2, error
    assert "error:" in error and "Traceback" not in error
    return error


def _check_refused(main: Callable, argv: list[str], fragments: list[str], tmp_path: Path, capsys) -> str:
    """:func:`_refused` naming every fragment, with nothing added under ``tmp_path``."""
    before = _files(tmp_path)
    error = _refused(main, argv, capsys)
    for fragment in fragments:
        assert fragment in error, error
    assert "allow_pickle" not in error  # numpy's hint to load unsafely is never passed on
    assert _files(tmp_path) == before  # nothing half-written, no folder made
    return error


def _bad_files(tmp_path: Path) -> dict[str, Path]:
    """A text file, folders (plain, ``.npz``, ``.zip``), a text ``.npz`` and ``.zip``, and a truncated copy of
    shipped weights."""
    (tmp_path / "afile").write_text("x\n")
    (tmp_path / "adir").mkdir()
    (tmp_path / "adir.npz").mkdir()
    (tmp_path / "adir.zip").mkdir()
    (tmp_path / "text.npz").write_text("not an archive\n")
    (tmp_path / "text.zip").write_text("not a model\n")
    raw = SUIT_WEIGHTS.read_bytes()
    (tmp_path / "trunc.npz").write_bytes(raw[:len(raw) // 2])
    names = ("afile", "adir", "adir.npz", "adir.zip", "text.npz", "text.zip", "trunc.npz")
    return {name: tmp_path / name for name in names}


# ------------------------------------------------------------------------------------------ train.plots
def _run_with_scalars(tmp_path: Path, name: str, table: str | None) -> Path:
    run = tmp_path / name
    run.mkdir()
    if table is not None:
        (run / "scalars.csv").write_text(table)
    return run


PLOT_RUNS = {  # case: (scalars.csv of the run, or None for none; the fragment of the error)
    "no scalars": (None, "has neither scalars.csv"),
    "a value not a number": ("step,tag,value\n1,eval/heuristic/margin,abc\n", "'abc'"),
    "a row cut short": ("step,tag,value\n1,eval/heuristic/margin\n", "is not a number"),
    "no header": ("x\n", "is not a scalars table"),
    "a margin without its interval": ("step,tag,value\n1,eval/heuristic/margin,0.5\n",
                                      "lacks the scalar 'eval/heuristic/margin_ci_low'"),
}


@pytest.mark.parametrize("case", list(PLOT_RUNS))
def test_plots_refuses_a_bad_run_naming_it(case, tmp_path, capsys):
    table, fragment = PLOT_RUNS[case]
    run = _run_with_scalars(tmp_path, "run", table)
    out = tmp_path / "out.png"
    error = _check_refused(plots.main, [run, out], [fragment], tmp_path, capsys)
    assert str(run) in error


@pytest.mark.parametrize("case", ["missing", "a file", "scalars.csv a folder"])
def test_plots_refuses_a_run_folder_that_is_not_one(case, tmp_path, capsys):
    bad = _bad_files(tmp_path)
    run = {"missing": tmp_path / "nope", "a file": bad["afile"]}.get(case)
    if run is None:
        run = _run_with_scalars(tmp_path, "run", None)
        (run / "scalars.csv").mkdir()
    _check_refused(plots.main, [run, tmp_path / "out.png"], [str(run)], tmp_path, capsys)


@pytest.mark.parametrize("case", ["parent a file", "a folder"])
def test_plots_refuses_an_unusable_output_before_drawing(case, tmp_path, capsys, monkeypatch):
    bad = _bad_files(tmp_path)
    run = _run_with_scalars(tmp_path, "run", "step,tag,value\n1,losses/entropy,0.5\n")
    monkeypatch.setattr(plots, "learning_curve_figure", _refuse_work)
    out = bad["afile"] / "out.png" if case == "parent a file" else bad["adir"]
    _check_refused(plots.main, [run, out], ["OUT.png", str(out)], tmp_path, capsys)


def test_plots_refuses_a_format_matplotlib_does_not_write_and_writes_others(tmp_path, capsys, monkeypatch):
    run = _run_with_scalars(tmp_path, "run", "step,tag,value\n1,losses/entropy,0.5\n2,losses/entropy,0.4\n")
    out = tmp_path / "curve.xyz"
    with monkeypatch.context() as patched:
        patched.setattr(plots, "learning_curve_figure", _refuse_work)
        _check_refused(plots.main, [run, out], ["OUT.png", str(out), "matplotlib writes no 'xyz' images"], tmp_path,
                       capsys)
    assert plots.main([str(run), str(tmp_path / "curve.svg")]) == 0  # the format its suffix names
    assert b"<svg" in (tmp_path / "curve.svg").read_bytes()[:1000]


# ------------------------------------------------------------------------------------------ train.critic
@pytest.mark.parametrize("case", ["missing", "a folder"])
def test_critic_refuses_a_network_that_is_not_a_file(case, tmp_path, capsys, monkeypatch):
    bad = _bad_files(tmp_path)
    monkeypatch.setattr(critic, "self_play_positions", _refuse_work)
    network, fragment = ((tmp_path / "nosuch", "not found") if case == "missing"
                         else (bad["adir"], "is a folder, not a model file"))
    _check_refused(critic.main, ["--network", network, "--out", tmp_path / "critic.npz"],
                   ["--network", str(network), fragment], tmp_path, capsys)


@pytest.mark.parametrize("case", ["parent a file", "a folder", "its figures a folder"])
def test_critic_refuses_unusable_outputs_before_the_self_play(case, tmp_path, capsys, monkeypatch):
    bad = _bad_files(tmp_path)
    monkeypatch.setattr(critic, "self_play_positions", _refuse_work)
    out = {"parent a file": bad["afile"] / "critic.npz", "a folder": bad["adir.npz"],
           "its figures a folder": tmp_path / "critic.npz"}[case]
    if case == "its figures a folder":
        (tmp_path / "critic.json").mkdir()
    named = str(out.with_suffix(".json")) if case == "its figures a folder" else str(out)
    _check_refused(critic.main, ["--network", SUIT_WEIGHTS, "--out", out, "--no-progress"], [named], tmp_path,
                   capsys)


# ------------------------------------------------------------------------------------------ train.relabel
def _positions_run(folder: Path, chunks: int = 2) -> Path:
    """A label run of a few hand-made decisions (standard rules): its config.yaml and ``chunks`` chunks."""
    (folder / "round_000").mkdir(parents=True)
    (folder / "config.yaml").write_text(yaml.safe_dump({"run": {"name": folder.name}, "label": {"deals": 2}}))
    rows = 3
    masks = np.zeros((rows, NUM_ACTIONS), dtype=bool)
    masks[:, :2] = True
    values = np.where(masks, 0.0, np.nan).astype(np.float32)
    decisions = LabelledDecisions(np.zeros((rows, OBSERVATION_SIZE), dtype=np.float32), masks,
                                  np.zeros(rows, dtype=np.int64), values, np.zeros(rows, dtype=np.float32),
                                  np.zeros(rows, dtype=bool), np.arange(rows, dtype=np.int64))
    for index in range(chunks):
        decisions.save(folder / "round_000" / f"chunk_{index:03d}.npz")
    return folder


@pytest.mark.parametrize("case", ["missing", "a folder"])
def test_relabel_refuses_a_teacher_that_is_not_a_file(case, tmp_path, capsys):
    bad = _bad_files(tmp_path)
    positions = _positions_run(tmp_path / "positions")
    teacher, fragment = ((tmp_path / "nosuch", "not found") if case == "missing"
                         else (bad["adir"], "is a folder, not a model file"))
    _check_refused(relabel.main, ["--positions", positions, "--teacher", teacher, "--out", tmp_path / "out"],
                   ["relabel's teacher", str(teacher), fragment], tmp_path, capsys)


RELABEL_CONFIGS = {  # case: (the positions' config.yaml, the fragment of the error)
    "not YAML": ("label: [1\n", "is not valid YAML"),
    "label not a mapping": ("label: 5\n", "config key 'label' must be a mapping"),
    "not a mapping": ("- 5\n", "must hold a mapping of config sections"),
    "nested too deeply": ("label: " + "[" * 20_000 + "]" * 20_000 + "\n", "is not valid YAML: nested too deeply"),
    "a key twice": ("label: {}\nlabel: {}\n", "found duplicate key 'label'"),
}


@pytest.mark.parametrize("case", list(RELABEL_CONFIGS))
def test_relabel_refuses_a_bad_config_naming_the_file(case, tmp_path, capsys):
    text, fragment = RELABEL_CONFIGS[case]
    positions = _positions_run(tmp_path / "positions")
    (positions / "config.yaml").write_text(text)
    _check_refused(relabel.main, ["--positions", positions, "--teacher", SUIT_WEIGHTS, "--out", tmp_path / "out"],
                   [str(positions / "config.yaml"), fragment], tmp_path, capsys)


@pytest.mark.parametrize("case", ["text", "truncated"])
def test_relabel_refuses_a_damaged_chunk_before_writing_anything(case, tmp_path, capsys):
    positions = _positions_run(tmp_path / "positions", chunks=3)
    damaged = positions / "round_000" / "chunk_002.npz"  # the last: the chunks before it would be written first
    if case == "text":
        damaged.write_text("not an archive\n")
    else:
        damaged.write_bytes(damaged.read_bytes()[:300])
    _check_refused(relabel.main, ["--positions", positions, "--teacher", SUIT_WEIGHTS, "--out", tmp_path / "out",
                                  "--quiet"], [str(damaged), "not an .npz archive"], tmp_path, capsys)


def test_relabel_refuses_an_output_that_is_a_file(tmp_path, capsys):
    bad = _bad_files(tmp_path)
    positions = _positions_run(tmp_path / "positions")
    _check_refused(relabel.main, ["--positions", positions, "--teacher", SUIT_WEIGHTS, "--out", bad["afile"]],
                   ["--out", str(bad["afile"]), "is a file"], tmp_path, capsys)


# ------------------------------------------------------------------------------------------ train.rollout_improvement
RECORD_ARGUMENTS = {  # case: (arguments, the fragments of the error)
    "unknown policy": (["--policy", "nosuch"], ["unknown agent 'nosuch'"]),
    "missing policy model": (["--policy", "ppo:path=nosuch.zip"], ["nosuch.zip"]),
    "unknown valuer": (["--valuer", "nosuch"], ["unknown agent 'nosuch'"]),
    "valuer without values": (["--valuer", "heuristic"], ["valuer 'heuristic' has no action_values"]),
    "unknown rules": (["--rules", "bogus"], ["'bogus'"]),
    "three-player rules": (["--rules", "three", "--policy", "heuristic"],
                           ["--rules: 'three' is the three-player game (R21)"]),
}


@pytest.mark.parametrize("case", list(RECORD_ARGUMENTS))
def test_rollout_record_refuses_bad_specs_before_the_first_deal(case, tmp_path, capsys, monkeypatch):
    arguments, fragments = RECORD_ARGUMENTS[case]
    monkeypatch.setattr(rollout_improvement, "collect_rollout_values", _refuse_work)
    _check_refused(rollout_improvement.main, ["record", "--deals", "1", "--out", tmp_path / "r.npz", *arguments],
                   fragments, tmp_path, capsys)


@pytest.mark.parametrize("case", ["parent a file", "a folder"])
def test_rollout_record_refuses_an_unusable_output_before_the_first_deal(case, tmp_path, capsys, monkeypatch):
    bad = _bad_files(tmp_path)
    monkeypatch.setattr(rollout_improvement, "collect_rollout_values", _refuse_work)
    out = bad["afile"] / "r.npz" if case == "parent a file" else bad["adir"]
    _check_refused(rollout_improvement.main, ["record", "--deals", "1", "--out", out], ["--out", str(out)],
                   tmp_path, capsys)


def _rollout_data(path: Path, rules: str | None = None) -> Path:
    """A small rollout file, recorded under the preset ``rules`` (None: a file that names no rules)."""
    rows = 4
    masks = np.zeros((rows, NUM_ACTIONS), dtype=bool)
    masks[:, :2] = True
    data = rollout_improvement.RolloutData(np.zeros((rows, OBSERVATION_SIZE), dtype=np.float32), masks,
                                           np.where(masks, 1.0, 0.0).astype(np.float32), np.arange(rows))
    data.rules = None if rules is None else Rules.preset(rules)
    data.save(path)
    return path


IMPROVE_DATA = {  # case: (the data file, the fragment of the error)
    "missing": (lambda bad, tmp_path: tmp_path / "nope.npz", "is unreadable"),
    "text": (lambda bad, tmp_path: bad["text.npz"], "is not an .npz archive"),
    "truncated": (lambda bad, tmp_path: bad["trunc.npz"], "is not an .npz archive"),
    "a folder": (lambda bad, tmp_path: bad["adir"], "is unreadable"),
    "suit-network weights": (lambda bad, tmp_path: SUIT_WEIGHTS, "lacks observations, masks, values"),
}


@pytest.mark.parametrize("case", list(IMPROVE_DATA))
def test_rollout_improve_refuses_bad_data_naming_the_file(case, tmp_path, capsys, monkeypatch):
    bad = _bad_files(tmp_path)
    choose, fragment = IMPROVE_DATA[case]
    data = choose(bad, tmp_path)
    monkeypatch.setattr(rollout_improvement, "improve_model", _refuse_work)
    _check_refused(rollout_improvement.main, ["improve", "--model", PPO_MODEL, "--data", data, "--out",
                                              tmp_path / "m.zip"], [str(data), fragment], tmp_path, capsys)


IMPROVE_MODELS_AND_OUTPUTS = {  # case: (--model, --out, the fragments of the error)
    "a text model": (lambda bad, tmp_path: bad["text.zip"], lambda bad, tmp_path: tmp_path / "m.zip",
                     ["text.zip", "is not a zip file"]),
    "a missing model": (lambda bad, tmp_path: tmp_path / "nosuch", lambda bad, tmp_path: tmp_path / "m.zip",
                        ["nosuch", "not found"]),
    "an output not a .zip": (lambda bad, tmp_path: PPO_MODEL, lambda bad, tmp_path: tmp_path / "m.txt",
                             ["--out must be a .zip path", "m.txt"]),
    "an output in a file": (lambda bad, tmp_path: PPO_MODEL, lambda bad, tmp_path: bad["afile"] / "m.zip",
                            ["--out", "afile"]),
    "an output a folder": (lambda bad, tmp_path: PPO_MODEL, lambda bad, tmp_path: bad["adir.zip"],
                           ["--out", "is a folder"]),
    # R21: the recorders play the two-player game; a three-player model failed with a shape error inside torch.
    "a three-player model": (lambda bad, tmp_path: MODELS / "ppo_three.zip", lambda bad, tmp_path: tmp_path / "m.zip",
                             ["ppo_three.zip' reads observations of 285 values", "holds observations of 281"]),
    # R19-R20: the data are scharf deals (the file says so), the model a network of the standard rules.
    "a model of other rules": (lambda bad, tmp_path: PPO_MODEL, lambda bad, tmp_path: tmp_path / "m.zip",
                               ["was fitted for the rules 'standard', not 'scharf'", "switches differ",
                                "rollouts.npz' was recorded under the latter"]),
}


@pytest.mark.parametrize("case", list(IMPROVE_MODELS_AND_OUTPUTS))
def test_rollout_improve_refuses_a_bad_model_or_output_before_the_fit(case, tmp_path, capsys, monkeypatch):
    bad = _bad_files(tmp_path)
    data = _rollout_data(tmp_path / "rollouts.npz", "scharf" if case == "a model of other rules" else "standard")
    choose_model, choose_out, fragments = IMPROVE_MODELS_AND_OUTPUTS[case]
    monkeypatch.setattr(rollout_improvement, "improve_model", _refuse_work)
    _check_refused(rollout_improvement.main, ["improve", "--model", choose_model(bad, tmp_path), "--data", data,
                                              "--out", choose_out(bad, tmp_path)], fragments, tmp_path, capsys)


# ------------------------------------------------------------------------------------------ train.imitation
IMITATION_RECORD_ARGUMENTS = {  # case: (arguments, the fragments of the error)
    "unknown teacher": (["--teacher", "nosuch"], ["unknown agent 'nosuch'"]),
    "unknown rules": (["--rules", "bogus"], ["--rules: unknown rules preset 'bogus'"]),
    "three-player rules": (["--rules", "three"], ["--rules: 'three' is the three-player game (R21)"]),
    "a teacher unfit for the rules": (["--teacher", "expert", "--rules", "scharf"],
                                      ["rollout's prior 'suit_iterated' was fitted for the rules 'standard'"]),
}


@pytest.mark.parametrize("case", list(IMITATION_RECORD_ARGUMENTS))
def test_imitation_record_refuses_bad_input_before_the_first_deal(case, tmp_path, capsys, monkeypatch):
    """Before: an unknown rules preset or teacher was a ValueError traceback, and --rules three an AttributeError
    from inside the teacher's search."""
    arguments, fragments = IMITATION_RECORD_ARGUMENTS[case]
    monkeypatch.setattr(imitation, "collect_teacher_data", _refuse_work)
    _check_refused(imitation.main, ["record", "--deals", "1", "--out", tmp_path / "t.npz", *arguments], fragments,
                   tmp_path, capsys)


@pytest.mark.parametrize("main, arguments", [
    (imitation.main, ["finetune", "--learning-rate", "nan"]),
    (rollout_improvement.main, ["improve", "--temperature", "nan"]),
    (rollout_improvement.main, ["improve", "--advantage-clip", "inf"]),
])
def test_fits_refuse_float_options_that_are_not_finite(main, arguments, tmp_path, capsys):
    """NaN passed the fits' "<= 0" checks (a learning rate of NaN trains to NaN weights); refused by argparse."""
    _check_refused(main, [*arguments, "--model", PPO_MODEL, "--data", tmp_path / "d.npz", "--out", tmp_path / "m.zip"],
                   [f"argument {arguments[1]}: not a finite number"], tmp_path, capsys)


@pytest.mark.parametrize("case", ["a bad data file", "a missing model", "an output not a .zip",
                                  "a three-player model", "a model of other rules"])
def test_imitation_finetune_refuses_a_bad_model_data_or_output_before_the_fit(case, tmp_path, capsys,
                                                                            monkeypatch):
    """The same checks as train.rollout_improvement's improve (train.recorded.check_refit_paths and
    load_refit_data); before, a bad data file or model was a ValueError traceback, a three-player model (R21)
    on the recorder's two-player decisions a shape error inside torch, and decisions of other rules (R19-R20) gave
    a model whose metadata names rules its data were not played under."""
    bad = _bad_files(tmp_path)
    two_player = tmp_path / "teacher.npz"
    teacher = imitation.TeacherData(np.zeros((3, OBSERVATION_SIZE), dtype=np.float32),
                                    np.ones((3, NUM_ACTIONS), dtype=bool), np.zeros(3, dtype=np.int64),
                                    np.zeros(3, dtype=np.float32), np.arange(3))
    teacher.rules = Rules.preset("paderborn" if case == "a model of other rules" else "standard")
    teacher.save(two_player)
    model, data, out, fragments = {
        "a bad data file": (PPO_MODEL, bad["text.npz"], tmp_path / "m.zip", ["text.npz", "is not an .npz archive"]),
        "a missing model": (tmp_path / "nosuch", bad["text.npz"], tmp_path / "m.zip", ["nosuch", "not found"]),
        "an output not a .zip": (PPO_MODEL, bad["text.npz"], tmp_path / "m.npz", ["--out must be a .zip path"]),
        "a three-player model": (MODELS / "ppo_three.zip", two_player, tmp_path / "m.zip",
                                 ["ppo_three.zip' reads observations of 285 values",
                                  "teacher.npz' holds observations of 281"]),
        "a model of other rules": (PPO_MODEL, two_player, tmp_path / "m.zip",
                                   ["was fitted for the rules 'standard', not 'paderborn'",
                                    "teacher.npz' was recorded under the latter"]),
    }[case]
    monkeypatch.setattr(imitation, "finetune_model", _refuse_work)
    _check_refused(imitation.main, ["finetune", "--model", model, "--data", data, "--out", out], fragments,
                   tmp_path, capsys)


# ------------------------------------------------------------------------------------------ train.suit_network
SUIT_ARGUMENTS = {  # case: (arguments besides --config, the fragments of the error)
    "a negative width": (["--width", "-3", "--out", "{tmp}/s.npz"], ["--width must be at least 1, got -3"]),
    "a zero width": (["--width", "0", "--out", "{tmp}/s.npz"], ["--width must be at least 1, got 0"]),
    "a zero context": (["--context", "0", "--out", "{tmp}/s.npz"], ["--context must be at least 1, got 0"]),
    "an output not an .npz": (["--out", "{tmp}/s.txt"], ["--out must be an .npz path", "s.txt"]),
    "an output in a file": (["--out", "{tmp}/afile/s.npz"], ["--out", "afile"]),
    "an output a folder": (["--out", "{tmp}/adir.npz"], ["--out", "is a folder"]),
}


def _suit_config(tmp_path: Path) -> Path:
    config = tmp_path / "distill.yaml"
    config.write_text(f"run: {{name: fit, out_dir: {str(tmp_path / 'runs')!r}, workers: 1}}\nfit: {{target: q}}\n")
    return config


@pytest.mark.parametrize("case", list(SUIT_ARGUMENTS))
def test_suit_network_refuses_bad_shapes_and_outputs_before_the_fit(case, tmp_path, capsys, monkeypatch):
    _bad_files(tmp_path)
    config = _suit_config(tmp_path)
    arguments, fragments = SUIT_ARGUMENTS[case]
    monkeypatch.setattr(suit_network, "fit_suit_network", _refuse_work)
    _check_refused(suit_network.main, ["--config", config, *[arg.format(tmp=tmp_path) for arg in arguments]],
                   fragments, tmp_path, capsys)


def test_suit_network_refuses_a_missing_config_naming_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(suit_network, "fit_suit_network", _refuse_work)
    _check_refused(suit_network.main, ["--config", tmp_path / "nope.yaml", "--out", tmp_path / "s.npz"],
                   ["nope.yaml"], tmp_path, capsys)


def test_build_suit_network_refuses_widths_below_one():
    for shape, fragment in (((0, 256, 1), "width must be"), ((128, -1, 1), "context must be")):
        with pytest.raises(ValueError, match=fragment):
            suit_network.build_suit_network(*shape)


# ------------------------------------------------------------------------------------------ the tuning searches
TUNE_ARGUMENTS = {  # case: (the tool, arguments, the fragments of the error)
    "playout --deals 0": (tune_playout_policy, ["--deals", "0"], ["--deals must be at least 100", "--deals 0"]),
    "playout --step 2": (tune_playout_policy, ["--step", "2"], ["--step between 0 and 1", "--step 2.0"]),
    "playout out in a file": (tune_playout_policy, ["--out", "{tmp}/afile/t.json"], ["--out", "afile"]),
    "playout out a folder": (tune_playout_policy, ["--out", "{tmp}/adir"], ["--out", "is a folder"]),
    "playout --z -1": (tune_playout_policy, ["--z", "-1"], ["--z must be 0 or more standard errors, got -1.0"]),
    # the default search over 16 weights in 2 sweeps tunes on 64 seeds: 7001..7064
    "playout test seed tuned on": (tune_playout_policy, ["--test-seed", "7064"],
                                   ["--test-seed 7064 is one of the tuning seeds 7001..7064"]),
    "playout test seed first tuned on": (tune_playout_policy, ["--seed", "50", "--test-seed", "50", "--sweeps", "1"],
                                         ["--test-seed 50 is one of the tuning seeds 50..81"]),
    "heuristic --deals 0": (tune_heuristic, ["--deals", "0"], ["--deals must be at least 100"]),
    "heuristic test seed tuned on": (tune_heuristic, ["--seed", "9950"], ["--test-seed 9951 is one of the tuning"]),
    "heuristic --step 2": (tune_heuristic, ["--step", "2"], ["--step between 0 and 1"]),
    "heuristic --lead-samples 0": (tune_heuristic, ["--lead-samples", "0"], ["--lead-samples must be at least 1"]),
    "heuristic --close-samples -1": (tune_heuristic, ["--close-samples", "-1"],
                                     ["--close-samples must be at least 1"]),
    "heuristic out in a file": (tune_heuristic, ["--out", "{tmp}/afile/t.json"], ["--out", "afile"]),
    "heuristic out a folder": (tune_heuristic, ["--out", "{tmp}/adir"], ["--out", "is a folder"]),
}


@pytest.mark.parametrize("test_seed", ["7000", "7065"])
def test_a_test_seed_just_outside_the_tuning_seeds_starts_the_search(test_seed, tmp_path, monkeypatch):
    monkeypatch.setattr(tune_playout_policy, "coordinate_search", _refuse_work)
    with pytest.raises(WorkStarted):
        tune_playout_policy.main(["--out", str(tmp_path / "t.json"), "--test-seed", test_seed, "--z", "0"])


@pytest.mark.parametrize("case", list(TUNE_ARGUMENTS))
def test_tuning_refuses_bad_arguments_before_the_first_duel(case, tmp_path, capsys, monkeypatch):
    _bad_files(tmp_path)
    tool, arguments, fragments = TUNE_ARGUMENTS[case]
    monkeypatch.setattr(tool, "coordinate_search", _refuse_work)
    _check_refused(tool.main, ["--out", tmp_path / "t.json", *[arg.format(tmp=tmp_path) for arg in arguments]],
                   fragments, tmp_path, capsys)
