"""Inference of the opponent's hand from his play: how likely his observed choices are in a sampled world.

``infoset.determinize`` draws the opponent's hidden cards uniformly among the layouts consistent with the *rules*
(cards seen, voids shown in phase 2). His *choices* say more: a player who led without announcing a marriage
(R11) rarely held the pair, a player who led with the talon open and did not exchange (R9) rarely held the trump
nine (jack with 20 cards), and the card he chose to lead says something about the rest of his hand. An
:class:`OpponentModel` is built once per decision from the public history and gives each sampled world a
likelihood in (0, 1]: the probability of the opponent's observed choices given that world's hidden cards. A search
agent keeps a world with that probability (rejection sampling), which is the same as weighting it.

The hand he held at an earlier lead is not fixed by a world: the world says what he holds *now*, and he drew
cards since (R7). The cards he drew after that lead are some ``k`` of the cards he has held since that are not
known to have come otherwise (by an exchange, or the known bottom card, R7/R9); they are taken as uniformly
placed among those, so a pair he holds now was held at that lead with the hypergeometric probability that
neither of its cards was among the ``k`` draws.

Kinds of evidence (``kinds``):

* ``rules``: every phase-1 lead of his (talon open, R7; not the talon's last trick, which players search) at
  which he could have announced a marriage (R11, also ``marriage_needs_trick``) but led a plain card, and every
  one at which he could have exchanged (R9, also ``exchange_needs_trick``) but did not. Each pair (or the nine) he
  holds multiplies the likelihood by ``1 - (1 - floor) * P(held then)`` at the latest such lead (held at an earlier
  lead means held at the later ones too, so the latest carries the evidence and a late draw is not penalised twice).
* ``policy``: ``rules``, and every card he led or followed with in phase 1 (not on the talon's last trick),
  under a softmax over the playout policy's scores (:func:`agents.pimc.policy_action`: he leads what he least
  needs to keep, :func:`agents.pimc.keep_value` plus half the card's points; he follows for the points won or
  given minus the worth of the card spent), mixed with a uniform choice; his hand at that trick (the cards he
  drew since taken out) drawn once per world.
* ``heuristic``: the model is the ``heuristic`` player itself, compiled, and the deal is replayed on the core
  (:class:`ReplayedWorlds`, :mod:`sixtysix_env.core.inference`): each world is completed into a whole deal (dealt
  hands and draws, uniform among the consistent completions), and each of his phase-1 follows and rule-decided
  leads the model would not make multiplies the likelihood by a floor. Exact for a heuristic opponent (the true
  deck explains his play with likelihood 1).
"""

from __future__ import annotations

import math
import random
from typing import NamedTuple

import numpy as np

from sixtysix_env import InformationSet
from sixtysix_env.actions import CLOSE, DECLARE, DRAW, EXCHANGE, MARRY_BASE, PASS, marry_card
from sixtysix_env.cards import CARD_POINTS, HIGHER_IN_SUIT, KING, QUEEN, SUIT_MASKS, cards_of

from .rule_based import on_last_talon_trick

INFERENCE_KINDS = ("none", "rules", "policy", "heuristic")
RULE_FLOOR = 0.1  # the chance a player skips a marriage or an exchange he could make (the heuristic never does)
# The play model: a softmax over the playout policy's lead or follow scores (card points) at these temperatures,
# mixed with a uniform choice (share PLAY_MIX). Fitted to single plays of `heuristic` in self-play
# (`python -m bench.inference_calibration --fit --deals 150 --seed 1000 --scales 0.5,1,2`): the likeliest model of
# one lead has temperature 1.5 and mix 0.1 (-0.91 nats per lead against -1.79 for a uniform lead; the model's
# cheapest lead is the heuristic's in 70 % of 409 leads), of one follow 1.0 and 0.1 (-0.41 nats; 82 % of 556).
# Multiplied over a deal's tricks (with the hand at each trick drawn) these were overconfident: on 40 other deals
# (every decision; `python -m bench.inference_calibration --deals 40 --seed 500 --worlds 60`) the true hand's
# likelihood over the mean of 60 sampled worlds' had a geometric mean of 0.76 (below 1: worse than no inference),
# 1.13 with twice the temperatures and mix 0.5 (the rules alone: 1.12).
LEAD_TEMPERATURE = 3.0
FOLLOW_TEMPERATURE = 2.0
PLAY_MIX = 0.5


