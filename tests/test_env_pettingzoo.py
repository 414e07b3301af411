"""The PettingZoo AEC environment (sixtysix_env/env.py): PettingZoo's own API, seed and render tests, masks,
rewards (R16), illegal actions (R8 Renonce), seeding and dealers (R3), and the "no leak" property of the
observation (RULES "What a player may know")."""

from __future__ import annotations

import re
import random
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils import wrappers as pettingzoo_wrappers

import sixtysix_env
from agents.base import RandomAgent
from sixtysix_env import ACTION_NAMES, Rules, parse_action
from sixtysix_env.cards import CARD_NAMES, cards_of
from sixtysix_env.env import AGENTS, raw_env
from sixtysix_env.infoset import InformationSet
from sixtysix_env.observation import OBSERVATION_SLICES
from sixtysix_env.record import deck_from_hands

PRESET_NAMES = ("standard", "paderborn", "scharf")


def random_episode(environment, rng: random.Random) -> list[tuple[str, int]]:
    """Play one deal with uniformly random legal actions taken from the mask; returns (agent, action) pairs."""
    moves = []
    for agent in environment.agent_iter():
        observation, _reward, termination, truncation, _info = environment.last()
        if termination or truncation:
            environment.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        action = int(legal[rng.randrange(len(legal))])
        moves.append((agent, action))
        environment.step(action)
    return moves


# ------------------------------------------------------------------------------------------------ PettingZoo tests
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_pettingzoo_api_test(preset):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice about Dict observations, which classic card envs share
        api_test(sixtysix_env.env(rules=preset), num_cycles=300)


def test_pettingzoo_seed_test():
    seed_test(sixtysix_env.env, num_cycles=300)
    seed_test(lambda **kwargs: sixtysix_env.env(rules="paderborn", **kwargs), num_cycles=300)


def test_pettingzoo_render_test(capsys):
    render_test(sixtysix_env.env)
    assert "sixtysix_v0" in capsys.readouterr().out  # the "human" mode prints the table


def test_metadata_agents_spaces_and_registry():
    environment = raw_env()
    assert environment.metadata["name"] == "sixtysix_v0" and environment.metadata["is_parallelizable"] is False
    assert "ansi" in environment.metadata["render_modes"]
    assert environment.possible_agents == ["player_0", "player_1"]
    for agent in AGENTS:
        space = environment.observation_space(agent)
        assert space is environment.observation_space(agent)
        assert space["observation"].shape == (sixtysix_env.OBSERVATION_SIZE,)
        assert space["observation"].dtype == np.float32
        assert space["action_mask"].shape == (37,) and space["action_mask"].dtype == np.int8
        assert environment.action_space(agent).n == 37
    made = pettingzoo.make("aec", "sixtysix_v0", rules="scharf")
    assert made.unwrapped.rules == Rules.preset("scharf")


def test_env_uses_the_standard_wrappers_with_their_checks():
    """env() stacks PettingZoo's AssertOutOfBounds and OrderEnforcing wrappers (subclasses that forward the hot
    attributes directly); their checks still hold."""
    environment = sixtysix_env.env()
    assert isinstance(environment, pettingzoo_wrappers.OrderEnforcingWrapper)
    assert isinstance(environment.env, pettingzoo_wrappers.AssertOutOfBoundsWrapper)
    assert not isinstance(environment.env, pettingzoo_wrappers.TerminateIllegalWrapper)
    with pytest.raises(AttributeError, match="before reset"):
        environment.agent_selection
    with pytest.raises(AttributeError, match="before reset"):
        environment.rewards
    with pytest.raises(Exception, match="reset"):
        environment.step(0)
    environment.reset(seed=1)
    assert environment.agent_selection == environment.unwrapped.agent_selection
    for out_of_space in (37, -1, 2.5, None, "play AH"):
        # PettingZoo's AssertionError, naming the action, the agent and the space.
        with pytest.raises(AssertionError, match=rf"action {re.escape(repr(out_of_space))} of player_\d is not in "
                                                 r"the action space Discrete\(37\)"):
            environment.step(out_of_space)
    legal = np.flatnonzero(environment.observe(environment.agent_selection)["action_mask"])
    environment.step(np.int64(legal[0]))  # numpy integers go through the generic space check
    assert environment.unwrapped.game.history == [int(legal[0])]


