"""The rules of one two-player deal (R4–R16) as numba kernels over the state array of :mod:`.layout`.

This is the second implementation of the rule book; ``sixtysix_env/game.py`` is the reference. Every function
mirrors the method of ``Game`` named in its docstring and cites the same R-ids, and ``tests/test_core.py`` plays
thousands of random deals per preset through both, comparing the legal actions, the state after every action and
the result (``make test-slow``: 10^5 per preset). A rule change is made in ``game.py`` first, then here, and the
differential test shows whether the two still agree (docs/performance.md, "The compiled core").

The kernels assume valid input (a state built by :func:`deal_state` or :mod:`.state`, an action from
:func:`legal_mask`); the Python boundary in :mod:`.state` checks what users hand in. Supported switches: every
switch the presets ``standard``, ``paderborn`` and ``scharf`` use; ``auto_declare`` must be on and
``allow_false_declaration`` off (environment options the presets leave at their defaults).

Actions are the ids of the fixed ``Discrete(37)`` layout (docs/actions.md); a set of actions is a 37-bit mask.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba.extending import intrinsic

from ..actions import CLOSE, DRAW, EXCHANGE, MARRY_BASE, NUM_ACTIONS, PASS
from ..cards import CARD_POINTS, HIGHER_IN_SUIT, QUEENS_MASK, SUIT_MASKS
from ..game import GOAL, LAST_TRICK_BONUS, SCHNEIDER_LIMIT
from ._jit import kernel  # (a safe numba cache before any kernel is decorated)
from .layout import (
    BOTTOM_CARD, BOTTOM_TAKER, CANNOT_HOLD0, CLOSED_AT_TRICK, CLOSED_BY, DEALER, EXCHANGE_CARD, FOLLOW, GAME_POINTS,
    HAND0, LEAD, LEAD_CARD, LEAD_WAS_MARRIAGE, LEADER, LED0, MARRIAGE_POINTS0, MARRIED_SUITS0,
    OPPONENT_TRICKLESS_AT_CLOSE, OVER, PHASE2, PLAYED0, PREDRAW, REASON, REASON_CLOSER_FAILED, REASON_DECLARED,
    REASON_LAST_TRICK, REASON_NOT_SCORED, RESPOND_CLOSE, RULE_BITS, RULE_CLOSE_DRAW_OPTION, RULE_DECK_20,
    RULE_EXCHANGE_AFTER_OPPONENT_CLOSES, RULE_EXCHANGE_NEEDS_TRICK, RULE_MARRIAGE_IN_PHASE2, RULE_MARRIAGE_NEEDS_TRICK,
    SHOWN0, STAGE, STATE_SIZE, STOCK, STOCK_LEN, STOCK_POS, STOCK_SLOTS, TO_MOVE, TRICK_COUNT, TRICK_POINTS0,
    TRICKS_WON0, TRUMP_CARD, TRUMP_SUIT, TURN_STEP, WINNER, WON_CARDS0,
)

CARD_POINTS_TABLE = np.array(CARD_POINTS, dtype=np.int64)
HIGHER_IN_SUIT_TABLE = np.array(HIGHER_IN_SUIT, dtype=np.int64)
SUIT_MASK_TABLE = np.array(SUIT_MASKS, dtype=np.int64)
_QUEENS = QUEENS_MASK
_GOAL = GOAL
_LAST_TRICK_BONUS = LAST_TRICK_BONUS
_SCHNEIDER_LIMIT = SCHNEIDER_LIMIT
_MARRY_BASE = MARRY_BASE
_EXCHANGE = EXCHANGE
_CLOSE = CLOSE
_DRAW = DRAW
_PASS = PASS
NUM_ACTION_BITS = NUM_ACTIONS


# ---------------------------------------------------------------------------------------------------- bit tools
@intrinsic
def _trailing_zeros(typing_context, mask):
    """LLVM's ``cttz``, defined for 0 (the width of the type), through numba's public ``intrinsic`` as
    ``_count_bits`` is, rather than numba's internal ``numba.cpython.unsafe`` module."""
    def codegen(context, builder, signature, arguments):
        return builder.cttz(arguments[0], ir.Constant(ir.IntType(1), 0))

    return mask(mask), codegen


@kernel
def bit_index(single_bit):
    """The index of the only set bit of ``single_bit`` (LLVM's ``cttz``: one instruction on current processors);
    64 for 0, which no caller passes."""
    return _trailing_zeros(single_bit)


