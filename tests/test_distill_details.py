"""Details of train/distill.py the pipeline tests leave open: config checks, label merging, targets, the saved
model's provenance, resuming and the command's errors. Tiny synthetic labels and networks: no labelling search."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.observation import OBSERVATION_SIZE
from train.distill import (
    DistillConfig,
    Distiller,
    LabelledDecisions,
    load_distill_config,
    load_labels,
    new_model,
    save_model,
)
from train.distill import main as distill_main


def _write_config(tmp_path: Path, name: str = "tiny", extra: str = "") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"""
run: {{name: {name}, out_dir: {str(tmp_path / 'runs')!r}, workers: 1, progress_bar: false}}
label: {{deals: 4, chunk_deals: 2, teacher: heuristic}}
net: {{hidden: [8]}}
fit: {{epochs: 1, batch_size: 64, validation_share: 0.0}}
eval: {{pairs: 2, every: 0, opponents: []}}
{extra}""")
    return path


def _config(tmp_path: Path, *overrides: str, name: str = "tiny") -> DistillConfig:
    return load_distill_config(_write_config(tmp_path, name), list(overrides))


def _labels(deals: list[int], rows_per_deal: int = 3, seed: int = 0, width: int = OBSERVATION_SIZE,
            talon: int | None = None) -> LabelledDecisions:
    """Synthetic labels: ``rows_per_deal`` decisions of each deal, three legal actions each, all valued."""
    generator = np.random.default_rng(seed)
    rows = len(deals) * rows_per_deal
    masks = np.zeros((rows, NUM_ACTIONS), dtype=bool)
    for row in range(rows):
        masks[row, generator.choice(NUM_ACTIONS, 3, replace=False)] = True
    values = np.where(masks, generator.uniform(-3, 3, (rows, NUM_ACTIONS)), np.nan).astype(np.float32)
    return LabelledDecisions(
        observations=generator.integers(0, 2, (rows, width)).astype(np.float32),
        masks=masks, teacher_actions=np.nanargmax(np.where(masks, values, -np.inf), axis=1).astype(np.int64),
        teacher_values=values, returns=generator.uniform(-3, 3, rows).astype(np.float32),
        phase2=np.zeros(rows, dtype=bool), deals=np.repeat(np.asarray(deals, dtype=np.int64), rows_per_deal))


def _write_chunks(folder: Path, firsts: list[int], chunk_deals: int = 2, seed: int = 0, **options) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for first in firsts:
        _labels(list(range(first, first + chunk_deals)), seed=seed + first, **options).save(
            folder / f"chunk_{first:08d}.npz")


def _run_with_labels(tmp_path: Path, *overrides: str, name: str = "tiny", firsts=(0, 2)) -> DistillConfig:
    """A run directory (its config.yaml written by the Distiller) holding synthetic round-0 labels."""
    config = _config(tmp_path, *overrides, name=name)
    Distiller(config, quiet=True)
    _write_chunks(config.run_dir / "round_0", list(firsts))
    return config


def _metadata(path: Path) -> dict:
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read("sixtysix.json"))


@pytest.fixture(scope="module")
def start_model(tmp_path_factory) -> Path:
    """A freshly initialised model zip of ours for the tiny config (net [8] relu, standard rules)."""
    folder = tmp_path_factory.mktemp("model")
    config = _config(folder, name="maker")
    path = folder / "start.zip"
    save_model(config, new_model(config, "cpu"), path, {})
    return path


def _with_metadata(source: Path, target: Path, **changes) -> Path:
    """A copy of the model zip ``source`` whose metadata has ``changes``."""
    from agents.ppo import add_metadata_to_zip

    target.write_bytes(add_metadata_to_zip(source.read_bytes(), {**_metadata(source), **changes}))
    return target


# ------------------------------------------------------------------------------------------ fit.init_model
def test_an_init_model_that_is_missing_a_folder_or_not_a_zip_is_refused_by_its_key_when_the_config_loads(tmp_path):
    """``fit.init_model`` is checked when the config is read (``distill run`` labelled first and failed at the fit,
    with ``No such file ...zip.zip`` for a missing file and an IsADirectoryError traceback for a folder)."""
    (tmp_path / "text.zip").write_text("not a zip")
    for path, fragment in ((tmp_path / "none.zip", "not found"), (tmp_path, "is a folder"),
                           (tmp_path / "text.zip", "is not a zip file")):
        with pytest.raises(ValueError, match=r"config key 'fit.init_model': .*" + fragment):
            _config(tmp_path, f"fit.init_model={path}")


def test_an_init_model_of_other_rules_or_another_net_is_refused_by_its_key(tmp_path, start_model):
    """A model of other rules or of another net shape or activation was loaded (or refused only at the fit): its
    weights started a network for these rules, and ``target: improve`` reweighted that network's policy."""
    from sixtysix_env.rules import Rules

    model = start_model
    assert _config(tmp_path, f"fit.init_model={model}").fit.init_model == str(model)
    scharf = _with_metadata(model, tmp_path / "scharf.zip", rules=Rules.preset("scharf").to_dict())
    with pytest.raises(ValueError, match=r"'fit.init_model': model .*scharf.zip' was trained for other rules "
                                         r"\(scharf\), the run's are 'standard'"):
        _config(tmp_path, f"fit.init_model={scharf}")
    with pytest.raises(ValueError, match=r"'fit.init_model': model .* has net \[8\] relu, the run's net \[9\] relu"):
        _config(tmp_path, f"fit.init_model={model}", "net.hidden=[9]")
    with pytest.raises(ValueError, match=r"has net \[8\] relu, the run's net \[8\] tanh"):
        _config(tmp_path, f"fit.init_model={model}", "net.activation=tanh")


