"""Two searches, one decision: ``expert``'s rollouts and the information-set tree, their values averaged.

``expert`` (agents.rollout) compares every action in the same sampled worlds with the same random stream, and stops
early where one action is clearly best: at 0.1 s per decision it uses about half of its time (docs/strength.md,
session 60: a median of 36 ms). ``ismcts`` with the same network at its root (session 60) is level with it head to
head, on a different search: a tree over the observer's information sets, each action valued in worlds of its own.
Both model the opponent by the heuristic (R7-R13 played by its rules), so their errors are not independent, but their
ways of reaching a value differ.

``blend`` runs ``expert`` first, on at most ``rollout_share`` of the budget. Where it decided by searched values
between two or more actions of an open talon (a phase-1 lead or follow, R7), the tree searches the same decision on
the rest of the budget, and the action with the best mix of the two values wins: each search's values in game points
(R16), centred over the actions ``expert`` kept, weighed ``1 - tree_mix`` and ``tree_mix``. Everywhere else (one
action left, the talon exhausted or closed, rules the core does not implement) ``expert``'s choice stands.
"""

from __future__ import annotations

import time

from sixtysix_env import InformationSet, Rules

from .base import Agent, refuse_three_players
from .ismcts import IsmctsAgent
from .pimc import derived_seed, time_budget

ROLLOUT_HELPER = "blend-rollout"  # the names the members' seeds are derived with (pimc.derived_seed)
TREE_HELPER = "blend-tree"
MIN_TREE_SECONDS = 1e-3  # the tree's budget when the rollouts used all of theirs (it still runs one slice)


def blended_values(rollout_values: dict[int, float], game_point_scale: float, tree_values: dict[int, float],
                   tree_mix: float) -> dict[int, float]:
    """The mix of the two searches' values of the actions in ``rollout_values``: the rollouts' (in a unit where one
    game point is ``game_point_scale``) and the tree's (rewards: game points / 3, R16), each turned into game points
    and centred over those actions, weighed ``1 - tree_mix`` and ``tree_mix``."""
    actions = list(rollout_values)
    missing = [action for action in actions if action not in tree_values]
    if missing:
        raise ValueError(f"the tree has no value for actions {missing}")
    rollout_points = {action: rollout_values[action] / game_point_scale for action in actions}
    tree_points = {action: 3.0 * tree_values[action] for action in actions}
    rollout_centre = sum(rollout_points.values()) / len(actions)
    tree_centre = sum(tree_points.values()) / len(actions)
    return {action: (1.0 - tree_mix) * (rollout_points[action] - rollout_centre)
            + tree_mix * (tree_points[action] - tree_centre) for action in actions}


class BlendAgent(Agent):
    """``expert`` and ``ismcts:prior=PRIOR,prior_weight=W`` on one budget (see the module docstring).

    ``seconds``: the budget per decision (``None``: no clock; then ``samples`` worlds and ``iterations`` iterations
    bound the two searches); ``rollout_share``: the share of the budget ``expert`` may use (the tree gets what it
    leaves); ``tree_mix``: the tree's weight in the mixed values (0: ``expert`` alone, 1: the tree alone among the
    actions ``expert`` kept); ``prior`` and ``prior_weight``: the network at the tree's root and its weight in visits
    (``expert`` keeps its own); ``threads``: ``expert``'s rollout threads."""

    name = "blend"

    def __init__(self, seed: int | None = None, seconds: float | None = 0.1, rollout_share: float = 0.5,
                 tree_mix: float = 0.5, samples: int = 2000, iterations: int = 200_000,
                 prior: str = "suit_iterated", prior_weight: float = 512.0, threads: int = 2):
        super().__init__(seed)
        self.seconds = time_budget(seconds)
        for name, value in (("rollout_share", rollout_share), ("tree_mix", tree_mix)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"{name} must be a number between 0 and 1, got {value!r}")
        if self.seconds is not None and rollout_share == 0:
            raise ValueError("rollout_share must be above 0 with a clock: expert decides first")
        self.rollout_share = float(rollout_share)
        self.tree_mix = float(tree_mix)
        from .registry import resolve_alias
        from .rollout import RolloutAgent

        # expert's own parameters with blend's budget, samples and threads: built directly, so that a bad value is
        # named as blend's parameter, not inside a spec the user never wrote.
        rollout_seconds = None if self.seconds is None else self.rollout_share * self.seconds
        _, rollout_params = resolve_alias("expert", {"seconds": rollout_seconds, "samples": samples,
                                                     "threads": threads})
        self.rollout = RolloutAgent(seed=derived_seed(seed, ROLLOUT_HELPER), **rollout_params)
        self.rollout.name = "expert"
        self.tree = IsmctsAgent(seed=derived_seed(seed, TREE_HELPER), iterations=iterations, seconds=self.seconds,
                                prior=prior, prior_weight=prior_weight)
        self.blended_decisions = 0  # decisions where both searches' values decided (for measurements)
        self.changed_decisions = 0  # of those, where the choice differs from expert's
        self.last_blend: dict[int, float] = {}  # the last blended decision's mixed values

    def inert_parameters(self) -> dict[str, str]:
        inert = {}
        if self.seconds is None:
            inert["rollout_share"] = "it shares out the clock (it counts only with seconds=...)"
        if self.tree_mix == 0:  # the tree is never searched
            for name in ("iterations", "prior", "prior_weight"):
                inert[name] = "tree_mix=0 never searches the tree it sets"
        else:
            inert.update(self.tree.inert_parameters())
        return inert

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        self.rollout.seed(derived_seed(seed, ROLLOUT_HELPER))
        self.tree.seed(derived_seed(seed, TREE_HELPER))

    def start_deal(self, player: int, rules: Rules) -> None:
        refuse_three_players(rules, "blend")
        self.rollout.start_deal(player, rules)
        self.tree.start_deal(player, rules)

    def act(self, infoset: InformationSet) -> int:
        refuse_three_players(infoset.rules, "blend")
        start = time.perf_counter()
        self.last_blend = {}
        rollout_choice = self.rollout.act(infoset)
        rollout_values = self.rollout.decision_values
        if len(rollout_values) < 2 or infoset.closed_by is not None or self.tree_mix == 0:
            return rollout_choice
        if self.seconds is not None:
            self.tree.seconds = max(self.seconds - (time.perf_counter() - start), MIN_TREE_SECONDS)
        children = self.tree.search(infoset)
        if any(action not in children for action in rollout_values):
            return rollout_choice  # the tree never reached an action (rules the core does not implement)
        scale = self.rollout.game_point_scale(infoset)  # what one game point is in expert's values
        mixed = blended_values(rollout_values, scale, self.tree.shrunk_means(children), self.tree_mix)
        self.last_blend = mixed
        # Of equal mixed values, expert's own choice, then the lowest id.
        best = max(mixed, key=lambda action: (mixed[action], action == rollout_choice, -action))
        self.blended_decisions += 1
        self.changed_decisions += best != rollout_choice
        return best


__all__ = ["BlendAgent", "blended_values"]
