"""Speed of peer game implementations, measured in the same run as our own benchmark.

Peers are optional (``pip install -e '.[peers]'``) and imported lazily.  Each measurement
function returns a rate (float) or ``None`` when its peer is not installed; the reason is
given by :func:`available_peers` (and emitted as a ``RuntimeWarning``).

Every rate is ``count / elapsed`` over ``seconds`` of wall time (``time.perf_counter``),
after a short warm-up on the same game stream.
"""

from __future__ import annotations

import importlib
import pkgutil
import random
import re
import time
import warnings
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Callable

import numpy as np

WARMUP_SECONDS = 0.2
STEPS_BETWEEN_CLOCK_READS = 64
UNAVAILABLE = "unavailable: "
# The PettingZoo classic envs that `sixtysix bench` measures, and so the ones available_peers() reports on.
PETTINGZOO_PEER_ENVS = ("leduc_holdem_v4", "texas_holdem_v4")


# --------------------------------------------------------------------------- timing


def _rate(run_steps: Callable[[int], None], seconds: float) -> float:
    """Warm up, then call ``run_steps(n)`` in chunks for ``seconds``; return steps per second."""
    _run_for(run_steps, min(WARMUP_SECONDS, seconds / 10))
    steps, elapsed = _run_for(run_steps, seconds)
    return steps / elapsed


def _run_for(run_steps: Callable[[int], None], seconds: float) -> tuple[int, float]:
    steps, start = 0, time.perf_counter()
    while True:
        run_steps(STEPS_BETWEEN_CLOCK_READS)
        steps += STEPS_BETWEEN_CLOCK_READS
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps, elapsed


def _unavailable(reason: str) -> None:
    warnings.warn(f"benchmark peer {reason}", RuntimeWarning, stacklevel=3)
    return None


def _package_version(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


# --------------------------------------------------------------------------- OpenSpiel euchre


def _import_pyspiel() -> tuple[ModuleType | None, str]:
    """Return ``(pyspiel, "")`` or ``(None, reason)``."""
    try:
        return importlib.import_module("pyspiel"), ""
    except Exception as error:  # ImportError, or a broken binary wheel
        return None, f"open_spiel not importable ({type(error).__name__}: {error})"


def openspiel_euchre_tensor_kind() -> str | None:
    """Which per-decision tensor the euchre measurement requests, or ``None`` without open_spiel.

    ``"observation_tensor"`` when ``game.get_type().provides_observation_tensor``; otherwise
    ``"information_state_tensor"`` (open_spiel 2.0.2's euchre provides only that one, 935 floats).
    """
    pyspiel, _ = _import_pyspiel()
    if pyspiel is None:
        return None
    game_type = pyspiel.load_game("euchre").get_type()
    if game_type.provides_observation_tensor:
        return "observation_tensor"
    return "information_state_tensor" if game_type.provides_information_state_tensor else None


def _euchre_random_play(pyspiel: ModuleType, seed: int, tensor_kind: str | None) -> Callable[[int], None]:
    """Return ``run(n)``: play ``n`` uniform-random euchre decisions, sampling chance outcomes."""
    game = pyspiel.load_game("euchre")
    rng = random.Random(seed)
    state = game.new_initial_state()

    def run(decisions: int) -> None:
        nonlocal state
        while decisions:
            if state.is_terminal():
                state = game.new_initial_state()
            elif state.is_chance_node():
                outcomes, probabilities = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probabilities)[0])
            else:
                legal_actions = state.legal_actions()
                if tensor_kind is not None:
                    getattr(state, tensor_kind)(state.current_player())
                state.apply_action(legal_actions[rng.randrange(len(legal_actions))])
                decisions -= 1

    return run


def openspiel_euchre_steps_per_second(seconds: float = 2.0, seed: int = 0) -> float | None:
    """Player decisions per second of OpenSpiel euchre with a tensor per decision (the env-loop peer).

    Uniform random play of ``pyspiel.load_game("euchre")`` (24 cards, 4 players), new game
    when terminal.  Chance nodes (the deal) are resolved by sampling ``state.chance_outcomes()``
    and are not counted.  Each counted decision calls ``state.legal_actions()``, the tensor
    for the player to move and ``state.apply_action``.  The tensor is
    ``state.observation_tensor(player)`` if ``game.get_type().provides_observation_tensor``,
    else ``state.information_state_tensor(player)`` (see :func:`openspiel_euchre_tensor_kind`).
    Returns ``None`` when open_spiel is not installed.
    """
    pyspiel, reason = _import_pyspiel()
    if pyspiel is None:
        return _unavailable(reason)
    return _rate(_euchre_random_play(pyspiel, seed, openspiel_euchre_tensor_kind()), seconds)


def openspiel_euchre_decisions_per_second(seconds: float = 2.0, seed: int = 0) -> float | None:
    """Player decisions per second of bare OpenSpiel euchre (the bare-engine-loop peer).

    As :func:`openspiel_euchre_steps_per_second` without any tensor: each counted decision is
    ``state.legal_actions()`` + ``state.apply_action``; chance steps are sampled, not counted.
    Returns ``None`` when open_spiel is not installed.
    """
    pyspiel, reason = _import_pyspiel()
    if pyspiel is None:
        return _unavailable(reason)
    return _rate(_euchre_random_play(pyspiel, seed, tensor_kind=None), seconds)


