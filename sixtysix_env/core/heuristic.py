"""The ``heuristic`` player on the core: the compiled twin of :class:`agents.rule_based.HeuristicAgent`.

Search agents need a strong, fast model of how a player acts: as the rollout policy that plays a sampled world on
after a candidate action, and as the model of the opponent whose past choices say which hands he can hold
(:mod:`.inference`). :func:`heuristic_action` decides for the player to move in a full state using only what that
player may know (his hand, the public history in the state: cards won, shown and ruled out, scores, the talon's
size and bottom card); the hidden cards it needs are sampled from that view with numba's generator, never read.

It mirrors ``HeuristicAgent.act`` rule for rule, with the same R-ids (the reference and the docs are there):
exchange at once (R9), a marriage that reaches 66 (R11, R13), closing when sampled worlds solved after the closing
win with a margin (R10), the talon's last trick searched into phase 2 (R7), marriages 40 first, the phase-1 lead
against a model of the reply over sampled hands, phase-1 follows by card points won or given minus the worth of the
card spent, phase 2 (R8) solved exactly (after a closing: the best mean over sampled worlds). The follow rule and
every rule that samples nothing choose exactly the reference's action (tests/test_core_heuristic.py); where the
reference samples (leads, closings, the last trick's worlds, phase 2 after a closing) the two draw from the same
distribution with different generators.

The numbers (card worth, sample counts, closing thresholds) come in one float array, :func:`pack_params`, built
from the reference's ``Weights`` by ``agents.rule_based.core_heuristic_params`` so the two cannot drift apart.
"""

from __future__ import annotations

from typing import Any

import llvmlite.binding as llvm
import numpy as np
from numba import carray, cfunc, types

from ..actions import CLOSE, DRAW, EXCHANGE, MARRY_BASE, PASS
from ..schema import MAX_SAMPLE_COUNT
from ._jit import kernel
from .engine import (
    CARD_POINTS_TABLE, SUIT_MASK_TABLE, apply, bit_index, copy_state, counted_points, deal_into, legal_mask, marry_card,
    popcount, seed_generator, shuffle_deck, value_for,
)
from .layout import (
    BOTTOM_CARD, CANNOT_HOLD0, CLOSED_BY, EXCHANGE_CARD, FOLLOW, HAND0, LEAD, LEAD_CARD, MARRIAGE_POINTS0, OVER,
    PHASE2, PREDRAW, RESPOND_CLOSE, RULE_BITS, RULE_DECK_20, RULE_MARRIAGE_IN_PHASE2, SHOWN0, STAGE, STATE_SIZE,
    STOCK, STOCK_LEN, STOCK_POS, TO_MOVE, TRICK_COUNT, TRICK_POINTS0, TRICKS_WON0, TRUMP_SUIT, WON_CARDS0,
)
from .observation import encode_to_width
from .search import fill_hidden, sample_subset
from .solver import _POINTER, _solve_actions, _solve_value, check_table_arrays
from .state import check_in_progress

# Slots of the parameter array (pack_params), in card points unless noted.
P_TRUMP_KEEP = 0  # 6 values by rank 9 J Q K T A
P_PLAIN_KEEP = 6  # 6 values
P_TEN_UNDER_ACE = 12
P_MARRIAGE_HELD = 13
P_MARRIAGE_DRAWABLE = 14
P_EXCHANGE_NINE = 15
P_LEAD_BONUS = 16
P_FIRST_TRICK_BONUS = 17
P_DENY_FIRST_TRICK = 18
P_PENDING_SHARE = 19
P_AVERAGE_DRAW = 20
P_CLOSE_FILTER = 21
P_LEAD_SAMPLES = 22  # counts
P_CLOSE_SAMPLES = 23
P_CLOSE_MIN_VALUE = 24  # game points
P_CLOSE_MIN_WIN = 25  # share of worlds
P_PHASE2_SAMPLES = 26
P_ENDGAME_WORLDS = 27
P_ENDGAME_LOOKAHEAD = 28  # 1.0: search the talon's last trick
P_ROLLOUT_SOLVES = 29  # rollouts solve the rest exactly from phase 2 (R8) on (1.0), or from the talon's last trick
# (R7) on (2.0), or from there on only while the talon is not closed (3.0 and 4.0: a closed phase 2 is played,
# R10); 0.0: they play to the end
P_ROLLOUT_SOLVE_TALON = 30  # with P_ROLLOUT_SOLVES >= 2: solve once at most this many talon cards are face down (1:
# from the talon's last trick on)
P_CLOSE_READS_WORLD = 31  # 1.0: the closing check (R10) solves the state it is played in instead of sampling worlds
# from the mover's view: a model of an opponent's closing inside a search's rollout, never a player (it sees all)
PARAM_COUNT = 32

_GOAL = 66  # R13
_WIN_BONUS = 100.0  # reaching 66 (or stopping the opponent) outweighs any card-point consideration
_MAX_GAME_POINTS = 3  # R16
_TEN = 4
_ACE = 5
_QUEEN = 2
_KING = 3
_EXCHANGE = EXCHANGE
_CLOSE = CLOSE
_DRAW = DRAW
_PASS = PASS
_MARRY_BASE = MARRY_BASE


# The numbers a tuning search may change (train/tune_heuristic.py), by name: the ``Weights`` of the reference and
# its closing thresholds (R10), not the sample counts or switches.
TUNABLE_SLOTS = {
    **{f"trump_keep_{rank}": P_TRUMP_KEEP + index for index, rank in enumerate("9JQKTA")},
    **{f"plain_keep_{rank}": P_PLAIN_KEEP + index for index, rank in enumerate("9JQKTA")},
    "ten_under_ace": P_TEN_UNDER_ACE, "marriage_held": P_MARRIAGE_HELD, "marriage_drawable": P_MARRIAGE_DRAWABLE,
    "exchange_nine": P_EXCHANGE_NINE, "lead_bonus": P_LEAD_BONUS, "first_trick_bonus": P_FIRST_TRICK_BONUS,
    "deny_first_trick": P_DENY_FIRST_TRICK, "pending_share": P_PENDING_SHARE, "average_draw": P_AVERAGE_DRAW,
    "close_filter": P_CLOSE_FILTER, "close_min_value": P_CLOSE_MIN_VALUE, "close_min_win": P_CLOSE_MIN_WIN,
}


