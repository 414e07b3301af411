"""Three-player Sixty-six "echt zu dritt": one test (or more) for every sentence of RULES R21, each from an
explicit deck in the R21 deal order.

Decks are spelled with ``deck_from_seat_hands(forehand, middlehand, dealer)`` (8 cards each, in the order they are
dealt: a packet of 3, then 2, then 3). Unless a test says otherwise seat 2 deals, so seat 0 is forehand and seat 1
middlehand: ``FH, MH, DL = 0, 1, 2``. Card points (R1): A 11, T 10, K 4, Q 3, J 2, 9 0.
"""

from __future__ import annotations

import pytest

from sixtysix_env import Game, Rules
from sixtysix_env.cards import CARD_NAMES, CARD_POINTS, FULL_DECK_MASK, cards_of, parse_card
from sixtysix_env.rules import TWO_PLAYER_SWITCHES
from sixtysix_env.three import (
    ANNOUNCE, FOLLOW, LEAD, NAME_TRUMP, NUM_ACTIONS_THREE, OVER, ThreeMarriage, ThreePlayerGame, deck_from_seat_hands,
    parse_three_player_action, three_player_action_name,
)

THREE = Rules.preset("three")
THREE_LATE = Rules.preset("three", three_player_early_marriage=False)
FH, MH, DL = 0, 1, 2

# A deal used by several tests (trump is named by the test).
HANDS_A = ("AC TC KC QC TD JD 9H JH", "9C JC AH TH KH QH 9D AD", "AS TS KS QS JS 9S KD QD")
# Middlehand and the dealer are void in spades, which forehand holds entirely.
HANDS_B = ("AS TS KS QS JS 9S 9C JC", "AD TD AH TH KH QH AC TC", "KD QD JD 9D 9H JH KC QC")


def deal(hands: tuple[str, str, str], rules: Rules = THREE, dealer: int = DL) -> ThreePlayerGame:
    return Game.deal(rules, deck=deck_from_seat_hands(*(hand.split() for hand in hands)), dealer=dealer)


def play(game: ThreePlayerGame, *actions: str) -> None:
    for text in actions:
        game.apply(parse_three_player_action(text))


def legal(game: ThreePlayerGame) -> set[str]:
    return {three_player_action_name(action) for action in game.legal_actions()}


def hand(game: ThreePlayerGame, seat: int) -> set[str]:
    return {CARD_NAMES[card] for card in cards_of(game.hands[seat])}


def name_trump_and_pass(game: ThreePlayerGame, suit: str) -> None:
    play(game, f"name trump {suit}")
    while game.stage == ANNOUNCE:
        play(game, "pass")


def play_out_first_legal(game: ThreePlayerGame) -> None:
    while not game.is_over:
        game.apply(game.legal_actions()[0])


# ------------------------------------------------------------------------------------------------ sentence 1
def test_R21_24_cards_8_each_no_talon_no_trump_card():
    """R21: 24 cards, no talon, no trump card: all 24 cards are dealt, 8 to each seat, and no trump suit is set
    until forehand names one."""
    game = deal(HANDS_A)
    assert [game.hands[seat].bit_count() for seat in range(3)] == [8, 8, 8]
    assert game.hands[0] | game.hands[1] | game.hands[2] == FULL_DECK_MASK
    assert not game.hands[0] & game.hands[1] and not game.hands[1] & game.hands[2] and not game.hands[0] & game.hands[2]
    assert game.trump_suit == -1 and game.stage == NAME_TRUMP
    assert not hasattr(game, "stock") and not hasattr(game, "trump_card")


def test_R21_only_24_card_deck():
    """R21: the three-player game uses all 24 cards; a 20-card deck (R2) is refused with a clear error."""
    with pytest.raises(ValueError, match="deck must be 24 with players=3"):
        Rules.preset("three", deck=20)
    with pytest.raises(ValueError, match="only with players=3"):
        Rules(three_player_early_marriage=True)


