"""Observations of a ``Game`` through the core: a core state kept in step with the game's history.

The PettingZoo AEC env (``sixtysix_env/env.py``) keeps the :class:`~sixtysix_env.game.Game` as its state (users
and tests hold it and read it between steps); :class:`CoreObserver` mirrors it in a core state, one
:func:`~.engine.apply` per new action of ``game.history``, and encodes observations and masks with the kernels
of :mod:`.observation` — the same vectors as ``ObservationEncoder.encode`` and ``action_mask`` (tests), in about
half the time. A game it has not seen, a shorter history, or an end the mirror did not reach (a Renonce ends the
deal without an action) make it rebuild the state from the game (:func:`.state.state_from_game`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..actions import NUM_ACTIONS
from ..game import Game
from ..observation import OBSERVATION_SIZE
from ..rules import Rules
from . import engine
from .layout import OVER, STAGE, STATE_SIZE
from .observation import observe_into, scaled_match_score
from .state import core_rule_bits, state_from_game


class CoreObserver:
    """Observation dicts (``observation``, int8 ``action_mask``) of a game's players, encoded in the core.

    Raises ``ValueError`` for rules the core does not implement (``auto_declare`` off or
    ``allow_false_declaration`` on); every preset is implemented."""

    __slots__ = ("rules", "_rule_bits", "_state", "_cards", "_game", "_synced", "_scores")

    def __init__(self, rules: Rules, match_score: Sequence[int] = (0, 0)):
        self.rules = rules
        self._rule_bits = core_rule_bits(rules)
        self._state = np.zeros(STATE_SIZE, dtype=np.int64)
        self._cards = np.zeros(24, dtype=np.int64)
        self._game: Game | None = None
        self._synced = 0  # actions of the game's history applied to the state
        self.set_match_score(match_score)

    def set_match_score(self, match_score: Sequence[int]) -> None:
        """Game points of players 0 and 1 in the Bummerl (R17), already checked by ``ObservationEncoder``."""
        self._scores = scaled_match_score(match_score, self.rules.bummerl_target)

    def _sync(self, game: Game) -> np.ndarray:
        state = self._state
        history = game.history
        if game is not self._game or len(history) < self._synced:
            self._game = game
            if history or game.is_over:
                self._state = state = state_from_game(game)
                self._synced = len(history)
                return state
            self._cards[: len(game.deck)] = game.deck
            engine.deal_into(state, self._cards, game.dealer, self._rule_bits)
            self._synced = 0
        synced = self._synced
        for action in history[synced:]:
            engine.apply(state, action)
        self._synced = len(history)
        # A deal that ended without an action (Game.forfeit); the core and the Game agree on every other ending
        # (tests/test_core.py), so the state is only read when the game is over.
        if game.is_over and state[STAGE] != OVER:
            self._state = state = state_from_game(game)
        return state

    def observe(self, game: Game, player: int) -> dict[str, Any]:
        """``player``'s observation vector and action mask (new arrays) in ``game``."""
        state = self._sync(game)
        observation = np.empty(OBSERVATION_SIZE, dtype=np.float32)
        mask = np.empty(NUM_ACTIONS, dtype=np.int8)
        observe_into(state, player, self._scores, observation, mask)
        return {"observation": observation, "action_mask": mask}


__all__ = ["CoreObserver"]