def with_weights(params: np.ndarray, weights) -> np.ndarray:
    """A copy of ``params`` with the named numbers of ``weights`` (a mapping, names of :data:`TUNABLE_SLOTS`)
    replaced; an unknown name or a value that is not a finite number is refused by name."""
    if not hasattr(weights, "items"):
        raise ValueError(f"heuristic weights must be a mapping of names to numbers, got {type(weights).__name__}")
    unknown = sorted(set(weights) - set(TUNABLE_SLOTS))
    if unknown:
        raise ValueError(f"unknown heuristic weight(s) {', '.join(map(str, unknown))}; "
                         f"known: {', '.join(TUNABLE_SLOTS)}")
    result = params.copy()
    for name, value in weights.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            raise ValueError(f"heuristic weight {name} must be a finite number, got {value!r}")
        result[TUNABLE_SLOTS[name]] = float(value)
    return result


def pack_params(trump_keep, plain_keep, ten_under_ace, marriage_held, marriage_drawable, exchange_nine, lead_bonus,
                first_trick_bonus, deny_first_trick, pending_share, average_draw, close_filter, lead_samples,
                close_samples, close_min_value, close_min_win, phase2_samples, endgame_worlds,
                endgame_lookahead, rollout_solves=0, rollout_solve_talon=1) -> np.ndarray:
    """The heuristic's numbers as the float array the kernels read (see the ``P_*`` slots)."""
    params = np.zeros(PARAM_COUNT, dtype=np.float64)
    params[P_TRUMP_KEEP:P_TRUMP_KEEP + 6] = trump_keep
    params[P_PLAIN_KEEP:P_PLAIN_KEEP + 6] = plain_keep
    params[P_TEN_UNDER_ACE] = ten_under_ace
    params[P_MARRIAGE_HELD] = marriage_held
    params[P_MARRIAGE_DRAWABLE] = marriage_drawable
    params[P_EXCHANGE_NINE] = exchange_nine
    params[P_LEAD_BONUS] = lead_bonus
    params[P_FIRST_TRICK_BONUS] = first_trick_bonus
    params[P_DENY_FIRST_TRICK] = deny_first_trick
    params[P_PENDING_SHARE] = pending_share
    params[P_AVERAGE_DRAW] = average_draw
    params[P_CLOSE_FILTER] = close_filter
    params[P_LEAD_SAMPLES] = lead_samples
    params[P_CLOSE_SAMPLES] = close_samples
    params[P_CLOSE_MIN_VALUE] = close_min_value
    params[P_CLOSE_MIN_WIN] = close_min_win
    params[P_PHASE2_SAMPLES] = phase2_samples
    params[P_ENDGAME_WORLDS] = endgame_worlds
    params[P_ENDGAME_LOOKAHEAD] = 1.0 if endgame_lookahead else 0.0
    params[P_ROLLOUT_SOLVES] = float(rollout_solves)
    params[P_ROLLOUT_SOLVE_TALON] = float(rollout_solve_talon)
    return params


# ------------------------------------------------------------------------------------------------ a player's view
@kernel
def deck_mask(state):
    """Every card of the deck (R2: no nines with 20 cards)."""
    return 0xFBEFBE if state[RULE_BITS] & RULE_DECK_20 else 0xFFFFFF


@kernel
def played_mask(state):
    """Cards out of play for everyone: won in tricks, and the card on the table (``InformationSet.played``)."""
    played = state[WON_CARDS0] | state[WON_CARDS0 + 1]
    if state[LEAD_CARD] >= 0:
        played |= 1 << state[LEAD_CARD]
    return played


@kernel
def opponent_known(state, player):
    """Cards ``player`` knows his opponent holds: shown and not yet played (``InformationSet.opponent_known``)."""
    return state[SHOWN0 + 1 - player] & state[HAND0 + 1 - player] & ~played_mask(state)


@kernel
def unseen_for(state, player):
    """Cards ``player`` has not seen (``InformationSet.unseen``): not his, not played, not known to be the
    opponent's, not the bottom card."""
    bottom = 1 << state[BOTTOM_CARD] if state[BOTTOM_CARD] >= 0 else 0
    return deck_mask(state) & ~(state[HAND0 + player] | played_mask(state) | opponent_known(state, player) | bottom)


@kernel
def sample_opponent_hand(state, player):
    """A hand for ``player``'s opponent drawn uniformly from ``player``'s view (the reference's
    ``_sample_opponent_hand``: his known cards plus unseen cards his phase-2 follows did not rule out)."""
    known = opponent_known(state, player)
    needed = popcount(state[HAND0 + 1 - player]) - popcount(known)
    if needed <= 0:
        return known
    pool = unseen_for(state, player) & ~state[CANNOT_HOLD0 + player]
    return known | sample_subset(pool, needed)


@kernel
def world_for(world, state, player):
    """A world consistent with ``player``'s view into ``world`` (``InformationSet.determinize``): the opponent's
    hand drawn as :func:`sample_opponent_hand`, the other unseen cards on the face-down talon in random order."""
    copy_state(world, state)
    opponent = 1 - player
    known = opponent_known(state, player)
    unseen = unseen_for(state, player)
    world[HAND0 + opponent] = known
    fill_hidden(world, opponent, unseen & ~state[CANNOT_HOLD0 + player], unseen,
                popcount(state[HAND0 + opponent]) - popcount(known))