@intrinsic
def _count_bits(typing_context, mask):
    """LLVM's ``ctpop``: one instruction where the processor has it."""
    def codegen(context, builder, signature, arguments):
        return builder.ctpop(arguments[0])

    return mask(mask), codegen


@kernel
def popcount(mask):
    """Set bits of a non-negative mask."""
    return _count_bits(mask)


@kernel
def copy_state(target, source):
    """``target[:] = source`` for two states, as a plain loop: numba's slice assignment carries a shape check whose
    error message alone takes seconds to compile."""
    for slot in range(STATE_SIZE):
        target[slot] = source[slot]


@kernel
def nth_bit(mask, n):
    """The index of the ``n``-th lowest set bit of ``mask`` (``n`` from 0)."""
    for _ in range(n):
        mask &= mask - 1
    return bit_index(mask & -mask)


@kernel
def marry_card(action):
    """The card a ``marry`` action leads (actions.marry_card): Queen id + 1 is the King."""
    offset = action - _MARRY_BASE
    return (offset >> 1) * 6 + 2 + (offset & 1)


# ---------------------------------------------------------------------------------------------------- dealing
@kernel
def deal_into(state, cards, dealer, rule_bits):
    """Fill ``state`` with a new deal from ``cards`` in R4 order (top first), as ``Game._from_cards``."""
    state[:] = 0
    forehand = 1 - dealer
    # R4: cards 1-3 and 7-9 to forehand, 4-6 and 10-12 to the dealer; card 13 is the trump card.
    forehand_hand = 0
    dealer_hand = 0
    for position in (0, 1, 2, 6, 7, 8):
        forehand_hand |= 1 << cards[position]
    for position in (3, 4, 5, 9, 10, 11):
        dealer_hand |= 1 << cards[position]
    state[HAND0 + forehand] = forehand_hand
    state[HAND0 + dealer] = dealer_hand
    trump_card = cards[12]
    deck_size = 20 if rule_bits & RULE_DECK_20 else 24
    state[TRUMP_CARD] = trump_card
    state[TRUMP_SUIT] = trump_card // 6
    state[EXCHANGE_CARD] = (trump_card // 6) * 6 + (1 if deck_size == 20 else 0)  # R9 nine, R2 jack
    stock_len = deck_size - 13
    for index in range(STOCK_SLOTS):
        state[STOCK + index] = cards[13 + index] if index < stock_len else -1
    state[STOCK_LEN] = stock_len
    state[STOCK_POS] = 0
    state[BOTTOM_CARD] = trump_card
    state[BOTTOM_TAKER] = -1
    state[CLOSED_BY] = -1
    state[CLOSED_AT_TRICK] = -1
    state[DEALER] = dealer
    state[RULE_BITS] = rule_bits
    state[STAGE] = LEAD
    state[TO_MOVE] = forehand  # R5
    state[LEADER] = forehand
    state[LEAD_CARD] = -1
    state[WINNER] = -1
    state[REASON] = -1


@kernel
def shuffle_deck(cards, deck_size):
    """A uniform deck order into ``cards`` (numba's generator, seeded by :func:`seed_generator`)."""
    count = 0
    for card in range(24):
        if deck_size == 24 or card % 6 != 0:  # R2: the 20-card deck has no nines
            cards[count] = card
            count += 1
    for index in range(count - 1, 0, -1):
        other = np.random.randint(0, index + 1)
        cards[index], cards[other] = cards[other], cards[index]


@kernel
def seed_generator(seed):
    np.random.seed(seed)


# ---------------------------------------------------------------------------------------------------- queries
@kernel
def counted_points(state, player):
    """R12 (``Game.points``): tricks, plus marriages once the player has won a trick."""
    if state[TRICKS_WON0 + player] > 0:
        return state[TRICK_POINTS0 + player] + state[MARRIAGE_POINTS0 + player]
    return state[TRICK_POINTS0 + player]


@kernel
def follow_mask(state, hand):
    """R8 (``Game._follow_mask``): win in suit, else follow suit, else trump, else anything."""
    lead = state[LEAD_CARD]
    higher = hand & HIGHER_IN_SUIT_TABLE[lead]
    if higher:
        return higher
    same_suit = hand & SUIT_MASK_TABLE[lead // 6]
    if same_suit:
        return same_suit
    trumps = hand & SUIT_MASK_TABLE[state[TRUMP_SUIT]]
    return trumps if trumps else hand


@kernel
def may_marry(state, player):
    """R11 (``Game._may_marry``): ``marriage_needs_trick``, ``marriage_in_phase2``."""
    rules = state[RULE_BITS]
    if rules & RULE_MARRIAGE_NEEDS_TRICK and state[TRICKS_WON0 + player] == 0:
        return False
    if state[PHASE2] and not rules & RULE_MARRIAGE_IN_PHASE2:
        # paderborn: the closer may announce on his closing turn, only when both drew first (six cards, R10).
        return state[CLOSED_BY] == player and state[TURN_STEP] == 2 and popcount(state[HAND0 + player]) == 6
    return True


@kernel
def may_exchange(state, player):
    """R9 (``Game._may_exchange``): first thing in the turn, holding the trump nine (jack), talon open."""
    if state[TURN_STEP] != 0 or not state[HAND0 + player] >> state[EXCHANGE_CARD] & 1:
        return False
    if state[CLOSED_BY] >= 0 or state[STOCK_POS] >= state[STOCK_LEN]:
        return False
    return not (state[RULE_BITS] & RULE_EXCHANGE_NEEDS_TRICK and state[TRICKS_WON0 + player] == 0)


@kernel
def may_close(state):
    """R10 (``Game._may_close``): not after announcing, talon open with at least two face-down cards."""
    return state[TURN_STEP] < 2 and state[CLOSED_BY] < 0 and state[STOCK_LEN] - state[STOCK_POS] >= 2


@kernel
def legal_mask(state):
    """The legal actions as a 37-bit mask (``Game.legal_actions``); 0 once the deal is over."""
    stage = state[STAGE]
    player = state[TO_MOVE]
    hand = state[HAND0 + player] if player >= 0 else 0
    if stage == FOLLOW:
        return follow_mask(state, hand) if state[PHASE2] else hand
    if stage == LEAD:
        actions = hand
        pairs = hand & (hand >> 1) & _QUEENS  # each Queen whose King is held too (K = Q + 1)
        if pairs and may_marry(state, player):
            while pairs:
                queen = bit_index(pairs & -pairs)
                pairs &= pairs - 1
                actions |= 3 << (_MARRY_BASE + 2 * (queen // 6))
        if may_exchange(state, player):
            actions |= 1 << _EXCHANGE
        if may_close(state):
            actions |= 1 << _CLOSE
        return actions
    if stage == PREDRAW:  # R9 before R10: exchange first, then close before drawing or draw
        if may_exchange(state, player):
            return (1 << _EXCHANGE) | (1 << _CLOSE) | (1 << _DRAW)
        return (1 << _CLOSE) | (1 << _DRAW)
    if stage == RESPOND_CLOSE:
        if hand >> state[EXCHANGE_CARD] & 1:
            return (1 << _EXCHANGE) | (1 << _PASS)
        return 1 << _PASS
    return 0


@kernel
def talon_size(state):
    """R4: face-down cards plus the bottom card while it lies there."""
    return state[STOCK_LEN] - state[STOCK_POS] + (state[BOTTOM_CARD] >= 0)


@kernel
def value_for(state, player):
    """Game points of ``player`` once the deal is over (``DealResult.returns``), 0 before and when not scored."""
    winner = state[WINNER]
    if winner < 0:
        return 0
    return state[GAME_POINTS] if winner == player else -state[GAME_POINTS]


# ---------------------------------------------------------------------------------------------------- endings
@kernel
def _end(state, winner, game_points, reason):
    state[WINNER] = winner
    state[GAME_POINTS] = game_points
    state[REASON] = reason
    state[STAGE] = OVER
    state[TO_MOVE] = -1


@kernel
def _first_line_points(state, loser):
    """R16 first line: 3 if the loser has no trick, 2 if he has at most 32 counted points, else 1."""
    if state[TRICKS_WON0 + loser] == 0:
        return 3
    return 2 if counted_points(state, loser) <= _SCHNEIDER_LIMIT else 1


@kernel
def _closer_failed(state):
    """R16 second line: the closer's opponent scores 3 if he was trickless at the closing, else 2."""
    opponent = 1 - state[CLOSED_BY]
    _end(state, opponent, 3 if state[OPPONENT_TRICKLESS_AT_CLOSE] else 2, REASON_CLOSER_FAILED)


@kernel
def _declare(state, player):
    """R13 with ``auto_declare`` (``Game._declare``): the player has 66."""
    if state[CLOSED_BY] == 1 - player:
        _closer_failed(state)  # R16: the closer's opponent declared first
    else:
        _end(state, player, _first_line_points(state, 1 - player), REASON_DECLARED)


@kernel
def _finish_all_played(state, last_winner):
    """R14, R15, R16 (``Game._finish_all_played``): the last trick is played."""
    closer = state[CLOSED_BY]
    if closer >= 0:
        if counted_points(state, closer) >= _GOAL:  # no last-trick bonus after a closing (R14)
            _end(state, closer, _first_line_points(state, 1 - closer), REASON_DECLARED)
        else:
            _closer_failed(state)
        return
    state[TRICK_POINTS0 + last_winner] += _LAST_TRICK_BONUS  # R14
    first = counted_points(state, 0)
    second = counted_points(state, 1)
    if first == second:
        _end(state, -1, 0, REASON_NOT_SCORED)  # R15: 65:65
        return
    winner = 0 if first > second else 1
    _end(state, winner, _first_line_points(state, 1 - winner), REASON_LAST_TRICK)


# ---------------------------------------------------------------------------------------------------- moves
@kernel
def _draw(state, winner):
    """R7 (``Game._draw``): the winner draws the top card, then the loser; the loser of the talon's last trick
    takes the bottom card and phase 2 begins (R8)."""
    position = state[STOCK_POS]
    state[HAND0 + winner] |= 1 << state[STOCK + position]
    if position + 1 < state[STOCK_LEN]:
        state[HAND0 + 1 - winner] |= 1 << state[STOCK + position + 1]
        state[STOCK_POS] = position + 2
    else:
        loser = 1 - winner
        bottom = state[BOTTOM_CARD]
        state[HAND0 + loser] |= 1 << bottom
        state[SHOWN0 + loser] |= 1 << bottom  # both saw the card he took
        state[BOTTOM_TAKER] = loser
        state[BOTTOM_CARD] = -1
        state[STOCK_POS] = position + 1
        state[PHASE2] = 1


@kernel
def _exchange(state, player):
    """R9 (``Game._exchange``): swap the trump nine (jack) for the bottom card."""
    nine = state[EXCHANGE_CARD]
    taken = state[BOTTOM_CARD]
    state[HAND0 + player] ^= (1 << nine) | (1 << taken)
    state[SHOWN0 + player] |= 1 << taken
    state[BOTTOM_CARD] = nine


@kernel
def _close(state, player):
    """R10 (``Game._close``); with ``exchange_after_opponent_closes`` the opponent is offered an exchange (R9)."""
    state[CLOSED_BY] = player
    state[OPPONENT_TRICKLESS_AT_CLOSE] = 1 if state[TRICKS_WON0 + 1 - player] == 0 else 0
    state[CLOSED_AT_TRICK] = state[TRICK_COUNT]
    state[PHASE2] = 1
    state[TURN_STEP] = 2
    if state[RULE_BITS] & RULE_EXCHANGE_AFTER_OPPONENT_CLOSES:
        state[STAGE] = RESPOND_CLOSE
        state[TO_MOVE] = 1 - player


@kernel
def _void_shown(lead, follow, trump_mask):
    """Cards a phase-2 follower showed he cannot hold (R8; observation._void_shown)."""
    lead_suit_mask = SUIT_MASK_TABLE[lead // 6]
    if lead_suit_mask >> follow & 1:
        return HIGHER_IN_SUIT_TABLE[lead] if follow < lead else 0  # (b) followed low
    if trump_mask >> follow & 1:
        return lead_suit_mask  # (c) trumped: void in the suit led
    return lead_suit_mask | trump_mask  # (d) discarded: void in the suit led and in trumps


@kernel
def apply(state, action):
    """Apply a legal action (``Game.apply``); the caller guarantees legality (see :func:`legal_mask`)."""
    stage = state[STAGE]
    player = state[TO_MOVE]
    if stage == FOLLOW:
        leader = 1 - player
        lead = state[LEAD_CARD]
        state[HAND0 + player] ^= 1 << action
        trump_mask = SUIT_MASK_TABLE[state[TRUMP_SUIT]]
        # R6: the follower wins with a higher card of the suit led, or a trump on a non-trump lead.
        beaters = HIGHER_IN_SUIT_TABLE[lead] | (0 if trump_mask >> lead & 1 else trump_mask)
        winner = player if beaters >> action & 1 else leader
        state[TRICK_POINTS0 + winner] += CARD_POINTS_TABLE[lead] + CARD_POINTS_TABLE[action]
        state[TRICKS_WON0 + winner] += 1
        state[WON_CARDS0 + winner] |= (1 << lead) | (1 << action)
        state[PLAYED0 + leader] |= 1 << lead
        state[PLAYED0 + player] |= 1 << action
        state[LED0 + leader] |= 1 << lead
        if state[PHASE2]:
            state[CANNOT_HOLD0 + leader] |= _void_shown(lead, action, trump_mask)
        state[TRICK_COUNT] += 1
        state[LEAD_CARD] = -1
        state[LEADER] = winner
        state[TO_MOVE] = winner
        state[TURN_STEP] = 0
        if state[HAND0 + winner] == 0:  # both hands empty: the last trick (R14, R15)
            _finish_all_played(state, winner)
        elif state[TRICK_POINTS0 + winner] + state[MARRIAGE_POINTS0 + winner] >= _GOAL:
            _declare(state, winner)  # R13 auto_declare (the winner has a trick, so marriages count, R12)
        elif state[PHASE2]:
            state[STAGE] = LEAD
        elif state[RULE_BITS] & RULE_CLOSE_DRAW_OPTION and state[STOCK_LEN] - state[STOCK_POS] >= 2:
            state[STAGE] = PREDRAW  # R10 paderborn: close before drawing, or draw
        else:
            _draw(state, winner)  # R7
            state[STAGE] = LEAD
        return
    if stage == LEAD:
        if action < 24:
            state[HAND0 + player] ^= 1 << action
            state[LEAD_CARD] = action
            state[LEAD_WAS_MARRIAGE] = 0
            state[STAGE] = FOLLOW
            state[TO_MOVE] = 1 - player
        elif action < _EXCHANGE:  # R11 marriage: announce and lead one of the pair
            card = marry_card(action)
            suit = card // 6
            state[MARRIAGE_POINTS0 + player] += 40 if suit == state[TRUMP_SUIT] else 20
            state[MARRIED_SUITS0 + player] |= 1 << suit
            state[SHOWN0 + player] |= (1 << card) | (1 << (card ^ 1))
            if counted_points(state, player) >= _GOAL:
                _declare(state, player)  # R11: the announcement reaches 66; the card is not led
                return
            state[HAND0 + player] ^= 1 << card
            state[LEAD_CARD] = card
            state[LEAD_WAS_MARRIAGE] = 1
            state[STAGE] = FOLLOW
            state[TO_MOVE] = 1 - player
        elif action == _EXCHANGE:
            _exchange(state, player)
            state[TURN_STEP] = 1
        else:  # CLOSE (DECLARE is never legal with auto_declare)
            _close(state, player)
        return
    if stage == PREDRAW:
        if action == _DRAW:
            _draw(state, player)
            state[STAGE] = LEAD
        elif action == _EXCHANGE:  # R9; the choice of R10 stays his
            _exchange(state, player)
            state[TURN_STEP] = 1
        else:  # CLOSE before drawing (R10 close_draw_option)
            state[STAGE] = LEAD
            _close(state, player)
        return
    # RESPOND_CLOSE (R9 exchange_after_opponent_closes)
    if action == _EXCHANGE:
        _exchange(state, player)
    state[STAGE] = LEAD
    state[TO_MOVE] = state[CLOSED_BY]


@kernel
def random_action(state):
    """A uniformly random legal action (numba's generator)."""
    mask = legal_mask(state)
    return nth_bit(mask, np.random.randint(0, popcount(mask)))


# ---------------------------------------------------------------------------------------------------- playouts
@kernel
def random_playouts(num_deals, seed, rule_bits):
    """Deal ``num_deals`` random deals and play each to its end with uniformly random legal actions.

    Returns (decisions made, sum of player 0's game points): the throughput benchmark of the core."""
    seed_generator(seed)
    state = np.empty(STATE_SIZE, dtype=np.int64)
    cards = np.empty(24, dtype=np.int64)
    deck_size = 20 if rule_bits & RULE_DECK_20 else 24
    decisions = 0
    total = 0
    for deal in range(num_deals):
        shuffle_deck(cards, deck_size)
        deal_into(state, cards, deal & 1, rule_bits)
        while state[STAGE] != OVER:
            apply(state, random_action(state))
            decisions += 1
        total += value_for(state, 0)
    return decisions, total


@kernel
def play_random_to_end(state):
    """Play ``state`` on to its end with uniformly random actions (in place); returns the decisions made."""
    decisions = 0
    while state[STAGE] != OVER:
        apply(state, random_action(state))
        decisions += 1
    return decisions