# ------------------------------------------------------------------------------------------ config checks
def test_label_settings_fill_in_defaults_drop_the_deal_count_and_refuse_a_section_that_is_not_a_mapping():
    """``label_settings``: a saved section missing newer keys compares as their defaults, ``deals`` (a run may grow)
    is left out, and a section that is not a mapping is refused naming where it came from."""
    from train.distill import label_settings

    settings = label_settings({"teacher": "heuristic", "deals": 8})
    assert settings["teacher"] == "heuristic" and settings["worlds"] == 4 and "deals" not in settings
    assert label_settings(None) == label_settings({})
    with pytest.raises(ValueError, match="somewhere must be a mapping of label settings, got 'teacher'"):
        label_settings("teacher", "somewhere")


def test_labels_from_this_runs_own_folder_or_a_folder_without_a_config_file_is_refused(tmp_path):
    """``fit.labels_from`` must name another label run: this run's own directory, and a folder whose config.yaml
    is missing or a folder, are refused by the key (a config.yaml that is a folder is not read as the file)."""
    config = _run_with_labels(tmp_path)
    with pytest.raises(ValueError, match="'fit.labels_from' names this run's own directory"):
        _config(tmp_path, f"fit.labels_from={config.run_dir}")
    odd = tmp_path / "odd"
    (odd / "config.yaml").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"'fit.labels_from': .*odd' is not a distillation run directory"):
        _config(tmp_path, f"fit.labels_from={odd}", name="other")


def test_an_opponent_needs_true_deal_labels_and_a_behaviour_spec(tmp_path):
    """``label.opponent`` plays against a behaviour agent: with the compiled heuristic as behaviour (``teacher``)
    there is none, and the key is refused rather than ignored."""
    with pytest.raises(ValueError, match="config key 'label.opponent' is the opponent of a behaviour agent"):
        _config(tmp_path, "label.source=true_world", "label.opponent=heuristic")
    assert _config(tmp_path, "label.source=true_world", "label.opponent=heuristic",
                   "label.behaviour=heuristic").label.opponent == "heuristic"


# ------------------------------------------------------------------------------------------ label files
def test_label_files_with_fields_of_different_lengths_or_an_illegal_teacher_action_are_refused_by_name(tmp_path):
    """``LabelledDecisions.load`` checks what the fit indexes: every field one row per decision, and each teacher
    action among the legal ones."""
    short = _labels([0, 1])
    short.returns = short.returns[:-1]
    short.save(tmp_path / "short.npz")
    with pytest.raises(ValueError, match=r"short.npz' have fields of different lengths"):
        LabelledDecisions.load(tmp_path / "short.npz")
    illegal = _labels([0, 1])
    illegal.teacher_actions[2] = int(np.flatnonzero(~illegal.masks[2])[0])
    illegal.save(tmp_path / "illegal.npz")
    with pytest.raises(ValueError, match=r"illegal.npz': a teacher action is not among the legal actions"):
        LabelledDecisions.load(tmp_path / "illegal.npz")


@pytest.mark.parametrize("overrides, message", [
    ("fit.temperature=0", "'fit.temperature' must be positive, got 0"),
    ("label.source=true_world fit.target=q label.worlds=0", "'label.worlds' must be positive, got 0"),
    ("label.source=true_world fit.target=q label.epsilon=1.5", r"'label.epsilon' must lie in \[0, 1\], got 1.5"),
    ("fit.weight_decay=-0.5", "'fit.weight_decay' must be zero or more, got -0.5"),
    ("fit.validation_share=0.5", r"'fit.validation_share' must lie in \[0, 0.5\), got 0.5"),
    ("iterate.rounds=2 iterate.later_deals=[0]", r"'iterate.later_deals' \(\[0\]\) must list positive multiples"),
    ("label.continuation_seats=all", "'label.continuation_seats' must be one of both, mover, got 'all'"),
    ("label.source=true_world label.talon_window=[2,13]", "'label.talon_window' must be \\[min, max\\]"),
    ("label.source=true_world label.talon_window=[2,4,6]", "'label.talon_window' must be \\[min, max\\]"),
    ("fit.deals=[2,2]", r"'fit.deals' must be \[first, stop\] with 0 <= first < stop"),
    ("fit.deals=[0,3]", r"'fit.deals' must be \[first, stop\].*got \[0, 3\]"),
    ("fit.deals=[0,2,4]", r"'fit.deals' must be \[first, stop\]"),
    ("net.hidden=[8,0]", r"'net.hidden' must list positive layer widths, got \[8, 0\]"),
    ("fit.values_model=x.zip", "'fit.values_model' gives the values of an improvement step: set fit.target"),
    ("endgame.deals=3 endgame.chunk_deals=2", r"'endgame.deals' \(3\) must be a multiple of endgame.chunk_deals"),
    ("endgame.deals=2 endgame.chunk_deals=2 endgame.behaviour=nosuchagent", "config key 'endgame.behaviour'"),
    ("label.behaviour=nosuchagent", "config key 'label.behaviour'"),
    ("label.after_closing=true label.behaviour=heuristic label.talon_window=[2,4]",
     "'label.after_closing' labels a teacher's values after a closing"),
    ("label.after_closing=true", "'label.after_closing' labels a teacher's values after a closing"),
    ("label.source=true_world label.continuation=suit_pair label.hidden=view",
     "'label.continuation' plays on in the true deal"),
    ("label.source=true_world label.continuation=suit_pair label.continuation_opponent=suit_pair",
     "'label.continuation_opponent' plays the mover's opponent on"),
    ("run.name=../up", "run.name"),
])
def test_out_of_range_and_contradictory_values_are_refused_by_their_dotted_key(tmp_path, overrides, message):
    """Each value a run cannot use, or that another setting makes meaningless, is refused when the config loads,
    naming the key (and the bad value where there is one)."""
    with pytest.raises(ValueError, match=message):
        _config(tmp_path, *overrides.split(" "))


