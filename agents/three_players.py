"""Play for three-player Sixty-six "echt zu dritt" (R21): the ``greedy``, ``heuristic`` and ``pimc`` decisions.

The agent classes of :mod:`agents.rule_based` and :mod:`agents.pimc` keep their spec names and read the seat
count from what they are given: a :class:`~sixtysix_env.three_infoset.ThreeInformationSet` is played by the
functions here. Everything is decided from the information set only.

* **greedy** — names the suit it holds most of among its first three cards, announces every marriage at once,
  leads its highest card, follows with the cheapest card that takes a trick worth taking, else its cheapest card.
* **heuristic** — counts cards (played, unseen, the marriages shown and the voids shown by the R21 follow rule):
  names trump by the strength of its three cards (count, rank, a held pair); announces its marriages at once;
  leads a *sure winner* (no card an opponent may hold beats it), else cashes a master card of a side suit while
  enough of the suit is out, else leads its cheapest card of a short suit (keeping trumps, tens and marriage
  pairs); as the trick's last player wins by following suit with its highest card that is not the suit's master,
  takes a trick with a trump only when it holds points, else throws its cheapest card; as the middle player wins
  only with a card the last player is unlikely to beat (no higher card of the suit he may hold, and he likely
  follows suit), else throws its cheapest card.
* **pimc** (search) — perfect-information Monte Carlo over the two hidden hands: ``determinize`` deals the unseen
  cards consistently with the shown voids and marriages, every legal action is played on in each world with a
  fast policy for all three seats, and the action with the best mean outcome (1 for winning the deal, plus a
  small share of the point margin over the best opponent) is chosen; the heuristic's choice is kept unless
  another action beats it by ``override_margin`` on the same worlds.
"""

from __future__ import annotations

import random
import time

from sixtysix_env.actions import MARRY_BASE, PASS, marry_card
from sixtysix_env.cards import CARD_POINTS, HIGHER_IN_SUIT, SUIT_MASKS, cards_of
from sixtysix_env.three import (
    ANNOUNCE, ANNOUNCE_BASE, BEATERS, FOLLOW, LEAD, NAME_TRUMP, NAME_TRUMP_BASE, ThreePlayerGame,
)
from sixtysix_env.three_infoset import ThreeInformationSet

from .base import legal_actions_to_choose

RANK_STRENGTH = (1, 1, 2, 2, 3, 4)  # 9 J Q K T A: how much a card helps to make its suit trump


# ---------------------------------------------------------------------------------------------- shared helpers
def is_three_player(infoset) -> bool:
    return isinstance(infoset, ThreeInformationSet)


