"""Details of the two-player engine (sixtysix_env/game.py) from a mutation review: the seeded shuffle's exact
decoding, the messages of a refused deck, player or action, and rule edges the rule tests of tests/test_rules.py
leave open. Every rule case deals from an explicit deck (R4) and cites its rule id in the docstring.

Decks are spelled with ``deck_from_hands(forehand, dealer, trump card, talon top first)`` as in test_rules.py:
player 0 deals, so player 1 is forehand (``FH = 1``, ``DL = 0``). Card points (R1): A 11, T 10, K 4, Q 3, J 2, 9 0.
"""

from __future__ import annotations

from hashlib import blake2b
import math

import numpy as np
import pytest

from sixtysix_env import ACTION_NAMES, Game, Rules, parse_action
from sixtysix_env.cards import CARD_NAMES, cards_of, deck_cards
from sixtysix_env.game import FOLLOW, LEAD, shuffled_deck
from sixtysix_env.record import deck_from_hands

STANDARD = Rules()
FH, DL = 1, 0  # with dealer 0: player 1 is forehand (R3)


def deal(forehand: str, dealer: str, trump: str, talon: str = "", rules: Rules = STANDARD) -> Game:
    deck = deck_from_hands(forehand.split(), dealer.split(), trump, talon.split(), deck_size=rules.deck)
    return Game.deal(rules, deck=deck, dealer=DL)


def play(game: Game, *actions: str) -> None:
    for text in actions:
        game.apply(parse_action(text))


def legal(game: Game) -> set[str]:
    return {ACTION_NAMES[action] for action in game.legal_actions()}


def hand(game: Game, player: int) -> set[str]:
    return {CARD_NAMES[card] for card in cards_of(game.hands[player])}


def message_of(call, *args) -> str:
    with pytest.raises(ValueError) as error:
        call(*args)
    return str(error.value)


# ------------------------------------------------------------------------------------------------ the seeded deck
def reference_deck(deck_size: int, seed: int) -> list[int]:
    """The deck ``shuffled_deck`` promises, decoded here from its docstring alone: BLAKE2b-128 of "seed/salt", the
    first 8 bytes (little endian) choose the top half of the deck, the last 8 order the rest, each in the factorial
    number system (least significant digit first, each digit picking from the cards still left in id order); a
    hash whose part lies at or above the largest multiple of its range is re-hashed with the next salt."""
    half = deck_size // 2
    top_range = math.perm(deck_size, half)
    rest_range = math.factorial(deck_size - half)
    for salt in range(100):
        digest = blake2b(f"{seed}/{salt}".encode(), digest_size=16).digest()
        top = int.from_bytes(digest[:8], "little")
        rest = int.from_bytes(digest[8:], "little")
        if top < 2 ** 64 - 2 ** 64 % top_range and rest < 2 ** 64 - 2 ** 64 % rest_range:
            break
    left = list(deck_cards(deck_size))
    order = []
    for value, sizes in ((top % top_range, range(deck_size, deck_size - half, -1)),
                         (rest % rest_range, range(deck_size - half, 0, -1))):
        for size in sizes:
            value, pick = divmod(value, size)
            order.append(left.pop(pick))
    return order


@pytest.mark.parametrize("deck_size", [24, 20])
def test_engine_seeded_deck_is_the_documented_decoding_of_the_seed(deck_size):
    """R4, R2: a seed stands for one deck order on every platform (deal files and tournaments store seeds), so
    the decoding is pinned against an independent reading of the docstring, for both deck sizes."""
    for seed in (0, 1, 7, 123, 2 ** 70, -5):
        assert shuffled_deck(deck_size, seed) == reference_deck(deck_size, seed)