# ------------------------------------------------------------------------------------------------ masks and rewards
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_mask_equals_legal_actions_and_rewards_are_the_deal_result(preset):
    """R16: the reward at the end is the game points won or lost, zero-sum, equal to the engine's result."""
    environment = raw_env(rules=preset)
    rng = random.Random(3)
    for episode in range(15):
        environment.reset(seed=episode)
        game = environment.game
        for agent in environment.agent_iter():
            observation, reward, termination, truncation, info = environment.last()
            player = AGENTS.index(agent)
            if termination:
                assert reward == game.result.returns()[player] and info["result"] == game.result
                environment.step(None)
                continue
            assert reward == 0
            assert list(np.flatnonzero(observation["action_mask"])) == game.legal_actions()
            other = environment.observe(AGENTS[1 - player])
            assert not other["action_mask"].any()
            legal = game.legal_actions()
            environment.step(legal[rng.randrange(len(legal))])
        assert environment.agents == []


def test_rewards_are_zero_sum_and_accumulate_once():
    environment = sixtysix_env.env()
    rng = random.Random(5)
    for episode in range(20):
        environment.reset(seed=100 + episode)
        totals = dict.fromkeys(AGENTS, 0.0)
        for agent in environment.agent_iter():
            _observation, reward, termination, truncation, _info = environment.last()
            totals[agent] += reward
            if termination or truncation:
                environment.step(None)
            else:
                legal = environment.unwrapped.game.legal_actions()
                environment.step(legal[rng.randrange(len(legal))])
        result = environment.unwrapped.game.result
        assert totals["player_0"] == -totals["player_1"] == result.returns()[0]
        assert abs(totals["player_0"]) in (0, 1, 2, 3)


# ------------------------------------------------------------------------------------------------ illegal actions
def test_illegal_action_raises_naming_it_and_leaves_the_state_unchanged():
    environment = sixtysix_env.env()
    environment.reset(seed=2)
    game = environment.unwrapped.game
    agent = environment.agent_selection
    illegal = next(a for a in range(24) if a not in game.legal_actions())
    with pytest.raises(ValueError, match=f"'{ACTION_NAMES[illegal]}'") as raised:
        environment.step(illegal)
    assert agent in str(raised.value)
    assert game.history == [] and environment.agent_selection == agent and not any(environment.terminations.values())
    environment.step(game.legal_actions()[0])  # the agent may then act legally
    assert len(game.history) == 1


@pytest.mark.parametrize("offender_moves_first", [True, False])
def test_illegal_action_renonce_gives_the_opponent_three(offender_moves_first):
    """R8/R16: a Renonce ends the deal; the offender's opponent scores 3 game points."""
    environment = sixtysix_env.env(illegal_action="renonce")
    environment.reset(seed=4)
    game = environment.unwrapped.game
    if not offender_moves_first:
        environment.step(game.legal_actions()[0])
    offender = environment.agent_selection
    illegal = next(a for a in range(37) if a not in game.legal_actions())
    environment.step(illegal)
    assert game.is_over and game.result.reason == "renonce"
    assert all(environment.terminations.values())
    assert environment.rewards[offender] == -3.0 and environment.rewards[AGENTS[1 - AGENTS.index(offender)]] == 3.0


@pytest.mark.parametrize("not_an_action", ["play AH", 99, None, 1.5, 2.0, True])
def test_renonce_mode_still_raises_for_what_is_not_an_action(not_an_action):
    environment = raw_env(illegal_action="renonce")
    environment.reset(seed=1)
    with pytest.raises(ValueError, match="not an action id"):
        environment.step(not_an_action)
    assert not environment.game.is_over


