"""Inference of the opponent's hand by replaying the deal: how likely his past choices are in a sampled world.

A sampled world fixes what the opponent holds *now* and the order of the talon still face down. His earlier
choices depend on what he held *then*, which the world alone does not say: he drew a card after every trick of
phase 1 (R7). :func:`world_likelihood` completes the world into a whole deal: which of the cards he has held were
dealt to him and which he drew after which trick (and the same for the observer, whose own past hands do not enter
the opponent's choices but must hold the cards he played). Among all completions the draws are uniform: going back
from the last draw, each draw is one of the cards he held afterwards and was not seen to hold before it (played,
shown in a marriage, R11, or laid by an exchange, R9); these candidate sets only grow towards the start of the deal,
so drawing each uniformly from what is left gives every consistent completion the same probability.

The completed deal is dealt (R4) and the public history replayed through the engine; at each of the opponent's
decisions the model player (:func:`.heuristic.heuristic_action`'s rules, the compiled ``heuristic``) is asked what
it would do in his place, from his view only:

* a phase-1 follow (talon open, R7; not the talon's last trick, which he may search): the model's card
  (deterministic); another card multiplies the likelihood by ``follow_floor``;
* a phase-1 lead turn (same exclusions): the model exchanges at once (R9), announces a marriage that reaches 66
  (R11, R13) or else the trump marriage first, leading the Queen; a turn that does otherwise multiplies it by
  ``rule_floor`` (a closing, R10, and the choice of a plain lead are not modelled: the model samples there);
* the paderborn exchange offered after a closing (R9): the model always takes it;
* a closing (R10), with ``closing_floor`` < 1: the model closes only a deal it wins in this world when both then
  see every card (the closed deal solved exactly from the closing on); a closing it would lose multiplies the
  likelihood by ``closing_floor``;
* a phase-1 lead where he could close (R10) and played on instead, with ``played_on_floor`` < 1: if the
  ``heuristic``'s filter finds closing plausible for his hand there and closing would win him the deal in this world
  when both then see every card, the likelihood is multiplied by ``played_on_floor`` (players who close close such
  deals about half the time, ``python -m bench.closings --rates``, docs/strength.md "Session 58");
* a lead or follow in a phase 2 after a closing (R8, R10), with ``closed_floor`` < 1: the model plays a card that is
  best in this world when both see every card (the closed deal solved exactly); a card worth less multiplies the
  likelihood by ``closed_floor``. Both are the clairvoyant's choices: a player who cannot see the cards still picks
  them more often in the worlds where they are right, and after a closing nothing else is left to infer from (his
  hand no longer changes, R8).

So a world whose completion makes his play the model's play keeps likelihood 1. :func:`inferred_worlds` keeps
each uniformly drawn world with its likelihood (rejection sampling), which is the same as weighting it.

:func:`public_timeline` reads, once per decision, the public facts the replay needs from an information set.
"""

from __future__ import annotations

import numpy as np

from ..actions import CLOSE, DECLARE, DRAW, EXCHANGE, MARRY_BASE, PASS, marry_card
from ..game import FOLLOW, LEAD, PREDRAW, RESPOND_CLOSE
from ..infoset import InformationSet
from ._jit import kernel
from .engine import apply, bit_index, copy_state, deal_into, legal_mask, popcount, value_for
from .heuristic import (
    best_lead, close_plausible, lead_by_rules, on_last_talon_trick, phase1_follow, winning_marriage,
)
from .layout import (
    CLOSED_BY, HAND0, LEAD as CORE_LEAD, FOLLOW as CORE_FOLLOW, OVER, PHASE2, RESPOND_CLOSE as CORE_RESPOND, STAGE,
    STATE_SIZE, STOCK, STOCK_LEN, STOCK_POS, TO_MOVE,
)
from .search import _determinize_into
from .solver import _solve_actions, _solve_value

