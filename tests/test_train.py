"""Training pipeline (issue 4): config loader, a seconds-long self-play run that checkpoints and resumes, the pool
opponent, and the ``ppo`` agent (shipped model, layout and rules checks).

The training tests need the ``train`` extra (pyyaml, torch, stable-baselines3, sb3-contrib) and are skipped
without it; the ``ppo`` agent tests need only NumPy (the model carries a NumPy copy of its actor).
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents.ppo import (
    ACTOR_ENTRY, DEFAULT_MODEL, METADATA_ENTRY, ActorNetwork, PolicyAgent, PpoAgent, encode_infoset,
    read_model_metadata,
)
from agents.registry import make_agent, registered_names
from eval.play import play_deal
from play_helpers import ClosesAtOnce
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.observation import OBSERVATION_SIZE, encode_observation
from sixtysix_env.rules import PRESET_NAMES

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "configs" / "ppo_smoke.yaml"
SELFPLAY = ROOT / "configs" / "ppo_selfplay.yaml"


def _train_modules():
    """(train.config, train.selfplay), or skip the test without the 'train' extra."""
    for module in ("yaml", "torch", "stable_baselines3", "sb3_contrib"):
        pytest.importorskip(module, reason="training needs the 'train' extra")
    import train.config
    import train.selfplay

    return train.config, train.selfplay


# ------------------------------------------------------------------------------------------ config
def test_shipped_configs_load_and_overrides_apply():
    config_module, _ = _train_modules()
    load_config, config_from_dict = config_module.load_config, config_module.config_from_dict
    config = load_config(SELFPLAY)
    assert config.env.rules == "standard"
    smoke = load_config(SMOKE, ["ppo.learning_rate=1e-4", "net.hidden=[64, 64]", "pool.baselines.heuristic=0.5",
                                "ppo.target_kl=null"])
    assert smoke.ppo.learning_rate == pytest.approx(1e-4)
    assert smoke.net.hidden == [64, 64]
    assert smoke.pool.baselines == {"random": 1.0, "greedy": 1.0, "heuristic": 0.5}
    assert smoke.ppo.target_kl is None
    # The YAML round trip of the written config.yaml gives the same config.
    assert config_from_dict(__import__("yaml").safe_load(smoke.to_yaml())) == smoke


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["ppo.learnin_rate=0.1"], "unknown config key 'ppo.learnin_rate'"),
        (["optimizer.lr=0.1"], "unknown config key 'optimizer'"),
        (["ppo.n_steps=many"], "config key 'ppo.n_steps' must be an integer"),
        (["run.seed=1.5"], "config key 'run.seed' must be an integer"),
        (["run.progress_bar=3"], "config key 'run.progress_bar' must be true or false"),
        (["net.hidden=64"], "config key 'net.hidden' must be a list of an integer"),
        (["net.hidden=[]"], "config key 'net.hidden' must list positive layer widths"),
        (["run.vec_env=threads"], "config key 'run.vec_env' must be one of subproc, dummy"),
        (["env.rules=bavarian"], "config key 'env.rules' must be one of standard, paderborn, scharf"),
        (["ppo.gamma=1.5"], "config key 'ppo.gamma' must lie in [0, 1]"),
        (["run.total_steps=0"], "config key 'run.total_steps' must be positive"),
        # One pair gave an infinite interval in eval.jsonl, which --resume then refused to read.
        (["eval.pairs=1"], "config key 'eval.pairs' must be at least 2"),
        (["ppo.batch_size=100000"], "config key 'ppo.batch_size' (100000) exceeds the rollout size"),
        # Found by a sweep of the configs: each passed, made the run's folder, then failed (and so did --resume).
        (["run.seed=-1"], "config key 'run.seed' must lie in 0..4294967295, got -1"),  # numpy's legacy seeds
        (["run.seed=4294967296"], "config key 'run.seed' must lie in 0..4294967295, got 4294967296"),
        (["imitation.seed=-1"], "config key 'imitation.seed' must lie in 0..4294967295, got -1"),
        # a minibatch of one row: its advantages cannot be normalised, and the update filled the network with NaN
        (["ppo.batch_size=1"], "config key 'ppo.batch_size' (1) leaves a minibatch of one row of the rollout"),
        (["run.n_envs=3", "ppo.n_steps=43", "ppo.batch_size=64"],
         "config key 'ppo.batch_size' (64) leaves a minibatch of one row of the rollout ppo.n_steps * run.n_envs "
         "= 129"),
        (["pool.baselines.nosuchagent=1"], "config key 'pool.baselines': unknown agent 'nosuchagent'"),
        (["eval.opponents=[pimc:samplez=3]"], "config key 'eval.opponents': unknown parameter 'samplez'"),
        # An agent that cannot play the run's rules (its prior fitted for the standard rules, R20) is named now.
        (["env.rules=scharf", "eval.opponents=[expert]"],
         "config key 'eval.opponents': rollout's prior 'suit_iterated' was fitted for the rules 'standard', not "
         "'scharf'"),
        (["pool.baselines.random=-1"], "config key 'pool.baselines.random' must be a weight of zero or more"),
        (["ppo.target_kl=0"], "config key 'ppo.target_kl' must be positive or null"),
        (["ppo.n_steps"], "malformed override 'ppo.n_steps'"),
        (["learning_rate=0.1"], "malformed override key 'learning_rate'"),
    ],
)
def test_bad_config_values_are_refused_naming_the_key(overrides, message):
    config_module, _ = _train_modules()
    with pytest.raises(ValueError) as error:
        config_module.load_config(SMOKE, overrides)
    assert message in str(error.value)


def test_bad_config_files_are_refused(tmp_path):
    load_config = _train_modules()[0].load_config
    with pytest.raises(FileNotFoundError, match="config file not found"):
        load_config(tmp_path / "missing.yaml")
    not_mapping = tmp_path / "list.yaml"
    not_mapping.write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="must hold a mapping of sections"):
        load_config(not_mapping)
    bad_section = tmp_path / "section.yaml"
    bad_section.write_text("run: {name: x}\nppo: 3\n")
    with pytest.raises(ValueError, match="config key 'ppo' must be a mapping of fields"):
        load_config(bad_section)
    bad_yaml = tmp_path / "broken.yaml"
    bad_yaml.write_text("ppo: {n_steps: [\n")
    with pytest.raises(ValueError, match="is not valid YAML"):
        load_config(bad_yaml)
    # YAML's parser recurses per level: nesting beyond Python's stack was a RecursionError traceback
    deep = tmp_path / "deep.yaml"
    deep.write_text("run: " + "[" * 20_000 + "]" * 20_000 + "\n")
    with pytest.raises(ValueError, match="is not valid YAML: nested too deeply to read"):
        load_config(deep)
    with pytest.raises(ValueError, match="override 'run.name': value .* is not valid YAML \\(nested too deeply"):
        load_config(SMOKE, ["run.name=" + "[" * 20_000])


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "is empty: a config names at least its run section"),
        ("# only a comment\n", "is empty"),
        ("run: null\n", "config key 'run' is empty (null)"),
        ("run:\n", "config key 'run' is empty (null)"),
        ("ppo: {n_steps: 64}\n", "has no 'run' section"),
        ("run: {name: a, name: b}\n", "found duplicate key 'name'"),
        ("run: {name: a}\nrun: {name: b}\n", "found duplicate key 'run'"),
        ("run: {name: a, total_steps: 2.0e6}\n", "config key 'run.total_steps' must be an integer"),
        ("run: {name: a, total_steps: true}\n", "config key 'run.total_steps' must be an integer"),
        ("run: {name: a}\nppo: {learning_rate: .nan}\n", "config key 'ppo.learning_rate' must be a finite number"),
        ("run: {name: a}\nppo: {learning_rate: .inf}\n", "config key 'ppo.learning_rate' must be a finite number"),
        ("run: {name: a}\nppo: {learning_rate: nan}\n", "config key 'ppo.learning_rate' must be a finite number"),
    ],
)
def test_a_config_never_starts_a_default_run_and_is_read_strictly(tmp_path, text, message):
    """An empty file or ``run: null`` would silently start the full default run; duplicate keys would keep the
    last one; 2.0e6 steps and NaN rates are not what they seem: all refused, naming the key."""
    load_config = _train_modules()[0].load_config
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(path)



def test_an_override_does_not_fill_a_section_the_file_left_empty(tmp_path):
    """``run: null`` is refused on its own; a ``--set run.name=...`` beside it used to fill the empty section with
    the defaults and start the run. A section the file leaves out may still be added by an override."""
    load_config = _train_modules()[0].load_config
    path = tmp_path / "config.yaml"
    path.write_text("run: {name: a}\nppo: null\n")
    with pytest.raises(ValueError, match=r"config key 'ppo' is empty \(null\)"):
        load_config(path, ["ppo.learning_rate=0.001"])
    path.write_text("run: {name: a}\n")
    assert load_config(path, ["ppo.learning_rate=0.001"]).ppo.learning_rate == 0.001


def test_cli_train_refuses_an_empty_config_with_exit_2_and_starts_nothing(tmp_path, capsys, monkeypatch):
    import sixtysix_cli

    _config, selfplay = _train_modules()
    monkeypatch.setattr(selfplay.Trainer, "new_run", lambda *args, **kwargs: pytest.fail("a run was started"))
    path = tmp_path / "empty.yaml"
    path.write_text("")
    assert sixtysix_cli.main(["train", "--config", str(path)]) == 2
    error = capsys.readouterr().err
    assert "is empty" in error and "Traceback" not in error


def test_every_config_field_has_a_docstring():
    import dataclasses

    config_module, _ = _train_modules()
    TrainConfig, field_docs, describe_config = config_module.TrainConfig, config_module.field_docs, config_module.describe_config

    for section in dataclasses.fields(TrainConfig):
        section_cls = section.default_factory().__class__  # type: ignore[misc]
        docs = field_docs(section_cls)
        for field in dataclasses.fields(section_cls):
            assert docs.get(field.name), f"{section.name}.{field.name} has no docstring"
    text = describe_config()
    assert "ppo:" in text and "learning_rate" in text and "Adam step size" in text


# ------------------------------------------------------------------------------------------ a short run
@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """Train the smoke config (256 steps) and resume it to 384 steps; returns the run directory."""
    config_module, selfplay = _train_modules()
    load_config, Trainer = config_module.load_config, selfplay.Trainer
    out = tmp_path_factory.mktemp("runs")
    config = load_config(SMOKE, [f"run.out_dir={out}"])
    trainer = Trainer.new_run(config, quiet=True)
    trainer.train()
    run_dir = config.run_dir
    first = json.loads((run_dir / "checkpoint.json").read_text())
    resumed = Trainer.resume_run(run_dir, ["run.total_steps=384"], quiet=True)
    resumed.train()
    return run_dir, first


def _scalar_rows(run_dir: Path) -> list[tuple[int, str, float]]:
    import csv

    with open(run_dir / "scalars.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["step", "tag", "value"]
    return [(int(step), tag, float(value)) for step, tag, value in rows[1:]]


def test_smoke_run_writes_checkpoints_tensorboard_and_pool(smoke_run):
    run_dir, first = smoke_run
    assert first["step"] == 256
    pointer = json.loads((run_dir / "checkpoint.json").read_text())
    assert pointer["step"] == 384
    state = json.loads((run_dir / "checkpoints" / f"{pointer['name']}.json").read_text())
    assert state["resumes"] == 1 and state["step"] == 384
    assert (run_dir / "checkpoints" / f"{pointer['name']}.zip").is_file()
    assert len(list((run_dir / "checkpoints").glob("step_*.zip"))) == 2  # checkpoint.keep
    assert list((run_dir / "tb").glob("events.out.tfevents.*"))
    assert (run_dir / "config.yaml").is_file()
    pool = json.loads((run_dir / "pool" / "pool.json").read_text())["snapshots"]
    assert [entry["step"] for entry in pool] == [256, 384]  # max_snapshots 2: the oldest left
    assert all((run_dir / "pool" / entry["file"]).is_file() for entry in pool)
    tags = {tag for _step, tag, _value in _scalar_rows(run_dir)}
    for tag in ("losses/policy_loss", "losses/value_loss", "losses/entropy", "charts/explained_variance",
                "charts/SPS", "eval/random/margin", "eval/random/margin_ci_low", "eval/greedy/margin_ci_high"):
        assert tag in tags, tag


def test_tensorboard_holds_the_tags_and_the_config(smoke_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir, _first = smoke_run
    accumulator = EventAccumulator(str(run_dir / "tb"), size_guidance={"tensors": 0, "scalars": 0})
    tags = set()
    texts = []
    for event_file in sorted((run_dir / "tb").glob("events.out.tfevents.*")):
        single = EventAccumulator(str(event_file), size_guidance={"tensors": 0, "scalars": 0})
        single.Reload()
        tags |= set(single.Tags()["scalars"])
        texts += single.Tags()["tensors"]
    assert {"losses/policy_loss", "charts/SPS", "eval/greedy/margin", "eval/greedy/margin_ci_low"} <= tags
    assert any(tag.startswith("config") for tag in texts)
    del accumulator


def test_pool_files_are_pruned_to_the_pool_and_the_kept_checkpoints_and_temp_files_removed(tmp_path):
    """Bounded disk use without training: snapshot files listed by neither the pool nor a checkpoint state are
    deleted; the temp files of an interrupted atomic write are removed (sixtysix_env/fileio.py)."""
    from sixtysix_env.fileio import remove_stale_temp_files

    config_module, selfplay = _train_modules()
    config = config_module.load_config(SMOKE, [f"run.out_dir={tmp_path}"])
    trainer = selfplay.Trainer.new_run(config, quiet=True)
    trainer.pool_dir.mkdir(parents=True)
    trainer.checkpoint_dir.mkdir(parents=True)
    for step in (128, 256, 384, 512):
        (trainer.pool_dir / f"snap_{step:010d}.npz").write_bytes(b"weights")
    (trainer.checkpoint_dir / "step_0000000384.json").write_text(json.dumps(
        {"pool": [{"file": "snap_0000000256.npz", "step": 256}, {"file": "snap_0000000384.npz", "step": 384}]}))
    trainer.state = {"pool": [{"file": "snap_0000000384.npz", "step": 384}, {"file": "snap_0000000512.npz", "step": 512}]}
    trainer._prune_pool_files()
    assert sorted(path.name for path in trainer.pool_dir.glob("snap_*.npz")) == [
        "snap_0000000256.npz", "snap_0000000384.npz", "snap_0000000512.npz"]
    stale = trainer.run_dir / ".checkpoint.json.x1y2.tmp"
    stale.write_text("{")
    keep = trainer.run_dir / "config.yaml"
    assert remove_stale_temp_files(trainer.run_dir) == [stale] and not stale.exists() and keep.exists()


@pytest.mark.slow
def test_a_resume_after_a_kill_shows_each_step_once_cleans_temp_files_and_bounds_the_pool(tmp_path):
    """A run "killed" after logging past its last checkpoint (the pointer rewound to an older checkpoint, as a
    kill between checkpoints leaves it), with a stale temp file of an interrupted write: the resume deletes the
    temp file, TensorBoard shows every step once (purge_step), and the pool folder holds only the snapshot files
    the pool or a kept checkpoint lists (bounded disk use)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config_module, selfplay = _train_modules()
    config = config_module.load_config(SMOKE, [f"run.out_dir={tmp_path}", "run.total_steps=512"])
    selfplay.Trainer.new_run(config, quiet=True).train()
    run_dir = config.run_dir
    pool_dir = run_dir / "pool"
    checkpoints = sorted(path.stem for path in (run_dir / "checkpoints").glob("step_*.json"))
    assert len(checkpoints) == 2  # checkpoint.keep
    # Bounded disk: only the pool's and the kept checkpoints' snapshot files remain (snapshot_every 128 made 4).
    listed = {entry["file"] for name in checkpoints
              for entry in json.loads((run_dir / "checkpoints" / f"{name}.json").read_text())["pool"]}
    assert {path.name for path in pool_dir.glob("snap_*.npz")} == listed and len(listed) <= 3
    # Rewind to the older checkpoint, as a kill after it would leave things, plus a torn temp file.
    older = json.loads((run_dir / "checkpoints" / f"{checkpoints[0]}.json").read_text())
    (run_dir / "checkpoint.json").write_text(json.dumps({"name": older["name"], "step": older["step"]}))
    stale = run_dir / ".checkpoint.json.abc123.tmp"
    stale.write_text("{")
    (pool_dir / ".snap_0000009999.npz.x.tmp").write_bytes(b"")
    selfplay.Trainer.resume_run(run_dir, quiet=True).train()
    assert not stale.exists() and not list(pool_dir.glob(".*.tmp"))
    accumulator = EventAccumulator(str(run_dir / "tb"), size_guidance={"scalars": 0})
    accumulator.Reload()
    for tag in ("losses/policy_loss", "eval/random/margin"):
        steps = [event.step for event in accumulator.Scalars(tag)]
        assert steps == sorted(set(steps)), f"{tag}: steps shown twice after the resume: {steps}"
        assert steps[-1] == 512
    listed = {entry["file"] for entry in json.loads((pool_dir / "pool.json").read_text())["snapshots"]}
    for name in (path.stem for path in (run_dir / "checkpoints").glob("step_*.json")):
        listed |= {entry["file"] for entry in json.loads((run_dir / "checkpoints" / f"{name}.json").read_text())["pool"]}
    assert {path.name for path in pool_dir.glob("snap_*.npz")} == listed


