"""One test (or more) per rule id of docs/rules.md R1–R20 and per switch value, each from an explicit deck in R4 order.

Decks are spelled with ``deck_from_hands(forehand, dealer, trump card, talon top first)``; a partial talon is
completed in ascending card order. Unless a test says otherwise player 0 deals, so player 1 is forehand:
``FH = 1``, ``DL = 0``. Card points (R1): A 11, T 10, K 4, Q 3, J 2, 9 0.
"""

from __future__ import annotations

import pytest

from sixtysix_env import ACTION_NAMES, DealResult, Game, Rules, parse_action
from sixtysix_env.actions import DECLARE
from sixtysix_env.cards import CARD_NAMES, CARD_POINTS, cards_of, deck_cards, parse_card
from sixtysix_env.game import FOLLOW, LEAD, OVER, PREDRAW, RESPOND_CLOSE, shuffled_deck
from sixtysix_env.record import deck_from_hands

STANDARD = Rules.preset("standard")
PADERBORN = Rules.preset("paderborn")
SCHARF = Rules.preset("scharf")
FH, DL = 1, 0  # with dealer 0: player 1 is forehand (R3)


def deal(forehand: str, dealer: str, trump: str, talon: str = "", rules: Rules = STANDARD, dealer_seat: int = DL):
    deck = deck_from_hands(forehand.split(), dealer.split(), trump, talon.split(), deck_size=rules.deck)
    return Game.deal(rules, deck=deck, dealer=dealer_seat)


def play(game: Game, *actions: str) -> None:
    for text in actions:
        game.apply(parse_action(text))


def trick(game: Game, lead: str, follow: str) -> None:
    """Play one trick; with ``close_draw_option`` the winner then chooses ``draw`` (the tests that close before
    drawing do so explicitly)."""
    play(game, f"play {lead}", f"play {follow}")
    if game.stage == PREDRAW:
        play(game, "draw")


def legal(game: Game) -> set[str]:
    return {ACTION_NAMES[action] for action in game.legal_actions()}


def hand(game: Game, player: int) -> set[str]:
    return {CARD_NAMES[card] for card in cards_of(game.hands[player])}


def won_card_points(game: Game, player: int) -> int:
    return sum(CARD_POINTS[card] for card in cards_of(game.won_cards[player]))


# ------------------------------------------------------------------------------------------------ R1, R2 cards
def test_R1_cards_names_ranks_points():
    """R1: 24 cards, written rank then suit; A 11, T 10, K 4, Q 3, J 2, 9 0; 120 card points; rank order 9<J<Q<K<T<A."""
    assert len(CARD_NAMES) == 24 and len(set(CARD_NAMES)) == 24
    assert sum(CARD_POINTS) == 120
    assert [CARD_POINTS[parse_card(name)] for name in ("AH", "TH", "KH", "QH", "JH", "9H")] == [11, 10, 4, 3, 2, 0]
    ids = [parse_card(name) for name in ("9S", "JS", "QS", "KS", "TS", "AS")]
    assert ids == sorted(ids), "a higher id beats a lower one in the same suit"
    assert parse_card("ah") == parse_card(" AH ") == parse_card("AH")


@pytest.mark.parametrize("text", ["", "A", "AX", "1H", "10H", "AHH", "HA", None, 17])
def test_R1_malformed_card_is_rejected(text):
    """R1: anything but rank-then-suit text is rejected with a clear ValueError."""
    with pytest.raises(ValueError, match="malformed card"):
        parse_card(text)


def test_R2_deck_24_has_nines_and_a_talon_of_eleven():
    """R2 ``deck: 24``: all 24 cards; 11 face-down talon cards plus the trump card (R4)."""
    game = Game.deal(STANDARD, seed=5)
    assert sorted(game.deck) == list(range(24))
    assert game.face_down_count == 11 and game.talon_size == 12


def test_R2_deck_20_removes_the_nines():
    """R2 ``deck: 20``: the nines are removed; 7 face-down cards plus the trump card; still 120 card points."""
    rules = Rules(deck=20)
    game = Game.deal(rules, seed=5)
    assert len(game.deck) == 20 and not any(CARD_NAMES[card][0] == "9" for card in game.deck)
    assert game.face_down_count == 7 and game.talon_size == 8
    assert sum(CARD_POINTS[card] for card in deck_cards(20)) == 120
    with pytest.raises(ValueError, match="not in the 20-card deck"):
        Game.deal(rules, deck=["9C"] + [CARD_NAMES[c] for c in deck_cards(20)[1:]])
    with pytest.raises(ValueError, match="20-card game needs 20"):
        Game.deal(rules, deck=[CARD_NAMES[c] for c in range(24)])


def test_R2_deck_20_trump_jack_exchanges():
    """R2 + R9: with 20 cards the trump jack takes the role of the trump nine."""
    game = deal("JH AC TC KC QC AD", "TD KD QD JD AS TS", "QH", rules=Rules(deck=20))
    assert "exchange" in legal(game)
    play(game, "exchange")
    assert "QH" in hand(game, FH) and "JH" not in hand(game, FH)
    assert CARD_NAMES[game.bottom_card] == "JH"


# ------------------------------------------------------------------------------------------------ R3, R4 dealing
@pytest.mark.parametrize("dealer", [0, 1])
def test_R3_forehand_is_the_non_dealer(dealer):
    """R3: the non-dealer is forehand; R5: forehand leads the first trick."""
    game = Game.deal(STANDARD, seed=1, dealer=dealer)
    assert game.forehand == 1 - dealer and game.current_player == 1 - dealer and game.stage == LEAD


def test_R3_deals_alternate_in_a_match():
    """R3: the first dealer is drawn at random, afterwards the deal alternates (Match)."""
    from sixtysix_env.match import Match

    first_dealers = {Match(STANDARD, seed=seed).first_dealer for seed in range(20)}
    assert first_dealers == {0, 1}
    match = Match(STANDARD, first_dealer=1)
    dealers = []
    for seed in range(4):
        game = match.new_deal(seed=seed)
        dealers.append(game.dealer)
        game.forfeit(game.forehand)  # any finished deal will do
        match.record_deal(game)
    assert dealers == [1, 0, 1, 0]


@pytest.mark.parametrize("dealer", [0, 1])
def test_R4_deal_positions(dealer):
    """R4: cards 1–3 forehand, 4–6 dealer, 7–9 forehand, 10–12 dealer, 13 the trump card, 14–24 the talon."""
    deck = ["AC", "TC", "KC", "AD", "TD", "KD", "QC", "JC", "9C", "QD", "JD", "9D",
            "JH", "9H", "QH", "KH", "TH", "AH", "9S", "JS", "QS", "KS", "TS", "AS"]
    game = Game.deal(STANDARD, deck=deck, dealer=dealer)
    forehand = 1 - dealer
    assert hand(game, forehand) == {"AC", "TC", "KC", "QC", "JC", "9C"}
    assert hand(game, dealer) == {"AD", "TD", "KD", "QD", "JD", "9D"}
    assert CARD_NAMES[game.trump_card] == "JH" and game.trump_suit == 2
    assert [CARD_NAMES[c] for c in game.stock] == deck[13:]
    assert game.talon_size == 12 and game.face_down_count == 11  # the trump card counts while it lies there
    assert CARD_NAMES[game.bottom_card] == "JH"
    assert deck_from_hands(deck[0:3] + deck[6:9], deck[3:6] + deck[9:12], deck[12], deck[13:]) == deck


def test_R4_same_seed_same_deal():
    """R4/R3: a seed fixes the deck order; the same seed and actions always give the same game."""
    assert shuffled_deck(24, 123) == shuffled_deck(24, 123) != shuffled_deck(24, 124)
    assert sorted(shuffled_deck(24, 7)) == list(range(24))


# ------------------------------------------------------------------------------------------------ R5, R6 tricks
def test_R5_trick_winner_leads_next():
    """R5: forehand leads the first trick; the winner of a trick leads the next one (also when he followed)."""
    game = deal("9C AD TD KD QD JD", "AC 9S JS QS KS TS", "JH")
    assert game.current_player == FH
    trick(game, "9C", "AC")  # dealer wins
    assert game.current_player == DL and game.leader == DL and game.stage == LEAD
    trick(game, "9S", "AD")  # forehand discards: dealer (leader) wins again
    assert game.current_player == DL