NEVER = 1 << 30  # "not needed at any point of the history"
_EXCHANGE = EXCHANGE
_CLOSE = CLOSE
_PASS = PASS
_MARRY_BASE = MARRY_BASE


class Timeline:
    """The public facts of a deal's history that completing a world needs (see :func:`public_timeline`)."""

    __slots__ = ("history", "need", "arrive", "draw_after", "draw_winner", "bottom_draw", "dealer", "trump_card",
                 "rule_bits")

    def __init__(self, history, need, arrive, draw_after, draw_winner, bottom_draw, dealer, trump_card, rule_bits):
        self.history = history  # int64[n]: the actions so far
        self.need = need  # int64[2, 24]: the first history index at which the player must hold the card
        self.arrive = arrive  # int64[2, 24]: history index at which the card came to him not by a face-down draw
        self.draw_after = draw_after  # int64[k]: history index of the action after which both drew (R7)
        self.draw_winner = draw_winner  # int64[k]: who drew first (the trick's winner)
        self.bottom_draw = bottom_draw  # int64[k]: 1 if the loser took the bottom card at that draw (R7)
        self.dealer = dealer
        self.trump_card = trump_card  # the card turned up at the deal (R4)
        self.rule_bits = rule_bits


def public_timeline(infoset: InformationSet) -> Timeline:
    """Who had to hold which card when, and when both drew, from the public history of ``infoset`` (R4-R11)."""
    from .state import core_rule_bits

    rules = infoset.rules
    history = list(infoset.history)
    tricks = infoset.tricks
    exchange_card = infoset.trump_suit * 6 + rules.exchange_rank
    need = np.full((2, 24), NEVER, dtype=np.int64)
    arrive = np.full((2, 24), -1, dtype=np.int64)
    draw_after: list[int] = []
    draw_winner: list[int] = []
    bottom_draw: list[int] = []
    stock_left = 7 if rules.deck == 20 else 11
    bottom = infoset.trump_card
    stage = LEAD
    to_move = infoset.forehand
    closer = -1
    trick = 0

    def hold(player: int, card: int, index: int) -> None:
        if need[player, card] == NEVER:
            need[player, card] = index

    def exchange(player: int, index: int) -> None:  # R9: he takes the face-up card and lays the nine there
        nonlocal bottom
        hold(player, exchange_card, index)
        arrive[player, bottom] = index
        bottom = exchange_card

    def draw(index: int, winner: int) -> None:
        nonlocal stock_left
        draw_after.append(index)
        draw_winner.append(winner)
        if stock_left >= 2:
            stock_left -= 2
            bottom_draw.append(0)
        else:  # the last face-down card to the winner, the bottom card to the loser (R7)
            stock_left = 0
            bottom_draw.append(1)
            arrive[1 - winner, bottom] = index

    for index, action in enumerate(history):
        actor = to_move
        if stage == LEAD:
            if action < 24 or MARRY_BASE <= action < EXCHANGE:
                card = action if action < 24 else marry_card(action)
                hold(actor, card, index)
                if action >= 24:
                    hold(actor, card ^ 1, index)  # R11: the pair is shown
                stage = FOLLOW
                to_move = 1 - actor
            elif action == EXCHANGE:  # R9
                exchange(actor, index)
            elif action == CLOSE:  # R10
                closer = actor
                if rules.exchange_after_opponent_closes:
                    stage = RESPOND_CLOSE
                    to_move = 1 - actor
        elif stage == FOLLOW:
            hold(actor, action, index)
            winner = tricks[trick].winner
            in_phase2 = tricks[trick].in_phase2
            trick += 1
            to_move = winner
            stage = LEAD
            if index == len(history) - 1 and infoset.is_over:
                break
            if not in_phase2:
                if rules.close_draw_option and stock_left >= 2:
                    stage = PREDRAW  # R10 paderborn: close before drawing, or draw
                else:
                    draw(index, winner)
        elif stage == PREDRAW and action == EXCHANGE:  # R9 before closing or drawing: still his choice
            exchange(actor, index)
        elif stage == PREDRAW:
            stage = LEAD
            if action == DRAW:
                draw(index, actor)
            elif action == CLOSE:
                closer = actor
                if rules.exchange_after_opponent_closes:
                    stage = RESPOND_CLOSE
                    to_move = 1 - actor
        elif stage == RESPOND_CLOSE:
            if action == EXCHANGE:
                exchange(actor, index)
            elif action != PASS:
                raise ValueError(f"history action {action} where only exchange or pass is legal")
            stage = LEAD
            to_move = closer
        if action == DECLARE:
            raise ValueError("the compiled core replays auto-declared deals only (R13)")
    as_array = lambda values: np.array(values, dtype=np.int64)  # noqa: E731
    return Timeline(as_array(history), need, arrive, as_array(draw_after), as_array(draw_winner),
                    as_array(bottom_draw), infoset.dealer, infoset.trump_card, core_rule_bits(rules))