def test_a_resumed_run_deals_new_hands(tmp_path, monkeypatch):
    """MaskablePPO.load seeds the environments with the run's own seed again, which would deal the hands of step 0
    once more: a resumed run's environments are seeded from the resume's seed instead."""
    from sixtysix_env.gym_env import SixtySixGymEnv

    config_module, selfplay = _train_modules()
    seeded_resets = []
    real_reset = SixtySixGymEnv.reset

    def recording_reset(self, *, seed=None, options=None):
        if seed is not None:
            seeded_resets.append(seed)
        return real_reset(self, seed=seed, options=options)

    monkeypatch.setattr(SixtySixGymEnv, "reset", recording_reset)
    config = config_module.load_config(SMOKE, [f"run.out_dir={tmp_path}", "run.total_steps=128", "eval.every=0"])
    selfplay.Trainer.new_run(config, quiet=True).train()
    first_run = list(seeded_resets)
    seeded_resets.clear()
    selfplay.Trainer.resume_run(config.run_dir, ["run.total_steps=256"], quiet=True).train()
    assert first_run and seeded_resets
    assert not set(seeded_resets[:len(first_run)]) & set(first_run), (first_run, seeded_resets)


def test_a_run_killed_before_its_first_checkpoint_starts_its_tensorboard_afresh(tmp_path):
    """Killed before any checkpoint, a run starts over in its folder: scalars.csv, eval.jsonl and the TensorBoard
    events alike, so each step shows once."""
    import shutil

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config_module, selfplay = _train_modules()
    config = config_module.load_config(SMOKE, [f"run.out_dir={tmp_path}", "run.total_steps=128"])
    selfplay.Trainer.new_run(config, quiet=True).train()
    shutil.rmtree(config.run_dir / "checkpoints")  # as a kill before the first checkpoint leaves the folder
    (config.run_dir / "checkpoint.json").unlink()
    (config.run_dir / "final.zip").unlink()
    selfplay.Trainer.resume_run(config.run_dir, quiet=True).train()
    accumulator = EventAccumulator(str(config.run_dir / "tb"), size_guidance={"scalars": 0})
    accumulator.Reload()
    steps = [event.step for event in accumulator.Scalars("losses/policy_loss")]
    assert steps and steps == sorted(set(steps)), steps


