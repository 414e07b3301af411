"""Rule-based agents (issue 3): ``greedy`` and ``heuristic``.

``greedy`` is a simple baseline: it takes tricks cheaply when they hold points, otherwise throws its cheapest card,
leads its highest card, announces marriages at once, exchanges when it can, declares as soon as it may and never
closes.

``heuristic`` is the strongest rule-based player we could write from the rules and the strategy tips of seed 003:

* it counts cards (the :class:`~sixtysix_env.infoset.InformationSet` holds the played, unseen and known cards and
  both scores) and values each card by what it is still worth to its holder (``card_keep_value``): trumps and tens
  are saved, a marriage partner is not broken, the trump nine is worth the card it can still be exchanged for;
* phase 1 (talon open, R7): it exchanges the trump nine at once (R9), announces a marriage at a lead where it
  neither closes nor searches the talon's last trick (R11, 40 first; one that reaches 66 even before a closing),
  follows by comparing "take the trick" with "throw a card" in card points plus the value of the card spent (so it
  takes a led ten or ace with a low trump, R6), and leads the card whose trick, against a model of the opponent's
  reply over sampled opponent hands, costs least;
* the talon's last trick (one face-down card left, R7) is searched through into phase 2: up to ``endgame_worlds``
  layouts of the hidden cards (which card lies in the talon), each of its actions and each reply, then the exact
  solver (worth about +0.17 game points per deal against the same agent without it);
* it closes the talon (R10) when sampled worlds solved exactly after the closing show it wins with a margin;
* phase 2 (R8) is played with the exact solver (:mod:`agents.solver`): once the talon is exhausted a card-counting
  player knows the opponent's hand, so ``infoset.determinize`` gives the true position and it is solved exactly;
  after a closing it averages the solver's action values over a handful of sampled worlds.

All decisions come from the information set only; randomness (the sampled hands and worlds) comes from the agent's
seeded ``rng``, so an agent with a given seed always plays the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from sixtysix_env import InformationSet, Rules
from sixtysix_env.actions import CLOSE, DECLARE, DRAW, EXCHANGE, MARRY_BASE, PASS, marry_card
from sixtysix_env.cards import ACE, CARD_POINTS, KING, QUEEN, SUIT_MASKS, TEN, cards_of, deck_cards, mask_of
from sixtysix_env.game import FOLLOW, LEAD, PREDRAW, RESPOND_CLOSE
from sixtysix_env.schema import MAX_SAMPLE_COUNT, finite_number

from .base import Agent, legal_actions_to_choose
from .three_players import greedy_action, heuristic_action, is_three_player

GOAL = 66  # R13
TEN_POINTS = CARD_POINTS[TEN]
MAX_GAME_POINTS = 3  # R16: a deal is worth at most 3 game points either way
WIN_BONUS = 100.0  # reaching 66 (or stopping the opponent from reaching it) outweighs any card-point consideration


# ---------------------------------------------------------------------------------------------------- card helpers
def beats(lead: int, card: int, trump_suit: int) -> bool:
    """R6: does ``card`` played to ``lead`` win the trick?"""
    if card // 6 == lead // 6:
        return card > lead
    return card // 6 == trump_suit


def is_phase2(infoset: InformationSet) -> bool:
    """R8 applies: the talon is closed or exhausted."""
    return infoset.closed_by is not None or infoset.talon_size == 0


def talon_exhausted(infoset: InformationSet) -> bool:
    """A phase 2 after the talon's exhaustion (R7, R8; not after a closing, R10): the unseen cards are exactly the
    opponent's hand, so the position is one of perfect information and the exact solver plays it."""
    return infoset.closed_by is None and infoset.talon_size == 0


def on_last_talon_trick(state) -> bool:
    """One face-down card is left and the talon is open (R7): this trick's winner draws it and the loser the bottom
    card, so the trick fixes how phase 2 starts. ``state`` is an :class:`InformationSet` or a ``Game`` (both hold
    ``closed_by``, ``bottom_card`` and ``face_down_count``)."""
    return state.closed_by is None and state.bottom_card is not None and state.face_down_count == 1


