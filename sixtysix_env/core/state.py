"""The Python boundary of the compiled core: build states, check what users hand in, read results.

The kernels of :mod:`.engine` assume valid input; everything here checks it first and raises ``ValueError``
naming what is wrong (a bad rules switch, card, deck, state array or action).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..actions import NUM_ACTIONS, action_name
from ..cards import deck_cards, mask_of
from ..game import FOLLOW, LEAD, OVER, PREDRAW, RESPOND_CLOSE, RESULT_REASONS, DealResult, Game
from ..observation import rules_bits
from ..rules import Rules
from . import engine
from .layout import (
    BOTTOM_CARD, BOTTOM_TAKER, CANNOT_HOLD0, CLOSED_AT_TRICK, CLOSED_BY, DEALER, EXCHANGE_CARD, GAME_POINTS, HAND0,
    LEAD_CARD, LEAD_WAS_MARRIAGE, LEADER, LED0, MARRIAGE_POINTS0, MARRIED_SUITS0, OPPONENT_TRICKLESS_AT_CLOSE, PHASE2,
    PLAYED0, REASON, RULE_ALLOW_FALSE_DECLARATION, RULE_AUTO_DECLARE, RULE_BITS, RULE_CLOSE_DRAW_OPTION, RULE_DECK_20,
    SHOWN0, STAGE, STATE_SIZE, STOCK, STOCK_LEN, STOCK_POS, STOCK_SLOTS, TO_MOVE, TRICK_COUNT, TRICK_POINTS0,
    TRICKS_WON0, TRUMP_CARD, TRUMP_SUIT, TURN_STEP, WINNER, WON_CARDS0,
)
from ..observation import _void_shown


def core_implements(rules: Rules) -> bool:
    """The core plays these rules: two players, ``auto_declare`` on, no false declarations (every preset). Agents
    ask this to choose between the core and their pure-Python paths."""
    return rules.players == 2 and rules.auto_declare and not rules.allow_false_declaration


def core_rule_bits(rules: Rules) -> int:
    """The rule switches as the core's bit field; rules the core does not implement are refused by name."""
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a Rules object, got {type(rules).__name__}")
    if rules.players != 2:
        raise ValueError("the compiled core plays the two-player game only; three players (R21) are played by "
                         "sixtysix_env.ThreePlayerGame, sixtysix_env.env(rules='three') or ThreePlayerGymEnv")
    if not rules.auto_declare:
        raise ValueError("the compiled core needs auto_declare=True (R13); use sixtysix_env.Game for manual declaring")
    if rules.allow_false_declaration:
        raise ValueError("the compiled core does not implement allow_false_declaration (R13); use sixtysix_env.Game")
    return rules_bits(rules)


def new_state(rules: Rules, deck: Sequence[int | str] | None = None, dealer: Any = 0, seed: Any = None) -> np.ndarray:
    """A new deal as a core state, from an explicit deck (R4 order, top first) or from ``seed``, exactly as
    ``Game.deal`` deals it (which checks the arguments)."""
    core_rule_bits(rules)
    return state_from_game(Game.deal(rules, deck=deck, dealer=dealer, seed=seed))