def test_the_bounds_of_the_checked_ranges_are_accepted(tmp_path):
    """The edges the checks allow: a share of 0 and an epsilon of 1, a talon window [0, 12] and of one size, fit.deals
    whose first is 0, zero weight decay."""
    config = _config(tmp_path, "label.source=true_world", "fit.target=q", "label.epsilon=1",
                     "label.talon_window=[0,12]", "fit.weight_decay=0", "fit.deals=[0,2]", "fit.choice_weight=0.5")
    assert config.label.epsilon == 1 and config.fit.deals == [0, 2]
    assert _config(tmp_path, "label.source=true_world", "label.talon_window=[4,4]").label.talon_window == [4, 4]
    assert _config(tmp_path, "fit.choice_weight=1", "fit.validation_share=0.49").fit.choice_weight == 1


# ------------------------------------------------------------------------------------------ merging the labels
def test_fit_deals_takes_the_whole_chunks_from_first_up_to_but_not_including_stop(tmp_path):
    """``fit.deals: [first, stop]`` keeps the chunks whose first deal lies in ``first .. stop - 1``."""
    config = _run_with_labels(tmp_path, "label.deals=6", firsts=(0, 2, 4))
    assert set(load_labels(config, 1).deals) == set(range(6))
    for first_stop, deals in (("[2,4]", {2, 3}), ("[0,4]", {0, 1, 2, 3}), ("[4,6]", {4, 5})):
        ranged = _config(tmp_path, "label.deals=6", f"fit.deals={first_stop}")
        assert set(load_labels(ranged, 1).deals) == deals, first_stop
    with pytest.raises(ValueError, match=r"no distillation labels in .*tiny for fit.deals \[6, 8\]: run `sixtysix"):
        load_labels(_config(tmp_path, "label.deals=6", "fit.deals=[6,8]"), 1)


def test_the_rounds_so_far_the_endgame_labels_and_extra_runs_are_all_fitted(tmp_path):
    """``load_labels(config, rounds)`` reads rounds ``0 .. rounds - 1`` of this run and of each
    ``fit.extra_labels_from`` run (never a later round), plus the endgame labels when ``endgame.deals`` is set;
    an extra run without labels (in ``fit.deals``) is refused naming it."""
    config = _run_with_labels(tmp_path, "iterate.rounds=3")
    _write_chunks(config.run_dir / "round_1", [10])
    _write_chunks(config.run_dir / "round_2", [20])
    _write_chunks(config.run_dir / "endgame", [30])
    assert set(load_labels(config, 1).deals) == {0, 1, 2, 3}
    assert set(load_labels(config, 2).deals) == {0, 1, 2, 3, 10, 11}
    with_endgame = _config(tmp_path, "iterate.rounds=3", "endgame.deals=2", "endgame.chunk_deals=2")
    assert set(load_labels(with_endgame, 1).deals) == {0, 1, 2, 3, 30, 31}
    extra = _run_with_labels(tmp_path, name="extra", firsts=(40,))
    merged = _config(tmp_path, "iterate.rounds=3", f"fit.extra_labels_from=[{extra.run_dir}]")
    data = load_labels(merged, 2)
    assert set(data.deals) == {0, 1, 2, 3, 10, 11, 40, 41}
    assert len(data.observations) == len(data.masks) == len(data.teacher_values) == len(data.deals)
    ranged = _config(tmp_path, "iterate.rounds=3", "fit.deals=[0,4]", f"fit.extra_labels_from=[{extra.run_dir}]")
    with pytest.raises(ValueError, match=r"no distillation labels in '.*extra' \(fit.extra_labels_from\) for "
                                         r"fit.deals \[0, 4\]"):
        load_labels(ranged, 1)


def test_a_window_label_run_must_be_one_with_a_talon_window_of_these_rules_and_hold_labels(tmp_path):
    """``fit.window_labels_from`` names a run of true-deal labels with a ``label.talon_window``: a folder without a
    config, a run without a window and a run of other rules are refused by the key when the config loads, a run
    without labels when they are read."""
    window = ("label.source=true_world", "label.talon_window=[2,4]", "fit.target=q")
    plain = _run_with_labels(tmp_path, name="plain")
    for folder in (tmp_path / "nothing", plain.run_dir):
        with pytest.raises(ValueError, match=r"'fit.window_labels_from': .* is not a distillation run with a "
                                             r"label.talon_window"):
            _config(tmp_path, f"fit.window_labels_from={folder}")
    other = _config(tmp_path, *window, "label.rules=paderborn", name="other")
    Distiller(other, quiet=True)
    with pytest.raises(ValueError, match=r"config key 'fit.window_labels_from': .*other' labelled rules 'paderborn', "
                                         r"this run 'standard'"):
        _config(tmp_path, f"fit.window_labels_from={other.run_dir}")
    empty = _config(tmp_path, *window, name="window")
    Distiller(empty, quiet=True)
    config = _run_with_labels(tmp_path, f"fit.window_labels_from={empty.run_dir}")
    with pytest.raises(ValueError, match=r"no distillation labels in .*window' \(fit.window_labels_from\)"):
        load_labels(config, 1)


