"""Match details from a mutation review of ``sixtysix_env/match.py``: argument checks, the match's generator, the
forehand of the next deal, malformed results, the deals a Bummerl took, ``play_match``'s arguments, and the
three-person matches (R21) -- their first dealer, checks, scoring by person and the seat each move is asked for.

Rule ids are cited in the docstrings (R3 dealer, R15 unscored deal, R16 game points, R17 Bummerl, R18 Partie, R21
three people). Deals are scripted (``Match.record_result``) or dealt from explicit decks / fixed seeds.
"""

from __future__ import annotations

import pytest

from sixtysix_env import DealResult, Game, Rules
from sixtysix_env.match import (
    DealerSitsOutMatch, Match, ThreePlayerMatch, ThreeSeatEntry, play_match, play_three_person_match,
)
from test_match import STRONG_FOREHAND_DECK, play_deal_won_by, play_strong_forehand_deal, won
from test_three_rules import THREE, play_out_first_legal

NOT_SCORED = DealResult(None, 0, "not scored", (65, 65))


def first_legal(game, player) -> int:
    return game.legal_actions()[0]


# ------------------------------------------------------------------------------------------------ two players
@pytest.mark.parametrize("make", [Match, ThreePlayerMatch, DealerSitsOutMatch])
def test_a_bool_is_neither_a_seed_nor_a_first_dealer(make):
    """R3: the first dealer is a player number (or drawn at random from the seed); ``True`` is refused as both, and
    a three-person match has no fourth dealer."""
    with pytest.raises(ValueError, match="seed must be an integer or None, got True"):
        make(seed=True)
    with pytest.raises(ValueError, match="first_dealer must be 0, 1(, 2)? or None, got True"):
        make(first_dealer=True)
    with pytest.raises(ValueError, match="first_dealer must be"):
        make(first_dealer=3)


def test_the_forehand_of_the_next_deal_is_the_non_dealer():
    """R3: ``Match.forehand`` is the player who does not deal the next deal; it is the forehand of that deal and
    alternates with the dealer."""
    match = Match(Rules(), first_dealer=1)
    for forehand in (0, 1, 0):
        assert match.forehand == forehand and match.dealer == 1 - forehand
        game = match.new_deal(seed=1)
        assert game.forehand == forehand
        game.forfeit(forehand)
        match.record_deal(game)


@pytest.mark.parametrize("make", [Match, ThreePlayerMatch, DealerSitsOutMatch])
def test_deals_from_the_match_generator_are_different_and_reproducible(make):
    """R3/R17 (``Match`` docstring), R21: deals dealt without a deck or seed take their seeds from the match's
    generator: a seeded match deals the same sequence again, successive deals differ, another seed deals others."""
    def decks(seed: int) -> list:
        match = make(first_dealer=0, seed=seed)
        return [list(match.new_deal().deck) for _ in range(3)]

    first = decks(9)
    assert first == decks(9)
    assert first[0] != first[1] != first[2] != first[0]
    assert decks(10)[0] != first[0]


def test_a_deal_from_an_explicit_deck_or_seed_draws_nothing_from_the_generator():
    """R4 (``Match`` docstring): only deals without a deck and without a seed draw from the match's generator, so a
    deal from an explicit deck or seed leaves the seeded sequence of the other deals as it was."""
    plain = Match(Rules(), first_dealer=0, seed=9)
    expected = [list(plain.new_deal().deck) for _ in range(2)]
    mixed = Match(Rules(), first_dealer=0, seed=9)
    assert list(mixed.new_deal(deck=STRONG_FOREHAND_DECK).deck) == list(Game.deal(Rules(), deck=STRONG_FOREHAND_DECK,
                                                                                    dealer=0).deck)
    first = list(mixed.new_deal().deck)
    mixed.new_deal(seed=3)
    assert [first, list(mixed.new_deal().deck)] == expected


@pytest.mark.parametrize("result, why", [
    ((0, 3, "declared", (66, 0)), "record_result needs a DealResult, got tuple"),
    (DealResult(2, 1, "declared", (66, 40)), "malformed deal result"),
    (DealResult(-1, 1, "declared", (66, 40)), "malformed deal result"),
    (DealResult(0, 0, "declared", (66, 40)), "malformed deal result"),
    (DealResult(1, 4, "declared", (0, 66)), "malformed deal result"),
])
def test_a_malformed_result_is_refused_and_changes_nothing(result, why):
    """R16: a scored deal has winner 0 or 1 and 1, 2 or 3 game points; anything else is refused before the match
    records it (no deal, no score, the same dealer, R3)."""
    match = Match(Rules(), first_dealer=0)
    with pytest.raises(ValueError, match=why):
        match.record_result(result)
    assert match.deals == [] and match.scores == [0, 0] and match.dealer == 0


