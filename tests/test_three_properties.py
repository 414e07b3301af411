"""Three-player Sixty-six (R21) over many random deals: invariants, replays, information sets, environments.

Hypothesis draws deals (seed, dealer, the early-marriage switch) and a random policy; every step checks that the
cards are conserved and the mask is never empty before the end, and some steps that each seat's determinized world
keeps what the seat knows (that no observation reveals a hidden card: tests/test_three_no_leak.py); every end
checks the points (120 card points plus the counted marriages, R12, no last-trick bonus) and the winner (one, or a
tie at the top), and that the JSON record replays the deal.
"""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sixtysix_env
from sixtysix_env import Game, Rules
from sixtysix_env.cards import FULL_DECK_MASK, mask_of
from sixtysix_env.infoset import InformationSet
from sixtysix_env.record import game_to_record, record_to_game
from sixtysix_env.three import NAME_TRUMP, ThreePlayerGame
from sixtysix_env.three_infoset import ThreeInformationSet
from sixtysix_env.three_observation import (
    THREE_OBSERVATION_SIZE, encode_three_infoset, three_action_mask, three_observation_table_markdown,
)

RULE_SETS = (Rules.preset("three"), Rules.preset("three", three_player_early_marriage=False))


def check_conserved(game: ThreePlayerGame) -> None:
    """R21: the 24 cards are always in exactly one place: a hand, the current trick, or a won trick."""
    places = list(game.hands) + [mask_of(game.trick_cards)] + list(game.won_cards)
    union = 0
    for mask in places:
        assert not union & mask, "a card is in two places"
        union |= mask
    assert union == FULL_DECK_MASK


def check_end(game: ThreePlayerGame) -> None:
    counted_marriages = sum(game.marriage_points[seat] for seat in range(3) if game.tricks_won[seat])
    points = game.result.points
    assert sum(points) == 120 + counted_marriages  # R21: no last-trick bonus; R12: marriages need a trick
    top = max(points)
    leaders = [seat for seat in range(3) if points[seat] == top]
    if len(leaders) == 1:
        assert game.result.winner == leaders[0] and game.returns().count(1) == 1 and sum(game.returns()) == 1
    else:
        assert game.result.winner is None and game.returns() == (0, 0, 0)


def play_random(game: ThreePlayerGame, rng: random.Random, on_step=None) -> ThreePlayerGame:
    while not game.is_over:
        legal = game.legal_actions()
        assert legal, "the mask is empty before the end"
        assert list(np.flatnonzero(three_action_mask(game))) == legal
        if on_step is not None:
            on_step(game)
        game.apply(rng.choice(legal))
        check_conserved(game)
    assert game.legal_actions() == [] and game.current_player is None
    return game


def check_determinized_world(game: ThreePlayerGame, rng: random.Random) -> None:
    """Each seat's determinized world keeps what the seat knows (its hand, the others' hand sizes, shown voids and
    marriages) and gives the seat the same vector. That the information set holds no hidden card in the first place
    is tests/test_three_no_leak.py's check, made without the information set's own code."""
    for seat in range(3):
        info = ThreeInformationSet(game, seat)
        world = info.determinize(rng)
        check_conserved(world)
        assert world.hands[seat] & info.hand == info.hand
        for other in info.others:
            assert world.hands[other].bit_count() == game.hands[other].bit_count()
            assert not world.hands[other] & info.void[other], "a determinized hand breaks a shown void"
            assert world.hands[other] & info.known[other] == info.known[other]
        assert world.legal_actions() == game.legal_actions() or game.current_player != seat or info.naming
        again = ThreeInformationSet(world, seat)
        assert np.array_equal(encode_three_infoset(again), encode_three_infoset(info))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**40), dealer=st.integers(0, 2), rules=st.sampled_from(RULE_SETS),
       policy_seed=st.integers(0, 2**20))
def test_random_deals_keep_the_invariants_and_replay(seed, dealer, rules, policy_seed):
    """R21 invariants over random deals: cards conserved, mask never empty, points add up, one winner or a tie,
    determinized worlds keep what each seat knows, and the record replays exactly."""
    rng = random.Random(policy_seed)
    game = Game.deal(rules, seed=seed, dealer=dealer)
    play_random(game, rng, on_step=lambda state: check_determinized_world(state, rng) if rng.random() < 0.2 else None)
    check_end(game)
    replay = record_to_game(game_to_record(game))
    assert replay.history == game.history and replay.result == game.result and replay.deck == game.deck


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**40), dealer=st.integers(0, 2))
def test_forehand_naming_view_hides_his_last_five_cards(seed, dealer):
    """R21: while naming trump, forehand's information set and observation show only his first three cards;
    determinizing it redeals his other five among the unseen cards."""
    game = Game.deal(RULE_SETS[0], seed=seed, dealer=dealer)
    info = InformationSet(game, game.forehand)  # dispatches to ThreeInformationSet
    assert isinstance(info, ThreeInformationSet) and info.naming and info.hand == game.first_three
    assert info.hand.bit_count() == 3 and info.unseen.bit_count() == 21
    world = info.determinize(random.Random(seed))
    assert world.stage == NAME_TRUMP and world.hands[game.forehand] & game.first_three == game.first_three
    assert world.hands[game.forehand].bit_count() == 8
    assert np.array_equal(encode_three_infoset(ThreeInformationSet(world, game.forehand)), encode_three_infoset(info))