def test_bad_options_are_rejected():
    with pytest.raises(ValueError, match="illegal_action"):
        raw_env(illegal_action="ignore")
    with pytest.raises(ValueError, match="rules"):
        raw_env(rules="skat")
    with pytest.raises(ValueError, match="render_mode must be one of .* got 'ansii'"):
        raw_env(render_mode="ansii")
    with pytest.raises(ValueError, match="dealer"):
        raw_env(dealer=2)
    with pytest.raises(ValueError, match="dealer"):
        raw_env().reset(options={"dealer": "x"})


# ------------------------------------------------------------------------------------------------ seeds and dealers
def deal_signature(environment) -> tuple:
    game = environment.unwrapped.game
    return game.deck, game.dealer


def test_seeded_reset_repeats_the_sequence_of_deals_and_the_dealer_alternates():
    """R3: the first dealer is drawn (from the seed), then the deal alternates."""
    environment = raw_env()
    environment.reset(seed=9)
    first = [deal_signature(environment)]
    for _ in range(5):
        environment.reset()
        first.append(deal_signature(environment))
    environment.reset(seed=9)
    second = [deal_signature(environment)]
    for _ in range(5):
        environment.reset()
        second.append(deal_signature(environment))
    assert first == second
    dealers = [dealer for _deck, dealer in first]
    assert all(dealers[i] != dealers[i + 1] for i in range(5))
    assert len({deck for deck, _dealer in first}) == 6
    draws = set()
    for seed in range(20):
        environment.reset(seed=seed)
        draws.add(environment.game.dealer)
    assert draws == {0, 1}, "the first dealer is drawn from the seed"


def test_fixed_and_random_dealer_and_explicit_deck_option():
    fixed = raw_env(dealer=1)
    for seed in range(4):
        fixed.reset(seed=seed)
        assert fixed.game.dealer == 1
    drawn = raw_env(dealer="random")
    drawn.reset(seed=0)
    dealers = set()
    for _ in range(30):
        drawn.reset()
        dealers.add(drawn.game.dealer)
    assert dealers == {0, 1}
    deck = deck_from_hands("9C JC QC KC TC AC".split(), "9D JD QD KD TD AD".split(), "AH")
    explicit = raw_env()
    explicit.reset(options={"deck": deck, "dealer": 0, "match_score": (4, 6)})
    assert explicit.game.dealer == 0 and [CARD_NAMES[c] for c in explicit.game.deck] == deck
    assert explicit.agent_selection == "player_1"  # forehand leads (R5)
    seen = sixtysix_env.describe_observation(explicit.observe("player_1")["observation"])
    assert set(seen["hand"]) == set("9C JC QC KC TC AC".split())
    assert seen["my_game_points"] == 6 and seen["opponent_game_points"] == 4


def test_information_set_lets_agents_play_inside_the_env():
    environment = raw_env()
    players = {agent: RandomAgent(seed=i) for i, agent in enumerate(AGENTS)}
    for episode in range(5):
        environment.reset(seed=episode)
        for agent, player in players.items():
            player.start_deal(AGENTS.index(agent), environment.rules)
        for agent in environment.agent_iter():
            _observation, _reward, termination, truncation, _info = environment.last()
            if termination or truncation:
                environment.step(None)
                continue
            infoset = environment.information_set(agent)
            assert isinstance(infoset, InformationSet) and infoset.player == AGENTS.index(agent)
            assert infoset.legal_actions == environment.game.legal_actions()
            environment.step(players[agent].act(infoset))
        assert environment.game.is_over
    with pytest.raises(ValueError, match="agent"):
        environment.information_set("player_2")


