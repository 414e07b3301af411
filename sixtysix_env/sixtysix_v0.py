"""Versioned entry point of the PettingZoo environment, as PettingZoo's own (``pettingzoo.classic.connect_four_v3``)::

    from sixtysix_env import sixtysix_v0

    env = sixtysix_v0.env(rules="standard")    # raw_env inside the standard wrappers
    raw = sixtysix_v0.raw_env(rules="standard")  # no wrappers (e.g. for SuperSuit or a parallel converter)

The version suffix is the environment's version: it changes when observations, rewards or the action layout
change in a way that makes results incomparable (docs/observation.md, docs/actions.md). Options and behaviour are
those of :mod:`sixtysix_env.env`; ``metadata["name"]`` is ``"sixtysix_v0"``.
"""

from .env import env, raw_env

__all__ = ["env", "raw_env"]