@pytest.mark.parametrize(
    "lead, follow, winner",
    [
        ("KC", "AC", "follower"),  # higher card of the suit led wins
        ("AC", "KC", "leader"),  # lower card of the suit led loses
        ("AC", "9H", "follower"),  # a trump on a non-trump lead wins
        ("9H", "AC", "leader"),  # trump led: a non-trump Ace loses
        ("QH", "KH", "follower"),  # trump led: the higher trump wins
        ("KH", "QH", "leader"),
        ("9C", "AS", "leader"),  # a card of another non-trump suit never wins
    ],
)
def test_R6_trick_winner(lead, follow, winner):
    """R6: higher card of the suit led wins, unless trumped; trump led: higher trump; off-suit never wins."""
    game = deal(f"{lead} 9D JD QD KD TD", f"{follow} 9S JS QS KS TS", "JH")
    play(game, f"play {lead}", f"play {follow}")
    expected = FH if winner == "leader" else DL
    assert game.tricks[-1][3] == expected
    assert game.trick_points[expected] == CARD_POINTS[parse_card(lead)] + CARD_POINTS[parse_card(follow)]
    assert game.trick_points[1 - expected] == 0


# ------------------------------------------------------------------------------------------------ R7 phase 1
def test_R7_phase1_no_obligation_to_follow_or_win():
    """R7: with the talon open the follower may play any card (here he could follow, win or trump)."""
    game = deal("KC 9D JD QD KD TD", "AC 9C 9H AS QS TS", "JH")
    play(game, "play KC")
    assert legal(game) == {f"play {c}" for c in ("AC", "9C", "9H", "AS", "QS", "TS")}
    play(game, "play QS")  # discarding is allowed
    assert game.tricks[-1][3] == FH


@pytest.mark.parametrize("dealer", [0, 1])
def test_R7_draw_order_and_last_talon_trick(dealer):
    """R7: the trick winner draws the top talon card, then the loser; the loser of the trick that empties the
    talon takes the trump card (the winner the last face-down card)."""
    rules = Rules(auto_declare=False)  # nobody ends the deal early: six full phase-1 tricks
    deck = ["AD", "TC", "9D", "9S", "KS", "AS", "9H", "QC", "AH", "JC", "TS", "QD",  # R4: hands, trump card KC,
            "KC", "QH", "JH", "TD", "JS", "KH", "TH", "KD", "AC", "JD", "QS", "9C"]  # then the talon, top first
    game = Game.deal(rules, deck=deck, dealer=dealer)
    stock = list(game.stock)
    for number in range(6):
        assert not game.phase2
        leader = game.current_player
        lead = min(cards_of(game.hands[leader]))
        follow = min(cards_of(game.hands[1 - leader]))
        hands_before = list(game.hands)
        play(game, f"play {CARD_NAMES[lead]}", f"play {CARD_NAMES[follow]}")
        winner = game.tricks[-1][3]
        loser = 1 - winner
        drawn_by_winner = cards_of(game.hands[winner] & ~hands_before[winner])
        drawn_by_loser = cards_of(game.hands[loser] & ~hands_before[loser])
        assert drawn_by_winner == [stock[2 * number]]
        if number < 5:
            assert drawn_by_loser == [stock[2 * number + 1]]
        else:
            assert drawn_by_loser == [game.trump_card]
            assert game.bottom_taker == loser and game.bottom_card is None
    assert game.talon_size == 0 and game.phase2 and not game.is_closed


def test_R7_loser_of_last_talon_trick_takes_the_exchanged_nine():
    """R7 + R9: after an exchange the card under the talon is the trump nine; the loser of the last talon trick
    takes it. (Forehand wins five tricks, exchanges with one face-down card left, then loses the sixth.)"""
    game = deal("9H AC AD AS TC TD", "9C 9D 9S JC JD JS", "JH", talon="QC QS QD KS QH KC TH KD AH KH TS")
    for lead, follow in (("AC", "9C"), ("AD", "9D"), ("AS", "9S"), ("TC", "JC"), ("TD", "JD")):
        trick(game, lead, follow)
    assert game.face_down_count == 1 and game.points(FH) == 57
    play(game, "exchange")
    trick(game, "QC", "KC")  # dealer wins the talon's last trick
    assert hand(game, DL) >= {"TS"} and "9H" in hand(game, FH)
    assert game.bottom_taker == FH and game.bottom_card is None and game.phase2


# ------------------------------------------------------------------------------------------------ R8 phase 2
def closed_game(dealer_hand: str, forehand_hand: str = "QC KC 9D QH AH AS"):
    """Forehand closes at once (R10), so R8 applies from the first trick; trump is Hearts (JH turned up)."""
    game = deal(forehand_hand, dealer_hand, "JH")
    play(game, "close")
    assert game.phase2
    return game


def test_R8a_must_win_with_higher_card_of_suit_led():
    """R8 (a): the follower must win with a higher card of the suit led if he can (not with a trump)."""
    game = closed_game("9C KC AC 9H TH 9S", forehand_hand="QC JC 9D QH AH AS")
    play(game, "play QC")
    assert legal(game) == {"play KC", "play AC"}


def test_R8b_following_suit_before_trumping():
    """R8 (b): unable to win in the suit, he must play a lower card of it: following suit comes before trumping."""
    game = closed_game("9C JC 9H TH 9S JS", forehand_hand="QC KC 9D QH AH AS")
    play(game, "play KC")
    assert legal(game) == {"play 9C", "play JC"}
    with pytest.raises(ValueError, match="illegal action 'play 9H'"):
        play(game, "play 9H")
    assert game.stage == FOLLOW and game.current_player == DL and "9H" in hand(game, DL)  # state unchanged


def test_R8c_void_must_trump():
    """R8 (c): void in the suit led, he must win with a trump."""
    game = closed_game("9H TH 9S JS QS KS")
    play(game, "play KC")
    assert legal(game) == {"play 9H", "play TH"}


def test_R8d_void_without_trumps_plays_anything():
    """R8 (d): no card of the suit led and no trump: any card."""
    game = closed_game("9S JS QS KS 9D JD", forehand_hand="QC KC TD QH AH AS")
    play(game, "play KC")
    assert legal(game) == {f"play {c}" for c in ("9S", "JS", "QS", "KS", "9D", "JD")}


def test_R8_trump_led():
    """R8 with trump led: a higher trump if possible, else a lower trump, else anything."""
    game = closed_game("9H KH AC 9S JS QS", forehand_hand="QC KC 9D QH AH AS")
    play(game, "play QH")
    assert legal(game) == {"play KH"}
    game = closed_game("9H AC TC 9S JS QS", forehand_hand="QC KC 9D QH AH AS")
    play(game, "play QH")
    assert legal(game) == {"play 9H"}


def test_R8_applies_after_the_talon_is_exhausted():
    """R8: phase 2 also starts when the talon is used up (not only after closing)."""
    game = deal("9H AC AD AS TC TD", "9C 9D 9S JC JD JS", "JH", talon="QC QS QD KS QH KC TH KD AH KH TS")
    for lead, follow in (("AC", "9C"), ("AD", "9D"), ("AS", "9S"), ("TC", "JC"), ("TD", "JD"), ("QC", "KC")):
        trick(game, lead, follow)
    assert game.phase2 and not game.is_closed and game.current_player == DL
    assert hand(game, FH) == {"9H", "JH", "QH", "TH", "AH", "QD"}
    play(game, "play JS")
    assert legal(game) == {"play 9H", "play JH", "play QH", "play TH", "play AH"}  # void in spades: must trump


def test_R8_renonce_forfeit_scores_three():
    """R8 + R16: a Renonce loses the deal; the opponent scores 3 game points (``Game.forfeit``)."""
    game = closed_game("9C JC 9H TH 9S JS")
    play(game, "play KC")
    game.forfeit(DL, "renonce")
    assert game.is_over and game.current_player is None and game.legal_actions() == []
    assert game.result.winner == FH and game.result.game_points == 3 and game.result.reason == "renonce"
    assert game.returns() == (-3, 3)
    with pytest.raises(ValueError, match="already over"):
        game.forfeit(FH)
    with pytest.raises(ValueError, match="deal is over"):
        play(game, "play 9C")


