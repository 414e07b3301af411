"""``blend``: ``expert``'s rollouts and the information-set tree on one budget, their values mixed (agents/blend.py)."""

from __future__ import annotations

import pytest
from search_positions import CLOCK_FREE, expert_twin, phase1_positions

from agents.blend import BlendAgent, blended_values
from agents.registry import make_agent


def test_blended_values_centre_each_search_in_game_points_and_mix_them():
    """The rollouts' values (here in a unit where a game point is 0.5) and the tree's rewards (game points / 3, R16)
    become game points, are centred over the rollouts' actions, and are mixed by ``tree_mix``."""
    rollout = {1: 1.0, 2: 0.0}  # 2 and 0 game points: centred +1 and -1
    tree = {1: 0.0, 2: 1.0, 5: 9.0}  # 0 and 3 game points: centred -1.5 and +1.5 (action 5 was not kept)
    assert blended_values(rollout, 0.5, tree, 0.0) == pytest.approx({1: 1.0, 2: -1.0})
    assert blended_values(rollout, 0.5, tree, 1.0) == pytest.approx({1: -1.5, 2: 1.5})
    assert blended_values(rollout, 0.5, tree, 0.5) == pytest.approx({1: -0.25, 2: 0.25})
    with pytest.raises(ValueError, match=r"no value for actions \[2\]"):
        blended_values(rollout, 0.5, {1: 0.0}, 0.5)


def test_blend_without_the_tree_is_expert():
    """``tree_mix=0``: the same choices as ``expert`` seeded as blend seeds its rollout member (clock-free)."""
    blend = BlendAgent(seed=4, tree_mix=0.0, **CLOCK_FREE)
    expert = expert_twin(4)
    for infoset in phase1_positions(3, 610):
        assert blend.act(infoset) == expert.act(infoset)
    assert blend.blended_decisions == 0


def test_blend_mixes_where_expert_kept_two_actions_and_follows_the_tree_at_full_mix():
    """Where ``expert`` decided between two or more actions, the choice is the best mixed value among the actions it
    kept; at ``tree_mix=1`` that is the tree's best shrunk mean among them. Clock-free runs repeat exactly."""
    blend = BlendAgent(seed=5, tree_mix=1.0, **CLOCK_FREE)
    again = BlendAgent(seed=5, tree_mix=1.0, **CLOCK_FREE)
    for infoset in phase1_positions(4, 620):
        choice = blend.act(infoset)
        assert again.act(infoset) == choice
        assert choice in infoset.legal_actions
        if blend.last_blend:
            assert set(blend.last_blend) == set(blend.rollout.decision_values)
            assert blend.last_blend[choice] == max(blend.last_blend.values())
    assert blend.blended_decisions > 0
    assert blend.changed_decisions > 0  # the tree alone overturns some of expert's choices


@pytest.mark.parametrize("params, named", [
    ({"tree_mix": 1.5}, "tree_mix"), ({"tree_mix": True}, "tree_mix"), ({"rollout_share": -0.1}, "rollout_share"),
    ({"rollout_share": 0}, "rollout_share"), ({"seconds": 0}, "seconds"), ({"prior_weight": -1}, "prior_weight"),
])
def test_blend_refuses_bad_parameters_by_name(params, named):
    with pytest.raises(ValueError, match=named):
        BlendAgent(**params)


def test_blend_is_registered_with_its_parameters():
    agent = make_agent("blend:tree_mix=0.25,seconds=0.05", seed=1)
    assert isinstance(agent, BlendAgent) and agent.tree_mix == 0.25
    assert agent.rollout.seconds == pytest.approx(0.025)  # rollout_share 0.5 of the budget
    with pytest.raises(ValueError, match="unknown parameter 'mix'"):
        make_agent("blend:mix=0.5")