def test_saved_checkpoints_without_the_pointer_are_refused_on_resume_not_deleted(tmp_path):
    """checkpoint.json commits a checkpoint: with it gone, a resume that started over would delete the saved
    checkpoints and the final model, so it is refused naming them and what to do."""
    config_module, selfplay = _train_modules()
    config = config_module.load_config(SMOKE, [f"run.out_dir={tmp_path}", "run.total_steps=128", "eval.every=0"])
    selfplay.Trainer.new_run(config, quiet=True).train()
    (config.run_dir / "checkpoint.json").unlink()
    saved = sorted(path.name for path in (config.run_dir / "checkpoints").iterdir())
    with pytest.raises(selfplay.RunDirError, match=r"holds final\.zip, checkpoints/step_0000000128\.json but no "
                                                   r"checkpoint\.json.*move them away"):
        selfplay.Trainer.resume_run(config.run_dir, quiet=True).train()
    assert (config.run_dir / "final.zip").is_file()
    assert sorted(path.name for path in (config.run_dir / "checkpoints").iterdir()) == saved


def test_a_checkpoint_refuses_a_config_edited_since(tmp_path):
    """A checkpoint names the config it was trained with: a config.yaml edited since (here the network's widths,
    which the checkpoint's weights do not have) is refused by name, while the step count may still grow."""
    config_module, selfplay = _train_modules()
    config = config_module.load_config(SMOKE, [f"run.out_dir={tmp_path}", "run.total_steps=128", "eval.every=0"])
    selfplay.Trainer.new_run(config, quiet=True).train()
    path = config.run_dir / "config.yaml"
    original = path.read_text()
    edited = config_module.load_config(path, ["net.hidden=[64, 64]"])
    path.write_text(edited.to_yaml())
    with pytest.raises(selfplay.RunDirError, match="config.yaml differs from the config this checkpoint was trained"):
        selfplay.Trainer.resume_run(config.run_dir, quiet=True).train()
    path.write_text(original)
    selfplay.Trainer.resume_run(config.run_dir, ["run.total_steps=256"], quiet=True).train()


def test_resume_continues_from_the_checkpoint_without_duplicate_rows(smoke_run):
    run_dir, _first = smoke_run
    evaluations = [json.loads(line) for line in (run_dir / "eval.jsonl").read_text().splitlines()]
    steps = [record["step"] for record in evaluations if record["opponent"] == "random"]
    assert steps == sorted(set(steps)) and steps[0] == 0 and steps[-1] == 384
    sps_steps = [step for step, tag, _ in _scalar_rows(run_dir) if tag == "charts/SPS"]
    assert max(sps_steps) == 384


def test_a_run_directory_is_never_overwritten_and_resume_keeps_the_config(smoke_run):
    config_module, selfplay = _train_modules()
    load_config, Trainer, RunDirError = config_module.load_config, selfplay.Trainer, selfplay.RunDirError
    run_dir, _first = smoke_run
    config = load_config(run_dir / "config.yaml")
    with pytest.raises(RunDirError, match="already holds a run"):
        Trainer.new_run(config)
    with pytest.raises(ValueError, match="cannot change config key 'ppo.learning_rate' when resuming"):
        Trainer.resume_run(run_dir, ["ppo.learning_rate=0.1"])
    with pytest.raises(RunDirError, match="not a run directory"):
        Trainer.resume_run(run_dir / "pool")