# ------------------------------------------------------------------------------------------------ card values
@kernel
def face_down_count(state):
    return state[STOCK_LEN] - state[STOCK_POS]


@kernel
def shuffle_face_down(world, keep):
    """Reorder the face-down talon cards still to be drawn (R4, R7) uniformly in place, all but the top ``keep``."""
    first = STOCK + world[STOCK_POS] + keep
    count = face_down_count(world) - keep
    for index in range(count - 1, 0, -1):
        other = np.random.randint(0, index + 1)
        world[first + index], world[first + other] = world[first + other], world[first + index]


@kernel
def talon_open(state):
    """The talon is neither closed nor exhausted (R7, R10): ``closed_by is None and talon_size > 0``."""
    return state[CLOSED_BY] < 0 and (face_down_count(state) > 0 or state[BOTTOM_CARD] >= 0)


@kernel
def exchange_value(state, params):
    """What the trump nine (jack) is worth while it may still be exchanged for the bottom card (R9)."""
    bottom = state[BOTTOM_CARD]
    if talon_open(state) and face_down_count(state) >= 1 and bottom >= 0 and bottom != state[EXCHANGE_CARD]:
        return params[P_EXCHANGE_NINE] * params[P_TRUMP_KEEP + bottom % 6]
    return 0.0


@kernel
def card_keep_value(card, hand, others, state, params):
    """The future worth of ``card`` to the player holding ``hand``, ``others`` being the cards neither played nor
    in that hand (``agents.rule_based.card_keep_value``)."""
    suit = card // 6
    rank = card % 6
    trump_suit = state[TRUMP_SUIT]
    is_open = talon_open(state)
    if suit == trump_suit:
        value = params[P_TRUMP_KEEP + rank]
        if card == state[EXCHANGE_CARD]:
            nine = exchange_value(state, params)
            if nine > value:
                value = nine
    elif rank == _TEN and others >> (suit * 6 + _ACE) & 1:
        value = params[P_TEN_UNDER_ACE]
    else:
        value = params[P_PLAIN_KEEP + rank]
    if rank == _QUEEN or rank == _KING:
        partner = card ^ 1
        pair_points = 40 if suit == trump_suit else 20
        if hand >> partner & 1:
            if is_open or state[RULE_BITS] & RULE_MARRIAGE_IN_PHASE2:
                value += params[P_MARRIAGE_HELD] * pair_points
        elif is_open and others >> partner & 1:
            value += params[P_MARRIAGE_DRAWABLE] * pair_points
    return value


@kernel
def beats(lead, card, trump_suit):
    """R6: ``card`` played to ``lead`` wins the trick."""
    if card // 6 == lead // 6:
        return card > lead
    return card // 6 == trump_suit


@kernel
def bottom_bonus(state, hand, others, params):
    """On the talon's last trick (R7) the loser takes the known bottom card and the winner an unknown one: what
    losing is worth to the holder of ``hand`` for that reason (``HeuristicAgent._bottom_bonus``)."""
    bottom = state[BOTTOM_CARD]
    if face_down_count(state) != 1 or bottom < 0:
        return 0.0
    return card_keep_value(bottom, hand | (1 << bottom), others, state, params) - params[P_AVERAGE_DRAW]


@kernel
def keep_values(cards, hand, others, state, params, out):
    """:func:`card_keep_value` of each card of the mask ``cards`` into ``out[card]`` (computed once per hand: the
    lead model asks for the same replies' worth against every lead)."""
    remaining = cards
    while remaining:
        low = remaining & -remaining
        remaining ^= low
        card = bit_index(low)
        out[card] = card_keep_value(card, hand, others, state, params)


@kernel
def follow_choice(cards, keep_of, lead, state, params, points, pending, has_trick, opponent_points,
                  opponent_pending, loser_bonus, opponent_has_trick):
    """The best-scoring reply among ``cards`` to ``lead``, ``keep_of[card]`` being each card's worth to its holder
    (:func:`keep_values`; ``agents.rule_based.follow_card_scores`` and its maximum; ties go to the higher card)."""
    trump_suit = state[TRUMP_SUIT]
    lead_points = CARD_POINTS_TABLE[lead]
    best_score = -1e300
    best_card = -1
    remaining = cards
    while remaining:
        low = remaining & -remaining
        remaining ^= low
        card = bit_index(low)
        trick = lead_points + CARD_POINTS_TABLE[card]
        keep = keep_of[card]
        if beats(lead, card, trump_suit):
            score = trick + params[P_LEAD_BONUS] - keep
            if points + pending + trick >= _GOAL:
                score += _WIN_BONUS
            if not has_trick:
                score += params[P_FIRST_TRICK_BONUS] + params[P_PENDING_SHARE] * pending
        else:
            score = loser_bonus - trick - params[P_LEAD_BONUS] - keep
            if not opponent_has_trick:
                score -= params[P_DENY_FIRST_TRICK]
            if opponent_points + opponent_pending + trick >= _GOAL:
                score -= _WIN_BONUS
        if score >= best_score:  # cards ascend, so ties go to the higher card as max((score, card)) does
            best_score = score
            best_card = card
    return best_card


@kernel
def pending(state, player):
    """Marriage points that count only once ``player`` wins a trick (R12)."""
    return 0 if state[TRICKS_WON0 + player] else state[MARRIAGE_POINTS0 + player]


@kernel
def on_last_talon_trick(state):
    """One face-down card is left and the talon is open (R7): this trick's winner draws it, the loser the bottom
    card (``agents.rule_based.on_last_talon_trick``)."""
    return state[CLOSED_BY] < 0 and state[BOTTOM_CARD] >= 0 and face_down_count(state) == 1