def state_from_game(game: Game, hidden_ok: bool = False) -> np.ndarray:
    """The core state of a ``Game`` at any point of its deal. The deck order must be known (not an information
    set's template; determinize it first) unless ``hidden_ok``: then erased talon cards stay -1 (for
    :func:`~.search.information_template`)."""
    if not isinstance(game, Game):
        raise ValueError(f"expected a Game, got {type(game).__name__}")
    bits = core_rule_bits(game.rules)
    if not hidden_ok and any(card < 0 for card in game.stock[game.stock_pos:]):  # the drawn part may be erased
        raise ValueError("the game's talon order is hidden (an information set's template): determinize it first")
    state = np.zeros(STATE_SIZE, dtype=np.int64)
    for player in (0, 1):
        state[HAND0 + player] = game.hands[player]
        state[TRICK_POINTS0 + player] = game.trick_points[player]
        state[MARRIAGE_POINTS0 + player] = game.marriage_points[player]
        state[TRICKS_WON0 + player] = game.tricks_won[player]
        state[WON_CARDS0 + player] = game.won_cards[player]
    for leader, lead, follow, _winner, in_phase2 in game.tricks:
        state[PLAYED0 + leader] |= 1 << lead
        state[PLAYED0 + 1 - leader] |= 1 << follow
        state[LED0 + leader] |= 1 << lead
        if in_phase2:
            state[CANNOT_HOLD0 + leader] |= _void_shown(lead, follow, game.trump_mask)
    for marriage in game.marriages:
        state[SHOWN0 + marriage.player] |= (1 << marriage.led_card) | (1 << (marriage.led_card ^ 1))
        state[MARRIED_SUITS0 + marriage.player] |= 1 << marriage.suit
    for exchange in game.exchanges:
        state[SHOWN0 + exchange.player] |= 1 << exchange.taken_card
    if game.bottom_taker is not None:
        state[SHOWN0 + game.bottom_taker] |= 1 << game.bottom_taken_card
    state[STAGE] = game.stage
    state[TO_MOVE] = game.to_move
    state[LEADER] = game.leader
    state[LEAD_CARD] = game.lead_card
    state[LEAD_WAS_MARRIAGE] = game.lead_was_marriage
    state[TURN_STEP] = game.turn_step
    state[PHASE2] = game.phase2
    state[TRUMP_SUIT] = game.trump_suit
    state[TRUMP_CARD] = game.trump_card
    state[EXCHANGE_CARD] = game.exchange_card
    state[STOCK_POS] = game.stock_pos
    state[STOCK_LEN] = len(game.stock)
    state[BOTTOM_CARD] = -1 if game.bottom_card is None else game.bottom_card
    state[BOTTOM_TAKER] = -1 if game.bottom_taker is None else game.bottom_taker
    state[CLOSED_BY] = -1 if game.closed_by is None else game.closed_by
    state[OPPONENT_TRICKLESS_AT_CLOSE] = game.opponent_trickless_at_close
    state[CLOSED_AT_TRICK] = -1 if game.closed_at_trick is None else game.closed_at_trick
    state[TRICK_COUNT] = len(game.tricks)
    state[DEALER] = game.dealer
    state[RULE_BITS] = bits
    state[WINNER] = -1
    state[REASON] = -1
    for index in range(STOCK_SLOTS):
        state[STOCK + index] = game.stock[index] if index < len(game.stock) else -1
    if game.result is not None:
        state[WINNER] = -1 if game.result.winner is None else game.result.winner
        state[GAME_POINTS] = game.result.game_points
        state[REASON] = RESULT_REASONS.index(game.result.reason)
        state[TO_MOVE] = -1
    return state