# ------------------------------------------------------------------------------------------------ render
def test_render_ansi_returns_the_table_and_hides_hands_by_view():
    environment = raw_env(render_mode="ansi", render_view="current")
    environment.reset(seed=6)
    game = environment.game
    text = environment.render()
    assert isinstance(text, str) and "sixtysix_v0" in text and "legal:" in text
    mover, other = game.to_move, 1 - game.to_move
    assert all(CARD_NAMES[c] in text for c in cards_of(game.hands[mover]))
    assert "6 hidden cards" in text and not all(CARD_NAMES[c] in text for c in cards_of(game.hands[other]))
    table = raw_env(render_mode="ansi")
    table.reset(seed=6)
    full = table.render()
    assert all(CARD_NAMES[c] in full for p in (0, 1) for c in cards_of(table.game.hands[p]))
    without_mode = raw_env()
    without_mode.reset(seed=6)
    with pytest.warns(UserWarning, match="render_mode"):
        assert without_mode.render() is None
    for bad in (2, True, 1.0, "player_2", "everyone"):  # 1.0 == 1 passed and failed only at render()
        with pytest.raises(ValueError, match="render_view must be None, 'current', 0, 1 or an agent name"):
            raw_env(render_view=bad)
    import numpy as np

    seat_one = raw_env(render_mode="ansi", render_view=np.int64(1))
    seat_one.reset(seed=6)
    assert seat_one.render_view == 1 and type(seat_one.render_view) is int
    assert all(CARD_NAMES[c] in seat_one.render() for c in cards_of(seat_one.game.hands[1]))


def test_the_raw_envs_name_a_missing_reset():
    """Unwrapped, observe() and step() before reset() failed with an AttributeError on None."""
    from sixtysix_env.three_env import ThreePlayerRawEnv

    for environment in (raw_env(), ThreePlayerRawEnv()):
        with pytest.raises(ValueError, match=r"call reset\(\) before observe\(\)"):
            environment.observe("player_0")
        with pytest.raises(ValueError, match=r"call reset\(\) before step\(\)"):
            environment.step(0)
        environment.reset(seed=1)
        assert environment.observe(environment.agent_selection)["action_mask"].any()


# ------------------------------------------------------------------------------------------------ explicit decks
def test_played_actions_replay_on_explicit_decks():
    environment = raw_env()
    deck = deck_from_hands("KS QS JC QC KC TC".split(), "9D JD QD KD TD AD".split(), "AH")
    environment.reset(options={"deck": deck, "dealer": 0})
    environment.step(parse_action("marry KS"))
    seen = sixtysix_env.describe_observation(environment.observe("player_0")["observation"])
    assert seen["opponent_known"] == ["QS"] and seen["marriages_by_opponent"] == ["S"]


def test_aec_reset_without_match_score_shows_zero_to_zero_again():
    """docs/observation.md: reset's ``match_score`` is 0:0 when absent, so a reset without it after one with it
    does not keep the previous deal's score (environment, observation and information set)."""
    environment = sixtysix_env.env()
    environment.reset(seed=3, options={"match_score": (3, 4)})
    assert environment.unwrapped.match_score == (3, 4)
    environment.reset()
    assert environment.unwrapped.match_score == (0, 0)
    for agent in ("player_0", "player_1"):
        vector = environment.observe(agent)["observation"]
        assert vector[OBSERVATION_SLICES["my_game_points"]][0] == 0.0
        assert vector[OBSERVATION_SLICES["opponent_game_points"]][0] == 0.0
        assert environment.unwrapped.information_set(agent).match_score is None


@pytest.mark.parametrize("rules", ["standard", "three"])
def test_a_deep_copy_made_mid_deal_continues_as_the_original(rules):
    """EzPickle (which sends an env to a worker as its constructor's arguments) also served deepcopy: a copy made
    mid-deal was a fresh env never reset (``last()`` failed, ``game`` was None). Both now play on alike, and the
    copy's game is its own."""
    import copy

    env = sixtysix_env.env(rules=rules)
    env.reset(seed=5)
    for _ in range(3):
        observation, *_ = env.last()
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    twin = copy.deepcopy(env)
    assert twin.unwrapped.game is not env.unwrapped.game and twin.agent_selection == env.agent_selection
    steps = 0
    while env.agents:
        first, second = env.last(), twin.last()
        assert np.array_equal(first[0]["observation"], second[0]["observation"]) and first[1:4] == second[1:4]
        action = None if first[2] or first[3] else int(np.flatnonzero(first[0]["action_mask"])[-1])
        env.step(action)
        twin.step(action)
        steps += 1
    assert not twin.agents and steps > 10
    assert twin.unwrapped.game.history == env.unwrapped.game.history and twin.unwrapped.game.is_over