@kernel
def winning_marriage(state, legal):
    """The first marriage among the legal actions whose announcement reaches 66 (R11, R13: it counts at once for a
    player who has a trick), or -1."""
    player = state[TO_MOVE]
    marriages = (legal >> _MARRY_BASE) & 0xFF
    if not state[TRICKS_WON0 + player]:
        return -1
    while marriages:
        low = marriages & -marriages
        marriages ^= low
        action = _MARRY_BASE + bit_index(low)
        pair_points = 40 if marry_card(action) // 6 == state[TRUMP_SUIT] else 20
        if counted_points(state, player) + pair_points >= _GOAL:
            return action
    return -1


# ------------------------------------------------------------------------------------------------ phase 1
@kernel
def phase1_follow(state, params):
    """``HeuristicAgent._phase1_follow`` for the player to move."""
    me = state[TO_MOVE]
    opponent = 1 - me
    hand = state[HAND0 + me]
    others = deck_mask(state) & ~(hand | played_mask(state))
    cards = legal_mask(state) & 0xFFFFFF
    keep_of = np.empty(24, dtype=np.float64)
    keep_values(cards, hand, others, state, params, keep_of)
    return follow_choice(cards, keep_of, state[LEAD_CARD], state, params,
                         counted_points(state, me), pending(state, me), state[TRICKS_WON0 + me] > 0,
                         counted_points(state, opponent), pending(state, opponent),
                         bottom_bonus(state, hand, others, params), state[TRICKS_WON0 + opponent] > 0)


@kernel
def best_lead(state, params):
    """``HeuristicAgent._best_lead``: the phase-1 lead whose trick, against the opponent's modelled reply over
    sampled hands, pays best (ties go to the lower card)."""
    me = state[TO_MOVE]
    opponent = 1 - me
    trump_suit = state[TRUMP_SUIT]
    hand = state[HAND0 + me]
    leads = legal_mask(state) & 0xFFFFFF
    everything = deck_mask(state)
    played = played_mask(state)
    my_others = everything & ~(hand | played)
    my_bottom = bottom_bonus(state, hand, my_others, params)
    my_points = counted_points(state, me)
    my_pending = pending(state, me)
    my_trick = state[TRICKS_WON0 + me] > 0
    opp_points = counted_points(state, opponent)
    opp_pending = pending(state, opponent)
    opp_trick = state[TRICKS_WON0 + opponent] > 0
    lead_bonus = params[P_LEAD_BONUS]
    totals = np.zeros(24, dtype=np.float64)
    my_keep = np.zeros(24, dtype=np.float64)
    keep_values(leads, hand, my_others, state, params, my_keep)
    opp_keep = np.zeros(24, dtype=np.float64)
    for _ in range(int(params[P_LEAD_SAMPLES])):
        opp_hand = sample_opponent_hand(state, me)
        opp_others = everything & ~(opp_hand | played)
        opp_bottom = bottom_bonus(state, opp_hand, opp_others, params)
        keep_values(opp_hand, opp_hand, opp_others, state, params, opp_keep)
        remaining = leads
        while remaining:
            low = remaining & -remaining
            remaining ^= low
            lead = bit_index(low)
            reply = follow_choice(opp_hand, opp_keep, lead, state, params, opp_points, opp_pending, opp_trick,
                                  my_points, my_pending, opp_bottom, my_trick)
            trick = CARD_POINTS_TABLE[lead] + CARD_POINTS_TABLE[reply]
            value = opp_keep[reply] - my_keep[lead]
            if beats(lead, reply, trump_suit):
                value += my_bottom - trick - lead_bonus
                if not opp_trick:
                    value -= params[P_DENY_FIRST_TRICK]
                if opp_points + opp_pending + trick >= _GOAL:
                    value -= _WIN_BONUS
            else:
                value += trick + lead_bonus - opp_bottom
                if my_points + my_pending + trick >= _GOAL:
                    value += _WIN_BONUS
                if not my_trick:
                    value += params[P_FIRST_TRICK_BONUS] + params[P_PENDING_SHARE] * my_pending
            totals[lead] += value
    best_card = -1
    best_total = -1e300
    remaining = leads
    while remaining:
        low = remaining & -remaining
        remaining ^= low
        card = bit_index(low)
        if totals[card] > best_total:
            best_total = totals[card]
            best_card = card
    return best_card


@kernel
def lead_by_rules(state, params):
    """``HeuristicAgent._phase1_lead_by_rules``: a marriage at once (R11: the 40 first, leading the Queen), else
    :func:`best_lead`."""
    marriages = (legal_mask(state) >> _MARRY_BASE) & 0xFF
    if marriages:
        trump_queen = 2 * state[TRUMP_SUIT]
        if marriages >> trump_queen & 1:
            return _MARRY_BASE + trump_queen
        # min((not trump, action % 2, action)): the lowest Queen among the plain pairs (pairs come as Q, K ids)
        queens = marriages & 0x55
        return _MARRY_BASE + bit_index(queens & -queens)
    return best_lead(state, params)


@kernel
def close_plausible(state, params):
    """``HeuristicAgent._close_plausible``: points, marriages to show and top cards reach ``close_filter``."""
    me = state[TO_MOVE]
    trump_suit = state[TRUMP_SUIT]
    hand = state[HAND0 + me]
    others = deck_mask(state) & ~(hand | played_mask(state))
    potential = state[TRICK_POINTS0 + me] + state[MARRIAGE_POINTS0 + me]
    remaining = hand
    while remaining:
        low = remaining & -remaining
        remaining ^= low
        card = bit_index(low)
        suit = card // 6
        rank = card % 6
        higher_out = others & SUIT_MASK_TABLE[suit] & ~((2 << card) - 1)
        if not higher_out and (suit == trump_suit or rank >= _TEN):
            potential += CARD_POINTS_TABLE[card] + 4
        if rank == _QUEEN and hand >> (card + 1) & 1:
            potential += 40 if suit == trump_suit else 20
    return potential >= params[P_CLOSE_FILTER]


