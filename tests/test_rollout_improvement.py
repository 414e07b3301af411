"""Rollout policy improvement (issue 4, train/rollout_improvement.py): each action of a recorded decision is valued
by playing the real deal to its end (R16 game points), and the network is fitted to pi_old * exp(A / temperature)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.ppo import delegated
from agents.registry import make_agent
from eval.deals import derive_seed
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.observation import OBSERVATION_SIZE

from train.rollout_improvement import RolloutData, improvement_targets, record_rollout_values, valued_values

RULES = Rules.preset("standard")


def _deal_played_by_greedy(seed: int, index: int) -> tuple[list[int], tuple[int, int], int]:
    """The deal of ``record_rollout_values`` played by greedy on both seats: the recorded seat's chosen actions at
    its network decisions, the result, and that seat (dealer and seat alternate over pairs of deals)."""
    learner = (index // 2) % 2
    agents = [make_agent("greedy"), make_agent("greedy")]
    for seat, agent in enumerate(agents):
        agent.seed(derive_seed(seed, "agent", index, seat))
        agent.start_deal(seat, RULES)
    game = Game.deal(RULES, seed=derive_seed(seed, "deal", index), dealer=index % 2)
    chosen = []
    while not game.is_over:
        infoset = InformationSet(game, game.current_player)
        action = agents[game.current_player].act(infoset)
        if game.current_player == learner and len(infoset.legal_actions) > 1 and not delegated(infoset, "endgame"):
            chosen.append(action)
        game.apply(action)
    return chosen, game.result.returns(), learner


def test_rollout_values_are_game_points_of_the_real_deal_played_on():
    data = record_rollout_values(RULES, "greedy", "greedy", seed=3, first=0, count=8, phase2="endgame")
    assert len(data) > 8 and data.observations.shape == (len(data), OBSERVATION_SIZE)
    assert (data.masks.sum(axis=1) > 1).all()
    # Only legal actions have values; each is a deal's game points (R16) from the decider's side.
    assert (data.values[~data.masks] == 0).all()
    assert set(np.unique(data.values[data.masks])) <= {-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0}
    # greedy is deterministic, so the value of the action it actually took is the deal's real result (R16).
    row, roles = 0, set()
    for index in range(8):
        chosen, returns, learner = _deal_played_by_greedy(3, index)
        roles.add("dealer" if learner == index % 2 else "forehand")
        for action in chosen:
            assert data.masks[row, action]
            assert data.values[row, action] == returns[learner]
            assert data.deals[row] == index
            row += 1
    assert row == len(data)
    assert roles == {"dealer", "forehand"}  # the policy is valued in both roles (R5: forehand leads first)
    again = record_rollout_values(RULES, "greedy", "greedy", seed=3, first=0, count=8, phase2="endgame")
    assert np.array_equal(again.values, data.values)


def test_improvement_targets_move_from_the_old_policy_to_the_best_value():
    masks = np.zeros((1, NUM_ACTIONS), dtype=bool)
    masks[0, [0, 5, 30]] = True
    values = np.zeros((1, NUM_ACTIONS), dtype=np.float32)
    values[0, [0, 5, 30]] = [1.0, -1.0, 0.0]
    data = RolloutData(np.zeros((1, OBSERVATION_SIZE), np.float32), masks, values, np.zeros(1, np.int64))
    old_logits = np.zeros((1, NUM_ACTIONS), dtype=np.float32)
    old_logits[0, 30] = 5.0  # the old policy prefers action 30
    keep = improvement_targets(old_logits, data, temperature=1e6)
    greedy = improvement_targets(old_logits, data, temperature=0.01)
    assert keep[0].argmax() == 30 and greedy[0].argmax() == 0
    for targets in (keep, greedy):  # centred over the legal actions, zero elsewhere
        assert abs(targets[0, masks[0]].sum()) < 1e-3 and (targets[0, ~masks[0]] == 0).all()
    np.testing.assert_allclose(keep[0, [0, 5, 30]], [-5 / 3, -5 / 3, 10 / 3], atol=1e-3)
    # Clipping the advantages (+-0.25 here) bounds how far a clearly bad action is pushed down.
    clipped = improvement_targets(np.zeros((1, NUM_ACTIONS), np.float32), data, temperature=0.5, advantage_clip=0.25)
    np.testing.assert_allclose(clipped[0, [0, 5, 30]], [0.5, -0.5, 0.0], atol=1e-5)


def test_fitting_learns_the_action_with_the_better_value():
    torch = pytest.importorskip("torch")
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from train.rollout_improvement import improve_policy

    rng = np.random.default_rng(0)
    count = 1000
    observations = np.zeros((count, OBSERVATION_SIZE), dtype=np.float32)
    observations[:, 0] = rng.random(count)
    masks = np.zeros((count, NUM_ACTIONS), dtype=bool)
    masks[:, :4] = True
    # Noisy values: the better action is 1 when the first feature is high, else 2, by 0.5 game points on average
    # under noise of the same size.
    better = np.where(observations[:, 0] > 0.5, 1, 2)
    values = np.zeros((count, NUM_ACTIONS), dtype=np.float32)
    values[:, :4] = rng.choice([-0.5, 0.5], size=(count, 4))
    values[np.arange(count), better] += 0.5
    data = RolloutData(observations, masks, values, np.arange(count) // 3)  # three positions per deal
    torch.manual_seed(0)
    policy = MaskableActorCriticPolicy(
        spaces.Box(0.0, 1.0, (OBSERVATION_SIZE,), np.float32), spaces.Discrete(NUM_ACTIONS), lambda _progress: 1e-3,
        net_arch=dict(pi=[64], vf=[64]),
    )
    figures = improve_policy(policy, data, temperature=0.1, epochs=60, batch_size=128, learning_rate=3e-3,
                             validation_share=0.2, seed=0, progress=False)
    with torch.no_grad():
        features = policy.extract_features(torch.as_tensor(observations), policy.pi_features_extractor)
        logits = policy.action_net(policy.mlp_extractor(features)[0]).numpy()
    chosen = np.where(masks, logits, -np.inf).argmax(axis=1)
    assert (chosen == better).mean() > 0.8
    assert figures["validation_advantage_after"] > figures["validation_advantage_before"]
    with pytest.raises(ValueError, match="temperature must be positive"):
        improve_policy(policy, data, temperature=0.0, epochs=1, batch_size=8, learning_rate=1e-3,
                       validation_share=0.0, seed=0, progress=False)


def test_bad_rollout_files_are_refused_by_name(tmp_path: Path):
    np.savez(tmp_path / "partial.npz", observations=np.zeros((2, OBSERVATION_SIZE), np.float32))
    with pytest.raises(ValueError, match="partial.npz.*lacks masks, values, deals"):
        RolloutData.load(tmp_path / "partial.npz")
    np.savez(tmp_path / "shape.npz", observations=np.zeros((2, 7), np.float32), masks=np.zeros((2, 37), bool),
             values=np.zeros((2, 37), np.float32), deals=np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="shape.npz.*observations of shape"):
        RolloutData.load(tmp_path / "shape.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="junk.npz"):
        RolloutData.load(tmp_path / "junk.npz")
    good = RolloutData(np.zeros((2, OBSERVATION_SIZE), np.float32), np.ones((2, NUM_ACTIONS), bool),
                       np.zeros((2, NUM_ACTIONS), np.float32), np.array([0, 0]))
    good.save(tmp_path / "good.npz")
    assert len(RolloutData.load(tmp_path / "good.npz")) == 2


def test_the_rollout_search_values_decisions_too_on_its_own_budget():
    """``--valuer expert`` (or any rollout spec) failed at the first decision: the rollout search's
    ``action_values`` wanted a budget argument that pimc's defaults to its own."""
    valuer = "rollout:samples=8,seconds=none,threads=1"
    data = record_rollout_values(RULES, "greedy", "greedy", seed=4, first=0, count=2, phase2="endgame",
                                 valuer=valuer)
    assert len(data) > 2 and (data.values[~data.masks] == 0).all()
    valued = data.values[data.masks & ~np.isnan(data.values)]  # NaN: pruned as clearly worse (valued_values)
    assert (np.abs(valued) <= 3).all()  # means of game points (R16)
    assert (valued != 0).any()
    again = record_rollout_values(RULES, "greedy", "greedy", seed=4, first=0, count=2, phase2="endgame",
                                  valuer=valuer)
    assert np.array_equal(again.values, data.values, equal_nan=True)  # no clock: the seed alone decides