# Slots with a fixed range (inclusive), checked by name: they index the core's tables, are shifted into masks or
# are packed into the solver's table keys (solver._key_a/_key_b: 8 bits per point count, 4 for the talon position).
# The masks and the cards are checked against the deck separately.
_SLOT_RANGES = (
    ("TRICK_POINTS0", TRICK_POINTS0, 0, 130), ("TRICK_POINTS1", TRICK_POINTS0 + 1, 0, 130),  # 120 + 10 (R1, R14)
    ("MARRIAGE_POINTS0", MARRIAGE_POINTS0, 0, 100), ("MARRIAGE_POINTS1", MARRIAGE_POINTS0 + 1, 0, 100),  # 40+3*20
    ("TRICKS_WON0", TRICKS_WON0, 0, 12), ("TRICKS_WON1", TRICKS_WON0 + 1, 0, 12),
    ("MARRIED_SUITS0", MARRIED_SUITS0, 0, 15), ("MARRIED_SUITS1", MARRIED_SUITS0 + 1, 0, 15),
    ("LEADER", LEADER, 0, 1), ("LEAD_WAS_MARRIAGE", LEAD_WAS_MARRIAGE, 0, 1), ("TURN_STEP", TURN_STEP, 0, 2),
    ("PHASE2", PHASE2, 0, 1), ("TRUMP_SUIT", TRUMP_SUIT, 0, 3), ("BOTTOM_TAKER", BOTTOM_TAKER, -1, 1),
    ("CLOSED_BY", CLOSED_BY, -1, 1), ("OPPONENT_TRICKLESS_AT_CLOSE", OPPONENT_TRICKLESS_AT_CLOSE, 0, 1),
    ("CLOSED_AT_TRICK", CLOSED_AT_TRICK, -1, 12), ("TRICK_COUNT", TRICK_COUNT, 0, 12), ("DEALER", DEALER, 0, 1),
    ("WINNER", WINNER, -1, 1), ("GAME_POINTS", GAME_POINTS, 0, 3), ("REASON", REASON, -1, len(RESULT_REASONS) - 1),
)
# Card masks outside the hand / won-cards partition: any subset of the 24 cards.
_MASK_SLOTS = (("PLAYED0", PLAYED0), ("PLAYED1", PLAYED0 + 1), ("SHOWN0", SHOWN0), ("SHOWN1", SHOWN0 + 1),
               ("CANNOT_HOLD0", CANNOT_HOLD0), ("CANNOT_HOLD1", CANNOT_HOLD0 + 1), ("LED0", LED0), ("LED1", LED0 + 1))


_DECK_MASK_24, _DECK_MASK_20 = mask_of(deck_cards(24)), mask_of(deck_cards(20))  # R1, R2