class OpponentLead(NamedTuple):
    """One phase-1 lead turn of the opponent, as the public history shows it."""

    trick_index: int
    led_card: int  # the card he led (a marriage's shown card when ``married``)
    married: bool
    exchanged: bool
    closed: bool
    tricks_won_before: int  # his tricks before this turn (R9/R11 ``*_needs_trick``)
    exchange_done_before: bool  # someone exchanged before this turn: the nine lies under the talon (R9)
    won_before: int  # cards won by both players before this turn (what the lead model sees as played)


class OpponentFollow(NamedTuple):
    """One phase-1 follow of the opponent (R7: any card)."""

    trick_index: int
    lead_card: int
    follow_card: int
    won_before: int


def _parse_leads(infoset: InformationSet) -> tuple[list[OpponentLead], list[OpponentFollow], list[int],
                                                    dict[int, int], list[int]]:
    """The opponent's lead turns with the talon open at the turn's start, his phase-1 follows, which tricks were
    followed by a draw (R7; with ``close_draw_option`` a closing before drawing means none, R10), the card he
    played in each trick (index -> card), and the trick index of each exchange (R9) in ``infoset.exchanges``
    order."""
    opponent = infoset.opponent
    rules = infoset.rules
    tricks = infoset.tricks
    history = infoset.history
    leads: list[OpponentLead] = []
    follows: list[OpponentFollow] = []
    drawn_after: list[int] = []  # trick indices after which both players drew
    his_cards: dict[int, int] = {}
    leader = infoset.forehand
    trick_index = 0
    turn: list[int] = []  # non-card actions of the current lead turn
    exchange_done = False
    closed = False
    won = [0, 0]
    won_cards = 0
    exchange_turns: list[int] = []
    position = 0
    while position < len(history):
        action = history[position]
        position += 1
        if action in (EXCHANGE, CLOSE, DECLARE, DRAW, PASS):
            if action == CLOSE:
                if not closed and trick_index > 0 and rules.close_draw_option and history[position - 2] < 24 \
                        and drawn_after and drawn_after[-1] == trick_index - 1:
                    drawn_after.pop()  # R10 paderborn: closed before drawing, so nobody drew after that trick
                closed = True
                turn.append(CLOSE)
            elif action == EXCHANGE:
                exchange_turns.append(trick_index)
                if not (CLOSE in turn and rules.exchange_after_opponent_closes):
                    turn.append(EXCHANGE)  # (after a closing it is the other player's R9 paderborn exchange)
            continue
        # A card or a marriage: the lead of trick ``trick_index``; the next action is the follow.
        married = MARRY_BASE <= action < EXCHANGE
        led = marry_card(action) if married else action
        talon_open_at_start = not closed or CLOSE in turn
        phase1 = trick_index < len(tricks) and not tricks[trick_index][4] or (
            trick_index == len(tricks) and infoset.closed_by is None and infoset.talon_size > 0)
        if leader == opponent:
            his_cards[trick_index] = led
            if talon_open_at_start and (phase1 or CLOSE in turn):
                exchanged_here = EXCHANGE in turn
                leads.append(OpponentLead(trick_index, led, married, exchanged_here, CLOSE in turn, won[opponent],
                                          exchange_done and not exchanged_here, won_cards))
        if EXCHANGE in turn:
            exchange_done = True
        turn = []
        if position >= len(history):
            break  # the current trick: he (or we) led, the follow is still to come
        follow = history[position]
        position += 1
        trick = tricks[trick_index]
        if leader != opponent:
            his_cards[trick_index] = follow
            if not trick[4]:
                follows.append(OpponentFollow(trick_index, led, follow, won_cards))
        winner = trick[3]
        won[winner] += 1
        won_cards |= (1 << trick[1]) | (1 << trick[2])
        if not trick[4]:
            drawn_after.append(trick_index)
        leader = winner
        trick_index += 1
    return leads, follows, drawn_after, his_cards, exchange_turns


def _none_drawn_probability(needed: int, candidates: int, draws: int) -> float:
    """P(none of ``needed`` given cards is among ``draws`` cards drawn uniformly from ``candidates``)."""
    if needed == 0 or draws == 0:
        return 1.0
    if candidates - needed < draws:
        return 0.0
    return math.comb(candidates - needed, draws) / math.comb(candidates, draws)


