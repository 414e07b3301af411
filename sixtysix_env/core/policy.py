"""The search agents' playout policy on the core: a fast deterministic player, and playouts that end in an exact
phase-2 solve (R8).

These kernels are the compiled twins of ``agents.pimc.policy_action``, ``close_potential`` and ``playout_value``
(the reference; ``tests/test_core_agents.py`` checks that both choose the same actions and values on thousands of
positions). The weights live in ``agents/pimc.py`` and are handed in as one array (see :func:`pack_weights`), so
the two cannot drift apart in their numbers.
"""

from __future__ import annotations

import numpy as np

from ..actions import CLOSE, DRAW, EXCHANGE, MARRY_BASE, PASS
from ..cards import QUEENS_MASK
from ..game import GOAL
from ._jit import kernel
from .engine import (
    CARD_POINTS_TABLE, HIGHER_IN_SUIT_TABLE, SUIT_MASK_TABLE, apply, bit_index, counted_points, deal_into,
    follow_mask, legal_mask, seed_generator, shuffle_deck, value_for,
)
from .layout import (
    CLOSED_BY, FOLLOW, HAND0, LEAD, LEAD_CARD, MARRIAGE_POINTS0, OVER, PHASE2, PREDRAW, RESPOND_CLOSE, STAGE,
    STATE_SIZE, STOCK_LEN, STOCK_POS, TO_MOVE, TRICK_POINTS0, TRUMP_SUIT, WON_CARDS0,
)
from .solver import _solve_value

# Slots of the weights array (pack_weights).
_TRUMP_KEEP = 0  # 6 values by rank 9 J Q K T A
_PLAIN_KEEP = 6  # 6 values
_TEN_UNDER_ACE = 12
_PAIR_SHARE = 13
_WIN_BONUS = 14
_CLOSE_POTENTIAL = 15
WEIGHT_COUNT = 16
# The slots' names, in order: the keys of a playout-weights file (train/tune_playout_policy.py writes them,
# agents.pimc.load_playout_weights reads them).
WEIGHT_NAMES = (
    [f"trump_keep_{rank}" for rank in "9JQKTA"] + [f"plain_keep_{rank}" for rank in "9JQKTA"]
    + ["ten_under_ace", "pair_share", "win_bonus", "close_potential"]
)
_GOAL = GOAL
_QUEENS = QUEENS_MASK


def pack_weights(trump_keep, plain_keep, ten_under_ace, pair_share, win_bonus, close_potential) -> np.ndarray:
    """The policy's weights (``agents.pimc``'s constants) as the float array the kernels read."""
    weights = np.zeros(WEIGHT_COUNT, dtype=np.float64)
    weights[_TRUMP_KEEP:_TRUMP_KEEP + 6] = trump_keep
    weights[_PLAIN_KEEP:_PLAIN_KEEP + 6] = plain_keep
    weights[_TEN_UNDER_ACE] = ten_under_ace
    weights[_PAIR_SHARE] = pair_share
    weights[_WIN_BONUS] = win_bonus
    weights[_CLOSE_POTENTIAL] = close_potential
    return weights


@kernel
def keep_value(card, hand, state, weights):
    """What ``card`` is still worth to the player holding ``hand`` (``agents.pimc.keep_value``)."""
    suit = card // 6
    rank = card % 6
    trump_suit = state[TRUMP_SUIT]
    if suit == trump_suit:
        value = weights[_TRUMP_KEEP + rank]
    elif rank == 4 and not (hand | state[WON_CARDS0] | state[WON_CARDS0 + 1]) >> (card + 1) & 1:
        value = weights[_TEN_UNDER_ACE]
    else:
        value = weights[_PLAIN_KEEP + rank]
    if (rank == 2 or rank == 3) and hand >> (card ^ 1) & 1:
        value += weights[_PAIR_SHARE] * (40 if suit == trump_suit else 20)
    return value


