"""Shared test helpers: a checked play loop for the agent tests (every choice must be legal; an optional hook sees
each decision), and the engine loaded from its source for comparisons with the compiled one."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from sixtysix_env import Game, InformationSet, Rules


def play_checked_deal(agents, rules: Rules, seed: int, dealer: int, on_decision=None) -> Game:
    """One deal between ``agents`` (seat order); ``on_decision(agent, infoset, action)`` is called before each
    action is applied. Returns the finished game."""
    game = Game.deal(rules, seed=seed, dealer=dealer)
    for player, agent in enumerate(agents):
        agent.start_deal(player, rules)
    while not game.is_over:
        player = game.to_move
        infoset = InformationSet(game, player)
        action = agents[player].act(infoset)
        assert action in game.legal_actions(), (agents[player], game.render(), action)
        if on_decision is not None:
            on_decision(agents[player], infoset, action)
        game.apply(action)
    return game


_SOURCE_MODULE_NAME = "sixtysix_env._game_source_for_tests"


def source_game_module():
    """game.py loaded from source under another name (its relative imports still resolve in the package): the
    pure Python engine, whichever backend ``sixtysix_env`` itself uses."""
    module = sys.modules.get(_SOURCE_MODULE_NAME)
    if module is None:
        path = Path(__file__).resolve().parent.parent / "sixtysix_env" / "game.py"
        spec = importlib.util.spec_from_file_location(_SOURCE_MODULE_NAME, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return module