# ------------------------------------------------------------------------------------------------ completion
@kernel
def _complete_hands(player, hand_now, need, arrive, draw_after, draw_winner, bottom_draw, drawn, count):
    """Draw ``player``'s face-down draws backwards (see the module docstring) into ``drawn[player, k]``; returns his
    dealt hand, or -1 if the counts do not fit."""
    ever = hand_now
    for card in range(24):
        if need[player, card] < NEVER:
            ever |= 1 << card
    pool = 0
    remaining = ever
    while remaining:
        low = remaining & -remaining
        remaining ^= low
        card = bit_index(low)
        # A card that came otherwise (exchange, bottom card) was neither dealt nor drawn, unless he held it before
        # (the nine laid by an exchange and taken back as the bottom card).
        if arrive[player, card] < 0 or need[player, card] < arrive[player, card]:
            pool |= 1 << card
    cards = np.empty(24, dtype=np.int64)
    for event in range(count - 1, -1, -1):
        if bottom_draw[event] and draw_winner[event] != player:
            drawn[player, event] = -1  # he took the known bottom card
            continue
        size = 0
        remaining = pool
        while remaining:
            low = remaining & -remaining
            remaining ^= low
            card = bit_index(low)
            if need[player, card] > draw_after[event]:
                cards[size] = card
                size += 1
        if size == 0:
            return -1
        card = cards[np.random.randint(0, size)]
        drawn[player, event] = card
        pool &= ~(1 << card)
    return pool


@kernel
def world_likelihood(world, observer, history, need, arrive, draw_after, draw_winner, bottom_draw, dealer,
                     trump_card, rule_bits, params, follow_floor, rule_floor, lead_floor, closed_floor, closing_floor,
                     played_on_floor, replay, entries, nodes):
    """The likelihood of the opponent's observed choices in ``world`` (a full current state consistent with the
    observer's view) under the model player, one completion of the deal drawn (module docstring). Returns -1.0
    when the completion fails (an inconsistent world)."""
    count = draw_after.shape[0]
    drawn = np.empty((2, 12), dtype=np.int64)
    dealt = np.empty(2, dtype=np.int64)
    for player in range(2):
        dealt[player] = _complete_hands(player, world[HAND0 + player], need, arrive, draw_after, draw_winner,
                                        bottom_draw, drawn, count)
        if dealt[player] < 0 or popcount(dealt[player]) != 6:
            return -1.0
    deck = np.empty(24, dtype=np.int64)
    forehand = 1 - dealer
    for player in range(2):
        positions = (0, 1, 2, 6, 7, 8) if player == forehand else (3, 4, 5, 9, 10, 11)
        remaining = dealt[player]
        for position in positions:
            low = remaining & -remaining
            remaining ^= low
            deck[position] = bit_index(low)
    deck[12] = trump_card
    position = 13
    for event in range(count):
        winner = draw_winner[event]
        deck[position] = drawn[winner, event]
        position += 1
        if not bottom_draw[event]:
            deck[position] = drawn[1 - winner, event]
            position += 1
    stock_len = world[STOCK_LEN]
    for index in range(position - 13, stock_len):
        deck[13 + index] = world[STOCK + index]
    for index in range(13 + stock_len, 24):
        deck[index] = -1
    return deal_likelihood(deck, observer, history, dealer, rule_bits, params, follow_floor, rule_floor, lead_floor,
                           closed_floor, closing_floor, played_on_floor, replay, entries, nodes, world)