def test_engine_seeded_deck_rehashes_a_hash_above_the_last_full_range():
    """R4: the rejection step that keeps the shuffle exactly uniform. Seed 12618 is one whose first hash (salt 0)
    lands in the top half's remainder (computed here, not taken from the engine); its deck comes from salt 1."""
    top_range = math.perm(24, 12)
    first = blake2b(b"12618/0", digest_size=16).digest()
    assert int.from_bytes(first[:8], "little") >= 2 ** 64 - 2 ** 64 % top_range  # the seed does hit the remainder
    second = blake2b(b"12618/1", digest_size=16).digest()
    assert int.from_bytes(second[:8], "little") < 2 ** 64 - 2 ** 64 % top_range
    assert shuffled_deck(24, 12618) == reference_deck(24, 12618)
    assert Game.deal(seed=12618).deck == tuple(reference_deck(24, 12618))


@pytest.mark.parametrize("seed", [True, False, 1.0, "1"])
def test_engine_seed_must_be_an_integer_not_a_bool(seed):
    """R4: a seed is an integer; ``True`` is refused, not taken for seed 1."""
    assert message_of(shuffled_deck, 24, seed) == f"seed must be an integer, got {seed!r}"
    assert message_of(lambda: Game.deal(seed=seed)) == f"seed must be an integer, got {seed!r}"


# ------------------------------------------------------------------------------------------------ a refused deck
def test_engine_deck_error_names_the_card_that_is_not_in_the_deck():
    """R2: a nine in a 20-card deck is named (the card that does not belong, not the one it displaced)."""
    deck = ["9C"] + [CARD_NAMES[card] for card in deck_cards(20)[1:]]
    assert message_of(lambda: Game.deal(Rules(deck=20), deck=deck)) == "malformed deck: 9C not in the 20-card deck (R2)"


def test_engine_deck_error_names_the_position_of_a_bad_card_name():
    """R4: a deck entry that is not an R1 card name is refused naming its position (top card = 1)."""
    deck = [CARD_NAMES[card] for card in range(24)]
    deck[2] = "XX"
    message = message_of(lambda: Game.deal(deck=deck))
    assert message.startswith("malformed deck: position 3: malformed card 'XX'")


@pytest.mark.parametrize("bad", [24, -1, np.int64(24), True])
def test_engine_deck_entry_outside_the_card_ids_is_refused_naming_it(bad):
    """R4: card ids are 0..23; 24, -1 (which would index the last card) or a bool are not cards."""
    deck = list(range(24))
    deck[4] = bad
    assert message_of(lambda: Game.deal(deck=deck)) == f"malformed deck: position 5 holds {bad!r}, not a card"


def test_engine_numpy_player_indices_are_taken_and_others_refused():
    """R3: a player is 0 or 1, a Python or numpy integer; numpy 1 is player 1, numpy 2 is refused by name."""
    game = Game.deal(seed=3, dealer=np.int64(1))
    assert game.dealer == 1 and game.forehand == 0
    assert game.hand(np.int64(1)) == game.hand(1) and game.points(np.int64(0)) == 0
    assert message_of(game.points, np.int64(2)) == "player must be 0 or 1, got np.int64(2)"
    assert message_of(game.points, True) == "player must be 0 or 1, got True"


def test_engine_a_negative_id_while_following_is_refused_as_an_illegal_action():
    """R8 (any phase): while following, -1 is no card: the usual illegal-action error, the state unchanged."""
    game = deal("AC TC KC QC AD JD", "9C TD KD QD AS TS", "JH")
    play(game, "play AC")
    before = (game.hands[:], game.stage, game.history[:])
    assert message_of(game.apply, -1).startswith("illegal action -1 (not an action id 0..36) for player 0 (follow)")
    assert (game.hands, game.stage, game.history) == before


# ------------------------------------------------------------------------------------------------ refusals by stage
PADERBORN = Rules.preset("paderborn")


def test_engine_predraw_refuses_every_action_but_close_declare_or_draw():
    """R10 ``close_draw_option``: after a phase-1 trick the winner may only close or draw (declare at 66, R13); a
    card, an exchange or a declaration below 66 is refused naming the stage, and nothing changes."""
    game = deal("AC TC KC QC AD JD", "9C TD KD QD AS TS", "JH", rules=PADERBORN)
    play(game, "play AC", "play 9C")
    assert legal(game) == {"close", "draw"}
    before = (game.hands[:], game.stage, game.to_move, game.history[:], game.result)
    for text in ("play KC", "exchange", "declare", "pass", "marry QC"):
        message = message_of(play, game, text)
        assert message == f"illegal action {text!r} for player {FH} (predraw); legal: close, draw"
        assert (game.hands, game.stage, game.to_move, game.history, game.result) == before


