"""Agent-agnostic play loops: one deal (like OpenSpiel's ``evaluate_bots``) and one Bummerl (R17).

An agent is any object with ``act(infoset) -> action``; ``seed(int)`` and ``start_deal(player, rules)`` are
called when present (every :class:`agents.Agent` has them). The loop builds the
:class:`~sixtysix_env.infoset.InformationSet` of the player to move, asks that player's agent, checks the action
is legal and applies it. An illegal action is a bug in the agent, never silently repaired: it raises
:class:`IllegalActionError` naming the agent and the action. The wall-clock time of every ``act`` call is
recorded per player (the tournament reports median and 95th percentile per agent).
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from sixtysix_env.actions import NUM_ACTIONS, action_name
from sixtysix_env.game import Game
from sixtysix_env.infoset import InformationSet
from sixtysix_env.match import Match
from sixtysix_env.rules import Rules


class IllegalActionError(ValueError):
    """An agent returned an action that is not legal in its position."""


def agent_label(agent: object) -> str:
    return str(getattr(agent, "name", None) or type(agent).__name__)


@dataclass
class DealOutcome:
    """How one deal went: the engine's result plus the actions and decision times (seconds) per player."""

    winner: int | None
    game_points: int
    reason: str
    points: tuple[int, int]
    returns: tuple[int, int]  # zero-sum game points from each player's side (R16)
    dealer: int
    actions: list[int] = field(default_factory=list)
    decision_times: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))

    @property
    def decisions(self) -> tuple[int, int]:
        return (len(self.decision_times[0]), len(self.decision_times[1]))


def validated_action(action: object, infoset: InformationSet, agent_name: str,
                     history: Sequence[int] | None = None) -> int:
    """``action`` as an int if it is legal in ``infoset``; otherwise an :class:`IllegalActionError` naming the agent,
    the player, the choice, the legal actions and, when given, the deal's ``history``."""
    def legal() -> str:  # only for the message: every decision of a match passes through here
        return ", ".join(f"{a} ({action_name(a)})" for a in infoset.legal_actions)

    if isinstance(action, bool) or not isinstance(action, numbers.Integral):
        raise IllegalActionError(
            f"agent {agent_name!r} returned {action!r} (player {infoset.player}), not an action id; legal: {legal()}"
        )
    action = int(action)
    if action not in infoset.legal_actions:
        shown = action_name(action) if 0 <= action < NUM_ACTIONS else "out of range"
        after = f" after history {list(history)}" if history is not None else ""
        raise IllegalActionError(
            f"agent {agent_name!r} chose illegal action {action} ({shown}) as player {infoset.player}{after}; "
            f"legal: {legal()}"
        )
    return action


def begin_deal(agents: Sequence[object], rules: Rules, seeds: Sequence[int] | None = None) -> None:
    """Tell ``agents[p]`` (seat ``p``) that a deal starts, each first re-seeded with ``seeds[p]`` if given, as every
    deal of a match begins; ``seed`` and ``start_deal`` are optional for an agent."""
    if seeds is not None and len(seeds) != len(agents):  # else an IndexError, or seeds left over unread
        raise ValueError(f"one seed per seat is needed, got {list(seeds)!r} for {len(agents)} seats")
    for player, agent in enumerate(agents):  # before any agent is told, else an AttributeError at its first move
        if not callable(getattr(agent, "act", None)):
            raise TypeError(f"seat {player}'s agent {agent!r} has no act(infoset) method: pass an agent (a subclass "
                            "of agents.base.Agent, or make_agent(spec)), not a function or a spec text")
    for player, agent in enumerate(agents):
        if seeds is not None and hasattr(agent, "seed"):
            agent.seed(seeds[player])
        if hasattr(agent, "start_deal"):
            agent.start_deal(player, rules)


def play_deal(game: Game, agents: Sequence[object], seeds: Sequence[int] | None = None,
              match_score: tuple[int, int] | None = None) -> DealOutcome:
    """Play ``game`` to the end with ``agents[p]`` in seat ``p``; returns the outcome.

    ``seeds[p]`` (if given) re-seeds agent ``p`` before the deal, so a deal's play depends only on the deal and
    the seeds, not on what the agents played before. Then both agents are told the deal starts. ``match_score``:
    the game points of players 0 and 1 in the Bummerl this deal belongs to (R17), shown to both in their
    information sets.
    """
    if getattr(game, "num_players", 2) != 2:  # else an IndexError at the third seat
        raise ValueError("play_deal plays the two-player game; a three-player deal (R21) is played by "
                         "eval.three_tournament")
    if len(agents) != 2:
        raise ValueError(f"play_deal needs two agents (one per seat), got {len(agents)}")
    if agents[0] is agents[1]:
        raise ValueError("play_deal needs two distinct agent objects (an agent may keep per-seat state)")
    begin_deal(agents, game.rules, seeds)
    times: tuple[list[float], list[float]] = ([], [])
    clock = time.perf_counter
    while not game.is_over:
        player = game.current_player
        infoset = InformationSet(game, player, match_score)
        agent = agents[player]
        started = clock()
        action = agent.act(infoset)
        times[player].append(clock() - started)
        game.apply(validated_action(action, infoset, agent_label(agent), game.history))
    result = game.result
    return DealOutcome(
        winner=result.winner,
        game_points=result.game_points,
        reason=result.reason,
        points=tuple(result.points),
        returns=result.returns(),
        dealer=game.dealer,
        actions=list(game.history),
        decision_times=times,
    )


@dataclass
class BummerlOutcome:
    """One Bummerl (R17): the deals in order, the final game-point score and who won how much."""

    deals: list[DealOutcome]
    score: tuple[int, int]
    winner: int
    bummerl_points: int  # 1, or 2 when the loser has 0 game points and ``schneider_bummerl`` is on (R17)


MAX_DEALS_PER_BUMMERL = 1000  # a Bummerl ends after at most 13 scored deals; this only guards against 65:65 loops


def play_bummerl(
    rules: Rules,
    first_dealer: int,
    deck_for: Callable[[int], Sequence[int]],
    agents: Sequence[object],
    seeds_for: Callable[[int], Sequence[int]] | None = None,
) -> BummerlOutcome:
    """Play deals until one player has ``rules.bummerl_target`` game points (R17), the dealer alternating.

    ``deck_for(k)`` gives the deck (R4 order) of the ``k``-th deal and ``seeds_for(k)`` the agents' seeds for it,
    so a duplicate Bummerl with the seats swapped sees the same deck sequence. Scoring is
    :class:`sixtysix_env.match.Match`'s: a deal not scored (R15, 65:65) counts for nobody but still passes the
    deal on; the loser receives two Bummerl with 0 game points when ``schneider_bummerl`` is on.
    """
    match = Match(rules, first_dealer=first_dealer)  # R17 scoring is the engine's, not re-implemented here
    deals: list[DealOutcome] = []
    finished = None
    while finished is None:
        if len(deals) >= MAX_DEALS_PER_BUMMERL:
            raise RuntimeError(f"Bummerl did not end after {MAX_DEALS_PER_BUMMERL} deals (only unscored deals?)")
        number = len(deals)
        game = match.new_deal(deck=list(deck_for(number)))
        deals.append(play_deal(game, agents, None if seeds_for is None else seeds_for(number),
                               match_score=match.bummerl_score))
        finished = match.record_deal(game)
    return BummerlOutcome(
        deals=deals, score=tuple(finished.scores), winner=finished.winner, bummerl_points=finished.marks
    )


__all__ = ["BummerlOutcome", "DealOutcome", "IllegalActionError", "agent_label", "begin_deal", "play_bummerl",
           "play_deal"]
