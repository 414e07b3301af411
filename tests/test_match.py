"""Match play: R3 alternating dealer, R17 Bummerl (7 game points, Schneider), R18 Partie."""

from __future__ import annotations

import random

import pytest

from sixtysix_env import DealResult, Game, Rules, parse_action
from sixtysix_env.match import Match, play_match
from sixtysix_env.record import deck_from_hands

# Forehand holds four Aces' worth of winners and takes six tricks against nothing: 69:0, 3 game points (R16).
STRONG_FOREHAND_DECK = deck_from_hands("AC AD AS TC TD TS".split(), "9C 9D 9S JC JD JS".split(), "JH",
                                       "QC KC QD KD QH KH TH AH QS KS 9H".split())
STRONG_FOREHAND_PLAY = ("play AC", "play 9C", "play AD", "play 9D", "play AS", "play 9S", "play TC", "play JC",
                        "play TD", "play JD", "play TS", "play JS")


# The same cards with the hands swapped: the dealer wins every trick and declares 69:0, 3 game points (R16).
STRONG_DEALER_DECK = deck_from_hands("9C 9D 9S JC JD JS".split(), "AC AD AS TC TD TS".split(), "JH",
                                     "QC KC QD KD QH KH TH AH QS KS 9H".split())
STRONG_DEALER_PLAY = ("play 9C", "play AC", "play AD", "play 9D", "play AS", "play 9S", "play TC", "play JC",
                      "play TD", "play JD", "play TS", "play JS")


def won(winner: int, game_points: int) -> DealResult:
    return DealResult(winner, game_points, "declared", (66, 0))


def play_strong_forehand_deal(match: Match) -> Game:
    game = match.new_deal(deck=STRONG_FOREHAND_DECK)
    for text in STRONG_FOREHAND_PLAY:
        game.apply(parse_action(text))
    assert game.result.winner == game.forehand and game.result.game_points == 3
    match.record_deal(game)
    return game


def test_R17_bummerl_ends_at_seven_game_points():
    """R17: deals are played until one player has 7 game points; the other gets one Bummerl; scores restart."""
    match = Match(Rules(), first_dealer=0)
    for winner, points in ((0, 3), (1, 2), (0, 2)):
        assert match.record_result(won(winner, points)) is None
    assert match.scores == [5, 2] and match.scores_remaining == (2, 5)  # traditionally counted down from 7
    entry = match.record_result(won(0, 2))
    assert entry is not None and (entry.winner, entry.loser, entry.marks, entry.scores, entry.deals) == (0, 1, 1, (7, 2), 4)
    assert match.bummerl == [0, 1] and match.scores == [0, 0] and not match.is_over
    assert [deal.bummerl_number for deal in match.deals] == [0, 0, 0, 0]


def test_R17_overshooting_seven_counts_as_reaching_it():
    """R17: 6 + 3 game points also ends the Bummerl (at least 7)."""
    match = Match(Rules(), first_dealer=1)
    match.record_result(won(1, 3))
    match.record_result(won(0, 1))
    match.record_result(won(1, 3))
    entry = match.record_result(won(1, 3))
    assert entry.winner == 1 and entry.scores == (1, 9) and match.bummerl == [1, 0]


@pytest.mark.parametrize("schneider_bummerl, marks", [(True, 2), (False, 1)])
def test_R17_schneider_bummerl(schneider_bummerl, marks):
    """R17 ``schneider_bummerl``: a Bummerl lost with 0 game points counts double (casual), or single (tournament)."""
    match = Match(Rules(schneider_bummerl=schneider_bummerl, partie_bummerl=3), first_dealer=0)
    for points in (3, 3):
        match.record_result(won(0, points))
    entry = match.record_result(won(0, 1))
    assert entry.marks == marks and match.bummerl == [0, marks]


