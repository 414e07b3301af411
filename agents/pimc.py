"""Perfect-information Monte Carlo (PIMC): sample hidden layouts, evaluate every legal action in each, average.

Each sampled world (``infoset.determinize``) is a full deal whose hidden cards and talon order are fixed, so it can
be searched as a game of perfect information:

* phase 2 (talon exhausted or closed, R8) is solved exactly by :mod:`agents.solver`;
* phase 1 (talon open, R7) is evaluated by playing the world on with a fast deterministic policy
  (:func:`policy_action`: cheap leads, grabbing tens and aces, marriages and exchanges at once, R9/R11) until the
  talon is exhausted or closed, then solving phase 2 exactly (:func:`playout_value`). In the playout a player
  about to lead closes (R10) when a cheap estimate says it may pay and the solver confirms it wins, so closings
  by either side are part of the model;
* ``close`` is therefore always valued exactly; a decision that leaves the same player to move (an exchange, R9;
  drawing in the paderborn ``PREDRAW`` stage, R10) is valued by his best follow-up; the trick that exhausts the
  talon is searched by minimax (both players' choices, then the solver), because it fixes how phase 2 starts;
  with ``depth`` > 0 the next ``depth`` phase-1 decisions are searched by minimax too (alpha-beta over the
  world, the solver's windowed search at the leaves).

Actions are compared on the same worlds (common random numbers); a world sampled again is not evaluated again.
Actions significantly worse than the leading one (a paired test over the worlds so far) are dropped, so the
budget goes to the close contenders, and sampling ends when one is left. Sampling also stops after ``samples``
worlds or when the next world would overrun ``seconds`` (``None``: no time limit, then choices depend only on the
seed). A closing that wins in nearly all worlds is taken even when playing on looks slightly better on average
(the playouts are optimistic about playing on).

Heuristic prior (``prior=heuristic``, the default): in phase 1 (talon open, R7), outside the talon's last trick, the
agent also asks its own :class:`~agents.rule_based.HeuristicAgent` (seeded from PIMC's seed) and keeps that choice
``h`` unless the worlds show another action ``b`` clearly better: ``h`` was dropped as significantly worse, or ``b``
beats ``h`` by more than ``override_margin`` game points on average over the same worlds, or ``b`` is a closing
(R10) that wins in nearly every solved world. The heuristic's time counts inside ``seconds``. In phase 2 (R8) and
on the last talon trick PIMC's worlds are solved exactly, so the prior is not asked there.

Measured (docs/strength.md, section ``pimc``): ``sixtysix match pimc heuristic --deals 1000 --workers 1 --seed 9001``
gives pimc +0.118 game points per deal, 95% CI [+0.053, +0.183] (1000 duplicate deal pairs), at a median 27 ms and
a p95 of 99.5 ms per decision; plain PIMC (``prior=none``) on the same deals +0.050 [-0.014, +0.114], so the prior
adds +0.068 [+0.006, +0.130] (paired by deal).
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

from sixtysix_env import InformationSet
from sixtysix_env.actions import CLOSE, DECLARE, DRAW, EXCHANGE, MARRY_BASE, PASS
from sixtysix_env.cards import CARD_POINTS, HIGHER_IN_SUIT, QUEENS_MASK
from sixtysix_env.game import FOLLOW, GOAL, LEAD, OVER, PREDRAW, RESPOND_CLOSE, Game
from sixtysix_env.schema import finite_number

from .base import Agent, legal_actions_to_choose
from .inference import INFERENCE_KINDS, InferredWorlds, ReplayedWorlds, inferred
from .rule_based import HeuristicAgent, is_phase2, on_last_talon_trick
from .three_players import is_three_player, pimc_action
from .solver import _cards, core_table, solve_all_actions, solve_value, solve_value_within

# Playout policy weights, in card points: what a card is still worth to its holder in later tricks, by rank
# 9 J Q K T A (the seed 003 advice: save trumps and tens, keep marriage pairs together). Measured: following by
# "points won or given minus the worth of the card spent" beats the plain points rule by +0.17 game points per
# deal in policy-vs-policy play (2000 deal pairs, phase 2 solved).
TRUMP_KEEP = (11, 12, 15, 16, 26, 32)
PLAIN_KEEP = (0, 2, 3.5, 4.5, 11, 13)
TEN_UNDER_ACE = 7  # a plain ten whose ace is still out can be taken by it
PAIR_SHARE = 0.6  # share of the 20/40 of a marriage (R11) that each held partner is worth
WIN_BONUS = 100  # a trick that reaches 66 (R13) outweighs any card-point consideration


def keep_value(card: int, hand: int, game: Game) -> float:
    """What ``card`` is still worth to the player holding ``hand`` (see the weights above)."""
    suit, rank = divmod(card, 6)
    if suit == game.trump_suit:
        value = TRUMP_KEEP[rank]
    elif rank == 4 and not (hand | game.won_cards[0] | game.won_cards[1]) >> (card + 1) & 1:
        value = TEN_UNDER_ACE
    else:
        value = PLAIN_KEEP[rank]
    if (rank == 2 or rank == 3) and hand >> (card ^ 1) & 1:  # Queen and King ids differ in the lowest bit
        value += PAIR_SHARE * (40 if suit == game.trump_suit else 20)
    return value


def policy_action(game: Game) -> int:
    """A fast deterministic default policy for playouts (any stage).

    Following: the card maximising the card points won (or minus those given away) minus the worth of the card
    spent (:func:`keep_value`), reaching or conceding 66 dominating. Leading: declare at 66 (R13), exchange (R9),
    announce a marriage (R11, the 40 first, leading the Queen), else the card worth least to keep. In phase 1 it
    looks only at the mover's own hand and the table; leading in phase 2 it leads a card the opponent cannot beat
    if there is one (his hand is known to a card counter once the talon is exhausted; playouts that stop at
    phase 2 never get there)."""
    stage = game.stage
    player = game.to_move
    if stage == RESPOND_CLOSE:
        return EXCHANGE if EXCHANGE in game.legal_actions() else PASS
    if stage == PREDRAW:
        legal = game.legal_actions()
        return DECLARE if DECLARE in legal and game.points(player) >= GOAL else DRAW
    hand = game.hands[player]
    trump_mask = game.trump_mask
    points = CARD_POINTS
    if stage == FOLLOW:
        lead = game.lead_card
        allowed = game._follow_mask(hand) if game.phase2 else hand
        beaters = HIGHER_IN_SUIT[lead] | (0 if trump_mask >> lead & 1 else trump_mask)
        opponent = 1 - player
        mine = game.trick_points[player] + game.marriage_points[player]
        theirs = game.trick_points[opponent] + game.marriage_points[opponent]
        best_score = None
        best_card = -1
        for card in _cards(allowed):
            trick = points[lead] + points[card]
            score = -keep_value(card, hand, game)
            if beaters >> card & 1:
                score += trick
                if mine + trick >= GOAL:
                    score += WIN_BONUS
            else:
                score -= trick
                if theirs + trick >= GOAL:
                    score -= WIN_BONUS
            if best_score is None or score > best_score:
                best_score = score
                best_card = card
        return best_card
    # LEAD
    legal = game.legal_actions()
    if DECLARE in legal and game.points(player) >= GOAL:
        return DECLARE
    if EXCHANGE in legal:
        return EXCHANGE
    marriages = [a for a in legal if MARRY_BASE <= a < EXCHANGE]
    if marriages:
        trump_base = MARRY_BASE + 2 * game.trump_suit
        return trump_base if trump_base in marriages else marriages[0]  # lead the Queen
    if game.phase2:
        other = game.hands[1 - player]
        for card in sorted(_cards(hand), key=lambda c: -points[c]):
            if not other & (HIGHER_IN_SUIT[card] | (0 if trump_mask >> card & 1 else trump_mask)):
                return card
    return min(_cards(hand), key=lambda c: (keep_value(c, hand, game) + 0.5 * points[c], c))


def _phase2_decision(game: Game) -> bool:
    return game.phase2 and (game.stage == LEAD or game.stage == FOLLOW)


def close_potential(game: Game) -> int:
    """A cheap upper-end estimate of what the player to lead could collect after closing (R10): his counted points,
    marriages he holds (R11), and each top card (no higher card of its suit out) that is a trump, ten or ace,
    with a few points for the card it wins. Uses only the mover's own view (hand and played cards)."""
    player = game.to_move
    hand = game.hands[player]
    played = game.won_cards[0] | game.won_cards[1]
    potential = game.points(player)
    pairs = hand & (hand >> 1) & QUEENS_MASK
    if pairs:
        for queen in _cards(pairs):
            potential += 40 if queen // 6 == game.trump_suit else 20
    trump_mask = game.trump_mask
    for card in _cards(hand):
        out = HIGHER_IN_SUIT[card] & ~hand & ~played
        if not out and (trump_mask >> card & 1 or card % 6 >= 4):
            potential += CARD_POINTS[card] + 4
    return potential