def test_engine_respond_close_refuses_an_exchange_without_the_nine_and_any_card():
    """R9 ``exchange_after_opponent_closes``: the closer's opponent, asked after the closing, may only pass when he
    lacks the trump nine; ``exchange`` or a card is refused and leaves the deal as it was."""
    game = deal("AC TC KC QC AD JD", "9S TD KD QD AS TS", "JH", rules=PADERBORN)
    play(game, "close")
    before = (game.hands[:], game.bottom_card, game.stage, game.to_move, game.history[:])
    for text in ("exchange", "play 9S", "draw"):
        assert message_of(play, game, text) == f"illegal action {text!r} for player {DL} (respond_close); legal: pass"
        assert (game.hands, game.bottom_card, game.stage, game.to_move, game.history) == before


def test_engine_marriage_needs_both_cards_in_the_hand_when_applied():
    """R11: ``marry QC`` is refused by ``apply`` (not only left out of the legal actions) when the King of Clubs is
    missing; no marriage points, the Queen stays in the hand."""
    game = deal("QC 9C 9D JD 9S JS", "KC AC TD AD KS QS", "JH")
    assert not any(name.startswith("marry") for name in legal(game))
    for text in ("marry QC", "marry KC"):
        assert message_of(play, game, text).startswith(f"illegal action {text!r} for player {FH} (lead)")
    assert game.marriage_points == [0, 0] and game.marriages == [] and "QC" in hand(game, FH)
    assert game.stage == LEAD and game.current_player == FH


def test_engine_turn_steps_and_the_marriage_flag_of_the_card_on_the_table():
    """R9 -> R10 -> R11 order within a turn: ``turn_step`` is 0 at the start of a turn, 1 after an exchange, 2
    after a closing (the numba core's state mirrors these slots, core/layout.py TURN_STEP and LEAD_WAS_MARRIAGE);
    ``lead_was_marriage`` says whether the card on the table was led with an announcement (R11), and a plain lead
    after a marriage trick clears it."""
    game = deal("9H QC KC AD 9D JS", "AC 9C TD JD TS AS", "JH")
    assert game.turn_step == 0
    play(game, "exchange")
    assert game.turn_step == 1 and "exchange" not in legal(game) and "close" in legal(game)
    play(game, "marry QC")
    assert game.lead_was_marriage and CARD_NAMES[game.lead_card] == "QC"
    play(game, "play AC")  # the dealer wins and leads next: a new turn
    assert game.turn_step == 0 and game.current_player == DL
    play(game, "play 9C")
    assert not game.lead_was_marriage and CARD_NAMES[game.lead_card] == "9C"
    play(game, "play KC")
    play(game, "close")
    assert game.turn_step == 2


# ------------------------------------------------------------------------------------------------ phase 2 starts
def test_engine_closed_at_trick_is_the_first_trick_played_under_strict_following():
    """R10, R8: ``closed_at_trick`` counts the tricks before the closing, so it indexes the first trick played by
    R8 (the trick log's ``in_phase2`` flag turns on exactly there)."""
    game = deal("AC TC KC QC AD JD", "9C TD KD QD AS TS", "JH", talon="9D JC")
    play(game, "play AC", "play 9C", "play TC", "play JC")
    play(game, "close")
    assert game.closed_at_trick == 2 and game.closed_by == FH
    play(game, "play KC")
    game.apply(game.legal_actions()[0])  # any legal answer: the trick is played under R8 either way
    log = game.trick_log
    assert [trick.in_phase2 for trick in log] == [False, False, True]
    assert log[game.closed_at_trick].in_phase2 and not log[game.closed_at_trick - 1].in_phase2