def marriage_total(infoset: InformationSet, player: int) -> int:
    """Marriage points announced by ``player`` (R11), counted or not."""
    trump = infoset.trump_suit
    return sum(40 if m.suit == trump else 20 for m in infoset.marriages if m.player == player)


def pending_marriage_points(infoset: InformationSet, player: int) -> int:
    """Marriage points that count only once ``player`` wins a trick (R12)."""
    return 0 if infoset.tricks_won[player] else marriage_total(infoset, player)


def plain_cards(actions: Iterable[int]) -> list[int]:
    """The card plays among ``actions`` (ids 0..23)."""
    return [a for a in actions if a < 24]


def marriage_actions(actions: Iterable[int]) -> list[int]:
    return [a for a in actions if MARRY_BASE <= a < EXCHANGE]


def cheapness(card: int, trump_suit: int) -> tuple[int, int, int]:
    """Sort key of the greedy player: non-trumps before trumps, then fewer card points, then lower rank."""
    return (card // 6 == trump_suit, CARD_POINTS[card], card % 6)


# ---------------------------------------------------------------------------------------------------- card values
@dataclass
class Weights:
    """The tunable numbers of the heuristic, in card points (tuned with bench/quick_strength.py).

    ``trump_keep`` / ``plain_keep``: what a card is still worth to its holder in future tricks (including its own
    points when it wins later), by rank 9 J Q K T A.
    """

    trump_keep: tuple = (11.0, 12.0, 15.0, 16.0, 26.0, 32.0)
    plain_keep: tuple = (0.0, 2.0, 3.5, 4.5, 11.0, 13.0)
    plain_ten_under_ace: float = 7.0  # a ten whose ace is still out can be taken by it
    marriage_held: float = 0.6  # share of 20/40 a held, not yet announced pair is worth keeping intact (R11)
    marriage_drawable: float = 0.1  # ... when the partner is still out and cards are still drawn
    exchange_nine: float = 0.8  # share of the face-up trump card's worth a nine that may still exchange has (R9)
    lead_bonus: float = 0.0  # winning a phase-1 trick: the lead (marriages, exchange, closing) and the first draw
    first_trick_bonus: float = 0.0  # a first trick makes pending marriages count (R12), avoids losing 3 (R16)
    deny_first_trick: float = 0.0  # losing a trick to a trickless opponent: he escapes the 3-point loss (R16)
    pending_share: float = 0.0  # share of pending marriage points a first trick is credited with (R12)
    average_draw: float = 6.0  # worth of an unknown talon card, against which the known face-up card is weighed
    close_filter: float = 56.0  # points (counted + sure tricks + marriages) before closing is even considered


DEFAULT_WEIGHTS = Weights()


class CardContext:
    """What valuing one holder's cards needs: trump suit, the cards still out from the holder's view, whether
    cards are still drawn (marriages to complete, an exchange to make), and the weights."""

    __slots__ = ("trump_suit", "others", "talon_open", "marriages_later", "exchange_card", "exchange_value",
                 "weights")

    def __init__(self, trump_suit: int, others: int, talon_open: bool, marriages_later: bool,
                 exchange_card: int, bottom_card: int | None, exchange_open: bool, weights: Weights = DEFAULT_WEIGHTS):
        self.trump_suit = trump_suit
        self.others = others  # cards neither played nor in the holder's hand (opponent's hand or talon)
        self.talon_open = talon_open
        self.marriages_later = marriages_later
        self.exchange_card = exchange_card
        self.weights = weights
        self.exchange_value = 0.0
        if exchange_open and bottom_card is not None and bottom_card != exchange_card:
            self.exchange_value = weights.exchange_nine * weights.trump_keep[bottom_card % 6]


def card_keep_value(card: int, hand: int, context: CardContext) -> float:
    """The future worth of ``card`` to the player holding ``hand`` (see :class:`Weights`)."""
    weights = context.weights
    suit, rank = divmod(card, 6)
    if suit == context.trump_suit:
        value = weights.trump_keep[rank]
        if card == context.exchange_card and context.exchange_value > value:
            value = context.exchange_value  # R9: the trump nine may still be swapped for the face-up card
    elif rank == TEN and context.others >> (suit * 6 + ACE) & 1:
        value = weights.plain_ten_under_ace
    else:
        value = weights.plain_keep[rank]
    if rank == QUEEN or rank == KING:
        partner = card ^ 1  # Queen (rank 2) and King (rank 3) ids differ in the lowest bit
        pair_points = 40 if suit == context.trump_suit else 20
        if hand >> partner & 1:
            if context.marriages_later:
                value += weights.marriage_held * pair_points
        elif context.talon_open and context.others >> partner & 1:
            value += weights.marriage_drawable * pair_points
    return value


def follow_card_scores(hand_cards: list[int], hand: int, lead: int, context: CardContext, points: int,
                       pending: int, has_trick: bool, opponent_points: int, opponent_pending: int,
                       loser_bonus: float = 0.0, opponent_has_trick: bool = True) -> list[tuple[float, int]]:
    """Score each phase-1 reply to ``lead`` for its holder (higher is better): card points won or given away,
    minus the worth of the card spent, with the win of the deal (R13) dominating. ``loser_bonus`` is what losing
    the trick is worth besides (the talon's last trick: the loser takes the known face-up card, R7)."""
    weights = context.weights
    trump = context.trump_suit
    lead_points = CARD_POINTS[lead]
    scores = []
    for card in hand_cards:
        trick = lead_points + CARD_POINTS[card]
        keep = card_keep_value(card, hand, context)
        if beats(lead, card, trump):
            score = trick + weights.lead_bonus - keep
            if points + pending + trick >= GOAL:
                score += WIN_BONUS
            if not has_trick:
                score += weights.first_trick_bonus + weights.pending_share * pending
        else:
            score = loser_bonus - trick - weights.lead_bonus - keep
            if not opponent_has_trick:
                score -= weights.deny_first_trick
            if opponent_points + opponent_pending + trick >= GOAL:
                score -= WIN_BONUS
        scores.append((score, card))
    return scores


# ---------------------------------------------------------------------------------------------------- solver access
_solver_module = None


def load_solver():
    """The exact phase-2 solver (:mod:`agents.solver`), or ``None`` while it is not available."""
    global _solver_module
    if _solver_module is None:
        try:
            from . import solver as module
        except ModuleNotFoundError as error:
            if error.name != "agents.solver":
                raise
            return None
        _solver_module = module
    return _solver_module


def prepare_solver(rules: Rules) -> None:
    """Load the exact solver for ``rules`` now (:func:`agents.solver.prepare`), where it is available: agents call
    this in ``start_deal``, so the loading is not timed inside their first decision."""
    solver = load_solver()
    if solver is not None:
        solver.prepare(rules)


def forced_action(infoset: InformationSet) -> int | None:
    """The decision both rule players take without thinking: the only legal action, or declaring once the player
    has 66 (R13: declaring is never worse than playing on); ``None`` otherwise."""
    legal = legal_actions_to_choose(infoset)
    if len(legal) == 1:
        return legal[0]
    if DECLARE in legal and infoset.points[infoset.player] >= GOAL:
        return DECLARE
    return None


# ---------------------------------------------------------------------------------------------------- greedy
class GreedyAgent(Agent):
    """A simple rule-based player: cheap trick-taking, high leads, marriages at once, never closes."""

    name = "greedy"

    def __init__(self, seed: int | None = None):
        super().__init__(seed)

    def act(self, infoset: InformationSet) -> int:
        if is_three_player(infoset):
            return greedy_action(infoset)  # R21 (agents/three_players.py)
        forced = forced_action(infoset)
        if forced is not None:
            return forced
        legal = infoset.legal_actions
        me = infoset.player
        stage = infoset.stage
        if stage == RESPOND_CLOSE:
            return EXCHANGE if EXCHANGE in legal else PASS
        if stage == PREDRAW:
            return DRAW  # never closes
        trump = infoset.trump_suit
        if stage == LEAD:
            if EXCHANGE in legal:
                return EXCHANGE  # R9
            marriages = marriage_actions(legal)
            if marriages:
                # R11 at once: the 40 first; lead the Queen (fewer points at risk), keep the King.
                return min(marriages, key=lambda a: (marry_card(a) // 6 != trump, a % 2, a))
            cards = plain_cards(legal)
            return max(cards, key=lambda c: (CARD_POINTS[c], c // 6 != trump, c % 6, -c))
        # FOLLOW: the cheapest winning card when the trick is worth it, else the cheapest card.
        lead = infoset.lead_card
        cards = plain_cards(legal)
        winners = [c for c in cards if beats(lead, c, trump)]
        if winners:
            cheapest_winner = min(winners, key=lambda c: cheapness(c, trump))
            reaches_goal = infoset.points[me] + pending_marriage_points(infoset, me) \
                + CARD_POINTS[lead] + CARD_POINTS[cheapest_winner] >= GOAL
            worth_it = CARD_POINTS[lead] >= TEN_POINTS or cheapest_winner // 6 != trump or reaches_goal
            if worth_it or len(winners) == len(cards):
                return cheapest_winner
        return min(cards, key=lambda c: cheapness(c, trump))


# ---------------------------------------------------------------------------------------------------- heuristic
HEURISTIC_PARAMETERS = ("lead_samples", "close_samples", "close_min_value", "close_min_win", "phase2_samples",
                        "use_solver", "endgame_lookahead", "endgame_worlds", "weights")


class HeuristicAgent(Agent):
    """Card counting, careful phase-1 play, solver-checked closing and exactly solved phase 2 (see module doc).

    Parameters (all optional, also settable from a spec such as ``heuristic:close_samples=20``):
    ``lead_samples`` opponent hands sampled to model his reply to a phase-1 lead; ``close_samples`` worlds solved
    to decide a closing; ``close_min_value`` / ``close_min_win`` the mean game points and the share of won worlds a
    closing needs; ``phase2_samples`` worlds averaged after a closing; ``use_solver`` false plays phase 2 by rules
    and never closes (for ablation); ``endgame_lookahead`` searches the talon's last trick into phase 2, over at
    most ``endgame_worlds`` layouts of the hidden cards; ``weights`` (a :class:`Weights`, Python only) the
    card values.
    """

    name = "heuristic"

    def __init__(self, seed: int | None = None, lead_samples: int = 12, close_samples: int = 12,
                 close_min_value: float = 1.0, close_min_win: float = 0.8, phase2_samples: int = 8,
                 use_solver: bool = True, endgame_lookahead: bool = True, endgame_worlds: int = 4,
                 weights: Weights | None = None):
        super().__init__(seed)
        for label, value in (("lead_samples", lead_samples), ("close_samples", close_samples),
                             ("phase2_samples", phase2_samples), ("endgame_worlds", endgame_worlds)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SAMPLE_COUNT:
                raise ValueError(f"{label} must be an integer in 1..{MAX_SAMPLE_COUNT}, got {value!r}")
        if not finite_number(close_min_win) or not 0 <= close_min_win <= 1:  # finite_number refuses true/false
            raise ValueError(f"close_min_win must be a share between 0 and 1, got {close_min_win!r}")
        if not finite_number(close_min_value):
            raise ValueError(f"close_min_value must be a number of game points, got {close_min_value!r}")
        for label, flag in (("use_solver", use_solver), ("endgame_lookahead", endgame_lookahead)):
            if not isinstance(flag, bool):
                raise ValueError(f"{label} must be true or false, got {flag!r}")
        self.lead_samples = lead_samples
        self.close_samples = close_samples
        self.close_min_value = float(close_min_value)
        self.close_min_win = float(close_min_win)
        self.phase2_samples = phase2_samples
        self.use_solver = use_solver
        self.endgame_lookahead = endgame_lookahead
        self.endgame_worlds = endgame_worlds
        if weights is not None and not isinstance(weights, Weights):
            raise ValueError(f"weights must be a Weights object, given from Python (an agent spec cannot give one), "
                             f"got {type(weights).__name__}")
        self.weights = DEFAULT_WEIGHTS if weights is None else weights

    def inert_parameters(self) -> dict[str, str]:
        if not self.use_solver:  # no closing, phase 2 by rules, no search of the talon's last trick
            return {name: "it counts only with use_solver=true" for name in (
                "close_samples", "close_min_value", "close_min_win", "phase2_samples", "endgame_lookahead",
                "endgame_worlds")}
        if not self.endgame_lookahead:
            return {"endgame_worlds": "it counts only with endgame_lookahead=true"}
        return {}

    def start_deal(self, player: int, rules: Rules) -> None:
        if rules.players == 3:
            self._check_three_player_parameters()
        # The solver loads on first use; load it here, before the clock of the first decision starts.
        if self.use_solver:
            prepare_solver(rules)

    def _check_three_player_parameters(self) -> None:
        """With three players (R21) the heuristic plays by agents/three_players.py, which reads none of these
        parameters: one away from its default is refused by name rather than ignored (as pimc does)."""
        default = HeuristicAgent(seed=0)
        changed = [name for name in HEURISTIC_PARAMETERS if getattr(self, name) != getattr(default, name)]
        if changed:
            them = "it" if len(changed) == 1 else "them"
            raise ValueError(f"heuristic with three players (R21) plays by agents/three_players.py and reads none of "
                             f"its parameters; {', '.join(changed)} would be ignored: leave {them} out")

    def core_params(self):
        """This agent's numbers as the parameter array of its compiled twin (``sixtysix_env.core.heuristic``)."""
        from sixtysix_env.core.heuristic import pack_params

        weights = self.weights
        return pack_params(
            weights.trump_keep, weights.plain_keep, weights.plain_ten_under_ace, weights.marriage_held,
            weights.marriage_drawable, weights.exchange_nine, weights.lead_bonus, weights.first_trick_bonus,
            weights.deny_first_trick, weights.pending_share, weights.average_draw, weights.close_filter,
            self.lead_samples, self.close_samples, self.close_min_value, self.close_min_win, self.phase2_samples,
            self.endgame_worlds, self.endgame_lookahead)

    # ------------------------------------------------------------------ entry point
    def act(self, infoset: InformationSet) -> int:
        if is_three_player(infoset):
            return heuristic_action(infoset, self.rng)  # R21 (agents/three_players.py)
        forced = forced_action(infoset)
        if forced is not None:
            return forced
        legal = infoset.legal_actions
        stage = infoset.stage
        if stage == RESPOND_CLOSE:
            # R9 paderborn: the face-up trump beats the nine and the talon is dead, so always exchange.
            return EXCHANGE if EXCHANGE in legal else PASS
        if stage == PREDRAW:
            if EXCHANGE in legal:
                return EXCHANGE  # R9 first, as at a lead: the face-up trump beats the nine
            # R10 paderborn: close before drawing (both keep five cards) only when the solved worlds say so.
            return CLOSE if self._should_close(infoset) else DRAW
        solver = load_solver() if self.use_solver else None
        if is_phase2(infoset):
            if solver is not None:
                return self._solved_phase2(infoset, solver)
            return self._rule_phase2(infoset)
        if stage == LEAD:
            return self._phase1_lead(infoset, solver)
        if solver is not None and self._last_talon_trick(infoset):
            return self._solved_last_talon_trick(infoset, solver)
        return self._phase1_follow(infoset)

    # ------------------------------------------------------------------ context
    def _context(self, infoset: InformationSet, hand: int, others: int) -> CardContext:
        rules: Rules = infoset.rules
        talon_open = infoset.closed_by is None and infoset.talon_size > 0
        return CardContext(
            trump_suit=infoset.trump_suit,
            others=others,
            talon_open=talon_open,
            marriages_later=talon_open or rules.marriage_in_phase2,
            exchange_card=infoset.trump_suit * 6 + rules.exchange_rank,
            bottom_card=infoset.bottom_card,
            exchange_open=talon_open and infoset.face_down_count >= 1,
            weights=self.weights,
        )

    @staticmethod
    def _my_others(infoset: InformationSet) -> int:
        """Cards out from my view: the opponent's hand, the talon and the face-up card."""
        return mask_of(deck_cards(infoset.rules.deck)) & ~(infoset.hand | infoset.played)

    def _sample_opponent_hand(self, infoset: InformationSet) -> int:
        """An opponent hand consistent with what I know (uniform, like ``determinize``; an information set that
        samples its worlds otherwise, :class:`agents.inference.InferredWorlds`, is asked for one instead)."""
        sample = getattr(infoset, "sample_opponent_hand", None)
        if sample is not None:
            return sample(self.rng)
        needed = infoset.opponent_hand_size - infoset.opponent_known.bit_count()
        if needed <= 0:
            return infoset.opponent_known
        pool = cards_of(infoset.unseen & ~infoset.opponent_void)
        return infoset.opponent_known | mask_of(self.rng.sample(pool, needed))

    def _bottom_bonus(self, infoset: InformationSet, hand: int, context: CardContext) -> float:
        """On the talon's last trick (R7) the loser takes the known face-up card and the winner an unknown one:
        what losing is worth to the holder of ``hand`` for that reason."""
        bottom = infoset.bottom_card
        if infoset.face_down_count != 1 or bottom is None:
            return 0.0
        return card_keep_value(bottom, hand | (1 << bottom), context) - self.weights.average_draw

    # ------------------------------------------------------------------ phase 1
    def _phase1_follow(self, infoset: InformationSet) -> int:
        me, opponent = infoset.player, infoset.opponent
        hand = infoset.hand
        context = self._context(infoset, hand, self._my_others(infoset))
        scores = follow_card_scores(
            plain_cards(infoset.legal_actions), hand, infoset.lead_card, context,
            infoset.points[me], pending_marriage_points(infoset, me), bool(infoset.tricks_won[me]),
            infoset.points[opponent], pending_marriage_points(infoset, opponent),
            self._bottom_bonus(infoset, hand, context), bool(infoset.tricks_won[opponent]),
        )
        return max(scores)[1]

    def _phase1_lead(self, infoset: InformationSet, solver) -> int:
        legal = infoset.legal_actions
        me = infoset.player
        if EXCHANGE in legal:
            return EXCHANGE  # R9: the face-up trump is worth more than the nine, and a pair may complete
        marriages = marriage_actions(legal)
        for action in marriages:
            pair_points = 40 if marry_card(action) // 6 == infoset.trump_suit else 20
            if infoset.tricks_won[me] and infoset.points[me] + pair_points >= GOAL:
                return action  # R11: the announcement itself reaches 66 and ends the deal
        if CLOSE in legal and solver is not None and self._should_close(infoset):
            return CLOSE
        if solver is not None and self._last_talon_trick(infoset):
            return self._solved_last_talon_trick(infoset, solver)
        return self._phase1_lead_by_rules(infoset)

    def _phase1_lead_by_rules(self, infoset: InformationSet) -> int:
        marriages = marriage_actions(infoset.legal_actions)
        if marriages:
            # R11 as early as possible (cards may run out), the 40 first; lead the Queen, keep the King.
            trump = infoset.trump_suit
            return min(marriages, key=lambda a: (marry_card(a) // 6 != trump, a % 2, a))
        return self._best_lead(infoset)

    def _best_lead(self, infoset: InformationSet) -> int:
        """The phase-1 lead whose trick, against the opponent's modelled reply over sampled hands, pays best."""
        weights = self.weights
        me, opponent = infoset.player, infoset.opponent
        trump = infoset.trump_suit
        hand = infoset.hand
        leads = plain_cards(infoset.legal_actions)
        my_context = self._context(infoset, hand, self._my_others(infoset))
        my_keep = {card: card_keep_value(card, hand, my_context) for card in leads}
        my_bottom = self._bottom_bonus(infoset, hand, my_context)
        my_points = infoset.points[me]
        my_pending = pending_marriage_points(infoset, me)
        my_trick = bool(infoset.tricks_won[me])
        opp_points = infoset.points[opponent]
        opp_pending = pending_marriage_points(infoset, opponent)
        opp_trick = bool(infoset.tricks_won[opponent])
        everything = mask_of(deck_cards(infoset.rules.deck))
        totals = dict.fromkeys(leads, 0.0)
        for _ in range(self.lead_samples):
            opp_hand = self._sample_opponent_hand(infoset)
            opp_cards = cards_of(opp_hand)
            opp_context = self._context(infoset, opp_hand, everything & ~(opp_hand | infoset.played))
            opp_keep = {card: card_keep_value(card, opp_hand, opp_context) for card in opp_cards}
            opp_bottom = self._bottom_bonus(infoset, opp_hand, opp_context)
            for lead in leads:
                replies = follow_card_scores(opp_cards, opp_hand, lead, opp_context, opp_points, opp_pending,
                                             opp_trick, my_points, my_pending, opp_bottom, my_trick)
                reply = max(replies)[1]
                trick = CARD_POINTS[lead] + CARD_POINTS[reply]
                value = opp_keep[reply] - my_keep[lead]
                if beats(lead, reply, trump):
                    value += my_bottom - trick - weights.lead_bonus
                    if not opp_trick:
                        value -= weights.deny_first_trick
                    if opp_points + opp_pending + trick >= GOAL:
                        value -= WIN_BONUS
                else:
                    value += trick + weights.lead_bonus - opp_bottom
                    if my_points + my_pending + trick >= GOAL:
                        value += WIN_BONUS
                    if not my_trick:
                        value += weights.first_trick_bonus + weights.pending_share * my_pending
                totals[lead] += value
        return max(leads, key=lambda card: (totals[card], -card))

    # ------------------------------------------------------------------ the talon's last trick (R7)
    def _last_talon_trick(self, infoset: InformationSet) -> bool:
        """One face-down card is left: after this trick the talon is exhausted and phase 2 (R8) begins."""
        return self.endgame_lookahead and on_last_talon_trick(infoset)

    def _last_trick_worlds(self, infoset: InformationSet) -> list:
        """Layouts of the hidden cards, one per card that may lie in the talon (the opponent holding the others):
        every one, or ``endgame_worlds`` of them drawn at random when there are more."""
        opponent = infoset.opponent
        pool = infoset.unseen & ~infoset.opponent_void
        needed = infoset.opponent_hand_size - infoset.opponent_known.bit_count()
        base = infoset.determinize(self.rng)
        if pool.bit_count() != needed + 1 or base.face_down_count != 1:
            return [base]  # not the expected layout count: fall back to the sampled world
        talon_cards = cards_of(pool)
        if len(talon_cards) > self.endgame_worlds:
            talon_cards = self.rng.sample(talon_cards, self.endgame_worlds)
        worlds = []
        for talon_card in talon_cards:
            world = base.clone()
            world.hands[opponent] = infoset.opponent_known | (pool & ~(1 << talon_card))
            world.stock = world.stock[:world.stock_pos] + [talon_card]
            worlds.append(world)
        return worlds

    def _solved_last_talon_trick(self, infoset: InformationSet, solver) -> int:
        """Look through the talon's last trick into phase 2: for each layout of the hidden cards, play each of my
        actions and (when leading) each reply of the opponent, then solve the phase-2 position exactly. The
        opponent is assumed to find his best reply; ties go to the phase-1 heuristic's choice.

        Candidates are searched best-first with a bound: game points lie in -3..3, so a candidate whose total
        cannot beat the best one so far even with +3 in every remaining world is abandoned."""
        me = infoset.player
        worlds = self._last_trick_worlds(infoset)
        if infoset.stage == FOLLOW:
            preferred = self._phase1_follow(infoset)
        else:
            preferred = self._phase1_lead_by_rules(infoset)
        candidates = [preferred] + [a for a in infoset.legal_actions if a < EXCHANGE and a != preferred]
        best_action, best_total = preferred, -float("inf")
        for action in candidates:
            total = 0.0
            for index, world in enumerate(worlds):
                after = world.clone()
                after.apply(action)
                # The world's value must exceed ``needed`` for this action to still beat the best one.
                needed = best_total - total - MAX_GAME_POINTS * (len(worlds) - index - 1)
                if after.stage == FOLLOW and after.current_player != me:
                    value = float(MAX_GAME_POINTS)
                    for reply in after.legal_actions():
                        value = min(value, self._phase2_value(self._after(after, reply), me, solver))
                        if value <= needed or value <= -MAX_GAME_POINTS:
                            break
                else:
                    value = self._phase2_value(after, me, solver)
                total += value
                if value <= needed:
                    break
            else:
                if total > best_total:
                    best_action, best_total = action, total
        return best_action

    @staticmethod
    def _after(game, action: int):
        game = game.clone()
        game.apply(action)
        return game

    @staticmethod
    def _phase2_value(game, me: int, solver) -> float:
        """Game points for ``me`` of a finished deal or a phase-2 lead/follow position under exact play."""
        if game.is_over:
            return game.returns()[me]
        value = solver.solve(game).value
        return value if game.current_player == me else -value

    # ------------------------------------------------------------------ closing (R10)
    def _should_close(self, infoset: InformationSet) -> bool:
        """Close when worlds sampled from my information, solved exactly after the closing, win with a margin."""
        solver = load_solver() if self.use_solver else None
        if solver is None or not self._close_plausible(infoset):
            return False
        total = 0.0
        wins = 0
        for _ in range(self.close_samples):
            value = solver.closing_value(infoset.determinize(self.rng))
            total += value
            wins += value > 0
        return total / self.close_samples >= self.close_min_value and wins >= self.close_min_win * self.close_samples

    def _close_plausible(self, infoset: InformationSet) -> bool:
        """A cheap filter before solving worlds: my points, marriages I can show, and my strong cards."""
        me = infoset.player
        trump = infoset.trump_suit
        hand = infoset.hand
        others = self._my_others(infoset)
        potential = infoset.points[me] + pending_marriage_points(infoset, me)
        for card in cards_of(hand):
            suit, rank = divmod(card, 6)
            higher_out = others & SUIT_MASKS[suit] & ~((2 << card) - 1)
            if not higher_out and (suit == trump or rank >= TEN):
                potential += CARD_POINTS[card] + 4  # a top card wins its trick and usually some points
            if rank == QUEEN and hand >> (card + 1) & 1:
                potential += 40 if suit == trump else 20
        return potential >= self.weights.close_filter

    # ------------------------------------------------------------------ phase 2 (R8)
    def _solved_phase2(self, infoset: InformationSet, solver) -> int:
        if infoset.face_down_count == 0 and infoset.bottom_card is None:
            # Talon exhausted: the unseen cards are exactly the opponent's, so this is the true position.
            world = infoset.determinize(self.rng)
            return solver.solve(world).best_action
        totals: dict[int, float] = {}
        for _ in range(self.phase2_samples):
            world = infoset.determinize(self.rng)
            for action, value in solver.solve_all_actions(world).items():
                totals[action] = totals.get(action, 0.0) + value
        return max(sorted(totals), key=lambda action: totals[action])

    def _rule_phase2(self, infoset: InformationSet) -> int:
        """Phase 2 without the solver: take tricks cheaply, lead top cards, else the cheapest card."""
        trump = infoset.trump_suit
        legal = infoset.legal_actions
        marriages = marriage_actions(legal)
        if infoset.stage == LEAD and marriages:
            return min(marriages, key=lambda a: (marry_card(a) // 6 != trump, a % 2, a))
        cards = plain_cards(legal)
        if infoset.stage == FOLLOW:
            winners = [c for c in cards if beats(infoset.lead_card, c, trump)]
            if winners:
                return min(winners, key=lambda c: cheapness(c, trump))
            return min(cards, key=lambda c: cheapness(c, trump))
        others = self._my_others(infoset)
        tops = [c for c in cards if not others & SUIT_MASKS[c // 6] & ~((2 << c) - 1)]
        if tops:
            return max(tops, key=lambda c: (c // 6 != trump, CARD_POINTS[c], c))
        return min(cards, key=lambda c: cheapness(c, trump))




__all__ = ["GreedyAgent", "HeuristicAgent", "beats", "card_keep_value", "follow_card_scores"]