class _WonCards:
    """What :func:`agents.pimc.keep_value` reads of a game: the trump suit and the cards won so far."""

    __slots__ = ("trump_suit", "won_cards")

    def __init__(self, trump_suit: int, won: int):
        self.trump_suit = trump_suit
        self.won_cards = (won, 0)


def play_scores(following: bool, hand: int, lead: int, won: int, trump: int) -> dict[int, float]:
    """The play model's score of each card of ``hand`` (higher: likelier), as :func:`agents.pimc.policy_action`
    chooses: a lead by the least worth kept (:func:`agents.pimc.keep_value`) plus half its points; a follow to
    ``lead`` by the points won or given minus the worth of the card spent (without the policy's rare reach-66
    terms). ``won``: the cards won so far by either player."""
    from .pimc import keep_value

    view = _WonCards(trump, won)
    if not following:
        return {card: -keep_value(card, hand, view) - 0.5 * CARD_POINTS[card] for card in cards_of(hand)}
    beaters = HIGHER_IN_SUIT[lead] | (0 if lead // 6 == trump else SUIT_MASKS[trump])
    scores = {}
    for card in cards_of(hand):
        trick = CARD_POINTS[lead] + CARD_POINTS[card]
        scores[card] = (trick if beaters >> card & 1 else -trick) - keep_value(card, hand, view)
    return scores


class OpponentModel:
    """The likelihood of the opponent's observed phase-1 choices given a world (see the module docstring)."""

    def __init__(self, infoset: InformationSet, kind: str = "rules"):
        if kind not in INFERENCE_KINDS:
            raise ValueError(f"inference must be one of {', '.join(INFERENCE_KINDS)}, got {kind!r}")
        self.kind = kind
        self.opponent = infoset.opponent
        rules = infoset.rules
        trump = infoset.trump_suit
        leads, follows, drawn_after, his_cards, exchange_turns = (
            _parse_leads(infoset) if kind != "none" else ([], [], [], {}, []))
        exchange_card = trump * 6 + rules.exchange_rank
        last_draw = drawn_after[-1] if drawn_after else -1
        # Cards that came to him otherwise than by a face-down draw, with the trick index from which he held
        # them: taken by an exchange (R9, at that trick's lead), the bottom card as loser of the talon's last
        # trick (R7, from the next trick on). Neither is one of the unknown draws.
        arrivals: list[tuple[int, int]] = []
        for exchange, index in zip(infoset.exchanges, exchange_turns):
            if exchange.player == self.opponent:
                arrivals.append((1 << exchange.taken_card, index))
        takes_bottom = infoset.bottom_taker == self.opponent
        if takes_bottom:
            arrivals.append((1 << infoset.bottom_taken_card, last_draw + 1))
        not_drawn = 0
        for cards, _index in arrivals:
            not_drawn |= cards
        # One check per lead turn: (cards he played after it, unknown draws after it, held then for sure,
        # cards that came later otherwise than by a draw, sets he would have acted on, his lead if modelled).
        self.checks: list[tuple[int, int, int, int, list[tuple[int, float]], tuple | None]] = []
        # The talon's last trick (R7) is searched, not played by rule (agents.rule_based and pimc): a marriage
        # may be kept back there, so it is no evidence.
        last_talon_trick = last_draw if infoset.bottom_taker is not None else (
            len(infoset.tricks) if on_last_talon_trick(infoset) else -1)
        def since(trick_index: int) -> tuple[int, int, int, int]:
            """(cards he played after that trick, his unknown draws after it, cards that came to him later
            otherwise, cards he held then for sure)."""
            later = 0
            for index, card in his_cards.items():
                if index > trick_index:
                    later |= 1 << card
            draws = sum(1 for index in drawn_after if index >= trick_index)
            if takes_bottom and last_draw >= trick_index:
                draws -= 1  # the bottom card is a known draw
            came_later = held = 0
            for cards, index in arrivals:
                if index <= trick_index:
                    held |= cards
                else:
                    came_later |= cards
            return later, max(draws, 0), came_later, held

        timed: list[tuple[int, tuple]] = []
        for lead in leads:
            later, draws, came_later, held = since(lead.trick_index)
            held |= 1 << lead.led_card
            if lead.married:
                held |= 1 << (lead.led_card ^ 1)
            suspects: list[tuple[int, float]] = []
            if not lead.closed:
                if (not lead.married and lead.trick_index != last_talon_trick
                        and (lead.tricks_won_before or not rules.marriage_needs_trick)):
                    for suit in range(4):
                        pair = (1 << (suit * 6 + QUEEN)) | (1 << (suit * 6 + KING))
                        if not pair & lead.won_before:
                            suspects.append((pair, RULE_FLOOR))
                if (not lead.exchanged and not lead.exchange_done_before
                        and (lead.tricks_won_before or not rules.exchange_needs_trick)
                        and not lead.won_before >> exchange_card & 1):
                    suspects.append((1 << exchange_card, RULE_FLOOR))
            modelled = None
            if kind == "policy" and not lead.married and not lead.closed:
                modelled = (False, lead.led_card, -1, lead.won_before, trump)
            timed.append((lead.trick_index, (later, draws, held, came_later, suspects, modelled)))
        if kind == "policy":
            for follow in follows:
                if follow.trick_index == last_talon_trick:
                    continue  # searched, not played by rule
                later, draws, came_later, held = since(follow.trick_index)
                timed.append((follow.trick_index, (later, draws, held | 1 << follow.follow_card, came_later, [],
                                                   (True, follow.follow_card, follow.lead_card, follow.won_before,
                                                    trump))))
        timed.sort(key=lambda entry: entry[0])  # in the order of play (the latest lead weighs a suspect set)
        self.checks = [check for _index, check in timed]
        self.not_drawn = not_drawn

    @property
    def informative(self) -> bool:
        return any(suspects or modelled for *_cards, suspects, modelled in self.checks)

    def likelihood(self, opponent_hand: int, rng: random.Random | None = None) -> float:
        """Probability of his observed choices if he holds ``opponent_hand`` now (the policy lead model draws
        his hand at each lead with ``rng``)."""
        likelihood = 1.0
        counted = set()  # suspect sets already weighed at a later lead
        for later, draws, held, came_later, suspects, modelled in reversed(self.checks):
            since = opponent_hand | later  # every card he has held since that lead
            candidates = since & ~self.not_drawn & ~held
            count = candidates.bit_count()
            for cards, floor in suspects:
                if cards in counted or cards & ~(since | held) or cards & came_later:
                    continue  # weighed at a later lead already, or he did not hold all of them then
                # Held at an earlier lead implies held at this later one (until played): only the latest lead
                # at which he could have acted on them counts, so that one late draw is not penalised twice.
                counted.add(cards)
                unknown = (cards & candidates).bit_count()
                held_then = _none_drawn_probability(unknown, count, draws)
                likelihood *= 1.0 - (1.0 - floor) * held_then
            if modelled is not None and rng is not None:
                likelihood *= self._play_likelihood(modelled, (since | held) & ~came_later, candidates, draws, rng)
        return likelihood

    @staticmethod
    def _play_likelihood(modelled: tuple, holdings: int, candidates: int, draws: int, rng: random.Random) -> float:
        """P(his lead or follow | his hand then), that hand drawn once (the ``draws`` cards he drew since are some
        of ``candidates``)."""
        following, played, lead, won, trump = modelled
        hand = holdings
        if draws:
            pool = cards_of(candidates)
            if len(pool) < draws:
                return 1.0
            for card in rng.sample(pool, draws):
                hand &= ~(1 << card)  # drawn after that lead: not in his hand then
        if not hand >> played & 1:
            return 1.0
        scores = play_scores(following, hand, lead, won, trump)
        temperature = FOLLOW_TEMPERATURE if following else LEAD_TEMPERATURE
        best = max(scores.values())
        weights = {card: math.exp((score - best) / temperature) for card, score in scores.items()}
        return PLAY_MIX / len(weights) + (1.0 - PLAY_MIX) * weights[played] / sum(weights.values())


MAX_REJECTIONS = 30  # worlds rejected per draw before one is kept as drawn: bounds the time when few worlds
# fit his play (with the floors above a kept world takes about 1 / mean likelihood draws, typically 1-3)


class _ReadsThroughToInfoset:
    """Everything not defined here reads through to the wrapped information set (``self._infoset``)."""

    def __getattr__(self, name: str):
        # Only while ``_infoset`` is set: pickle and copy look attributes up on an object whose __init__ never ran,
        # where reading ``self._infoset`` would call this again without end.
        infoset = self.__dict__.get("_infoset")
        if infoset is None:
            raise AttributeError(name)
        return getattr(infoset, name)


class InferredWorlds(_ReadsThroughToInfoset):
    """An information set whose :meth:`determinize` keeps each world with the probability of the opponent's
    observed play in it (rejection sampling: the kept worlds are distributed as the likelihood-weighted ones), so
    any agent that samples worlds from an information set can use it; everything else reads through to the
    wrapped information set."""

    def __init__(self, infoset: InformationSet, model: OpponentModel):
        self._infoset = infoset
        self._model = model
        self.rejected = 0  # worlds rejected so far (for measurements)


    def determinize(self, rng: random.Random):
        opponent = self._infoset.opponent
        for _ in range(MAX_REJECTIONS):
            world = self._infoset.determinize(rng)
            if rng.random() < self._model.likelihood(world.hands[opponent], rng):
                return world
            self.rejected += 1
        return self._infoset.determinize(rng)

    def sample_opponent_hand(self, rng: random.Random) -> int:
        """The opponent's hand in a world drawn by :meth:`determinize` (the heuristic's model of his replies)."""
        return self.determinize(rng).hands[self._infoset.opponent]


REPLAY_INFERENCE = ("none", "heuristic")  # the search agents' choice: uniform worlds, or ReplayedWorlds
# Which world ReplayedWorlds keeps when max_tries draws were all rejected: the likeliest, or one drawn in proportion
# to its likelihood (sixtysix_env.core.inference.inferred_worlds).
WORLD_FALLBACKS = ("likeliest", "resample")


# The floors of ReplayedWorlds, as the search agents name them (replay_settings checks them in this order).
REPLAY_FLOORS = ("follow_floor", "rule_floor", "lead_floor", "closed_floor", "closing_floor", "played_on_floor")


def inert_without_inference(inference: str, also: tuple[str, ...] = ()) -> dict[str, str]:
    """A search agent's parameters that only weigh inferred worlds (the floors, and ``also``), each with why it is
    inert, when ``inference`` (checked by :func:`replay_settings`) infers none: for ``Agent.inert_parameters``."""
    if inference != "none":
        return {}
    return {name: "it counts only with inference=heuristic" for name in REPLAY_FLOORS + also}


def replay_settings(inference, follow_floor, rule_floor, lead_floor, closed_floor=1.0,
                    closing_floor=1.0, played_on_floor=1.0) -> tuple[str, tuple[float, ...]]:
    """A search agent's ``inference`` (one of ``REPLAY_INFERENCE``) and the floors of :class:`ReplayedWorlds`,
    checked: each floor is a probability in (0, 1] (a floor of 1 leaves that kind of choice unmodelled)."""
    if not isinstance(inference, str) or inference.strip().lower() not in REPLAY_INFERENCE:
        raise ValueError(f"inference must be one of {', '.join(REPLAY_INFERENCE)}, got {inference!r}")
    floors = dict(zip(REPLAY_FLOORS, (follow_floor, rule_floor, lead_floor, closed_floor, closing_floor,
                                      played_on_floor)))
    for label, floor in floors.items():
        if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not 0 < floor <= 1:
            raise ValueError(f"{label} must be a probability in (0, 1], got {floor!r}")
    return inference.strip().lower(), tuple(float(floor) for floor in floors.values())


class ReplayedWorlds(_ReadsThroughToInfoset):
    """An information set whose :meth:`determinize` draws worlds on the compiled core, each kept with the
    likelihood of the opponent's choices so far under the ``heuristic`` player's rules, his past hands completed
    and the deal replayed (:mod:`sixtysix_env.core.inference`); everything else reads through to the wrapped
    information set. Worlds come in batches from numba's generator, seeded from the ``rng`` of the first call.
    ``closed_floor`` / ``closing_floor`` (1: unmodelled, the default) weigh his play after a closing and his
    closing itself (R10) by whether they are best in the world with every card seen; ``played_on_floor`` (1:
    unmodelled) weighs his playing on at a lead where closing looked plausible and would have won him the world.
    ``fallback`` (one of ``WORLD_FALLBACKS``): the world kept when ``max_tries`` draws were all rejected."""

    BATCH = 32

    def __init__(self, infoset: InformationSet, follow_floor: float = 0.1, rule_floor: float = 0.1,
                 lead_floor: float = 1.0, closed_floor: float = 1.0, closing_floor: float = 1.0,
                 played_on_floor: float = 1.0, max_tries: int = 64, fallback: str = "likeliest"):
        from sixtysix_env.core.inference import public_timeline
        from sixtysix_env.core.search import information_template

        from .rule_based import HeuristicAgent
        from .solver import core_table

        self._infoset = infoset
        self._timeline = public_timeline(infoset)
        self._core_template = information_template(infoset)
        self._params = HeuristicAgent().core_params()
        self._table = core_table()
        self._floors = (float(follow_floor), float(rule_floor), float(lead_floor), float(closed_floor),
                        float(closing_floor), float(played_on_floor))
        self._max_tries = max_tries
        if fallback not in WORLD_FALLBACKS:
            raise ValueError(f"fallback must be one of {', '.join(WORLD_FALLBACKS)}, got {fallback!r}")
        self._resample = fallback == "resample"
        self._buffer = None
        self._next = 0
        self.stats = np.zeros(3, dtype=np.int64)  # worlds tried, completions that failed, worlds by the fallback
        self.rejected = 0


    def _refill(self, rng: random.Random) -> None:
        from sixtysix_env.core.inference import inferred_worlds
        from sixtysix_env.core.layout import STATE_SIZE
        from sixtysix_env.core.search import seed_kernels

        # Seeded at every batch, so the worlds follow ``rng`` alone and not what else ran on numba's generator of
        # this thread in between (a search's rollouts reseed it per world: one thread or several, the same worlds).
        seed_kernels(rng.getrandbits(32))
        template, allowed, unseen, needed = self._core_template
        timeline = self._timeline
        self._buffer = np.empty((self.BATCH, STATE_SIZE), dtype=np.int64)
        tried = int(self.stats[0])
        inferred_worlds(self.BATCH, self._max_tries, template, self._infoset.player, allowed, unseen, needed,
                        timeline.history, timeline.need, timeline.arrive, timeline.draw_after, timeline.draw_winner,
                        timeline.bottom_draw, timeline.dealer, timeline.trump_card, timeline.rule_bits, self._params,
                        *self._floors, self._table.entries, self._table.nodes, self._buffer,
                        self.stats, self._resample)
        self.rejected += int(self.stats[0]) - tried - self.BATCH
        self._next = 0

    def next_state(self, rng: random.Random):
        """The next world as a core state (a row of the current batch)."""
        if self._buffer is None or self._next >= len(self._buffer):
            self._refill(rng)
        state = self._buffer[self._next]
        self._next += 1
        return state

    def determinize(self, rng: random.Random):
        from sixtysix_env.core.layout import HAND0, STOCK

        infoset = self._infoset
        state = self.next_state(rng)
        game = infoset._template.clone()
        game.hands[infoset.opponent] = int(state[HAND0 + infoset.opponent])
        stock = list(infoset._template.stock)
        for index in range(len(stock) - infoset.face_down_count, len(stock)):
            stock[index] = int(state[STOCK + index])
        game.stock = stock
        return game

    def sample_opponent_hand(self, rng: random.Random) -> int:
        from sixtysix_env.core.layout import HAND0

        return int(self.next_state(rng)[HAND0 + self._infoset.opponent])


def inferred(infoset: InformationSet, kind: str):
    """``infoset`` itself for ``kind`` ``none`` or when the opponent's play so far says nothing, else an
    :class:`InferredWorlds` over it."""
    if kind == "none":
        return infoset
    if kind == "heuristic":
        from sixtysix_env.core import core_implements

        if core_implements(infoset.rules) and infoset.history:
            return ReplayedWorlds(infoset)
        return infoset
    model = OpponentModel(infoset, kind)
    return InferredWorlds(infoset, model) if model.informative else infoset


__all__ = ["INFERENCE_KINDS", "InferredWorlds", "OpponentModel", "inferred"]
