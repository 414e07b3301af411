"""``sixtysix distill merge`` (train/ensemble.py): several networks as one MaskablePPO model that plays their
ensemble exactly."""

from __future__ import annotations

import io
import re
import zipfile

import numpy as np
import pytest
import torch

from agents.ppo import ActorNetwork, QValueNetwork, add_metadata_to_zip, model_metadata, read_model_metadata
from agents.registry import make_agent
from eval.play import play_deal
from sixtysix_env import Game, InformationSet, Rules
from train.ensemble import main as merge_main
from train.ensemble import merge_layers, merge_models

STANDARD = Rules.preset("standard")


def _mlp(rng: np.random.Generator, widths: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(rng.normal(size=(out, inp)).astype(np.float32), rng.normal(size=out).astype(np.float32))
            for inp, out in zip(widths[:-1], widths[1:])]


def _forward(layers, x, activation=np.tanh):
    for index, (weight, bias) in enumerate(layers):
        x = x @ weight.T + bias
        if index < len(layers) - 1:
            x = activation(x)
    return x


@pytest.mark.parametrize("activation", [np.tanh, lambda x: np.maximum(x, 0.0)])
def test_merged_layers_compute_the_weighted_sum_of_the_members_even_of_different_widths(activation):
    rng = np.random.default_rng(0)
    members = [_mlp(rng, [7, 5, 4, 3]), _mlp(rng, [7, 6, 2, 3]), _mlp(rng, [7, 3, 3, 3])]
    weights = [0.5, 0.3, 0.2]
    merged = merge_layers(members, weights)
    assert [weight.shape for weight, _ in merged] == [(14, 7), (9, 14), (3, 9)]
    x = rng.normal(size=(11, 7)).astype(np.float32)
    expected = sum(w * _forward(layers, x, activation) for layers, w in zip(members, weights))
    np.testing.assert_allclose(_forward(merged, x, activation), expected, rtol=1e-5, atol=1e-5)


def test_networks_without_hidden_layers_merge_to_the_weighted_sum():
    rng = np.random.default_rng(3)
    members = [_mlp(rng, [7, 3]), _mlp(rng, [7, 3])]
    merged = merge_layers(members, [0.25, 0.75])
    x = rng.normal(size=(4, 7)).astype(np.float32)
    expected = 0.25 * _forward(members[0], x) + 0.75 * _forward(members[1], x)
    np.testing.assert_allclose(_forward(merged, x), expected, rtol=1e-5, atol=1e-5)


def test_members_of_different_depth_are_refused():
    rng = np.random.default_rng(1)
    with pytest.raises(ValueError, match="differ in depth"):
        merge_layers([_mlp(rng, [7, 5, 3]), _mlp(rng, [7, 5, 5, 3])], [0.5, 0.5])


def _model(path, seed: int, hidden: list[int], activation: str = "relu", **extra) -> str:
    """A MaskablePPO zip with random weights and our metadata (``q_temperature`` in ``extra`` for a q network)."""
    from sb3_contrib import MaskablePPO

    from sixtysix_env.gym_env import SixtySixGymEnv

    function = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[activation]
    model = MaskablePPO("MlpPolicy", SixtySixGymEnv(rules=STANDARD), seed=seed, device="cpu",
                        policy_kwargs=dict(net_arch=dict(pi=hidden, vf=hidden), activation_fn=function))
    with torch.no_grad():  # sb3's small initial action layer would make every logit near 0
        model.policy.action_net.weight.mul_(100.0)
    buffer = io.BytesIO()
    model.save(buffer)
    metadata = model_metadata(STANDARD, activation, hidden, **{"phase2": "policy", **extra})
    path.write_bytes(add_metadata_to_zip(buffer.getvalue(), metadata, ActorNetwork.from_policy(model.policy, activation)))
    return str(path)


