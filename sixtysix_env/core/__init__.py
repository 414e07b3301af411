"""The compiled core: one deal of two-player Sixty-six as an ``int64`` array, its rules as numba kernels.

Search agents, batched environments and benchmarks run here instead of through per-decision Python:

* :mod:`.layout` names the slots of the state array (plain Python);
* :mod:`.engine` the rules (R4–R16) as jitted kernels: :func:`~.engine.legal_mask`, :func:`~.engine.apply`,
  random playouts — the second implementation of the rule book, checked against ``game.py`` by a differential
  test;
* :mod:`.state` the checked Python boundary: :func:`new_state`, :func:`state_from_game`, :func:`apply_action`;
* :mod:`.solver` exact solvers for a deal whose cards are all known (phase 2, R8, and whole deals);
* :mod:`.luck` the luck of the talon's draws (R7), taken out of match margins by ``python -m eval.pool --luck``.

numba compiles the kernels on first use and caches them on disk (``cache=True``).
"""

from .state import (
    apply_action, check_state, core_implements, core_rule_bits, legal_actions, new_state, result_of, state_from_game,
)

__all__ = ["apply_action", "check_state", "core_implements", "core_rule_bits", "legal_actions", "new_state",
           "result_of", "state_from_game"]