@kernel
def should_close(state, params, entries, nodes):
    """``HeuristicAgent._should_close`` (R10): worlds sampled from the mover's view, solved exactly after the
    closing, have a mean of at least ``close_min_value`` and a share of wins of at least ``close_min_win``.

    The same answer for the same sampled worlds as solving each exactly, but cheaper (the closing checks are half
    of what an early rollout costs): each world is first only asked whether the closer wins it (one null-window
    search), the check stops once too few wins are left possible, and exact values are solved only when the wins
    alone cannot settle the mean.

    With ``P_CLOSE_READS_WORLD`` set, the one world is ``state`` itself: inside a rollout, whose state is one of the
    searcher's sampled worlds, the seat then closes exactly where closing wins there (the filter still first)."""
    if not close_plausible(state, params):
        return False
    me = state[TO_MOVE]
    reads_world = params[P_CLOSE_READS_WORLD] > 0
    samples = 1 if reads_world else int(params[P_CLOSE_SAMPLES])
    if samples < 1:
        return False
    needed_total = params[P_CLOSE_MIN_VALUE] * samples
    needed_wins = params[P_CLOSE_MIN_WIN] * samples
    worlds = np.empty((samples, STATE_SIZE), dtype=np.int64)
    values = np.zeros(samples, dtype=np.int64)
    solved = np.zeros(samples, dtype=np.bool_)
    wins = 0
    for index in range(samples):
        if wins + samples - index < needed_wins:
            return False
        world = worlds[index]
        if reads_world:
            copy_state(world, state)
        else:
            world_for(world, state, me)
        apply(world, _CLOSE)
        if world[STAGE] == RESPOND_CLOSE:  # R9 paderborn: he exchanges when he holds the nine
            apply(world, _EXCHANGE if legal_mask(world) >> _EXCHANGE & 1 else _PASS)
        if world[STAGE] == OVER:
            values[index] = value_for(world, me)
            solved[index] = True
            won = values[index] > 0
        elif me == 0:
            won = _solve_value(world, 0, 1, entries, 0, nodes) >= 1  # fail-soft: at least 1 for player 0
        else:
            won = _solve_value(world, -1, 0, entries, 0, nodes) <= -1
        if won:
            wins += 1
    if wins < needed_wins:
        return False
    # The mean: a won world is worth at least 1 and a lost one at least -3 (R16); solve exactly only if needed.
    if wins - _MAX_GAME_POINTS * (samples - wins) >= needed_total:
        return True
    total = 0.0
    for index in range(samples):
        if not solved[index]:
            value = _solve_value(worlds[index], -4, 4, entries, 0, nodes)
            values[index] = value if me == 0 else -value
        total += values[index]
    return total >= needed_total


@kernel
def phase2_value(world, me, entries, nodes):
    """Game points for ``me`` of a finished deal or a phase-2 position under exact play."""
    if world[STAGE] == OVER:
        return value_for(world, me)
    value = _solve_value(world, -4, 4, entries, 0, nodes)
    return value if me == 0 else -value


@kernel
def last_talon_trick(state, params, entries, nodes):
    """``HeuristicAgent._solved_last_talon_trick``: look through the talon's last trick (R7) into phase 2 over at
    most ``endgame_worlds`` layouts of the hidden cards (one unseen card in the talon, the opponent holding the
    rest), the opponent finding his best reply, then the exact solver; candidates best-first with a bound, ties
    to the rule's choice."""
    me = state[TO_MOVE]
    opponent = 1 - me
    known = opponent_known(state, me)
    pool = unseen_for(state, me) & ~state[CANNOT_HOLD0 + me]
    needed = popcount(state[HAND0 + opponent]) - popcount(known)
    worlds = np.empty((4, STATE_SIZE), dtype=np.int64)
    world_limit = min(int(params[P_ENDGAME_WORLDS]), 4)
    world_count = 0
    if popcount(pool) != needed + 1:
        world_for(worlds[0], state, me)  # not the expected layout count: the sampled world alone
        world_count = 1
    else:
        talon_cards = pool
        if popcount(pool) > world_limit:
            talon_cards = sample_subset(pool, world_limit)
        while talon_cards:
            low = talon_cards & -talon_cards
            talon_cards ^= low
            world = worlds[world_count]
            copy_state(world, state)
            world[HAND0 + opponent] = known | (pool & ~low)
            world[STOCK + state[STOCK_POS]] = bit_index(low)
            world_count += 1
    if state[STAGE] == FOLLOW:
        preferred = phase1_follow(state, params)
    else:
        preferred = lead_by_rules(state, params)
    candidates = legal_mask(state) & ((1 << _EXCHANGE) - 1) & ~(1 << preferred)
    best_action = preferred
    best_total = -1e300
    after = np.empty(STATE_SIZE, dtype=np.int64)
    replied = np.empty(STATE_SIZE, dtype=np.int64)
    action = preferred
    while action >= 0:
        total = 0.0
        complete = True
        for index in range(world_count):
            copy_state(after, worlds[index])
            apply(after, action)
            bound = best_total - total - _MAX_GAME_POINTS * (world_count - index - 1)
            if after[STAGE] == FOLLOW and after[TO_MOVE] != me:
                value = float(_MAX_GAME_POINTS)
                replies = legal_mask(after)
                while replies:
                    low = replies & -replies
                    replies ^= low
                    copy_state(replied, after)
                    apply(replied, bit_index(low))
                    reply_value = phase2_value(replied, me, entries, nodes)
                    if reply_value < value:
                        value = reply_value
                    if value <= bound or value <= -_MAX_GAME_POINTS:
                        break
            else:
                value = float(phase2_value(after, me, entries, nodes))
            total += value
            if value <= bound:
                complete = False
                break
        if complete and total > best_total:
            best_action = action
            best_total = total
        if candidates:
            low = candidates & -candidates
            candidates ^= low
            action = bit_index(low)
        else:
            action = -1
    return best_action