def test_a_merged_q_model_loads_with_maskableppo_and_values_actions_at_the_members_mean(tmp_path):
    """Two q networks of different temperatures and widths: the merged model's values (logits times its
    temperature) are the mean of the members' values, its value head the mean of theirs, MaskablePPO loads it and
    ``ppo:path=`` plays a deal with it."""
    from sb3_contrib import MaskablePPO

    first = _model(tmp_path / "a.zip", 1, [32, 32], q_temperature=0.25)
    second = _model(tmp_path / "b.zip", 2, [16, 24], q_temperature=0.5)
    out = tmp_path / "merged.zip"
    metadata = merge_models([first, second], out)
    assert metadata["hidden"] == [48, 56] and metadata["q_temperature"] == pytest.approx(0.375)
    assert read_model_metadata(out)["ensemble_of"] == [first, second]

    game = Game.deal(STANDARD, seed=4, dealer=0)
    infoset = InformationSet(game, game.current_player)
    members = [QValueNetwork(first).values(infoset), QValueNetwork(second).values(infoset)]
    merged = QValueNetwork(out).values(infoset)
    for action in infoset.legal_actions:
        assert merged[action] == pytest.approx((members[0][action] + members[1][action]) / 2, abs=1e-4)
    assert len({round(value, 4) for value in merged.values()}) > 1  # not a trivially flat network

    observations = torch.rand(6, metadata["observation_size"])
    loaded = [MaskablePPO.load(path, device="cpu") for path in (first, second, out)]
    with torch.no_grad():
        values = [model.policy.predict_values(observations).squeeze(-1) for model in loaded]
    torch.testing.assert_close(values[2], (values[0] + values[1]) / 2, rtol=1e-4, atol=1e-4)
    agent = make_agent(f"ppo:path={out}", seed=0)
    outcome = play_deal(Game.deal(STANDARD, seed=3, dealer=0), [agent, make_agent("heuristic", seed=1)], [1, 2])
    assert abs(outcome.returns[0]) in (1, 2, 3)


def test_merged_policies_play_the_sum_of_their_logits(tmp_path):
    first = _model(tmp_path / "a.zip", 1, [16, 16], activation="tanh")
    second = _model(tmp_path / "b.zip", 2, [16, 16], activation="tanh")
    merge_models([first, second], tmp_path / "merged.zip")
    x = np.random.default_rng(0).random((5, 281)).astype(np.float32)
    logits = [ActorNetwork.from_state_dict(_policy_state(path), "tanh").logits(x)
              for path in (first, second, tmp_path / "merged.zip")]
    np.testing.assert_allclose(logits[2], (logits[0] + logits[1]) / 2, rtol=1e-4, atol=1e-4)


def _policy_state(path):
    from stable_baselines3.common.save_util import load_from_zip_file

    _data, params, _variables = load_from_zip_file(str(path), device="cpu", load_data=False)
    return {key: value.numpy() for key, value in params["policy"].items()}


def test_bad_merges_are_refused_by_name(tmp_path, capsys):
    q_model = _model(tmp_path / "q.zip", 1, [16, 16], q_temperature=0.25)
    policy = _model(tmp_path / "p.zip", 2, [16, 16])
    tanh = _model(tmp_path / "t.zip", 3, [16, 16], activation="tanh", q_temperature=0.25)
    with pytest.raises(ValueError, match="at least two models"):
        merge_models([q_model], tmp_path / "out.zip")
    with pytest.raises(ValueError, match="a q network .* and a policy cannot be merged"):
        merge_models([q_model, policy], tmp_path / "out.zip")
    with pytest.raises(ValueError, match="activation 'tanh'"):
        merge_models([q_model, tanh], tmp_path / "out.zip")
    assert merge_main([q_model, str(tmp_path / "none.zip"), "--out", str(tmp_path / "out.zip")]) == 2
    assert "none.zip" in capsys.readouterr().err and not (tmp_path / "out.zip").exists()
    # `sixtysix distill merge` is this command.
    from train.distill import main as distill_main

    assert distill_main(["merge", q_model, tanh, "--out", str(tmp_path / "out.zip")]) == 2
    assert "activation 'tanh'" in capsys.readouterr().err
    folder = tmp_path / "a-folder"
    folder.mkdir()  # an --out that is a folder is named, not the temp file of the write, and with no traceback
    assert distill_main(["merge", q_model, policy, "--out", str(folder)]) == 2
    assert f"--out {str(folder)!r}: is a folder, not a file" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a-folder", "p.zip", "q.zip", "t.zip"]
    # a member's q_temperature that is no positive number, and damaged weights, are named (were tracebacks)
    for temperature in (0.0, -1.0, "hot", True):
        odd = _model(tmp_path / "odd.zip", 4, [16, 16], q_temperature=temperature)
        with pytest.raises(ValueError, match=rf"odd.zip': its q_temperature must be a positive number, got "
                                             rf"{re.escape(repr(temperature))}"):
            merge_models([q_model, odd], tmp_path / "out.zip")
    damaged = tmp_path / "damaged.zip"
    with zipfile.ZipFile(q_model) as source, zipfile.ZipFile(damaged, "w") as target:
        for name in source.namelist():
            target.writestr(name, b"garbage" * 20 if name == "policy.pth" else source.read(name))
    assert merge_main([q_model, str(damaged), "--out", str(tmp_path / "out.zip")]) == 2
    assert "damaged.zip': its policy.pth cannot be read (UnpicklingError" in capsys.readouterr().err
    assert not (tmp_path / "out.zip").exists()


