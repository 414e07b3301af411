"""The agent interface: an agent sees what its player may know and returns a legal action.

An agent is told when a deal starts (``start_deal``), may keep state between decisions, and chooses with
``act(infoset)``. It never sees the engine's full state: :class:`~sixtysix_env.infoset.InformationSet` holds exactly
what docs/rules.md "What a player may know" lists, and search agents sample hidden layouts with
``infoset.determinize(rng)``.
"""

from __future__ import annotations

import random
from pathlib import Path

from sixtysix_env import InformationSet, Rules
from sixtysix_env.integers import optional_int

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"  # the shipped networks and tuned numbers


def legal_actions_to_choose(infoset: InformationSet) -> list[int]:
    """The legal actions ``act`` chooses from; a ``ValueError`` when there are none (the deal is over, or it is not
    this player's turn), the one message every agent gives for that."""
    legal = infoset.legal_actions
    if not legal:
        raise ValueError(f"no legal action for player {infoset.player}: the deal is over or it is not this player's "
                         "turn")
    return legal


def refuse_three_players(rules: Rules, what: str) -> None:
    """A ``ValueError`` naming ``what`` (an agent that searches the two-player game only) for the rules of a
    three-player deal (R21), where it would otherwise fail deep inside its search. Such agents call it in
    ``start_deal`` and in ``act`` (with the information set's rules), so a tournament can refuse them up front."""
    if rules.players == 3:
        raise ValueError(f"{what} plays the two-player game only; for three players (R21) use pimc, heuristic, greedy, "
                         "random or the three-player policy ppo_three")


def rules_name(rules: Rules) -> str:
    """How messages name a rule set: its preset, or "a custom rule set" (a preset with switches overridden)."""
    return rules.preset_name or "a custom rule set"


# Switches that score Bummerls and Parties (R17 Schneider, R18) and nothing else: no deal is played otherwise, and
# no network reads them (the observation's rule flags and match score do not), so a network fitted under one value
# plays under the other. ``bummerl_target`` is not among them: the observation scales the match score by it.
MATCH_SCORING_SWITCHES = ("schneider_bummerl", "partie_bummerl")


def differing_switches(first: Rules, second: Rules, ignore: tuple[str, ...] = ()) -> list[str]:
    """The switches whose values differ between two rule sets, in the order of ``Rules`` (``ignore`` left out)."""
    theirs = second.to_dict()
    return [name for name, value in first.to_dict().items() if theirs[name] != value and name not in ignore]


def unread_switches(fitted: Rules) -> tuple[str, ...]:
    """The switches no input of a network fitted for ``fitted`` reads: the match scoring, and with three players
    (R21) the Bummerl's target too (their observation holds no match score)."""
    return MATCH_SCORING_SWITCHES + (("bummerl_target",) if fitted.players == 3 else ())


def plays_like(fitted: Rules, rules: Rules) -> bool:
    """Whether a network fitted for ``fitted`` plays the deals of ``rules``: equal up to :func:`unread_switches`."""
    return rules == fitted or not differing_switches(fitted, rules, ignore=unread_switches(fitted))


def refuse_other_rules(what: str, fitted: Rules, rules: Rules) -> None:
    """A ``ValueError`` naming ``what`` (a network an agent searches with) and the switches that differ when
    ``rules`` are not those it was fitted for (up to :func:`unread_switches`); agents call
    it when a deal starts, so a tournament refuses them before it writes anything."""
    if not plays_like(fitted, rules):
        differing = differing_switches(fitted, rules, ignore=unread_switches(fitted))
        raise ValueError(f"{what} was fitted for the rules {rules_name(fitted)!r}, not {rules_name(rules)!r} "
                         f"(switches differ: {', '.join(differing)})")


def plain_seed(seed: object) -> int | None:
    """``seed`` as None or a Python int: a numpy integer (``rng.integers(...)``) becomes an int, which
    ``random.Random`` needs; anything else (a float, a text) is a ``ValueError`` naming it."""
    return optional_int(seed, "seed")


class Agent:
    """Base class. Subclasses override :meth:`act`; ``name`` is the spec string that rebuilds the agent."""

    name = "agent"

    def __init__(self, seed: int | None = None):
        self.rng = random.Random(plain_seed(seed))

    def seed(self, seed: int | None) -> None:
        """Re-seed the agent's own random generator (the tournament does this per deal for reproducibility)."""
        self.rng.seed(plain_seed(seed))

    def start_deal(self, player: int, rules: Rules) -> None:
        """Called before each deal with the seat the agent plays."""

    def act(self, infoset: InformationSet) -> int:
        raise NotImplementedError

    def inert_parameters(self) -> dict[str, str]:
        """The constructor parameters that have no effect on this agent as configured, each with what would make it
        count (``prior_weight``: "it counts only with a prior network (prior=...)"). An agent spec that gives one is
        refused by :func:`agents.registry.make_agent` rather than silently ignored. None by default."""
        return {}

    def __call__(self, infoset: InformationSet) -> int:
        return self.act(infoset)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"

    def act(self, infoset: InformationSet) -> int:
        legal = legal_actions_to_choose(infoset)
        return legal[int(self.rng.random() * len(legal))]
