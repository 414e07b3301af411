"""Integers through the Python API (sixtysix_env.integers): a numpy integer is taken wherever a Python int is (a
seed, a count, a deck size, a seat, an action), and a bool, a float or text is refused by name. Found by a review of
the public API: several calls refused ``np.int64(3)`` saying "must be an integer", ``Match(first_dealer=1.0)`` failed
only at its first deal, and ``is_legal(np.int64(a))`` said False for an action ``apply`` took."""

from __future__ import annotations

import numpy as np
import pytest

from eval.deals import generate_deals
from eval.play import play_deal
from eval.tournament import TournamentSettings
from agents.registry import make_agent
from sixtysix_env import Game, Rules
from sixtysix_env.game import shuffled_deck
from sixtysix_env.integers import optional_int, plain_int
from sixtysix_env.match import DealerSitsOutMatch, Match, ThreePlayerMatch
from sixtysix_env.observation import describe_observation, encode_observation

STANDARD = Rules.preset("standard")


@pytest.mark.parametrize("value", [np.int64(7), np.int32(7), np.uint8(7), 7])
def test_plain_int_takes_python_and_numpy_integers_as_python_ints(value):
    taken = plain_int(value, "count")
    assert taken == 7 and type(taken) is int


@pytest.mark.parametrize("value", [True, np.bool_(True), 7.0, np.float64(7), "7", None, [7]])
def test_plain_int_refuses_bools_floats_and_text_by_name(value):
    with pytest.raises(ValueError, match=r"^count must be an integer, got "):
        plain_int(value, "count")
    if value is not None:
        with pytest.raises(ValueError, match=r"^seed must be an integer or None, got "):
            optional_int(value, "seed")
    assert optional_int(None, "seed") is None


def test_seeds_counts_and_deck_sizes_take_numpy_integers():
    assert Game.deal(STANDARD, seed=np.int64(3), dealer=0).deck == Game.deal(STANDARD, seed=3, dealer=0).deck
    assert shuffled_deck(np.int64(24), np.int64(5)) == shuffled_deck(24, 5)
    assert generate_deals(np.int64(4), np.int64(3), STANDARD) == generate_deals(4, 3, STANDARD)
    rules = Rules(deck=np.int64(20))
    assert rules == Rules(deck=20) and type(rules.deck) is int and hash(rules) == hash(Rules(deck=20))
    assert Match(seed=np.int64(1)).first_dealer == Match(seed=1).first_dealer
    dealer = Match(first_dealer=np.int64(1)).first_dealer
    assert dealer == 1 and type(dealer) is int
    vector = encode_observation(Game.deal(STANDARD, seed=3, dealer=0), 1, (2, 5))
    assert describe_observation(vector, np.int64(7)) == describe_observation(vector, 7)


def test_a_deck_size_that_is_not_an_integer_is_refused_on_either_engine():
    """The compiled engine raised a TypeError ("int object expected"), the Python one dealt from 24.0."""
    for size in (24.0, [24], "24"):
        with pytest.raises(ValueError, match="deck size must be an integer"):
            shuffled_deck(size, 1)


@pytest.mark.parametrize("make, message", [
    (lambda: Match(first_dealer=1.0), "first_dealer must be 0, 1 or None, got 1.0"),
    (lambda: Match(first_dealer=True), "first_dealer must be 0, 1 or None, got True"),
    (lambda: ThreePlayerMatch(Rules.preset("three"), first_dealer=2.0), "first_dealer must be 0, 1, 2 or None"),
    (lambda: DealerSitsOutMatch(STANDARD, first_dealer=np.float64(2)), "first_dealer must be 0, 1, 2"),
    (lambda: Match(seed=1.5), "seed must be an integer or None, got 1.5"),
    (lambda: Rules(deck=24.0), "Rules.deck must be an integer, got 24.0"),
    (lambda: describe_observation(np.zeros(281), 7.0), "bummerl_target must be a whole number"),
    (lambda: generate_deals(0, 2.0, STANDARD), "deal count must be a positive integer, got 2.0"),
])
def test_floats_and_bools_are_refused_at_construction(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("preset", ["standard", "three"])
def test_is_legal_agrees_with_apply_on_numpy_integers(preset):
    game = Game.deal(Rules.preset(preset), seed=11, dealer=0)
    for _ in range(6):
        legal = game.legal_actions()
        assert all(game.is_legal(np.int64(action)) for action in legal)
        assert not any(game.is_legal(value) for value in (float(legal[0]), True, str(legal[0])))
        game.apply(np.int64(legal[-1]))  # apply took numpy integers already


def test_the_two_player_play_loop_refuses_a_three_player_deal_by_name():
    """An IndexError at the third seat before; the three-player games have their own loop."""
    three = Rules.preset("three")
    with pytest.raises(ValueError, match="play_deal plays the two-player game.*eval.three_tournament"):
        play_deal(Game.deal(three, seed=1), [make_agent("random"), make_agent("random")])
    with pytest.raises(ValueError, match="one seed per seat"):
        play_deal(Game.deal(STANDARD, seed=1, dealer=0), [make_agent("random"), make_agent("random")], seeds=[1])


@pytest.mark.parametrize("change, message", [
    ({"rules": Rules.preset("three")}, "two-player game; three-player rules \\(R21\\) are played by "
                                       "eval.three_tournament.run_three_tournament"),
    ({"rules": "standard"}, "rules must be a Rules object"),
    ({"agents": "random"}, "agents must be a sequence of agent specs"),  # was six agents r, a, n, d, o, m
    ({"agents": ("random", 3)}, "agents must be a sequence of agent specs"),
    ({"bootstrap": "x"}, "bootstrap must be an integer, got 'x'"),
    ({"bootstrap": -1}, "bootstrap must be 0 or more resamples, got -1"),
    ({"match": "yes"}, "match must be true or false, got 'yes'"),
    ({"master_seed": 1.0}, "master seed must be an integer, got 1.0"),
])
def test_tournament_settings_refuse_what_a_run_could_not_use(change, message):
    settings = {"agents": ("random", "greedy"), "rules": STANDARD, "deals": tuple(generate_deals(0, 1, STANDARD))}
    with pytest.raises(ValueError, match=message):
        TournamentSettings(**{**settings, **change})
    taken = TournamentSettings(**settings, master_seed=np.int64(5), bootstrap=np.int64(10))
    assert (taken.master_seed, taken.bootstrap) == (5, 10) and type(taken.master_seed) is int


def test_a_preset_name_where_rules_are_wanted_is_refused_by_name():
    """``agent_for_rules("heuristic", "standard")`` failed with an AttributeError in start_deal (and ``random``
    passed unchecked); ``generate_deals(0, 3, "standard")`` with another."""
    from agents.registry import agent_for_rules

    for call in (lambda: agent_for_rules("heuristic", "standard"), lambda: agent_for_rules("random", "standard"),
                 lambda: generate_deals(0, 3, "standard")):
        with pytest.raises(ValueError, match=r"rules must be a Rules object \(Rules.preset\(name\)\), got 'standard'"):
            call()