def test_a_bummerl_counts_its_own_deals_including_an_unscored_one():
    """R17 with R15: ``BummerlEntry.deals`` counts the deals of that Bummerl only, an unscored 65:65 deal
    included; the deals of the earlier Bummerl are not counted again."""
    match = Match(Rules(schneider_bummerl=False, partie_bummerl=3), first_dealer=0)
    for winner in (1, 1, 1):
        play_deal_won_by(match, winner)
    assert match.bummerl_history[0].deals == 3
    assert match.record_result(NOT_SCORED) is None
    for winner, points in ((0, 3), (1, 1), (0, 3)):
        assert match.record_result(won(winner, points)) is None
    entry = match.record_result(won(0, 2))
    assert (entry.winner, entry.scores, entry.deals) == (0, (8, 1), 5)
    assert [deal.bummerl_number for deal in match.deals] == [0, 0, 0, 1, 1, 1, 1, 1]


def test_the_repr_names_the_scores_and_the_next_dealer():
    """R3/R17: the match's repr shows the game points, the Bummerl received, the deals and who deals next."""
    match = Match(Rules(), first_dealer=0)
    match.record_result(won(1, 2))
    assert repr(match) == "<Match game points 0:2, Bummerl received 0:0, 1 deals, player 1 deals next>"


def test_play_match_stops_at_max_deals_and_keeps_the_first_dealer():
    """R17/R18 ``play_match``: with a Bummerl of one game point and Schneider on, the first deal ends the Partie
    (a Bummerl lost with 0 game points counts two); ``max_deals=0`` refuses to deal at all, ``max_deals=1`` is
    enough, and the given first dealer (R3) deals the first deal whatever the seed would draw."""
    rules = Rules(bummerl_target=1)
    with pytest.raises(RuntimeError, match="did not end within 0 deals"):
        play_match(rules, first_legal, seed=1, max_deals=0)
    for first_dealer in (0, 1):
        for seed in (1, 2, 3, 4):
            match = play_match(rules, first_legal, seed=seed, first_dealer=first_dealer, max_deals=1)
            assert match.first_dealer == first_dealer and [deal.dealer for deal in match.deals] == [first_dealer]
            assert match.is_over and match.bummerl_history[0].marks == 2


# ------------------------------------------------------------------------------------------------ three people
@pytest.mark.parametrize("make", [ThreePlayerMatch, DealerSitsOutMatch])
def test_three_people_draw_each_of_them_as_first_dealer(make):
    """R3 with R21: without a given first dealer, any of the three people may be drawn to deal first."""
    assert {make(seed=seed).first_dealer for seed in range(40)} == {0, 1, 2}


def test_three_person_matches_refuse_rules_of_the_wrong_kind():
    """R21: ``ThreePlayerMatch`` plays ``players=3`` (by default the preset ``three``), ``DealerSitsOutMatch`` the
    two-player game (by default ``standard``); anything that is not a Rules object is refused by both."""
    assert ThreePlayerMatch().rules == Rules.preset("three") and DealerSitsOutMatch().rules == Rules()
    for make, name in ((ThreePlayerMatch, "three"), (DealerSitsOutMatch, "standard")):
        with pytest.raises(ValueError, match="rules must be a Rules object, got str"):
            make(name)
    with pytest.raises(ValueError, match="ThreePlayerMatch needs rules with players=3"):
        ThreePlayerMatch(Rules())
    with pytest.raises(ValueError, match="DealerSitsOutMatch plays the two-player game"):
        DealerSitsOutMatch(THREE)


def finished(rules: Rules, dealer: int, seed: int = 1):
    game = Game.deal(rules, seed=seed, dealer=dealer)
    play_out_first_legal(game)
    return game


def test_dealer_sits_out_refuses_a_deal_that_is_not_a_finished_two_player_deal_under_its_rules():
    """R21's last sentence: the people play the two-player game; an unfinished deal, a three-player deal or a deal
    under other rules (R20 scharf) is refused by name and nothing is recorded."""
    match = DealerSitsOutMatch(Rules(), first_dealer=0)
    for game, why in ((Game.deal(Rules(), seed=1, dealer=0), "needs a finished 2-player deal"),
                      (finished(THREE, 0), "needs a finished 2-player deal"),
                      (finished(Rules.preset("scharf"), 0), "other rules than the match")):
        with pytest.raises(ValueError, match=why):
            match.record_deal(game)
    assert match.deals == [] and match.scores == [0, 0, 0] and match.dealer == 0


def test_three_player_match_refuses_a_wrong_deal_and_one_dealt_by_another_person():
    """R21 with R3: ``ThreePlayerMatch`` records finished three-player deals under its rules dealt by the person
    whose turn it is to deal; anything else is refused and nothing is recorded."""
    match = ThreePlayerMatch(THREE, first_dealer=1)
    for game, why in ((Game.deal(THREE, seed=1, dealer=1), "needs a finished 3-player deal"),
                      (finished(Rules(), 1), "needs a finished 3-player deal"),
                      (finished(Rules.preset("three", three_player_early_marriage=False), 1), "other rules"),
                      (finished(THREE, 2), "dealt by player 2, but player 1 deals now")):
        with pytest.raises(ValueError, match=why):
            match.record_deal(game)
    assert match.deals == [] and match.scores == [0, 0, 0] and match.dealer == 1
    match.record_deal(finished(THREE, 1))
    assert len(match.deals) == 1 and match.dealer == 2