CLOSE_POTENTIAL = 46  # close_potential needed before a playout checks a closing with the solver (46 measured
# a little better than 56 or 66 against the heuristic)


def playout_value(game: Game, player: int, weights=None) -> int:
    """Game points for ``player``: play ``game`` (modified in place) on with :func:`policy_action` until phase 2,
    then solve exactly. A player about to lead closes (R10) when :func:`close_potential` says it may pay and the
    world's exact value of the closed position is a win for him, so playouts model closings on both sides.

    Runs on the compiled core (``sixtysix_env.core.policy.playout_value``, the same policy and weights, checked
    action for action by tests/test_core_agents.py) where the rules allow; ``game`` is then left unchanged.
    ``weights``: another weighting of the policy for the core (:func:`load_playout_weights`), else this module's."""
    if core_solvable(game):
        return core_playouts()(game, player, weights)
    return python_playout_value(game, player)


def python_playout_value(game: Game, player: int) -> int:
    """:func:`playout_value` in pure Python (any rules; the reference for the core's playouts)."""
    while game.stage != OVER:
        if _phase2_decision(game):
            value = solve_value(game)
            return value if game.to_move == player else -value
        stage = game.stage
        if (stage == LEAD or stage == PREDRAW) and game.closed_by is None and game.face_down_count >= 2:
            if close_potential(game) >= CLOSE_POTENTIAL and CLOSE in game.legal_actions():
                closer = game.to_move
                closed = game.clone()
                closed.apply(CLOSE)
                while closed.stage == RESPOND_CLOSE:
                    closed.apply(policy_action(closed))
                if closed.is_over:
                    value = closed.result.returns()[closer]
                else:
                    value = solve_value(closed)
                    if closed.to_move != closer:
                        value = -value
                if value > 0:
                    return value if closer == player else -value
        game.apply(policy_action(game))
    return game.result.returns()[player]