# ------------------------------------------------------------------------------------------------ R9 exchange
def test_R9_exchange_standard_forehand_before_first_lead():
    """R9 ``exchange_needs_trick: false``: forehand may exchange the trump nine before the first lead; it is the
    first optional step (close may follow, a second exchange may not)."""
    game = deal("9H AC TC KC QC AD", "TD KD QD JD AS TS", "JH")
    assert "exchange" in legal(game)
    play(game, "exchange")
    assert "JH" in hand(game, FH) and "9H" not in hand(game, FH)
    assert CARD_NAMES[game.bottom_card] == "9H" and game.talon_size == 12
    assert [(e.player, CARD_NAMES[e.laid_card], CARD_NAMES[e.taken_card]) for e in game.exchanges] == [(FH, "9H", "JH")]
    assert "exchange" not in legal(game) and "close" in legal(game)


def test_R9_exchange_by_the_dealer_after_winning_a_trick():
    """R9: the nine's holder exchanges on his own turn as leader (the dealer, once he leads)."""
    game = deal("9C AD TD KD QD JD", "9H AC JS QS KS TS", "JH")
    assert "exchange" not in legal(game)  # forehand does not hold the nine
    trick(game, "9C", "AC")
    assert game.current_player == DL and "exchange" in legal(game)


def test_R9_exchange_needs_trick_paderborn():
    """R9 ``exchange_needs_trick: true`` (paderborn): not before the holder has won a trick."""
    game = deal("9H AC TC KC QC AD", "TD KD QD JD AS TS", "JH", rules=PADERBORN)
    assert "exchange" not in legal(game)
    trick(game, "AC", "TD")
    assert game.current_player == FH and "exchange" in legal(game)
    standard = deal("9H AC TC KC QC AD", "TD KD QD JD AS TS", "JH", rules=Rules(exchange_needs_trick=False))
    assert "exchange" in legal(standard)


def test_R9_exchange_with_one_face_down_card_but_no_close():
    """R9: exchanging is allowed with only one face-down card on the trump card; R10: closing is not."""
    game = deal("9H AC AD AS TC TD", "9C 9D 9S JC JD JS", "JH", talon="QC QS QD KS QH KC TH KD AH KH TS")
    for lead, follow in (("AC", "9C"), ("AD", "9D"), ("AS", "9S"), ("TC", "JC")):
        trick(game, lead, follow)
    assert game.face_down_count == 3 and {"close", "exchange"} <= legal(game)
    trick(game, "TD", "JD")
    assert game.face_down_count == 1 and game.talon_size == 2
    assert "exchange" in legal(game) and "close" not in legal(game)


def test_R9_no_exchange_when_closed():
    """R9: no exchange once the talon is closed (standard), neither by the closer nor by his opponent later."""
    game = deal("9H AC TC KC QC AD", "TD KD QD JD AS TS", "JH")
    play(game, "close")
    assert "exchange" not in legal(game)
    game = deal("9C AD TD KD QD JD", "9H AC JS QS KS TS", "JH")
    play(game, "close")
    assert game.stage == LEAD and game.current_player == FH
    trick(game, "9C", "AC")  # the dealer wins and leads, holding the nine, but the talon is closed
    assert game.current_player == DL and "exchange" not in legal(game)


def test_R9_no_exchange_after_the_talon_is_exhausted():
    """R9: the exchange needs an open talon; once it is used up the nine's holder can no longer exchange."""
    game = deal("AC AD AS TC TD 9D", "9C 9H 9S JC JD JS", "JH", talon="QC KC QD KD QH KH TH AH QS KS TS")
    for lead, follow in (("AC", "9C"), ("AD", "JD"), ("AS", "9S"), ("TC", "JC"), ("TD", "JS"), ("9D", "KD")):
        trick(game, lead, follow)
    assert game.talon_size == 0 and game.current_player == DL and "9H" in hand(game, DL)
    assert "exchange" not in legal(game)


def test_R9_exchange_after_opponent_closes_paderborn():
    """R9 ``exchange_after_opponent_closes: true``: right after the opponent closes, the other player may still
    exchange once, before the first card is led, even without a trick."""
    game = deal("AC TC KC QC AD JD", "9H TD KD QD AS TS", "JH", rules=PADERBORN)
    play(game, "close")
    assert game.stage == RESPOND_CLOSE and game.current_player == DL and not game.tricks_won[DL]
    assert legal(game) == {"exchange", "pass"}
    play(game, "exchange")
    assert "JH" in hand(game, DL) and CARD_NAMES[game.bottom_card] == "9H"
    assert game.stage == LEAD and game.current_player == FH


def test_R9_exchange_after_opponent_closes_pass_without_nine():
    """R9 paderborn: the respond stage comes after every closing; without the nine only ``pass`` is legal."""
    game = deal("AC TC KC QC AD JD", "9S TD KD QD AS TS", "JH", rules=PADERBORN)
    play(game, "close")
    assert game.stage == RESPOND_CLOSE and legal(game) == {"pass"}
    play(game, "pass")
    assert game.stage == LEAD and game.current_player == FH and game.is_closed


def test_R9_exchange_after_opponent_closes_off_in_standard():
    """R9 ``exchange_after_opponent_closes: false`` (standard): the closer goes on to lead at once."""
    game = deal("AC TC KC QC AD JD", "9H TD KD QD AS TS", "JH")
    play(game, "close")
    assert game.stage == LEAD and game.current_player == FH
    assert "pass" not in legal(game) and "exchange" not in legal(game)


# ------------------------------------------------------------------------------------------------ R10 close
def test_R10_close_needs_two_face_down_cards():
    """R10: the leader may close only with at least two face-down cards on the trump card."""
    game = deal("9H AC AD AS TC TD", "9C 9D 9S JC JD JS", "JH", talon="QC QS QD KS QH KC TH KD AH KH TS")
    assert "close" in legal(game)
    for lead, follow in (("AC", "9C"), ("AD", "9D"), ("AS", "9S"), ("TC", "JC")):
        trick(game, lead, follow)
    assert game.face_down_count == 3 and "close" in legal(game)
    trick(game, "TD", "JD")
    assert game.face_down_count == 1 and "close" not in legal(game)
    with pytest.raises(ValueError, match="illegal action 'close'"):
        play(game, "close")


def test_R10_close_stops_drawing_and_starts_phase2():
    """R10: after closing nobody draws; R8 applies; the talon stays as it is."""
    game = deal("AC TC KC QC AD JD", "9C TD KD QD AS TS", "JH")
    play(game, "close")
    assert game.closed_by == FH and game.phase2 and game.face_down_count == 11
    trick(game, "AC", "9C")
    assert game.hands[FH].bit_count() == 5 and game.hands[DL].bit_count() == 5
    assert game.face_down_count == 11 and "close" not in legal(game)


def test_R10_no_last_trick_bonus_after_closing():
    """R10/R14: a closed deal played to the end gives no 10 points for the last trick."""
    game = deal("9C 9D 9S JC JD JS", "AC AD AS TC TD KH", "JH")
    play(game, "close")
    for lead, follow in (("9C", "AC"), ("AD", "9D"), ("AS", "9S"), ("TC", "JC"), ("TD", "JD"), ("KH", "JS")):
        trick(game, lead, follow)
    assert game.is_over and game.result.reason == "closer failed"
    assert game.trick_points[DL] == won_card_points(game, DL) == 63  # no +10
    assert game.result.winner == DL and game.result.game_points == 3  # dealer trickless at the closing