def test_labels_with_and_without_the_history_planes_are_not_merged_and_a_fit_refuses_history_labels(tmp_path):
    """Chunks of two observation widths are refused naming the odd chunk; labels that all carry the history planes
    are refused by the MLP fit (``train.suit_network --history`` reads them)."""
    from sixtysix_env.observation import EXTENDED_OBSERVATION_SIZE

    config = _run_with_labels(tmp_path, firsts=(0,))
    _write_chunks(config.run_dir / "round_0", [2], width=EXTENDED_OBSERVATION_SIZE)
    with pytest.raises(ValueError, match=r"chunk_00000002.npz' have observations of \d+ columns, the first chunk "
                                         r"\d+: labels with and without the history planes"):
        load_labels(config, 1)
    (config.run_dir / "round_0" / "chunk_00000000.npz").unlink()
    assert load_labels(config, 1).observations.shape[1] == EXTENDED_OBSERVATION_SIZE
    with pytest.raises(ValueError, match="hold the history planes"):
        Distiller(config, quiet=True).fit(0)


def test_history_planes_are_a_true_deal_setting_and_labels_with_values_of_the_wrong_shape_are_refused(tmp_path):
    """``label.history`` beside a teacher is refused by its key; a label file whose values (not only whose masks)
    have the wrong shape is refused naming it."""
    with pytest.raises(ValueError, match="config key 'label.history' stores history planes with true-deal labels"):
        _config(tmp_path, "label.history=true")
    data = _labels([0])
    data.teacher_values = data.teacher_values[:, :-1]
    data.save(tmp_path / "narrow.npz")
    with pytest.raises(ValueError, match=r"narrow.npz' have masks or values of the wrong shape"):
        LabelledDecisions.load(tmp_path / "narrow.npz")


# ------------------------------------------------------------------------------------------ targets and figures
def test_teacher_values_are_the_mean_of_each_actions_world_scores_or_else_the_rollout_means():
    """A ``pimc`` teacher's values are the mean of each legal action's per-world scores (an action without scores
    stays NaN, even if the teacher also kept means); a teacher with means only (``rollout``) gives those."""
    from types import SimpleNamespace

    from train.distill import teacher_values

    pimc = SimpleNamespace(last_scores={1: [1.0, 3.0], 2: [], 5: [2.0]}, last_values={2: 9.0})
    values = teacher_values(pimc, [1, 2, 3])
    assert values[1] == 2.0 and np.isnan(values[[2, 3, 5]]).all()
    rollout = SimpleNamespace(last_scores={}, last_values={1: 0.5, 4: 1.0})
    values = teacher_values(rollout, [1, 2])
    assert values[1] == 0.5 and np.isnan(values[[2, 4]]).all()
    assert np.isnan(teacher_values(SimpleNamespace(), [1, 2])).all()


def test_an_improvement_step_keeps_the_prior_where_it_gives_the_valued_actions_no_mass():
    """``improvement_targets``: where the prior's mass lies on actions the teacher did not value, the row keeps the
    prior (not a row of zeros, which the cross-entropy would ignore)."""
    from train.distill import improvement_targets

    data = _labels([0], rows_per_deal=1)
    legal = np.flatnonzero(data.masks[0])
    data.teacher_values[0, legal[0]] = np.nan  # the teacher valued legal[1] and legal[2] only
    prior = np.zeros((1, NUM_ACTIONS))
    prior[0, legal[0]] = 1.0
    np.testing.assert_allclose(improvement_targets(data, prior, 0.25), prior)


def test_mean_regret_counts_only_rows_where_both_values_are_finite():
    """A network choosing an action the teacher did not value (NaN or -inf) is left out, not an infinite regret;
    no row counted is NaN."""
    from train.distill import mean_regret

    assert mean_regret(np.array([1.0, 2.0, np.nan]), np.array([0.5, -np.inf, 0.0])) == 0.5
    assert np.isnan(mean_regret(np.array([np.nan]), np.array([1.0])))


def test_evaluations_come_every_eval_every_epochs_and_after_the_last(tmp_path):
    """``eval.every: 2`` over 5 epochs evaluates after epochs 2, 4 and 5; ``eval.every: 0`` after the last only."""
    from train.distill import evaluation_due

    config = _config(tmp_path, "fit.epochs=5", "eval.every=2")
    assert [epoch for epoch in range(1, 6) if evaluation_due(config, epoch)] == [2, 4, 5]
    config = _config(tmp_path, "fit.epochs=5", "eval.every=0")
    assert [epoch for epoch in range(1, 6) if evaluation_due(config, epoch)] == [5]