_CORE_PLAYOUTS = None


def core_solvable(game: Game) -> bool:
    """The compiled core implements this game's rules (:func:`sixtysix_env.core.core_implements`)."""
    from sixtysix_env.core import core_implements

    return core_implements(game.rules)


def full_deal_action_values(world: Game) -> dict[int, int]:
    """Exact value of every legal action in a determinized world, the rest of the deal solved by minimax with the
    talon order known (the core's whole-deal solver): clairvoyant about the remaining draws, so only used late in
    phase 1 (``full_solve_talon``)."""
    from sixtysix_env.core import state_from_game
    from sixtysix_env.core.solver import solve_actions

    table = core_table()
    table.new_world()
    return solve_actions(state_from_game(world), table)


def policy_weights():
    """This module's policy weights as the array the core's policy kernels read."""
    from sixtysix_env.core.policy import pack_weights

    return pack_weights(TRUMP_KEEP, PLAIN_KEEP, TEN_UNDER_ACE, PAIR_SHARE, WIN_BONUS, CLOSE_POTENTIAL)


def load_playout_weights(path: str):
    """The policy weights of a tuning run (train/tune_playout_policy.py writes them) as the core's array; a file
    that is not such a run is refused by name."""
    import numpy as np

    from sixtysix_env.core.policy import WEIGHT_COUNT, WEIGHT_NAMES
    from sixtysix_env.schema import loads_json

    try:
        with open(path, encoding="utf-8") as handle:
            document = loads_json(handle.read(), "playout weights")
        weights = document.get("weights") if isinstance(document, dict) else None
        if not isinstance(weights, dict):
            raise ValueError("it has no 'weights' mapping of names to numbers")
        missing = [name for name in WEIGHT_NAMES if name not in weights]
        if missing:  # named, where a KeyError said only the first key
            raise ValueError(f"its weights lack {', '.join(missing)}")
        values = np.array([float(weights[name]) for name in WEIGHT_NAMES], dtype=np.float64)
    except (OSError, ValueError, TypeError) as error:
        raise ValueError(f"playout weights file {path!r} is not a tuning result: {error}") from None
    if values.shape != (WEIGHT_COUNT,) or not np.isfinite(values).all():
        raise ValueError(f"playout weights file {path!r}: expected {WEIGHT_COUNT} finite weights")
    return values