@kernel
def solved_phase2(state, params, entries, nodes):
    """``HeuristicAgent._solved_phase2`` (R8): once the talon is exhausted the unseen cards are exactly the
    opponent's, so the position itself is solved; after a closing the best sum of exact action values over
    ``phase2_samples`` sampled worlds (ties to the lower action id)."""
    me = state[TO_MOVE]
    values = np.zeros(64, dtype=np.int64)
    sign = 1 if me == 0 else -1
    totals = np.zeros(64, dtype=np.float64)
    if face_down_count(state) == 0 and state[BOTTOM_CARD] < 0:
        world = state.copy()
        world[HAND0 + 1 - me] = opponent_known(state, me) | unseen_for(state, me)
        mask = _solve_actions(world, values, entries, 0, nodes)
        for action in range(37):
            if mask >> action & 1:
                totals[action] = sign * values[action]
    else:
        world = np.empty(STATE_SIZE, dtype=np.int64)
        mask = 0
        for _ in range(int(params[P_PHASE2_SAMPLES])):
            world_for(world, state, me)
            mask = _solve_actions(world, values, entries, 0, nodes)
            for action in range(37):
                if mask >> action & 1:
                    totals[action] += sign * values[action]
    best_action = -1
    best_total = -1e300
    for action in range(37):
        if mask >> action & 1 and totals[action] > best_total:
            best_total = totals[action]
            best_action = action
    return best_action


# ------------------------------------------------------------------------------------------------ the player
@kernel
def _choose_action(state, params, entries, nodes):
    """The body of :func:`heuristic_action`."""
    legal = legal_mask(state)
    if popcount(legal) == 1:
        return bit_index(legal)
    stage = state[STAGE]
    if stage == RESPOND_CLOSE:
        return _EXCHANGE if legal >> _EXCHANGE & 1 else _PASS  # R9 paderborn: the face-up trump beats the nine
    if stage == PREDRAW:
        if legal >> _EXCHANGE & 1:
            return _EXCHANGE  # R9 first, as at a lead
        return _CLOSE if should_close(state, params, entries, nodes) else _DRAW  # R10 paderborn
    if state[PHASE2]:
        return solved_phase2(state, params, entries, nodes)
    last_trick = params[P_ENDGAME_LOOKAHEAD] > 0 and on_last_talon_trick(state)
    if stage == LEAD:
        if legal >> _EXCHANGE & 1:
            return _EXCHANGE  # R9
        reaching = winning_marriage(state, legal)
        if reaching >= 0:
            return reaching  # R11: the announcement reaches 66 (R13)
        if legal >> _CLOSE & 1 and should_close(state, params, entries, nodes):
            return _CLOSE
        if last_trick:
            return last_talon_trick(state, params, entries, nodes)
        return lead_by_rules(state, params)
    if last_trick:
        return last_talon_trick(state, params, entries, nodes)
    return phase1_follow(state, params)


# The player is compiled once, as one C-callable function that every kernel using it (the rollouts, the batch of
# sparring moves, the call from Python) reaches by its symbol, as the solver is (solver.py, "entry points"): with
# ordinary calls numba links it into each caller and optimizes it there again (about a CPU second of the cold
# compile, docs/performance.md).
_HEURISTIC_SIGNATURE = types.int64(_POINTER, types.CPointer(types.float64), _POINTER, types.int64, _POINTER)
_HEURISTIC_SYMBOL = "sixtysix_core_heuristic"


@cfunc(_HEURISTIC_SIGNATURE, cache=True)
def _heuristic_entry(state_data, params_data, entries_data, table_rows, nodes_data):
    """:func:`_choose_action` on C arrays given as pointers."""
    return _choose_action(carray(state_data, STATE_SIZE), carray(params_data, PARAM_COUNT),
                          carray(entries_data, (table_rows, 4)), carray(nodes_data, 1))


llvm.add_symbol(_HEURISTIC_SYMBOL, _heuristic_entry.address)
_heuristic = types.ExternalFunction(_HEURISTIC_SYMBOL, _HEURISTIC_SIGNATURE)


@kernel
def _heuristic_action(state, params, entries, nodes):
    """:func:`heuristic_action` unchecked: the kernel the rollouts and the batch call per decision."""
    return _heuristic(state.ctypes, params.ctypes, entries.ctypes, entries.shape[0], nodes.ctypes)


# Slots the kernels read as counts of loops or worlds: a negative or fractional count is a caller's mistake.
_COUNT_SLOTS = {"lead_samples": P_LEAD_SAMPLES, "close_samples": P_CLOSE_SAMPLES, "phase2_samples": P_PHASE2_SAMPLES,
                "endgame_worlds": P_ENDGAME_WORLDS, "rollout_solves": P_ROLLOUT_SOLVES,
                "rollout_solve_talon": P_ROLLOUT_SOLVE_TALON}
# Counts of worlds a decision is made from: with none, a closed phase 2 would choose no card (HeuristicAgent refuses
# them too). The rollout counts may be 0: no solving in the rollouts.
_LEAST_COUNTS = {"lead_samples": 1, "close_samples": 1, "phase2_samples": 1, "endgame_worlds": 1}
# No count above schema.MAX_SAMPLE_COUNT: the kernels allocate per sample (a failed allocation inside a kernel is
# swallowed and answers no legal move) and read counts as 64-bit integers (2**63 overflowed to none).