def check_state(state: Any) -> np.ndarray:
    """Check that ``state`` is a well-formed core state: a C-contiguous ``int64`` array of its shape, every slot in
    its range, and the cards: every card of the deck exactly once among the hands, the won tricks, the card on the
    table, the talon and the bottom card (R1, R2, R4); in a deal in progress also who moves, the hand sizes, the
    bottom card and the phase as play leaves them (R7, R8, R10). Returns it."""
    if not isinstance(state, np.ndarray) or state.shape != (STATE_SIZE,) or state.dtype != np.int64:
        shape = getattr(state, "shape", None)
        dtype = getattr(state, "dtype", type(state).__name__)
        raise ValueError(f"malformed core state: expected an int64 array of shape ({STATE_SIZE},), "
                         f"got {dtype} of shape {shape}")
    if not state.flags.c_contiguous:  # the kernels read it through a raw pointer
        raise ValueError("malformed core state: the array is not C-contiguous (a strided view); pass a copy")
    cells = state.tolist()  # Python ints: reading them is several times faster than numpy scalars
    bits = cells[RULE_BITS]
    if not 0 <= bits < 256 or not bits & RULE_AUTO_DECLARE or bits & RULE_ALLOW_FALSE_DECLARATION:
        raise ValueError(f"malformed core state: rule bits {bits} (auto_declare must be on, false declarations off)")
    stage = cells[STAGE]
    if not 0 <= stage <= OVER:
        raise ValueError(f"malformed core state: stage {stage} is not a stage id 0..{OVER}")
    to_move = cells[TO_MOVE]
    if to_move not in ((-1, 0, 1) if stage == OVER else (0, 1)):
        raise ValueError(f"malformed core state: player to move (TO_MOVE) {to_move} is not 0 or 1")
    for name, slot, low, high in _SLOT_RANGES:
        if not low <= cells[slot] <= high:
            raise ValueError(f"malformed core state: {name} (slot {slot}) is {cells[slot]}, "
                             f"not in {low}..{high}")
    if stage == OVER and cells[REASON] < 0:  # -1 means "no result yet"
        raise ValueError(f"malformed core state: the deal is over but REASON (slot {REASON}) is {cells[REASON]}")
    for name, slot in _MASK_SLOTS:
        if not 0 <= cells[slot] < 1 << 24:
            raise ValueError(f"malformed core state: {name} (slot {slot}) is {cells[slot]}, not a 24-card mask")
    deck_mask = _DECK_MASK_20 if bits & RULE_DECK_20 else _DECK_MASK_24
    lead_card, bottom_card = cells[LEAD_CARD], cells[BOTTOM_CARD]
    for name, slot, allow_none in (("LEAD_CARD", LEAD_CARD, True), ("BOTTOM_CARD", BOTTOM_CARD, True),
                                   ("TRUMP_CARD", TRUMP_CARD, False), ("EXCHANGE_CARD", EXCHANGE_CARD, False)):
        card = cells[slot]
        if not ((allow_none and card == -1) or (0 <= card < 24 and deck_mask >> card & 1)):
            raise ValueError(f"malformed core state: {name} (slot {slot}) is {card}, not a card of the deck"
                             + (" or -1" if allow_none else ""))
    if stage != OVER and (lead_card >= 0) != (stage == FOLLOW):  # a follow answers the led card
        raise ValueError(f"malformed core state: LEAD_CARD {lead_card} at stage {stage} (a card at FOLLOW, "
                         "-1 at the other stages of a deal in progress)")
    stock_len, stock_pos = cells[STOCK_LEN], cells[STOCK_POS]
    if stock_len != (7 if bits & RULE_DECK_20 else 11) or not 0 <= stock_pos <= stock_len:
        raise ValueError(f"malformed core state: talon position {stock_pos} of {stock_len} face-down cards")
    for index in range(STOCK_SLOTS):
        card = cells[STOCK + index]
        face_down = stock_pos <= index < stock_len
        if not (0 <= card < 24 if face_down else -1 <= card < 24):
            raise ValueError(f"malformed core state: talon slot STOCK+{index} (slot {STOCK + index}) is {card}, "
                             + ("not a card (a face-down talon card)" if face_down else "not a card or -1"))
    seen = 0
    places = [cells[HAND0], cells[HAND0 + 1], cells[WON_CARDS0], cells[WON_CARDS0 + 1]]
    places += [1 << card for card in cells[STOCK + stock_pos:STOCK + stock_len]]
    for card in (lead_card, bottom_card):
        if card >= 0:
            places.append(1 << card)
    for place in places:
        if place < 0 or place & ~deck_mask:
            raise ValueError(f"malformed core state: a card outside the {deck_mask.bit_count()}-card deck")
        if seen & place:
            raise ValueError("malformed core state: a card is in two places at once")
        seen |= place
    if seen != deck_mask:
        raise ValueError(f"malformed core state: {(deck_mask & ~seen).bit_count()} cards of the deck are missing")
    if stage != OVER:  # a deal ends at any step (a declaration, R13), so a finished one keeps whatever it had
        _check_position(cells, stage)
    return state


