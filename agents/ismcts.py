"""Single-observer information-set Monte Carlo tree search (SO-ISMCTS, Cowling, Powley & Whitehouse 2012).

The tree is built over the observer's information sets: a node is the sequence of actions since the decision,
and every action in Sixty-six is public (cards played, marriages shown, exchange, close, declare, draw, pass), so
the opponent's nodes are keyed by what the observer sees. The cards drawn from the talon are hidden chance
events fixed by the determinization, not tree edges.

Each iteration:

1. determinizes (``infoset.determinize``: a uniform hidden layout consistent with what the observer knows);
2. descends from the root, at each node choosing by UCB1 among the children whose actions are legal in this
   determinization, with *availability counts* (a child's exploration term uses how often it was available, not
   the parent's visits);
3. expands one untried legal action;
4. evaluates the new position by the PIMC playout (:func:`agents.pimc.playout_value`: the fast default policy
   until phase 2, then the exact solver, R8), or with ``leaf_solver=False`` by the policy to the end;
5. backs up the observer's game points divided by 3 (rewards in [-1, 1]); opponent nodes maximise the negation.

The action played is the root child visited most. ``iterations`` and ``seconds`` bound the work (``seconds=None``:
no time limit, so choices depend only on the seed).
"""

from __future__ import annotations

import math
import time

from sixtysix_env import InformationSet
from sixtysix_env.game import OVER, Game

from .base import Agent
from .pimc import playout_value, policy_action, time_budget


class _Node:
    """Statistics of one action edge and the information set it leads to (rewards from the observer's side)."""

    __slots__ = ("children", "visits", "total", "available")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.total = 0.0
        self.available = 1


def policy_playout_value(game: Game, player: int) -> int:
    """Game points for ``player`` when both sides play the default policy to the end (``game`` is modified)."""
    while game.stage != OVER:
        game.apply(policy_action(game))
    return game.result.returns()[player]


class IsmctsAgent(Agent):
    """SO-ISMCTS (see the module docstring). ``exploration`` is the UCB1 constant for rewards in [-1, 1]."""

    name = "ismcts"

    def __init__(self, seed: int | None = None, iterations: int = 2000, seconds: float | None = 0.1,
                 exploration: float = 0.7, leaf_solver: bool = True):
        super().__init__(seed)
        seconds = time_budget(seconds)
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
            raise ValueError(f"iterations must be a positive integer, got {iterations!r}")
        if isinstance(exploration, bool) or not isinstance(exploration, (int, float)) or exploration < 0:
            raise ValueError(f"exploration must be a non-negative number, got {exploration!r}")
        if not isinstance(leaf_solver, bool):
            raise ValueError(f"leaf_solver must be true or false, got {leaf_solver!r}")
        self.iterations = iterations
        self.seconds = seconds
        self.exploration = float(exploration)
        self.leaf_solver = leaf_solver
        self.last_iterations = 0  # iterations run at the last decision (for measurements)

    def search(self, infoset: InformationSet) -> _Node:
        """Run the iterations for one decision; returns the root (its children are the legal actions tried)."""
        if not infoset.legal_actions:
            raise ValueError("no legal action: the deal is over or it is not this player's turn")
        root = _Node()
        start = time.perf_counter()
        done = 0
        while done < self.iterations:
            if self.seconds is not None and done:
                elapsed = time.perf_counter() - start
                if elapsed + 2 * elapsed / done > self.seconds:  # the next iteration (with margin) would overrun
                    break
            self._iterate(root, infoset.determinize(self.rng), infoset.player)
            done += 1
        self.last_iterations = done
        return root

    def _iterate(self, root: _Node, world: Game, me: int) -> None:
        node = root
        path = [root]
        log = math.log
        sqrt = math.sqrt
        exploration = self.exploration
        while True:
            if world.stage == OVER:
                reward = world.result.returns()[me]
                break
            legal = world.legal_actions()
            children = node.children
            untried = []
            for action in legal:
                child = children.get(action)
                if child is None:
                    untried.append(action)
                else:
                    child.available += 1
            if untried:
                action = untried[int(self.rng.random() * len(untried))]
                child = children[action] = _Node()
                world.apply(action)
                path.append(child)
                if self.leaf_solver:
                    reward = playout_value(world, me)
                else:
                    reward = policy_playout_value(world, me)
                break
            sign = 1.0 if world.to_move == me else -1.0
            best_score = -math.inf
            best_action = legal[0]
            for action in legal:
                child = children[action]
                score = sign * child.total / child.visits + exploration * sqrt(log(child.available) / child.visits)
                if score > best_score:
                    best_score = score
                    best_action = action
            world.apply(best_action)
            node = children[best_action]
            path.append(node)
        reward /= 3.0  # R16: game points lie in -3..3
        for visited in path:
            visited.visits += 1
            visited.total += reward

    def act(self, infoset: InformationSet) -> int:
        if getattr(infoset, "num_players", 2) == 3:
            raise ValueError("ismcts plays the two-player game only; for three players (R21) use pimc")
        legal = infoset.legal_actions
        if len(legal) == 1:
            return legal[0]
        root = self.search(infoset)
        # The most visited root action (ties: the better mean, then the first in legal order).
        best_action = legal[0]
        best_key = (-1, -math.inf)
        for action in legal:
            child = root.children.get(action)
            if child is None:
                continue
            key = (child.visits, child.total / child.visits)
            if key > best_key:
                best_key = key
                best_action = action
        return best_action


__all__ = ["IsmctsAgent", "policy_playout_value"]