def _damage_pointer(run_dir: Path) -> str:
    (run_dir / "checkpoint.json").write_text('{"name": "step_0000000384"')
    return "checkpoint pointer"


def _pointer_to_another_step(run_dir: Path) -> str:
    (run_dir / "checkpoint.json").write_text('{"name": "step_0000000256", "step": 384}')
    return "names 'step_0000000256' for step 384"


def _state_without_pool(run_dir: Path) -> str:
    state_path = run_dir / "checkpoints" / "step_0000000384.json"
    state = json.loads(state_path.read_text())
    del state["pool"]
    state_path.write_text(json.dumps(state))
    return "checkpoint state is missing key 'pool'"


def _state_with_a_foreign_pool_file(run_dir: Path) -> str:
    state_path = run_dir / "checkpoints" / "step_0000000384.json"
    state = json.loads(state_path.read_text())
    state["pool"].append({"file": "../../elsewhere.npz", "step": 1})
    state_path.write_text(json.dumps(state))
    return "'../../elsewhere.npz' is not a snapshot file name"


def _state_missing(run_dir: Path) -> str:
    (run_dir / "checkpoints" / "step_0000000384.json").unlink()
    return "No such file"


@pytest.mark.parametrize("damage", [_damage_pointer, _pointer_to_another_step, _state_without_pool,
                                    _state_with_a_foreign_pool_file, _state_missing])
def test_a_damaged_checkpoint_is_refused_by_name_before_training(smoke_run, tmp_path, damage):
    """Resume reads checkpoint.json and the state it names strictly: a damaged or foreign file is a RunDirError
    naming the run and the problem (the CLI's exit 2), never a KeyError or JSON traceback, and nothing is trained."""
    import shutil

    _config_module, selfplay = _train_modules()
    run_dir, _first = smoke_run
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    (copy / "config.yaml").write_text((run_dir / "config.yaml").read_text().replace(str(run_dir), str(copy)))
    fragment = damage(copy)
    before = (copy / "scalars.csv").read_bytes()
    with pytest.raises(selfplay.RunDirError, match=f"its last checkpoint cannot be resumed .*{re.escape(fragment)}"):
        selfplay.Trainer.resume_run(copy, quiet=True).train()
    assert (copy / "scalars.csv").read_bytes() == before


def test_init_model_starts_from_the_given_weights_and_refuses_another_net(smoke_run, tmp_path):
    config_module, selfplay = _train_modules()
    run_dir, _first = smoke_run
    final = run_dir / "final.zip"
    config = config_module.load_config(SMOKE, [f"run.out_dir={tmp_path}", f"run.init_model={final}"])
    trainer = selfplay.Trainer.new_run(config, quiet=True)
    vec_env = selfplay.build_vec_env(config, tmp_path / "pool", seed=0)
    try:
        model = trainer._new_model(vec_env)
        observations = np.random.default_rng(2).random((3, OBSERVATION_SIZE)).astype(np.float32)
        started = ActorNetwork.from_policy(model.policy, "tanh").logits(observations)
        np.testing.assert_allclose(started, PpoAgent(path=str(final)).network.logits(observations), atol=1e-5)
        wider = config_module.load_config(SMOKE, [f"run.out_dir={tmp_path}", "run.name=wider", "net.hidden=[48, 48]",
                                                  f"run.init_model={final}"])
        with pytest.raises(ValueError, match="config key 'run.init_model'.* has net \\[32, 32\\]"):
            selfplay.Trainer(wider, tmp_path / "wider")._new_model(selfplay.build_vec_env(wider, tmp_path / "p2", 0))
    finally:
        vec_env.close()


def test_final_model_is_a_ppo_agent_with_sb3_identical_logits(smoke_run):
    import torch
    from sb3_contrib import MaskablePPO

    run_dir, _first = smoke_run
    final = run_dir / "final.zip"
    metadata = read_model_metadata(final)
    assert metadata["observation_size"] == OBSERVATION_SIZE and metadata["trained_steps"] == 384
    agent = PpoAgent(path=str(final), seed=0)
    model = MaskablePPO.load(final, device="cpu")
    observations = np.random.default_rng(0).random((8, OBSERVATION_SIZE)).astype(np.float32)
    with torch.no_grad():
        reference = model.policy.get_distribution(torch.as_tensor(observations)).distribution.logits.numpy()
    logits = agent.network.logits(observations)
    log_softmax = logits - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1, keepdims=True)) - logits.max(1, keepdims=True)
    np.testing.assert_allclose(log_softmax, reference, atol=1e-4)


def test_pool_opponent_draws_baselines_then_snapshots(smoke_run, tmp_path):
    _, selfplay = _train_modules()
    PoolOpponent, write_pool_manifest = selfplay.PoolOpponent, selfplay.write_pool_manifest
    run_dir, _first = smoke_run
    rules = Rules.preset("standard")
    snapshot = sorted((run_dir / "pool").glob("snap_*.npz"))[-1]
    (tmp_path / snapshot.name).write_bytes(snapshot.read_bytes())
    pool = PoolOpponent(tmp_path, {"greedy": 1.0}, snapshot_weight=1.0, latest_snapshot_share=0.5,
                        snapshot_deterministic=False, rules=rules, seed=3)
    labels = set()
    for _ in range(20):
        pool.start_deal(1, rules)
        labels.add(pool.current_label)
    assert labels == {"greedy"}  # no manifest yet: baselines only
    write_pool_manifest(tmp_path, [{"file": snapshot.name, "step": 1}])
    pool.refresh()
    members, weights = pool.weights()
    assert members == ["greedy", snapshot.name] and weights == [1.0, 1.0]
    labels = set()
    for deal in range(60):
        pool.start_deal(1, rules)
        labels.add(pool.current_label)
        game = Game.deal(rules, seed=deal)
        play_deal(game, [make_agent("random", seed=deal), pool])  # the snapshot plays legal moves in seat 1
    assert labels == {"greedy", "snapshot"}