def test_a_cuda_device_without_cuda_is_refused_by_its_key():
    """``run.device: cuda`` on a machine where torch sees no GPU is refused naming the key, not a torch error."""
    import torch

    from train.distill import resolve_device

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert resolve_device("auto") == "cpu" and resolve_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="config key 'run.device' is cuda, but torch sees no CUDA device"):
        resolve_device("cuda")


# ------------------------------------------------------------------------------------------ the fit and its files
def test_the_saved_models_carry_the_fits_provenance_and_the_summary_its_round(tmp_path):
    """Both model files (the round's and the run's latest) name the fit's seed, deal range and extra label runs,
    and a q fit its temperature (``fit.values_model`` reads it back); the summary's round entry says its number."""
    extra = _run_with_labels(tmp_path, name="extra", firsts=(0, 2))
    config = _run_with_labels(tmp_path, "fit.seed=7", "fit.deals=[0,2]", f"fit.extra_labels_from=[{extra.run_dir}]",
                              "fit.target=q", "fit.temperature=0.5")
    path = Distiller(config, quiet=True).fit(0)
    assert path == config.run_dir / "round_0" / "model.zip"
    for model in (path, config.run_dir / "model.zip"):
        metadata = _metadata(model)
        assert metadata["distill_fit_seed"] == 7 and metadata["distill_deals"] == [0, 2]
        assert metadata["distill_extra_labels"] == [str(extra.run_dir)] and metadata["q_temperature"] == 0.5
        assert metadata["distill_window_labels"] is None and metadata["distill_decisions"] == 12
        assert metadata["distill_init_model"] is None and metadata["distill_values_model"] is None
    summary = json.loads((config.run_dir / "summary.json").read_text())
    assert summary["rounds"] == [{"round": 0, "fit": summary["rounds"][0]["fit"]}]
    assert summary["rounds"][0]["fit"]["decisions"] == 12
    assert "q_temperature" not in _metadata(Distiller(_config(tmp_path), quiet=True).fit(0))


def test_the_value_head_learns_by_fit_value_coef(tmp_path):
    """With ``fit.value_coef: 0`` (and no weight decay) the value network is left as initialised, so its loss is
    the same every epoch; with a positive weight it falls."""
    def value_losses(*overrides: str) -> list[float]:
        config = _run_with_labels(tmp_path, "fit.epochs=3", "fit.weight_decay=0", "fit.batch_size=4",
                                  "fit.learning_rate=0.01", *overrides)
        Distiller(config, quiet=True).fit(0)
        rows = (config.run_dir / "scalars.csv").read_text().splitlines()
        return [float(row.split(",")[2]) for row in rows if ",losses/value_loss," in row]

    still = value_losses("fit.value_coef=0")
    assert len(still) == 3 and still[0] == pytest.approx(still[2], rel=1e-6)
    learning = value_losses("fit.value_coef=1")
    assert learning[2] < 0.9 * learning[0]


def test_a_fit_from_a_model_without_held_out_deals_and_a_fit_without_rows(tmp_path, start_model):
    """``fit.init_model`` with ``validation_share: 0`` fits (no starting figures to report); labels without a row
    are refused with a message, not a torch error."""
    config = _run_with_labels(tmp_path, f"fit.init_model={start_model}")
    Distiller(config, quiet=True).fit(0)
    final = json.loads((config.run_dir / "summary.json").read_text())["rounds"][0]["fit"]["final"]
    assert "policy_loss" in final and not any(name.startswith("start_") for name in final)
    empty = _config(tmp_path, name="empty")
    Distiller(empty, quiet=True)
    (empty.run_dir / "round_0").mkdir(parents=True)
    _labels([]).save(empty.run_dir / "round_0" / "chunk_00000000.npz")
    with pytest.raises(ValueError, match=r"no labelled decisions to fit \(increase label.deals\)"):
        Distiller(empty, quiet=True).fit(0)


# ------------------------------------------------------------------------------------------ resuming a run
def test_a_run_directory_refuses_another_run_seed_and_accepts_a_config_saved_before_the_endgame_section(tmp_path):
    """The labels on disk were dealt from ``run.seed``: a continued run with another seed is refused; a saved config
    without an ``endgame`` section (older runs) compares as the default endgame settings."""
    import yaml

    config = _run_with_labels(tmp_path)
    with pytest.raises(ValueError, match="holds labels of another label or endgame config or run.seed"):
        Distiller(_config(tmp_path, "run.seed=5"), quiet=True)
    saved = yaml.safe_load((config.run_dir / "config.yaml").read_text())
    del saved["endgame"]
    (config.run_dir / "config.yaml").write_text(yaml.safe_dump(saved))
    Distiller(_config(tmp_path, "label.deals=6"), quiet=True)  # a run may grow


def test_labelling_is_refused_where_it_cannot_happen(tmp_path, start_model):
    """Round 1 before round 0's network exists, a run that fits another run's labels, and network labels (written
    by ``train.relabel``) are each refused with a message saying what to do."""
    config = _run_with_labels(tmp_path, "iterate.rounds=2")
    with pytest.raises(ValueError, match="round 1 is labelled by the network of round 0: fit it first"):
        Distiller(config, quiet=True).label(1)
    fitting = _config(tmp_path, f"fit.labels_from={config.run_dir}", name="fitting")
    with pytest.raises(ValueError, match=r"this run fits the labels of .*tiny' \(fit.labels_from\): label there"):
        Distiller(fitting, quiet=True).label(0)
    q_model = _with_metadata(start_model, tmp_path / "q.zip", q_temperature=1.0)
    network = _config(tmp_path, "label.source=network", f"label.teacher={q_model}", name="network")
    with pytest.raises(ValueError, match="label.source: network labels are written by `python -m train.relabel`"):
        Distiller(network, quiet=True).label(0)