def check_params(params: Any) -> np.ndarray:
    """Refuse by name a parameter array the kernels cannot read: it must be what :func:`pack_params` makes, a
    C-contiguous float64 array of ``PARAM_COUNT`` finite numbers whose counts are whole, at least 1 for the counts of
    worlds a decision is made from and not negative for the rest, and at most ``MAX_SAMPLE_COUNT``."""
    if (not isinstance(params, np.ndarray) or params.shape != (PARAM_COUNT,) or params.dtype != np.float64
            or not params.flags.c_contiguous):
        raise ValueError(f"heuristic params must be a C-contiguous float64 array of shape ({PARAM_COUNT},), as "
                         "pack_params makes it")
    if not np.isfinite(params).all():
        raise ValueError(f"heuristic params must be finite; slot(s) {np.flatnonzero(~np.isfinite(params)).tolist()} "
                         "are not")
    for name, slot in _COUNT_SLOTS.items():
        least = _LEAST_COUNTS.get(name, 0)
        if not least <= params[slot] <= MAX_SAMPLE_COUNT or params[slot] != int(params[slot]):
            raise ValueError(f"heuristic params: {name} (slot {slot}) must be a whole number in "
                             f"{least}..{MAX_SAMPLE_COUNT}, got {params[slot]}")
    return params


def heuristic_action(state: Any, params: Any, entries: Any, nodes: Any) -> int:
    """``HeuristicAgent.act`` for the player to move in ``state`` (a deal in progress), from his view only, with
    the numbers ``params`` (:func:`pack_params`) and a solver table's arrays (``Table.entries``, ``Table.nodes``).
    Every argument is checked (:func:`.state.check_in_progress`, :func:`check_params`); the rollouts call the kernel
    ``_heuristic_action`` instead."""
    state = check_in_progress(state, "the heuristic")
    check_table_arrays(entries, nodes)
    return int(_heuristic_action(state, check_params(params), entries, nodes))


PLAYING_ON = 99  # :func:`solved_from_here`: not a game-point value (R16: at most 3 either way), the rollout plays on


@kernel
def solved_from_here(state, player, solve_closed, solve_talon, entries, nodes, world):
    """Where a rollout stops playing and solves exactly, and the game points for ``player`` when it does here
    (``PLAYING_ON`` when it does not): at a trick's lead or follow, a phase 2 (R8) by the phase-2 solver, one after a
    closing (R10) only with ``solve_closed``; with ``solve_talon`` >= 1 an open talon with at most that many
    face-down cards (1: the talon's last trick, R7) by the whole-deal solver, its talon order numbered ``world`` in
    the transposition table. Shared by the heuristic rollouts (:func:`play_on`) and the network's
    (:mod:`.continuation`)."""
    stage = state[STAGE]
    if stage != LEAD and stage != FOLLOW:
        return PLAYING_ON
    if state[PHASE2] and (solve_closed or state[CLOSED_BY] < 0):
        return phase2_value(state, player, entries, nodes)
    if (solve_talon >= 1 and state[CLOSED_BY] < 0 and state[BOTTOM_CARD] >= 0
            and face_down_count(state) <= solve_talon):
        value = _solve_value(state, -4, 4, entries, world, nodes)
        return value if player == 0 else -value
    return PLAYING_ON


NO_LEAF = 1 << 30  # :func:`play_to_leaf`: a trick count no deal reaches (R7: 12 tricks), so it plays to the end


@kernel
def play_to_leaf(state, player, params, other_params, entries, nodes, world, leaf_trick):
    """:func:`play_on` that may stop early: the game points for ``player`` if the deal ends or is solved before
    ``leaf_trick`` tricks are complete (R7), else ``PLAYING_ON`` with ``state`` at the first decision with a choice
    after them (a leaf, valued by the caller: :func:`sixtysix_env.core.continuation.leaf_values`)."""
    solves = params[P_ROLLOUT_SOLVES]
    solve_closed = solves < 3
    solve_talon = params[P_ROLLOUT_SOLVE_TALON] if solves > 1 else 0.0
    while state[STAGE] != OVER:
        if solves > 0:
            value = solved_from_here(state, player, solve_closed, solve_talon, entries, nodes, world)
            if value != PLAYING_ON:
                return value
        if state[TRICK_COUNT] >= leaf_trick and popcount(legal_mask(state)) > 1:
            return PLAYING_ON
        mover_params = params if state[TO_MOVE] == player else other_params
        apply(state, _heuristic_action(state, mover_params, entries, nodes))
    return value_for(state, player)


@kernel
def play_on(state, player, params, other_params, entries, nodes, world):
    """Game points for ``player`` when :func:`heuristic_action` plays both seats from ``state`` (modified) to the
    end, ``player``'s seat with ``params`` and the other with ``other_params``. ``params``' ``P_ROLLOUT_SOLVES`` 1:
    phase 2 (R8) is solved exactly instead of played (the same value once the talon is used up, where the heuristic
    solves too; after a closing both then play as if they saw all cards); 2: also the talon's last trick (R7), by
    the whole-deal solver with the last face-down card known (``world`` numbers the talon order for the
    transposition table's phase-1 entries, :class:`.solver.Table`), or from an earlier trick with
    ``P_ROLLOUT_SOLVE_TALON`` face-down cards or fewer (the talon order then known too); 3 (and 4): as 2, but a
    phase 2 after a closing (R10) is played by both from their own views, not solved as if each saw the other's
    cards."""
    return play_to_leaf(state, player, params, other_params, entries, nodes, world, NO_LEAF)


@kernel
def heuristic_playout_value(state, player, params, entries, nodes, world):
    """:func:`play_on` with the same numbers for both seats: the rollouts' playout."""
    return play_on(state, player, params, params, entries, nodes, world)


