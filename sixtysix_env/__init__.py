"""Sixty-six (Sechsundsechzig): a rules-exact engine (docs/rules.md R1–R20; three players "echt zu dritt", R21, in
:mod:`sixtysix_env.three`) and PettingZoo / Gymnasium environments."""


def _select_engine() -> str:
    """Use the compiled engine (``make compile``, see :mod:`sixtysix_env.compile`) only when its build stamp matches
    the current ``game.py``; otherwise, or with ``SIXTYSIX_PURE_PYTHON=1``, load ``game.py`` itself so that a stale
    extension module next to it is never imported. Returns the backend in use."""
    import importlib.util
    import os
    import sys
    import warnings

    from . import _engine_build as engine_build

    if not engine_build.extension_present():
        return "python"
    if os.environ.get("SIXTYSIX_PURE_PYTHON", "") in ("", "0"):
        if engine_build.build_is_current():
            return "compiled"
        warnings.warn("the compiled engine does not match sixtysix_env/game.py (edited since `make compile`): "
                      "using the pure Python engine; run `make compile` again", RuntimeWarning, stacklevel=2)
    spec = importlib.util.spec_from_file_location(f"{__name__}.game", engine_build.SOURCE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    setattr(sys.modules[__name__], "game", module)  # what the import system does for a submodule it loads
    return "python"


ENGINE_BACKEND = _select_engine()  # "compiled" (mypyc build of game.py) or "python"

from .actions import ACTION_NAMES, NUM_ACTIONS, action_name, parse_action
from .cards import CARD_NAMES, card_name, parse_card
from .game import DealResult, Game, shuffled_deck
from .infoset import InformationSet, determinize, information_set
from .rules import PRESET_NAMES, Rules

__version__ = "0.1.0"

__all__ = [
    "ACTION_NAMES", "CARD_NAMES", "DealResult", "ENGINE_BACKEND", "Game", "InformationSet", "NUM_ACTIONS", "PRESET_NAMES", "Rules",
    "action_name", "card_name", "determinize", "information_set", "parse_action", "parse_card", "shuffled_deck",
]
from .observation import (
    OBSERVATION_LAYOUT, OBSERVATION_SIZE, OBSERVATION_SLICES, action_mask, describe_observation, encode_infoset,
    encode_observation,
)
from .env import env, raw_env
from .gym_env import SixtySixGymEnv
from . import sixtysix_v0  # PettingZoo-style versioned module: sixtysix_v0.env(), sixtysix_v0.raw_env()
from .three import NUM_ACTIONS_THREE, ThreePlayerGame
from .three_env import ThreePlayerGymEnv, ThreePlayerRawEnv
from .three_infoset import ThreeInformationSet

__all__ += [
    "OBSERVATION_LAYOUT", "OBSERVATION_SIZE", "OBSERVATION_SLICES", "SixtySixGymEnv", "action_mask",
    "describe_observation", "encode_infoset", "encode_observation", "env", "raw_env", "sixtysix_v0", "ThreePlayerGame",
    "ThreePlayerGymEnv", "ThreePlayerRawEnv", "ThreeInformationSet", "NUM_ACTIONS_THREE",
]


def vector_env(num_envs: int, **kwargs):
    """``num_envs`` deals stepped together in the compiled core, a ``gymnasium.vector.VectorEnv`` (see
    :func:`sixtysix_env.vector.vector_env`; imported on first use, as it loads numba)."""
    from .vector import vector_env as make_vector_env

    return make_vector_env(num_envs, **kwargs)


__all__ += ["vector_env"]