# ------------------------------------------------------------------------------------------ kill -9 and resume
@pytest.mark.slow
def test_a_run_killed_with_sigkill_resumes_from_its_last_checkpoint(tmp_path):
    Trainer = _train_modules()[1].Trainer
    command = [sys.executable, "-m", "train.cli", "--quiet", "--config", str(SMOKE), "--set", f"run.out_dir={tmp_path}",
               "--set", "run.total_steps=100000"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    pointer = tmp_path / "smoke" / "checkpoint.json"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (pointer.exists() and json.loads(pointer.read_text())["step"] >= 384):
            assert process.poll() is None, process.stderr.read().decode()
            time.sleep(0.2)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    killed_at = json.loads(pointer.read_text())["step"]
    assert killed_at >= 384
    trainer = Trainer.resume_run(tmp_path / "smoke", [f"run.total_steps={killed_at + 256}"], quiet=True)
    assert trainer.latest_checkpoint()["step"] == killed_at
    trainer.train()
    state = trainer.latest_checkpoint()
    assert state["step"] == killed_at + 256 and state["resumes"] == 1
    assert read_model_metadata(tmp_path / "smoke" / "final.zip")["trained_steps"] == killed_at + 256


# ------------------------------------------------------------------------------------------ the ppo agent
def test_infoset_encoding_equals_the_environment_observation():
    rng = random.Random(5)
    for preset in PRESET_NAMES:
        rules = Rules.preset(preset)
        for seed in range(15):
            game = Game.deal(rules, seed=seed)
            while not game.is_over:
                for player in (0, 1):
                    np.testing.assert_array_equal(encode_infoset(InformationSet(game, player)),
                                                  encode_observation(game, player))
                game.apply(rng.choice(game.legal_actions()))


def test_ppo_is_registered_and_loads_the_shipped_model():
    assert "ppo" in registered_names(), "agents/registry.py must register 'ppo' (agents.ppo.PpoAgent)"
    agent = make_agent("ppo", seed=0)
    assert agent.path == DEFAULT_MODEL
    assert make_agent(f"ppo:path={DEFAULT_MODEL},deterministic=false", seed=0).deterministic is False
    assert agent.metadata["rules_preset"] == "standard"


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_shipped_model_plays_legal_moves_in_its_preset_and_refuses_others(preset):
    rules = Rules.preset(preset)
    agent = PpoAgent(seed=1)
    supported = Rules.from_dict(agent.metadata["rules"]) == rules
    if not supported:
        with pytest.raises(ValueError, match=r"was trained for rules 'standard' and cannot play"):
            agent.start_deal(0, rules)
        return
    opponents = [make_agent("random", seed=2), make_agent("greedy", seed=3)]
    for deal in range(40):
        seat = deal % 2
        seats = [agent, opponents[deal % 4 // 2]] if seat == 0 else [opponents[deal % 4 // 2], agent]
        outcome = play_deal(Game.deal(rules, seed=1000 + deal), seats)  # raises IllegalActionError on a bad move
        assert len(outcome.decision_times[seat]) > 0


def test_the_solver_hybrid_hands_phase2_to_the_heuristic_and_plays_legal_moves():
    with pytest.raises(ValueError, match="phase2 must be one of policy, solver"):
        PpoAgent(phase2="oracle")
    from agents.rule_based import HeuristicAgent

    hybrid = PpoAgent(seed=4, phase2="solver")
    rules = Rules.preset("standard")
    for deal in range(10):
        outcome = play_deal(Game.deal(rules, seed=2000 + deal), [hybrid, make_agent("greedy", seed=deal)])
        assert outcome.decisions[0] > 0
    # In phase 2 (talon exhausted) its move is the heuristic's; in phase 1 it is the policy's.
    rng = random.Random(0)
    compared = 0
    for deal in range(30):
        game = Game.deal(rules, seed=3000 + deal)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            if infoset.talon_size == 0 and infoset.closed_by is None and len(infoset.legal_actions) > 1:
                hybrid.seed(9)
                reference = HeuristicAgent(seed=9)
                assert hybrid.act(infoset) == reference.act(infoset)
                compared += 1
            elif infoset.talon_size > 0 and infoset.closed_by is None:
                assert hybrid.act(infoset) == PpoAgent(seed=4, phase2="policy").act(infoset)
            game.apply(rng.choice(game.legal_actions()))
    assert compared > 20


def test_the_shipped_model_plays_as_trained_the_endgame_from_the_last_talon_trick():
    from agents.rule_based import on_last_talon_trick
    from agents.rule_based import HeuristicAgent

    shipped = PpoAgent(seed=4)
    assert shipped.phase2 == shipped.metadata["phase2"] == "endgame"
    rules = Rules.preset("standard")
    rng = random.Random(1)
    last_trick = 0
    for deal in range(40):
        game = Game.deal(rules, seed=5000 + deal)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            if len(infoset.legal_actions) > 1 and on_last_talon_trick(infoset):
                shipped.seed(9)  # R7: the talon's last trick is searched exactly, as heuristic does
                assert shipped.act(infoset) == HeuristicAgent(seed=9).act(infoset)
                last_trick += 1
            game.apply(rng.choice(game.legal_actions()))
    assert last_trick > 20


def _rewritten_model(tmp_path: Path, change) -> Path:
    source = zipfile.ZipFile(DEFAULT_MODEL)
    target_path = tmp_path / "changed.zip"
    with zipfile.ZipFile(target_path, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == METADATA_ENTRY:
                metadata = json.loads(data)
                change(metadata)
                data = json.dumps(metadata).encode()
            target.writestr(item.filename, data)
    return target_path


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("observation_size", OBSERVATION_SIZE + 1, "trained on observations of size"),
        ("observation_layout", "0123456789abcdef", "trained on observation layout"),
        ("num_actions", 36, "trained with 36 actions"),
        ("format", "something-else", "is not a sixtysix PPO model"),
    ],
)
def test_a_model_for_another_layout_is_refused(tmp_path, key, value, message):
    path = _rewritten_model(tmp_path, lambda metadata: metadata.__setitem__(key, value))
    with pytest.raises(ValueError, match=message):
        PpoAgent(path=str(path))


def test_a_model_without_the_numpy_actor_is_read_from_its_torch_weights(tmp_path):
    pytest.importorskip("torch", reason="reading policy.pth needs torch (the 'train' extra)")
    without_actor = tmp_path / "torch_only.zip"
    with zipfile.ZipFile(DEFAULT_MODEL) as source, zipfile.ZipFile(without_actor, "w") as target:
        for item in source.infolist():
            if item.filename != ACTOR_ENTRY:
                target.writestr(item.filename, source.read(item.filename))
    observations = np.random.default_rng(1).random((4, OBSERVATION_SIZE)).astype(np.float32)
    np.testing.assert_allclose(PpoAgent(path=str(without_actor)).network.logits(observations),
                               PpoAgent().network.logits(observations), rtol=1e-5, atol=1e-5)


def test_a_plain_maskable_ppo_zip_plays_and_one_of_other_spaces_is_refused_by_name(tmp_path):
    """Issue 12: ``ppo:path=`` takes any MaskablePPO model whose spaces match the game, without our metadata."""
    import gymnasium
    from sb3_contrib import MaskablePPO

    bare = tmp_path / "bare.zip"
    with zipfile.ZipFile(DEFAULT_MODEL) as source, zipfile.ZipFile(bare, "w") as target:
        for item in source.infolist():
            if item.filename not in (METADATA_ENTRY, ACTOR_ENTRY):
                target.writestr(item.filename, source.read(item.filename))
    plain = PpoAgent(path=str(bare))
    assert plain.metadata["plain_maskable_ppo"] and plain.rules == Rules.preset("standard")
    observations = np.random.default_rng(2).random((4, OBSERVATION_SIZE)).astype(np.float32)
    np.testing.assert_allclose(plain.network.logits(observations), PpoAgent().network.logits(observations),
                               rtol=1e-5, atol=1e-5)
    assert PpoAgent(path=str(bare), rules="scharf").rules == Rules.preset("scharf")
    with pytest.raises(ValueError, match="rules must be a preset name"):
        PpoAgent(path=str(bare), rules="nonsense")
    with pytest.raises(ValueError, match="trained for rules 'standard', not 'scharf'"):
        PpoAgent(rules="scharf")  # our own models carry their rules

    class Other(gymnasium.Env):
        observation_space = gymnasium.spaces.Box(-1.0, 1.0, shape=(5,), dtype=np.float32)
        action_space = gymnasium.spaces.Discrete(3)

        def reset(self, seed=None, options=None):
            return np.zeros(5, dtype=np.float32), {}

        def step(self, action):
            return np.zeros(5, dtype=np.float32), 0.0, True, False, {}

        def action_masks(self):
            return np.ones(3, dtype=bool)

    other = tmp_path / "other.zip"
    MaskablePPO("MlpPolicy", Other(), n_steps=8, batch_size=8).save(other)
    with pytest.raises(ValueError, match=r"observation space Box.*\(5,\).*does not match this game's Box of shape"):
        PpoAgent(path=str(other))
    junk = tmp_path / "junk.zip"
    with zipfile.ZipFile(junk, "w") as target:
        target.writestr("data", "not json")
    with pytest.raises(ValueError, match="neither a sixtysix model nor a loadable MaskablePPO zip"):
        PpoAgent(path=str(junk))


def test_a_model_that_is_not_a_zip_or_missing_is_refused(tmp_path):
    text = tmp_path / "model.zip"
    text.write_text("not a model")
    with pytest.raises(ValueError, match="is not a zip file"):
        PpoAgent(path=str(text))
    with pytest.raises(FileNotFoundError, match="PPO model not found"):
        PpoAgent(path=str(tmp_path / "missing.zip"))


def _model_with_actor(tmp_path, change, name="changed.zip"):
    """The shipped model with its NumPy actor rewritten by ``change(arrays)`` (and no torch weights to fall back
    on, so the actor entry is what is loaded)."""
    target_path = tmp_path / name
    with zipfile.ZipFile(DEFAULT_MODEL) as source, zipfile.ZipFile(target_path, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == ACTOR_ENTRY:
                with np.load(io.BytesIO(data)) as npz:
                    arrays = {key: npz[key] for key in npz.files}
                change(arrays)
                buffer = io.BytesIO()
                np.savez(buffer, **arrays)
                data = buffer.getvalue()
            if item.filename != "policy.pth":
                target.writestr(item.filename, data)
    return target_path


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda arrays: arrays.__setitem__("w0", arrays["w0"][:, :-1]), "network maps 280 inputs"),
        (lambda arrays: arrays.__setitem__("w1", arrays["w1"][:-1]), "hidden layer 1: weights of shape"),
        (lambda arrays: arrays.__setitem__("w2", arrays["w2"][:, :-1]), "the action layer: takes 255 inputs"),
        (lambda arrays: arrays.__setitem__("b0", np.full_like(arrays["b0"], np.nan)), "hidden layer 0: weights hold NaN"),
        (lambda arrays: arrays["w2"].__setitem__((0, 0), np.inf), "the action layer: weights hold NaN or infinite"),
    ],
)
def test_a_model_with_bad_weights_is_refused_by_name_at_load_time(tmp_path, change, message):
    """Weights off by one in shape, or NaN/inf weights: refused when the model is loaded, naming the layer."""
    path = _model_with_actor(tmp_path, change)
    with pytest.raises(ValueError, match=f"PPO model .*changed.zip.*{message}"):
        PpoAgent(path=str(path))


