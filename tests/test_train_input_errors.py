"""Bad input to the training commands: ``python -m train.export`` with a file that is not a model, config files that
are not UTF-8 text or are directories, and a bad ``init_model`` that must leave the run directory as it was (so
the corrected config then starts instead of asking for --resume)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

for _module in ("yaml", "torch", "stable_baselines3", "sb3_contrib"):
    pytest.importorskip(_module, reason="training needs the 'train' extra")

import sixtysix_cli  # noqa: E402
from train import export, selfplay, vector_ppo  # noqa: E402
from train.config import load_config  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "configs" / "ppo_smoke.yaml"
MODEL = ROOT / "models" / "ppo_standard.zip"  # net [256, 256] tanh, standard rules
TINY_VECTOR = dict(num_envs=16, num_steps=8, total_steps=256, num_minibatches=2, update_epochs=1, eval_every=0,
                   eval_pairs=2, checkpoint_every=1, snapshot_every=1, pool_size=1, progress_bar=False)


class StopAfterStart(Exception):
    """Raised by a patched step of a run's start: the run got that far, and no further time is spent."""


def _copy_of_model(path: Path, drop: str | None = None, metadata_changes: dict | None = None) -> Path:
    """The shipped model rewritten without the entry ``drop`` and with its metadata changed."""
    with zipfile.ZipFile(MODEL) as source, zipfile.ZipFile(path, "w") as target:
        for name in source.namelist():
            if name == drop:
                continue
            data = source.read(name)
            if name == "sixtysix.json" and metadata_changes:
                data = json.dumps(dict(json.loads(data), **metadata_changes)).encode()
            target.writestr(name, data)
    return path


# ------------------------------------------------------------------------------------------ python -m train.export
def test_export_of_a_text_file_exits_2_naming_it_without_traceback(tmp_path):
    text = tmp_path / "text.zip"
    text.write_text("not a model\n")
    result = subprocess.run([sys.executable, "-m", "train.export", str(text), str(tmp_path / "out.zip")],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 2
    assert "error:" in result.stderr and "text.zip" in result.stderr and "not a zip file" in result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["text.zip"]  # no output, no temp file


def test_export_of_a_missing_file_exits_2_naming_it(tmp_path, capsys):
    assert export.main([str(tmp_path / "absent.zip"), str(tmp_path / "out.zip")]) == 2
    error = capsys.readouterr().err
    assert "error:" in error and "absent.zip" in error and "Traceback" not in error
    assert not list(tmp_path.iterdir())


def test_export_of_a_zip_without_policy_weights_names_the_file_and_the_entry(tmp_path, capsys):
    source = _copy_of_model(tmp_path / "no_policy.zip", drop="policy.pth")
    with pytest.raises(ValueError, match=r"no_policy\.zip.*policy\.pth"):
        export.export_model(source, tmp_path / "out.zip")
    assert export.main([str(source), str(tmp_path / "out.zip")]) == 2
    error = capsys.readouterr().err
    assert "no_policy.zip" in error and "policy.pth" in error and "Traceback" not in error
    assert sorted(path.name for path in tmp_path.iterdir()) == ["no_policy.zip"]


def test_export_writes_the_model_and_a_failed_write_leaves_nothing(tmp_path, capsys):
    from agents.ppo import load_actor

    target = tmp_path / "models" / "exported.zip"
    assert export.main([str(MODEL), str(target), "--note", "checked=yes"]) == 0
    _network, metadata, _rules = load_actor(target)
    assert metadata["checked"] == "yes"
    occupied = tmp_path / "models" / "occupied.zip"
    occupied.mkdir()  # a directory where the output file should go: the rename fails
    assert export.main([str(MODEL), str(occupied)]) == 2
    assert f"target {str(occupied)!r}: is a folder, not a file" in capsys.readouterr().err  # not its temp file
    assert sorted(path.name for path in (tmp_path / "models").iterdir()) == ["exported.zip", "occupied.zip"]


@pytest.mark.parametrize("note", ["phase2=policy", "activation=relu", "format=x", "rules=paderborn"])
def test_export_refuses_a_note_that_would_change_the_model_itself(tmp_path, capsys, note):
    """A provenance note may not replace what the loader reads: ``phase2=policy`` would make the shipped hybrid
    play phase 2 by its network, ``format=x`` would leave a file no loader reads."""
    target = tmp_path / "exported.zip"
    assert export.main([str(MODEL), str(target), "--note", "checked=yes", "--note", note]) == 2
    error = capsys.readouterr().err
    assert f"--note {note.split('=')[0]!r}: that key describes the model itself" in error and "Traceback" not in error
    assert not target.exists()


# ------------------------------------------------------------------------------------------ config files
@pytest.mark.parametrize("command", ["train", "train-vector", "distill run"])
def test_a_config_that_is_not_utf8_text_is_refused_naming_the_file(tmp_path, capsys, command):
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"\xff\xfe\x00run: {}\n")
    assert sixtysix_cli.main([*command.split(), "--config", str(path)]) == 2
    error = capsys.readouterr().err
    assert "binary.yaml" in error and "not UTF-8 text" in error and "Traceback" not in error