# ------------------------------------------------------------------------------------------------ sentence 2
@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_R21_seats_forehand_left_of_dealer_then_middlehand_then_dealer(dealer):
    """R21: seats in order forehand (left of the dealer), middlehand, dealer; play goes round in that order."""
    game = deal(HANDS_A, dealer=dealer)
    forehand, middlehand = (dealer + 1) % 3, (dealer + 2) % 3
    assert game.forehand == forehand and game.middlehand == middlehand
    assert game.current_player == forehand
    name_trump_and_pass(game, "C")
    assert game.current_player == forehand  # R5: forehand leads the first trick
    play(game, "play TD")
    assert game.current_player == middlehand
    play(game, "play 9D")
    assert game.current_player == dealer


# ------------------------------------------------------------------------------------------------ sentence 3
@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_R21_deck_order(dealer):
    """R21 deck order: cards 1–3 forehand, 4–6 middlehand, 7–9 dealer, 10–11 forehand, 12–13 middlehand,
    14–15 dealer, 16–18 forehand, 19–21 middlehand, 22–24 dealer."""
    deck = ["9C", "JC", "QC", "KC", "TC", "AC", "9D", "JD", "QD", "KD", "TD", "AD",
            "9H", "JH", "QH", "KH", "TH", "AH", "9S", "JS", "QS", "KS", "TS", "AS"]
    game = Game.deal(THREE, deck=deck, dealer=dealer)
    forehand, middlehand = (dealer + 1) % 3, (dealer + 2) % 3
    by_position = lambda positions: {deck[p - 1] for p in positions}  # noqa: E731  (1-based, as in R21)
    assert hand(game, forehand) == by_position([1, 2, 3, 10, 11, 16, 17, 18])
    assert hand(game, middlehand) == by_position([4, 5, 6, 12, 13, 19, 20, 21])
    assert hand(game, dealer) == by_position([7, 8, 9, 14, 15, 22, 23, 24])
    assert game.first_three == sum(1 << parse_card(name) for name in deck[:3])
    assert [CARD_NAMES[c] for c in game.deck] == deck


def test_R21_deck_from_seat_hands_round_trip_and_errors():
    """R21 deck order: the helper places each hand's packets at their deck positions; bad decks name the fault."""
    deck = deck_from_seat_hands(*(h.split() for h in HANDS_A))
    assert deck[:3] == ["AC", "TC", "KC"] and deck[3:6] == ["9C", "JC", "AH"] and deck[6:9] == ["AS", "TS", "KS"]
    assert deck[9:11] == ["QC", "TD"] and deck[21:24] == ["9S", "KD", "QD"]
    with pytest.raises(ValueError, match="appears twice"):
        deck_from_seat_hands("AC TC KC QC TD JD 9H AC".split(), *(h.split() for h in HANDS_A[1:]))
    with pytest.raises(ValueError, match="needs 8 cards"):
        deck_from_seat_hands("AC TC".split(), *(h.split() for h in HANDS_A[1:]))
    with pytest.raises(ValueError, match="23 cards given"):
        Game.deal(THREE, deck=deck[:23], dealer=0)
    with pytest.raises(ValueError, match="dealer must be 0, 1 or 2"):
        Game.deal(THREE, deck=deck, dealer=3)


# ------------------------------------------------------------------------------------------------ sentence 4
def test_R21_forehand_names_trump_first():
    """R21: forehand names the trump suit (his first decision, before any card is played), choosing any suit."""
    game = deal(HANDS_A)
    assert game.stage == NAME_TRUMP and game.current_player == FH
    assert legal(game) == {"name trump C", "name trump D", "name trump H", "name trump S"}
    with pytest.raises(ValueError, match="illegal action 'play AC'"):
        play(game, "play AC")
    play(game, "name trump S")  # a suit he does not hold among his first three is allowed
    assert game.trump_suit == 3


def test_R21_forehand_sees_only_his_first_three_cards_when_naming():
    """R21: forehand names trump after seeing only his first three cards (his information set holds exactly
    those three; the other five are unknown to him until trump is named)."""
    from sixtysix_env.three_infoset import ThreeInformationSet

    game = deal(HANDS_A)
    info = ThreeInformationSet(game, FH)
    assert {CARD_NAMES[c] for c in cards_of(info.hand)} == {"AC", "TC", "KC"}
    play(game, "name trump C")
    info = ThreeInformationSet(game, FH)
    assert {CARD_NAMES[c] for c in cards_of(info.hand)} == set(HANDS_A[0].split())