def core_playouts():
    """``(game, player, weights=None) -> value``: :func:`playout_value` on the compiled core (made once per process)."""
    global _CORE_PLAYOUTS
    if _CORE_PLAYOUTS is None:
        from sixtysix_env.core import state_from_game
        from sixtysix_env.core.policy import playout_value as core_playout_value

        default_weights = policy_weights()
        table = core_table()

        def run(game: Game, player: int, weights=None) -> int:
            weights = default_weights if weights is None else weights
            return int(core_playout_value(state_from_game(game), player, weights, table.entries, table.nodes))

        _CORE_PLAYOUTS = run
    return _CORE_PLAYOUTS


def action_value(game: Game, action: int, player: int, depth: int, alpha: int = -4, beta: int = 4,
                 weights=None) -> int:
    """Value for ``player`` of ``action`` in the perfect-information world ``game`` (left unchanged); see
    :func:`position_value` for ``depth``, the window and ``weights``."""
    child = game.clone()
    child.apply(action)
    return position_value(child, player, depth, alpha, beta, weights)


def position_value(game: Game, player: int, depth: int, alpha: int = -4, beta: int = 4, weights=None) -> int:
    """Value for ``player`` of the world ``game`` (may be modified), fail-soft within (alpha, beta).

    Exact in phase 2 (the solver). In phase 1 a minimax over the next ``depth`` decisions, over any further
    decisions of the same mover (after an exchange, R9, or a paderborn draw, R10) and through the trick that
    exhausts the talon (R7), then :func:`playout_value`."""
    if game.is_over:
        return game.result.returns()[player]
    mover = game.to_move
    if _phase2_decision(game):
        if mover == player:
            return solve_value_within(game, alpha, beta)
        return -solve_value_within(game, -beta, -alpha)
    if depth <= 0 and not on_last_talon_trick(game) and not (game.history and _same_mover_continues(game)):
        return playout_value(game, player, weights)
    next_depth = depth - 1 if depth > 0 else 0
    if mover == player:
        best = -4
        for action in game.legal_actions():
            value = action_value(game, action, player, next_depth, alpha if alpha > best else best, beta, weights)
            if value > best:
                best = value
                if best >= beta:
                    break
        return best
    best = 4
    for action in game.legal_actions():
        value = action_value(game, action, player, next_depth, alpha, beta if beta < best else best, weights)
        if value < best:
            best = value
            if best <= alpha:
                break
    return best


def _same_mover_continues(game: Game) -> bool:
    """After an exchange (R9) or a paderborn draw choice (R10) the same player decides again: value him by his
    best follow-up rather than by the policy's."""
    last = game.history[-1]
    return last in (EXCHANGE, DRAW) and game.stage == LEAD


PRUNE_AFTER = 8  # worlds before PIMC starts dropping significantly worse actions
PRIORS = ("heuristic", "network", "none")


def _surviving_actions(active: list[int], scores, z: float, prior: dict[int, float] | None = None,
                       prior_weight: float = 0.0) -> list[int]:
    """Drop the actions whose values, paired world by world with the leading action's, are worse by more than
    ``z`` standard errors (a paired test on common random worlds). ``scores[action]``: the action's value in each
    world so far, in world order (a list, or a column of an array). With a ``prior`` (action -> value, in the
    scores' unit) counted as ``prior_weight`` worlds, the test is asked of the shrunk values (``n`` worlds:
    ``(n * mean + prior_weight * prior) / (n + prior_weight)``), whose paired difference has the standard error of
    ``n + prior_weight`` worlds: the leader and the drops are then those of the values the choice uses."""
    import numpy as np

    values = {action: np.asarray(scores[action], dtype=np.float64) for action in active}
    count = len(values[active[0]])
    weight = prior_weight if prior is not None else 0.0  # without a prior (or at weight 0): the rollouts' test
    leader = max(active, key=lambda action: values[action].sum() + (weight * prior[action] if weight else 0.0))
    best = values[leader]
    survivors = []
    for action in active:
        if action != leader:
            diffs = best - values[action]
            mean = diffs.sum() / count
            variance = ((diffs - mean) ** 2).sum() / (count - 1)
            gap = (count * mean + weight * (prior[leader] - prior[action])) / (count + weight) if weight else mean
            if gap > 0 and gap * gap * (count + weight) > z * z * variance:
                continue  # significantly worse (or worse in every world)
        survivors.append(action)
    return survivors