@pytest.mark.parametrize("auto_declare", [True, False])
def test_R10_closer_reaches_exactly_66_with_his_last_trick(auto_declare):
    """R10/R13/R14: the closer has 60 before the last trick and exactly 66 after it (no last-trick bonus after a
    closing): he has made it, and the trickless opponent loses 3. With auto_declare off the closer gets one more
    turn whose only action is to declare."""
    game = deal("AC AS AD TC TS KD", "9C KC 9S QS 9D JD", "JH", rules=Rules(auto_declare=auto_declare))
    play(game, "close")
    for lead, follow in (("AC", "9C"), ("AS", "9S"), ("AD", "9D"), ("TC", "KC"), ("TS", "QS")):
        trick(game, lead, follow)
    assert game.points(FH) == 60 and not game.is_over
    trick(game, "KD", "JD")
    if not auto_declare:
        assert legal(game) == {"declare"} and game.current_player == FH
        play(game, "declare")
    assert game.result == (FH, 3, "declared", (0, 66))


def test_R10_closer_failed_opponent_declares_first_trickless_at_close():
    """R10/R16: the closer's opponent reaches 66 first; he was trickless at the closing: 3 game points."""
    game = deal("9C JC QC 9D JD QD", "AC TC AD TD KS QS", "JH")
    play(game, "close", "play 9C", "play AC")
    play(game, "marry KS", "play 9D")
    trick(game, "TC", "QC")
    trick(game, "AD", "JD")
    assert not game.is_over
    play(game, "play TD", "play QD")
    assert game.is_over and game.result == (DL, 3, "closer failed", (74, 0))
    assert game.hands[FH] and game.hands[DL]  # ended before the last trick: the opponent declared first


def test_R10_closer_failed_opponent_had_a_trick_scores_two():
    """R10/R16: the closer fails and his opponent had won a trick before the closing: 2 game points."""
    game = deal("AS 9C JC QC 9D JD", "TD AC TC AD KS QS", "JH", talon="9S KD KC QD")
    trick(game, "9D", "TD")  # dealer wins a trick before the closing
    trick(game, "9S", "AS")
    play(game, "close")
    trick(game, "9C", "AC")
    play(game, "marry KS", "play JD")
    trick(game, "TC", "JC")
    play(game, "play AD", "play KD")
    assert game.result == (DL, 2, "closer failed", (74, 11))


def test_R10_closer_failed_three_even_if_opponent_wins_tricks_later():
    """R16 second line: "trickless at the moment of closing" — tricks won after the closing do not change it
    (searched deal: forehand closes at 39:0 and fails)."""
    game = deal("JH AC TH JS 9S QH", "9C AH QC AD KS 9H", "TC", talon="AS KH KC JC TD TS KD 9D QD JD QS")
    play(game, "play AC", "play 9C", "play QH", "play KS", "play TH", "play AD", "close")
    assert game.points(FH) == 39 and game.tricks_won[DL] == 0
    play(game, "play JS", "play TS", "play AH", "play JH", "play KH", "play KC", "play AS", "play QC",
         "play 9H", "play 9S", "play JC", "play TD")
    assert game.tricks_won[DL] == 5
    assert game.result == (DL, 3, "closer failed", (51, 47))


MANUAL = Rules(auto_declare=False)


def test_R10_R13_manual_closer_winning_the_last_trick_at_66_gets_one_turn_to_declare():
    """R10 with ``auto_declare`` off: the closer reaches 66 with the last trick; the deal does not end as
    "declared" by itself: he gets that one turn, whose only action is ``declare`` (R13), and it scores by R16's
    first line."""
    game = deal("AC AD AS TC TD TS", "9C 9D 9S JC JD JS", "JH", rules=MANUAL)
    play(game, "close")
    for lead, follow in (("AC", "9C"), ("AD", "9D"), ("AS", "9S"), ("TC", "JC"), ("TD", "JD"), ("TS", "JS")):
        trick(game, lead, follow)
    assert not game.hands[FH] and not game.hands[DL]
    assert not game.is_over and game.result is None and game.current_player == FH
    assert game.points(FH) == 69 and legal(game) == {"declare"}
    play(game, "declare")
    assert game.result == (FH, 3, "declared", (0, 69))
    assert game.history[-1] == parse_action("declare")


def test_R10_R16_manual_closer_who_let_his_turns_at_66_pass_and_lost_the_last_trick_failed():
    """R10/R16 second line with ``auto_declare`` off: the closer is at 71 and may declare, plays on instead, and the
    opponent wins the last trick: no turn is left, so the closer has failed (not "declared")."""
    game = deal("AC AD AS TC TD 9S", "KC KD QC QD KS AH", "JH", rules=MANUAL)
    play(game, "close")
    for lead, follow in (("AC", "KC"), ("AD", "KD"), ("TC", "QC"), ("TD", "QD"), ("AS", "KS")):
        trick(game, lead, follow)
    assert game.points(FH) == 71 and "declare" in legal(game)  # his turn at 66 or more
    trick(game, "9S", "AH")  # void in spades, the dealer must trump (R8c) and wins the last trick
    assert game.result == (DL, 3, "closer failed", (11, 71))  # the dealer was trickless at the closing


def test_R10_R13_same_closing_with_auto_declare_ends_declared_at_66():
    """R13 ``auto_declare`` on, the same cards as the manual case above: the closer declares automatically at 71."""
    game = deal("AC AD AS TC TD 9S", "KC KD QC QD KS AH", "JH")
    play(game, "close")
    for lead, follow in (("AC", "KC"), ("AD", "KD"), ("TC", "QC"), ("TD", "QD"), ("AS", "KS")):
        trick(game, lead, follow)
    assert game.result == (FH, 3, "declared", (0, 71))


def test_R10_close_draw_option_paderborn():
    """R10 ``close_draw_option: true``: the trick winner may close before drawing (both keep five cards) or draw
    and then close."""
    game = deal("AC TC KC QC AD JD", "9C TD KD QD AS TS", "JH", rules=PADERBORN)
    play(game, "play AC", "play 9C")
    assert game.stage == PREDRAW and game.current_player == FH and legal(game) == {"close", "draw"}
    play(game, "close")
    assert game.hands[FH].bit_count() == 5 and game.hands[DL].bit_count() == 5 and game.face_down_count == 11
    assert game.stage == RESPOND_CLOSE  # paderborn also has exchange_after_opponent_closes
    play(game, "pass")
    assert game.current_player == FH and game.stage == LEAD

    game = deal("AC TC KC QC AD JD", "9C TD KD QD AS TS", "JH", rules=PADERBORN)
    play(game, "play AC", "play 9C", "draw")
    assert game.hands[FH].bit_count() == 6 and game.hands[DL].bit_count() == 6 and game.face_down_count == 9
    assert game.stage == LEAD and "close" in legal(game)


def test_R9_R10_paderborn_the_trick_winner_exchanges_then_closes_before_drawing():
    """R9 then R10 in one turn (exchange comes first): under ``close_draw_option`` the trick winner holding the trump
    nine may exchange before he chooses to close with five cards or to draw (seed 000: he exchanges when it is his
    turn, before his move). Before, the predraw stage offered only close and draw, so the five-card closing came
    without the exchange. After closing, the talon is shut and no exchange is left (R9)."""
    game = deal("9C JC QC KC 9D JD", "9H AC TC AD TD AS", "JH", rules=PADERBORN)
    play(game, "play 9C", "play AC")
    assert game.stage == PREDRAW and game.current_player == DL and legal(game) == {"exchange", "close", "draw"}
    play(game, "exchange")
    assert "JH" in hand(game, DL) and "9H" not in hand(game, DL) and CARD_NAMES[game.bottom_card] == "9H"
    assert game.stage == PREDRAW and legal(game) == {"close", "draw"}  # one exchange, his choice of R10 stays
    play(game, "close")
    assert game.hands[DL].bit_count() == 5 and game.hands[FH].bit_count() == 5 and game.closed_by == DL
    assert game.stage == RESPOND_CLOSE and legal(game) == {"pass"}  # the nine is gone, so the opponent passes
    # Drawing after the exchange gives the hand drawing first and exchanging at the lead gives.
    exchanged_first = deal("9C JC QC KC 9D JD", "9H AC TC AD TD AS", "JH", rules=PADERBORN)
    play(exchanged_first, "play 9C", "play AC", "exchange", "draw")
    drawn_first = deal("9C JC QC KC 9D JD", "9H AC TC AD TD AS", "JH", rules=PADERBORN)
    play(drawn_first, "play 9C", "play AC", "draw")
    assert "exchange" in legal(drawn_first) and "exchange" not in legal(exchanged_first)
    play(drawn_first, "exchange")
    assert exchanged_first.hands == drawn_first.hands and exchanged_first.stage == drawn_first.stage == LEAD
    assert exchanged_first.bottom_card == drawn_first.bottom_card


