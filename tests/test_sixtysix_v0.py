"""The PettingZoo-style versioned module ``sixtysix_env.sixtysix_v0`` (like ``pettingzoo.classic.connect_four_v3``)."""

from __future__ import annotations

import warnings

import pettingzoo
import pytest
from pettingzoo.test import api_test

from sixtysix_env import Game, Rules, sixtysix_v0
from sixtysix_env.env import OrderEnforcingWrapper, raw_env


@pytest.mark.parametrize("factory", [sixtysix_v0.env, sixtysix_v0.raw_env], ids=["env", "raw_env"])
def test_versioned_module_passes_pettingzoo_api_test(factory):
    environment = factory(rules="standard")
    assert environment.metadata["name"] == "sixtysix_v0"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice about Dict observations, which classic card envs share
        api_test(environment, num_cycles=200)


def test_env_is_wrapped_and_raw_env_is_not():
    assert isinstance(sixtysix_v0.env(), OrderEnforcingWrapper)
    assert type(sixtysix_v0.raw_env()) is raw_env


def test_versioned_env_plays_the_engine_game_from_an_explicit_deck():
    """R4: the deck passed to reset is dealt as the engine deals it; the mask offers exactly the engine's moves."""
    deck = Game.deal(Rules.preset("scharf"), seed=3).deck
    environment = sixtysix_v0.env(rules="scharf")
    environment.reset(options={"deck": list(deck), "dealer": 1})
    game = Game.deal(Rules.preset("scharf"), deck=list(deck), dealer=1)
    for agent in environment.agent_iter():
        observation, reward, termination, truncation, _ = environment.last()
        if termination or truncation:
            environment.step(None)
            continue
        assert agent == f"player_{game.current_player}"
        assert list(observation["action_mask"].nonzero()[0]) == list(game.legal_actions())
        action = int(game.legal_actions()[-1])
        game.apply(action)
        environment.step(action)
    returns = game.result.returns()
    assert environment.unwrapped.game.result == game.result and returns[0] == -returns[1]


def test_registered_with_pettingzoo_under_its_versioned_name():
    environment = pettingzoo.make("aec", "sixtysix_v0", rules="paderborn")
    assert environment.metadata["name"] == "sixtysix_v0"
    assert environment.unwrapped.rules == Rules.preset("paderborn")
