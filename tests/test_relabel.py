"""train.relabel: another run's positions valued by a q network (an ensemble), as labels a suit network fits."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from agents.ppo import QValueNetwork
from label_runs import tiny_label_run
from train.distill import Distiller, LabelledDecisions, load_distill_config
from train.relabel import chunk_paths, main, relabel
from train.suit_network import fit_suit_network

PAIR = "models/suit_two_long_standard.npz+models/suit_three_standard.npz"


@pytest.fixture()
def positions(tmp_path):
    return tiny_label_run(tmp_path, deals=20, chunk_deals=10, worlds=2)[1]


def test_relabelled_positions_carry_the_networks_values_and_a_suit_network_fits_them(positions, tmp_path):
    out = tmp_path / "runs" / "teacher"
    figures = relabel(positions, PAIR, out, quiet=True)
    assert chunk_paths(out) == chunk_paths(positions) and len(chunk_paths(out)) == 2
    network = QValueNetwork(PAIR)
    for relative in chunk_paths(out):
        before, after = LabelledDecisions.load(positions / relative), LabelledDecisions.load(out / relative)
        assert np.array_equal(after.observations, before.observations) and np.array_equal(after.masks, before.masks)
        assert np.array_equal(after.deals, before.deals) and np.array_equal(after.returns, before.returns)
        expected = network.values_of_observations(before.observations, before.masks)
        assert np.allclose(after.teacher_values, expected, equal_nan=True)
        assert np.isnan(after.teacher_values[~after.masks]).all()
        assert not np.isnan(after.teacher_values[after.masks]).any()
        best = np.where(after.masks, after.teacher_values, -np.inf).max(axis=1)
        assert np.array_equal(after.teacher_values[np.arange(len(after)), after.teacher_actions], best)
    assert figures["new_chunks"] == 2 and figures["new_decisions"] > 0
    label = yaml.safe_load((out / "config.yaml").read_text())["label"]
    assert (label["source"], label["teacher"], label["positions_from"]) == ("network", PAIR, str(positions))
    stamp = (out / chunk_paths(out)[0]).stat().st_mtime_ns
    assert relabel(positions, PAIR, out, quiet=True)["new_chunks"] == 0  # a run resumes: written chunks are kept
    assert (out / chunk_paths(out)[0]).stat().st_mtime_ns == stamp
    # A fit reads the new run's config as its own, its labels from the run (fit.labels_from): the targets are the
    # network's values, so a fit can learn them; labelling such a run is refused by name.
    fit = load_distill_config(out / "config.yaml", ["run.name=student", f"fit.labels_from={out}", "fit.epochs=1",
                                                    "fit.batch_size=64", "fit.validation_share=0.25", "eval.every=0"])
    result = fit_suit_network(fit, tmp_path / "student.npz", quiet=True, init="models/suit_two_standard.npz")
    assert np.isfinite(result["validation_loss"])
    with pytest.raises(ValueError, match="label.source: network labels are written by `python -m train.relabel`"):
        Distiller(load_distill_config(out / "config.yaml", ["run.name=again"]), quiet=True).label(0)


def test_bad_relabel_inputs_are_refused_by_name(positions, tmp_path, capsys):
    out = str(tmp_path / "out")
    assert main(["--positions", str(tmp_path), "--teacher", PAIR, "--out", out]) == 2
    assert "is not a distillation run directory (no config.yaml)" in capsys.readouterr().err
    assert main(["--positions", str(positions), "--teacher", "models/ppo_standard.zip", "--out", out]) == 2
    error = capsys.readouterr().err
    assert "relabel's teacher: " in error and "was not fitted with fit.target: q" in error
    assert main(["--positions", str(positions), "--teacher", PAIR, "--out", str(positions)]) == 2
    assert "--out must be another directory than --positions" in capsys.readouterr().err


def test_a_label_run_resumes_only_with_its_own_teacher_and_positions(positions, tmp_path, capsys):
    """Resuming with another teacher kept the first teacher's chunks beside the second's, under a config naming
    only the second: refused by name, with nothing written."""
    out = tmp_path / "runs" / "teacher"
    relabel(positions, PAIR, out, quiet=True)
    first_chunk = out / chunk_paths(out)[0]
    first_chunk.unlink()  # a chunk still to label, as a run cut short leaves it
    config_before = (out / "config.yaml").read_text()
    other = "models/suit_three_standard.npz"
    assert main(["--positions", str(positions), "--teacher", other, "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert f"was labelled with --teacher {PAIR!r}, not {other!r}" in error
    elsewhere = tmp_path / "copy"
    elsewhere.mkdir()
    for name in ("config.yaml", *[str(path) for path in chunk_paths(positions)]):
        (elsewhere / name).parent.mkdir(parents=True, exist_ok=True)
        (elsewhere / name).write_bytes((positions / name).read_bytes())
    assert main(["--positions", str(elsewhere), "--teacher", PAIR, "--out", str(out)]) == 2
    assert f"was labelled with --positions {str(positions)!r}" in capsys.readouterr().err
    assert (out / "config.yaml").read_text() == config_before and not first_chunk.exists()
    assert relabel(positions, PAIR, out, quiet=True)["new_chunks"] == 1  # the same teacher resumes


def test_the_positions_config_loads_and_labels_with_the_cheapest_rollouts():
    """configs/positions_heuristic.yaml (the positions relabelled in docs/training.md, "Session 23")."""
    config = load_distill_config("configs/positions_heuristic.yaml", [])
    assert (config.label.source, config.label.worlds, config.label.behaviour) == ("true_world", 1, "teacher")
    assert config.label.deals % config.label.chunk_deals == 0
