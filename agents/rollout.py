"""Rollout search: every legal action valued by playing sampled worlds on with the ``heuristic`` player.

A one-step policy improvement (Tesauro & Galperin's Monte Carlo rollouts; Bertsekas' rollout algorithms) over the
strongest rule player: in each world drawn from the information set (uniformly, or kept with the likelihood of the
opponent's play so far, ``inference=heuristic``: :mod:`sixtysix_env.core.inference`), each candidate action is
played and then both seats are played to the end by the compiled ``heuristic`` (:mod:`sixtysix_env.core.heuristic`),
which decides from its own view only, so the continuation is not clairvoyant: nobody in a rollout sees the other's
cards or the talon. The rollouts of one world share one random stream (common random numbers), so actions are
compared world by world. Actions significantly worse than the leader are dropped as worlds come in, and the
heuristic's own choice is kept unless another action beats it by more than ``margin`` game points.

Once the talon is exhausted (R7) a card counter knows every card and the position is solved exactly, as
``heuristic`` does.

What makes it strong at 0.1 s per decision is the number of worlds: a rollout played to the end by the full
heuristic costs about 1 ms (its closing checks, the talon's last-trick search and phase-2 solves), too slow for more
than 15-60 worlds early in a deal. ``endgame=last_trick`` stops each rollout at the talon's last trick (R7) or at a
closing (R10) and solves the rest exactly (clairvoyant only about the one face-down card left, or after a closing),
and fewer samples in the rollout player's lead model and closing check (``lead_samples=6,close_samples=6``) make a
rollout about ten times cheaper. Measured on tuning deals (docs/strength.md, session 4): the full-fidelity
rollouts at 0.1 s lost to the PIMC ``expert_v1`` by 0.2 game points per deal, the cheap ones beat it by +0.117
[+0.043, +0.192]; the alias ``expert`` is the cheap form with ``inference=heuristic``.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from sixtysix_env import InformationSet
from sixtysix_env.actions import CLOSE, NUM_ACTIONS
from sixtysix_env.game import FOLLOW
from sixtysix_env.schema import finite_number, read_json_file

from .base import Agent, refuse_other_rules, refuse_three_players
from .inference import WORLD_FALLBACKS, inert_without_inference, replay_settings
from .ppo import reads_history
from .pimc import (PRUNE_AFTER, _none_from_spec, _prior_seed, _surviving_actions, derived_seed,
                   prune_threshold, time_budget)
from .rule_based import HeuristicAgent, talon_exhausted
from .solver import ROLLOUT_TABLE_BITS, checked_table_bits, core_tables

# Where rollouts stop playing and solve exactly (the index is the rollout player's P_ROLLOUT_SOLVES).
ROLLOUT_ENDGAMES = ("play", "phase2", "last_trick", "last_trick_open", "closing_played")
ROLLOUT_OPPONENTS = ("rollout", "heuristic")  # who plays the opponent's seat in the rollouts
# The kinds of decision the search may be limited to (``search_at``): a phase-1 lead (R7; its card, a marriage R11,
# the exchange R9 or a closing R10 are its actions), a phase-1 follow, and any decision of a phase 2 after a closing.
SEARCH_KINDS = ("lead", "follow", "closed")
ALLOCATIONS = ("uniform", "halving")  # how the worlds of a decision are spent on its actions
PRUNE_VALUES = ("rollouts", "posterior")  # what the prune test compares: the rollouts' means, or the shrunk values
OBJECTIVES = ("deal", "bummerl")  # what a rollout's result is worth: game points, or the chance to win the Bummerl
CLOSED_SEARCHES = ("pimc", "ismcts")  # how a decision after a closing (R10) is searched: ``closed_search``
# How the opponent answers in the closed lookahead (``closed_opponent``): as the solver, seeing every card, or from
# his own view (the presumed-value correction, agents/closed_lookahead.py).
CLOSED_OPPONENTS = ("solver", "presumed")
MAX_PRESUMED_WORLDS = 64  # a sanity bound on ``presumed_worlds`` (every reply of the opponent solves that many)
CLOSED_SEARCH_HELPER = "rollout-closed-search"  # the name its seed is derived with (pimc.derived_seed)
UNSEARCHED_PLAYERS = ("heuristic", "prior")  # who decides where the search does not: the heuristic or the prior
CONTINUATION_SEATS = ("both", "mover")  # the continuation network plays both seats, or the searcher's only
# With the searcher's seat only: the opponent's numbers, the heuristic agent's own or the rollout player's.
CONTINUATION_OPPONENTS = ("heuristic", "rollout")
# How the opponent's seat of the heuristic rollouts decides to close (R10): by the heuristic's own check over worlds
# sampled from his view, or by reading the rollout's world (docs/strength.md, session 58).
OPPONENT_CLOSINGS = ("heuristic", "world")
MAX_THREADS = 64  # a sanity bound on ``threads`` (a typo such as 1000 would start that many threads)
MAX_LOOKAHEAD_WORLDS = 5000  # a sanity bound on ``closed_lookahead``
MAX_FACE_DOWN = 11  # face-down talon cards after the deal (R4, R5: 24 cards, 12 dealt, one turned up)
MAX_TRICKS = 12  # tricks in a deal (R4, R7: 24 cards, two to a trick)
ROLLOUT_PLAYER_SAMPLES = 6  # the lead and closing samples of the expert alias's rollout player (docs/strength.md)


def rollout_player_params(lead_samples: int = ROLLOUT_PLAYER_SAMPLES, close_samples: int = ROLLOUT_PLAYER_SAMPLES,
                          endgame: str = "last_trick",
                          phase2_samples: int = 8, endgame_worlds: int = 4, solve_talon: int = 1):
    """The parameter array of the compiled ``heuristic`` playing rollouts with these sample counts and solving from
    ``endgame`` on (the defaults: the player of the ``expert`` alias's rollouts); ``solve_talon``: the face-down
    talon cards at or below which ``last_trick`` rollouts solve (1: from the talon's last trick, R7)."""
    from sixtysix_env.core.heuristic import P_ROLLOUT_SOLVE_TALON, P_ROLLOUT_SOLVES

    params = HeuristicAgent(lead_samples=lead_samples, close_samples=close_samples, phase2_samples=phase2_samples,
                            endgame_worlds=endgame_worlds).core_params()
    params[P_ROLLOUT_SOLVES] = ROLLOUT_ENDGAMES.index(endgame)
    params[P_ROLLOUT_SOLVE_TALON] = solve_talon
    return params


def player_weights(player: str, parameter: str = "player") -> dict[str, float]:
    """The rollout player's weights for the ``player`` option: ``heuristic`` (none changed: the ``heuristic``
    agent's own) or the path of a JSON file with a ``weights`` mapping (the output of ``python -m
    train.tune_heuristic``: session 5's tuning kept the heuristic's own numbers, docs/strength.md); a missing or
    malformed file is refused by name, as is a bad value of ``parameter`` (the option that gave it)."""
    if not isinstance(player, str) or not player.strip():
        raise ValueError(f"{parameter} must be 'heuristic' or the path of a weights JSON file, got {player!r}")
    if player == "heuristic":
        return {}
    path = Path(player)
    document = read_json_file(path, "rollout player weights")
    if not isinstance(document, dict) or not isinstance(document.get("weights"), dict):
        raise ValueError(f"rollout player weights {str(path)!r} has no 'weights' mapping of names to numbers")
    return document["weights"]


_THREAD_POOLS: dict[int, ThreadPoolExecutor] = {}  # helper threads of searches on more than one thread, by count
# A forked child inherits the pools but not their threads, and its first search on two threads then waited for ever
# on work no thread would run: the child starts its own pools.
os.register_at_fork(after_in_child=_THREAD_POOLS.clear)


ROLLOUT_TWO_PLAYERS_ONLY = "rollout (and expert, its alias)"


def _helper_threads(threads: int) -> ThreadPoolExecutor:
    """The ``threads - 1`` helper threads of a search on ``threads`` threads (the calling thread is the first)."""
    pool = _THREAD_POOLS.get(threads)
    if pool is None:
        pool = _THREAD_POOLS[threads] = ThreadPoolExecutor(threads - 1, thread_name_prefix="rollout")
    return pool


def _better_player(scores: np.ndarray, switched: np.ndarray | None, done: int, actions: list[int]) -> np.ndarray:
    """The first ``done`` worlds' values, each action's column taken from the player (``scores``: the rollout
    player, ``switched``: the switch player) with the better mean for it (``scores`` alone without a switch)."""
    if switched is None:
        return scores[:done]
    chosen = scores[:done].copy()
    for action in actions:
        if switched[:done, action].mean() > chosen[:, action].mean():
            chosen[:, action] = switched[:done, action]
    return chosen


def _closing_at_risk(values: np.ndarray, active: list[int], risk: float) -> np.ndarray:
    """``values`` (worlds x actions) with the closing's column (R10) lowered by ``risk`` times its standard deviation
    over the worlds (a copy; ``values`` itself unchanged). Each world's closing is solved with every card seen, so
    where the worlds disagree the closer's real play falls short of their solves (docs/strength.md, session 57)."""
    if not risk or CLOSE not in active or len(values) < 2:
        return values
    values = values.copy()
    values[:, CLOSE] -= risk * values[:, CLOSE].std()
    return values


def _open_talon_size(infoset: InformationSet) -> int:
    """The talon's size (R4) while it is open (R7); a decision after a closing (R10) counts as talon 0, the windows
    of ``prior_talon`` and ``continuation_talon`` treating it as the end of the talon."""
    return 0 if infoset.closed_by is not None else infoset.talon_size


MAX_SAMPLES = 100_000  # RolloutAgent's worlds per decision, all held at once


class RolloutAgent(Agent):
    """Heuristic rollouts over sampled worlds (see the module docstring). ``samples``: at most this many worlds per
    decision; ``seconds``: time budget per decision (``None``: none); ``prune``: drop actions worse than the leader
    by this many standard errors of the paired difference after ``PRUNE_AFTER`` worlds (``None``: never);
    ``prune_on``: what that test compares, ``rollouts`` (the rollouts' means) or ``posterior`` (where the ``prior``
    counts, the means shrunk toward it as the choice shrinks them, with the standard error of ``n + prior_weight``
    worlds: the prior then guards the actions it favours from an early drop, and drops those it and the rollouts
    disfavour sooner);
    ``margin``: game points by which another action must beat the heuristic's choice to replace it; ``keep_prior``:
    standard errors of the paired difference by which it must beat it as well (``None``: none; a guard against
    picking the luckiest of several near-equal actions); ``switch``: ``None``, or a second player for the observer's
    later decisions in the rollouts (the path of a weights JSON file, as ``player``): every world is then played on
    by both, and each action is valued by the better of its two means (policy switching, Sailer, Buro & Lanctot
    2007: committing to either player after the action is a plan the observer can carry out); ``inference``:
    ``none`` (uniform worlds) or ``heuristic`` (worlds kept with the likelihood of the opponent's play under the
    heuristic's rules), ``follow_floor`` / ``rule_floor`` / ``lead_floor`` its floors (a lead floor of 1 leaves his
    plain phase-1 leads unmodelled, as by default), ``closed_floor`` / ``closing_floor`` the floors of his play
    after a closing and of his closing (R10) that are not best with every card seen (1: not modelled, the default;
    :mod:`sixtysix_env.core.inference`), ``played_on_floor`` the floor of his playing on at a phase-1 lead where the
    heuristic's filter found closing plausible and closing would have won him the world (1: not modelled);
    ``inference_fallback``: the world kept when 64 draws were all rejected, ``likeliest`` (the default) or
    ``resample`` (one drawn in proportion to its likelihood); ``lead_samples``, ``close_samples``, ``phase2_samples``,
    ``endgame_worlds``: the sample counts of the heuristic that plays the rollouts (``heuristic``'s own by default;
    fewer make rollouts faster); ``endgame``: ``play`` (the heuristic plays every decision to the end), ``phase2``
    (rollouts stop where phase 2 begins, R8, and solve it exactly: faster, clairvoyant after a closing),
    ``last_trick`` (they stop at the talon's last trick, R7, too, and solve the rest with the last face-down card
    known) or ``last_trick_open`` (as ``last_trick`` while the talon is open; a phase 2 after a closing, R10, is
    played by the heuristic from each seat's view instead of solved clairvoyantly) or ``closing_played`` (the same
    in rollouts from phase 1, where a closing is one of the actions or a later choice; the agent's own decisions in
    a phase 2 after a closing are valued as with ``last_trick``, by solving); ``solve_talon``: with ``last_trick`` /
    ``last_trick_open`` the rollouts solve the whole deal once at most this many talon cards are face down (1: from
    the talon's last trick; more: earlier, the talon order then known); ``opponent``: who plays the opponent's seat
    in the rollouts, ``rollout`` (the same player as the observer's) or ``heuristic`` (the ``heuristic`` agent's own
    numbers, its full sample counts); ``opponent_samples``: ``None`` (the opponent's seat plays as ``opponent``
    says), or with ``opponent=rollout`` the samples of the opponent's seat's lead model and closing check, the
    searcher's seat keeping ``lead_samples`` and ``close_samples``; ``search_at``: the kinds of decision searched,
    joined by ``+`` (``lead``, ``follow``, ``closed``: see :data:`SEARCH_KINDS`), and only with an open talon (R4,
    R7) of ``search_min_talon`` to ``search_max_talon`` cards (a decision after a closing, R10, counting as talon
    0); the others are the ``unsearched`` player's: ``heuristic`` (the compiled heuristic's choice) or ``prior`` (the
    prior network's best action, greedily, as its own agent plays it: a network that the search helps only at those
    decisions); both
    measure where the search's gain lies. A phase 2 after the talon's exhaustion is the heuristic's exact solve
    either way; ``allocation``: how worlds are spent on the actions, ``uniform`` (every surviving action in every
    world, until the budget ends) or ``halving`` (sequential halving, Karnin, Koren & Somekh 2013: the budget left,
    in rollouts, is split into rounds, one per halving, and after each round the worse half of the actions by mean
    is dropped, down to two; both keep the ``prune`` test); ``objective``: what a rollout's result is worth,
    ``deal`` (its game points, R16) or ``bummerl`` (the chance of winning the Bummerl after it, R17, from the match
    score in the information set: :mod:`agents.match_equity`; a deal outside a Bummerl is valued in game points).
    The values and ``margin`` are then in that unit; ``bummerl_win_chance``: with ``objective=bummerl``, the share
    of the Bummerl's scored deals to come the searcher presumes he wins when he values its scores (0.5: equal
    players; more makes him avoid big losses more than he seeks big wins); ``table_bits``: the rollouts'
    transposition table has ``2**table_bits`` entries (one per size and process); ``threads``: the worlds of each
    slice are split over this many threads running at once, each with a table of its own (the kernel releases the
    GIL): more worlds in the same time where the machine has the cores. The values of a world do not depend on the
    thread that plays it, so without a clock the search is the same; ``prior``: ``None``, or the path of a network
    fitted to action values (``fit.target: q``, :class:`agents.ppo.QValueNetwork`: a MaskablePPO model, suit-network
    files ``A.npz+B.npz``, or the alias of either such as ``suit_ensemble``), whose values the search's means are
    shrunk toward, each counted as ``prior_weight`` worlds: an action's value is ``(n * mean + prior_weight * prior)
    / (n + prior_weight)`` after ``n`` worlds (both centred over the surviving actions; in a Bummerl the prior's
    game points are scaled to the chance of winning it by the slope of that chance at the score; 128 by default, the
    least noisy weight at the tuning positions of docs/strength.md). Early in a deal the search sees only a few
    hundred worlds, and the network's estimate of the same rollout values is free; ``prior_talon``: the prior counts
    only at decisions with an open talon (R4, R7) of at least this many cards, a decision after a closing (R10)
    counting as talon 0 (0: every searched decision; late in phase 1 the search sees many worlds and the network
    chooses worst there); ``continuation``: ``None``, or a network fitted to action values (named as ``prior``)
    whose greedy policy plays the rollouts instead of the compiled heuristic: both seats, or the observer's only
    with ``opponent=heuristic`` (then the ``heuristic`` agent's own numbers play the other), each deciding from its
    own view; a slice's rollouts advance in lockstep, one forward pass per step for all of them
    (:mod:`sixtysix_env.core.continuation`); a phase 2 after a closing (R10) is played by the network, one after the
    talon's exhaustion (R8) solved exactly. The heuristic rollouts' own options (``endgame``, ``solve_talon``, the
    sample counts, ``player``, ``threads``) do not apply to it, and ``switch`` is refused with it. A one-step
    improvement over the network's own play, as ``expert`` is one over the heuristic's; ``continuation_talon``: the
    network plays the rollouts of decisions with at most this many talon cards (R4; and of every decision after a
    closing, R10), the heuristic those of earlier ones (12: all); ``continuation_seats``: ``both`` (the network
    plays both seats, or the observer's only with ``opponent=heuristic``), or ``mover``: the network plays the
    searcher's seat and the compiled heuristic the opponent's, in the network's rollouts only (the heuristic
    rollouts of earlier decisions keep ``opponent``), so the values are those of the network's play against the
    heuristic; ``continuation_opponent``: with ``mover``, the opponent's numbers: the ``heuristic`` agent's own (the
    opponent as he plays) or the ``rollout`` player's (cheaper: half the samples); ``continuation_endgame``: what
    the network's rollouts solve exactly instead of playing (``sixtysix_env.core.continuation.CONTINUATION_ENDGAMES``):
    a phase 2 after the talon's exhaustion only (``exhausted``), also one after a closing, R10, as if each saw the
    other's cards (``phase2``), or also the talon's last trick, R7, with the last face-down card known
    (``last_trick``: as the heuristic rollouts of ``endgame=last_trick`` solve); ``close_bias``: game points taken
    off the value of closing the talon (R10) in every world (and off the prior's value of it), so the search closes
    only when closing leads by that much: the closed deal is valued by solving it with every card seen, which the
    ``heuristic``'s own closing rule distrusts (it asks for a mean of 1 game point and 80 % won worlds), while the
    other actions are valued by rollouts from each seat's view (0: no bias); ``close_risk``: standard deviations of
    the closing's values over the worlds taken off its value (:func:`_closing_at_risk`; 0: none), so a closing that
    wins in some worlds and loses in others, which a player who cannot tell them apart plays worse than their solves
    credit him with, counts for less than one that wins in all; ``closed_lookahead``: 0, or the number
    of worlds of a decision after a closing (R10) valued by :mod:`agents.closed_lookahead` instead of solving each
    world (the observer's next decision then one choice per group of worlds he cannot tell apart; within the time
    budget, without pruning); ``closed_opponent``: how the opponent answers in that lookahead, ``solver`` (as if he
    saw every card) or ``presumed`` (from his own view: the heuristic's play of a closed deal, the best sum of exact
    values over ``presumed_worlds`` worlds he cannot tell apart; Wisser's presumed-value correction of PIMC);
    ``closed_search``: how a searched decision after a closing (R10) is decided, ``pimc``
    (the rollouts above: each world solved or played on, as the other options say) or ``ismcts`` (SO-ISMCTS over
    the observer's information sets of the closed deal, :class:`agents.ismcts.IsmctsAgent` with its defaults, this
    agent's ``inference`` and floors and time budget: his choices in the tree then depend only on what he sees, where
    each world's solve credits him with seeing every card; its heuristic leaves solve the rest of a closed deal
    exactly, as the rollout player does, so the tree is all that differs; one thread, game points also in a
    Bummerl; neither ``margin`` nor the prior applies to it); ``closed_iterations``: the most ISMCTS iterations of
    such a decision (the only bound without a clock); ``opponent_weights``: ``None``, or the path of a weights JSON
    file (as ``player``) whose numbers replace those of the opponent's seat in the heuristic rollouts, after
    ``opponent`` chose its player: a model of an opponent who plays otherwise than the heuristic, for instance one
    who closes the talon (R10) more readily (``close_min_value``, ``close_min_win``, ``close_filter``);
    ``opponent_closing``: how the opponent's seat of the heuristic rollouts decides to close (R10), ``heuristic``
    (its check over worlds sampled from his view) or ``world`` (the check solves the rollout's own world, one of the
    searcher's samples: after the heuristic's plausibility filter he closes exactly where closing wins him that
    world, as a PIMC closer whose worlds are right would; the searcher's seat keeps its check);
    ``leaf_tricks``: 0 (the heuristic rollouts play to the deal's end), or the tricks (R7) after which each heuristic
    rollout stops, at the next decision with a choice, and is valued by the ``prior`` network from that decision's
    mover's view: his best action's value, negated for the observer's opponent
    (:func:`sixtysix_env.core.continuation.leaf_values`). A rollout that ends or is solved first keeps its game
    points, so a closing (R10) is still solved. The network then values what the search's worlds leave undecided
    from each mover's own view, where the rollouts' later play is the heuristic's. One thread; ``switch`` and
    ``continuation`` are refused with it. The leaf needs a network fitted to what a position is worth: the shipped
    q networks are fitted to values centred over each decision's actions, so their level means nothing and
    ``expert:leaf_tricks=1`` lost 0.8 game points per deal (docs/strength.md, session 55); ``leaf_value``: ``None``
    (the prior's best action, as above; a ``prior`` is then required), or a PPO model of ours (a path or an alias
    such as ``ppo_true_world``) whose critic, a state value in game points (:func:`agents.ppo.load_critic`), values
    the leaves instead, or a critic file of ``python -m train.critic`` (``.npz``), which may also read the leaf's
    world: the opponent's hand and the talon's order (:mod:`sixtysix_env.core.critic_inputs`)."""

    name = "rollout"

    def __init__(self, seed: int | None = None, samples: int = 2000, seconds: float | None = 0.1,
                 prune: float | None = 2.5, prune_on: str = "rollouts", margin: float = 0.0, inference: str = "none",
                 follow_floor: float = 0.1, rule_floor: float = 0.1, lead_floor: float = 1.0, lead_samples: int = 12,
                 close_samples: int = 12,
                 phase2_samples: int = 8, endgame_worlds: int = 4, endgame: str = "play", player: str = "heuristic",
                 solve_talon: int = 1, opponent: str = "rollout", keep_prior: float | None = None,
                 switch: str | None = None, search_at: str = "lead+follow+closed", allocation: str = "uniform",
                 objective: str = "deal", bummerl_win_chance: float = 0.5, table_bits: int = ROLLOUT_TABLE_BITS,
                 threads: int = 1,
                 prior: str | None = None, prior_weight: float = 128.0, prior_talon: int = 0,
                 continuation: str | None = None,
                 continuation_talon: int = 12, continuation_seats: str = "both",
                 continuation_opponent: str = "heuristic", continuation_endgame: str = "exhausted",
                 close_bias: float = 0.0, close_risk: float = 0.0, closed_floor: float = 1.0,
                 closing_floor: float = 1.0, closed_lookahead: int = 0, unsearched: str = "heuristic",
                 search_min_talon: int = 0, search_max_talon: int = 12, closed_search: str = "pimc",
                 closed_iterations: int = 200_000, opponent_weights: str | None = None,
                 opponent_samples: int | None = None, opponent_closing: str = "heuristic", leaf_tricks: int = 0,
                 leaf_value: str | None = None, played_on_floor: float = 1.0,
                 inference_fallback: str = "likeliest", closed_opponent: str = "solver", presumed_worlds: int = 8):
        super().__init__(seed)
        # Every world's value of every action is held for a decision (8 bytes x 37 actions each): 10^5 worlds are
        # 30 MB; a huge count failed to allocate at the first decision, even with a clock that stops far sooner.
        if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
            raise ValueError(f"samples must be an integer in 1..{MAX_SAMPLES}, got {samples!r}")
        if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin <= 6:
            raise ValueError(f"margin must be a number of game points between 0 and 6, got {margin!r}")
        self.inference, self.floors = replay_settings(inference, follow_floor, rule_floor, lead_floor, closed_floor,
                                                      closing_floor, played_on_floor)
        if inference_fallback not in WORLD_FALLBACKS:
            raise ValueError(f"inference_fallback must be one of {', '.join(WORLD_FALLBACKS)}, "
                             f"got {inference_fallback!r}")
        self.inference_fallback = inference_fallback
        self.samples = samples
        self.seconds = time_budget(seconds)
        self.prune = prune_threshold(prune)
        if prune_on not in PRUNE_VALUES:
            raise ValueError(f"prune_on must be one of {', '.join(PRUNE_VALUES)}, got {prune_on!r}")
        self.prune_on = prune_on
        self.margin = float(margin)
        self.keep_prior = _none_from_spec(keep_prior)
        if self.keep_prior is not None and (not finite_number(self.keep_prior) or self.keep_prior < 0):
            raise ValueError(f"keep_prior must be a non-negative number of standard errors or None, got {keep_prior!r}")
        self._heuristic = HeuristicAgent(seed=_prior_seed(seed))
        # The rollouts' player: the heuristic, with fewer samples if asked (faster rollouts, more worlds).
        if endgame not in ROLLOUT_ENDGAMES:
            raise ValueError(f"endgame must be one of {', '.join(ROLLOUT_ENDGAMES)}, got {endgame!r}")
        if isinstance(solve_talon, bool) or not isinstance(solve_talon, int) or not 1 <= solve_talon <= MAX_FACE_DOWN:
            raise ValueError(f"solve_talon must be a count of face-down talon cards in 1..{MAX_FACE_DOWN}, "
                             f"got {solve_talon!r}")
        self.solve_talon = solve_talon
        self.lead_samples, self.close_samples = lead_samples, close_samples
        self.phase2_samples, self.endgame_worlds, self.endgame = phase2_samples, endgame_worlds, endgame
        from sixtysix_env.core.heuristic import with_weights

        self.player = player

        def seat_params(lead: int, close: int) -> np.ndarray:
            """The rollout player's numbers with these sample counts in its lead model and closing check."""
            return with_weights(rollout_player_params(lead, close, endgame, phase2_samples, endgame_worlds,
                                                      solve_talon), player_weights(player))

        self._params = seat_params(lead_samples, close_samples)
        if opponent not in ROLLOUT_OPPONENTS:
            raise ValueError(f"opponent must be one of {', '.join(ROLLOUT_OPPONENTS)}, got {opponent!r}")
        self.opponent = opponent
        # The opponent's seat in the rollouts: the same player, or the heuristic with its own numbers (a model of
        # the `heuristic` agent as it plays, at the cost of slower rollouts).
        self._opponent_params = self._params if opponent == "rollout" else HeuristicAgent().core_params()
        # The same rollout player on the opponent's seat with other sample counts (docs/strength.md, session 57).
        self.opponent_samples = _none_from_spec(opponent_samples)
        if self.opponent_samples is not None:
            if (isinstance(self.opponent_samples, bool) or not isinstance(self.opponent_samples, int)
                    or self.opponent_samples < 1):
                raise ValueError(f"opponent_samples must be a positive number of samples or None, "
                                 f"got {opponent_samples!r}")
            if opponent != "rollout":
                raise ValueError(f"opponent_samples sets the rollout player's samples on the opponent's seat: it "
                                 f"needs opponent=rollout, not {opponent!r}")
            self._opponent_params = seat_params(self.opponent_samples, self.opponent_samples)
        # A model of an opponent who plays otherwise (for instance closes more readily): his seat's numbers changed.
        self.opponent_weights = _none_from_spec(opponent_weights)
        if self.opponent_weights is not None:
            self._opponent_params = with_weights(self._opponent_params,
                                                 player_weights(self.opponent_weights, "opponent_weights"))
        # A model of an opponent who closes where closing wins (a PIMC closer whose worlds are right): his seat's
        # closing check reads the rollout's world, one of the searcher's samples, instead of sampling his view.
        if opponent_closing not in OPPONENT_CLOSINGS:
            raise ValueError(f"opponent_closing must be one of {', '.join(OPPONENT_CLOSINGS)}, "
                             f"got {opponent_closing!r}")
        self.opponent_closing = opponent_closing
        if opponent_closing == "world":
            from sixtysix_env.core.heuristic import P_CLOSE_READS_WORLD

            self._opponent_params = self._opponent_params.copy()
            self._opponent_params[P_CLOSE_READS_WORLD] = 1.0
        # closing_played: decisions in a closed phase 2 itself are valued by solving, as with last_trick.
        self._closed_params = self._params
        if endgame == "closing_played":
            from sixtysix_env.core.heuristic import P_ROLLOUT_SOLVES

            self._closed_params = self._params.copy()
            self._closed_params[P_ROLLOUT_SOLVES] = ROLLOUT_ENDGAMES.index("last_trick")
        self.table_bits = checked_table_bits(table_bits)
        if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
            raise ValueError(f"threads must be an integer in 1..{MAX_THREADS}, got {threads!r}")
        self.threads = threads
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
        self.objective = objective
        from .match_equity import checked_win_chance

        self.bummerl_win_chance = checked_win_chance(bummerl_win_chance, "bummerl_win_chance")
        if allocation not in ALLOCATIONS:
            raise ValueError(f"allocation must be one of {', '.join(ALLOCATIONS)}, got {allocation!r}")
        self.allocation = allocation
        kinds = search_at.split("+") if isinstance(search_at, str) else []
        if not kinds or any(kind not in SEARCH_KINDS for kind in kinds):
            raise ValueError(f"search_at must be kinds of {', '.join(SEARCH_KINDS)} joined by '+', got {search_at!r}")
        self.search_at = frozenset(kinds)
        self.switch = _none_from_spec(switch)
        self._switch_params = (None if self.switch is None
                               else with_weights(self._params, player_weights(self.switch, "switch")))
        if not finite_number(prior_weight) or prior_weight < 0:
            raise ValueError(f"prior_weight must be a non-negative number of worlds, got {prior_weight!r}")
        self.prior_weight = float(prior_weight)
        if isinstance(prior_talon, bool) or not isinstance(prior_talon, int) or not 0 <= prior_talon <= 12:
            raise ValueError(f"prior_talon must be a talon size in 0..12, got {prior_talon!r}")
        self.prior_talon = prior_talon
        self.prior = _none_from_spec(prior)
        self._prior_network = None
        if self.prior is not None:
            from .ppo import QValueNetwork

            self._prior_network = QValueNetwork(self.prior, where="rollout's prior")
        self.continuation = _none_from_spec(continuation)
        self._continuation = None
        if unsearched not in UNSEARCHED_PLAYERS:
            raise ValueError(f"unsearched must be one of {', '.join(UNSEARCHED_PLAYERS)}, got {unsearched!r}")
        if unsearched == "prior" and self._prior_network is None:
            raise ValueError("unsearched=prior plays the prior network where the search does not: name one with prior=")
        self.unsearched = unsearched
        for key, value in (("search_min_talon", search_min_talon), ("search_max_talon", search_max_talon)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 12:
                raise ValueError(f"{key} must be a talon size in 0..12, got {value!r}")
        if search_min_talon > search_max_talon:
            raise ValueError(f"search_min_talon ({search_min_talon}) is above search_max_talon ({search_max_talon})")
        self.search_talon = (search_min_talon, search_max_talon)
        if self.continuation is not None:
            if self.opponent_samples is not None:
                raise ValueError("opponent_samples changes the heuristic rollouts' opponent: it cannot be combined "
                                 "with continuation, whose rollouts have their own")
            if self.opponent_weights is not None:
                raise ValueError("opponent_weights changes the heuristic rollouts' opponent: it cannot be combined "
                                 "with continuation, whose rollouts have their own")
            if self.opponent_closing != "heuristic":
                raise ValueError("opponent_closing changes the heuristic rollouts' opponent: it cannot be combined "
                                 "with continuation, whose rollouts have their own")
            if self.switch is not None:
                raise ValueError("switch plays the heuristic's rollouts a second way: it cannot be combined with "
                                 "continuation")
            from .ppo import QValueNetwork

            self._continuation = QValueNetwork(self.continuation, where="rollout's continuation")
        if isinstance(leaf_tricks, bool) or not isinstance(leaf_tricks, int) or not 0 <= leaf_tricks <= MAX_TRICKS:
            raise ValueError(f"leaf_tricks must be a count of tricks in 0..{MAX_TRICKS}, got {leaf_tricks!r}")
        self.leaf_value = _none_from_spec(leaf_value)
        self._leaf_critic = None
        if self.leaf_value is not None and not isinstance(self.leaf_value, (str, os.PathLike)):  # leaf_value=1
            raise ValueError(f"leaf_value must be a critic file or the alias of a model (or none), got {leaf_value!r}")
        if self.leaf_value is not None:
            if not leaf_tricks:
                raise ValueError("leaf_value values the leaves of cut rollouts: set leaf_tricks= as well")
            from sixtysix_env.core.critic_inputs import critic_features

            from .ppo import load_critic, network_path_of_alias

            critic, self._leaf_rules = load_critic(network_path_of_alias(self.leaf_value))  # checks its input size
            inputs = critic.inputs
            self._leaf_critic = critic
            # The leaf's mover's expected game points: the critic's state value, from the plain observation and, as
            # its inputs say, what the world fixes beyond it (sixtysix_env.core.critic_inputs).
            self._leaf_history = False
            self._leaf_mover_values = lambda observations, masks, states: critic.logits(
                critic_features(observations, states, inputs))[:, 0]
        elif leaf_tricks and self._prior_network is None:
            raise ValueError("leaf_tricks values the rollouts' leaves by the prior network: name one with prior= "
                             "(or a critic with leaf_value=)")
        elif leaf_tricks:  # the prior's best legal action, in game points
            self._leaf_history = reads_history(self._prior_network.network)
            prior = self._prior_network
            self._leaf_mover_values = lambda observations, masks, states: prior.best_values(observations, masks)
        if leaf_tricks and (self.continuation is not None or self.switch is not None):
            raise ValueError("leaf_tricks cuts the heuristic rollouts: it cannot be combined with continuation or "
                             "switch")
        self.leaf_tricks = leaf_tricks
        if (isinstance(continuation_talon, bool) or not isinstance(continuation_talon, int)
                or not 0 <= continuation_talon <= 12):
            raise ValueError(f"continuation_talon must be a talon size in 0..12, got {continuation_talon!r}")
        self.continuation_talon = continuation_talon
        if continuation_seats not in CONTINUATION_SEATS:
            raise ValueError(f"continuation_seats must be one of {', '.join(CONTINUATION_SEATS)}, "
                             f"got {continuation_seats!r}")
        if continuation_opponent not in CONTINUATION_OPPONENTS:
            raise ValueError(f"continuation_opponent must be one of {', '.join(CONTINUATION_OPPONENTS)}, "
                             f"got {continuation_opponent!r}")
        from sixtysix_env.core.continuation import CONTINUATION_ENDGAMES

        if continuation_endgame not in CONTINUATION_ENDGAMES:
            raise ValueError(f"continuation_endgame must be one of {', '.join(CONTINUATION_ENDGAMES)}, "
                             f"got {continuation_endgame!r}")
        self.continuation_seats, self.continuation_opponent = continuation_seats, continuation_opponent
        self.continuation_endgame = continuation_endgame
        # The opponent in the network's rollouts: the heuristic's (mover) or ``opponent``'s numbers, or the network.
        if continuation_seats == "mover":
            self._continuation_opponent = (HeuristicAgent().core_params() if continuation_opponent == "heuristic"
                                           else self._params)
        else:
            self._continuation_opponent = None if opponent == "rollout" else self._opponent_params
        if isinstance(close_bias, bool) or not isinstance(close_bias, (int, float)) or not -6 <= close_bias <= 6:
            raise ValueError(f"close_bias must be a number of game points between -6 and 6, got {close_bias!r}")
        self.close_bias = float(close_bias)
        if isinstance(close_risk, bool) or not isinstance(close_risk, (int, float)) or not 0 <= close_risk <= 3:
            raise ValueError(f"close_risk must be a number of standard deviations between 0 and 3, got {close_risk!r}")
        self.close_risk = float(close_risk)
        if (isinstance(closed_lookahead, bool) or not isinstance(closed_lookahead, int)
                or not 0 <= closed_lookahead <= MAX_LOOKAHEAD_WORLDS):
            raise ValueError(f"closed_lookahead must be a count of worlds in 0..{MAX_LOOKAHEAD_WORLDS}, "
                             f"got {closed_lookahead!r}")
        self.closed_lookahead = closed_lookahead
        if closed_opponent not in CLOSED_OPPONENTS:
            raise ValueError(f"closed_opponent must be one of {', '.join(CLOSED_OPPONENTS)}, got {closed_opponent!r}")
        if closed_opponent == "presumed" and not closed_lookahead:
            raise ValueError("closed_opponent=presumed is how the opponent answers in the closed lookahead: it needs "
                             "closed_lookahead, a count of worlds")
        if (isinstance(presumed_worlds, bool) or not isinstance(presumed_worlds, int)
                or not 1 <= presumed_worlds <= MAX_PRESUMED_WORLDS):
            raise ValueError(f"presumed_worlds must be a count of worlds in 1..{MAX_PRESUMED_WORLDS}, "
                             f"got {presumed_worlds!r}")
        self.closed_opponent = closed_opponent
        # The opponent's numbers in the lookahead: the heuristic's play of a closed deal, presumed_worlds per reply.
        self._presumed_params = (HeuristicAgent(phase2_samples=presumed_worlds).core_params()
                                 if closed_opponent == "presumed" else None)
        if closed_search not in CLOSED_SEARCHES:
            raise ValueError(f"closed_search must be one of {', '.join(CLOSED_SEARCHES)}, got {closed_search!r}")
        if closed_search == "ismcts" and closed_lookahead:
            raise ValueError("closed_lookahead values a closed deal's worlds for closed_search=pimc: it cannot be "
                             "combined with closed_search=ismcts")
        if isinstance(closed_iterations, bool) or not isinstance(closed_iterations, int) or closed_iterations < 1:
            raise ValueError(f"closed_iterations must be a positive integer, got {closed_iterations!r}")
        self.closed_search = closed_search
        self._closed_ismcts = None
        if closed_search == "ismcts":
            from .ismcts import IsmctsAgent

            self._closed_ismcts = IsmctsAgent(
                seed=derived_seed(seed, CLOSED_SEARCH_HELPER), iterations=closed_iterations, seconds=self.seconds,
                inference=inference, follow_floor=follow_floor, rule_floor=rule_floor, lead_floor=lead_floor,
                closed_floor=closed_floor, closing_floor=closing_floor, played_on_floor=played_on_floor)
        self.last_worlds = 0
        self.last_values: dict[int, float] = {}
        # The values the last decision's choice rested on (shrunk toward the prior where it shrinks; one game point
        # is game_point_scale of them); empty where the search did not decide (agents.blend reads them).
        self.decision_values: dict[int, float] = {}
        self._scores = np.zeros((0, NUM_ACTIONS))  # world_values: none before the first search
        self._decision_prior: dict[int, float] | None = None  # the prior of the decision searched last (prune_on)

    def inert_parameters(self) -> dict[str, str]:
        inert = inert_without_inference(self.inference, also=("inference_fallback",))
        if self._prior_network is None:
            for name in ("prior_weight", "prior_talon"):
                inert[name] = "it counts only with a prior network (prior=...)"
        if self.prune is None:
            inert["prune_on"] = "it counts only with a prune threshold (prune=...)"
        elif self._prior_network is None:
            inert["prune_on"] = "it counts only with a prior network (prior=...)"
        if self.continuation is None:
            for name in ("continuation_talon", "continuation_seats", "continuation_opponent", "continuation_endgame"):
                inert[name] = "it counts only with a continuation network (continuation=...)"
        if self.closed_search != "ismcts":
            inert["closed_iterations"] = "it counts only with closed_search=ismcts"
        if self.closed_opponent != "presumed":
            inert["presumed_worlds"] = "it counts only with closed_opponent=presumed"
        if self.objective != "bummerl":
            inert["bummerl_win_chance"] = "it counts only with objective=bummerl"
        if self.endgame in ("play", "phase2"):  # the rollouts solve no open talon (P_ROLLOUT_SOLVE_TALON unread)
            inert["solve_talon"] = "it counts only with endgame=last_trick, last_trick_open or closing_played"
        if self.search_at == frozenset(SEARCH_KINDS) and self.search_talon == (0, 12):
            inert["unsearched"] = ("every decision is searched (it counts only where search_at, search_min_talon or "
                                   "search_max_talon leave some unsearched)")
        return inert

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        self._heuristic.seed(_prior_seed(seed))
        if self._closed_ismcts is not None:
            self._closed_ismcts.seed(derived_seed(seed, CLOSED_SEARCH_HELPER))

    def start_deal(self, player: int, rules) -> None:
        refuse_three_players(rules, ROLLOUT_TWO_PLAYERS_ONLY)
        # The networks the search uses must be fitted for these rules: refused now, not at the first search.
        if self._prior_network is not None:
            refuse_other_rules(f"rollout's prior {self.prior!r}", self._prior_network.rules, rules)
        if self._continuation is not None:
            refuse_other_rules(f"rollout's continuation {self.continuation!r}", self._continuation.rules, rules)
        if self._leaf_critic is not None:
            refuse_other_rules(f"rollout's leaf_value {self.leaf_value!r}", self._leaf_rules, rules)
        self._heuristic.start_deal(player, rules)
        if self._closed_ismcts is not None:
            self._closed_ismcts.start_deal(player, rules)

    def act(self, infoset: InformationSet) -> int:
        from sixtysix_env.core import core_implements

        refuse_three_players(infoset.rules, ROLLOUT_TWO_PLAYERS_ONLY)
        legal = infoset.legal_actions
        self.last_values = {}  # this decision's values only (none where it does not search)
        self.decision_values = {}
        if len(legal) == 1:
            return legal[0]
        start = time.perf_counter()
        solved = talon_exhausted(infoset) or not core_implements(infoset.rules)
        kind = "closed" if infoset.closed_by is not None else "follow" if infoset.stage == FOLLOW else "lead"
        searched = (not solved and kind in self.search_at
                    and self.search_talon[0] <= _open_talon_size(infoset) <= self.search_talon[1])
        if searched and kind == "closed" and self._closed_ismcts is not None:
            # Before the heuristic's own choice, which it would not use: after a closing that choice solves sampled
            # worlds, time the budget would lose (a closing lasts to the deal's end, so no later decision of the
            # deal reads the heuristic's generator either).
            return self._closed_ismcts.act(infoset)
        prior = self._heuristic.act(infoset)
        if solved:
            return prior  # perfect information (R7, R8): the heuristic solves it exactly
        if not searched:
            if self.unsearched == "heuristic":
                return prior
            # The network agent's own choice: of equal values (cards the suit networks cannot tell apart), the
            # lowest id.
            network_values = self._prior_network.values(infoset)
            return max(network_values, key=lambda action: (network_values[action], -action))
        seconds = None if self.seconds is None else max(self.seconds - (time.perf_counter() - start), 1e-6)
        values = self.action_values(infoset, seconds)
        shrunk = len(values) > 1 and self._prior_shrinks(infoset)
        if shrunk:
            values = self._shrunk_to_prior(values, self._decision_prior or self._prior_in_value_units(infoset))
        self.decision_values = values
        best = max(values, key=lambda action: (values[action], action == prior, -action))
        if best == prior or prior not in values:
            return best
        gains = self._scores[:, best] - self._scores[:, prior]
        gain = values[best] - values[prior] if shrunk else float(np.mean(gains))
        if self.keep_prior is not None and len(gains) > 1:
            standard_error = float(np.std(gains, ddof=1)) / np.sqrt(len(gains))
            if gain <= self.keep_prior * standard_error:
                return prior
        return best if gain > self.margin else prior

    @property
    def world_values(self) -> np.ndarray:
        """The last :meth:`action_values` search's value of each action in each of its worlds (worlds x actions, in
        the values' unit, a closing's after ``close_risk``); a pruned action's column is zero in the worlds searched
        after its prune."""
        return self._scores

    def _chosen_values(self, scores: np.ndarray, switched: np.ndarray | None, done: int,
                       active: list[int]) -> np.ndarray:
        """The first ``done`` worlds' values the search decides by: each action's better rollout player
        (:func:`_better_player`), the closing lowered by ``close_risk`` (:func:`_closing_at_risk`)."""
        return _closing_at_risk(_better_player(scores, switched, done, active), active, self.close_risk)

    def action_values(self, infoset: InformationSet, seconds: float | None = -1.0) -> dict[int, float]:
        """Mean rollout value of every surviving legal action (the per-world values: :attr:`world_values`).
        ``seconds`` overrides the time budget as in ``PimcAgent.action_values``: the default -1 means the agent's
        own ``seconds``, ``None`` no clock (its ``samples`` worlds)."""
        if seconds is not None and seconds < 0:
            seconds = self.seconds
        from sixtysix_env.core.layout import STATE_SIZE
        from sixtysix_env.core.observation import scaled_match_score
        from sixtysix_env.core.search import information_template

        from .inference import ReplayedWorlds

        start = time.perf_counter()
        player = infoset.player
        tables = core_tables(self.table_bits, self.threads)
        information = information_template(infoset)  # template, allowed, unseen, needed
        replayed = (ReplayedWorlds(infoset, *self.floors, fallback=self.inference_fallback)
                    if self.inference == "heuristic" and infoset.history else None)
        active = list(infoset.legal_actions)
        self._decision_prior = None
        utilities = None
        if self.objective == "bummerl" and infoset.match_score is not None:
            from .match_equity import MAX_GAME_POINTS, deal_utilities

            utilities = deal_utilities(infoset.rules, infoset.match_score, player, self.bummerl_win_chance)
            points_grid = np.arange(-MAX_GAME_POINTS, MAX_GAME_POINTS + 1)  # the game points utilities[i] is for
        if self.closed_lookahead and infoset.closed_by is not None:
            from .closed_lookahead import lookahead_values

            worlds = self._draw_worlds(replayed, information, player, self.closed_lookahead,
                                       np.empty((0, STATE_SIZE), dtype=np.int64))
            utility = None if utilities is None else (lambda points: float(utilities[points + MAX_GAME_POINTS]))
            deadline = None if seconds is None else start + seconds
            if self._presumed_params is not None:
                from sixtysix_env.core.search import seed_kernels

                seed_kernels(self.rng.getrandbits(32))  # the opponent's own worlds follow self.rng alone
            self._scores = lookahead_values(worlds, player, active, tables[0], utility, deadline,
                                            self._presumed_params)
            self.last_worlds = len(self._scores)
            self.last_values = {action: float(self._scores[:, action].mean()) for action in active}
            return self.last_values
        # The prior in the values' unit, once per decision (act's shrinking reuses it), when the prune test asks it.
        if self.prune_on == "posterior" and len(active) > 1 and self._prior_shrinks(infoset):
            self._decision_prior = self._prior_in_value_units(infoset)
        params = self._closed_params if infoset.closed_by is not None else self._params
        close_penalty = self.close_bias * self.game_point_scale(infoset) if self.close_bias else 0.0
        network_rolls = self._network_continues(infoset)
        # The continuation's observations show the Bummerl score (R17), scaled; (0, 0) outside a Bummerl.
        match_score = scaled_match_score(infoset.match_score or (0, 0), infoset.rules.bummerl_target)
        scores = np.zeros((self.samples, NUM_ACTIONS), dtype=np.float64)
        # Policy switching: the same worlds and seeds played on by the second player on the observer's seat.
        switched = None if self._switch_params is None else np.zeros_like(scores)
        worlds = np.empty((0, STATE_SIZE), dtype=np.int64)
        done = 0
        batch = 4
        round_end = None  # halving: the world count at which the current round ends
        while done < self.samples:
            count = min(batch, self.samples - done)
            if round_end is not None:
                count = max(1, min(count, int(np.ceil(round_end - done))))
            worlds = self._draw_worlds(replayed, information, player, count, worlds)
            mask = 0
            for action in active:
                mask |= 1 << action
            seeds = np.array([self.rng.getrandbits(31) for _ in range(count)], dtype=np.int64)
            slice_start = time.perf_counter()
            # Thread t plays worlds bounds[t]..bounds[t+1] of the slice, numbered in its own table.
            bounds = [count * thread // len(tables) for thread in range(len(tables) + 1)]
            first_worlds = [table.claim_worlds(bounds[thread + 1] - bounds[thread])
                            for thread, table in enumerate(tables)]
            if network_rolls:
                self._network_roll_out(tables[0], worlds[:count], mask, player, match_score, scores[done:done + count])
            elif self.leaf_tricks:
                self._leaf_roll_out(tables[0], worlds[:count], mask, player, params, seeds, infoset, match_score,
                                    scores[done:done + count])
            else:
                self._roll_out(tables, bounds, first_worlds, worlds, mask, player, params, seeds,
                               scores[done:done + count])
            if switched is not None:
                self._roll_out(tables, bounds, first_worlds, worlds, mask, player, self._switch_params, seeds,
                               switched[done:done + count])
            if utilities is not None:  # game points -> the chance to win the Bummerl after them (R17)
                for values in (scores, switched):
                    if values is not None:
                        # Interpolated: a network's leaf values (leaf_tricks) are not whole game points.
                        values[done:done + count, active] = np.interp(values[done:done + count, active],
                                                                      points_grid, utilities)
            if close_penalty and CLOSE in active:
                for values in (scores, switched):
                    if values is not None:
                        values[done:done + count, CLOSE] -= close_penalty
            done += count
            now = time.perf_counter()
            per_rollout = (now - slice_start) / (count * len(active))
            if self.prune is not None and done >= PRUNE_AFTER and len(active) > 1:
                chosen = self._chosen_values(scores, switched, done, active)
                active = _surviving_actions(active, {action: chosen[:, action] for action in active}, self.prune,
                                            self._decision_prior, self.prior_weight)
                if len(active) == 1:
                    break
            if self.allocation == "halving" and len(active) > 2 and (round_end is None or done >= round_end):
                if round_end is not None:  # a round has ended: keep the better half (at least two)
                    chosen = self._chosen_values(scores, switched, done, active)
                    ranked = sorted(active, key=lambda action: (-chosen[:, action].mean(), action))
                    active = ranked[:max(2, (len(active) + 1) // 2)]
                if len(active) > 2:
                    rollouts_left = (self.samples - done) * len(active)
                    if seconds is not None:
                        rollouts_left = min(rollouts_left, max(seconds - (now - start), 0.0) / per_rollout)
                    rounds = int(np.ceil(np.log2(len(active))))
                    round_end = done + max(rollouts_left / rounds / len(active), 1.0)
            if seconds is not None:
                per_world = per_rollout * len(active)
                left = seconds - (now - start)
                # The next slice must end inside the budget (with margin for a slow world).
                batch = int(min(max(left / per_world * 0.5, 0), 64))
                if batch < 1:
                    break
            else:
                batch = min(batch * 2, 64)
        self._scores = self._chosen_values(scores, switched, done, active)
        self.last_worlds = done
        self.last_values = {action: float(self._scores[:, action].mean()) for action in active}
        return self.last_values

    def _draw_worlds(self, replayed, information, player: int, count: int, buffer: np.ndarray) -> np.ndarray:
        """``count`` worlds of the decision as core states: from the replay inference (``replayed``) or uniform
        from ``information`` (:func:`~sixtysix_env.core.search.information_template`), into the first rows of
        ``buffer`` when it has enough. Both follow ``self.rng`` alone."""
        from sixtysix_env.core.layout import STATE_SIZE
        from sixtysix_env.core.search import sample_worlds, seed_kernels

        if replayed is not None:
            return np.stack([replayed.next_state(self.rng) for _ in range(count)])
        if buffer.shape[0] < count:
            buffer = np.empty((count, STATE_SIZE), dtype=np.int64)
        seed_kernels(self.rng.getrandbits(32))  # the worlds follow self.rng alone (see ReplayedWorlds)
        template, allowed, unseen, needed = information
        sample_worlds(count, template, 1 - player, allowed, unseen, needed, buffer)
        return buffer

    def game_point_scale(self, infoset: InformationSet) -> float:
        """What one game point of this deal is worth in the unit of the search's values: with ``objective=bummerl``
        in a Bummerl (R17), the slope of the chance of winning it around a drawn deal at the match score; else 1."""
        if self.objective != "bummerl" or infoset.match_score is None:
            return 1.0
        from .match_equity import MAX_GAME_POINTS, deal_utilities

        utilities = deal_utilities(infoset.rules, infoset.match_score, infoset.player, self.bummerl_win_chance)
        return float(utilities[MAX_GAME_POINTS + 1] - utilities[MAX_GAME_POINTS - 1]) / 2

    def _prior_shrinks(self, infoset: InformationSet) -> bool:
        """Whether the prior network's values shrink the search's at this decision: there is one, it weighs, and it
        counts here (``prior_talon``: an open talon of at least that many cards)."""
        return (self._prior_network is not None and self.prior_weight > 0
                and _open_talon_size(infoset) >= self.prior_talon)

    def _prior_in_value_units(self, infoset: InformationSet) -> dict[int, float]:
        """The prior network's value of every legal action in the unit of the search's values (game points, or in a
        Bummerl the chance of winning it, by :meth:`game_point_scale`), a closing's less ``close_bias``."""
        prior = self._prior_network.values(infoset)
        if self.close_bias and CLOSE in prior:
            prior[CLOSE] -= self.close_bias
        scale = self.game_point_scale(infoset)
        return {action: scale * value for action, value in prior.items()}

    def _shrunk_to_prior(self, values: dict[int, float], prior: dict[int, float]) -> dict[int, float]:
        """``values`` (the surviving actions' means over ``last_worlds`` worlds) shrunk toward ``prior`` (the
        network's, in the same unit; see the class docstring). ``last_values`` keeps the plain means."""
        actions = list(values)
        worlds, weight = self.last_worlds, self.prior_weight
        value_centre = float(np.mean([values[action] for action in actions]))
        prior_centre = float(np.mean([prior[action] for action in actions]))
        return {action: (worlds * (values[action] - value_centre) + weight * (prior[action] - prior_centre))
                / (worlds + weight) for action in actions}

    def _network_continues(self, infoset: InformationSet) -> bool:
        """Whether the continuation network plays this decision's rollouts (``continuation_talon``); a network
        fitted for other rules is refused by name."""
        if self._continuation is None or _open_talon_size(infoset) > self.continuation_talon:
            return False
        refuse_other_rules(f"rollout's continuation {self.continuation!r}", self._continuation.rules, infoset.rules)
        return True

    def _network_roll_out(self, table, worlds: np.ndarray, mask: int, player: int, match_score: np.ndarray,
                          values: np.ndarray) -> None:
        """``values[w, a]``: the game points for ``player`` of action ``a`` (each of the bit mask ``mask``) in world
        ``worlds[w]`` when the continuation network plays on from there, greedily from each mover's own view, in
        lockstep (:func:`sixtysix_env.core.continuation.play_out`); with ``opponent=heuristic`` or
        ``continuation_seats=mover`` the compiled heuristic plays the opponent's seat instead. A phase 2 after the
        talon's exhaustion is solved exactly, and more as ``continuation_endgame`` says (the talon's last trick as one
        transposition-table world per sampled world, as the heuristic rollouts number theirs)."""
        from sixtysix_env.core.continuation import branch_worlds, play_out
        from sixtysix_env.core.layout import STATE_SIZE
        from sixtysix_env.core.search import seed_kernels

        total = len(worlds) * bin(mask).count("1")
        rollouts = np.empty((total, STATE_SIZE), dtype=np.int64)
        world_of, action_of = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
        branch_worlds(np.ascontiguousarray(worlds), len(worlds), mask, rollouts, world_of, action_of)
        seed_kernels(self.rng.getrandbits(32))  # the heuristic opponent's samples follow self.rng
        world_ids = None
        if self.continuation_endgame == "last_trick":  # one number per sampled world (its talon order)
            world_ids = table.claim_worlds(len(worlds)) + world_of
        values[world_of, action_of] = play_out(rollouts, np.full(total, player), self._continuation.network.logits,
                                               table, match_score, self._continuation_opponent,
                                               endgame=self.continuation_endgame, world_ids=world_ids,
                                               history=reads_history(self._continuation.network))

    def _leaf_roll_out(self, table, worlds: np.ndarray, mask: int, player: int, params: np.ndarray,
                       seeds: np.ndarray, infoset: InformationSet, match_score: np.ndarray,
                       values: np.ndarray) -> None:
        """``values[w, a]``: the heuristic rollouts cut ``leaf_tricks`` tricks after this decision and valued there
        by ``leaf_value``'s critic or the prior network (:func:`sixtysix_env.core.continuation.leaf_values`), on one
        thread with ``table``."""
        from sixtysix_env.core.continuation import leaf_values
        from sixtysix_env.core.layout import TRICK_COUNT

        if self._leaf_critic is not None:
            refuse_other_rules(f"rollout's leaf_value {self.leaf_value!r}", self._leaf_rules, infoset.rules)
        leaf_trick = int(worlds[0, TRICK_COUNT]) + self.leaf_tricks  # the worlds share the observer's trick count
        leaf_values(np.ascontiguousarray(worlds), len(worlds), mask, player, params, self._opponent_params, table,
                    seeds, table.claim_worlds(len(worlds)), leaf_trick, match_score, self._leaf_mover_values,
                    self._leaf_history, values)

    def _roll_out(self, tables, bounds, first_worlds, worlds, mask, player, params, seeds, values) -> None:
        """``rollout_values`` of the slice's worlds, thread ``t`` playing ``bounds[t]:bounds[t + 1]`` with table
        ``tables[t]`` (this thread the first part, the helper threads the others at the same time)."""
        from sixtysix_env.core.heuristic import rollout_values

        def run(thread: int) -> None:
            low, high = bounds[thread], bounds[thread + 1]
            if high > low:
                table = tables[thread]
                rollout_values(worlds[low:high], high - low, mask, player, params, self._opponent_params,
                               table.entries, table.nodes, seeds[low:high], first_worlds[thread], values[low:high])

        helpers = [] if len(tables) == 1 else [_helper_threads(len(tables)).submit(run, thread)
                                               for thread in range(1, len(tables))]
        run(0)
        for helper in helpers:
            helper.result()


__all__ = ["ALLOCATIONS", "OBJECTIVES", "OPPONENT_CLOSINGS", "ROLLOUT_ENDGAMES", "ROLLOUT_OPPONENTS",
           "ROLLOUT_PLAYER_SAMPLES", "RolloutAgent", "SEARCH_KINDS", "player_weights", "rollout_player_params"]