def test_observation_layout_is_documented():
    """docs/observation.md shows the three-player layout exactly as the code declares it."""
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "observation.md").read_text()
    assert three_observation_table_markdown() in text
    assert f"{THREE_OBSERVATION_SIZE} floats" in text


def test_pettingzoo_api_and_seed_tests():
    """sixtysix_env.env(rules="three") is a PettingZoo AEC env with player_0..2 passing api_test and seed_test."""
    from pettingzoo.test import api_test, seed_test

    environment = sixtysix_env.env(rules="three")
    assert environment.possible_agents == ["player_0", "player_1", "player_2"]
    with warnings.catch_warnings():
        # api_test resets with options={"options": 1}: the env warns about the unknown key and ignores it, as the
        # two-player env does (tests/test_env_pettingzoo.py).
        warnings.filterwarnings("ignore", message="unknown reset option 'options'")
        # and its advice about Dict observations, which classic card envs with an action mask share
        warnings.filterwarnings("ignore", message="Observation space for each agent probably should be")
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        api_test(environment, num_cycles=100)
    seed_test(lambda: sixtysix_env.env(rules="three"), num_cycles=100)


def test_pettingzoo_rewards_and_explicit_deck():
    """One scripted deal through the AEC env: the winner's reward is 1 (R21), the others 0."""
    environment = sixtysix_env.env(rules="three")
    environment.reset(seed=3, options={"dealer": 1})
    assert environment.unwrapped.game.dealer == 1 and environment.agent_selection == "player_2"
    rewards = {name: 0.0 for name in environment.possible_agents}
    for agent in environment.agent_iter():
        observation, reward, termination, truncation, _ = environment.last()
        rewards[agent] += reward
        assert observation["observation"].shape == (THREE_OBSERVATION_SIZE,)
        environment.step(None if termination else int(np.flatnonzero(observation["action_mask"])[-1]))
    result = environment.unwrapped.game.result
    assert [rewards[name] for name in environment.possible_agents] == list(map(float, result.returns()))
    with pytest.raises(ValueError, match=r"options\['dealer'\] must be 0, 1 or 2"):
        sixtysix_env.env(rules="three").unwrapped.reset(options={"dealer": 3})


def test_gymnasium_env_with_two_embedded_opponents():
    """The single-agent env: two embedded opponents play between the learner's decisions; check_env passes."""
    from gymnasium.utils.env_checker import check_env

    from agents.registry import make_agent

    check_env(sixtysix_env.ThreePlayerGymEnv(), skip_render_check=True)
    environment = sixtysix_env.ThreePlayerGymEnv(opponents=[make_agent("greedy", seed=1), make_agent("heuristic", seed=2)])
    wins = 0
    for episode in range(20):
        observation, info = environment.reset(seed=episode)
        done = False
        while not done:
            assert environment.game.to_move == environment.learner
            action = int(np.flatnonzero(environment.action_masks())[0])
            observation, reward, done, _, info = environment.step(action)
        wins += reward
        assert reward == float(info["result"].returns()[environment.learner])
    assert 0 <= wins <= 20
    with pytest.raises(ValueError, match="the deal is over"):
        environment.step(0)


@pytest.mark.slow
def test_100k_random_deals():
    """R21 invariants over 10^5 random deals (both switch values, every dealer)."""
    rng = random.Random(2026)
    for number in range(100_000):
        game = Game.deal(RULE_SETS[number % 2], seed=number, dealer=number % 3)
        play_random(game, rng) if number % 100 == 0 else _play_fast(game, rng)
        check_conserved(game)
        check_end(game)


def _play_fast(game: ThreePlayerGame, rng: random.Random) -> None:
    while not game.is_over:
        legal = game.legal_actions()
        assert legal
        game.apply(legal[int(rng.random() * len(legal))])


def test_three_player_record_file_round_trip_and_errors(tmp_path):
    """A three-player record (R21 deck order, dealer 0..2, three-player action names) saves, loads, replays and
    renders; a tampered record names what is wrong."""
    import json

    from sixtysix_env.record import load_record, render_record, save_record

    game = Game.deal(RULE_SETS[0], seed=9, dealer=2)
    play_random(game, random.Random(9))
    save_record(tmp_path / "deal.json", game)
    record = load_record(tmp_path / "deal.json")
    assert record["dealer"] == 2 and record["actions"][0].startswith("name trump ")
    assert record_to_game(record).result == game.result
    assert "Sixty-six for three" in render_record(record) and "trick 8" in render_record(record)
    for key, value, message in (("dealer", 3, "dealer must be 0, 1 or 2"),
                                ("actions", ["name trump X"], "must be an action name of the three-player game.*'name trump X'"),
                                ("actions", ["play AH"] + record["actions"], "illegal")):
        bad = dict(record, **{key: value})
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=message):
            load_record(tmp_path / "bad.json")


def test_registered_with_gymnasium_and_pettingzoo():
    """gymnasium.make("SixtySixThree-v0") gives the single-agent three-player env; PettingZoo lists it too."""
    import gymnasium
    from pettingzoo import aec_registry

    environment = gymnasium.make("SixtySixThree-v0")
    observation, info = environment.reset(seed=4)
    assert observation.shape == (THREE_OBSERVATION_SIZE,) and info["action_mask"].shape == (45,)
    assert any(name.startswith("sixtysix_three") for name in aec_registry)