# --------------------------------------------------------------------------- PettingZoo classic


def _import_classic_env(env_name: str) -> tuple[ModuleType | None, str]:
    """Import ``pettingzoo.classic.<env_name>``, accepting any installed ``_vN`` suffix.

    ``"gin_rummy"``, ``"gin_rummy_v4"`` or ``"gin_rummy_v9"`` all resolve to the highest
    installed ``gin_rummy_vN``.  Returns ``(module, "")`` or ``(None, reason)``.
    """
    try:
        classic = importlib.import_module("pettingzoo.classic")
    except Exception as error:
        return None, f"pettingzoo not importable ({type(error).__name__}: {error})"
    base_name = re.sub(r"_v\d+$", "", env_name)
    versions = {
        int(match.group(1)): module.name
        for module in pkgutil.iter_modules(classic.__path__)
        if (match := re.fullmatch(re.escape(base_name) + r"_v(\d+)", module.name))
    }
    if not versions:
        removed = " (gin_rummy_v4 was last shipped in pettingzoo 1.26.0)" if base_name == "gin_rummy" else ""
        return None, f"pettingzoo {_package_version('pettingzoo')} has no classic env {base_name}_vN{removed}"
    module_name = env_name if env_name in versions.values() else versions[max(versions)]
    try:
        return importlib.import_module(f"pettingzoo.classic.{module_name}"), ""
    except Exception as error:  # e.g. DependencyNotInstalled when rlcard is missing
        return None, f"pettingzoo.classic.{module_name} not importable ({type(error).__name__}: {error})"


def _aec_random_play(env_module: ModuleType, seed: int) -> Callable[[int], None]:
    """Return ``run(n)``: ``n`` ``env.step`` calls of uniform random masked play, resetting when done."""
    env = env_module.env()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    agents = iter(env.agent_iter())

    def run(steps: int) -> None:
        nonlocal agents
        for _ in range(steps):
            agent = next(agents, None)
            if agent is None:  # all agents done
                env.reset()
                agents = iter(env.agent_iter())
                agent = next(agents)
            observation, reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            else:
                legal_actions = np.flatnonzero(observation["action_mask"])
                action = int(legal_actions[rng.integers(legal_actions.size)])
            env.step(action)

    return run


def pettingzoo_classic_steps_per_second(
    env_name: str = "leduc_holdem_v4", seconds: float = 2.0, seed: int = 0
) -> float | None:
    """``env.step`` calls per second of a PettingZoo classic AEC env under uniform random play.

    ``env = pettingzoo.classic.<env_name>.env()`` (the standard wrappers), ``env.reset(seed=seed)``,
    then the canonical loop: ``for agent in env.agent_iter(): env.last()``; action ``None`` if
    terminated/truncated else uniform among the ``observation["action_mask"]`` ones (numpy
    Generator); ``env.step(action)``; ``env.reset()`` when all agents are done.  Every
    ``env.step`` is counted, including the ``None`` steps of finished agents at the end of a
    hand.  ``env_name`` may omit or mismatch the ``_vN`` suffix (``"gin_rummy"``).  Returns
    ``None`` when pettingzoo, rlcard or the env is not installed.
    """
    env_module, reason = _import_classic_env(env_name)
    if env_module is None:
        return _unavailable(reason)
    return _rate(_aec_random_play(env_module, seed), seconds)


# --------------------------------------------------------------------------- inventory


def inventory_key(env_name: str) -> str:
    """The key of a PettingZoo classic env in :func:`available_peers` (``"pettingzoo_leduc_holdem"``)."""
    return "pettingzoo_" + re.sub(r"_v\d+$", "", env_name)


def peer_measurements(seconds: float) -> dict[str, Callable[[], float | None]]:
    """The peers' figures that ``sixtysix bench`` reports, by label: OpenSpiel euchre and the PettingZoo envs."""
    measurements: dict[str, Callable[[], float | None]] = {
        "OpenSpiel euchre decisions/s (bare)": lambda: openspiel_euchre_decisions_per_second(seconds),
        "OpenSpiel euchre steps/s (with observation tensor)": lambda: openspiel_euchre_steps_per_second(seconds),
    }
    for env_name in PETTINGZOO_PEER_ENVS:
        measurements[f"PettingZoo {env_name} AEC steps/s"] = (
            lambda env_name=env_name: pettingzoo_classic_steps_per_second(env_name, seconds))
    return measurements


def available_peers() -> dict[str, str]:
    """Map each peer to its version string, or to ``"unavailable: <reason>"``."""
    peers: dict[str, str] = {}
    pyspiel, reason = _import_pyspiel()
    peers["openspiel_euchre"] = (
        f"open_spiel {_package_version('open_spiel')} (euchre {openspiel_euchre_tensor_kind()})"
        if pyspiel is not None else UNAVAILABLE + reason
    )
    for env_name in PETTINGZOO_PEER_ENVS:
        env_module, reason = _import_classic_env(env_name)
        peers[inventory_key(env_name)] = (
            f"pettingzoo {_package_version('pettingzoo')} {env_module.__name__.rsplit('.', 1)[1]}, "
            f"rlcard {_package_version('rlcard')}"
            if env_module is not None else UNAVAILABLE + reason
        )
    return peers