def _check_position(cells: list[int], stage: int) -> None:
    """The slots of a deal in progress agree with one another as play leaves them (the kernels rely on it: a
    position with no legal move, or a talon without its bottom card, is read out of bounds)."""
    leader, to_move, closed_by = cells[LEADER], cells[TO_MOVE], cells[CLOSED_BY]
    face_down = cells[STOCK_LEN] - cells[STOCK_POS]
    won = cells[WON_CARDS0].bit_count() + cells[WON_CARDS0 + 1].bit_count()
    if won != 2 * cells[TRICK_COUNT]:
        raise ValueError(f"malformed core state: {won} cards in won tricks, but TRICK_COUNT is {cells[TRICK_COUNT]}")
    if (closed_by >= 0) != (cells[CLOSED_AT_TRICK] >= 0):
        raise ValueError(f"malformed core state: CLOSED_BY {closed_by} with CLOSED_AT_TRICK {cells[CLOSED_AT_TRICK]} "
                         "(both -1, or both set: R10)")
    if (cells[BOTTOM_CARD] >= 0) != (face_down > 0):
        raise ValueError(f"malformed core state: BOTTOM_CARD {cells[BOTTOM_CARD]} with {face_down} face-down talon "
                         "cards (the bottom card is taken with the last of them, R7)")
    if cells[PHASE2] != (closed_by >= 0 or face_down == 0):
        raise ValueError(f"malformed core state: PHASE2 {cells[PHASE2]}, but the talon is "
                         + ("closed" if closed_by >= 0 else "open") + f" with {face_down} face-down cards (R8)")
    if stage == PREDRAW and (cells[PHASE2] or face_down < 2 or not cells[RULE_BITS] & RULE_CLOSE_DRAW_OPTION):
        # The draw would read past the talon (the solver crashed the process on such a state).
        raise ValueError(f"malformed core state: stage PREDRAW (close before drawing, R10) needs the rule "
                         f"close_draw_option and an open talon of two face-down cards or more; PHASE2 "
                         f"{cells[PHASE2]}, {face_down} face-down")
    expected_mover = {LEAD: leader, PREDRAW: leader, FOLLOW: 1 - leader, RESPOND_CLOSE: 1 - closed_by}[stage]
    if stage == RESPOND_CLOSE and closed_by < 0:
        raise ValueError("malformed core state: the stage answers a closing (R10), but CLOSED_BY is -1")
    if to_move != expected_mover:
        raise ValueError(f"malformed core state: TO_MOVE {to_move} at stage {stage} with LEADER {leader} and "
                         f"CLOSED_BY {closed_by}; the player to move there is {expected_mover}")
    held = (cells[HAND0 + leader].bit_count(), cells[HAND0 + 1 - leader].bit_count())  # leader's, the other's
    missing = 1 if stage == FOLLOW else 0  # the leader's card is on the table
    if held[1] - held[0] != missing or (not cells[PHASE2] and held[1] != (5 if stage == PREDRAW else 6)):
        raise ValueError(f"malformed core state: the leader holds {held[0]} cards and his opponent {held[1]} at "
                         f"stage {stage}" + ("" if cells[PHASE2] else " in phase 1 (six each after the draw, R7)"))


def check_in_progress(state: Any, what: str) -> np.ndarray:
    """:func:`check_state`, and a deal not over yet: ``what`` (the caller, e.g. ``"solve"``) has nothing to decide
    in a finished one. Returns the state."""
    check_state(state)
    if state[STAGE] == OVER:
        raise ValueError(f"{what} needs a deal in progress; the deal is over")
    return state


def legal_actions(state: np.ndarray) -> list[int]:
    """Legal action ids, ascending (as ``Game.legal_actions``); none once the deal is over."""
    mask = int(engine.legal_mask(check_state(state)))
    return [action for action in range(NUM_ACTIONS) if mask >> action & 1]


def apply_action(state: np.ndarray, action: Any) -> None:
    """Apply ``action`` to ``state`` in place, refusing an illegal or malformed one, or a malformed or read-only
    state, by name."""
    check_state(state)
    if not state.flags.writeable:
        raise ValueError("apply_action changes the state in place; this state array is read-only")
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
        raise ValueError(f"malformed action {action!r}: expected an integer in 0..{NUM_ACTIONS - 1}")
    action = int(action)
    if state[STAGE] == OVER:
        raise ValueError("the deal is over; no action can be applied")
    mask = int(engine.legal_mask(state))
    if not 0 <= action < NUM_ACTIONS or not mask >> action & 1:
        legal = ", ".join(action_name(a) for a in range(NUM_ACTIONS) if mask >> a & 1)
        shown = repr(action_name(action)) if 0 <= action < NUM_ACTIONS else f"{action} (not an action id)"
        raise ValueError(f"illegal action {shown} for player {int(state[TO_MOVE])}; legal: {legal}")
    engine.apply(state, action)


def result_of(state: np.ndarray) -> DealResult | None:
    """The deal's result as the engine reports it, ``None`` before the end."""
    check_state(state)
    if state[STAGE] != OVER:
        return None
    winner, reason = int(state[WINNER]), int(state[REASON])
    points = (int(engine.counted_points(state, 0)), int(engine.counted_points(state, 1)))
    return DealResult(None if winner < 0 else winner, int(state[GAME_POINTS]), RESULT_REASONS[reason], points)