@pytest.mark.parametrize("command", ["train", "train-vector", "distill run"])
def test_a_directory_given_as_config_is_refused_naming_it(tmp_path, capsys, command):
    folder = tmp_path / "configs.d"
    folder.mkdir()
    assert sixtysix_cli.main([*command.split(), "--config", str(folder)]) == 2
    error = capsys.readouterr().err
    assert "configs.d" in error and "is a directory, not a YAML file" in error and "Traceback" not in error


@pytest.mark.parametrize("command", ["train", "train-vector", "distill run"])
def test_a_config_that_cannot_be_read_is_refused_naming_it(tmp_path, capsys, monkeypatch, command):
    path = tmp_path / "locked.yaml"
    path.write_text("run: {name: locked}\n", encoding="utf-8")
    original_read_text = Path.read_text

    def refuse_this_file(self, *args, **kwargs):  # chmod does not stop root, who runs CI: refuse the read itself
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return original_read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", refuse_this_file)
    assert sixtysix_cli.main([*command.split(), "--config", str(path)]) == 2
    error = capsys.readouterr().err
    assert "locked.yaml" in error and "cannot be read: Permission denied" in error and "Traceback" not in error


# ------------------------------------------------------------------------------------------ sixtysix train, init_model
def test_train_with_a_bad_init_model_leaves_no_run_and_the_fixed_config_starts(tmp_path, capsys, monkeypatch):
    bad_model = tmp_path / "text.zip"
    bad_model.write_text("not a model\n")
    out = tmp_path / "runs"
    command = ["train", "--config", str(SMOKE), "--set", f"run.out_dir={out}", "--set", "net.hidden=[256, 256]"]
    assert sixtysix_cli.main([*command, "--set", f"run.init_model={bad_model}"]) == 2
    assert not (out / "smoke").exists()  # nothing half-made that asks for --resume
    error = capsys.readouterr().err
    assert "run.init_model" in error and "text.zip" in error and "Traceback" not in error

    def stop(*args, **kwargs):
        raise StopAfterStart

    monkeypatch.setattr(selfplay, "build_vec_env", stop)  # the first step of training after the run is set up
    with pytest.raises(StopAfterStart):
        sixtysix_cli.main([*command, "--set", f"run.init_model={MODEL}"])
    assert (out / "smoke" / "config.yaml").is_file() and (out / "smoke" / "pool" / "pool.json").is_file()


def test_train_refuses_init_weights_that_do_not_fit_the_net_before_writing(tmp_path):
    # The metadata claims the config's net, the weights are 256 wide: refused from the weights, not at load time.
    claimed = _copy_of_model(tmp_path / "claims_32.zip", metadata_changes={"hidden": [32, 32]})
    config = load_config(SMOKE, [f"run.out_dir={tmp_path / 'runs'}", f"run.init_model={claimed}"])
    with pytest.raises(ValueError, match=r"run\.init_model.*claims_32\.zip.*do not fit the net \[32, 32\]"):
        selfplay.Trainer.new_run(config, quiet=True)
    assert not config.run_dir.exists()
    fixed = load_config(SMOKE, [f"run.out_dir={tmp_path / 'runs'}"])
    assert selfplay.Trainer.new_run(fixed, quiet=True).run_dir == config.run_dir
    assert (config.run_dir / "config.yaml").is_file()


# ------------------------------------------------------------------------------------------ train-vector, init_model
def test_train_vector_with_a_bad_init_model_leaves_no_run_and_the_fixed_config_starts(tmp_path, capsys,
                                                                                       monkeypatch):
    import yaml

    bad_model = tmp_path / "text.zip"
    bad_model.write_text("not a model\n")
    out = tmp_path / "runs"
    config = tmp_path / "vector.yaml"
    config.write_text(yaml.safe_dump(dict(TINY_VECTOR, out_dir=str(out), run_name="tiny", init_model=str(bad_model))))
    assert sixtysix_cli.main(["train-vector", "--config", str(config)]) == 2
    assert not (out / "tiny").exists()  # nothing half-made that asks for --resume
    error = capsys.readouterr().err
    assert "init_model" in error and "text.zip" in error and "Traceback" not in error

    def stop():
        raise StopAfterStart

    monkeypatch.setattr(vector_ppo, "_networks", stop)  # the first step after args.yaml is written
    with pytest.raises(StopAfterStart):
        sixtysix_cli.main(["train-vector", "--config", str(config), "--set", f"init_model={MODEL}"])
    assert (out / "tiny" / "args.yaml").is_file()


def test_train_vector_refuses_init_weights_that_do_not_fit_the_net_before_writing(tmp_path):
    claimed = _copy_of_model(tmp_path / "claims_32.zip", metadata_changes={"hidden": [32, 32]})
    args = vector_ppo.args_from_mapping(dict(TINY_VECTOR, out_dir=str(tmp_path / "runs"), run_name="tiny",
                                             hidden=[32, 32], critic_hidden=[32, 32], init_model=str(claimed)))
    with pytest.raises(ValueError, match=r"'init_model'.*claims_32\.zip.*do not fit the net \[32, 32\]"):
        vector_ppo.VectorPpo(args, quiet=True).train()
    assert not (tmp_path / "runs").exists()
