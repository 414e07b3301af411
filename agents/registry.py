"""Build agents from spec strings: ``random``, ``greedy``, ``pimc:samples=30``, ``ismcts:iterations=2000,seconds=0.1``.

A spec is a registered name, optionally ``:`` and comma-separated ``key=value`` parameters. Values are parsed as
int, float, bool (true/false) or left as text, then passed to the agent's constructor as keyword arguments.
Unknown names and parameters raise ``ValueError`` naming what is wrong and what is accepted.
"""

from __future__ import annotations

import inspect
import math
import threading
from typing import Any, Callable

from sixtysix_env.rules import Rules

from .base import MODELS_DIR, Agent, RandomAgent, plain_seed

_REGISTRY: dict[str, Callable[..., Agent]] = {}


def register(name: str, factory: Callable[..., Agent]) -> None:
    _REGISTRY[name] = factory


def registered_names() -> list[str]:
    """Every agent name a spec may start with, aliases included."""
    _load_builtin_agents()
    return sorted(set(_REGISTRY) | set(ALIASES))


def _parse_value(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if not text.isascii() or "_" in text:  # int() and float() read '٣' as 3 and '1_000' as 1000: kept as text
        return text
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        # "nan" and "inf" parse as floats, but no parameter takes them: kept as text, each agent's check names them
        return value if math.isfinite(value) else text
    return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``'pimc:samples=30,seconds=0.1'`` -> ``('pimc', {'samples': 30, 'seconds': 0.1})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"malformed agent spec {spec!r}: expected a name such as 'random' or 'pimc:samples=30'")
    name, colon, params_text = spec.strip().partition(":")
    params: dict[str, Any] = {}
    if colon and not params_text.strip():
        raise ValueError(f"malformed agent spec {spec!r}: no parameters after ':' (write {name.strip()!r} alone, or "
                         f"{name.strip()}:key=value)")
    if params_text:
        for item in params_text.split(","):
            key, sep, value = item.partition("=")
            if not sep or not key.strip() or not value.strip():
                raise ValueError(f"malformed agent spec {spec!r}: parameter {item!r} is not key=value")
            if key.strip() in params:
                raise ValueError(f"malformed agent spec {spec!r}: parameter {key.strip()!r} is given twice")
            params[key.strip()] = _parse_value(value.strip())
    return name.strip(), params


def with_parameter(spec: str, key: str, value: str) -> str:
    """``spec`` with parameter ``key`` set to ``value`` (added, or replacing the spec's own): ``expert`` ->
    ``expert:prune=none``, ``pimc:samples=9,prune=0.1`` -> ``pimc:samples=9,prune=none``."""
    name, _, params = spec.strip().partition(":")
    kept = [item for item in params.split(",") if item.strip() and item.partition("=")[0].strip() != key]
    return f"{name}:{','.join(kept + [f'{key}={value}'])}"


def split_agent_list(text: str) -> list[str]:
    """Split a comma-separated agent list; ``key=value`` pieces continue the previous spec's parameters."""
    specs: list[str] = []
    for piece in text.split(","):
        piece = piece.strip()
        if not piece:
            raise ValueError(f"empty agent name in agent list {text!r}")
        key, has_equals, _ = piece.partition("=")
        if has_equals and ":" not in key:
            if not specs or ":" not in specs[-1]:
                raise ValueError(
                    f"agent list {text!r}: parameter {piece!r} does not follow an agent with parameters "
                    "(write name:key=value,key=value)"
                )
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs


def _suit_members(*members: str) -> str:
    """The spec of the suit networks ``models/suit_<member>_standard.npz``, their values averaged (agents/suit.py)."""
    return "suit:path=" + "+".join(str(MODELS_DIR / f"suit_{member}_standard.npz") for member in members)


