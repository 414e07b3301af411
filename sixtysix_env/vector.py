"""Batched Gymnasium environments of Sixty-six stepped in the compiled core (docs/vector_env.md).

    import sixtysix_env
    envs = sixtysix_env.vector_env(1024, rules="standard")            # learner vs the core's random opponent
    observations, infos = envs.reset(seed=0)
    actions = policy(observations, infos["action_mask"])              # (1024,) action ids
    observations, rewards, terminations, truncations, infos = envs.step(actions)

    selfplay = sixtysix_env.vector_env(1024, self_play=True)          # the caller plays both seats
    observations, infos = selfplay.reset(seed=0)                      # infos["seat"]: whose view each row is
    observations, rewards, terminations, truncations, infos = selfplay.step(actions)  # rewards: (1024, 2)

:class:`SixtySixVectorEnv` is a :class:`gymnasium.vector.VectorEnv` of ``num_envs`` copies of
:class:`~sixtysix_env.gym_env.SixtySixGymEnv`: one seat of one deal per episode, the opponent replying inside
``step``, the reward the learner's game points when the deal ends (R16). All deals live in one ``int64`` array
of core states (:mod:`sixtysix_env.core`); one numba call per ``step`` plays every environment's action, the
opponent's replies, the autoresets and writes the observation rows (the vector of docs/observation.md) and the
action masks into preallocated arrays.

Per environment the vector env behaves exactly like ``SixtySixGymEnv`` given the same deal (deck order, dealer,
learner seat) and the same opponent moves: ``tests/test_vector_env.py`` replays every deal of a vector env in
``SixtySixGymEnv`` (``reset(options={"deck", "dealer", "learner_seat"})``, the opponent's logged actions) and
compares observations, masks and rewards bit for bit. The deals themselves come from each environment's own
generator in the core (seeded by ``reset(seed=...)``), not from ``SixtySixGymEnv``'s Python generator: dealing
in the core is what makes the batch fast. :attr:`deal_cards`, :attr:`dealers`, :attr:`learner_seats` and
:attr:`opponent_actions` tell what each environment dealt and what its opponent played.

Opponents: ``None`` or ``"random"`` plays uniformly random legal actions inside the core (the fast path). Any
Python agent ``SixtySixGymEnv`` accepts (a callable ``infoset -> action``, or an object with ``act(infoset)`` and
optional ``start_deal(player, rules)`` and ``seed(int)``) works too, one call per opponent decision on an
:class:`~sixtysix_env.infoset.InformationSet` built from a mirror :class:`~sixtysix_env.game.Game` of each deal:
as slow as the agent and the Python engine, some 20x slower than the core's opponent (docs/vector_env.md). A
list of ``num_envs`` agents gives every environment its own (agents that keep state during a deal need that).

Autoreset (``autoreset_mode``, Gymnasium 1.x): ``NEXT_STEP`` (default) returns the final observation with
``terminated`` and deals anew on the next ``step`` (that step's action is ignored, its reward 0); ``SAME_STEP``
deals at once and returns the new deal's observation, the final one in ``infos["final_obs"]`` (an array of
rows, valid where ``infos["_final_obs"]``) and the ended deal's infos in ``infos["final_info"]`` (Gymnasium's
layout); ``DISABLED`` leaves finished deals to ``reset(options={"reset_mask":
...})``. Deals never truncate.
"""

from __future__ import annotations

from typing import Any, Mapping

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from .actions import NUM_ACTIONS, action_name
from .core import batch
from .core.layout import HAND0, OVER, STAGE, STATE_SIZE, STOCK, STOCK_LEN, STOCK_POS, STOCK_SLOTS
from .core.observation import encode_batch, encode_row, scaled_match_score
from .core.state import core_rule_bits
from .env import check_illegal_action_mode, check_seat, resolve_rules
from .game import Game
from .gym_env import _opponent_hooks
from .infoset import InformationSet
from .observation import OBSERVATION_SIZE, agents_match_score
from .rules import Rules