def derived_seed(seed: int | None, helper: str) -> int | None:
    """The seed of one of an agent's helper players, derived from the agent's own and the helper's name (the
    agent's generator is left untouched, so its own draws are the same with or without the helper)."""
    return None if seed is None else random.Random(f"{helper}/{seed}").getrandbits(63)


def _prior_seed(seed: int | None) -> int | None:
    """The prior player's seed: PIMC's worlds are the same with or without a prior."""
    return derived_seed(seed, "pimc-prior")


def _none_from_spec(value):
    """Spec strings (``pimc:seconds=none``) pass text; ``none`` means no limit."""
    if isinstance(value, str) and value.strip().lower() == "none":
        return None
    return value


def time_budget(seconds):
    """A search agent's ``seconds`` parameter: a positive number, or ``None`` (``none`` in a spec) for no limit."""
    seconds = _none_from_spec(seconds)
    if seconds is not None and (not finite_number(seconds) or seconds <= 0):
        raise ValueError(f"seconds must be a positive number or None (none: no time limit), got {seconds!r}")
    return seconds


def prune_threshold(prune):
    """A search agent's ``prune`` parameter: a positive number of standard errors, or ``None`` (``none`` in a
    spec) for never pruning."""
    prune = _none_from_spec(prune)
    if prune is not None and (not finite_number(prune) or prune <= 0):
        raise ValueError(f"prune must be a positive number of standard errors or None, got {prune!r}")
    return prune


# The parameters only the two-player search reads (PimcAgent._check_three_player_parameters).
TWO_PLAYER_PARAMETERS = ("depth", "close_min_value", "close_min_win", "prune", "full_solve_talon", "playout_weights",
                         "inference", "inference_in_prior")
_DEFAULT_PARAMETERS: dict[str, Any] | None = None


MAX_DEPTH = 6  # PimcAgent's depth: the clock is read only between worlds