# ------------------------------------------------------------------------------------------------ sentence 5
def test_R21_must_follow_suit_from_the_first_trick_without_obligation_to_win():
    """R21: from the first trick on a follower must follow suit, with any card of the suit (no obligation to win)."""
    game = deal(HANDS_A)
    name_trump_and_pass(game, "C")
    play(game, "play TD")
    assert game.stage == FOLLOW and legal(game) == {"play 9D", "play AD"}  # AD would win, 9D would not: both legal
    play(game, "play 9D")
    assert legal(game) == {"play KD", "play QD"}
    with pytest.raises(ValueError, match="illegal action 'play AS'"):
        play(game, "play AS")


def test_R21_void_must_trump_even_when_the_trump_cannot_win():
    """R21: a follower void in the suit led must trump when he can, even below a trump already played."""
    game = deal(HANDS_B)
    name_trump_and_pass(game, "D")
    play(game, "play AS")
    assert legal(game) == {"play AD", "play TD"}  # middlehand: void in spades, must trump
    play(game, "play AD")
    assert legal(game) == {"play KD", "play QD", "play JD", "play 9D"}  # dealer must trump, though AD wins
    play(game, "play 9D")
    assert game.tricks[-1] == (FH, (parse_card("AS"), parse_card("AD"), parse_card("9D")), MH)
    assert game.points(MH) == 11 + 11 + 0


def test_R21_void_without_trump_plays_any_card():
    """R21: a follower void in the suit led and in trumps may play any card."""
    game = deal(HANDS_B)
    name_trump_and_pass(game, "H")
    play(game, "play AS")
    assert legal(game) == {"play AH", "play TH", "play KH", "play QH"}  # middlehand must trump (hearts)
    play(game, "play QH")
    assert legal(game) == {"play 9H", "play JH"}  # dealer: trumps 9H JH, must trump although QH wins
    game2 = deal(HANDS_A)
    name_trump_and_pass(game2, "C")  # the dealer holds no club
    play(game2, "play 9H", "play AH")
    assert legal(game2) == {f"play {card}" for card in HANDS_A[2].split()}  # void in hearts and trumps: anything


def test_R21_trick_winner_of_three_cards():
    """R21 with R6: the highest trump wins; without a trump the highest card of the suit led; other suits never."""
    game = deal(HANDS_B)
    name_trump_and_pass(game, "D")
    play(game, "play 9C", "play TC", "play KC")  # no trump: highest club (T over K)
    assert game.leader == MH and game.points(MH) == 14
    play(game, "play AH", "play JH", "play 9S")  # forehand void in hearts and trumps: discards, hearts win
    assert game.leader == MH and game.points(MH) == 14 + 13


# ------------------------------------------------------------------------------------------------ sentence 6
def test_R21_early_marriage_before_the_first_lead_by_any_player():
    """R21 (switch three_player_early_marriage on, preset three): before the first lead each player in turn —
    forehand, middlehand, dealer — may announce his marriages without a trick (40 in trump, 20 otherwise, R11)."""
    game = deal(HANDS_A)
    play(game, "name trump C")
    assert game.stage == ANNOUNCE and game.current_player == FH
    assert legal(game) == {"pass", "announce C"}
    play(game, "announce C")
    assert legal(game) == {"pass"}
    play(game, "pass")
    assert game.current_player == MH and legal(game) == {"pass", "announce H"}
    play(game, "announce H", "pass")
    assert game.current_player == DL and legal(game) == {"pass", "announce S", "announce D"}
    play(game, "announce S", "announce D", "pass")
    assert game.stage == LEAD and game.current_player == FH
    assert game.marriage_points == [40, 20, 40]
    assert [game.points(seat) for seat in range(3)] == [0, 0, 0]  # R12: nobody has a trick yet
    assert hand(game, FH) >= {"KC", "QC"}  # shown, not led: both stay in the hand
    assert [marriage.led_card for marriage in game.marriages] == [-1, -1, -1, -1]  # shown, none led
    assert not legal(game) & {"marry KC", "marry QC"}  # once only: not again with the first lead
    with pytest.raises(ValueError, match="marry QC"):
        play(game, "marry QC")
    assert game.marriage_points == [40, 20, 40] and game.stage == LEAD