def test_a_model_with_a_truncated_weights_entry_is_refused(tmp_path):
    """A zip whose weights entry is cut short (its CRC no longer matches) is refused, not a BadZipFile traceback."""
    path = tmp_path / "truncated.zip"
    with zipfile.ZipFile(DEFAULT_MODEL) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as target:
        for item in source.infolist():
            if item.filename != "policy.pth":
                target.writestr(item.filename, source.read(item.filename))
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(ACTOR_ENTRY)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start + info.file_size // 2: start + info.file_size // 2 + 64] = bytes(64)  # damage the stored bytes
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=f"truncated.zip.*{ACTOR_ENTRY} is truncated or corrupt"):
        PpoAgent(path=str(path))


def test_model_metadata_types_are_exact(tmp_path):
    path = _rewritten_model(tmp_path, lambda metadata: metadata.__setitem__("observation_size", float(OBSERVATION_SIZE)))
    with pytest.raises(ValueError, match="observation_size must be an integer"):
        PpoAgent(path=str(path))


def test_cli_refuses_a_bad_model_with_exit_2_and_no_traceback(tmp_path, capsys):
    import sixtysix_cli

    path = _model_with_actor(tmp_path, lambda arrays: arrays.__setitem__("b0", np.full_like(arrays["b0"], np.nan)))
    code = sixtysix_cli.main(["match", f"ppo:path={path}", "random", "--deals", "1", "--no-progress"])
    error = capsys.readouterr().err
    assert code == 2 and "weights hold NaN" in error and "Traceback" not in error


def test_policy_agent_samples_only_legal_actions():
    network = ActorNetwork([(np.zeros((4, OBSERVATION_SIZE)), np.zeros(4)), (np.zeros((37, 4)), np.arange(37.0) * 0.01)],
                           "relu")
    rules = Rules.preset("standard")
    greedy_agent = PolicyAgent(network, rules, deterministic=True, seed=0)
    sampling_agent = PolicyAgent(network, rules, deterministic=False, seed=0)
    game = Game.deal(rules, seed=4)
    infoset = InformationSet(game, game.current_player)
    assert greedy_agent.act(infoset) == max(infoset.legal_actions)  # logits rise with the action id
    chosen = {sampling_agent.act(infoset) for _ in range(200)}
    assert chosen <= set(infoset.legal_actions) and len(chosen) > 1


# ------------------------------------------------------------------------------------------ imitation and phase 2
@pytest.mark.parametrize(
    "overrides, message",
    [
        (["env.phase2=oracle"], "config key 'env.phase2' must be one of policy, solver"),
        (["imitation.deals=-1"], "config key 'imitation.deals' must be zero or more"),
        (["imitation.teacher=nosuchagent"], "config key 'imitation.teacher': unknown agent 'nosuchagent'"),
        (["imitation.validation_share=2"], "config key 'imitation.validation_share' must lie in [0, 1]"),
        (["imitation.validation_share=1"], "config key 'imitation.validation_share' must lie in [0, 1)"),
        (["imitation.epochs=0"], "config key 'imitation.epochs' must be positive"),
    ],
)
def test_bad_imitation_and_phase2_keys_are_refused(overrides, message):
    with pytest.raises(ValueError) as error:
        _train_modules()[0].load_config(SMOKE, overrides)
    assert message in str(error.value)


def test_teacher_data_records_only_choices_and_the_deciders_return(tmp_path):
    from train.imitation import TeacherData, record_teacher_deals

    rules = Rules.preset("standard")
    everything = record_teacher_deals(rules, "greedy", 5, 0, 12, phase2="policy")
    phase1 = record_teacher_deals(rules, "greedy", 5, 0, 12, phase2="solver")
    early = record_teacher_deals(rules, "greedy", 5, 0, 12, phase2="endgame")
    assert 0 < len(early) < len(phase1) < len(everything)
    assert everything.observations.shape == (len(everything), OBSERVATION_SIZE)
    # Every recorded action is legal and was a real choice; returns are game points (R16).
    assert everything.masks[np.arange(len(everything)), everything.actions].all()
    assert (everything.masks.sum(axis=1) > 1).all()
    assert set(np.unique(everything.returns)) <= {-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0}
    # The same seeds give the same decisions; the file round-trips; a wrong file is refused by name.
    again = record_teacher_deals(rules, "greedy", 5, 0, 12, phase2="policy")
    assert np.array_equal(again.actions, everything.actions)
    path = tmp_path / "data.npz"
    everything.save(path)
    loaded = TeacherData.load(path)
    assert np.array_equal(loaded.observations, everything.observations)
    assert np.array_equal(loaded.deals, everything.deals)
    # Each decision names its deal (0..11, in order), so a validation split can hold out whole deals.
    assert set(np.unique(everything.deals)) == set(range(12)) and (np.diff(everything.deals) >= 0).all()
    np.savez(tmp_path / "bad.npz", observations=np.zeros((2, 5), np.float32), masks=np.zeros((2, 37), bool),
             actions=np.zeros(2, np.int64), returns=np.zeros(2, np.float32), deals=np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="bad.npz.*observations of shape"):
        TeacherData.load(tmp_path / "bad.npz")
    np.savez(tmp_path / "partial.npz", observations=np.zeros((2, OBSERVATION_SIZE), np.float32))
    with pytest.raises(ValueError, match="lacks masks, actions, returns, deals: .*delete it to record it again"):
        TeacherData.load(tmp_path / "partial.npz")