@kernel(nogil=True)
def rollout_leaves(worlds, count, actions, observer, params, other_params, entries, nodes, seeds, first_world,
                   leaf_trick, match_score, values, observations, masks, leaf_world, leaf_action, leaf_sign,
                   leaf_states):
    """:func:`rollout_values` with each rollout cut at a leaf (:func:`play_to_leaf`): a rollout that ends or is
    solved first sets ``values[w, a]``; one that reaches the leaf writes its mover's observation
    (:func:`.observation.encode_to_width`) and legal mask to the next rows of ``observations`` and ``masks``, its
    world and action to ``leaf_world`` and ``leaf_action``, and +1 (the observer moves) or -1 (his opponent) to
    ``leaf_sign``, and the leaf's state to ``leaf_states`` (what a critic of the world reads beyond the observation,
    :mod:`.critic_inputs`; a zero-row array skips it). Returns the leaves written (none with ``leaf_trick`` =
    ``NO_LEAF``)."""
    state = np.empty(STATE_SIZE, dtype=np.int64)
    leaves = 0
    for index in range(count):
        remaining = actions
        while remaining:
            low = remaining & -remaining
            remaining ^= low
            action = bit_index(low)
            np.random.seed(seeds[index])
            copy_state(state, worlds[index])
            apply(state, action)
            value = play_to_leaf(state, observer, params, other_params, entries, nodes, first_world + index,
                                 leaf_trick)
            if value != PLAYING_ON:
                values[index, action] = value
                continue
            mover = state[TO_MOVE]
            encode_to_width(state, mover, match_score, observations[leaves])
            legal = legal_mask(state)
            for candidate in range(37):
                masks[leaves, candidate] = (legal >> candidate) & 1
            leaf_world[leaves], leaf_action[leaves] = index, action
            leaf_sign[leaves] = 1 if mover == observer else -1
            if leaf_states.shape[0]:
                copy_state(leaf_states[leaves], state)
            leaves += 1
    return leaves


@kernel(nogil=True)
def rollout_values(worlds, count, actions, observer, params, other_params, entries, nodes, seeds, first_world,
                   values):
    """Value every action of the mask ``actions`` in each of the first ``count`` worlds by playing it and then
    :func:`heuristic_action` for both players to the end (``observer``'s seat with ``params``, the other with
    ``other_params``; the endgame solves follow ``params``): ``values[w, a]`` = game points for ``observer``. The
    rollouts of one world share numba's generator seed ``seeds[w]`` (common random numbers across actions); world
    ``w`` is number ``first_world + w`` of the transposition table (``Table.claim_worlds``)."""
    no_rows = np.empty(0, dtype=np.int64)
    rollout_leaves(worlds, count, actions, observer, params, other_params, entries, nodes, seeds, first_world, NO_LEAF,
                   np.zeros(2, dtype=np.float32), values, np.empty((0, 1), dtype=np.float32),
                   np.empty((0, 37), dtype=np.bool_), no_rows, no_rows, no_rows,
                   np.empty((0, STATE_SIZE), dtype=np.int64))


@kernel
def heuristic_duel(params_a, params_b, num_deals, seed, rule_bits, entries, nodes, first_world, margins):
    """Duplicate deals between two parameter arrays of the heuristic: each deal (R4 order, uniform, drawn from
    ``seed`` before any game so both arrays of a tuning search meet the same deals) played twice with the seats
    swapped; ``margins[deal]`` = the mean game points of ``params_a`` over the two games. Deal ``d``'s talon is
    world ``first_world + d`` of the transposition table (``Table.claim_worlds``)."""
    seed_generator(seed)
    deck_size = 20 if rule_bits & RULE_DECK_20 else 24
    decks = np.empty((num_deals, 24), dtype=np.int64)
    for deal in range(num_deals):
        shuffle_deck(decks[deal], deck_size)
    state = np.empty(STATE_SIZE, dtype=np.int64)
    for deal in range(num_deals):
        total = 0
        for seat_a in range(2):
            deal_into(state, decks[deal], deal & 1, rule_bits)
            total += play_on(state, seat_a, params_a, params_b, entries, nodes, first_world + deal)
        margins[deal] = total / 2.0


@kernel
def _heuristic_actions(states, rows, params, entries, nodes, actions):
    """:func:`heuristic_actions` unchecked (train/vector_ppo.py calls it on its own env's states)."""
    for index in range(rows.shape[0]):
        row = rows[index]
        actions[row] = _heuristic_action(states[row], params, entries, nodes)


def heuristic_actions(states: Any, rows: Any, params: Any, entries: Any, nodes: Any, actions: Any) -> None:
    """:func:`heuristic_action` for the player to move in ``states[rows[k]]``, written to ``actions[rows[k]]``: the
    ``heuristic`` player as a sparring opponent for a batch of deals. The arrays and every row named are checked."""
    if (not isinstance(states, np.ndarray) or states.ndim != 2 or states.shape[1:] != (STATE_SIZE,)
            or states.dtype != np.int64 or not states.flags.c_contiguous):
        raise ValueError(f"heuristic_actions: states must be a C-contiguous int64 array of shape (n, {STATE_SIZE})")
    count = states.shape[0]
    if (not isinstance(rows, np.ndarray) or rows.ndim != 1 or rows.dtype != np.int64
            or (rows.size and not (0 <= rows.min() and rows.max() < count))):
        raise ValueError(f"heuristic_actions: rows must be a 1-D int64 array of row numbers in 0..{count - 1}")
    if (not isinstance(actions, np.ndarray) or actions.shape != (count,) or actions.dtype != np.int64
            or not actions.flags.c_contiguous or not actions.flags.writeable):
        raise ValueError(f"heuristic_actions: actions must be a writable C-contiguous int64 array of shape ({count},)")
    for row in rows.tolist():
        try:
            check_in_progress(states[row], "the heuristic")
        except ValueError as error:
            raise ValueError(f"heuristic_actions: states[{row}]: {error}") from None
    check_table_arrays(entries, nodes)
    _heuristic_actions(states, np.ascontiguousarray(rows), check_params(params), entries, nodes, actions)


__all__ = ["NO_LEAF", "PARAM_COUNT", "PLAYING_ON", "TUNABLE_SLOTS", "check_params", "heuristic_action",
           "heuristic_actions",
           "heuristic_duel", "heuristic_playout_value", "pack_params", "play_on", "play_to_leaf", "phase1_follow",
           "rollout_leaves", "rollout_values", "solved_from_here",
           "sample_opponent_hand", "shuffle_face_down", "with_weights", "world_for"]
