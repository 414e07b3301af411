"""Details of train/rollout_improvement.py pinned by a mutation review: the recorded values replayed by hand (agents,
seeds, seats, deal ids), the improvement targets by an independent formula on hand-made arrays, the fit's loss and
held-out figures, the refusals of bad options and files, and the improved model's metadata."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

for _module in ("torch", "stable_baselines3", "sb3_contrib"):
    pytest.importorskip(_module, reason="training needs the 'train' extra")

import torch  # noqa: E402
from gymnasium import spaces  # noqa: E402
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy  # noqa: E402

from agents.ppo import delegated, read_model_metadata  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from eval.deals import derive_seed  # noqa: E402
from sixtysix_env import Game, InformationSet, Rules  # noqa: E402
from sixtysix_env.actions import NUM_ACTIONS  # noqa: E402
from sixtysix_env.observation import OBSERVATION_SIZE  # noqa: E402
from train import rollout_improvement  # noqa: E402
from train.recorded import held_out_split  # noqa: E402
from train.rollout_improvement import (  # noqa: E402
    RolloutData, collect_rollout_values, improve_model, improve_policy, improvement_targets, record_rollout_values,
)

RULES = Rules.preset("standard")
ROOT = Path(__file__).resolve().parent.parent
PPO_MODEL = ROOT / "models" / "ppo_standard.zip"


def _table(masks: np.ndarray, values: np.ndarray, deals: np.ndarray | None = None,
           observations: np.ndarray | None = None) -> RolloutData:
    rows = len(masks)
    return RolloutData(np.zeros((rows, OBSERVATION_SIZE), np.float32) if observations is None else observations,
                       masks, values.astype(np.float32), np.arange(rows) if deals is None else deals)


def _expected_targets(logits: np.ndarray, mask: np.ndarray, values: np.ndarray, temperature: float,
                      clip: float | None) -> np.ndarray:
    """One row of the targets by the documented formula, over its legal actions only."""
    legal = np.flatnonzero(mask)
    legal_logits = logits[legal].astype(np.float64)
    log_policy = legal_logits - np.log(np.exp(legal_logits - legal_logits.max()).sum()) - legal_logits.max()
    log_policy = np.maximum(log_policy, -8.0)
    advantages = values[legal] - values[legal].mean()
    if clip is not None:
        advantages = np.clip(advantages, -clip, clip)
    targets = log_policy + advantages / temperature
    row = np.zeros(NUM_ACTIONS)
    row[legal] = targets - targets.mean()
    return row


# ------------------------------------------------------------------------------------------ improvement targets
def test_targets_follow_the_formula_on_the_legal_actions_only():
    """log pi_old over the legal actions (an illegal action's logit takes no probability), floored at -8, plus the
    advantage over the legal actions' mean value, clipped, over the temperature, centred."""
    masks = np.zeros((3, NUM_ACTIONS), dtype=bool)
    masks[0, [0, 1, 2]] = True
    masks[1, [3, 4]] = True
    masks[2, [5, 6, 7, 8]] = True
    values = np.zeros((3, NUM_ACTIONS))
    values[0, [0, 1, 2]] = [3.0, 1.0, 2.0]  # mean 2 over the legal actions, not over all of them
    values[1, [3, 4]] = [-2.0, -1.0]
    values[2, [5, 6, 7, 8]] = [1.0, 1.0, 1.0, -3.0]
    values[1, 20] = 9.0  # junk in an illegal slot counts for nothing
    logits = np.zeros((3, NUM_ACTIONS), dtype=np.float32)
    logits[:, 30:] = 40.0  # illegal actions the old network liked
    logits[0, [0, 1, 2]] = [0.0, -20.0, 1.0]  # action 1 far below the floor
    logits[2, [5, 6, 7, 8]] = [2.0, 0.0, -1.0, 0.5]
    data = _table(masks, values)
    for temperature, clip in ((0.5, None), (0.5, 0.25), (2.0, 1.5), (0.1, 0.0)):
        targets = improvement_targets(logits, data, temperature, clip)
        assert targets.dtype == np.float32
        for row in range(3):
            np.testing.assert_allclose(targets[row], _expected_targets(logits[row], masks[row], values[row],
                                                                       temperature, clip), atol=1e-4)


# ------------------------------------------------------------------------------------------ the fit
def _small_policy(seed: int = 0) -> MaskableActorCriticPolicy:
    torch.manual_seed(seed)
    policy = MaskableActorCriticPolicy(spaces.Box(0.0, 1.0, (OBSERVATION_SIZE,), np.float32),
                                       spaces.Discrete(NUM_ACTIONS), lambda _progress: 1e-3,
                                       net_arch=dict(pi=[16], vf=[16]))
    with torch.no_grad():  # logits of order one (sb3 starts them near zero), so their centring shows in the loss
        policy.action_net.weight.mul_(300.0)
    return policy


def _logits(policy, observations: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        features = policy.extract_features(torch.as_tensor(observations), policy.pi_features_extractor)
        return policy.action_net(policy.mlp_extractor(features)[0]).numpy()


def _random_table(rows: int, seed: int) -> RolloutData:
    rng = np.random.default_rng(seed)
    masks = rng.random((rows, NUM_ACTIONS)) < 0.3
    masks[:, :2] = True
    values = np.where(masks, rng.choice([-2.0, -1.0, 1.0, 3.0], size=masks.shape), 0.0)
    return _table(masks, values, deals=np.arange(rows) // 2,
                  observations=rng.random((rows, OBSERVATION_SIZE)).astype(np.float32))


def test_the_fit_reports_its_loss_and_held_out_advantage_by_the_documented_formulas():
    """With a learning rate too small to move the weights, every figure is a function of the starting network:
    the loss is the squared error of the centred legal logits to the targets (summed over actions, averaged over
    rows and batches), the advantage the chosen (best legal logit) action's value minus the legal mean."""
    data = _random_table(40, seed=1)
    policy = _small_policy()
    logits = _logits(policy, data.observations)
    targets = improvement_targets(logits, data, 0.5, 1.0)
    figures = improve_policy(policy, data, temperature=0.5, epochs=1, batch_size=5, learning_rate=1e-12,
                             validation_share=0.25, seed=3, progress=False, advantage_clip=1.0)
    assert not policy.training  # left ready to play

    legal_count = data.masks.sum(axis=1, keepdims=True)
    centred = np.where(data.masks, logits - np.where(data.masks, logits, 0).sum(axis=1, keepdims=True) / legal_count,
                       0.0)
    row_losses = ((centred - targets) ** 2).sum(axis=1)
    training, validation = held_out_split(data.deals, 0.25, np.random.default_rng(3))
    assert len(training) % 5 == 0 and len(validation) > 0  # equal batches: their mean is the rows' mean
    best = np.where(data.masks, logits, -np.inf).argmax(axis=1)
    advantage = data.values[np.arange(len(data)), best] - np.where(data.masks, data.values, 0).sum(axis=1) / \
        legal_count[:, 0]
    assert figures["loss"] == pytest.approx(row_losses[training].mean(), rel=1e-4)
    assert figures["validation_loss"] == pytest.approx(row_losses[validation].mean(), rel=1e-4)
    assert figures["validation_advantage_before"] == pytest.approx(advantage[validation].mean(), rel=1e-5)
    assert figures["validation_advantage_after"] == pytest.approx(advantage[validation].mean(), rel=1e-5)
    # A batch larger than the training rows is one batch of them all.
    figures = improve_policy(_small_policy(), data, temperature=0.5, epochs=1, batch_size=1000, learning_rate=1e-12,
                             validation_share=0.25, seed=3, progress=False, advantage_clip=1.0)
    assert figures["loss"] == pytest.approx(row_losses[training].mean(), rel=1e-4)


def test_the_advantage_clip_reaches_the_fit():
    data = _random_table(24, seed=2)
    fitted = {}
    for clip in (None, 0.1):
        policy = _small_policy()
        improve_policy(policy, data, temperature=0.5, epochs=2, batch_size=8, learning_rate=1e-2,
                       validation_share=0.0, seed=0, progress=False, advantage_clip=clip)
        fitted[clip] = _logits(policy, data.observations)
    assert not np.allclose(fitted[None], fitted[0.1])


def test_each_step_clips_the_gradient_norm_to_one():
    """The fit is Adam on the squared error of the centred legal logits to the targets (fixed before the first
    step), with the gradient's norm clipped to 1 before each step: replayed by hand, the weights are the fit's to the
    bit with the clip and differ without it (these logits and targets give gradient norms above 1)."""
    data, start = _random_table(24, seed=4), _small_policy()
    fitted = copy.deepcopy(start)
    improve_policy(fitted, data, temperature=0.5, epochs=2, batch_size=8, learning_rate=1e-2, validation_share=0.0,
                   seed=6, progress=False)
    targets = torch.as_tensor(improvement_targets(_logits(start, data.observations), data, 0.5, None))
    masks = torch.as_tensor(data.masks)
    legal_count = masks.sum(dim=1, keepdim=True)

    def replay(clip: bool) -> tuple[list[torch.Tensor], list[float]]:
        policy = copy.deepcopy(start)
        generator = np.random.default_rng(6)
        training, _ = held_out_split(data.deals, 0.0, generator)
        optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
        norms = []
        for _ in range(2):
            order = generator.permutation(training)
            for first in range(0, len(order), 8):
                rows = torch.as_tensor(order[first:first + 8])
                features = policy.extract_features(torch.as_tensor(data.observations)[rows],
                                                   policy.pi_features_extractor)
                logits = policy.action_net(policy.mlp_extractor(features)[0]).masked_fill(~masks[rows], 0.0)
                centred = (logits - logits.sum(dim=1, keepdim=True) / legal_count[rows]).masked_fill(~masks[rows], 0.0)
                optimizer.zero_grad()
                ((centred - targets[rows]) ** 2).sum(dim=1).mean().backward()
                norms.append(float(torch.nn.utils.clip_grad_norm_(policy.parameters(),
                                                                  1.0 if clip else float("inf"))))
                optimizer.step()
        return [parameter.detach() for parameter in policy.parameters()], norms

    clipped, norms = replay(clip=True)
    assert len(norms) == 6 and min(norms) > 1.0
    assert all(torch.equal(mine.detach(), theirs) for mine, theirs in zip(fitted.parameters(), clipped))
    unclipped, _ = replay(clip=False)
    assert not all(torch.allclose(mine.detach(), theirs) for mine, theirs in zip(fitted.parameters(), unclipped))


@pytest.mark.parametrize("options, message", [
    (dict(temperature=0.0), "temperature must be positive, got 0.0"),
    (dict(advantage_clip=0.0), "advantage_clip must be positive or None, got 0.0"),
    (dict(advantage_clip=-1.0), "advantage_clip must be positive or None, got -1.0"),
])
def test_the_fit_refuses_a_bad_temperature_or_clip_by_name(options, message):
    arguments = dict(temperature=1.0, epochs=1, batch_size=8, learning_rate=1e-3, validation_share=0.0, seed=0,
                     progress=False) | options
    with pytest.raises(ValueError, match=message):
        improve_policy(_small_policy(), _random_table(4, seed=0), **arguments)


def test_the_fit_refuses_empty_data():
    empty = _table(np.zeros((0, NUM_ACTIONS), bool), np.zeros((0, NUM_ACTIONS)))
    with pytest.raises(ValueError, match="no recorded decisions to learn from"):
        improve_policy(_small_policy(), empty, temperature=1.0, epochs=1, batch_size=8, learning_rate=1e-3,
                       validation_share=0.0, seed=0, progress=False)


# ------------------------------------------------------------------------------------------ recording
def _replayed_values(seed: int, index: int, policy: str, opponent: str) -> tuple[list, list, list]:
    """The documented recording of deal ``index`` redone by hand: (masks, values, deal ids) of its rows."""
    learner = (index // 2) % 2
    players = [make_agent(opponent), make_agent(opponent)]
    players[learner] = make_agent(policy)
    for seat, agent in enumerate(players):
        agent.seed(derive_seed(seed, "agent", index, seat))
        agent.start_deal(seat, RULES)
    game = Game.deal(RULES, seed=derive_seed(seed, "deal", index), dealer=index % 2)
    masks, values, deals = [], [], []
    while not game.is_over:
        infoset = InformationSet(game, game.current_player)
        if game.current_player == learner and len(infoset.legal_actions) > 1 and not delegated(infoset, "endgame"):
            row = np.zeros(NUM_ACTIONS, np.float32)
            for action in infoset.legal_actions:
                branch = game.clone()
                branch.apply(action)
                rollout_agents = [make_agent(opponent), make_agent(opponent)]
                rollout_agents[learner] = make_agent(policy)
                for seat, agent in enumerate(rollout_agents):
                    agent.seed(derive_seed(derive_seed(seed, "rollout", index, len(values)), seat))
                    agent.start_deal(seat, RULES)
                while not branch.is_over:
                    branch.apply(rollout_agents[branch.current_player].act(
                        InformationSet(branch, branch.current_player)))
                row[action] = branch.result.returns()[learner]
            masks.append(np.isin(np.arange(NUM_ACTIONS), infoset.legal_actions))
            values.append(row)
            deals.append(index)
        game.apply(players[game.current_player].act(infoset))
    return masks, values, deals


def test_recorded_values_are_the_documented_rollouts_of_each_deal():
    """A greedy policy against a random opponent (so seats, seeds and the rollout agents matter), deals 1..3
    recorded from ``first=1``: each row replayed by hand; and the deals are numbered from ``first``."""
    data = record_rollout_values(RULES, "greedy", "random", seed=11, first=1, count=3, phase2="endgame")
    masks, values, deals = [], [], []
    for index in (1, 2, 3):
        more = _replayed_values(11, index, "greedy", "random")
        for whole, part in zip((masks, values, deals), more):
            whole.extend(part)
    assert len(data) == len(deals) and list(data.deals) == deals
    np.testing.assert_array_equal(data.masks, np.array(masks))
    np.testing.assert_array_equal(data.values, np.array(values))


class _SeedEchoingSearch:
    """A stand-in search valuer whose action values are the seed and seat it was given last."""

    def __init__(self):
        self.seed_given, self.seat = None, None

    def seed(self, seed):
        self.seed_given = seed

    def start_deal(self, seat, rules):
        self.seat = seat

    def action_values(self, infoset):
        assert infoset.player == self.seat
        return {action: (self.seed_given % 1000) + 0.5 * self.seat for action in infoset.legal_actions}


def test_a_search_valuer_is_seeded_per_decision_and_seated_as_the_decider(monkeypatch):
    real_make_agent = rollout_improvement.make_agent
    monkeypatch.setattr(rollout_improvement, "make_agent",
                        lambda spec, **kw: _SeedEchoingSearch() if spec == "echo" else real_make_agent(spec, **kw))
    data = record_rollout_values(RULES, "greedy", "random", seed=5, first=2, count=2, valuer="echo")
    expected = []
    for index in (2, 3):
        learner = (index // 2) % 2
        for decision, mask in enumerate(_replayed_values(5, index, "greedy", "random")[0]):
            expected.append(np.where(mask, (derive_seed(5, "rollout", index, decision) % 1000) + 0.5 * learner, 0))
    assert len(data) == len(expected) and len(expected) > 4
    np.testing.assert_array_equal(data.values, np.array(expected, np.float32))


def test_forced_decisions_are_not_recorded_when_the_network_plays_phase_2():
    """A decision with one legal action has nothing to compare, also where the network plays it (phase2=policy:
    following suit in phase 2, R8, often leaves one card)."""
    data = record_rollout_values(RULES, "greedy", "random", seed=6, first=0, count=4, phase2="policy")
    endgame = record_rollout_values(RULES, "greedy", "random", seed=6, first=0, count=4, phase2="endgame")
    assert len(data) > len(endgame) and (data.masks.sum(axis=1) > 1).all()


def test_collecting_in_chunks_gives_the_rows_of_one_recording(monkeypatch):
    monkeypatch.setattr(rollout_improvement, "CHUNK_DEALS", 2)
    collected = collect_rollout_values(RULES, "greedy", "random", deals=3, seed=7, phase2="endgame", progress=False)
    whole = record_rollout_values(RULES, "greedy", "random", seed=7, first=0, count=3, phase2="endgame")
    for field in ("observations", "masks", "values", "deals"):
        np.testing.assert_array_equal(getattr(collected, field), getattr(whole, field))
    assert collected.rules == whole.rules == RULES  # R19-R20: saved with the file, checked by improve


# ------------------------------------------------------------------------------------------ files
@pytest.mark.parametrize("field, bad_shape", [
    ("observations", (3,)), ("masks", (3, 36)), ("values", (2, 37)), ("deals", (3, 1)),
])
def test_rollout_files_with_a_field_of_the_wrong_shape_are_refused_by_name(field, bad_shape, tmp_path):
    arrays = dict(observations=np.zeros((3, OBSERVATION_SIZE), np.float32), masks=np.ones((3, NUM_ACTIONS), bool),
                  values=np.zeros((3, NUM_ACTIONS), np.float32), deals=np.zeros(3, np.int64))
    arrays[field] = np.zeros(bad_shape, arrays[field].dtype)
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match="bad.npz"):
        RolloutData.load(tmp_path / "bad.npz")


def test_improve_model_writes_the_source_metadata_and_the_fit(tmp_path, monkeypatch):
    fitted = []

    def improve_policy_spy(*arguments, **options):
        fitted.append(options["advantage_clip"])
        return improve_policy(*arguments, **options)

    monkeypatch.setattr(rollout_improvement, "improve_policy", improve_policy_spy)
    data = _random_table(12, seed=4)
    out = tmp_path / "improved.zip"
    figures = improve_model(PPO_MODEL, data, out, temperature=0.3, epochs=1, batch_size=8, learning_rate=1e-4,
                            validation_share=0.25, seed=0, progress=False, advantage_clip=0.5)
    assert fitted == [0.5]  # the clip reaches the fit
    source, written = read_model_metadata(PPO_MODEL), read_model_metadata(out)
    kept = {key: value for key, value in source.items() if not key.startswith("improve")}
    assert {key: written[key] for key in kept} == kept
    assert written["improved_from"] == "ppo_standard.zip" and written["improvement_decisions"] == 12
    assert written["improvement_temperature"] == 0.3 and written["improvement_advantage_clip"] == 0.5
    assert written["improvement_figures"] == {name: round(value, 5) for name, value in figures.items()}
    assert set(figures) == {"loss", "validation_loss", "validation_advantage_before", "validation_advantage_after"}


# ------------------------------------------------------------------------------------------ command line
def _run(argv: list, capsys) -> tuple[int, str]:
    try:
        code = rollout_improvement.main([str(arg) for arg in argv])
    except SystemExit as stop:
        code = stop.code
    return code, capsys.readouterr().err


def test_record_passes_its_options_and_documented_defaults(tmp_path, monkeypatch, capsys):
    calls = []

    def fake_collect(rules, policy, opponent, deals, seed, phase2, workers=1, progress=True, valuer="rollouts"):
        calls.append((rules, policy, opponent, deals, seed, phase2, workers, valuer))
        return _table(np.ones((1, NUM_ACTIONS), bool), np.zeros((1, NUM_ACTIONS)))

    monkeypatch.setattr(rollout_improvement, "collect_rollout_values", fake_collect)
    assert _run(["record", "--deals", "3", "--out", tmp_path / "a.npz"], capsys)[0] == 0
    assert calls.pop()[1:] == ("ppo", "heuristic", 3, 8_080_808, "endgame", 1, "rollouts")
    assert _run(["record", "--deals", "2", "--policy", "greedy", "--opponent", "random", "--seed", "9",
                 "--phase2", "policy", "--workers", "2", "--valuer", "pimc:prior=none", "--out", tmp_path / "b.npz"],
                capsys)[0] == 0
    assert calls.pop()[1:] == ("greedy", "random", 2, 9, "policy", 2, "pimc:prior=none")
    assert len(RolloutData.load(tmp_path / "b.npz")) == 1
    assert rollout_improvement.main(["record", "--deals", "2", "--valuer", "pimc:prior=none", "--out",
                                     str(tmp_path / "c.npz")]) == 0
    assert f"1 decisions valued by pimc:prior=none from 2 deals -> {tmp_path / 'c.npz'}" in capsys.readouterr().out


@pytest.mark.parametrize("arguments, fragment", [
    (["--deals", "0"], "--deals and --workers must be at least 1"),
    (["--deals", "1", "--workers", "0"], "--deals and --workers must be at least 1"),
    (["--deals", "1", "--opponent", "nosuch"], "unknown agent 'nosuch'"),
])
def test_record_refuses_bad_options(arguments, fragment, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(rollout_improvement, "collect_rollout_values", pytest.fail)
    code, error = _run(["record", *arguments, "--out", tmp_path / "r.npz"], capsys)
    assert code == 2 and fragment in error and "Traceback" not in error
    assert not (tmp_path / "r.npz").exists()


def _saved_table(path: Path, rows: int) -> Path:
    _table(np.ones((rows, NUM_ACTIONS), bool), np.zeros((rows, NUM_ACTIONS))).save(path)
    return path


def test_improve_passes_its_options_and_documented_defaults(tmp_path, monkeypatch, capsys):
    calls = []

    def fake_improve(model, data, out, temperature, epochs, batch_size, learning_rate, validation_share, seed,
                     progress=True, advantage_clip=None):
        calls.append((len(data), temperature, epochs, batch_size, learning_rate, validation_share, seed,
                      advantage_clip))
        return {"loss": 0.0}

    monkeypatch.setattr(rollout_improvement, "improve_model", fake_improve)
    first, second = _saved_table(tmp_path / "a.npz", 2), _saved_table(tmp_path / "b.npz", 3)
    assert _run(["improve", "--model", PPO_MODEL, "--data", first, second, "--out", tmp_path / "m.zip"],
                capsys)[0] == 0
    assert calls.pop() == (5, 0.25, 8, 512, 3e-4, 0.05, 0, None)  # both files, concatenated
    assert _run(["improve", "--model", PPO_MODEL, "--data", first, "--out", tmp_path / "m.zip", "--temperature",
                 "0.1", "--advantage-clip", "0.5", "--epochs", "2", "--batch-size", "16", "--learning-rate", "0.01",
                 "--validation-share", "0", "--seed", "4"], capsys)[0] == 0
    assert calls.pop() == (2, 0.1, 2, 16, 0.01, 0.0, 4, 0.5)


@pytest.mark.parametrize("option, value", [
    ("--epochs", "0"), ("--batch-size", "0"), ("--learning-rate", "0"), ("--temperature", "0"),
    ("--advantage-clip", "0"), ("--validation-share", "1"), ("--validation-share", "-0.1"),
])
def test_improve_refuses_options_out_of_range(option, value, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(rollout_improvement, "improve_model", pytest.fail)
    code, error = _run(["improve", "--model", PPO_MODEL, "--data", _saved_table(tmp_path / "a.npz", 2), "--out",
                        tmp_path / "m.zip", option, value], capsys)
    assert code == 2 and "must be positive" in error and "--validation-share in [0, 1)" in error
    assert not (tmp_path / "m.zip").exists()


def test_improve_refuses_an_output_that_is_not_a_zip(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(rollout_improvement, "improve_model", pytest.fail)
    code, error = _run(["improve", "--model", PPO_MODEL, "--data", _saved_table(tmp_path / "a.npz", 2), "--out",
                        tmp_path / "m.txt"], capsys)
    assert code == 2 and "--out must be a .zip path" in error


# ------------------------------------------------------------------------------------------ fixed in this review
def test_a_rollout_file_with_a_decision_without_a_legal_action_is_refused(tmp_path):
    """Before, it loaded, and the fit's targets and held-out figures were NaN (0 / 0), written into the model."""
    masks = np.zeros((2, NUM_ACTIONS), bool)
    masks[0, :2] = True
    _table(masks, np.zeros((2, NUM_ACTIONS))).save(tmp_path / "nolegal.npz")
    with pytest.raises(ValueError, match="nolegal.npz.*has a decision without a legal action"):
        RolloutData.load(tmp_path / "nolegal.npz")


def test_improve_refuses_data_without_decisions_before_the_fit(tmp_path, monkeypatch, capsys):
    """Before, an empty rollout file loaded the model and ended in a ValueError traceback from the fit."""
    empty = tmp_path / "empty.npz"
    _table(np.zeros((0, NUM_ACTIONS), bool), np.zeros((0, NUM_ACTIONS))).save(empty)
    monkeypatch.setattr(rollout_improvement, "improve_model", pytest.fail)
    code, error = _run(["improve", "--model", PPO_MODEL, "--data", empty, "--out", tmp_path / "m.zip"], capsys)
    assert code == 2 and f"--data {empty}: no recorded decisions to learn from" in error
    assert "Traceback" not in error and not (tmp_path / "m.zip").exists()