def test_the_recorders_validate_on_whole_deals(monkeypatch):
    """A held-out decision whose deal also gave training decisions would make the validation figures optimistic:
    imitation and rollout improvement split by deal (train.recorded.held_out_split), as distill does."""
    pytest.importorskip("torch")
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from train import imitation, rollout_improvement
    from train.recorded import held_out_split

    deals = np.repeat(np.arange(40), 7)
    training, validation = held_out_split(deals, 0.25, np.random.default_rng(0))
    assert len(validation) == 10 * 7 and not set(deals[training]) & set(deals[validation])
    assert sorted(np.concatenate([training, validation]).tolist()) == list(range(len(deals)))
    # Few deals: a share that rounds to all of them or to none still keeps one deal on each side.
    for deal_count, share in ((2, 0.75), (3, 0.9), (9, 0.05)):
        few = np.repeat(np.arange(deal_count), 10)
        training, validation = held_out_split(few, share, np.random.default_rng(0))
        assert len(set(few[training])) >= 1 and len(set(few[validation])) >= 1, (deal_count, share)
    assert len(held_out_split(np.repeat(np.arange(9), 10), 0.0, np.random.default_rng(0))[1]) == 0
    # A share outside [0, 1) is refused by name: a negative one failed inside numpy, 1.5 held out all deals but one.
    for share in (-0.1, 1.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match=r"validation share must lie in \[0, 1\), got"):
            held_out_split(np.repeat(np.arange(9), 10), share, np.random.default_rng(0))

    rules = Rules.preset("standard")
    policy = MaskableActorCriticPolicy(spaces.Box(-1.0, 2.0, (OBSERVATION_SIZE,), np.float32), spaces.Discrete(37),
                                       lambda _progress: 1e-3, net_arch=dict(pi=[16], vf=[16]))
    splits = []

    def spy(deal_ids, share, generator):
        training, validation = held_out_split(deal_ids, share, generator)
        splits.append((deal_ids, training, validation))
        return training, validation

    for module, data, fit in (
        (imitation, imitation.record_teacher_deals(rules, "greedy", 5, 0, 12),
         lambda data: imitation.behaviour_clone(policy, data, 1, 64, 1e-3, 0.5, 0.25, 0, progress=False)),
        (rollout_improvement, rollout_improvement.record_rollout_values(rules, "greedy", "greedy", 5, 0, 8),
         lambda data: rollout_improvement.improve_policy(policy, data, 1.0, 1, 64, 1e-3, 0.25, 0, progress=False)),
    ):
        monkeypatch.setattr(module, "held_out_split", spy)
        fit(data)
        deal_ids, training, validation = splits.pop()
        assert deal_ids is data.deals and len(validation) > 0
        assert not set(data.deals[training]) & set(data.deals[validation])


def test_the_exhausted_hybrid_hands_over_only_the_phase2_after_the_talons_exhaustion():
    """phase2=exhausted (R8 after the talon ran out, both hands known): the heuristic's exact search plays those
    decisions; after a closing (R10) and in phase 1 the network's own choice stands."""
    from agents.rule_based import HeuristicAgent

    hybrid = make_agent("suit:path=models/suit_two_long_standard.npz,phase2=exhausted", seed=4)
    network = make_agent("suit:path=models/suit_two_long_standard.npz", seed=4)
    rules = Rules.preset("standard")
    rng = random.Random(1)
    handed, kept_closed, disagreed = 0, 0, 0
    for deal in range(40):
        game = Game.deal(rules, seed=5000 + deal)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            if len(infoset.legal_actions) > 1:
                if infoset.talon_size == 0 and infoset.closed_by is None:
                    hybrid.seed(9)
                    assert hybrid.act(infoset) == HeuristicAgent(seed=9).act(infoset)
                    disagreed += network.act(infoset) != HeuristicAgent(seed=9).act(infoset)
                    handed += 1
                else:
                    assert hybrid.act(infoset) == network.act(infoset)
                    kept_closed += infoset.closed_by is not None
            # random play closes now and then, so both kinds of phase 2 occur
            game.apply(rng.choice(game.legal_actions()))
    assert handed > 20 and kept_closed > 5 and disagreed > 0


def test_the_exact_search_not_the_teacher_plays_the_delegated_decisions(monkeypatch):
    # A slow search teacher (pimc) is asked only for the decisions the student's network plays; the endgame
    # (from the talon's last trick, R7, and all of R8) is played by the heuristic's exact search, as PolicyAgent does.
    import train.imitation as imitation
    from agents.ppo import delegated
    from agents.registry import make_agent

    asked = []

    class SpyTeacher(make_agent("greedy").__class__):
        def act(self, infoset):
            asked.append((delegated(infoset, "endgame"), delegated(infoset, "solver")))
            return super().act(infoset)

    real_make_agent = imitation.make_agent
    monkeypatch.setattr(imitation, "make_agent",
                        lambda spec, seed=None: SpyTeacher(seed) if spec == "spy" else real_make_agent(spec, seed=seed))
    rules = Rules.preset("standard")
    data = imitation.record_teacher_deals(rules, "spy", 5, 0, 12, phase2="endgame")
    assert asked and not any(endgame for endgame, _ in asked)
    assert len(data) <= len(asked)
    asked.clear()
    imitation.record_teacher_deals(rules, "spy", 5, 0, 12, phase2="policy")
    assert any(endgame for endgame, _ in asked) and any(solver for _, solver in asked)


def test_behaviour_cloning_fits_the_teachers_choices():
    torch = pytest.importorskip("torch")
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from gymnasium import spaces

    from train.imitation import behaviour_clone, record_teacher_deals

    rules = Rules.preset("standard")
    data = record_teacher_deals(rules, "greedy", 11, 0, 60, phase2="policy")
    torch.manual_seed(0)
    policy = MaskableActorCriticPolicy(
        spaces.Box(-1.0, 2.0, (OBSERVATION_SIZE,), np.float32), spaces.Discrete(37), lambda _progress: 1e-3,
        net_arch=dict(pi=[64, 64], vf=[64, 64]),
    )
    before = behaviour_clone(policy, data, epochs=1, batch_size=256, learning_rate=0.0, value_coef=0.5,
                             validation_share=0.0, seed=0, progress=False)
    after = behaviour_clone(policy, data, epochs=40, batch_size=256, learning_rate=3e-3, value_coef=0.5,
                            validation_share=0.0, seed=0, progress=False)
    # greedy is deterministic, so its choices can be fitted almost exactly.
    assert before["accuracy"] < 0.6 < 0.9 < after["accuracy"]
    assert after["policy_loss"] < before["policy_loss"]


@pytest.mark.parametrize("opponent", ["greedy", "closer"])
@pytest.mark.parametrize("mode", ["solver", "endgame"])
def test_the_endgame_wrapper_hides_every_delegated_decision_and_keeps_the_deal_return(mode, opponent):
    _config_module, selfplay = _train_modules()
    from sixtysix_env.gym_env import SixtySixGymEnv

    player = make_agent("greedy", seed=1) if opponent == "greedy" else ClosesAtOnce()
    env = selfplay.SolverPlaysEndgame(SixtySixGymEnv(rules="standard", opponent=player), mode, seed=3)
    base = env.unwrapped
    rng = random.Random(0)
    for episode in range(40):
        env.reset(seed=episode)
        total = 0.0
        done = False
        while not done:
            infoset = base.information_set()
            assert infoset.closed_by is None and infoset.talon_size > 0  # the learner only sees phase 1 (R7)
            if mode == "endgame":
                assert infoset.face_down_count >= 2  # nor the talon's last trick
            legal = np.flatnonzero(env.action_masks())
            _obs, reward, done, _truncated, _info = env.step(int(rng.choice(list(legal))))
            total += reward
        assert total == base.game.result.returns()[infoset.player]