# Names that stand for another agent with fixed parameters (a spec's own parameters override them): ``expert``
# is the strongest search agent at its measured defaults (docs/strength.md: heuristic rollouts over worlds inferred
# from the opponent's play, session 4; faster and Bummerl-aware since session 9; on two threads with the network
# prior since session 21, the prior weighed more since session 28, the policy-iteration network as the prior since
# session 39; in a Bummerl valuing its scores as a player who wins 60 % of the deals since session 51), ``expert_v6``
# the ``expert`` of sessions 39-50, ``expert_v5`` the ``expert`` of sessions 28-38, ``expert_v4`` the ``expert`` of
# sessions 21-27, ``expert_v3`` the ``expert`` of sessions 9-20, ``expert_v2`` the ``expert`` of sessions 4-8,
# ``expert_v1`` the ``expert`` of sessions 2-3 (PIMC with the heuristic prior), ``pimc_v1`` the PIMC of release 0.1
# (its defaults before the compiled core), ``ismcts_v1`` the ISMCTS before its opponent model (session 6), all kept
# so benchmarks can still name them; ``distilled`` the network distilled from ``expert_v1``.
# The expert of sessions 9-20 (expert_v3): the rollouts' small transposition table (table_bits, the default) and, in
# a Bummerl, the chance to win it as the objective (R17; a deal on its own is still valued in game points).
_SESSION_9_EXPERT = "rollout:endgame=last_trick,lead_samples=6,close_samples=6,inference=heuristic,objective=bummerl"


def _expert_with_prior(prior: str, prior_weight: int = 512) -> str:
    """The expert of session 21 on: session 9's search on two threads, shrunk toward a network's action values."""
    return f"{_SESSION_9_EXPERT},threads=2,prior={prior},prior_weight={prior_weight}"


# Session 51: against the heuristic `expert` wins 61 % of the deals, so in a Bummerl it values the scores (R17) as a
# player who wins 60 % of them, not as an equal player (+0.0013 [-0.0023, +0.0049] and +0.0007 [-0.0036, +0.0049]
# in Bummerl equity per deal over 1,000 tuning pairs each, clock-free and timed, docs/strength.md "Session 51").
# A lone deal is valued in game points as before.
_SESSION_51_BUMMERL = "bummerl_win_chance=0.6"