class PimcAgent(Agent):
    """Perfect-information Monte Carlo over ``infoset.determinize`` worlds (see the module docstring).

    ``samples``: at most this many worlds per decision; ``seconds``: time budget per decision (``None``: none, so
    choices depend only on the seed); ``depth``: extra phase-1 decisions searched by minimax in each world before
    the playout policy (``None`` means 0; measured weaker at equal time, see the report); ``prune``: after
    ``PRUNE_AFTER`` worlds, drop actions worse than the leading one by this many standard errors of the paired
    difference, and stop once one action is left (``None``: never); ``close_min_value`` / ``close_min_win``: close
    (R10) whenever the closing's mean is at least this many game points and it wins in at least this share of the
    worlds, even if playing on scores a little more on average (``close_min_value=None``: compare means only);
    ``prior``: ``heuristic`` (keep the heuristic's phase-1 choice unless clearly worse, see the module docstring),
    ``network`` (the same with the network of the model zip ``prior_model``, e.g. one distilled from this search,
    or the alias of a ``ppo`` model such as ``distilled``) or ``none`` (plain PIMC); ``override_margin``: game
    points (0..6) by which another action's paired mean must beat the prior's choice to replace it (with three
    players, R21: deal wins, 0..1, as the worlds are valued there);
    ``inference``: ``none`` (worlds as ``determinize`` draws them), ``rules`` or ``policy``: keep each world with
    the probability of the opponent's observed choices in it (:mod:`agents.inference`: marriages not announced, R11,
    and exchanges not made, R9; ``policy`` also his leads and follows); ``inference_in_prior``: the heuristic prior
    samples the worlds of its closing check (R10) and the hands it models his replies to a lead with that way too.
    """

    name = "pimc"

    def __init__(self, seed: int | None = None, samples: int = 200, seconds: float | None = 0.1,
                 depth: int | None = None, close_min_value: float | None = 1.0, close_min_win: float = 0.8,
                 prune: float | None = 2.5, prior: str | None = "heuristic", override_margin: float = 0.1,
                 full_solve_talon: int = 0, playout_weights: str | None = None, inference: str = "none",
                 inference_in_prior: bool = False, prior_model: str | None = None):
        super().__init__(seed)
        if not isinstance(inference, str) or inference.strip().lower() not in INFERENCE_KINDS:
            raise ValueError(f"inference must be one of {', '.join(INFERENCE_KINDS)}, got {inference!r}")
        self.inference = inference.strip().lower()
        if not isinstance(inference_in_prior, bool):
            raise ValueError(f"inference_in_prior must be true or false, got {inference_in_prior!r}")
        self.inference_in_prior = inference_in_prior
        seconds = time_budget(seconds)
        depth = _none_from_spec(depth)
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be a positive integer, got {samples!r}")
        # The clock is read between worlds, and one world's minimax costs about twice as much per level (half a
        # second at depth 6 on a first lead): a deeper search overran any budget, and a huge depth never ended.
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= MAX_DEPTH):
            raise ValueError(f"depth must be an integer in 0..{MAX_DEPTH} or None, got {depth!r}")
        self.samples = samples
        self.seconds = seconds
        self.depth = 0 if depth is None else depth
        close_min_value = _none_from_spec(close_min_value)
        if close_min_value is not None and not finite_number(close_min_value):
            raise ValueError(f"close_min_value must be a number of game points or None, got {close_min_value!r}")
        if isinstance(close_min_win, bool) or not isinstance(close_min_win, (int, float)) or not 0 <= close_min_win <= 1:
            raise ValueError(f"close_min_win must be a share between 0 and 1, got {close_min_win!r}")
        self.prune = prune_threshold(prune)
        prior = "none" if prior is None else prior
        if not isinstance(prior, str) or prior.strip().lower() not in PRIORS:
            raise ValueError(f"prior must be one of {', '.join(PRIORS)}, got {prior!r}")
        self.prior = prior.strip().lower()
        if (isinstance(override_margin, bool) or not isinstance(override_margin, (int, float))
                or not 0 <= override_margin <= 6):
            raise ValueError(f"override_margin must be a number of game points between 0 and 6, "
                             f"got {override_margin!r}")
        self.override_margin = float(override_margin)
        if (isinstance(full_solve_talon, bool) or not isinstance(full_solve_talon, int)
                or not 0 <= full_solve_talon <= 11):
            raise ValueError(f"full_solve_talon must be an integer in 0..11, got {full_solve_talon!r}")
        self.full_solve_talon = full_solve_talon
        # Another weighting of the playout policy (a tuning run's JSON file), used where the core plays out.
        if playout_weights is not None and not isinstance(playout_weights, str):  # open(0) would read stdin
            raise ValueError(f"playout_weights must be a file path, got {playout_weights!r}")
        self.playout_weights = playout_weights
        self._weights = None if playout_weights is None else load_playout_weights(playout_weights)
        # The prior player: its own generator, seeded from ours (so the pair is reproducible from one seed).
        if (self.prior == "network") != (prior_model is not None):
            raise ValueError("prior=network needs prior_model=PATH (a model zip), and prior_model needs prior=network")
        self.prior_model = prior_model
        self._prior_agent: Any = None
        if self.prior == "heuristic":
            self._prior_agent = HeuristicAgent(seed=_prior_seed(seed))
        elif self.prior == "network":
            # A trained network as the prior (expert iteration: the search improves on the network distilled from
            # it, train/distill.py); it plays the position itself, no endgame search of its own.
            from .ppo import PpoAgent, network_path_of_alias

            if not isinstance(prior_model, (str, os.PathLike)):
                raise ValueError(f"prior_model must be a model zip or the alias of one, got {prior_model!r}")
            # An alias of a model agent (distilled, ppo_ensemble) names its zip.
            self._prior_agent = PpoAgent(seed=_prior_seed(seed), path=network_path_of_alias(prior_model, ("ppo",)),
                                         phase2="policy")
        self.last_prior: int | None = None  # the prior's choice at the last decision (None: not asked)
        self.close_min_value = close_min_value
        self.close_min_win = float(close_min_win)
        self.last_worlds = 0  # worlds evaluated at the last decision (for measurements)
        self.last_rejected = 0  # worlds the opponent model rejected at the last decision
        self.last_win_share: dict[int, float] = {}
        self.last_active: list[int] = []

    def inert_parameters(self) -> dict[str, str]:
        inert = {}
        if self.prior == "none":
            for name in ("override_margin", "inference_in_prior"):
                inert[name] = "it counts only with a prior player (prior=heuristic or prior=network)"
        elif self.inference == "none":
            inert["inference_in_prior"] = "it counts only with inference (inference=rules, policy or heuristic)"
        if self.close_min_value is None:
            inert["close_min_win"] = "close_min_value=none turns off the closing rule it belongs to"
        return inert

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        if self._prior_agent is not None:
            self._prior_agent.seed(_prior_seed(seed))

    def start_deal(self, player: int, rules) -> None:
        if rules.players == 3:
            self._check_three_player_parameters()
        if self._prior_agent is not None:
            self._prior_agent.start_deal(player, rules)
        else:  # the worlds are solved (agents.solver): load it before the clock of the first decision starts
            from .rule_based import prepare_solver

            prepare_solver(rules)

    def _check_three_player_parameters(self) -> None:
        """The three-player search (R21: worlds played on by a fast policy) reads ``samples``, ``seconds``,
        ``override_margin`` and ``prior`` only: any other parameter away from its default is refused by name rather
        than ignored."""
        global _DEFAULT_PARAMETERS
        if _DEFAULT_PARAMETERS is None:
            default = PimcAgent(seed=0)
            _DEFAULT_PARAMETERS = {name: getattr(default, name) for name in TWO_PLAYER_PARAMETERS}
        changed = [name for name in TWO_PLAYER_PARAMETERS if getattr(self, name) != _DEFAULT_PARAMETERS[name]]
        if changed:
            them = "it" if len(changed) == 1 else "them"
            raise ValueError(f"pimc with three players (R21) reads samples, seconds, override_margin and prior only; "
                             f"{', '.join(changed)} would be ignored: leave {them} out")
        if self.prior == "network":
            raise ValueError("pimc with three players (R21) takes prior=heuristic or prior=none, not prior=network")
        if self.override_margin > 1:  # else accepted in game points and never reached: no override ever
            raise ValueError(f"override_margin with three players (R21) is a share of a deal won, 0..1 (a world is "
                             f"worth 1 for a win), got {self.override_margin:g}")

    def action_values(self, infoset: InformationSet, seconds: float | None = -1.0) -> dict[int, float]:
        """Mean game points of every legal action over the sampled worlds. With ``prune``, an action that is
        significantly worse than the leading one on the worlds seen so far is dropped from further worlds (its
        mean then covers fewer worlds); the survivors are in ``last_active``. ``seconds`` overrides the time
        budget (the default -1 means the agent's own ``seconds``); the per-world values are in ``last_scores``."""
        if seconds is not None and seconds < 0:
            seconds = self.seconds
        legal = list(legal_actions_to_choose(infoset))
        player = infoset.player
        active = list(legal)
        scores: dict[int, list[int]] = {action: [] for action in legal}  # per-world values, in world order
        start = time.perf_counter()
        worlds = 0
        evaluated: dict[tuple, dict[int, int]] = {}
        # With ``inference`` the worlds are kept with the likelihood of the opponent's play (agents/inference.py).
        sampler = infoset if isinstance(infoset, (InferredWorlds, ReplayedWorlds)) else inferred(infoset, self.inference)
        while worlds < self.samples:
            if seconds is not None and worlds:
                elapsed = time.perf_counter() - start
                if elapsed + 1.5 * elapsed / worlds > seconds:  # the next world (with margin) would overrun
                    break
            world = sampler.determinize(self.rng)
            # Late in a deal few layouts remain and samples repeat: evaluate each distinct world once (the talon
            # order matters only while cards are still drawn).
            key = (world.hands[1 - player], () if world.phase2 else tuple(world.stock[world.stock_pos:]))
            values = evaluated.get(key)
            if values is None or any(action not in values for action in active):
                if _phase2_decision(world):
                    values = solve_all_actions(world)
                elif world.face_down_count <= self.full_solve_talon and core_solvable(world):
                    values = full_deal_action_values(world)
                else:
                    values = {action: action_value(world, action, player, self.depth, weights=self._weights)
                              for action in active}
                evaluated[key] = values
            for action in active:
                scores[action].append(values[action])
            worlds += 1
            # Test for worse actions at every world at first, then every worlds/8 worlds (the test costs O(worlds)).
            if (self.prune is not None and worlds >= PRUNE_AFTER and len(active) > 1
                    and worlds % (worlds >> 3) == 0):
                active = _surviving_actions(active, scores, self.prune)
                if len(active) == 1:
                    break  # the rest are significantly worse: no need for more worlds
        self.last_worlds = worlds
        self.last_rejected = getattr(sampler, "rejected", 0)
        self.last_active = active
        self.last_scores = scores
        self.last_win_share = {action: sum(v > 0 for v in values) / len(values)
                               for action, values in scores.items()}
        return {action: sum(values) / len(values) for action, values in scores.items()}

    def _prior_action(self, infoset: InformationSet) -> int | None:
        """The prior player's choice, asked only in phase 1 (talon open, R7) outside the talon's last trick: in
        phase 2 (R8) and on the trick that exhausts the talon PIMC's worlds are solved exactly (the heuristic uses
        the same solver on fewer worlds), and the heuristic's last-trick search is its costliest decision."""
        if self._prior_agent is None or is_phase2(infoset) or on_last_talon_trick(infoset):
            return None
        return self._prior_agent.act(infoset)

    def act(self, infoset: InformationSet) -> int:
        legal = infoset.legal_actions
        self.last_prior = None
        if len(legal) == 1:
            return legal[0]
        start = time.perf_counter()
        if is_three_player(infoset):
            # R21: worlds over the two hidden hands, played on by a fast policy (agents/three_players.py).
            prior = self._prior_agent.act(infoset) if self._prior_agent is not None else None
            self.last_prior = prior
            seconds = self.seconds
            if seconds is not None:  # the prior's own time counts inside the budget, as with two players
                seconds = max(seconds - (time.perf_counter() - start), 1e-6)
            return pimc_action(infoset, self.rng, self.samples, seconds, self.override_margin, prior)
        sampler = inferred(infoset, self.inference)
        prior = self._prior_action(sampler if self.inference_in_prior else infoset)
        self.last_prior = prior
        seconds = self.seconds
        if seconds is not None:
            # The prior's own time counts inside the budget (at least one world is always evaluated).
            seconds = max(seconds - (time.perf_counter() - start), 1e-6)
        all_values = self.action_values(sampler, seconds)
        values = {action: all_values[action] for action in self.last_active}
        choice = self._pimc_choice(legal, values)
        if prior is None or choice == prior:
            return choice
        if prior not in values:
            return choice  # the prior's action was dropped as significantly worse (see _surviving_actions)
        if choice == CLOSE and self._close_rule(values):
            return CLOSE  # a closing that wins in nearly every solved world (R10)
        # Both survived, so both were evaluated on every world: the paired mean difference.
        scores = self.last_scores
        gain = sum(b - h for b, h in zip(scores[choice], scores[prior])) / len(scores[prior])
        return choice if gain > self.override_margin else prior

    def _close_rule(self, values: dict[int, float]) -> bool:
        return (CLOSE in values and self.close_min_value is not None and values[CLOSE] >= self.close_min_value
                and self.last_win_share[CLOSE] >= self.close_min_win)

    def _pimc_choice(self, legal, values: dict[int, float]) -> int:
        """PIMC's own choice among the surviving actions' means."""
        best = max(values.values())
        if self._close_rule(values):
            # A closing that wins in nearly every world is taken even when playing on scores a little more on
            # average: the playouts' continuation is optimistic (both sides close later with the world's perfect
            # information, and the policy opponent is weak), the closed position is solved exactly.
            return CLOSE
        # Ties (common with exact integer values): declare if that is among the best (it ends the deal at a value
        # no continuation beats, R13), else the first in legal order, which is deterministic.
        if values.get(DECLARE) == best:
            return DECLARE
        for action in legal:
            if values.get(action) == best:
                return action
        raise AssertionError("unreachable")


__all__ = ["PimcAgent", "action_value", "core_playouts", "derived_seed", "playout_value", "policy_action",
           "policy_weights", "position_value", "python_playout_value"]