def test_three_person_winner_is_none_while_the_bummerl_runs():
    """R17 with R21: nobody has won before one person reaches the target, even if somebody leads."""
    match = ThreePlayerMatch(THREE, first_dealer=0)
    assert match.winner is None
    while max(match.scores) == 0:
        match.record_deal(finished(THREE, match.dealer, seed=len(match.deals)))
    assert not match.is_over and match.winner is None
    play_three_person_match(match, first_legal)
    assert match.winner == match.scores.index(THREE.bummerl_target)


def test_each_move_is_chosen_by_the_person_in_that_seat():
    """R21's last sentence: ``play_three_person_match`` asks the person sitting in the engine seat to move, never the
    dealer who sits out; over a rotation every person plays."""
    match = DealerSitsOutMatch(Rules(bummerl_target=3), first_dealer=0, seed=2)
    asked = []

    def choose(game, person):
        assert person == match.seats()[game.current_player] and person != match.dealer
        asked.append(person)
        return game.legal_actions()[0]

    play_three_person_match(match, choose)
    assert len(match.deals) >= 3 and set(asked) == {0, 1, 2}


@pytest.mark.parametrize("make, rules", [(ThreePlayerMatch, Rules.preset("three", bummerl_target=1)),
                                         (DealerSitsOutMatch, Rules(bummerl_target=1))])
def test_play_three_person_match_stops_at_max_deals(make, rules):
    """R17 with R21 and a target of one game point: the first scored deal ends the Bummerl; ``max_deals=0`` deals
    nothing, ``max_deals=1`` is enough."""
    with pytest.raises(RuntimeError, match="did not end within 0 deals"):
        play_three_person_match(make(rules, first_dealer=0, seed=1), first_legal, max_deals=0)
    match = play_three_person_match(make(rules, first_dealer=0, seed=1), first_legal, max_deals=1)
    assert match.is_over and len(match.deals) == 1


def test_dealer_sits_out_entries_give_the_game_points_to_the_people_who_played():
    """R21's last sentence with R16, from an explicit deck: forehand (the person left of the dealer) takes every
    trick for 3 game points; each deal's entry names its dealer, the people in engine seats 0 and 1, and the game
    points by person, and the repr shows the scores and who deals next."""
    match = DealerSitsOutMatch(Rules(), first_dealer=0)
    assert repr(match) == "<DealerSitsOutMatch game points 0:0:0, 0 deals, person 0 deals next>"
    for _ in range(3):
        play_strong_forehand_deal(match)
    assert match.deals == [ThreeSeatEntry(0, (2, 1), (0, 3, 0)), ThreeSeatEntry(1, (0, 2), (0, 0, 3)),
                           ThreeSeatEntry(2, (1, 0), (3, 0, 0))]
    assert match.scores == [3, 3, 3] and match.dealer == 0
    assert repr(match) == "<DealerSitsOutMatch game points 3:3:3, 3 deals, person 0 deals next>"


def test_three_player_entries_are_the_deals_returns_by_person():
    """R21 with R17: in the genuine three-player game people and seats coincide; each entry holds the deal's
    returns (1 game point for the winner) and the scores are their sums."""
    match = ThreePlayerMatch(THREE, first_dealer=2)
    assert repr(match) == "<ThreePlayerMatch game points 0:0:0, 0 deals, person 2 deals next>"
    results = []
    for seed in range(6):
        game = finished(THREE, match.dealer, seed=seed)
        results.append(game.returns())
        match.record_deal(game)
    assert [entry.game_points for entry in match.deals] == results and len(set(results)) > 1
    assert match.scores == [sum(result[person] for result in results) for person in range(3)]
    scores = ":".join(map(str, match.scores))
    assert repr(match) == f"<ThreePlayerMatch game points {scores}, 6 deals, person 2 deals next>"


@pytest.mark.parametrize("make, rules, dealer", [
    (ThreePlayerMatch, THREE, None), (DealerSitsOutMatch, Rules(), DealerSitsOutMatch.ENGINE_DEALER_SEAT)])
def test_a_three_person_bummerl_records_no_deal_after_its_end(make, rules, dealer):
    """R17 with R21 (``_ThreePersonBummerl``: deals "until one person has ``bummerl_target`` game points"; its
    ``winner`` is "the person who reached the target first"): once the Bummerl is over no further deal is
    recorded, as ``Match.record_result`` refuses one after the Partie (R18). Before session 76 one was, and a second
    person could pass the target and change the winner."""
    match = play_three_person_match(make(rules, first_dealer=1, seed=5), first_legal)
    scores, winner = list(match.scores), match.winner
    with pytest.raises(ValueError, match="the match is over"):
        match.record_deal(finished(rules, match.dealer if dealer is None else dealer))
    assert match.scores == scores and match.winner == winner
