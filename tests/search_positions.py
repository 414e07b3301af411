"""Decisions for the search agents' tests: positions after a closing (R10) and early in phase 1 (R7); ``blend``'s
clock-free settings and the ``expert`` that chooses as its rollout member."""

from __future__ import annotations

from agents.blend import ROLLOUT_HELPER
from agents.pimc import derived_seed
from agents.registry import make_agent
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.game import FOLLOW, LEAD


def closed_decisions(deals: int, seed: int):
    """(game, infoset) at every decision with a choice after a closing (R10) in ``heuristic`` self-play."""
    players = [make_agent("heuristic", seed=seed), make_agent("heuristic", seed=seed + 1)]
    for deal in range(deals):
        game = Game.deal(Rules(), seed=seed + deal, dealer=deal & 1)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            if game.closed_by is not None and game.stage in (LEAD, FOLLOW) and len(infoset.legal_actions) > 1:
                yield game, infoset
            game.apply(players[game.current_player].act(infoset))


def phase1_positions(count: int, seed: int):
    """Phase-1 positions with a choice (R7: the talon open), each deal played on by its first legal action."""
    for deal in range(count):
        game = Game.deal(Rules(), seed=seed + deal, dealer=deal % 2)
        while not game.is_over and game.talon_size >= 6:
            infoset = InformationSet(game, game.current_player)
            if len(infoset.legal_actions) > 1:
                yield infoset
            game.apply(game.legal_actions()[0])


# ``blend`` without a clock, so the same seed gives the same choices.
CLOCK_FREE = {"seconds": None, "samples": 120, "iterations": 200, "threads": 1}


def expert_twin(blend_seed: int):
    """The clock-free ``expert`` seeded as ``BlendAgent(seed=blend_seed, **CLOCK_FREE)`` seeds its rollout member,
    so it makes the same choices as that member."""
    return make_agent("expert:seconds=none,samples=120,threads=1", seed=derived_seed(blend_seed, ROLLOUT_HELPER))