@kernel
def _closing_wins(state, closer, closed, entries, nodes):
    """Whether closing now (R10) wins ``closer`` the deal when both then see every card (into the buffer ``closed``;
    a paderborn opponent exchanges on the closing when he holds the nine, R9): as the check of
    :func:`.heuristic.should_close` with the world known."""
    copy_state(closed, state)
    apply(closed, _CLOSE)
    if closed[STAGE] == CORE_RESPOND:
        apply(closed, _EXCHANGE if legal_mask(closed) >> _EXCHANGE & 1 else _PASS)
    if closed[STAGE] == OVER:
        return value_for(closed, closer) > 0
    if closer == 0:
        return _solve_value(closed, 0, 1, entries, 0, nodes) >= 1  # fail-soft: at least 1 for player 0
    return _solve_value(closed, -1, 0, entries, 0, nodes) <= -1


@kernel
def deal_likelihood(deck, observer, history, dealer, rule_bits, params, follow_floor, rule_floor, lead_floor,
                    closed_floor, closing_floor, played_on_floor, replay, entries, nodes, world):
    """Deal ``deck`` (R4 order, ``-1`` past the deck's end), replay ``history`` and multiply the floors of the
    opponent's choices that differ from the model player's (module docstring). -1.0 if the replay does not end in
    ``world``'s hands and talon position (a completion that does not fit)."""
    deal_into(replay, deck, dealer, rule_bits)
    opponent = 1 - observer
    sign = 1 if opponent == 0 else -1  # the solver's values are player 0's game points
    likelihood = 1.0
    values = np.empty(64, dtype=np.int64)
    closed = np.empty(STATE_SIZE, dtype=np.int64)
    for index in range(history.shape[0]):
        action = history[index]
        if replay[TO_MOVE] == opponent:
            stage = replay[STAGE]
            if action == _CLOSE and closing_floor < 1.0:
                # R10: would he win the closed deal seeing every card? (Closed positions do not depend on the talon
                # order, so the table's entries hold across worlds: world number 0.)
                copy_state(closed, replay)
                apply(closed, _CLOSE)
                if sign * _solve_value(closed, -4, 4, entries, 0, nodes) <= 0:
                    likelihood *= closing_floor
            elif (replay[CLOSED_BY] >= 0 and closed_floor < 1.0 and (stage == CORE_LEAD or stage == CORE_FOLLOW)
                  and popcount(legal_mask(replay)) > 1):
                legal = _solve_actions(replay, values, entries, 0, nodes)  # R8, R10: a closed phase 2
                best = -4
                for candidate in range(37):
                    if legal >> candidate & 1 and sign * values[candidate] > best:
                        best = sign * values[candidate]
                if sign * values[action] < best:
                    likelihood *= closed_floor
            if (played_on_floor < 1.0 and stage == CORE_LEAD and action != _CLOSE and legal_mask(replay) >> _CLOSE & 1
                    and close_plausible(replay, params) and _closing_wins(replay, opponent, closed, entries, nodes)):
                likelihood *= played_on_floor  # R10: he played on where closing would have won him the deal
            if replay[PHASE2] == 0 and stage != CORE_RESPOND:
                last_trick = on_last_talon_trick(replay)
                if stage == CORE_FOLLOW and not last_trick:
                    if action != phase1_follow(replay, params):
                        likelihood *= follow_floor
                elif stage == CORE_LEAD and not last_trick and action != _CLOSE:
                    legal = legal_mask(replay)
                    if legal >> _EXCHANGE & 1:
                        if action != _EXCHANGE:
                            likelihood *= rule_floor  # R9: the model exchanges at once
                    else:
                        marriages = (legal >> _MARRY_BASE) & 0xFF
                        if marriages:
                            model = winning_marriage(replay, legal)  # R11: one that reaches 66 first
                            if model < 0:
                                model = lead_by_rules(replay, params)
                            if action != model:
                                likelihood *= rule_floor
                        elif lead_floor < 1.0 and action < 24 and action != best_lead(replay, params):
                            likelihood *= lead_floor  # the lead model samples his view: one draw of it
            elif stage == CORE_RESPOND:
                if legal_mask(replay) >> _EXCHANGE & 1 and action != _EXCHANGE:
                    likelihood *= rule_floor
        apply(replay, action)
    if replay[HAND0] != world[HAND0] or replay[HAND0 + 1] != world[HAND0 + 1] or replay[STOCK_POS] != world[STOCK_POS]:
        return -1.0
    return likelihood


