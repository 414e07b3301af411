"""Details of ``python -m train.export`` (train/export.py) and ``sixtysix distill merge`` (train/ensemble.py):
the merged network's logits and value against the members' computed with NumPy, the exported actor against the
weights it came from, and damaged or mismatched weights refused by name (were tracebacks or unnamed errors)."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.ppo import ACTOR_ENTRY, METADATA_ENTRY, ActorNetwork, add_metadata_to_zip, model_metadata
from agents.ppo import read_model_metadata, read_policy_state
from sixtysix_env import Rules
from train import ensemble, export

STANDARD = Rules.preset("standard")
OBSERVATION_SIZE, NUM_ACTIONS = 281, 37


def _model(path: Path, seed: int, hidden: list[int], activation: str = "relu", rules: Rules = STANDARD,
           value_hidden: list[int] | None = None, **extra) -> str:
    """A MaskablePPO zip with random weights (a large action layer, so logits differ) and our metadata."""
    from sb3_contrib import MaskablePPO

    from sixtysix_env.gym_env import SixtySixGymEnv

    function = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[activation]
    model = MaskablePPO("MlpPolicy", SixtySixGymEnv(rules=rules), seed=seed, device="cpu",
                        policy_kwargs=dict(net_arch=dict(pi=hidden, vf=value_hidden or hidden), activation_fn=function))
    with torch.no_grad():
        model.policy.action_net.weight.mul_(100.0)
        model.policy.value_net.weight.mul_(10.0)
    buffer = io.BytesIO()
    model.save(buffer)
    metadata = model_metadata(rules, activation, hidden, **{"phase2": "policy", **extra})
    actor = ActorNetwork.from_policy(model.policy, activation)
    path.write_bytes(add_metadata_to_zip(buffer.getvalue(), metadata, actor))
    return str(path)


def _with_state(source: str, target: Path, change) -> str:
    """``source`` rewritten with ``change`` applied to its policy weights (a dict of tensors)."""
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(target, "w") as out:
        for name in archive.namelist():
            data = archive.read(name)
            if name == "policy.pth":
                state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
                change(state)
                buffer = io.BytesIO()
                torch.save(state, buffer)
                data = buffer.getvalue()
            out.writestr(name, data)
    return str(target)


def _forward(state, path: str, x: np.ndarray, activation) -> np.ndarray:
    """The sb3 MLP path (``policy``: logits, ``value``: value) of a state dict, in NumPy, written out here."""
    prefix, head = f"mlp_extractor.{path}_net.", {"policy": "action_net", "value": "value_net"}[path]
    index = 0
    while f"{prefix}{index}.weight" in state:
        x = activation(x @ np.asarray(state[f"{prefix}{index}.weight"]).T + np.asarray(state[f"{prefix}{index}.bias"]))
        index += 2  # Linear, activation, Linear, ...
    return x @ np.asarray(state[f"{head}.weight"]).T + np.asarray(state[f"{head}.bias"])


def _relu(x):
    return np.maximum(x, 0.0)


def test_a_merged_policy_computes_the_mean_of_its_members_logits_and_values(tmp_path, capsys):
    members = [_model(tmp_path / "a.zip", 1, [8, 6]), _model(tmp_path / "b.zip", 2, [5, 7]),
               _model(tmp_path / "c.zip", 3, [4, 4])]
    out = tmp_path / "merged.zip"
    assert ensemble.main([*members, "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"merged 3 networks into {out} (hidden [17, 17])"
    metadata = read_model_metadata(out)
    assert metadata["hidden"] == [17, 17] and metadata["activation"] == "relu" and "q_temperature" not in metadata
    assert metadata["ensemble_of"] == members and metadata["ensemble_member_hidden"] == [[8, 6], [5, 7], [4, 4]]
    assert metadata["phase2"] == "policy"
    x = np.random.default_rng(0).normal(size=(6, OBSERVATION_SIZE)).astype(np.float32)
    states = [read_policy_state(path, path) for path in members]
    merged = read_policy_state(out, "merged")
    for path in ("policy", "value"):
        expected = sum(_forward(state, path, x, _relu) for state in states) / 3
        assert np.abs(expected).max() > 0.1  # not a trivially flat network
        np.testing.assert_allclose(_forward(merged, path, x, _relu), expected, rtol=1e-4, atol=1e-4)
    with zipfile.ZipFile(out) as archive:  # the NumPy copy the agent plays is the merged policy
        actor, _ = ActorNetwork.load_npz(io.BytesIO(archive.read(ACTOR_ENTRY)))
    np.testing.assert_allclose(actor.logits(x), _forward(merged, "policy", x, _relu), rtol=1e-5, atol=1e-5)


def test_merged_q_networks_average_their_values_at_the_mean_temperature(tmp_path):
    """Member i's logits are its values / T_i: the merged logits times the mean temperature are the mean value."""
    temperatures = [0.2, 0.5, 1.1]
    members = [_model(tmp_path / f"{index}.zip", 10 + index, [6], activation="tanh", q_temperature=temperature)
               for index, temperature in enumerate(temperatures)]
    out = tmp_path / "merged.zip"
    metadata = ensemble.merge_models(members, out)
    assert metadata["q_temperature"] == pytest.approx(np.mean(temperatures))
    assert read_model_metadata(out)["q_temperature"] == pytest.approx(np.mean(temperatures))
    x = np.random.default_rng(1).normal(size=(5, OBSERVATION_SIZE)).astype(np.float32)
    states = [read_policy_state(path, path) for path in members]
    values = [_forward(state, "policy", x, np.tanh) * temperature for state, temperature in zip(states, temperatures)]
    merged = read_policy_state(out, "merged")
    np.testing.assert_allclose(_forward(merged, "policy", x, np.tanh) * np.mean(temperatures), np.mean(values, axis=0),
                               rtol=1e-4, atol=1e-4)
    expected_value = np.mean([_forward(state, "value", x, np.tanh) for state in states], axis=0)
    np.testing.assert_allclose(_forward(merged, "value", x, np.tanh), expected_value, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("damage, message", [
    (lambda s: s["mlp_extractor.policy_net.0.weight"].fill_(float("nan")),
     "its policy network: hidden layer 0: weights hold NaN or infinite values"),
    (lambda s: s["value_net.bias"].fill_(float("inf")),
     "its value network: the action layer: weights hold NaN or infinite values"),
    (lambda s: s.pop("mlp_extractor.policy_net.0.bias"),
     "its policy network: not a MaskablePPO policy: the weights have no mlp_extractor.policy_net.0.bias"),
    (lambda s: s.pop("value_net.bias"),
     "its value network: not a MaskablePPO policy: the weights have no value_net.bias"),
    (lambda s: s.__setitem__("mlp_extractor.policy_net.0.weight", torch.zeros(8, 5)),
     "its policy network maps 5 inputs to 37 outputs, expected 281 -> 37"),
    (lambda s: (s.__setitem__("value_net.weight", torch.zeros(2, 8)), s.__setitem__("value_net.bias", torch.zeros(2))),
     "its value network maps 281 inputs to 2 outputs, expected 281 -> 1"),
])
def test_a_member_with_damaged_weights_is_refused_by_name(tmp_path, capsys, damage, message):
    """Were a KeyError traceback, a NumPy concatenation error naming no model, a merged model with a NaN value
    head, or a NaN found in the merged network."""
    good = _model(tmp_path / "good.zip", 1, [8])
    bad = _with_state(_model(tmp_path / "source.zip", 2, [8]), tmp_path / "bad.zip", damage)
    out = tmp_path / "out.zip"
    assert ensemble.main([good, bad, "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"sixtysix distill merge: model {bad!r}: {message}"
    assert not out.exists()


def test_export_writes_the_actor_of_the_weights_and_the_notes(tmp_path, capsys):
    source = _model(tmp_path / "trained.zip", 4, [9, 5], activation="tanh", trained_steps=1234)
    target = tmp_path / "out" / "exported.zip"
    assert export.main([source, str(target), "--note", "eval=a=b", "--note", "empty="]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == {"rules_preset": "standard", "trained_steps": 1234, "observation_size": OBSERVATION_SIZE}
    metadata = read_model_metadata(target)
    assert metadata["eval"] == "a=b" and metadata["empty"] == "" and metadata["hidden"] == [9, 5]
    with zipfile.ZipFile(target) as archive:
        actor, actor_metadata = ActorNetwork.load_npz(io.BytesIO(archive.read(ACTOR_ENTRY)))
        assert json.loads(archive.read(METADATA_ENTRY)) == metadata
    assert actor_metadata["eval"] == "a=b" and actor.activation == "tanh"
    x = np.random.default_rng(3).normal(size=(4, OBSERVATION_SIZE)).astype(np.float32)
    expected = _forward(read_policy_state(source, source), "policy", x, np.tanh)
    np.testing.assert_allclose(actor.logits(x), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("note", ["novalue", "=value"])
def test_export_refuses_a_malformed_note_before_reading_anything(tmp_path, capsys, note):
    assert export.main([str(tmp_path / "absent.zip"), str(tmp_path / "out.zip"), "--note", note]) == 2
    assert capsys.readouterr().err.strip() == (f"python -m train.export: error: malformed --note {note!r}: "
                                               "expected KEY=VALUE")


def test_export_of_a_merged_ensemble_prints_what_its_metadata_has(tmp_path, capsys):
    """A merged model records no trained_steps: the export was written, then its summary was a KeyError traceback."""
    merged = tmp_path / "merged.zip"
    ensemble.merge_models([_model(tmp_path / "a.zip", 1, [4]), _model(tmp_path / "b.zip", 2, [4])], merged)
    capsys.readouterr()
    assert export.main([str(merged), str(tmp_path / "exported.zip")]) == 0
    assert json.loads(capsys.readouterr().out) == {"rules_preset": "standard", "observation_size": OBSERVATION_SIZE}
    assert read_model_metadata(tmp_path / "exported.zip")["ensemble_member_hidden"] == [[4], [4]]


@pytest.mark.parametrize("damage, message", [
    (lambda s: s.__setitem__("mlp_extractor.policy_net.0.weight", torch.zeros(6, 5)),
     "its network maps 5 inputs to 37 actions, expected 281 -> 37"),
    (lambda s: (s.__setitem__("action_net.weight", torch.zeros(3, 6)),
                s.__setitem__("action_net.bias", torch.zeros(3))),
     "its network maps 281 inputs to 3 actions, expected 281 -> 37"),
    (lambda s: s["mlp_extractor.policy_net.0.bias"].fill_(float("nan")),
     "hidden layer 0: weights hold NaN or infinite values"),
    (lambda s: s.pop("action_net.bias"), "not a MaskablePPO policy: the weights have no action_net.bias"),
])
def test_export_refuses_weights_that_do_not_fit_the_game_by_name(tmp_path, capsys, damage, message):
    bad = _with_state(_model(tmp_path / "source.zip", 5, [6]), tmp_path / "bad.zip", damage)
    assert export.main([bad, str(tmp_path / "out.zip")]) == 2
    assert capsys.readouterr().err.strip() == f"python -m train.export: error: model {bad!r}: {message}"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bad.zip", "source.zip"]


def test_a_start_model_is_checked_against_the_runs_rules_net_and_weights(tmp_path):
    source = _model(tmp_path / "start.zip", 6, [6, 6], activation="tanh")
    state = export.read_start_model(source, "run.init_model", STANDARD, [6, 6], "tanh")
    assert set(state) == set(read_policy_state(source, source))
    for hidden, activation in (([6], "tanh"), ([6, 6], "relu")):
        with pytest.raises(ValueError, match=re.escape(f"config key 'run.init_model': model {source!r} has net [6, 6] "
                                                       f"tanh, the run's net {hidden} {activation}")):
            export.read_start_model(source, "run.init_model", STANDARD, hidden, activation)
    with pytest.raises(ValueError, match="start.zip' was trained for other rules"):
        export.read_start_model(source, "run.init_model", Rules.preset("three"), [6, 6], "tanh")
    nan = _with_state(source, tmp_path / "nan.zip", lambda s: s["value_net.bias"].fill_(float("nan")))
    with pytest.raises(ValueError, match=r"^config key 'run.init_model': model .*nan.zip': its weights hold NaN"):
        export.read_start_model(nan, "run.init_model", STANDARD, [6, 6], "tanh")


def test_policy_weights_that_do_not_fit_or_are_not_finite_are_refused_naming_where():
    state = dict(read_policy_state("models/ppo_standard.zip", "shipped"))  # net [256, 256] tanh
    export.check_policy_fits(state, STANDARD, [256, 256], "tanh", "here")
    with pytest.raises(ValueError, match=r"^here: its weights do not fit the net \[64\] tanh \(RuntimeError: "):
        export.check_policy_fits(state, STANDARD, [64], "tanh", "here")
    state["value_net.weight"] = state["value_net.weight"].clone()
    state["value_net.weight"][0, 3] = float("-inf")
    with pytest.raises(ValueError, match=r"^here: its weights hold NaN or infinite values$"):
        export.check_policy_fits(state, STANDARD, [256, 256], "tanh", "here")


def test_a_new_policy_model_has_the_widths_and_activation_asked_for():
    model = export.new_policy_model(STANDARD, [7, 3], "relu", value_hidden=[5])
    policy = model.policy
    assert [layer.out_features for layer in policy.mlp_extractor.policy_net if hasattr(layer, "out_features")] == [7, 3]
    assert [layer.out_features for layer in policy.mlp_extractor.value_net if hasattr(layer, "out_features")] == [5]
    assert isinstance(policy.mlp_extractor.policy_net[1], torch.nn.ReLU)
    assert policy.action_net.out_features == NUM_ACTIONS and str(model.device) == "cpu"
    same = export.new_policy_model(STANDARD, [7, 3], "tanh")
    value_net = same.policy.mlp_extractor.value_net
    assert [layer.out_features for layer in value_net if hasattr(layer, "out_features")] == [7, 3]
    assert isinstance(same.policy.mlp_extractor.policy_net[1], torch.nn.Tanh)


def test_a_new_policy_model_is_seeded():
    first, again, other = (export.new_policy_model(STANDARD, [4], "tanh", seed=seed).policy.state_dict()
                           for seed in (5, 5, 6))
    assert all(torch.equal(first[key], again[key]) for key in first)
    assert not torch.equal(first["action_net.weight"], other["action_net.weight"])


@pytest.mark.parametrize("command, module", [(export.main, export), (ensemble.main, ensemble)])
def test_the_commands_help_and_usage_name_them(capsys, command, module):
    prog = {export: "python -m train.export", ensemble: "sixtysix distill merge"}[module]
    with pytest.raises(SystemExit) as stop:
        command(["--help"])
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert text.startswith(f"usage: {prog} ") and " ".join(module.__doc__.split("\n\n")[0].split()) in text
    helps = {export: ["a model zip written by sixtysix train (final.zip or a checkpoint)",
                      "where to write the agent model (e.g. models/ppo_standard.zip)", "provenance to record"],
             ensemble: ["model zips to merge (two or more)", "the merged model zip"]}[module]
    assert all(line in text for line in helps) and ("--note KEY=VALUE" in text) == (module is export)
    with pytest.raises(SystemExit):
        command([])
    assert capsys.readouterr().err.startswith(f"usage: {prog} ")


def test_export_model_without_notes_keeps_the_models_metadata(tmp_path):
    source = _model(tmp_path / "trained.zip", 7, [4], trained_steps=9)
    metadata = export.export_model(source, tmp_path / "exported.zip")
    assert metadata == read_model_metadata(source) == read_model_metadata(tmp_path / "exported.zip")


def test_members_value_networks_merge_at_their_own_widths(tmp_path):
    members = [_model(tmp_path / "a.zip", 1, [6], value_hidden=[3, 2]),
               _model(tmp_path / "b.zip", 2, [5], value_hidden=[4, 4])]
    out = tmp_path / "merged.zip"
    assert ensemble.merge_models(members, out)["hidden"] == [11]
    x = np.random.default_rng(4).normal(size=(3, OBSERVATION_SIZE)).astype(np.float32)
    states = [read_policy_state(path, path) for path in members]
    expected = (_forward(states[0], "value", x, _relu) + _forward(states[1], "value", x, _relu)) / 2
    merged = read_policy_state(out, "merged")
    np.testing.assert_allclose(_forward(merged, "value", x, _relu), expected, rtol=1e-4, atol=1e-4)


def test_a_merge_refuses_members_of_other_rules_or_missing_and_needs_out(tmp_path, capsys):
    standard = _model(tmp_path / "standard.zip", 1, [4])
    paderborn = _model(tmp_path / "paderborn.zip", 2, [4], rules=Rules.preset("paderborn"))
    other = f"model {paderborn!r} was trained for other rules than {standard!r}"
    with pytest.raises(ValueError, match=re.escape(other)):
        ensemble.merge_models([standard, paderborn], tmp_path / "out.zip")
    missing = str(tmp_path / "missing.zip")
    with pytest.raises(ValueError, match=re.escape(f"model {missing!r}: no such file")):
        ensemble.merge_models([standard, missing], tmp_path / "out.zip")
    with pytest.raises(SystemExit):
        ensemble.main([standard, standard])
    assert "the following arguments are required: --out" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["paderborn.zip", "standard.zip"]
