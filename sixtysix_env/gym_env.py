"""Single-agent Gymnasium environment: one seat of Sixty-six against an embedded opponent, one deal per episode.

    from sixtysix_env import SixtySixGymEnv
    env = SixtySixGymEnv(rules="standard", opponent=None, learner_seat="alternate")
    observation, info = env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(int(env.action_masks().nonzero()[0][0]))

The learner acts; after each of its actions the opponent plays until the learner must act again or the deal ends.
The reward is the learner's game points, won or lost, when the deal ends (R16), 0 before. The observation is the
flat float32 vector of :mod:`sixtysix_env.observation` (ready for Stable-Baselines3), or with
``dict_observation=True`` a dict of it and the int8 ``action_mask`` (the PettingZoo layout). ``action_masks()``
returns the bool mask of the learner's legal actions, the convention of sb3-contrib's ``MaskablePPO``; it is a
plain method, so ``VecEnv.env_method("action_masks")`` reaches it inside vector environments.

The opponent is any callable ``infoset -> action`` or an object with ``act(infoset)`` (such as the agents of
``agents/``), given the :class:`~sixtysix_env.infoset.InformationSet` of its seat; an optional
``start_deal(player, rules)`` is called before each deal and an optional ``seed(int)`` re-seeds it at every reset
from the environment's generator, so ``reset(seed=...)`` makes whole episodes reproducible. The default opponent
plays uniformly at random among the legal actions.

An illegal learner action ends the deal as a Renonce, the opponent scoring 3 (``illegal_action="renonce"``, the
default here: algorithms without masks then learn from it instead of crashing), or raises ``ValueError``
(``illegal_action="raise"``). An illegal opponent action always raises: it is a bug in the opponent.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Mapping

import gymnasium
import numpy as np
from gymnasium import spaces

from .actions import ACTION_NAMES, NUM_ACTIONS
from .env import (
    RESET_OPTIONS, SeatSchedule, check_illegal_action_mode, check_reset_arguments, check_seat, checked_render_mode,
    is_action_id, render_by_mode, reset_deck, two_player_rules,
)
from .game import OVER, Game
from .infoset import InformationSet
from .observation import OBSERVATION_SIZE, ObservationEncoder, action_mask, agents_match_score, checked_score_pair
from .rules import Rules

_RESET_OPTIONS = (*RESET_OPTIONS, "learner_seat")


class UniformRandomOpponent:
    """Plays uniformly at random among the legal actions (the default opponent)."""

    name = "random"

    def __init__(self, seed: int | None = None):
        self.rng = random.Random(seed)

    def seed(self, seed: int | None) -> None:
        self.rng.seed(seed)

    def start_deal(self, player: int, rules: Rules) -> None:
        pass

    def act(self, infoset: InformationSet) -> int:
        legal = infoset.legal_actions
        return legal[int(self.rng.random() * len(legal))]

    def __repr__(self) -> str:
        return "<UniformRandomOpponent>"


class LearnerSeatViews:
    """What a single-agent env shows of its learner's seat, for two and three players alike: the legal-action
    mask (sb3-contrib's ``action_masks``), the information set and the step's ``info``. A subclass names its
    mask function (``game, player, dtype -> array``) and information-set class."""

    _mask_function: Any
    _information_set_class: Any
    # The Bummerl score (R17) the learner's and the opponent's information sets carry (agents_match_score).
    _info_match_score: tuple[int, int] | None = None

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"learner": self.learner, "action_mask": self.action_masks()}
        if self.game.stage == OVER:
            info["result"] = self.game.result
        return info

    def action_masks(self) -> np.ndarray:
        """Bool mask of the learner's legal actions; all false once the deal is over (sb3-contrib)."""
        if self.game is None:
            raise ValueError("call reset() before action_masks()")
        return self._mask_function(self.game, self.learner, dtype=np.bool_)

    def information_set(self) -> Any:
        """What the learner may know now."""
        if self.game is None:
            raise ValueError("call reset() before information_set()")
        return self._information_set_class(self.game, self.learner, self._info_match_score)


class SixtySixGymEnv(LearnerSeatViews, gymnasium.Env):
    """One seat of two-player Sixty-six against an embedded opponent; see the module docstring."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}
    _mask_function = staticmethod(action_mask)  # LearnerSeatViews: 37 actions (docs/actions.md)
    _information_set_class = InformationSet

    def __init__(
        self,
        rules: str | Rules | Mapping[str, Any] = "standard",
        opponent: Any = None,
        learner_seat: int | str = "alternate",
        illegal_action: str = "renonce",
        dict_observation: bool = False,
        render_mode: str | None = None,
        dealer: int | str = "random",
    ):
        """``rules``: preset name, :class:`Rules` or mapping of switches. ``opponent``: callable or agent (None:
        uniform random). ``learner_seat``: 0, 1, ``"alternate"`` (drawn after a seeded reset, then alternating)
        or ``"random"`` (drawn for every deal). ``illegal_action``: ``"renonce"`` or ``"raise"``.
        ``dict_observation``: observe a dict with the int8 ``action_mask`` instead of the flat vector.
        ``render_mode``: ``"ansi"``, ``"human"`` or None (``"rgb_array"``, which stable-baselines3's ``make_vec_env``
        asks of an env id, is taken as None with a warning). ``dealer``: ``"random"`` (default, drawn for every
        deal, so seat and forehand vary independently), ``"alternate"`` (R3), 0 or 1."""
        super().__init__()
        self.rules = two_player_rules(rules, "gymnasium.make('SixtySixThree-v0')")
        self.illegal_action = check_illegal_action_mode(illegal_action)
        if not isinstance(dict_observation, bool):
            raise ValueError(f"dict_observation must be true or false, got {dict_observation!r}")
        self.dict_observation = dict_observation
        self.render_mode = checked_render_mode(render_mode, self.metadata["render_modes"])
        self.dealer_schedule = SeatSchedule(dealer, "dealer")
        self._seat_schedule = SeatSchedule(learner_seat, "learner_seat")
        self.opponent = UniformRandomOpponent() if opponent is None else opponent
        self._opponent_act, self._opponent_start, self._opponent_seed = _opponent_hooks(self.opponent)
        self._fast_random_opponent = type(self.opponent) is UniformRandomOpponent
        vector_space = spaces.Box(low=0.0, high=1.0, shape=(OBSERVATION_SIZE,), dtype=np.float32)
        if dict_observation:
            self.observation_space = spaces.Dict({
                "observation": vector_space,
                "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
            })
        else:
            self.observation_space = vector_space
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._encoder = ObservationEncoder(self.rules)
        self.game: Game | None = None
        self.learner = 0
        self.deals = 0

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Deal a new hand. ``options``: ``deck`` (explicit deck, R4 order), ``dealer`` (0 / 1), ``learner_seat``
        (0 / 1) and ``match_score`` (game points of players 0 and 1 in the Bummerl, R17) for this deal: shown in
        the observation and, while both are below the Bummerl's target, carried by the learner's and the
        opponent's information sets (:func:`~sixtysix_env.observation.agents_match_score`)."""
        options = check_reset_arguments(seed, options, _RESET_OPTIONS)
        # Every option is checked before anything changes: a refused reset leaves the env as it was.
        forced_seat = options.get("learner_seat")
        if forced_seat is not None:
            forced_seat = check_seat(forced_seat, "options['learner_seat']", ())
        forced_dealer = options.get("dealer")
        if forced_dealer is not None:
            forced_dealer = check_seat(forced_dealer, "options['dealer']", ())
        deck = None if options.get("deck") is None else reset_deck(options["deck"], self.rules)
        match_score = checked_score_pair(options.get("match_score", (0, 0)))
        info_match_score = agents_match_score(options.get("match_score"), self.rules.bummerl_target)
        super().reset(seed=None if seed is None else int(seed))
        if seed is not None:
            self.dealer_schedule.restart()
            self._seat_schedule.restart()
        draw_bit = lambda: int(self.np_random.integers(2))  # noqa: E731
        self.learner = self._seat_schedule.next_seat(draw_bit, forced_seat)
        self._encoder.set_match_score(match_score)
        self._info_match_score = info_match_score  # the opponent plays for the Bummerl the learner sees (R17)
        dealer = self.dealer_schedule.next_seat(draw_bit, forced_dealer)
        deal_seed = int(self.np_random.integers(1 << 62))
        opponent_seed = int(self.np_random.integers(1 << 62))
        if deck is not None:
            self.game = Game.deal(self.rules, deck=deck, dealer=dealer)
        else:
            self.game = Game.deal(self.rules, seed=deal_seed, dealer=dealer)
        self.deals += 1
        if self._opponent_seed is not None:
            self._opponent_seed(opponent_seed)
        if self._opponent_start is not None:
            self._opponent_start(1 - self.learner, self.rules)
        # The opponent's first lead as forehand cannot end the deal: a declaration needs a won trick (R13, even a
        # false one) and a marriage counts only after one (R12). So the learner always has a first decision.
        self._play_opponent()
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        game = self.game
        if game is None or game.stage == OVER:
            raise ValueError("the deal is over (or not dealt): call reset() before step()")
        try:
            game.apply(action)
        except ValueError as error:
            if self.illegal_action == "raise" or not is_action_id(action):
                raise ValueError(f"learner (player {self.learner}): {error}") from None
            game.forfeit(self.learner)  # R8 Renonce: the opponent scores 3 (R16)
        self._play_opponent()
        terminated = game.stage == OVER
        reward = float(game.result.returns()[self.learner]) if terminated else 0.0
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, terminated, False, self._info()

    def _play_opponent(self) -> None:
        """Let the opponent act until the learner must act or the deal is over."""
        game = self.game
        opponent = 1 - self.learner
        while game.stage != OVER and game.to_move == opponent:
            if self._fast_random_opponent:  # the same choice act() makes, without building the information set
                legal = game.legal_actions()
                action = legal[int(self.opponent.rng.random() * len(legal))]
            else:
                action = self._opponent_act(InformationSet(game, opponent, self._info_match_score))
            try:
                game.apply(action)
            except ValueError as error:
                raise ValueError(
                    f"the opponent {self.opponent!r} (player {opponent}) made an illegal move: {error}") from None

    # ------------------------------------------------------------------ observation
    def _observation(self) -> Any:
        vector = self._encoder.encode(self.game, self.learner)
        if self.dict_observation:
            return {"observation": vector, "action_mask": action_mask(self.game, self.learner)}
        return vector

    # ------------------------------------------------------------------ display
    def render(self) -> str | None:
        return render_by_mode(self.render_mode, self.table_text)

    def table_text(self) -> str:
        """The table from the learner's seat (the opponent's hand hidden until the deal is over)."""
        game = self.game
        if game is None:
            return "SixtySixGymEnv: no deal yet (call reset)"
        viewer = None if game.stage == OVER else self.learner
        lines = [f"deal {self.deals}: learner player {self.learner}, dealer player {game.dealer}"]
        lines += game.render(viewer).splitlines()
        if game.stage != OVER:
            lines.append("legal: " + ", ".join(ACTION_NAMES[a] for a in game.legal_actions()))
        return "\n".join(lines)

    def close(self) -> None:
        pass


def _opponent_hooks(opponent: Any) -> tuple[Callable[[InformationSet], Any], Any, Any]:
    """(act, start_deal or None, seed or None) of an opponent given as a callable or an agent object."""
    if isinstance(opponent, type):  # a class is callable, but calling it builds an agent instead of playing
        raise ValueError(f"opponent must be an agent object or a callable infoset -> action, got the class "
                         f"{opponent.__name__}: pass an instance, e.g. {opponent.__name__}()")
    act = getattr(opponent, "act", None)
    if not callable(act):
        if not callable(opponent):
            raise ValueError(
                f"opponent must be a callable infoset -> action or have an act(infoset) method, got {opponent!r}")
        act = opponent
    start = getattr(opponent, "start_deal", None)
    seed = getattr(opponent, "seed", None)
    return act, start if callable(start) else None, seed if callable(seed) else None


def _register() -> None:
    """Register ``SixtySix-v0`` with Gymnasium (``gymnasium.make("SixtySix-v0", opponent=...)``)."""
    if "SixtySix-v0" not in gymnasium.registry:
        gymnasium.register(id="SixtySix-v0", entry_point="sixtysix_env.gym_env:SixtySixGymEnv")


_register()

__all__ = ["SixtySixGymEnv", "UniformRandomOpponent"]