ALIASES = {
    # Session 21: the same search with twice the worlds on a second thread, shrunk toward the suit_pair network's
    # action values (each alone was worth a few hundredths that no match resolved; together +0.086 [+0.043, +0.130]
    # on 2,000 test pairs, docs/strength.md "Session 21").
    # Session 28: the prior counted as 512 worlds instead of 128 (+0.018 [+0.003, +0.034] per deal over 5,000
    # tuning pairs with the luck of the draws taken out, docs/strength.md "Session 28").
    # Session 39: the prior is suit_iterated, suit_pair after two steps of policy iteration (+0.039 [+0.002, +0.075]
    # per deal over 2,000 tuning pairs, +0.014 [-0.014, +0.041] with the luck of the draws taken out,
    # docs/strength.md "Session 39"). Session 44: suit_averaged as the prior was no better (-0.009 [-0.040, +0.023]
    # over 2,000 tuning pairs, docs/strength.md "Session 44").
    "expert": f"{_expert_with_prior('suit_iterated')},{_SESSION_51_BUMMERL}",
    "expert_v6": _expert_with_prior("suit_iterated"),
    "expert_v5": _expert_with_prior("suit_pair"),
    "expert_v4": _expert_with_prior("suit_pair", prior_weight=128),
    "expert_v3": _SESSION_9_EXPERT,
    # The expert of sessions 4-8: the same rollouts with the process's large table (slower rollouts, fewer worlds;
    # its closing checks are now as fast as the new one's, with the same answers), game points in a Bummerl too.
    "expert_v2": "rollout:endgame=last_trick,lead_samples=6,close_samples=6,inference=heuristic,table_bits=18",
    "expert_v1": "pimc:samples=1000,override_margin=0.25",
    "pimc_v1": "pimc:samples=200",
    # ismcts before session 6: plain SO-ISMCTS (the opponent searched too, uniform worlds, playout-policy leaves).
    "ismcts_v1": "ismcts:leaf=policy,opponent=search,inference=none",
    # The network distilled from expert_v1 (train/distill.py, docs/training.md): every decision, no search.
    "distilled": f"ppo:path={MODELS_DIR / 'distilled_standard.zip'}",
    # The shipped PPO network fine-tuned by train/vector_ppo.py (privileged critic, opponent pool): no search.
    "ppo_vector": f"ppo:path={MODELS_DIR / 'ppo_vector_standard.zip'}",
    # ppo_vector fine-tuned 30 M steps more against the compiled heuristic (configs/vector_ppo_heuristic.yaml).
    "ppo_vector_heuristic": f"ppo:path={MODELS_DIR / 'ppo_vector_heuristic_standard.zip'}",
    # distilled fine-tuned 60 M steps by PPO against the compiled heuristic (configs/vector_ppo_from_distilled.yaml):
    # the strongest network of sessions 5-10, no search.
    "ppo_distilled_heuristic": f"ppo:path={MODELS_DIR / 'ppo_distilled_heuristic_standard.zip'}",
    # Session 11: action values of rollouts of the true deal fitted on 4.58 M decisions (fit.target q,
    # configs/distill_true_world.yaml): the strongest network, no search (docs/training.md).
    "ppo_true_world": f"ppo:path={MODELS_DIR / 'ppo_true_world_standard.zip'}",
    # Session 13: four q networks of that recipe (other seeds and deal ranges) merged into one MaskablePPO model
    # that plays their mean values (sixtysix distill merge): the strongest network, no search (docs/training.md).
    "ppo_ensemble": f"ppo:path={MODELS_DIR / 'ppo_ensemble_standard.zip'}",
    # The three-player policy (R21; configs/ppo_three.yaml, docs/training.md "Three players"): from any folder.
    "ppo_three": f"ppo:path={MODELS_DIR / 'ppo_three.zip'}",
    # Session 14: three networks that share their weights over the suits (agents/suit.py, train/suit_network.py),
    # fitted to the true-deal labels (b and c with the late phase-1 labels drawn from the view); the mean of their
    # values plays: level with suit_two, no search (docs/training.md, "Session 14").
    "suit_ensemble": _suit_members("a", "b", "c"),
    # Session 15: one suit network with a second round of exchange between the suits (train/suit_network.py
    # --rounds 2) on member a's labels: level with suit_ensemble at 60 % of its time, no search (docs/training.md,
    # "Session 15").
    "suit_two": _suit_members("two"),
    # Session 16: two suit networks on member a's labels, their values averaged: two rounds fitted for 10 epochs
    # and three rounds for 8. The strongest network, no search: +0.039 [+0.022, +0.057] over suit_two on 10,000 test
    # pairs (docs/training.md, "Session 16").
    "suit_pair": _suit_members("two_long", "three"),
    # Session 38: suit_pair's two members fine-tuned on a second step of policy iteration against the heuristic
    # (configs/distill_iterated.yaml: the value of each action when suit_pair, not the heuristic, plays the rest of
    # the deal against the heuristic). The strongest network, no search: +0.036 [+0.024, +0.049] over suit_pair on
    # 20,000 tuning pairs (docs/training.md, "Session 38").
    "suit_iterated": _suit_members("two_long_iterated", "three_iterated"),
    # Session 43: suit_iterated's members fine-tuned on self-play labels (configs/distill_selfplay.yaml: the value of
    # each action when suit_iterated plays the rest of the deal for both players), averaged with suit_iterated's own
    # two: closer to expert than suit_iterated, as strong against the heuristic (docs/training.md, "Session 43").
    "suit_averaged": _suit_members("two_long_selfplay", "three_selfplay", "two_long_iterated", "three_iterated"),
    # Session 48: suit_averaged's recipe on twice the self-play labels (80,000 deals, 1.19 M decisions; session 47's
    # candidate M). The network closest to expert, no search: -0.018 [-0.053, +0.017] against it and +0.337
    # [+0.318, +0.357] against the heuristic on its test seeds (docs/training.md, "Session 48").
    "suit_averaged_80k": _suit_members("two_long_selfplay80k", "three_selfplay80k", "two_long_iterated",
                                       "three_iterated"),
    # Session 50: the same recipe on 120,000 self-play deals (1.78 M decisions; session 49's candidate O). The first
    # network level with expert within issue 12's bound, no search: +0.004 [-0.033, +0.042] against it (int8) and
    # +0.316 [+0.297, +0.335] against the heuristic on its test seeds (docs/training.md, "Session 50").
    "suit_averaged_120k": _suit_members("two_long_selfplay120k", "three_selfplay120k", "two_long_iterated",
                                        "three_iterated"),
}