def test_R10_close_draw_option_off_in_standard():
    """R10 ``close_draw_option: false``: both draw at once after the trick; closing happens at the next lead."""
    game = deal("AC TC KC QC AD JD", "9C TD KD QD AS TS", "JH")
    play(game, "play AC", "play 9C")
    assert game.stage == LEAD and game.hands[FH].bit_count() == 6 and "draw" not in legal(game)


def test_R10_close_draw_option_not_offered_for_the_last_talon_trick():
    """R10: with one face-down card left closing is impossible, so the winner just draws (no predraw stage)."""
    game = deal("9H AC AD AS TC TD", "9C 9D 9S JC JD JS", "JH", talon="QC QS QD KS QH KC TH KD AH KH TS",
                rules=Rules(close_draw_option=True))
    for lead, follow in (("AC", "9C"), ("AD", "9D"), ("AS", "9S"), ("TC", "JC"), ("TD", "JD")):
        trick(game, lead, follow)
    play(game, "play QC", "play KC")
    assert game.stage == LEAD and game.talon_size == 0


# ------------------------------------------------------------------------------------------------ R11 marriages
def test_R11_marriage_twenty_leads_one_of_the_pair():
    """R11: King and Queen of a non-trump suit: 20; one of the two is led at once; the other stays in the hand."""
    game = deal("QC KC 9D JD 9S JS", "AC 9C TD AD TS AS", "JH")
    assert {"marry QC", "marry KC"} <= legal(game)
    play(game, "marry QC")
    assert game.marriage_points[FH] == 20
    assert CARD_NAMES[game.lead_card] == "QC" and game.stage == FOLLOW and game.current_player == DL
    assert "KC" in hand(game, FH) and "QC" not in hand(game, FH)
    marriage = game.marriages[0]
    assert (marriage.player, marriage.suit, CARD_NAMES[marriage.led_card], marriage.trick_index) == (FH, 0, "QC", 0)


def test_R11_marriage_forty_in_trump():
    """R11: the marriage in trump counts 40 ("Vierziger")."""
    game = deal("QH KH 9D JD 9S JS", "AC 9C TD AD TS AS", "JH")
    play(game, "marry KH")
    assert game.marriage_points[FH] == 40 and CARD_NAMES[game.lead_card] == "KH"


def test_R11_marriage_needs_both_cards_and_the_lead():
    """R11: only the holder of King and Queen may announce, and only as leader."""
    game = deal("KC 9C 9D JD 9S JS", "QC AC TD AD KS QS", "JH")
    assert not any(name.startswith("marry") for name in legal(game))
    play(game, "play 9C")
    assert not any(name.startswith("marry") for name in legal(game))  # dealer holds K+Q of spades but follows


@pytest.mark.parametrize("auto_declare", [True, False])
def test_R11_marriage_reaching_66_ends_the_deal_at_once(auto_declare):
    """R11: an announcement that brings the player to 66 counted points ends the deal; the card is not led."""
    game = deal("AC AS KH QH 9D JD", "TC TS 9C JC QC KC", "JH", rules=Rules(auto_declare=auto_declare))
    trick(game, "AC", "TC")
    trick(game, "AS", "TS")
    assert game.points(FH) == 42
    play(game, "marry KH")
    assert game.is_over and game.result == (FH, 3, "declared", (0, 82))
    assert "KH" in hand(game, FH) and game.lead_card == -1


def test_R11_marriage_needs_trick_paderborn():
    """R11 ``marriage_needs_trick: true``: no announcement before the player has won a trick."""
    game = deal("QC KC AD 9D 9S JS", "AC 9C TD JD TS AS", "JH", rules=PADERBORN)
    assert not any(name.startswith("marry") for name in legal(game))
    before = game.clone()
    with pytest.raises(ValueError, match="illegal action 'marry QC'"):
        play(game, "marry QC")  # apply refuses what legal_actions does not offer
    assert game.marriage_points == before.marriage_points == [0, 0] and game.hands == before.hands
    trick(game, "AD", "JD")
    assert {"marry QC", "marry KC"} <= legal(game)


def test_R11_marriage_needs_trick_off_in_standard():
    """R11 ``marriage_needs_trick: false``: forehand may announce before the first lead."""
    game = deal("QC KC AD 9D 9S JS", "AC 9C TD JD TS AS", "JH")
    assert {"marry QC", "marry KC"} <= legal(game)


def test_R11_marriage_in_phase2_standard_after_closing():
    """R11 ``marriage_in_phase2: true``: the closer's opponent may announce after the closing."""
    game = deal("AD 9D JD 9S JS AH", "QC KC 9C TD TS AS", "JH")
    play(game, "close")
    trick(game, "9S", "AS")
    assert game.current_player == DL and {"marry QC", "marry KC"} <= legal(game)


def test_R11_marriage_in_phase2_paderborn_opponent_may_not_announce_after_closing():
    """R11 ``marriage_in_phase2: false``: after a closing the closer's opponent may not announce."""
    game = deal("AD 9D JD 9S JS AH", "QC KC 9C TD TS AS", "JH", rules=PADERBORN)
    play(game, "close", "pass")
    trick(game, "9S", "AS")
    assert game.current_player == DL and game.tricks_won[DL]
    assert not any(name.startswith("marry") for name in legal(game))
    with pytest.raises(ValueError, match="illegal action 'marry KC'"):
        play(game, "marry KC")
    assert game.marriage_points == [0, 0] and "KC" in hand(game, DL)


def test_R11_marriage_in_phase2_paderborn_closer_announces_on_closing_turn_with_six_cards():
    """R11 paderborn: the closer may announce on his closing turn when both drew first (six cards each)."""
    game = deal("AC QC KC 9D JD 9S", "9C JC TD AD TS AS", "JH", rules=PADERBORN)
    play(game, "play AC", "play 9C", "draw", "close", "pass")
    assert game.hands[FH].bit_count() == 6
    assert {"marry QC", "marry KC"} <= legal(game)


def test_R11_marriage_in_phase2_paderborn_no_announcement_after_closing_before_drawing():
    """R11/R10 paderborn: closing before drawing (five cards) and announcing in the same turn is not allowed
    (seed 001: "Decken und Melden gleichzeitig ... nur ..., wenn beide ... sechs Karten auf der Hand haben")."""
    game = deal("AC QC KC 9D JD 9S", "9C JC TD AD TS AS", "JH", rules=PADERBORN)
    play(game, "play AC", "play 9C", "close", "pass")
    assert game.hands[FH].bit_count() == 5
    assert not any(name.startswith("marry") for name in legal(game))


@pytest.mark.parametrize("rules, allowed", [(STANDARD, True), (PADERBORN, False)])
def test_R11_marriage_in_phase2_after_talon_exhausted(rules, allowed):
    """R11 ``marriage_in_phase2``: after the talon is used up announcements are allowed (standard) or not
    (paderborn: only while cards can still be drawn)."""
    game = deal("9H AC AD AS TC TD", "9C 9D 9S JC JD JS", "JH", talon="QC QS QD KS QH KC TH KD AH KH TS",
                rules=rules)
    for lead, follow in (("AC", "9C"), ("AD", "9D"), ("AS", "9S"), ("TC", "JC"), ("TD", "JD"), ("QC", "KC")):
        trick(game, lead, follow)
    assert game.talon_size == 0 and game.current_player == DL and {"QS", "KS"} <= hand(game, DL)
    assert ({"marry QS", "marry KS"} <= legal(game)) is allowed


# ------------------------------------------------------------------------------------------------ R12
def test_R12_marriage_counts_only_after_a_trick():
    """R12: a trickless player's marriage is credited but counts only once he wins a trick (even a later one)."""
    game = deal("QC KC 9D JD 9S JS", "AC 9C TD AD TS AS", "JH")
    play(game, "marry QC", "play AC")  # the dealer takes the Queen
    assert game.marriage_points[FH] == 20 and game.points(FH) == 0 and game.points(DL) == 14
    trick(game, "9C", "KC")  # forehand wins his first trick
    assert game.points(FH) == 4 + 20


