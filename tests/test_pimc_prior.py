"""PIMC with a heuristic prior (agents/pimc.py ``prior`` / ``override_margin``): parameter checks, reproducibility
given the seed, the prior asked only in phase 1 (R7, not in phase 2, R8), and the prior's action kept unless PIMC's
worlds show another action clearly better."""

from __future__ import annotations

import pytest

from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import CLOSE

from agents import make_agent
from agents.pimc import PimcAgent
from agents.rule_based import HeuristicAgent
from play_helpers import play_checked_deal as play_deal


@pytest.mark.parametrize("spec, name", [
    ("pimc:prior=oracle", "prior"),
    ("pimc:prior=1", "prior"),
    ("pimc:override_margin=-0.1", "override_margin"),
    ("pimc:override_margin=7", "override_margin"),
    ("pimc:override_margin=lots", "override_margin"),
    ("pimc:override_margin=true", "override_margin"),
])
def test_bad_prior_parameters_name_the_parameter(spec, name):
    with pytest.raises(ValueError, match=name):
        make_agent(spec)
    with pytest.raises(ValueError, match=name):
        PimcAgent(**dict([spec.split(":")[1].split("=")]))


def test_prior_parameters_from_specs():
    agent = make_agent("pimc:prior=none", seed=1)
    assert agent.prior == "none" and agent._prior_agent is None
    # Plain PIMC has no prior choice to keep, so a margin for keeping it would be ignored: refused by name.
    with pytest.raises(ValueError, match="override_margin would be ignored, since it counts only with a prior player"):
        make_agent("pimc:prior=none,override_margin=0.5", seed=1)
    agent = make_agent("pimc", seed=1)
    assert agent.prior == "heuristic" and isinstance(agent._prior_agent, HeuristicAgent)
    assert make_agent("pimc:override_margin=1", seed=1).override_margin == 1.0


def test_prior_agent_is_seeded_from_the_pimc_seed():
    first, second = PimcAgent(seed=9), PimcAgent(seed=9)
    assert first._prior_agent.rng.getstate() == second._prior_agent.rng.getstate()
    assert PimcAgent(seed=10)._prior_agent.rng.getstate() != first._prior_agent.rng.getstate()
    first._prior_agent.rng.random()
    first.seed(4)
    second.seed(4)
    assert first._prior_agent.rng.getstate() == second._prior_agent.rng.getstate()
    # PIMC's own generator is untouched by the prior: same worlds with or without it.
    assert PimcAgent(seed=9).rng.getstate() == PimcAgent(seed=9, prior="none").rng.getstate()


def test_prior_choices_are_reproducible_given_the_seed():
    rules = Rules.preset("standard")
    runs = []
    for _ in range(2):
        priors = []
        agents = (PimcAgent(seed=3, samples=6, seconds=None), PimcAgent(seed=4, samples=6, seconds=None))
        for agent, seed in zip(agents, (13, 14)):
            agent.seed(seed)
        game = play_deal(agents, rules, seed=55, dealer=0,
                         on_decision=lambda agent, infoset, action: priors.append(agent.last_prior))
        runs.append((list(game.history), priors))
    assert runs[0] == runs[1]
    assert any(prior is not None for prior in runs[0][1])


@pytest.mark.parametrize("rules_name", ["standard", "paderborn"])
def test_prior_kept_unless_clearly_worse_and_asked_only_in_phase1(rules_name):
    """With the largest margin (6 game points, more than any paired difference) and no pruning, every phase-1
    decision follows the heuristic, except a closing (R10) that wins in nearly every solved world."""
    rules = Rules.preset(rules_name)
    checked = []

    def check(agent, infoset, action):
        if not isinstance(agent, PimcAgent) or len(infoset.legal_actions) == 1:
            return
        phase1 = infoset.closed_by is None and infoset.talon_size > 0
        last_trick = infoset.face_down_count == 1 and infoset.bottom_card is not None
        if phase1 and not last_trick:
            assert agent.last_prior in infoset.legal_actions
            assert action == agent.last_prior or (action == CLOSE and agent._close_rule(
                {a: sum(v) / len(v) for a, v in agent.last_scores.items()}))
            checked.append(action)
        else:
            assert agent.last_prior is None

    for deal in range(3):
        agents = (PimcAgent(seed=deal, samples=4, seconds=None, prune=None, override_margin=6),
                  HeuristicAgent(seed=deal + 100))
        play_deal(agents, rules, seed=300 + deal, dealer=deal % 2, on_decision=check)
    assert checked


def test_without_prior_nothing_is_asked():
    agent = PimcAgent(seed=2, samples=3, seconds=None, prior="none")
    game = Game.deal(Rules(), seed=8)
    assert agent.act(InformationSet(game, game.to_move)) in game.legal_actions()
    assert agent.last_prior is None