def test_R21_without_early_marriage_no_announcement_before_a_trick():
    """R21 (switch off): no announcement round, and forehand cannot announce with the first lead; from the
    second trick on the leader may announce and lead one of the pair (R11)."""
    game = deal(HANDS_A, rules=THREE_LATE)
    play(game, "name trump S")
    assert game.stage == LEAD and not any(a.startswith(("marry", "announce")) for a in legal(game))
    play(game, "play TD", "play AD", "play KD")  # middlehand wins with AD
    assert game.current_player == MH
    assert {"marry KH", "marry QH"} <= legal(game)
    play(game, "marry KH")
    assert game.marriage_points[MH] == 20 and game.trick_cards == [parse_card("KH")]
    assert game.marriages == [ThreeMarriage(MH, parse_card("KH") // 6, parse_card("KH"), 1)]  # led in trick 2
    assert game.points(MH) == 10 + 11 + 4 + 20  # he has a trick: the marriage counts


def test_R21_early_marriage_switch_allows_marriage_with_first_lead():
    """R21 (switch on): forehand may also announce with his first lead (it is before the first lead)."""
    game = deal(HANDS_A)
    name_trump_and_pass(game, "H")
    assert {"marry KC", "marry QC"} <= legal(game)
    play(game, "marry QC")
    assert game.marriage_points[FH] == 20 and game.trick_cards == [parse_card("QC")]
    assert game.marriages[-1].led_card == parse_card("QC") and game.marriages[-1].trick_index == 0


def test_R21_marriage_counts_only_if_the_player_wins_a_trick():
    """R21 with R12: a marriage counts only once its player wins a trick; a player who never wins one scores
    nothing for it, and the deal's points are then 120 card points plus the counted marriages only."""
    hands = ("AC TC KC QC JC 9C TS KS", "AH TH KH QH AD TD AS QS", "KD QD JD 9D JH 9H JS 9S")
    game = deal(hands)
    play(game, "name trump C", "pass", "announce H", "pass", "announce D", "pass")
    assert game.marriage_points == [0, 20, 20]
    play(game, "play TS", "play AS", "play 9S")  # middlehand wins a trick
    play_out_first_legal(game)
    assert game.tricks_won[DL] == 0, "the dealer's cards can never win a trick here"
    assert game.result.points[DL] == 0
    assert game.tricks_won[MH] > 0 and game.points(MH) == game.trick_points[MH] + 20
    assert sum(game.result.points) == 120 + 20


# ------------------------------------------------------------------------------------------------ sentence 7
def test_R21_most_points_after_the_last_trick_wins_one_game_point():
    """R21: each plays for himself; after the last (8th) trick the most points win 1 game point (below 66 too: the
    next test); there is no last-trick bonus (120 card points in all)."""
    game = deal(HANDS_B, rules=THREE_LATE)
    play(game, "name trump D")
    play_out_first_legal(game)
    assert game.stage == OVER and game.is_over and game.current_player is None and game.legal_actions() == []
    assert len(game.tricks) == 8 and sum(game.trick_points) == 120
    points = game.result.points
    winner = max(range(3), key=points.__getitem__)
    assert sorted(points)[-1] > sorted(points)[-2]
    assert game.result.winner == winner and game.result.game_points == 1
    assert game.returns() == tuple(1 if seat == winner else 0 for seat in range(3))
    for seat in range(3):
        assert points[seat] == sum(CARD_POINTS[c] for c in cards_of(game.won_cards[seat]))
    with pytest.raises(ValueError, match="the deal is over"):
        game.apply(0)


LOW_DECK = ["JC", "JH", "AH", "TD", "QS", "JS", "JD", "QD", "AC", "KC", "KS", "KH",
            "AS", "9H", "KD", "TH", "TS", "9C", "AD", "9S", "9D", "QC", "TC", "QH"]
LOW_PLAY = ["name trump H", "play AH", "play KH", "play QH", "play TS", "play JS", "play 9H", "play AC", "play 9C",
            "play AD", "play QD", "play JH", "play TD", "play JC", "play 9S", "play QC", "play KD", "play TH",
            "play 9D", "play KS", "play QS", "play JD", "play KC", "play AS", "play TC"]


def test_R21_the_most_points_win_even_below_66():
    """R21: the most points after the last trick win the deal and 1 game point, however few: here the dealer wins
    with 64 against 56 and 0 (no marriage, no last-trick bonus: 120 in all)."""
    game = Game.deal(THREE_LATE, deck=LOW_DECK, dealer=DL)
    play(game, *LOW_PLAY)
    assert game.is_over and game.result.points == (56, 0, 64)
    assert game.result.winner == DL and game.result.game_points == 1 and game.returns() == (0, 0, 1)


TIE_DECK = ["KC", "JD", "JH", "KD", "JS", "TH", "QD", "9C", "TS", "AD", "JC", "9S",
            "TC", "QH", "9H", "KS", "9D", "KH", "QC", "QS", "AC", "AH", "TD", "AS"]
TIE_PLAY = ["name trump C", "play KS", "play QS", "play AS", "play TS", "play KC", "play JS", "play KH", "play TH",
            "play AH", "play QH", "play JH", "play AC", "play 9S", "play 9C", "play JC", "play AD", "play KD",
            "play TD", "play JD", "play TC", "play QD", "play QC", "play 9H", "play 9D"]


def test_R21_tie_at_the_top_is_not_scored():
    """R21: a tie at the top is not scored (here 43:34:43: nobody scores a game point)."""
    game = Game.deal(THREE_LATE, deck=TIE_DECK, dealer=DL)
    play(game, *TIE_PLAY)
    assert game.result.points == (43, 34, 43)
    assert game.result.winner is None and game.result.game_points == 0 and game.returns() == (0, 0, 0)


# ------------------------------------------------------------------------------------------------ sentence 8
def test_R21_two_player_game_with_the_dealer_sitting_out():
    """R21: three players may instead play the two-player game with the dealer sitting out; the dealer rotates,
    the person left of him is forehand, and game points (R16) go to the two people who played."""
    from sixtysix_env.match import DealerSitsOutMatch

    match = DealerSitsOutMatch(Rules.preset("standard"), first_dealer=0, seed=3)
    dealers = []
    for _ in range(6):
        dealer = match.dealer
        dealers.append(dealer)
        seats = match.seats()
        assert dealer not in seats and sorted(seats + (dealer,)) == [0, 1, 2]
        game = match.new_deal()
        assert game.rules.players == 2 and seats[game.forehand] == (dealer + 1) % 3
        before = list(match.scores)
        while not game.is_over:
            game.apply(game.legal_actions()[0])
        match.record_deal(game)
        assert match.scores[dealer] == before[dealer]  # the dealer sat out
        if game.result.winner is not None:
            assert match.scores[seats[game.result.winner]] == before[seats[game.result.winner]] + game.result.game_points
    assert dealers == [0, 1, 2, 0, 1, 2]


def test_R21_three_player_bummerl_to_seven():
    """R21 with R17: a Bummerl of the three-player game ends when one person has 7 game points, one per deal won."""
    from sixtysix_env.match import ThreePlayerMatch, play_three_person_match

    match = play_three_person_match(ThreePlayerMatch(THREE, first_dealer=1, seed=5),
                                    lambda game, person: game.legal_actions()[-1])
    assert max(match.scores) == 7 and match.winner == match.scores.index(7) and sorted(match.scores)[1] < 7
    assert sum(match.scores) == sum(sum(entry.game_points) for entry in match.deals)
    assert [entry.dealer for entry in match.deals[:4]] == [1, 2, 0, 1]
    with pytest.raises(ValueError, match="the match is over"):
        match.new_deal()


# ------------------------------------------------------------------------------------------------ API
def test_three_player_api_clone_and_errors():
    """The three-player game offers the two-player state API; clones are independent; bad input names the fault."""
    game = Game.deal(THREE, seed=11, dealer=1)
    assert isinstance(game, ThreePlayerGame) and game.num_actions == NUM_ACTIONS_THREE == 45
    twin = game.clone()
    play_out_first_legal(twin)
    assert twin.is_over and not game.is_over and game.history == []
    assert Game.deal(THREE, seed=11, dealer=1).deck == game.deck  # seeded deals reproduce
    with pytest.raises(ValueError, match="malformed action 'name trump X'"):
        parse_three_player_action("name trump X")
    with pytest.raises(ValueError, match="not an action id"):
        game.apply(99)
    with pytest.raises(ValueError, match="players=3"):
        ThreePlayerGame.deal(Rules(), seed=1)
    assert parse_three_player_action("Name Trump h") == 39 and parse_three_player_action("announce s") == 44
    assert parse_three_player_action("play AH") == parse_card("AH")


def test_a_malformed_three_player_action_lists_the_three_player_names_too():
    """R21: the message names 'name trump X' and 'announce X' beside the moves both games share; a bad card stays
    a bad card."""
    from sixtysix_env.three import parse_three_player_action

    with pytest.raises(ValueError, match=r"'play XY'.*'name trump X' or 'announce X'"):
        parse_three_player_action("junk")
    with pytest.raises(ValueError, match=r"malformed card 'ZZ'") as refused:
        parse_three_player_action("play ZZ")
    assert "announce" not in str(refused.value)
    for bare in ("play", "marry", "play QH KH"):  # the two-player message offered exchange, close, declare, draw
        with pytest.raises(ValueError, match=r"'name trump X' or 'announce X'.*\(three players, R21\)") as refused:
            parse_three_player_action(bare)
        assert "exchange" not in str(refused.value), bare


def test_three_player_seat_arguments_are_checked_by_name():
    """R21: seats are 0, 1 and 2; anything else is refused naming the argument, as in the two-player engine."""
    import numpy as np

    game = Game.deal(Rules.preset("three"), seed=5)
    assert game.hand(np.int64(2)) == game.hand(2) and game.points(2) == 0
    for seat in (-1, 3, "0", True, 1.0):
        with pytest.raises(ValueError, match="player must be 0, 1 or 2"):
            game.hand(seat)
        with pytest.raises(ValueError, match="player must be 0, 1 or 2"):
            game.points(seat)
        with pytest.raises(ValueError, match="viewer must be 0, 1 or 2"):
            game.render(viewer=seat)
        with pytest.raises(ValueError, match="dealer must be 0, 1 or 2"):
            Game.deal(Rules.preset("three"), seed=5, dealer=seat)
    assert game.render(viewer=0) != game.render(viewer=1)


def test_R21_the_two_player_switches_are_exactly_those_of_R9_to_R13_R17_and_R18():
    """R21: the switches refused with three players, spelled out so that a switch dropped from the list fails."""
    assert set(TWO_PLAYER_SWITCHES) == {
        "exchange_needs_trick", "exchange_after_opponent_closes", "close_draw_option", "marriage_needs_trick",
        "marriage_in_phase2", "auto_declare", "allow_false_declaration", "schneider_bummerl", "partie_bummerl"}


@pytest.mark.parametrize("switch", TWO_PLAYER_SWITCHES)
def test_R21_switches_of_the_two_player_game_are_refused_with_three_players(switch):
    """R21 has no talon, no declaring and a single Bummerl: a switch of R9-R13, R17's Schneider or R18's Partie given
    with players=3 would change nothing, so it is refused by name instead of ignored; R17's target applies."""
    default = getattr(Rules(), switch)
    other = (not default) if isinstance(default, bool) else 3
    with pytest.raises(ValueError, match=f"Rules.{switch} applies only to the two-player game"):
        Rules.preset("three", **{switch: other})
    assert Rules.preset("three", **{switch: default}) == THREE  # the default itself is accepted
    assert Rules.preset("three", bummerl_target=5).bummerl_target == 5