def test_an_action_a_pruning_valuer_dropped_counts_as_the_worst_valued_not_as_zero(tmp_path: Path):
    """``--valuer expert`` prunes: the actions it drops as clearly worse have no value. They were stored as 0 game
    points, so in a losing position the worst actions got the largest advantage and the fit pushed toward them."""
    masks = np.zeros((1, NUM_ACTIONS), dtype=bool)
    masks[0, [0, 1, 2, 3, 4, 5]] = True
    values = np.zeros((1, NUM_ACTIONS), dtype=np.float32)
    values[0, :6] = [-1.04, -0.96, -1.14, np.nan, np.nan, np.nan]  # the row the audit found
    data = RolloutData(np.zeros((1, OBSERVATION_SIZE), np.float32), masks, values, np.zeros(1, np.int64))
    np.testing.assert_allclose(valued_values(data)[0, :6], [-1.04, -0.96, -1.14, -1.14, -1.14, -1.14], rtol=1e-6)
    targets = improvement_targets(np.zeros((1, NUM_ACTIONS), np.float32), data, temperature=0.5)[0]
    assert np.isfinite(targets).all() and targets.argmax() == 1
    assert targets[3] == targets[4] == targets[5] == targets[2] == targets[:6].min()
    # recorded by a search that prunes (prune=0.5 standard errors after its first worlds), saved and loaded
    valuer = "rollout:samples=300,seconds=none,threads=1,prune=0.5"
    recorded = record_rollout_values(RULES, "greedy", "greedy", seed=4, first=0, count=2, phase2="endgame",
                                     valuer=valuer)
    unvalued = recorded.masks & np.isnan(recorded.values)
    assert unvalued.any() and not np.isnan(recorded.values[~recorded.masks]).any()
    assert (recorded.masks & ~np.isnan(recorded.values)).any(axis=1).all()
    recorded.save(tmp_path / "pruned.npz")
    loaded = RolloutData.load(tmp_path / "pruned.npz")
    assert np.isfinite(improvement_targets(np.zeros((len(loaded), NUM_ACTIONS), np.float32), loaded, 0.25)).all()


def test_a_search_valuer_gives_every_legal_action_its_mean_value_from_the_information_set():
    # pimc's action_values (sampled layouts, no hidden card) instead of rollouts; without a time limit it depends
    # only on the seed, so the recording is reproducible.
    valuer = "pimc:prior=none,samples=8,seconds=none"
    data = record_rollout_values(RULES, "greedy", "greedy", seed=4, first=0, count=3, phase2="endgame",
                                 valuer=valuer)
    assert len(data) > 3 and (data.values[~data.masks] == 0).all()
    assert (np.abs(data.values[data.masks]) <= 3).all()  # means of game points (R16)
    again = record_rollout_values(RULES, "greedy", "greedy", seed=4, first=0, count=3, phase2="endgame",
                                  valuer=valuer)
    assert np.array_equal(again.values, data.values)
    rollouts = record_rollout_values(RULES, "greedy", "greedy", seed=4, first=0, count=3, phase2="endgame")
    assert np.array_equal(rollouts.masks, data.masks) and not np.array_equal(rollouts.values, data.values)
    with pytest.raises(ValueError, match="valuer 'greedy' has no action_values"):
        record_rollout_values(RULES, "greedy", "greedy", seed=4, first=0, count=1, valuer="greedy")