def test_R12_marriage_of_a_trickless_loser_scores_nothing():
    """R12: a player who announced but never wins a trick scores nothing for it; R16: the winner gets 3."""
    game = deal("QC KC 9D JD 9S JS", "AC KH QH AS TS AD", "JH")
    play(game, "marry QC", "play AC")
    play(game, "marry KH", "play 9D")
    assert game.points(DL) == 14 + 40 + 4
    play(game, "play AS", "play 9S")
    assert game.result == (DL, 3, "declared", (69, 0))
    assert game.marriage_points[FH] == 20


# ------------------------------------------------------------------------------------------------ R13 declare
def test_R13_auto_declare_at_66():
    """R13 ``auto_declare: true``: reaching 66 after winning a trick ends the deal as a declaration."""
    game = deal("AC AD AS TC TD TS", "9C 9D 9S JC JD JS", "JH", talon="QC KC QD KD QH KH TH AH QS KS 9H")
    for lead, follow in (("AC", "9C"), ("AD", "9D"), ("AS", "9S"), ("TC", "JC"), ("TD", "JD")):
        trick(game, lead, follow)
        assert not game.is_over
    assert "declare" not in legal(game)  # auto_declare: no declare action is offered
    trick(game, "TS", "JS")
    assert game.result == (FH, 3, "declared", (0, 69))


def test_R13_manual_declare_without_auto_declare():
    """R13 ``auto_declare: false``: the player at 66 may declare on his turn, or play on; not below 66."""
    game = deal("AC AD AS TC TD TS", "9C 9D 9S JC JD JS", "JH", talon="QC KC QD KD QH KH TH AH QS KS 9H",
                rules=Rules(auto_declare=False))
    for lead, follow in (("AC", "9C"), ("AD", "9D"), ("AS", "9S"), ("TC", "JC"), ("TD", "JD")):
        trick(game, lead, follow)
        assert "declare" not in legal(game)
    trick(game, "TS", "JS")
    assert not game.is_over and game.points(FH) == 69 and "declare" in legal(game)
    play(game, "declare")
    assert game.result == (FH, 3, "declared", (0, 69))


def test_R13_auto_declare_at_exactly_66_after_a_trick():
    """R13: exactly 66 is enough; 63 is not. R16: the trickless dealer loses 3."""
    game = deal("AC AS AD QC 9D JD", "TC TS TD 9C 9S JS", "JH")
    for lead, follow in (("AC", "TC"), ("AS", "TS"), ("AD", "TD")):
        trick(game, lead, follow)
    assert game.points(FH) == 63 and not game.is_over
    trick(game, "QC", "9C")
    assert game.result == (FH, 3, "declared", (0, 66))


def test_R13_manual_declare_offered_at_exactly_66():
    """R13 ``auto_declare: false``: ``declare`` is offered at exactly 66, not at 63."""
    game = deal("AC AS AD QC 9D JD", "TC TS TD 9C 9S JS", "JH", rules=Rules(auto_declare=False))
    for lead, follow in (("AC", "TC"), ("AS", "TS"), ("AD", "TD")):
        trick(game, lead, follow)
    assert game.points(FH) == 63 and "declare" not in legal(game)
    trick(game, "QC", "9C")
    assert game.points(FH) == 66 and not game.is_over and "declare" in legal(game)
    play(game, "declare")
    assert game.result == (FH, 3, "declared", (0, 66))


def test_R13_a_marriage_to_exactly_66_declares():
    """R11/R13: 46 from tricks and a marriage of 20 make exactly 66: the deal ends with both cards in the hand."""
    game = deal("AC AS KD QH KH 9H", "TC TS 9D 9C JC QC", "JS")  # spades trump: the hearts marriage is 20
    for lead, follow in (("AC", "TC"), ("AS", "TS"), ("KD", "9D")):
        trick(game, lead, follow)
    assert game.points(FH) == 46
    play(game, "marry QH")
    assert game.result == (FH, 3, "declared", (0, 66))
    assert {"QH", "KH"} <= hand(game, FH)


def test_R13_false_declaration_opponent_trickless_scores_three():
    """R13 ``allow_false_declaration: true``: declaring below 66 gives the opponent 3 if he has no trick."""
    game = deal("AC AD AS TC TD TS", "9C 9D 9S JC JD JS", "JH", rules=Rules(allow_false_declaration=True))
    trick(game, "AC", "9C")
    play(game, "declare")
    assert game.result == (DL, 3, "false declaration", (0, 11))


def test_R13_false_declaration_only_after_winning_a_trick():
    """R13 "on his turn (after winning a trick, or right after an announcement)": with ``allow_false_declaration``
    forehand's first lead offers no ``declare`` (he has won nothing, and the announcement and its lead are one move,
    R11), nor does his first lead after closing at once (R10); his first won trick does. The phase-2 solver agrees."""
    rules = Rules(allow_false_declaration=True)
    game = deal("AC AD AS TC TD TS", "9C 9D 9S JC JD JS", "JH", rules=rules)
    assert "declare" not in legal(game) and "close" in legal(game)
    play(game, "close")
    assert game.current_player == FH and game.tricks_won == [0, 0]
    assert "declare" not in legal(game)
    from agents.solver import python_solve_all_actions

    assert DECLARE not in python_solve_all_actions(game)
    trick(game, "AC", "9C")
    assert game.current_player == FH and "declare" in legal(game)
    assert DECLARE in python_solve_all_actions(game)
    # the dealer, to lead after winning the first trick, may declare (falsely) at once
    game = deal("9C AD AS TC TD TS", "AC 9D 9S JC JD JS", "JH", rules=rules)
    assert "declare" not in legal(game)
    trick(game, "9C", "AC")
    assert game.current_player == DL and "declare" in legal(game)


def test_R13_false_declaration_opponent_with_trick_scores_two():
    """R13 ``allow_false_declaration: true``: the opponent scores 2 if he had a trick at that moment."""
    game = deal("9C AD AS TC TD TS", "AC 9D 9S JC JD JS", "JH", rules=Rules(allow_false_declaration=True))
    trick(game, "9C", "AC")
    trick(game, "9D", "AD")
    assert game.current_player == FH and game.tricks_won == [1, 1]
    play(game, "declare")
    assert game.result == (DL, 2, "false declaration", (11, 11))


def test_R13_false_declaration_by_the_closer():
    """R13 over R16 for a closer who declares below 66: the opponent scores 2 because he has a trick at the
    declaration, although he was trickless at the closing (seed 001: "ob er nun gedeckt hat oder nicht")."""
    game = deal("9C AD 9S JS JD QD", "TC 9D AS TS KC QC", "JH", rules=Rules(allow_false_declaration=True))
    play(game, "close")
    trick(game, "9C", "TC")
    trick(game, "9D", "AD")
    assert game.current_player == FH and game.closed_by == FH
    play(game, "declare")
    assert game.result == (DL, 2, "false declaration", (10, 11))


def test_R13_false_declaration_by_the_closers_opponent():
    """R13 for the closer's opponent: his false declaration gives the closer 3 (no trick at that moment)."""
    game = deal("9C AD 9S JS JD QD", "TC 9D AS TS KC QC", "JH", rules=Rules(allow_false_declaration=True))
    play(game, "close")
    trick(game, "9C", "TC")
    assert game.current_player == DL and game.points(DL) == 10
    play(game, "declare")
    assert game.result == (FH, 3, "false declaration", (10, 0))


def test_R13_false_declaration_off_by_default():
    """R13 ``allow_false_declaration: false``: no declaration below 66 (and with auto_declare none at all)."""
    game = deal("AC AD AS TC TD TS", "9C 9D 9S JC JD JS", "JH", rules=Rules(auto_declare=False))
    assert "declare" not in legal(game)
    with pytest.raises(ValueError, match="illegal action 'declare'"):
        play(game, "declare")