@kernel
def policy_action(state, weights):
    """The playout policy's action (``agents.pimc.policy_action``; the core never offers ``declare``)."""
    stage = state[STAGE]
    player = state[TO_MOVE]
    legal = legal_mask(state)
    if stage == RESPOND_CLOSE:
        return EXCHANGE if legal >> EXCHANGE & 1 else PASS
    if stage == PREDRAW:
        return DRAW
    hand = state[HAND0 + player]
    trump_mask = SUIT_MASK_TABLE[state[TRUMP_SUIT]]
    if stage == FOLLOW:
        lead = state[LEAD_CARD]
        allowed = follow_mask(state, hand) if state[PHASE2] else hand
        beaters = HIGHER_IN_SUIT_TABLE[lead] | (0 if trump_mask >> lead & 1 else trump_mask)
        opponent = 1 - player
        mine = state[TRICK_POINTS0 + player] + state[MARRIAGE_POINTS0 + player]
        theirs = state[TRICK_POINTS0 + opponent] + state[MARRIAGE_POINTS0 + opponent]
        best_score = -1e18
        best_card = -1
        remaining = allowed
        while remaining:
            low = remaining & -remaining
            remaining ^= low
            card = bit_index(low)
            trick = CARD_POINTS_TABLE[lead] + CARD_POINTS_TABLE[card]
            score = -keep_value(card, hand, state, weights)
            if beaters >> card & 1:
                score += trick
                if mine + trick >= _GOAL:
                    score += weights[_WIN_BONUS]
            else:
                score -= trick
                if theirs + trick >= _GOAL:
                    score -= weights[_WIN_BONUS]
            if score > best_score:
                best_score = score
                best_card = card
        return best_card
    # LEAD
    if legal >> EXCHANGE & 1:
        return EXCHANGE
    marriages = (legal >> MARRY_BASE) & 0xFF
    if marriages:
        trump_base = MARRY_BASE + 2 * state[TRUMP_SUIT]
        if legal >> trump_base & 1:
            return trump_base
        return MARRY_BASE + bit_index(marriages & -marriages)  # the lowest: a Queen (the pair's first id)
    if state[PHASE2]:
        other = state[HAND0 + 1 - player]
        # Lead a card the opponent cannot beat, the most points first (ties: the lower card id).
        for points in (11, 10, 4, 3, 2, 0):
            remaining = hand
            while remaining:
                low = remaining & -remaining
                remaining ^= low
                card = bit_index(low)
                if CARD_POINTS_TABLE[card] != points:
                    continue
                if not other & (HIGHER_IN_SUIT_TABLE[card] | (0 if trump_mask >> card & 1 else trump_mask)):
                    return card
    best_score = 1e18
    best_card = -1
    remaining = hand
    while remaining:
        low = remaining & -remaining
        remaining ^= low
        card = bit_index(low)
        score = keep_value(card, hand, state, weights) + 0.5 * CARD_POINTS_TABLE[card]
        if score < best_score:
            best_score = score
            best_card = card
    return best_card


@kernel
def policy_actions(states, rows, weights, actions):
    """:func:`policy_action` for the player to move in ``states[rows[k]]``, written to ``actions[rows[k]]``: the
    playout policy as a fast sparring opponent for a batch of deals (train/vector_ppo.py). It never closes the
    talon (closing is :func:`_duel_game`'s decision, with a solve) and, leading in phase 2, reads the opponent's
    hand as the playouts of a determinized world do: a slightly omniscient opponent once R8 applies."""
    for index in range(rows.shape[0]):
        row = rows[index]
        actions[row] = policy_action(states[row], weights)