def test_R17_unscored_deal_changes_only_the_dealer():
    """R15 + R3: a 65:65 deal scores nothing but the deal still passes to the other player."""
    match = Match(Rules(), first_dealer=0)
    assert match.record_result(DealResult(None, 0, "not scored", (65, 65))) is None
    assert match.scores == [0, 0] and match.dealer == 1 and len(match.deals) == 1


def play_deal_won_by(match: Match, player: int) -> None:
    """One deal from an explicit deck in which ``player`` takes every trick: 3 game points (R16)."""
    dealer_wins = match.dealer == player
    game = match.new_deal(deck=STRONG_DEALER_DECK if dealer_wins else STRONG_FOREHAND_DECK)
    for text in STRONG_DEALER_PLAY if dealer_wins else STRONG_FOREHAND_PLAY:
        game.apply(parse_action(text))
    assert game.result.winner == player and game.result.game_points == 3
    match.record_deal(game)


@pytest.mark.parametrize("schneider_bummerl, marks", [(True, 2), (False, 1)])
def test_R17_schneider_from_explicit_decks(schneider_bummerl, marks):
    """R17 ``schneider_bummerl`` from explicit decks: player 1 takes three deals in a row, as forehand, dealer and
    forehand again (R3), and the Bummerl ends 9:0; the loser, without a game point, gets it double with the switch
    on and single with it off."""
    match = Match(Rules(schneider_bummerl=schneider_bummerl), first_dealer=0)
    for _ in range(3):
        play_deal_won_by(match, 1)
    entry = match.bummerl_history[0]
    assert (entry.winner, entry.loser, entry.scores, entry.deals, entry.marks) == (1, 0, (0, 9), 3, marks)
    assert match.bummerl == [marks, 0]


def test_R18_partie_of_three_from_explicit_decks_where_a_schneider_counts_two():
    """R18 ``partie_bummerl: 3`` with R17's Schneider from explicit decks: a Bummerl lost 9:0 counts two of the three
    a Partie needs, so one more single Bummerl ends it; the Partie is not over after the Schneider alone."""
    match = Match(Rules(partie_bummerl=3), first_dealer=0)
    for _ in range(3):
        play_deal_won_by(match, 1)
    assert match.bummerl == [2, 0] and not match.is_over
    for winner in (0, 1, 1, 1):  # 3:9 for player 1: player 0 scored, a single Bummerl
        play_deal_won_by(match, winner)
    assert match.bummerl_history[-1].scores == (3, 9) and match.bummerl_history[-1].marks == 1
    assert match.bummerl == [3, 0] and match.is_over and match.winner == 1


def test_R17_with_explicit_decks_and_alternating_dealer():
    """R17 + R3 from explicit decks: the same deck gives forehand 3 game points; forehand alternates, so the
    points alternate; player 1 (forehand first) reaches 9:6 in the fifth deal."""
    match = Match(Rules(), first_dealer=0)
    winners = [play_strong_forehand_deal(match).result.winner for _ in range(5)]
    assert winners == [1, 0, 1, 0, 1]
    assert [deal.dealer for deal in match.deals] == [0, 1, 0, 1, 0]
    assert match.bummerl == [1, 0] and match.bummerl_history[0].scores == (6, 9)
    assert match.scores == [0, 0] and match.dealer == 1


def test_R18_partie_two_bummerl():
    """R18 ``partie_bummerl: 2``: the player who first hangs two Bummerl on the other wins the Partie."""
    match = Match(Rules(partie_bummerl=2, schneider_bummerl=False), first_dealer=0)
    for _ in range(2):
        assert not match.is_over and match.winner is None
        match.record_result(won(1, 3))
        match.record_result(won(0, 1))
        match.record_result(won(1, 3))
        match.record_result(won(1, 1))
    assert match.is_over and match.winner == 1 and match.bummerl == [2, 0]
    with pytest.raises(ValueError, match="match is over"):
        match.record_result(won(0, 1))
    with pytest.raises(ValueError, match="match is over"):
        match.new_deal()