def test_a_merge_keeps_the_members_phase2_mode_and_refuses_members_that_differ(tmp_path):
    """Hybrids (``phase2: endgame``: an exact search plays phase 2) merge into a hybrid; it was reset to the network
    playing phase 2 itself. Members with different modes are refused by name."""
    first = _model(tmp_path / "a.zip", 1, [16], phase2="endgame")
    second = _model(tmp_path / "b.zip", 2, [16], phase2="endgame")
    assert merge_models([first, second], tmp_path / "merged.zip")["phase2"] == "endgame"
    assert read_model_metadata(tmp_path / "merged.zip")["phase2"] == "endgame"
    policy = _model(tmp_path / "p.zip", 3, [16])
    with pytest.raises(ValueError, match=r"p.zip' plays phase 2 by 'policy', .*a.zip' by 'endgame': members must"):
        merge_models([first, policy], tmp_path / "mixed.zip")
    assert not (tmp_path / "mixed.zip").exists()


def test_a_merged_model_is_evaluated_member_by_member_with_the_dense_layers_logits(tmp_path):
    """``load_actor`` splits a merged model into its members' towers (ensemble_member_hidden): the logits equal
    the dense block-diagonal layers'; weights that are not such blocks are refused by name."""
    from agents.ppo import load_actor

    members = [_model(tmp_path / f"{index}.zip", index, [24, 16, 8], q_temperature=0.25) for index in range(3)]
    merge_models(members, tmp_path / "merged.zip")
    network, metadata, _rules = load_actor(tmp_path / "merged.zip")
    assert metadata["ensemble_member_hidden"] == [[24, 16, 8]] * 3 and network._blocks is not None
    dense = ActorNetwork(network.layers, "relu")
    x = np.random.default_rng(2).random((9, 281)).astype(np.float32)
    np.testing.assert_allclose(network.logits(x), dense.logits(x), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(network.logits(x[0]), dense.logits(x[0]), rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError, match="do not add up"):
        ActorNetwork(network.layers, "relu").split_into_towers([[24, 16, 8]] * 2)
    layers = [(weight.copy(), bias) for weight, bias in network.layers]
    layers[1][0][0, -1] = 1.0  # a weight across two members
    with pytest.raises(ValueError, match="hidden layer 1 is not block-diagonal"):
        ActorNetwork(layers, "relu").split_into_towers([[24, 16, 8]] * 3)


def test_the_shipped_ensemble_is_its_members_merged():
    """``ppo_ensemble`` (models/ppo_ensemble_standard.zip) plays the mean values of four q networks of 3 x 256,
    its first member ``ppo_true_world``; evaluated member by member."""
    from agents.ppo import load_actor

    network, metadata, _rules = load_actor("models/ppo_ensemble_standard.zip")
    assert metadata["ensemble_member_hidden"] == [[256, 256, 256]] * 4 and network._blocks is not None
    assert metadata["ensemble_of"][0] == "models/ppo_true_world_standard.zip"
    first, _, _ = load_actor("models/ppo_true_world_standard.zip")
    np.testing.assert_allclose(network.layers[0][0][:256], first.layers[0][0])  # the first member's first layer
    game = Game.deal(STANDARD, seed=5, dealer=1)
    values = QValueNetwork("models/ppo_ensemble_standard.zip").values(InformationSet(game, game.current_player))
    assert abs(sum(values.values())) < 1e-4  # centred game points over the legal actions