def test_a_later_round_labels_its_own_deals_with_the_last_network_and_its_fit_takes_every_round(tmp_path, start_model):
    """Round 1 labels ``iterate.later_deals[0]`` deals (not ``label.deals``), dealt from its own seed, played by
    round 0's network on every decision (``phase2=policy``); the endgame labels come with round 0 only; the fit of
    round 1 reads the labels of rounds 0 and 1."""
    import shutil

    config = _config(tmp_path, "label.deals=2", "iterate.rounds=2", "iterate.later_deals=[4]", "endgame.deals=2",
                     "endgame.chunk_deals=2", "endgame.teacher=heuristic")
    distiller = Distiller(config, quiet=True)
    distiller.label(0)
    endgame = dict(distiller.summary["endgame"])
    assert endgame["new_deals"] == 2
    shutil.copy(start_model, config.run_dir / "round_0" / "model.zip")
    figures = distiller.label(1)
    assert figures["new_deals"] == 4
    assert figures["behaviour"] == f"ppo:path={config.run_dir / 'round_0' / 'model.zip'},phase2=policy"
    assert json.loads((config.run_dir / "summary.json").read_text())["endgame"] == endgame
    first = LabelledDecisions.load(config.run_dir / "round_0" / "chunk_00000000.npz")
    again = LabelledDecisions.load(config.run_dir / "round_1" / "chunk_00000000.npz")
    assert not np.array_equal(first.observations[0], again.observations[0])  # other deals, not deal 0 again
    distiller.fit(1)
    fitted = json.loads((config.run_dir / "summary.json").read_text())["rounds"][1]["fit"]["decisions"]
    assert fitted == sum(len(LabelledDecisions.load(path))
                         for folder in ("round_0", "round_1", "endgame") for path in (config.run_dir / folder).iterdir()
                         if path.suffix == ".npz")