@kernel
def close_potential(state):
    """A cheap upper-end estimate of what the player to lead could collect after closing (R10)
    (``agents.pimc.close_potential``)."""
    player = state[TO_MOVE]
    hand = state[HAND0 + player]
    played = state[WON_CARDS0] | state[WON_CARDS0 + 1]
    potential = counted_points(state, player)
    trump_suit = state[TRUMP_SUIT]
    pairs = hand & (hand >> 1) & _QUEENS
    while pairs:
        queen = bit_index(pairs & -pairs)
        pairs &= pairs - 1
        potential += 40 if queen // 6 == trump_suit else 20
    trump_mask = SUIT_MASK_TABLE[trump_suit]
    remaining = hand
    while remaining:
        low = remaining & -remaining
        remaining ^= low
        card = bit_index(low)
        out = HIGHER_IN_SUIT_TABLE[card] & ~hand & ~played
        if not out and (trump_mask >> card & 1 or card % 6 >= 4):
            potential += CARD_POINTS_TABLE[card] + 4
    return potential


def playout_value(state, player, weights, entries, nodes):
    """Game points for ``player``: play ``state`` (modified) on with :func:`policy_action` until phase 2, then
    solve exactly; a player about to lead closes (R10) when :func:`close_potential` says it may pay and the
    world's exact value of the closed position is a win for him (``agents.pimc.playout_value``). Jitted code calls
    :func:`duel_value` with the same weights for both seats (one kernel less to compile)."""
    return duel_value(state, player, weights, weights, entries, nodes)


@kernel
def policy_playout_value(state, player, weights):
    """Game points for ``player`` when both play :func:`policy_action` to the end (no solver)."""
    while state[STAGE] != OVER:
        apply(state, policy_action(state, weights))
    return value_for(state, player)


@kernel
def duel_value(state, seat_a, weights_a, weights_b, entries, nodes):
    """Play ``state`` on to its end, the seat ``seat_a`` by the policy weighted ``weights_a`` and the other by
    ``weights_b``, as :func:`playout_value` plays (closings checked by the solver, phase 2 solved exactly); game
    points of ``seat_a``."""
    while state[STAGE] != OVER:
        stage = state[STAGE]
        if state[PHASE2] and (stage == LEAD or stage == FOLLOW):
            value = _solve_value(state, -4, 4, entries, 0, nodes)
            return value if seat_a == 0 else -value
        mover = state[TO_MOVE]
        weights = weights_a if mover == seat_a else weights_b
        if ((stage == LEAD or stage == PREDRAW) and state[CLOSED_BY] < 0
                and state[STOCK_LEN] - state[STOCK_POS] >= 2):
            if close_potential(state) >= weights[_CLOSE_POTENTIAL] and legal_mask(state) >> CLOSE & 1:
                closed = state.copy()
                apply(closed, CLOSE)
                while closed[STAGE] == RESPOND_CLOSE:
                    apply(closed, policy_action(closed, weights_a if closed[TO_MOVE] == seat_a else weights_b))
                if closed[STAGE] == OVER:
                    value = value_for(closed, mover)
                else:
                    value = _solve_value(closed, -4, 4, entries, 0, nodes)
                    if mover == 1:
                        value = -value
                if value > 0:
                    return value if mover == seat_a else -value
        apply(state, policy_action(state, weights))
    return value_for(state, seat_a)


@kernel
def policy_duel(weights_a, weights_b, num_deals, seed, rule_bits, entries, nodes, margins):
    """Duplicate deals between two weightings of the playout policy: each random deal played twice with the
    seats swapped; ``margins[deal]`` = the mean game points of ``weights_a`` over the two games."""
    seed_generator(seed)
    cards = np.empty(24, dtype=np.int64)
    state = np.empty(STATE_SIZE, dtype=np.int64)
    deck_size = 20 if rule_bits & 1 else 24
    for deal in range(num_deals):
        shuffle_deck(cards, deck_size)
        total = 0
        for seat_a in range(2):
            deal_into(state, cards, deal & 1, rule_bits)
            total += duel_value(state, seat_a, weights_a, weights_b, entries, nodes)
        margins[deal] = total / 2.0