# ------------------------------------------------------------------------------------------------ R14, R15
LAST_TRICK_DEAL = dict(forehand="KH QH AC 9H TD KD", dealer="AH TH TS 9S QS JC", trump="TC",
                       talon="KS JH AD AS JD KC 9C QD 9D JS QC")
LAST_TRICK_ACTIONS = ("play QH", "play AH", "play QS", "play TD", "play TS", "play KH", "play JD", "play KC",
                      "exchange", "play JH", "play 9S", "play 9D", "play QD", "play KS", "play AS", "play 9C",
                      "play JC", "play TH", "play 9H", "play QC", "play AC", "play TC", "play AD", "play KD",
                      "play JS")


def test_R14_last_trick_bonus():
    """R14: all cards played without declaration: the last trick's winner gets 10 more; the cards hold 130
    (searched deal: 56:64 before the last trick, forehand wins it)."""
    game = deal(**LAST_TRICK_DEAL)
    play(game, *LAST_TRICK_ACTIONS[:-1])
    assert (game.points(DL), game.points(FH)) == (56, 58)
    play(game, LAST_TRICK_ACTIONS[-1])
    assert game.tricks[-1][3] == FH
    assert game.trick_points[FH] == won_card_points(game, FH) + 10
    assert game.trick_points[DL] == won_card_points(game, DL)
    assert sum(game.trick_points) == 130


def test_R15_all_played_more_points_wins():
    """R15: all cards played without declaration or closing: the player with more points (≥ 66) wins; R16: the
    loser has 56 > 32 points, so 1 game point."""
    game = deal(**LAST_TRICK_DEAL)
    play(game, *LAST_TRICK_ACTIONS)
    assert game.result == (FH, 1, "last trick", (56, 74))


def test_R15_played_on_past_66_scores_by_the_losers_final_points():
    """R15/R16 with ``auto_declare: false``: forehand reaches 74 after the ninth trick and plays on instead of
    declaring; all cards played, he wins 104:26, and the game points come from the loser's 26 (at most 32, three
    tricks): 2, where the winner's own points would give 1 (searched deal). With auto_declare a winner by R15
    never leaves the loser at 32 or less."""
    game = deal("KC QH TH QC AS TD", "9S AH TS 9H 9D QS", "TC", talon="JH JD KH AD 9C KS KD JC JS QD AC",
                rules=Rules(auto_declare=False))
    play(game, "play TD", "play 9D", "play KC", "play 9S", "play QC", "play AH", "play AS", "play AD", "play KH",
         "play JD", "play QH", "play 9H", "play 9C", "play TC", "play TS", "play JS", "play KS", "play AC")
    assert (game.points(FH), game.points(DL)) == (74, 22) and "declare" in legal(game)
    play(game, "play JH", "play JC", "play QD", "play KD", "play TH", "play QS")
    assert game.tricks_won == [3, 9]
    assert game.result == (FH, 2, "last trick", (26, 104))


def test_R15_65_65_not_scored():
    """R15: 65:65 after the last trick is not scored (searched deal)."""
    game = deal("AH JC TH KD JS TS", "KC JD QC KS AC 9S", "9D", talon="AD KH TC QS JH QH AS QD TD 9C 9H")
    play(game, "play AH", "play KS", "play TH", "play KH", "play JC", "play KC", "play JD", "play TS", "play QC",
         "play KD", "play AD", "play QS", "play 9H", "play JH", "play 9S", "play JS", "play TD", "play 9D",
         "play QD", "play 9C", "play TC", "play AC", "play AS", "play QH")
    assert game.result == (None, 0, "not scored", (65, 65))
    assert game.returns() == (0, 0)


# ------------------------------------------------------------------------------------------------ R16 scoring
def test_R16_declared_opponent_trickless_three():
    """R16 first line: declared with the opponent trickless: 3 game points."""
    game = deal("AC AD AS TC TD TS", "9C 9D 9S JC JD JS", "JH", talon="QC KC QD KD QH KH TH AH QS KS 9H")
    for lead, follow in (("AC", "9C"), ("AD", "9D"), ("AS", "9S"), ("TC", "JC"), ("TD", "JD"), ("TS", "JS")):
        trick(game, lead, follow)
    assert game.result.game_points == 3 and game.tricks_won[DL] == 0


def test_R16_a_trick_of_two_nines_is_a_trick():
    """R16: "without a trick" counts tricks, not points: the dealer's only trick holds two nines (0 points), so
    forehand's declaration at 69 scores 2, not 3."""
    game = deal("9C AD AS TS AC TC", "9H JD JS 9S QC KD", "JH", talon="TD KH QH AH")
    trick(game, "9C", "9H")  # the dealer trumps: his trick is worth nothing
    assert game.tricks_won == [1, 0] and game.points(DL) == 0
    trick(game, "JD", "AD")
    play(game, "marry QH", "play JS")  # the trump marriage: 40
    trick(game, "AS", "9S")
    assert game.result == (FH, 2, "declared", (0, 69))


def test_R16_declared_opponent_at_32_scores_two():
    """R16: the opponent has at most 32 card points: 2 game points (searched deal, loser at exactly 32)."""
    game = deal("TS JC TD QH AC TC", "JH KD 9C QC KC 9D", "9H", talon="TH KH QD 9S AS AD KS QS AH JS JD")
    play(game, "play JC", "play QC", "play 9C", "play KH", "play AC", "play JH", "play 9S", "play TS", "play QH",
         "play 9D", "play AH", "play KC", "play TC", "play TH", "play AS", "play KS", "play 9H", "play JD",
         "play QS", "play QD", "play JS", "play TD")
    assert game.result == (DL, 2, "declared", (73, 32))


def test_R16_declared_opponent_at_33_scores_one():
    """R16: the opponent has 33 card points or more: 1 game point (searched deal, loser at exactly 33)."""
    game = deal("AH 9C JD TD KH 9H", "9S AD JS TS KD KS", "JC", talon="QH QC QD AS 9D TC QS AC TH KC JH")
    play(game, "play 9C", "play AD", "play AH", "play 9S", "marry QH", "play KS", "play 9H", "play JS", "play QD",
         "play TS", "play TH", "play AC", "play TC", "play JC", "play JH", "play KH")
    assert game.result == (FH, 1, "declared", (33, 70))


def test_R16_closer_declares_counts_opponent_points_at_declaration():
    """R16 third line: a closer who declares scores by the first line, counting the opponent's points at the
    declaration: here the opponent was trickless with 0 points at the closing, but has 58 at the declaration,
    so 1 game point, not 3 (searched deal). The closer reaches 66 with the last trick, which counts as his
    declaration (no bonus, R14)."""
    game = deal("JS KC QC 9D JH AS", "KH KS AH KD JC QS", "AC", talon="9H 9S TC TS JD 9C TH QD AD TD QH")
    play(game, "play 9D", "play KD", "play AH", "play JS", "close")
    assert game.closed_by == DL and game.tricks_won[FH] == 0
    play(game, "marry QS", "play AS", "marry QC", "play TC", "play KH", "play JH", "play 9H", "play KC",
         "play 9S", "play KS", "play JC", "play TS")
    assert game.result == (DL, 1, "declared", (72, 58))
    assert not game.hands[0] and not game.hands[1]  # ended with the last trick
    talon_points = sum(CARD_POINTS[card] for card in game.stock[game.stock_pos:]) + CARD_POINTS[game.bottom_card]
    assert sum(game.trick_points) == 120 - talon_points  # no last-trick bonus after a closing


def test_R16_closer_declares_opponent_trickless_three():
    """R16 third line with the first: the closer declares and the opponent has no trick: 3."""
    game = deal("AH TH KH QH AC TC", "9C 9D 9S JC JD JS", "JH")
    play(game, "close", "marry KH", "play 9C")
    assert game.points(FH) == 44
    trick(game, "AH", "9D")
    trick(game, "TH", "9S")
    trick(game, "QH", "JC")
    assert game.result == (FH, 3, "declared", (0, 70))