@pytest.mark.parametrize("options", [{"dealer": 0, "learner_seat": 0}, "deck"])
def test_the_endgame_wrapper_refuses_deals_that_never_reach_the_learner(options):
    """R10: the opponent as forehand closes at his first lead, so with these options every learner decision is one
    the search takes and no deal reaches the learner; reset says so instead of dealing forever."""
    _config_module, selfplay = _train_modules()
    from sixtysix_env.gym_env import SixtySixGymEnv

    env = selfplay.SolverPlaysEndgame(SixtySixGymEnv(rules="standard", opponent=ClosesAtOnce()), "solver", seed=3)
    if options == "deck":  # the deck of a deal that the search plays to its end with the learner as dealer
        options = {"deck": Game.deal(Rules.preset("standard"), seed=5).deck, "dealer": 0, "learner_seat": 0}
    with pytest.raises(ValueError, match=r"the search \('solver'\) played \d+ deal\(s\) in a row to the end before"):
        env.reset(seed=0, options=options)


def test_smoke_run_with_imitation_and_the_solver_in_phase2(tmp_path):
    config_module, selfplay = _train_modules()
    config = config_module.load_config(SMOKE, [f"run.out_dir={tmp_path}", "imitation.deals=20", "imitation.epochs=2",
                                               "imitation.teacher=greedy", "env.phase2=solver"])
    trainer = selfplay.Trainer.new_run(config, quiet=True)
    final = trainer.train()
    summary = json.loads((config.run_dir / "imitation" / "summary.json").read_text())
    assert summary["teacher"] == "greedy" and summary["decisions"] > 0 and len(summary["epochs"]) == 2
    assert (config.run_dir / "imitation" / "data.npz").exists()
    for model in (final, config.run_dir / "imitation" / "model.zip"):
        agent = make_agent(f"ppo:path={model}", seed=0)
        assert agent.phase2 == "solver"  # from the model's metadata
        assert make_agent(f"ppo:path={model},phase2=policy", seed=0).phase2 == "policy"
    rows = _scalar_rows(config.run_dir)
    assert any(tag == "imitation/accuracy" for _step, tag, _value in rows)


def test_record_and_finetune_commands_distil_a_teacher_into_a_model(tmp_path):
    _train_modules()
    from train.imitation import TeacherData, main as imitation_main

    data = tmp_path / "greedy.npz"
    assert imitation_main(["record", "--teacher", "greedy", "--deals", "12", "--seed", "3", "--out", str(data)]) == 0
    recorded = TeacherData.load(data)
    assert len(recorded) > 0
    config_module, selfplay = _train_modules()
    config = config_module.load_config(SMOKE, [f"run.out_dir={tmp_path}", "env.phase2=endgame"])
    selfplay.Trainer.new_run(config, quiet=True).train()
    out = tmp_path / "tuned.zip"
    assert imitation_main(["finetune", "--model", str(config.run_dir / "final.zip"), "--data", str(data),
                           "--out", str(out), "--epochs", "2", "--validation-share", "0"]) == 0
    agent = make_agent(f"ppo:path={out}", seed=0)
    assert agent.phase2 == "endgame" and agent.metadata["finetune_decisions"] == len(recorded)
    with pytest.raises(SystemExit):
        imitation_main(["record", "--teacher", "greedy", "--deals", "0", "--out", str(data)])


def test_scalars_csv_keeps_one_header_drops_redone_rows_and_closes_on_an_error(tmp_path):
    """train.runlog.ScalarsCsv, the one writer of a run's scalars.csv (distill, suit_network, selfplay, vector_ppo):
    a header once, rows appended, the rows after ``keep_through`` dropped when a run resumes, and the file closed when
    the block that writes it raises."""
    from train.runlog import ScalarsCsv

    path = tmp_path / "scalars.csv"
    with ScalarsCsv(path) as table:
        for step in (1, 2, 3):
            table.add(step, "charts/x", float(step))
    with pytest.raises(RuntimeError, match="killed"):
        with ScalarsCsv(path, keep_through=2) as table:
            table.add(3, "charts/y", 9.0)
            raise RuntimeError("killed")
    assert table._handle.closed
    assert path.read_text().splitlines() == ["step,tag,value", "1,charts/x,1.0", "2,charts/x,2.0", "3,charts/y,9.0"]
    # A kill before the header reached the disk leaves an empty file, a kill within it a torn header: either way
    # the resumed run writes the header before its rows.
    for left_behind in ("", "ste"):
        path.write_text(left_behind)
        with ScalarsCsv(path, keep_through=0) as table:
            table.add(1, "charts/x", 1.0)
        assert path.read_text().splitlines() == ["step,tag,value", "1,charts/x,1.0"]


def test_a_torn_last_log_row_is_dropped_on_resume_and_a_damaged_one_is_named(tmp_path):
    """A kill during an append can leave a log's last row without its newline: truncate_log (resume) drops it,
    in scalars.csv and in eval.jsonl alike, where it kept a half row or raised a JSON traceback. A damaged row
    before the end is refused, naming the file and line."""
    from train.runlog import truncate_log

    scalars = tmp_path / "scalars.csv"
    scalars.write_text("step,tag,value\n1,charts/x,1.0\n2,charts/x,2.0\n2,charts/SP")
    truncate_log(scalars, 2)
    assert scalars.read_text().splitlines() == ["step,tag,value", "1,charts/x,1.0", "2,charts/x,2.0"]
    log = tmp_path / "eval.jsonl"
    log.write_text('{"step": 1, "margin": 0.1}\n{"step": 5, "margin": 0.2}\n{"step": 2, "mar')
    truncate_log(log, 3)
    assert log.read_text() == '{"step": 1, "margin": 0.1}\n'
    log.write_text('{"step": 1}\n{"no step": 2}\n{"step": 3}\n')
    with pytest.raises(ValueError, match=r"run log '.*eval.jsonl' line 2 has no step to read"):
        truncate_log(log, 3)
    assert log.read_text() == '{"step": 1}\n{"no step": 2}\n{"step": 3}\n'  # nothing rewritten
    damaged = "step,tag,value\n1,charts/x,1.0\nx1,charts/x,2.0\n3,charts/x,3.0\n"
    scalars.write_text(damaged)  # a damaged step in a CSV row is refused as in a JSON line, not kept
    with pytest.raises(ValueError, match=r"run log '.*scalars.csv' line 3 has no step to read"):
        truncate_log(scalars, 3)
    assert scalars.read_text() == damaged
    scalars.write_text("step,tag,value\n\n-1,charts/x,1.0\n4,charts/x,2.0\n")
    truncate_log(scalars, 3)
    assert scalars.read_text().splitlines() == ["step,tag,value", "-1,charts/x,1.0"]
    for step in ('"2"', "2.0", "true", "null"):  # a step that is not a whole number is named, not compared as it is
        log.write_text(f'{{"step": 1}}\n{{"step": {step}}}\n')
        with pytest.raises(ValueError, match=r"eval.jsonl' line 2 has no step to read \(.*not a whole number"):
            truncate_log(log, 3)
    log.write_text('{"step": 1}\n' + "[" * 100_000 + "]" * 100_000 + '\n{"step": 3}\n')  # not a RecursionError
    with pytest.raises(ValueError, match=r"run log '.*eval.jsonl' line 2 has no step to read"):
        truncate_log(log, 3)