def test_engine_talon_exhausted_at_trick_is_the_first_trick_played_under_strict_following():
    """R7, R8: the sixth trick empties the talon; ``talon_exhausted_at_trick`` is 6, the index of the first trick
    played by R8."""
    game = deal("9H AC AD AS TC TD", "9C 9D 9S JC JD JS", "JH", talon="QC QS QD KS QH KC TH KD AH KH TS",
                rules=Rules(auto_declare=False))
    for lead, follow in (("AC", "9C"), ("AD", "9D"), ("AS", "9S"), ("TC", "JC"), ("TD", "JD"), ("QC", "KC")):
        assert game.talon_exhausted_at_trick is None
        play(game, f"play {lead}", f"play {follow}")
    assert game.talon_exhausted_at_trick == 6 and game.talon_size == 0
    play(game, "play QS", "play 9H")  # forehand is void in spades and must trump (R8c)
    assert [trick.in_phase2 for trick in game.trick_log] == [False] * 6 + [True]


# ------------------------------------------------------------------------------------------------ junk actions
@pytest.mark.parametrize("junk", [True, False, 37, 1000, -70, 2.0, "play AC", None])
def test_engine_junk_action_ids_are_refused_naming_the_action_range(junk):
    """Actions (docs/actions.md, R5): an id is a Python or numpy integer 0..36; a bool is not taken for 1 or 0, and
    an integer past the last id is named like any other junk (not an IndexError from the name table)."""
    game = deal("AC TC KC QC AD JD", "9C TD KD QD AS TS", "JH")
    before = (game.hands[:], game.stage, game.history[:])
    message = message_of(game.apply, junk)
    assert message.startswith(f"illegal action {junk!r} (not an action id 0..36) for player {FH} (lead); legal: ")
    assert (game.hands, game.stage, game.history) == before


def test_engine_forfeit_needs_a_reason_with_text():
    """R8 Renonce via ``forfeit``: the reason is recorded in the result, so an empty or blank one is refused."""
    game = deal("AC TC KC QC AD JD", "9C TD KD QD AS TS", "JH")
    for reason in ("", "   ", None):
        assert message_of(game.forfeit, FH, reason) == f"forfeit reason must be a non-empty text, got {reason!r}"
    assert not game.is_over
    game.forfeit(FH, "timeout")
    assert game.result == (DL, 3, "timeout", (0, 0))


def test_engine_render_shows_the_card_on_the_table_and_who_led_it():
    """R5: while a trick is open the table shows the led card and its leader."""
    game = deal("AC TC KC QC AD JD", "9C TD KD QD AS TS", "JH")
    assert "on the table" not in game.render()
    play(game, "play QC")
    assert f"on the table: QC led by player {FH}" in game.render().splitlines()
    assert f"on the table: QC led by player {FH}" in game.render(viewer=DL).splitlines()


def test_engine_a_clone_after_a_closing_keeps_the_opponents_tricklessness_for_the_score():
    """R16 second line: the closer's opponent scores 3 if he had no trick when the talon was closed, even when he
    wins tricks afterwards; a clone taken after the closing must score the same. (The closer, forehand, leads his
    Aces, then runs out of winners; the dealer collects 66 with his marriage and Tens.)"""
    game = deal("9C JC QC 9D JD QD", "AC TC AD TD KS QS", "JH")
    play(game, "close")
    assert game.opponent_trickless_at_close
    clone = game.clone()
    for copy in (game, clone):
        play(copy, "play 9C", "play AC", "marry KS", "play 9D", "play TC", "play QC", "play AD", "play JD")
        play(copy, "play TD", "play QD")
    assert game.result == clone.result == (DL, 3, "closer failed", (74, 0))


@pytest.mark.parametrize("action", ["x", 1.5, None, 37, 0])
def test_engine_any_action_on_a_finished_deal_says_the_deal_is_over(action):
    """R13–R16: once the deal has ended, every action, a junk one too, is refused with "the deal is over" (as the
    three-player game does), not as an illegal action "for player -1"."""
    game = deal("AC TC KC QC AD JD", "9C TD KD QD AS TS", "JH")
    game.forfeit(DL)
    message = message_of(game.apply, action)
    assert message.startswith("the deal is over; no action can be applied (") and "player -1" not in message