# ------------------------------------------------------------------------------------------ the command
def test_the_command_refuses_a_round_outside_the_runs_rounds_and_a_missing_config(tmp_path, capsys):
    """``--round`` must lie in ``0 .. iterate.rounds - 1`` (a negative round read a round from the end); ``label``
    and ``fit`` need ``--config``; a config file that does not exist is named in the message."""
    path = _write_config(tmp_path)
    for bad in ("-1", "1"):
        assert distill_main(["fit", "--config", str(path), "--round", bad, "--quiet"]) == 2
        assert f"--round must lie in 0..0 (iterate.rounds), got {bad}" in capsys.readouterr().err
    assert distill_main(["label"]) == 2
    assert "give --config FILE" in capsys.readouterr().err
    assert distill_main(["fit", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "none.yaml" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ mutation review, round 2
def test_labels_from_a_run_of_another_teacher_are_refused_naming_the_setting(tmp_path):
    """``fit.labels_from`` compares every label setting, the teacher included: another teacher's labels are not
    this config's."""
    source = _run_with_labels(tmp_path, name="source")
    with pytest.raises(ValueError, match=r"'fit.labels_from': the labels in .*source' were made with another label "
                                         r"config \(differing: label.teacher\)"):
        _config(tmp_path, f"fit.labels_from={source.run_dir}", "label.teacher=random")


def test_a_continuation_network_that_hands_phase_2_to_a_search_is_refused_by_its_key(tmp_path, start_model):
    """``label.continuation`` plays every decision of the rollouts with the network: a ``ppo:`` spec whose phase 2
    goes to the solver (``phase2=solver``) is refused, not rolled out as if it were the network alone."""
    with pytest.raises(ValueError, match=r"'label.continuation': .* is not a network that plays every decision"):
        _config(tmp_path, "label.source=true_world", f"label.continuation=ppo:path={start_model},phase2=solver")
    assert _config(tmp_path, "label.source=true_world",
                   f"label.continuation=ppo:path={start_model},phase2=policy").label.continuation


def test_the_q_loss_compares_the_logits_centred_over_the_valued_actions():
    """``q_regression_loss``: logits that are the targets plus any constant per row cost nothing (a softmax policy
    and the fitted values ignore that constant)."""
    import torch

    from train.distill import q_regression_loss

    valued = torch.zeros((2, NUM_ACTIONS), dtype=torch.bool)
    valued[:, :3] = True
    targets = torch.zeros((2, NUM_ACTIONS))
    targets[:, :3] = torch.tensor([[-1.0, 0.0, 1.0], [0.5, 0.5, -1.0]])
    shifted = targets + torch.tensor([[5.0], [-2.0]])
    assert float(q_regression_loss(shifted, valued, targets)) == pytest.approx(0.0, abs=1e-6)
    assert float(q_regression_loss(targets * 2, valued, targets)) > 0.1


def test_rows_without_values_give_the_teachers_action_without_a_numpy_warning():
    """A row the teacher left unvalued (all NaN) is the one-hot of its action, computed without a RuntimeWarning
    (a fit on such labels printed ``invalid value encountered in subtract``)."""
    import warnings

    from train.distill import soft_targets

    data = _labels([0], rows_per_deal=2)
    data.teacher_values[1] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        targets = soft_targets(data, 0.5, 0.25)
    expected = np.zeros(NUM_ACTIONS)
    expected[data.teacher_actions[1]] = 1.0
    np.testing.assert_array_equal(targets[1], expected)


def test_the_accuracy_figure_compares_each_row_with_its_own_teacher_action(tmp_path, start_model):
    """Labels whose teacher actions are the starting network's own choices: its held-out accuracy is 1 (each row
    against its own action)."""
    from sb3_contrib import MaskablePPO

    from train.distill import policy_probabilities

    config = _run_with_labels(tmp_path, f"fit.init_model={start_model}", "fit.validation_share=0.25")
    policy = MaskablePPO.load(start_model, device="cpu").policy
    for path in (config.run_dir / "round_0").glob("*.npz"):
        data = LabelledDecisions.load(path)
        data.teacher_actions = policy_probabilities(policy, data.observations, data.masks, "cpu").argmax(axis=1)
        data.save(path)
    Distiller(config, quiet=True).fit(0)
    final = json.loads((config.run_dir / "summary.json").read_text())["rounds"][0]["fit"]["final"]
    assert final["start_validation_accuracy"] == 1.0


def _uniform_q_model(tmp_path: Path) -> Path:
    """A q network (``q_temperature`` in its metadata) that values every legal action 0."""
    import torch

    config = _config(tmp_path, name="q_maker")
    model = new_model(config, "cpu")
    with torch.no_grad():
        model.policy.action_net.weight.zero_()
        model.policy.action_net.bias.zero_()
    path = tmp_path / "uniform_q.zip"
    save_model(config, model, path, {"q_temperature": 1.0})
    return path


def test_an_improvement_step_takes_the_values_of_fit_values_model_in_place_of_the_labels(tmp_path, start_model):
    """``fit.values_model`` replaces the labels' values: with a q network valuing every action the same, no choice
    of the network has a regret (the labels' own random values would give one)."""
    values_model = _uniform_q_model(tmp_path)
    config = _run_with_labels(tmp_path, f"fit.init_model={start_model}", "fit.target=improve",
                              f"fit.values_model={values_model}", "fit.validation_share=0.25")
    path = Distiller(config, quiet=True).fit(0)
    final = json.loads((config.run_dir / "summary.json").read_text())["rounds"][0]["fit"]["final"]
    assert final["start_validation_regret"] == 0.0 and final["validation_regret"] == 0.0
    # the model names the networks it came from, by path and by content
    metadata = _metadata(path)
    for key, source in (("distill_init_model", start_model), ("distill_values_model", values_model)):
        assert metadata[key] == {"path": str(source), "sha256": hashlib.sha256(source.read_bytes()).hexdigest()}
    assert metadata["distill_init_model"]["sha256"] != metadata["distill_values_model"]["sha256"]


def test_endgame_labels_are_dealt_apart_from_the_rounds_deals(tmp_path):
    """The endgame labels come from deals of their own seed: their phase-2 positions are not those of round 0's
    deals (the same heuristic, seeded alike, plays both: deals of one seed would give the same positions)."""
    config = _config(tmp_path, "label.deals=2", "label.behaviour=heuristic", "endgame.deals=2",
                     "endgame.chunk_deals=2", "endgame.teacher=heuristic")
    Distiller(config, quiet=True).label(0)
    rows = {tuple(row) for path in (config.run_dir / "round_0").glob("*.npz")
            for row in LabelledDecisions.load(path).observations}
    endgame = [tuple(row) for path in (config.run_dir / "endgame").glob("*.npz")
               for row in LabelledDecisions.load(path).observations]
    assert endgame and not set(endgame) & rows


def test_a_round_fitted_again_replaces_its_evaluations(tmp_path):
    """``eval.jsonl`` holds one evaluation per opponent and fit: fitting round 0 again replaces its lines instead
    of adding to them."""
    config = _run_with_labels(tmp_path, "eval.opponents=[random]")
    distiller = Distiller(config, quiet=True)
    for _ in range(2):
        distiller.fit(0)
        lines = (config.run_dir / "eval.jsonl").read_text().splitlines()
        assert [json.loads(line)["round"] for line in lines] == [0]


@pytest.mark.parametrize("overrides, source", [
    (("label.behaviour=heuristic", "label.talon_window=[0,3]"), "heuristic at talon_window=[0, 3]"),
    (("label.behaviour=heuristic", "label.after_closing=true"), "heuristic after a closing"),
    (("label.source=true_world", "label.talon_window=[0,3]"),
     "true_world:worlds=4,epsilon=0.05,hidden=true_deal,talon_window=[0, 3]"),
])
def test_the_saved_model_names_the_labels_it_was_fitted_on(tmp_path, overrides, source):
    """The model's ``distilled_from`` says which decisions were labelled and how: a talon window, only after a
    closing, the true deal's window."""
    config = _run_with_labels(tmp_path, *overrides)
    assert _metadata(Distiller(config, quiet=True).fit(0))["distilled_from"] == source


def test_a_continuation_run_names_both_networks_in_its_models(tmp_path, start_model):
    """True-deal labels rolled out by a network (and its opponent network) name both in the model's
    ``distilled_from``."""
    network = f"ppo:path={start_model},phase2=policy"
    config = _run_with_labels(tmp_path, "label.source=true_world", f"label.continuation={network}",
                              "label.continuation_seats=mover",
                              f"label.continuation_opponent={network}")
    assert _metadata(Distiller(config, quiet=True).fit(0))["distilled_from"] == (
        f"true_world:worlds=4,epsilon=0.05,continuation={network},continuation_seats=mover,"
        f"continuation_opponent={network}")


def test_a_continuation_network_of_other_rules_is_refused_by_its_key(tmp_path, start_model):
    """``label.continuation`` of a network fitted for other rules is refused when the config is read (its policy
    would have played these rules' rollouts)."""
    from sixtysix_env.rules import Rules

    scharf = _with_metadata(start_model, tmp_path / "scharf.zip", rules=Rules.preset("scharf").to_dict())
    with pytest.raises(ValueError, match=r"scharf"):
        _config(tmp_path, "label.source=true_world", f"label.continuation=ppo:path={scharf},phase2=policy")


def test_a_labelled_decision_carries_the_deciders_own_return():
    """``returns`` is the deal's points for the player who decided the row: in a deal both players decide, the
    rows carry one return and its negative."""
    from sixtysix_env.rules import Rules
    from train.distill import label_deals

    data = label_deals(Rules.preset("standard"), "heuristic", "teacher", seed=3, first=0, count=4,
                       phase2_only=False)
    both_signs = 0
    for deal in np.unique(data.deals):
        returns = set(data.returns[data.deals == deal].tolist())
        assert len(returns) <= 2 and (len(returns) == 1 or sum(returns) == 0)
        both_signs += len(returns) == 2
    assert both_signs > 0


def test_a_start_model_whose_weights_do_not_fit_its_recorded_net_is_refused_by_its_key(tmp_path, start_model):
    """A model zip whose metadata names another net than its weights have is refused by the key when the config is
    read, its weights tried in the net the metadata names (it was a torch ``RuntimeError`` at the fit); the fit checks
    it again (the file may have changed since), by the same words."""
    liar = _with_metadata(start_model, tmp_path / "liar.zip", hidden=[9])
    with pytest.raises(ValueError, match=r"'fit.init_model': .*liar.zip'.* weights do not fit the net \[9\]"):
        _config(tmp_path, f"fit.init_model={liar}", "net.hidden=[9]")
    config = _config(tmp_path, "net.hidden=[9]")
    config.fit.init_model = str(liar)  # past the config's check, as a config changed in code would be
    with pytest.raises(ValueError, match=r"config key 'fit.init_model': .*liar.zip'.* weights do not fit the net "
                                         r"\[9\]"):
        new_model(config, "cpu")


def test_an_extra_label_run_listed_twice_is_refused_by_its_key(tmp_path):
    """``fit.extra_labels_from`` naming one run twice (also as another spelling of its path) is refused: its labels
    were loaded and fitted twice, silently doubling their weight."""
    extra = _run_with_labels(tmp_path, name="extra")
    config = _config(tmp_path, f"fit.extra_labels_from=[{extra.run_dir}]")
    assert config.fit.extra_labels_from == [str(extra.run_dir)]
    for second in (extra.run_dir, f"{extra.run_dir}/../extra"):
        with pytest.raises(ValueError, match=r"config key 'fit.extra_labels_from' lists .*extra' twice"):
            _config(tmp_path, f"fit.extra_labels_from=[{extra.run_dir},{second}]")


def test_a_values_model_that_is_missing_not_a_q_network_or_of_other_rules_is_refused_when_the_config_loads(
        tmp_path, start_model):
    """``fit.values_model`` is read when the config is (it was first read at the fit: ``distill run`` labelled every
    deal, then failed), and a q network of other rules is refused (its values were used for these rules' labels)."""
    from sixtysix_env.rules import Rules

    improve = (f"fit.init_model={start_model}", "fit.target=improve")
    uniform = _uniform_q_model(tmp_path)
    assert _config(tmp_path, *improve, f"fit.values_model={uniform}").fit.values_model == str(uniform)
    with pytest.raises(ValueError, match=r"config key 'fit.values_model': .*none.zip"):
        _config(tmp_path, *improve, f"fit.values_model={tmp_path / 'none.zip'}")
    with pytest.raises(ValueError, match=r"config key 'fit.values_model': .* was not fitted with fit.target: q"):
        _config(tmp_path, *improve, f"fit.values_model={start_model}")
    scharf = _with_metadata(uniform, tmp_path / "scharf_q.zip", rules=Rules.preset("scharf").to_dict())
    with pytest.raises(ValueError, match=r"'fit.values_model': .*scharf_q.zip' was fitted for other rules \(scharf\), "
                                         r"this run 'standard'"):
        _config(tmp_path, *improve, f"fit.values_model={scharf}")
    # A suit network that reads the history planes cannot value the fit's rows (observations alone): it was refused
    # only at the fit, after every deal had been labelled.
    from agents.suit import save_suit_weights
    from train.suit_network import build_suit_network, with_history_inputs

    weights = {name: tensor.detach().numpy() for name, tensor in build_suit_network(4, 4).state_dict().items()}
    planes = tmp_path / "planes_q.npz"
    save_suit_weights(planes, with_history_inputs(weights), Rules(), {"temperature": 0.25})
    with pytest.raises(ValueError, match=r"'fit.values_model': .*planes_q.npz' reads the history planes"):
        _config(tmp_path, *improve, f"fit.values_model={planes}")