def test_R18_partie_three_bummerl_and_schneider_counts_double():
    """R18 ``partie_bummerl: 3`` with R17 Schneider: a Schneider Bummerl counts two of the three."""
    match = Match(Rules(partie_bummerl=3), first_dealer=0)
    for points in (3, 3, 1):
        match.record_result(won(0, points))
    assert match.bummerl == [0, 2] and not match.is_over  # player 1 lost with 0 game points: Schneider
    for winner, points in ((1, 3), (0, 1), (1, 3), (1, 1)):
        match.record_result(won(winner, points))
    assert match.bummerl == [1, 2] and not match.is_over  # player 0 had 1 point: a single Bummerl
    for points in (3, 3, 3):
        match.record_result(won(0, points))
    assert match.bummerl == [1, 4] and match.is_over and match.winner == 0


def test_R18_partie_with_explicit_decks():
    """R18 from explicit decks: Bummerl to 3 game points, Partie of two, no Schneider; each deal's forehand
    takes 3 game points, so the Bummerl alternate and the first forehand wins 2:1."""
    match = Match(Rules(bummerl_target=3, partie_bummerl=2, schneider_bummerl=False), first_dealer=0)
    while not match.is_over:
        play_strong_forehand_deal(match)
    assert [entry.winner for entry in match.bummerl_history] == [1, 0, 1]
    assert match.bummerl == [2, 1] and match.winner == 1 and len(match.deals) == 3


def test_record_deal_checks_the_game():
    match = Match(Rules(), first_dealer=0)
    game = match.new_deal(seed=1)
    with pytest.raises(ValueError, match="still being played"):
        match.record_deal(game)
    game.forfeit(0)
    other = Game.deal(Rules(), seed=1, dealer=1)
    other.forfeit(0)
    with pytest.raises(ValueError, match="player 0 deals now"):
        match.record_deal(other)
    scharf = Game.deal(Rules.preset("scharf"), seed=1, dealer=0)
    scharf.forfeit(0)
    with pytest.raises(ValueError, match="other rules"):
        match.record_deal(scharf)
    with pytest.raises(ValueError, match="needs a Game"):
        match.record_deal(game.result)
    match.record_deal(game)
    assert match.scores == [0, 3] and match.dealer == 1


def test_match_argument_errors():
    with pytest.raises(ValueError, match="first_dealer must be 0, 1 or None"):
        Match(Rules(), first_dealer=2)
    with pytest.raises(ValueError, match="rules must be a Rules object"):
        Match("standard")
    with pytest.raises(ValueError, match="seed must be an integer"):
        Match(Rules(), seed="x")
    with pytest.raises(ValueError, match="malformed deal result"):
        Match(Rules()).record_result(DealResult(0, 5, "declared", (66, 0)))


def test_play_match_random_players_is_reproducible():
    """play_match: a whole Partie with random legal play; the same seed gives the same match."""
    def chooser(seed):
        rng = random.Random(seed)
        return lambda game, player: rng.choice(game.legal_actions())

    first = play_match(Rules(), chooser(1), seed=7)
    again = play_match(Rules(), chooser(1), seed=7)
    assert first.is_over and first.winner in (0, 1)
    assert max(first.bummerl) >= 2 and first.bummerl[first.winner] < 2
    assert [d.result for d in first.deals] == [d.result for d in again.deals]
    dealers = [deal.dealer for deal in first.deals]
    assert all(a != b for a, b in zip(dealers, dealers[1:]))  # R3
    # Every Bummerl's scores are the sum of its deals' game points.
    for number, entry in enumerate(first.bummerl_history):
        totals = [0, 0]
        for deal in first.deals:
            if deal.bummerl_number == number and deal.result.winner is not None:
                totals[deal.result.winner] += deal.result.game_points
        assert tuple(totals) == entry.scores and max(totals) >= 7