@kernel
def inferred_worlds(count, max_tries, template, observer, allowed, unseen, needed, history, need, arrive, draw_after,
                    draw_winner, bottom_draw, dealer, trump_card, rule_bits, params, follow_floor, rule_floor,
                    lead_floor, closed_floor, closing_floor, played_on_floor, entries, nodes, out_worlds, stats,
                    resample):
    """``count`` worlds into ``out_worlds``, each kept with its likelihood (rejection sampling). After
    ``max_tries`` rejections for one world the likeliest of those tries is kept, or with ``resample`` one of them
    drawn with probability proportional to its likelihood (importance resampling; the likeliest alone makes the
    worlds sharper than the posterior when the opponent often leaves the model's play). The rejected tries come in
    proportion to prior times one minus the likelihood, so the exact weight would be L / (1 - L); the fallback acts
    where every likelihood is small, and there the two agree closely. ``stats``: [tries, failed completions, worlds
    that took the fallback]."""
    world = np.empty(STATE_SIZE, dtype=np.int64)
    best = np.empty(STATE_SIZE, dtype=np.int64)
    replay = np.empty(STATE_SIZE, dtype=np.int64)
    for index in range(count):
        best_likelihood = -2.0
        weight_sum = 0.0
        kept = False
        for _ in range(max_tries):
            _determinize_into(world, template, 1 - observer, allowed, unseen, needed)
            stats[0] += 1
            likelihood = world_likelihood(world, observer, history, need, arrive, draw_after, draw_winner,
                                          bottom_draw, dealer, trump_card, rule_bits, params, follow_floor,
                                          rule_floor, lead_floor, closed_floor, closing_floor, played_on_floor,
                                          replay, entries, nodes)
            if likelihood < 0:
                stats[1] += 1
                continue
            if np.random.random() < likelihood:
                kept = True
                break
            if resample:
                # One-item weighted reservoir: try i stays with probability likelihood_i / the sum so far.
                weight_sum += likelihood
                replace = weight_sum == 0.0 or np.random.random() * weight_sum < likelihood
                best_likelihood = max(best_likelihood, likelihood)
            else:
                replace = likelihood > best_likelihood
                if replace:
                    best_likelihood = likelihood
            if replace:
                for slot in range(STATE_SIZE):
                    best[slot] = world[slot]
        if not kept and best_likelihood >= 0.0:
            stats[2] += 1
        source = world if kept or best_likelihood < -1.0 else best
        for slot in range(STATE_SIZE):
            out_worlds[index, slot] = source[slot]


__all__ = ["Timeline", "deal_likelihood", "inferred_worlds", "public_timeline", "world_likelihood"]