def cheapness(card: int, trump: int) -> tuple[int, int, int]:
    """Order for throwing a card away: non-trumps first, then fewer points, then lower rank."""
    return (card // 6 == trump, CARD_POINTS[card], card % 6)


def current_best(trick_cards, trump: int) -> int:
    """The card winning the current trick so far (R6 with three cards)."""
    beaters = BEATERS[trump]
    best = trick_cards[0]
    for card in trick_cards[1:]:
        if beaters[best] >> card & 1:
            best = card
    return best


def table_points(trick_cards) -> int:
    return sum(CARD_POINTS[card] for card in trick_cards)


def trump_by_count(first_three: int) -> int:
    """The greedy choice: the suit with most of the three cards, then most card points."""
    return max(range(4), key=lambda suit: ((first_three & SUIT_MASKS[suit]).bit_count(),
                                           sum(CARD_POINTS[c] for c in cards_of(first_three & SUIT_MASKS[suit])),
                                           -suit))


def trump_by_strength(first_three: int) -> int:
    """The heuristic choice: count, rank strength, and a held King–Queen pair (a 40 marriage in trump, R11)."""
    def score(suit: int) -> float:
        cards = cards_of(first_three & SUIT_MASKS[suit])
        pair = 3 if first_three >> (suit * 6 + 2) & 1 and first_three >> (suit * 6 + 3) & 1 else 0
        return 2.5 * len(cards) + sum(RANK_STRENGTH[c % 6] for c in cards) + pair
    return max(range(4), key=lambda suit: (score(suit), -suit))


def marriage_choice(legal, trump: int) -> int | None:
    """``marry`` action to take: the trump marriage first, leading the Queen (fewer points at risk)."""
    marriages = [action for action in legal if MARRY_BASE <= action < MARRY_BASE + 8]
    if not marriages:
        return None
    return min(marriages, key=lambda action: (marry_card(action) // 6 != trump, action % 2, action))


def announce_choice(legal) -> int:
    """Early-marriage round (R21): announce every marriage (it can only count), then pass."""
    announces = [action for action in legal if action >= ANNOUNCE_BASE]
    return announces[0] if announces else PASS


# ---------------------------------------------------------------------------------------------- greedy
def greedy_action(infoset: ThreeInformationSet) -> int:
    legal = legal_actions_to_choose(infoset)
    if len(legal) == 1:
        return legal[0]
    stage = infoset.stage
    if stage == NAME_TRUMP:
        return NAME_TRUMP_BASE + trump_by_count(infoset.hand)
    if stage == ANNOUNCE:
        return announce_choice(legal)
    trump = infoset.trump_suit
    if stage == LEAD:
        marriage = marriage_choice(legal, trump)
        if marriage is not None:
            return marriage
        cards = [action for action in legal if action < 24]
        return max(cards, key=lambda c: (CARD_POINTS[c], c // 6 != trump, c % 6, -c))
    cards = list(legal)
    best = current_best(infoset.trick_cards, trump)
    winners = [card for card in cards if BEATERS[trump][best] >> card & 1]
    if winners:
        cheapest_winner = min(winners, key=lambda c: cheapness(c, trump))
        if table_points(infoset.trick_cards) >= 10 or cheapest_winner // 6 != trump or len(winners) == len(cards):
            return cheapest_winner
    return min(cards, key=lambda c: cheapness(c, trump))


# ---------------------------------------------------------------------------------------------- heuristic
def possible_cards(infoset: ThreeInformationSet, seat: int) -> int:
    """Cards ``seat`` may hold as far as ``infoset``'s player knows (unseen and not ruled out, or shown)."""
    return (infoset.unseen & ~infoset.void[seat]) | infoset.known[seat]


def likely_beaten(infoset: ThreeInformationSet, card: int, seat: int, lead_suit: int) -> bool:
    """Would ``seat``, still to play, likely beat ``card`` (the best card on the table once played)? He beats it
    with a higher card of its suit he may hold, or with a trump when he may be void in the suit led: shown void
    (R21 follow rule), or few cards of the suit are still out."""
    trump = infoset.trump_suit
    holdable = possible_cards(infoset, seat)
    if holdable & HIGHER_IN_SUIT[card]:
        return True
    if card // 6 == trump or not holdable & SUIT_MASKS[trump]:
        return False
    shown_void = infoset.void[seat] & SUIT_MASKS[lead_suit] == SUIT_MASKS[lead_suit]
    suit_out = (holdable & SUIT_MASKS[lead_suit]).bit_count()
    return shown_void or suit_out < 2


def heuristic_action(infoset: ThreeInformationSet, rng: random.Random) -> int:
    legal = legal_actions_to_choose(infoset)
    if len(legal) == 1:
        return legal[0]
    stage = infoset.stage
    if stage == NAME_TRUMP:
        return NAME_TRUMP_BASE + trump_by_strength(infoset.hand)
    if stage == ANNOUNCE:
        return announce_choice(legal)
    trump = infoset.trump_suit
    me = infoset.player
    first, second = (me + 1) % 3, (me + 2) % 3
    if stage == LEAD:
        marriage = marriage_choice(legal, trump)
        if marriage is not None:
            return marriage  # R11/R12: 20 or 40 that count once a trick is won; waiting risks breaking the pair
        cards = [action for action in legal if action < 24]
        sure = [c for c in cards if _sure_lead(infoset, c, (first, second))]
        if sure:
            # Take the points now: the highest-scoring sure winner (a trump last, it may be needed to trump).
            return max(sure, key=lambda c: (c // 6 != trump, CARD_POINTS[c], c))
        masters = [c for c in cards if c // 6 != trump and not infoset.unseen & HIGHER_IN_SUIT[c]
                   and (infoset.unseen & SUIT_MASKS[c // 6]).bit_count() >= 2]
        if masters:
            return max(masters, key=lambda c: (CARD_POINTS[c], c))  # cash a master card before voids appear
        return min(cards, key=lambda c: _lead_cost(infoset, c, trump))
    cards = list(legal)
    trick = infoset.trick_cards
    best = current_best(trick, trump)
    winners = [card for card in cards if BEATERS[trump][best] >> card & 1]
    on_table = table_points(trick)
    if len(trick) == 2:  # last to play: a winner takes the trick for sure
        plain_winners = [card for card in winners if card // 6 != trump]
        if plain_winners:
            # Following suit and winning costs nothing: bank the most points, keeping the suit's master card
            # (no higher card of it is unseen) for later when another winner will do.
            top = max(plain_winners)
            if len(plain_winners) > 1 and not infoset.unseen & HIGHER_IN_SUIT[top]:
                plain_winners.remove(top)  # the master card wins a later trick by itself
            return max(plain_winners, key=lambda c: (CARD_POINTS[c], c))
        if winners:
            winner = min(winners, key=lambda c: cheapness(c, trump))
            gain = on_table + CARD_POINTS[winner]
            cost = (10 if winner // 6 == trump and winner % 6 >= 4 else 0)  # a trump ten or ace spent cheaply
            if gain >= 4 + cost or len(winners) == len(cards):
                return winner
        return min(cards, key=lambda c: cheapness(c, trump))
    # Middle player: the last to play, the seat after us (``first``; ``second`` led), may still beat us. Until
    # session 67 this asked about the leader, who has already played.
    lead_suit = trick[0] // 6
    safe = [card for card in winners if not likely_beaten(infoset, card, first, lead_suit)]
    if safe:
        spend = [card for card in safe if not (card // 6 == trump and CARD_POINTS[card] >= 10)] or safe
        if on_table >= 10 or any(card // 6 == lead_suit and CARD_POINTS[card] >= 10 for card in spend):
            return max(spend, key=lambda c: (CARD_POINTS[c] if c // 6 != trump else -CARD_POINTS[c], -c))
        return min(spend, key=lambda c: cheapness(c, trump))
    return min(cards, key=lambda c: cheapness(c, trump))


def _sure_lead(infoset: ThreeInformationSet, card: int, opponents: tuple[int, int]) -> bool:
    """No card an opponent may hold beats ``card`` led (they must follow suit when they can, R21)."""
    trump = infoset.trump_suit
    suit = card // 6
    for seat in opponents:
        holdable = possible_cards(infoset, seat)
        if holdable & HIGHER_IN_SUIT[card]:
            return False
        if suit != trump and holdable & SUIT_MASKS[trump]:
            # He trumps only when void in the suit: count him as a threat unless he surely holds the suit.
            if not infoset.known[seat] & SUIT_MASKS[suit]:
                outstanding = (infoset.unseen & SUIT_MASKS[suit]).bit_count()
                if outstanding < 3:  # few cards of the suit are out: an opponent is likely void
                    return False
    return True


def _lead_cost(infoset: ThreeInformationSet, card: int, trump: int) -> tuple:
    """Cheapest lead: a low card of a short non-trump suit (keep trumps and points), breaking no held marriage."""
    hand = infoset.hand
    suit_count = (hand & SUIT_MASKS[card // 6]).bit_count()
    in_pair = card % 6 in (2, 3) and hand >> (card ^ 1) & 1 and hand & (1 << (card - card % 6 + 2)) and \
        hand & (1 << (card - card % 6 + 3))
    return (card // 6 == trump, bool(in_pair), CARD_POINTS[card] >= 10, suit_count, CARD_POINTS[card], card % 6)


# ---------------------------------------------------------------------------------------------- search (PIMC)
def rollout_action(game: ThreePlayerGame) -> int:
    """A fast perfect-information playout policy for every seat (no information set is built)."""
    stage = game.stage
    if stage == FOLLOW:
        legal = game.legal_actions()
        if len(legal) == 1:
            return legal[0]
        trump = game.trump_suit
        beaters = BEATERS[trump][game.best_card]
        winners = [card for card in legal if beaters >> card & 1]
        if winners and (len(game.trick_cards) == 2 or table_points(game.trick_cards) >= 10):
            return min(winners, key=lambda c: cheapness(c, trump))
        return min(legal, key=lambda c: cheapness(c, trump))
    legal = game.legal_actions()
    if stage == LEAD:
        trump = game.trump_suit
        marriage = marriage_choice(legal, trump)
        if marriage is not None:
            return marriage
        cards = [action for action in legal if action < 24]
        aces = [card for card in cards if card % 6 == 5 and card // 6 != trump]
        return aces[0] if aces else min(cards, key=lambda c: cheapness(c, trump))  # cash an ace, else lead low
    if stage == ANNOUNCE:
        return announce_choice(legal)
    return NAME_TRUMP_BASE + trump_by_count(game.first_three or game.hands[game.to_move])


def outcome_value(game: ThreePlayerGame, player: int) -> float:
    """1 for winning the deal (R21), 0.5 for a tie at the top, plus a small share of the point margin."""
    points = game.result.points
    best_other = max(points[seat] for seat in range(3) if seat != player)
    win = 1.0 if game.result.winner == player else (0.5 if points[player] == best_other else 0.0)
    return win + (points[player] - best_other) / 1200.0


def playout(game: ThreePlayerGame, player: int) -> float:
    while not game.is_over:
        game.apply(rollout_action(game))
    return outcome_value(game, player)


def pimc_action(infoset: ThreeInformationSet, rng: random.Random, samples: int, seconds: float | None,
                override_margin: float = 0.05, prior: int | None = None) -> int:
    legal = legal_actions_to_choose(infoset)
    if len(legal) == 1:
        return legal[0]
    totals = {action: 0.0 for action in legal}
    start = time.perf_counter()
    worlds = 0
    while worlds < samples:
        if seconds is not None and worlds:
            elapsed = time.perf_counter() - start
            if elapsed + 1.5 * elapsed / worlds > seconds:
                break
        world = infoset.determinize(rng)
        for action in legal:
            trial = world.clone()
            trial.apply(action)
            totals[action] += playout(trial, infoset.player)
        worlds += 1
    best = max(legal, key=lambda action: (totals[action], -action))
    if prior is not None and prior in totals and totals[best] - totals[prior] <= override_margin * worlds:
        return prior
    return best


__all__ = [
    "greedy_action", "heuristic_action", "is_three_player", "outcome_value", "pimc_action", "playout",
    "rollout_action", "trump_by_count", "trump_by_strength",
]