def resolve_alias(name: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An alias's agent name and parameters, the spec's own parameters taking precedence."""
    if name not in ALIASES:
        return name, params
    base_name, base_params = parse_spec(ALIASES[name])
    return base_name, {**base_params, **params}


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build an agent from a spec string; ``seed`` seeds its random generator."""
    _load_builtin_agents()
    seed = plain_seed(seed)  # a numpy integer is an int from here on, for the agent's helpers too
    own_name, own_params = parse_spec(spec)
    name, params = resolve_alias(own_name, own_params)
    factory = _REGISTRY.get(name)
    if factory is None:
        known = sorted(set(_REGISTRY) | set(ALIASES))
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; known agents: {', '.join(known)}")
    accepted = [
        parameter.name
        for parameter in inspect.signature(factory).parameters.values()
        if parameter.kind in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD) and parameter.name != "seed"
    ]
    for key in params:
        if key not in accepted:
            raise ValueError(
                f"unknown parameter {key!r} for agent {name!r} in spec {spec!r}; "
                f"accepted: {', '.join(accepted) or 'none'}"
            )
    try:
        agent = factory(seed=seed, **params)
    except (TypeError, ValueError, OSError) as error:  # OSError: a model or weights file missing or unreadable
        raise ValueError(f"bad parameters in agent spec {spec!r}: {error}") from error
    # Only the spec's own parameters: an alias may set one that a parameter given beside it makes inert
    # (``expert:objective=deal`` leaves the alias's bummerl_win_chance unread), which is no mistake of the user's.
    inert = agent.inert_parameters()
    ignored = [key for key in own_params if key in inert]
    if ignored:
        reasons = "; ".join(f"{key} would be ignored, since {inert[key]}" for key in ignored)
        raise ValueError(f"agent spec {spec!r}: {reasons}; leave {'it' if len(ignored) == 1 else 'them'} out")
    agent.name = spec.strip()
    return agent


def agent_for_rules(spec: str, rules: Rules, seed: int | None = 0) -> Agent:
    """The agent of ``spec`` with a deal of ``rules`` started: an unknown agent or parameter, and an agent that
    cannot play the rules (a network fitted for others, R19-R21; a two-player search given the three-player game),
    raise ``ValueError`` by name here. Tools call it on their specs before any work, not at a long run's first
    decision."""
    if not isinstance(rules, Rules):  # a preset's name failed deep in start_deal, or passed an agent unchecked
        raise ValueError(f"rules must be a Rules object (Rules.preset(name)), got {rules!r}")
    agent = make_agent(spec, seed=seed)
    agent.start_deal(0, rules)
    return agent


_loaded = False  # every built-in agent registered
_loading = False  # this process is registering them now (a module imported meanwhile may build an agent)
# Threads that build agents at once (the browser app's games) wait for the whole registry, not a half-filled one.
_load_lock = threading.RLock()


def _load_builtin_agents() -> None:
    """Register the built-in agents (imported lazily so importing the registry stays cheap)."""
    global _loaded, _loading
    if _loaded:
        return
    with _load_lock:
        if _loaded or _loading:
            return
        _loading = True
        try:
            _register_builtin_agents()
        finally:
            _loading = False
        _loaded = True


def _register_builtin_agents() -> None:
    register("random", RandomAgent)
    import importlib

    for module_name, names in (
        ("agents.rule_based", {"greedy": "GreedyAgent", "heuristic": "HeuristicAgent"}),
        ("agents.pimc", {"pimc": "PimcAgent"}),
        ("agents.ismcts", {"ismcts": "IsmctsAgent"}),
        ("agents.rollout", {"rollout": "RolloutAgent"}),
        ("agents.ppo", {"ppo": "PpoAgent"}),
        ("agents.suit", {"suit": "SuitAgent"}),
        ("agents.blend", {"blend": "BlendAgent"}),
    ):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            continue
        for name, class_name in names.items():
            register(name, getattr(module, class_name))