_AUTORESET_CODES = {
    AutoresetMode.NEXT_STEP: batch.AUTORESET_NEXT_STEP,
    AutoresetMode.SAME_STEP: batch.AUTORESET_SAME_STEP,
    AutoresetMode.DISABLED: batch.AUTORESET_DISABLED,
}
_SEAT_CODES = {0: 0, 1: 1, "alternate": batch.SEAT_ALTERNATE, "random": batch.SEAT_RANDOM}
_RESET_OPTIONS = ("match_score", "reset_mask")
PRIVILEGED_SIZE = 3 * 24  # opponent's hand, face-down talon cards, their draw order (privileged_features)
_CARD_IDS = np.arange(24)
_STOCK_SLOT_IDS = np.arange(STOCK_SLOTS)


def privileged_features(states: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """What seat ``seats[i]`` of core state ``states[i]`` cannot see, as ``(n, PRIVILEGED_SIZE)`` float32 rows
    for a critic that trains with hidden information (never for a policy that plays): 24 cards of the
    opponent's hand (1 = he holds it), 24 cards of the face-down talon (1 = still in it, R4/R6), and 24 draw
    positions (``(k + 1) / 11`` for the ``k``-th card from the top, 0 elsewhere)."""
    states = np.asarray(states)
    seats = np.asarray(seats, dtype=np.int64)
    count = states.shape[0]
    features = np.zeros((count, PRIVILEGED_SIZE), dtype=np.float32)
    opponent_hands = states[np.arange(count), HAND0 + 1 - seats]
    features[:, :24] = (opponent_hands[:, None] >> _CARD_IDS) & 1
    stock = states[:, STOCK:STOCK + STOCK_SLOTS]
    drawn = states[:, STOCK_POS][:, None]
    face_down = (_STOCK_SLOT_IDS >= drawn) & (_STOCK_SLOT_IDS < states[:, STOCK_LEN][:, None]) & (stock >= 0)
    rows, slots = np.nonzero(face_down)
    cards = stock[rows, slots]
    features[rows, 24 + cards] = 1.0
    features[rows, 48 + cards] = (slots - drawn[rows, 0] + 1) / STOCK_SLOTS
    return features


def vector_env(num_envs: int, rules: str | Rules | Mapping[str, Any] = "standard", opponent: Any = None,
               self_play: bool = False, **kwargs: Any) -> "SixtySixVectorEnv":
    """``num_envs`` deals stepped together in the compiled core: :class:`SixtySixVectorEnv` (a learner against
    ``opponent``) or, with ``self_play=True``, :class:`SixtySixSelfPlayVectorEnv` (the caller plays both seats).
    Further keyword arguments go to the class (``learner_seat``, ``dealer``, ``illegal_action``,
    ``autoreset_mode``, ``copy``)."""
    if not isinstance(self_play, bool):
        raise ValueError(f"self_play must be true or false, got {self_play!r}")
    if self_play:
        if opponent is not None:
            raise ValueError("self_play=True plays both seats: give no opponent")
        if "learner_seat" in kwargs:
            raise ValueError("self_play=True plays both seats: give no learner_seat")
        return SixtySixSelfPlayVectorEnv(num_envs, rules=rules, **kwargs)
    return SixtySixVectorEnv(num_envs, rules=rules, opponent=opponent, **kwargs)


class SixtySixVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` single-seat deals against an opponent, stepped in the core; see the module docstring."""

    _self_play = False

    def __init__(
        self,
        num_envs: int,
        rules: str | Rules | Mapping[str, Any] = "standard",
        opponent: Any = None,
        learner_seat: int | str = "alternate",
        dealer: int | str = "random",
        illegal_action: str = "renonce",
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
    ):
        """``num_envs``: positive number of environments. ``rules``: preset name, :class:`Rules` or mapping
        (the core needs ``auto_declare`` on and ``allow_false_declaration`` off, as in every preset).
        ``opponent``: ``None`` / ``"random"`` (in the core), an agent, or a list of ``num_envs`` agents.
        ``learner_seat`` and ``dealer``: 0, 1, ``"alternate"`` or ``"random"`` per environment, as in
        ``SixtySixGymEnv``. ``illegal_action``: ``"renonce"`` (the learner's illegal action ends the deal, the
        opponent scoring 3) or ``"raise"``. ``autoreset_mode``: a :class:`gymnasium.vector.AutoresetMode` or its
        value. ``copy``: return copies of the observation and mask buffers (default, as Gymnasium's vector
        envs); ``False`` returns the buffers themselves, overwritten by the next ``step`` (read them only: the
        illegal-action check of ``"raise"`` reads the mask handed out)."""
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.rules = resolve_rules(rules)
        self._rule_bits = core_rule_bits(self.rules)
        self.illegal_action = check_illegal_action_mode(illegal_action)
        if not isinstance(copy, bool):
            raise ValueError(f"copy must be true or false, got {copy!r}")
        self.copy = copy
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            names = ", ".join(repr(mode.value) for mode in AutoresetMode)
            raise ValueError(f"autoreset_mode must be a gymnasium AutoresetMode or one of {names}, "
                             f"got {autoreset_mode!r}") from None
        self.metadata = {"autoreset_mode": self.autoreset_mode, "render_modes": []}
        self._dealer_mode = _SEAT_CODES[check_seat(dealer, "dealer")]
        self._seat_mode = _SEAT_CODES[check_seat(learner_seat, "learner_seat")] if not self._self_play else 0
        self._configure_opponent(opponent)

        self.single_observation_space = spaces.Box(low=0.0, high=1.0, shape=(OBSERVATION_SIZE,), dtype=np.float32)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

        count = self.num_envs
        self._states = np.zeros((count, STATE_SIZE), dtype=np.int64)
        self._rng = np.zeros(count, dtype=np.uint64)
        self._opponent_rng = np.zeros(count, dtype=np.uint64)  # the core opponent's, reseeded every deal
        self._cards = np.full((count, 24), -1, dtype=np.int64)
        self._upcoming_dealers = np.full(count, -1, dtype=np.int64)
        self._upcoming_seats = np.full(count, -1, dtype=np.int64)
        self._dealers = np.zeros(count, dtype=np.int64)
        self._learners = np.zeros(count, dtype=np.int64)
        self._players = np.zeros(count, dtype=np.int64)
        self._needs_reset = np.zeros(count, dtype=np.int8)
        self._log = np.full((count, batch.OPPONENT_LOG_SLOTS), -1, dtype=np.int64)
        self._log_count = np.zeros(count, dtype=np.int64)
        self._match_scores = np.zeros((count, 2), dtype=np.float32)
        # What a Python opponent's information set carries of the Bummerl score (R17), per environment.
        self._agent_match_scores: list[tuple[int, int] | None] = [None] * count
        self._observations = np.zeros((count, OBSERVATION_SIZE), dtype=np.float32)
        self._masks = np.zeros((count, NUM_ACTIONS), dtype=np.int8)
        self._seat_rewards = np.zeros((count, 2), dtype=np.float32)
        self._rewards = np.zeros(count, dtype=np.float32)
        self._terminations = np.zeros(count, dtype=np.bool_)
        self._truncations = np.zeros(count, dtype=np.bool_)
        self._final_observations = np.zeros((count, OBSERVATION_SIZE), dtype=np.float32)
        self._has_final = np.zeros(count, dtype=np.bool_)
        self._everywhere = np.ones(count, dtype=np.bool_)
        self._everywhere.flags.writeable = False  # shared by every step's infos when copy=False
        self._games: list[Game | None] = [None] * count  # mirrors of the deals for Python opponents
        self._has_reset = False
        self.deals = 0  # deals dealt since construction

    # ------------------------------------------------------------------ configuration
    def _configure_opponent(self, opponent: Any) -> None:
        if opponent is None or (isinstance(opponent, str) and opponent == "random"):
            self._opponent_code = batch.OPPONENT_RANDOM
            self.opponents: list[Any] | None = None
            return
        if isinstance(opponent, str):
            raise ValueError(f"opponent must be None, 'random', an agent or a list of agents, got {opponent!r}")
        if isinstance(opponent, (list, tuple)):
            if len(opponent) != self.num_envs:
                raise ValueError(f"a list of opponents needs one per environment: {self.num_envs}, "
                                 f"got {len(opponent)}")
            self.opponents = list(opponent)
        else:
            self.opponents = [opponent] * self.num_envs
        self._opponent_hooks = [_opponent_hooks(agent) for agent in self.opponents]
        self._opponent_code = batch.OPPONENT_PYTHON

    # ------------------------------------------------------------------ episodes
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """New deals in every environment (or those of ``options["reset_mask"]``). ``seed`` seeds every
        environment's generator (environment ``i`` from ``numpy.random.SeedSequence(seed)``'s ``i``-th word) and
        restarts the seat schedules. ``options["match_score"]``: game points of players 0 and 1 in the Bummerl
        (R17), one pair for all environments or one per environment, shown in the observations until changed;
        a Python opponent's information sets carry it too, while both are below the Bummerl's target."""
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        options = dict(options or {})
        unknown = sorted(set(options) - set(_RESET_OPTIONS))
        if unknown:
            raise ValueError(f"unknown reset option {unknown[0]!r}; known options: {', '.join(_RESET_OPTIONS)}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
        seed = None if seed is None else int(seed)  # Gymnasium takes Python integers only
        reset_mask = options.get("reset_mask")
        if reset_mask is None:
            reset_mask = np.ones(self.num_envs, dtype=np.bool_)
        else:
            reset_mask = np.asarray(reset_mask)
            if reset_mask.dtype != np.bool_ or reset_mask.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},), "
                                 f"got {reset_mask.dtype} of shape {reset_mask.shape}")
            if not self._has_reset and not reset_mask.all():
                raise ValueError("the first reset must deal in every environment (no reset_mask)")
        score_rows = self._checked_match_scores(options["match_score"]) if "match_score" in options else None
        if score_rows is not None:
            target = self.rules.bummerl_target
            # Rounded as ObservationEncoder.set_match_score rounds them.
            match_scores = np.array([scaled_match_score(row, target) for row in score_rows], dtype=np.float32)
            agent_scores = [agents_match_score(tuple(int(value) for value in row), target) for row in score_rows]
        # Everything is checked: from here on the reset happens.
        if seed is not None or not self._has_reset:
            super().reset(seed=seed)
            self._rng[:] = np.random.SeedSequence(seed).generate_state(self.num_envs, np.uint64)
            self._upcoming_dealers[:] = -1
            self._upcoming_seats[:] = -1
        if score_rows is not None:
            self._match_scores[:] = match_scores
            self._agent_match_scores = agent_scores
        python_opponent = self._opponent_code == batch.OPPONENT_PYTHON
        reset_batch(reset_mask, *self._deal_arguments(), self._needs_reset, self._log, self._log_count,
                    self._match_scores, self._observations, self._masks)
        if python_opponent:
            for index in np.flatnonzero(reset_mask):
                self._start_python_deal(int(index))
            encode_batch(self._states, self._players, self._match_scores, self._observations, self._masks)
        self.deals += int(reset_mask.sum())
        self._terminations[:] = False
        self._has_reset = True
        return self._output(self._observations), self._infos()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """One decision in every environment: ``actions`` holds one action id per environment (ignored where
        a next-step autoreset deals instead)."""
        if not self._has_reset:
            raise ValueError("call reset() before step()")
        actions = self._check_actions(actions)
        # A same-step autoreset deals before returning: the finished deals' infos are kept for ``final_info``.
        infos_before = self._infos() if self.autoreset_mode == AutoresetMode.SAME_STEP else None
        if self._opponent_code == batch.OPPONENT_PYTHON:
            self._step_python(actions)
        else:
            step_batch(actions, *self._deal_arguments(), _AUTORESET_CODES[self.autoreset_mode], self._needs_reset,
                       self._log, self._log_count, self._match_scores, self._observations, self._masks,
                       self._seat_rewards, self._rewards, self._terminations, self._final_observations,
                       self._has_final)
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            self.deals += int(self._has_final.sum())
        elif self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self.deals += int(np.count_nonzero(self._needs_reset_before))
        infos = self._infos()
        if infos_before is not None and self._has_final.any():
            infos["final_obs"] = self._final_observations.copy()
            infos["_final_obs"] = self._has_final.copy()
            infos["final_info"] = self._final_infos(infos_before)
            infos["_final_info"] = self._has_final.copy()
        return (self._output(self._observations), self._output(self._step_rewards()), self._terminations.copy(),
                self._truncations.copy(), infos)

    def _deal_arguments(self) -> tuple:
        """The arguments shared by the batch kernels, in their order (see core/batch.py)."""
        return (self._states, self._rng, self._opponent_rng, self._cards, self._rule_bits, self._dealer_mode,
                self._upcoming_dealers, self._dealers, self._seat_mode, self._upcoming_seats, self._learners,
                self._players, self._opponent_code)

    def _check_actions(self, actions: Any) -> np.ndarray:
        array = np.asarray(actions)
        if array.shape != (self.num_envs,) or array.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.num_envs} integer action ids (shape ({self.num_envs},)), "
                             f"got {array.dtype} of shape {array.shape}")
        given = array  # its own dtype: a uint64 beyond int64 is named as given, not as its wrapped value
        array = array.astype(np.int64, copy=False)
        self._needs_reset_before = self._needs_reset.copy() if self.autoreset_mode == AutoresetMode.NEXT_STEP \
            else None
        acting = self._needs_reset == 0
        if self.autoreset_mode == AutoresetMode.DISABLED:
            over = np.flatnonzero(self._states[:, STAGE] == OVER)
            if len(over):
                raise ValueError(f"the deal of environment {over[0]} is over: reset it with "
                                 "reset(options={'reset_mask': ...}) before stepping (autoreset_mode DISABLED)")
        out_of_range = acting & ((given < 0) | (given >= NUM_ACTIONS))
        if out_of_range.any():
            index = int(np.flatnonzero(out_of_range)[0])
            raise ValueError(f"environment {index}: malformed action {int(given[index])}: expected an action id "
                             f"in 0..{NUM_ACTIONS - 1}")
        if self.illegal_action == "raise":
            looked_up = np.clip(array, 0, NUM_ACTIONS - 1)  # ids of dealing environments may be anything
            illegal = acting & (self._masks[np.arange(self.num_envs), looked_up] == 0)
            if illegal.any():
                index = int(np.flatnonzero(illegal)[0])
                legal = ", ".join(action_name(int(a)) for a in np.flatnonzero(self._masks[index]))
                raise ValueError(f"environment {index}: illegal action {action_name(int(array[index]))!r} for "
                                 f"player {int(self._players[index])}; legal: {legal}")
        return array

    def _step_rewards(self) -> np.ndarray:
        return self._rewards

    def _infos(self) -> dict[str, Any]:
        return self._with_presence({"action_mask": self._output(self._masks.view(np.bool_)),
                                    "learner": self._learners.copy()})

    def _final_infos(self, infos_before: dict[str, Any]) -> dict[str, Any]:
        """Gymnasium's same-step ``final_info``: the infos of the deals that ended in this step, as they were at
        their end (the seat from before the new deal; no legal action left), present where ``_has_final``."""
        final: dict[str, Any] = {}
        for key, value in infos_before.items():
            if key.startswith("_"):
                continue
            final[key] = np.zeros_like(value) if key == "action_mask" else value
            final["_" + key] = self._has_final.copy()
        return final

    def _with_presence(self, infos: dict[str, Any]) -> dict[str, Any]:
        """Gymnasium's vector info layout: every key ``k`` comes with ``_k``, where it is present (everywhere). With
        ``copy`` each is its own writable array, as Gymnasium's wrappers expect when they merge infos."""
        for key in list(infos):
            infos["_" + key] = self._output(self._everywhere)
        return infos

    def _output(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array

    def _checked_match_scores(self, match_score: Any) -> np.ndarray:
        """The game points of players 0 and 1 of every environment (one row each) from ``options["match_score"]``,
        or ``ValueError``."""
        try:
            scores = np.asarray(match_score)
        except Exception:  # noqa: BLE001 - a ragged sequence
            scores = None
        valid = scores is not None and scores.dtype.kind in "iu" and scores.shape in ((2,), (self.num_envs, 2))
        if not valid or (scores < 0).any():
            raise ValueError(f"options['match_score'] must be two non-negative integers (player 0, player 1) or "
                             f"one such pair per environment, got {match_score!r}")
        return np.broadcast_to(scores, (self.num_envs, 2))

    # ------------------------------------------------------------------ Python opponents
    def _start_python_deal(self, index: int) -> None:
        """After the kernel dealt environment ``index``: its mirror Game, the opponent's hooks, its first moves."""
        deck_size = self.rules.deck
        game = Game.deal(self.rules, deck=[int(card) for card in self._cards[index, :deck_size]],
                         dealer=int(self._dealers[index]))
        self._games[index] = game
        _act, start, seed = self._opponent_hooks[index]
        opponent_seed = int(batch.random_word(self._rng, index))
        if seed is not None:
            seed(opponent_seed)
        if start is not None:
            start(1 - int(self._learners[index]), self.rules)
        self._play_python_opponent(index)

    def _play_python_opponent(self, index: int) -> None:
        game = self._games[index]
        state = self._states[index]
        learner = int(self._learners[index])
        act = self._opponent_hooks[index][0]
        while game.stage != OVER and game.to_move != learner:
            action = act(InformationSet(game, 1 - learner, self._agent_match_scores[index]))
            try:
                game.apply(action)
            except ValueError as error:
                raise ValueError(f"the opponent {self.opponents[index]!r} (player {1 - learner}) of environment "
                                 f"{index} made an illegal move: {error}") from None
            if self._log_count[index] < self._log.shape[1]:
                self._log[index, self._log_count[index]] = int(action)
                self._log_count[index] += 1
            batch.apply_or_forfeit(state, int(action))

    def _step_python(self, actions: np.ndarray) -> None:
        """``step`` with a Python opponent: the same logic as ``core.batch.step_batch``, one environment at a time
        (the observations are still encoded in one kernel call)."""
        self._log_count[:] = 0
        self._has_final[:] = False
        self._rewards[:] = 0.0
        self._terminations[:] = False
        deal = self._deal_arguments()
        for index in range(self.num_envs):
            if self._needs_reset[index]:
                batch.start_deal(index, *deal, self._log, self._log_count)
                self._needs_reset[index] = 0
                self._start_python_deal(index)
                continue
            game, state = self._games[index], self._states[index]
            action = int(actions[index])
            if game.is_legal(action):
                game.apply(action)
            else:
                game.forfeit(int(self._learners[index]))  # R8 Renonce (illegal_action="renonce")
            batch.apply_or_forfeit(state, action)
            self._play_python_opponent(index)
            if state[STAGE] == OVER:
                self._rewards[index] = game.result.returns()[int(self._learners[index])]
                self._terminations[index] = True
                if self.autoreset_mode == AutoresetMode.NEXT_STEP:
                    self._needs_reset[index] = 1
                elif self.autoreset_mode == AutoresetMode.SAME_STEP:
                    encode_row(state, self._players[index], self._match_scores[index],
                               self._final_observations[index])
                    self._has_final[index] = True
                    batch.start_deal(index, *deal, self._log, self._log_count)
                    self._start_python_deal(index)
        encode_batch(self._states, self._players, self._match_scores, self._observations, self._masks)

    # ------------------------------------------------------------------ inspection
    def action_masks(self) -> np.ndarray:
        """Bool masks of the legal actions of the observed seats, ``(num_envs, 37)`` (sb3-contrib's
        ``action_masks``); all false in a finished deal."""
        if not self._has_reset:
            raise ValueError("call reset() before action_masks()")
        return self._masks.view(np.bool_).copy()

    @property
    def deal_cards(self) -> np.ndarray:
        """Each environment's current deck order (R4, top first; -1 after the 20th card of a 20-card deck)."""
        return self._cards.copy()

    @property
    def dealers(self) -> np.ndarray:
        """The dealer of each environment's current deal."""
        return self._dealers.copy()

    @property
    def learner_seats(self) -> np.ndarray:
        """The learner's seat in each environment's current deal."""
        return self._learners.copy()

    @property
    def opponent_actions(self) -> list[list[int]]:
        """Per environment, the opponent's actions during the last ``reset`` or ``step`` (for logs and replays;
        with same-step autoreset, those of the new deal after a terminal step)."""
        return [self._log[index, :count].tolist() for index, count in enumerate(self._log_count)]

    def privileged_observations(self, seats: Any = None) -> np.ndarray:
        """The hidden information of every environment's current deal from the side of ``seats`` (default: the
        observed seats, as the observation rows): :func:`privileged_features`, ``(num_envs, PRIVILEGED_SIZE)``.
        For a critic in training only (an asymmetric actor-critic); the observation rows never contain it."""
        if not self._has_reset:
            raise ValueError("call reset() before privileged_observations()")
        return privileged_features(self._states, self._checked_seats(seats))

    def seat_observations(self, seats: Any) -> tuple[np.ndarray, np.ndarray]:
        """The observation rows and action masks of ``seats[i]`` (0 or 1 per environment) in the current deals,
        whoever is to move (e.g. a learner's view while his opponent decides, for its critic). Where
        ``seats[i]`` is the observed seat, the row equals the step's observation row."""
        if not self._has_reset:
            raise ValueError("call reset() before seat_observations()")
        observations = np.zeros((self.num_envs, OBSERVATION_SIZE), dtype=np.float32)
        masks = np.zeros((self.num_envs, NUM_ACTIONS), dtype=np.int8)
        encode_batch(self._states, self._checked_seats(seats), self._match_scores, observations, masks)
        return observations, masks.view(np.bool_)

    def _checked_seats(self, seats: Any) -> np.ndarray:
        if seats is None:
            return self._players
        array = np.asarray(seats)
        if array.shape != (self.num_envs,) or array.dtype.kind not in "iu" or ((array != 0) & (array != 1)).any():
            raise ValueError(f"seats must be {self.num_envs} seats 0 or 1 (shape ({self.num_envs},)), got "
                             f"{array.dtype} of shape {array.shape}")
        return array.astype(np.int64, copy=False)

    def core_states(self) -> np.ndarray:
        """A copy of the core states (one row per environment; see ``sixtysix_env.core.layout``)."""
        return self._states.copy()

    def close_extras(self, **kwargs: Any) -> None:
        pass

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} num_envs={self.num_envs} rules={self.rules.preset_name or 'custom'} "
                f"autoreset_mode={self.autoreset_mode.value}>")


class SixtySixSelfPlayVectorEnv(SixtySixVectorEnv):
    """``num_envs`` deals whose both seats the caller plays (self-play learners).

    Each row of the observations is the view of the seat to move, ``infos["seat"]`` (also :attr:`seats`); the
    mask is that seat's legal actions. ``step(actions)`` plays each environment's action for its seat. Rewards
    have shape ``(num_envs, 2)``: the game points of seats 0 and 1, zero-sum, non-zero only at a deal's end
    (R16). At the end the row is the view of the seat that made the last move (its mask all false)."""

    _self_play = True

    def __init__(self, num_envs: int, rules: str | Rules | Mapping[str, Any] = "standard", dealer: int | str = "alternate",
                 illegal_action: str = "renonce", autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 copy: bool = True):
        """As :class:`SixtySixVectorEnv`, without opponent and learner seat; ``dealer`` defaults to
        ``"alternate"`` (R3)."""
        super().__init__(num_envs, rules=rules, opponent=None, dealer=dealer, illegal_action=illegal_action,
                         autoreset_mode=autoreset_mode, copy=copy)
        self._opponent_code = batch.OPPONENT_NONE

    def _step_rewards(self) -> np.ndarray:
        return self._seat_rewards

    def _infos(self) -> dict[str, Any]:
        return self._with_presence({"action_mask": self._output(self._masks.view(np.bool_)),
                                    "seat": self._players.copy()})

    @property
    def seats(self) -> np.ndarray:
        """The seat whose view each observation row is (the player to move, or the last mover at the end)."""
        return self._players.copy()


# Kernel entry points used above (module-level names keep the calls short).
reset_batch = batch.reset_batch
step_batch = batch.step_batch

__all__ = ["PRIVILEGED_SIZE", "SixtySixSelfPlayVectorEnv", "SixtySixVectorEnv", "privileged_features", "vector_env"]