# ------------------------------------------------------------------------------------------------ R19, R20 presets
def test_R19_paderborn_preset():
    """R19: paderborn sets exchange_needs_trick, exchange_after_opponent_closes, close_draw_option,
    marriage_needs_trick true and marriage_in_phase2 false; everything else as standard."""
    assert PADERBORN == Rules(exchange_needs_trick=True, exchange_after_opponent_closes=True,
                              close_draw_option=True, marriage_needs_trick=True, marriage_in_phase2=False)
    assert PADERBORN.preset_name == "paderborn" and PADERBORN.deck == 24


def test_R19_paderborn_deal_uses_all_switches():
    """R19: one paderborn deal: no exchange or marriage before a trick, close before drawing, the opponent's
    exchange after the closing, and no marriage for him afterwards."""
    game = deal("AC QC KC 9D JD 9S", "9H JC TD AD TS AS", "JH", rules=PADERBORN)
    assert legal(game) == {f"play {c}" for c in ("AC", "QC", "KC", "9D", "JD", "9S")} | {"close"}
    play(game, "play 9S", "play AS")  # the dealer wins; he holds the nine
    assert game.stage == PREDRAW and game.current_player == DL
    play(game, "close")
    assert game.stage == RESPOND_CLOSE and game.current_player == FH and legal(game) == {"pass"}
    play(game, "pass")
    assert game.current_player == DL and "exchange" not in legal(game)  # closed: no exchange for the closer
    play(game, "play TD", "play JD")
    assert game.current_player == DL
    play(game, "play JC", "play AC")
    assert game.current_player == FH and {"QC", "KC"} <= hand(game, FH)
    assert not any(name.startswith("marry") for name in legal(game))


def test_R20_scharf_preset():
    """R20: scharf = 20 cards (R2), otherwise standard."""
    assert SCHARF == Rules(deck=20) and SCHARF.preset_name == "scharf"
    assert Rules.preset("scharf", auto_declare=False) == Rules(deck=20, auto_declare=False)
    game = deal("JH AC TC KC QC AD", "TD KD QD JD AS TS", "QH", rules=SCHARF)
    assert game.talon_size == 8 and "exchange" in legal(game)


SCHARF_LAST_TRICK_DECK = ["JD", "QH", "TD", "AC", "QC", "KC", "TH", "AD", "JH", "KH",
                          "TS", "QS", "JC", "AS", "KD", "QD", "AH", "JS", "TC", "KS"]
SCHARF_LAST_TRICK_PLAY = ("play TD", "play QS", "play TH", "play KC", "play QD", "play AH", "play KH", "play AS",
                          "play KS", "play JC", "play QH", "play QC", "play TS", "play TC", "play JH", "play AC",
                          "play KD", "play AD", "play JD", "play JS")


def test_R20_scharf_deal_plays_to_the_last_trick():
    """R20 from an explicit 20-card deck (R2, R4): all ten tricks are played; the 20 cards hold 120 card points (the
    nines, worth 0, are gone), the last trick adds 10 (R14), and 68:62 scores one game point (R16)."""
    game = Game.deal(SCHARF, deck=SCHARF_LAST_TRICK_DECK, dealer=DL)
    play(game, *SCHARF_LAST_TRICK_PLAY)
    assert game.is_over and len(game.tricks) == 10
    assert game.result == DealResult(FH, 1, "last trick", (62, 68))
    assert won_card_points(game, DL) + won_card_points(game, FH) == 120
    assert game.trick_points == [won_card_points(game, DL), won_card_points(game, FH) + 10]  # FH took the last trick


# ------------------------------------------------------------------------------------------------ errors
def test_rules_errors_unknown_preset_switch_and_bad_types():
    """Rules: unknown presets and switches and wrongly typed values raise a ValueError naming them."""
    with pytest.raises(ValueError, match="unknown rules preset 'vienna'"):
        Rules.preset("vienna")
    with pytest.raises(ValueError, match="unknown rules switch 'trumps'"):
        Rules.preset("standard", trumps=True)
    with pytest.raises(ValueError, match="unknown rules switch 'x'"):
        Rules.from_dict({"x": 1})
    with pytest.raises(ValueError, match="Rules.auto_declare must be true or false"):
        Rules(auto_declare=1)
    with pytest.raises(ValueError, match="Rules.deck must be an integer"):
        Rules(deck="24")
    with pytest.raises(ValueError, match="Rules.deck must be 24 or 20"):
        Rules(deck=32)
    with pytest.raises(ValueError, match="Rules.partie_bummerl must be 2 or 3"):
        Rules(partie_bummerl=4)
    with pytest.raises(ValueError, match="Rules.bummerl_target must be at least 1"):
        Rules(bummerl_target=0)
    with pytest.raises(ValueError, match="Rules.bummerl_target must be an integer, got True"):
        Rules(bummerl_target=True)  # a bool is an int to Python, not a target to us
    with pytest.raises(ValueError, match="Rules.players must be 2 or 3, got 4"):
        Rules(players=4)
    assert (STANDARD.hand_size, SCHARF.hand_size, Rules.preset("three").hand_size) == (6, 6, 8)  # R4, R20, R21
    with pytest.raises(ValueError, match="rules must be a mapping"):
        Rules.from_dict([("deck", 24)])
    assert Rules.from_dict(PADERBORN.to_dict()) == PADERBORN


def test_deal_errors_bad_decks_dealer_seed():
    """Game.deal: malformed decks (size, duplicates, unknown cards), dealer and seed are rejected clearly."""
    good = deck_from_hands("AC TC KC QC JC 9C".split(), "AD TD KD QD JD 9D".split(), "JH")
    with pytest.raises(ValueError, match="23 cards given"):
        Game.deal(STANDARD, deck=good[:-1])
    with pytest.raises(ValueError, match="AC appears twice"):
        Game.deal(STANDARD, deck=good[:-1] + ["AC"])
    with pytest.raises(ValueError, match="malformed card 'XX'"):
        Game.deal(STANDARD, deck=good[:-1] + ["XX"])
    with pytest.raises(ValueError, match="position 24 holds 99"):
        Game.deal(STANDARD, deck=good[:-1] + [99])
    with pytest.raises(ValueError, match="expected a list"):
        Game.deal(STANDARD, deck="AC TC")
    with pytest.raises(ValueError, match="dealer must be 0 or 1"):
        Game.deal(STANDARD, deck=good, dealer=2)
    with pytest.raises(ValueError, match="either an explicit deck or a seed"):
        Game.deal(STANDARD, deck=good, seed=1)
    with pytest.raises(ValueError, match="seed must be an integer"):
        Game.deal(STANDARD, seed="1")
    with pytest.raises(ValueError, match="rules must be a Rules object"):
        Game.deal("standard", seed=1)
    with pytest.raises(ValueError, match="each hand needs 6 cards"):
        deck_from_hands("AC TC".split(), "AD TD KD QD JD 9D".split(), "JH")
    with pytest.raises(ValueError, match="AD appears twice"):
        deck_from_hands("AC TC KC QC JC AD".split(), "AD TD KD QD JD 9D".split(), "JH")


def test_apply_errors_name_the_action_and_the_legal_ones():
    """Game.apply: an illegal or malformed action raises ValueError naming it and the legal actions; the state
    is unchanged."""
    game = deal("AC TC KC QC JC 9C", "AD TD KD QD JD 9D", "JH")
    history = list(game.history)
    with pytest.raises(ValueError, match=r"illegal action 'play AD' for player 1 \(lead\); legal: play 9C"):
        game.apply(parse_action("play AD"))
    with pytest.raises(ValueError, match="not an action id"):
        game.apply(99)
    with pytest.raises(ValueError, match="not an action id"):
        game.apply("play AC")
    with pytest.raises(ValueError, match="illegal action 'exchange'"):
        game.apply(parse_action("exchange"))
    assert game.history == history and game.stage == LEAD and game.hands[FH].bit_count() == 6
    assert game.apply(parse_action("play AC")) is None and game.stage == FOLLOW


def test_over_state_reports_no_player():
    """A finished deal has no current player, no legal actions and rejects every action."""
    game = deal("AC TC KC QC JC 9C", "AD TD KD QD JD 9D", "JH")
    game.forfeit(FH)
    assert game.stage == OVER and game.current_player is None and game.legal_actions() == []
    assert not game.is_legal(0)
