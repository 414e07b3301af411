"""train.tune_heuristic: duplicate duels of the compiled heuristic against itself with other numbers
(sixtysix_env.core.heuristic.heuristic_duel), the coordinate search that tunes the rollout player, and the checks on
the weights it is given."""

from __future__ import annotations

import numpy as np
import pytest

from sixtysix_env.core.solver import Table
from sixtysix_env.core.state import core_rule_bits
from sixtysix_env.rules import Rules
from sixtysix_env.core.heuristic import TUNABLE_SLOTS, with_weights
from agents.rollout import rollout_player_params
from train.tune_heuristic import duel
from train.tune_playout_policy import coordinate_search


@pytest.fixture(scope="module")
def table():
    return Table(16)


STANDARD = core_rule_bits(Rules.preset("standard"))


def test_a_duel_is_reproducible_from_its_seed(table):
    params = rollout_player_params()
    first = duel(params, params, 60, 11, table, STANDARD)
    assert duel(params, params, 60, 11, table, STANDARD) == first
    assert duel(params, params, 60, 12, table, STANDARD) != first


def test_a_player_that_closes_at_every_chance_loses_its_duel(table):
    """R10: closing with a poor hand makes the closer's tricks and points fall short; the tuned search must see it."""
    params = rollout_player_params()
    reckless = with_weights(params, {"close_filter": 0.0, "close_min_value": -5.0, "close_min_win": 0.0})
    margin, error = duel(params, reckless, 300, 5, table, STANDARD)
    assert margin > 1.0 and margin > 5 * error
    margin_back, _ = duel(reckless, params, 300, 5, table, STANDARD)
    assert margin_back < -1.0


def test_a_player_that_spends_its_trumps_freely_loses_its_duel(table):
    params = rollout_player_params()
    careless = with_weights(params, {f"trump_keep_{rank}": 0.0 for rank in "9JQKTA"})
    margin, error = duel(params, careless, 300, 5, table, STANDARD)
    assert margin > 3 * error


def test_the_rollout_player_is_the_expert_alias_player():
    from agents.registry import make_agent

    expert = make_agent("expert")
    assert np.array_equal(rollout_player_params(), expert._params)


def test_unknown_or_malformed_weights_are_refused_by_name():
    params = rollout_player_params()
    with pytest.raises(ValueError, match="unknown heuristic weight.*trump_keep_X"):
        with_weights(params, {"trump_keep_X": 1.0})
    with pytest.raises(ValueError, match="close_filter must be a finite number"):
        with_weights(params, {"close_filter": "high"})
    with pytest.raises(ValueError, match="close_filter must be a finite number"):
        with_weights(params, {"close_filter": float("nan")})
    with pytest.raises(ValueError, match="mapping of names"):
        with_weights(params, [1.0])
    assert len(set(TUNABLE_SLOTS.values())) == len(TUNABLE_SLOTS) == 24


def test_the_coordinate_search_keeps_only_changes_that_win_their_duel():
    """A duel whose margin is the drop of a quadratic loss: the search walks toward the optimum (3, 0) and keeps no
    change within ``z`` standard errors."""
    target = np.array([3.0, 0.0])

    def quadratic_duel(candidate, current, deals, seed):
        loss = lambda values: float(np.sum((values - target) ** 2))  # noqa: E731
        return loss(current) - loss(candidate), 0.01

    result = coordinate_search(["a", "b"], np.array([1.0, 1.0]), quadratic_duel, deals=100, sweeps=3, step=0.5,
                               z=2.5, seed=0, test_seed=1)
    assert result["weights"]["a"] == pytest.approx(3.375)  # 1 -> 1.5 -> 2.25 -> 3.375 (the next step overshoots)
    assert result["weights"]["b"] == pytest.approx(0.125)  # 1 -> 0.5 -> 0.25 -> 0.125
    assert result["start"] == {"a": 1.0, "b": 1.0}
    kept = [entry for entry in result["history"] if entry["kept"]]
    assert all(entry["margin"] > 2.5 * entry["se"] for entry in kept)
    assert result["test"]["margin"] > 0 and result["test"]["deals"] == 400
    # The test's 95 % interval: Student's t of 399 degrees of freedom (1.9659) times the duel's standard error.
    test = result["test"]
    assert (test["high"] - test["margin"], test["margin"] - test["low"]) == (pytest.approx(0.019659, abs=1e-6),) * 2


def test_a_playout_policy_duel_is_zero_against_itself_and_changes_sign_with_the_seats(table):
    """train.tune_playout_policy.duel (standard rules, phase 2 solved): the playout policy picks its moves without
    chance, so against itself each deal's two games mirror each other and every margin is 0; with other weights the
    duel of B against A is exactly minus that of A against B (the same deals, each played from both seats)."""
    from agents.pimc import policy_weights
    from sixtysix_env.core.policy import WEIGHT_NAMES
    from train.tune_playout_policy import duel as playout_duel

    weights = policy_weights()
    assert playout_duel(weights, weights, 200, 3, table) == (0.0, 0.0)
    other = weights.copy()  # a policy that spends its trumps freely
    other[[index for index, name in enumerate(WEIGHT_NAMES) if name.startswith("trump_keep_")]] = 0.0
    margin, error = playout_duel(other, weights, 200, 3, table)
    assert margin < 0 < error
    assert playout_duel(weights, other, 200, 3, table) == pytest.approx((-margin, error), abs=1e-12)
