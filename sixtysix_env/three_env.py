"""Environments of three-player Sixty-six "echt zu dritt" (R21): PettingZoo AEC and single-agent Gymnasium.

    import sixtysix_env
    env = sixtysix_env.env(rules="three")     # ThreePlayerRawEnv in the standard wrappers
    env.reset(seed=42)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else int(observation["action_mask"].nonzero()[0][0])
        env.step(action)

Agents ``player_0``, ``player_1``, ``player_2`` (engine seats). The observation is a dict: ``observation``, the
float32 vector of :mod:`sixtysix_env.three_observation` (the seat's information set and nothing else), and
``action_mask``, int8 over the 45 three-player actions (docs/actions.md; all zero for seats not to move). The
reward comes once, when the deal ends: the game point each seat won (1 for the winner, 0 for the others and for
everybody after a tie at the top, R21). An illegal action raises ``ValueError`` and leaves the state unchanged
(R21 has no Renonce penalty for three): ``illegal_action="raise"``, the two-player default, is the only mode.
``render_view`` is the two-player one with three seats: None, ``"current"``, 0, 1, 2 or an agent name.

Deals: ``reset(seed=s)`` (None or a non-negative integer) re-seeds the environment's generator; the dealer of the
first deal after it is drawn from it and then rotates to the left, ``(dealer + 1) % 3`` (``dealer="rotate"``,
default), or is drawn for every deal (``"random"``), or fixed (0, 1 or 2). ``reset(options={"deck": [...],
"dealer": d})`` deals an explicit deck (R21 order). ``match_score`` may only be None: nothing three-player shows a
Bummerl score. As in the two-player environment other keys are ignored with a warning (PettingZoo's api_test
passes its own).

:class:`ThreePlayerGymEnv` is one seat against two embedded opponents (agents or callables ``infoset -> action``,
uniform random by default), for single-agent learners such as Stable-Baselines3 / sb3-contrib ``MaskablePPO``.
"""

from __future__ import annotations

import random
from typing import Any, Mapping, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from .cards import CARD_NAMES
from .env import (
    RESET_OPTIONS, AssertOutOfBoundsWrapper, OrderEnforcingWrapper, StateCopy, check_reset_arguments,
    checked_render_mode, is_action_id, render_by_mode, reset_deck, resolve_rules,
)
from .gym_env import LearnerSeatViews, UniformRandomOpponent, _opponent_hooks
from .rules import Rules
from .three import (
    ILLEGAL_ACTION_END, NUM_ACTIONS_THREE, OVER, ThreePlayerGame, check_player, three_player_action_name,
)
from .three_infoset import ThreeInformationSet
from .three_observation import THREE_OBSERVATION_SIZE, encode_three_infoset, three_action_mask

THREE_AGENTS = ("player_0", "player_1", "player_2")
_AGENT_INDEX = {name: index for index, name in enumerate(THREE_AGENTS)}
THREE_ENV_NAME = "sixtysix_three_v0"
DEALER_MODES = ("rotate", "random")


def check_three_seat(value: Any, what: str, modes: Sequence[str] = DEALER_MODES) -> int | str:
    if isinstance(value, str) and value in modes:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value not in (0, 1, 2):
        choices = "".join(f"{mode!r}, " for mode in modes)
        raise ValueError(f"{what} must be {choices}0, 1 or 2, got {value!r}")
    return int(value)


def check_agent(value: Any, what: str, extra: Sequence[Any] = ()) -> Any:
    """An agent name or seat (a Python or numpy integer 0..2) as the seat index, or one of ``extra`` as given;
    anything else (``True``, ``1.0``, ``"player_3"``) raises ``ValueError`` naming ``what``."""
    if isinstance(value, str):
        if value in _AGENT_INDEX:
            return _AGENT_INDEX[value]
        if value in extra:
            return value
    elif value is None and None in extra:
        return None
    else:
        try:
            return check_player(value, what)
        except ValueError:
            pass
    choices = "".join(f"{choice!r}, " for choice in extra)
    raise ValueError(f"{what} must be {choices}0, 1, 2 or an agent name ({', '.join(THREE_AGENTS)}), got {value!r}")


def check_no_match_score(options: Mapping[str, Any]) -> None:
    """``match_score``, a reset option of the two-player environments, may only be None here: no three-player
    observation or information set shows a Bummerl score (R21)."""
    if options.get("match_score") is not None:
        raise ValueError(f"options['match_score'] must be None: the three-player environments (R21) show no match "
                         f"score, got {options['match_score']!r}")


def end_after_illegal_action(game: ThreePlayerGame, offender: int) -> None:
    """End ``game`` unscored after ``offender``'s illegal action (``ThreePlayerGame.end_after_illegal_action``: R21
    names no Renonce for three, so nobody wins a game point; the learner's -1 is the environment's penalty)."""
    game.end_after_illegal_action(offender)


def three_player_rules(rules: str | Rules | Mapping[str, Any]) -> Rules:
    resolved = resolve_rules(rules)
    if resolved.players != 3:
        raise ValueError(f"the three-player environment needs rules with players=3 (preset 'three'), got {rules!r}")
    return resolved


class ThreeSeatSchedule:
    """The seat (0, 1, 2) of a role deal after deal: fixed, drawn every deal, or drawn once then rotating."""

    def __init__(self, mode: int | str, what: str):
        self.mode = check_three_seat(mode, what)
        self._next: int | None = None

    def restart(self) -> None:
        self._next = None

    def next_seat(self, draw: Any, forced: int | None = None) -> int:
        if forced is not None:
            seat = forced
        elif self.mode in (0, 1, 2):
            seat = int(self.mode)
        elif self.mode == "random" or self._next is None:
            seat = int(draw())
        else:
            seat = self._next
        self._next = (seat + 1) % 3
        return seat


def _observation_space() -> spaces.Dict:
    return spaces.Dict({
        "observation": spaces.Box(low=0.0, high=1.0, shape=(THREE_OBSERVATION_SIZE,), dtype=np.float32),
        "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS_THREE,), dtype=np.int8),
    })


def three_env(**kwargs: Any) -> AECEnv:
    """:class:`ThreePlayerRawEnv` inside the standard wrappers (out-of-bounds assertion, order enforcing)."""
    return OrderEnforcingWrapper(AssertOutOfBoundsWrapper(ThreePlayerRawEnv(**kwargs)))


class ThreePlayerRawEnv(StateCopy, AECEnv, EzPickle):
    """Three-player Sixty-six (R21), one deal per episode. See the module docstring."""

    metadata = {"render_modes": ["ansi", "human"], "name": THREE_ENV_NAME, "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, rules: str | Rules | Mapping[str, Any] = "three", illegal_action: str = "raise",
                 render_mode: str | None = None, dealer: int | str = "rotate", render_view: str | int | None = None):
        """The two-player environment's arguments in its order, where they fit three players: ``illegal_action``
        ``"raise"`` only (R21 has no Renonce); ``render_view`` None, ``"current"``, 0, 1, 2 or an agent name."""
        EzPickle.__init__(self, rules, illegal_action, render_mode, dealer, render_view)
        super().__init__()
        self.rules = three_player_rules(rules)
        if not isinstance(illegal_action, str) or illegal_action != "raise":
            raise ValueError(f"illegal_action must be 'raise' in the three-player environment (R21 names no Renonce "
                             f"penalty for three), got {illegal_action!r}")
        self.illegal_action = illegal_action
        self.render_mode = checked_render_mode(render_mode, self.metadata["render_modes"])
        self.render_view = check_agent(render_view, "render_view", (None, "current"))
        self.dealer_schedule = ThreeSeatSchedule(dealer, "dealer")
        self.possible_agents = list(THREE_AGENTS)
        self.agents: list[str] = []
        self.observation_spaces = {agent: _observation_space() for agent in THREE_AGENTS}
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS_THREE) for agent in THREE_AGENTS}
        self._rng = random.Random()
        self.deals = 0
        self.game: ThreePlayerGame | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        options = check_reset_arguments(seed, options, RESET_OPTIONS, refuse_unknown=False)  # as the two-player env
        check_no_match_score(options)
        # Every option is checked before anything changes: a refused reset leaves the env as it was.
        forced = options.get("dealer")
        if forced is not None:
            forced = int(check_three_seat(forced, "options['dealer']", modes=()))
        deck = None if options.get("deck") is None else reset_deck(options["deck"], self.rules)
        if seed is not None:
            self._rng = random.Random(int(seed))
            self.dealer_schedule.restart()
        dealer = self.dealer_schedule.next_seat(lambda: self._rng.randrange(3), forced)
        deal_seed = self._rng.getrandbits(64)  # drawn even for an explicit deck: the sequence stays the same
        self.game = ThreePlayerGame.deal(self.rules, deck=deck, dealer=dealer,
                                         seed=None if deck is not None else deal_seed)
        self.deals += 1
        self.agents = list(THREE_AGENTS)
        self.rewards = {agent: 0.0 for agent in THREE_AGENTS}
        self._cumulative_rewards = {agent: 0.0 for agent in THREE_AGENTS}
        self.terminations = {agent: False for agent in THREE_AGENTS}
        self.truncations = {agent: False for agent in THREE_AGENTS}
        self.infos = {agent: {} for agent in THREE_AGENTS}
        self.agent_selection = THREE_AGENTS[self.game.to_move]

    def step(self, action: Any) -> None:
        if self.game is None:
            raise ValueError("call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        self._cumulative_rewards[agent] = 0.0
        try:
            game.apply(action)
        except ValueError as error:
            raise ValueError(f"{agent}: {error}") from None
        if game.stage == OVER:
            result = game.result
            self.rewards = {name: float(points) for name, points in zip(THREE_AGENTS, result.returns())}
            self._accumulate_rewards()
            self.terminations = {name: True for name in THREE_AGENTS}
            self.infos = {name: {"result": result} for name in THREE_AGENTS}
        else:
            self.agent_selection = THREE_AGENTS[game.to_move]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        player = _AGENT_INDEX[agent]
        if self.game is None:  # the raw env unwrapped: the wrapper's order check is not there
            raise ValueError("call reset() before observe()")
        return {"observation": encode_three_infoset(ThreeInformationSet(self.game, player)),
                "action_mask": three_action_mask(self.game, player)}

    def information_set(self, agent: str | int) -> ThreeInformationSet:
        """What ``agent`` may know now, for the agents of ``agents/``."""
        player = check_agent(agent, "agent")
        if self.game is None:
            raise ValueError("call reset() before information_set()")
        return ThreeInformationSet(self.game, player)

    def render(self) -> str | None:
        return render_by_mode(self.render_mode, self.table_text)

    def table_text(self, viewer: int | str | None = "default") -> str:
        """The table as text from ``viewer``'s seat (None: everything; default: the ``render_view`` option)."""
        if self.game is None:
            return f"{THREE_ENV_NAME}: no deal yet (call reset)"
        viewer = self.render_view if viewer == "default" else check_agent(viewer, "viewer", (None, "current"))
        game = self.game
        if viewer == "current":
            viewer = game.current_player  # None once the deal is over: then every hand is shown
        lines = [f"{THREE_ENV_NAME} deal {self.deals}", *game.render(viewer).splitlines()]
        if game.tricks:  # the last trick, as the two-player table shows it: every card of it was seen by all
            leader, cards, winner = game.tricks[-1]
            played = ", ".join(f"{THREE_AGENTS[(leader + offset) % 3]} played {CARD_NAMES[card]}"
                               for offset, card in enumerate(cards[1:], start=1))
            lines.append(f"last trick: {THREE_AGENTS[leader]} led {CARD_NAMES[cards[0]]}, {played}, "
                         f"won by {THREE_AGENTS[winner]}")
        mover = game.current_player
        if mover is not None and (viewer is None or viewer == mover):
            lines.append("legal: " + ", ".join(three_player_action_name(action) for action in game.legal_actions()))
        return "\n".join(lines)

    def close(self) -> None:
        pass


_RESET_OPTIONS = (*RESET_OPTIONS, "learner_seat")  # the two-player Gymnasium env's


class ThreePlayerGymEnv(LearnerSeatViews, gymnasium.Env):
    """One seat of three-player Sixty-six against two embedded opponents, one deal per episode.

    ``opponents``: two agents or callables (one may be given for both seats; None: uniform random). The reward is
    the learner's game point when the deal ends (1 if it wins, else 0). Observation: the flat vector, or with
    ``dict_observation=True`` the PettingZoo dict; ``action_masks()`` for ``MaskablePPO``. An illegal learner
    action (an action id 0..44 that is not legal now) ends the deal unscored and the episode with reward ``-1``
    (``illegal_action="forfeit"``, default: an environment penalty so that learners without masks learn from it;
    R21 names no Renonce penalty for three) or raises ``ValueError`` (``"raise"``); anything that is not an action
    id always raises. An illegal opponent action always raises (a bug in the opponent)."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}
    _mask_function = staticmethod(three_action_mask)  # LearnerSeatViews: the 45 three-player actions
    _information_set_class = ThreeInformationSet

    # The two-player Gymnasium env's arguments in its order (opponents for its opponent).
    def __init__(self, rules: str | Rules | Mapping[str, Any] = "three", opponents: Any = None,
                 learner_seat: int | str = "rotate", illegal_action: str = "forfeit", dict_observation: bool = False,
                 render_mode: str | None = None, dealer: int | str = "random"):
        super().__init__()
        self.rules = three_player_rules(rules)
        if illegal_action not in ("forfeit", "raise"):
            raise ValueError(f"illegal_action must be 'forfeit' or 'raise', got {illegal_action!r}")
        self.illegal_action = illegal_action
        if not isinstance(dict_observation, bool):
            raise ValueError(f"dict_observation must be true or false, got {dict_observation!r}")
        self.dict_observation = dict_observation
        self.render_mode = checked_render_mode(render_mode, self.metadata["render_modes"])
        self.dealer_schedule = ThreeSeatSchedule(dealer, "dealer")
        self._seat_schedule = ThreeSeatSchedule(learner_seat, "learner_seat")
        if not isinstance(opponents, (list, tuple)):
            opponents = [opponents, opponents]  # one object for both seats: only for one that keeps no seat state
        if len(opponents) != 2:
            raise ValueError(f"opponents must be two agents (or one for both seats), got {len(opponents)}")
        self.opponents = [UniformRandomOpponent() if opponent is None else opponent for opponent in opponents]
        self._hooks = [_opponent_hooks(opponent) for opponent in self.opponents]
        vector_space = spaces.Box(low=0.0, high=1.0, shape=(THREE_OBSERVATION_SIZE,), dtype=np.float32)
        self.observation_space = _observation_space() if dict_observation else vector_space
        self.action_space = spaces.Discrete(NUM_ACTIONS_THREE)
        self.game: ThreePlayerGame | None = None
        self.learner = 0
        self.deals = 0

    def _opponent_index(self, seat: int) -> int:
        """Opponent 0 sits left of the learner, opponent 1 right of him."""
        return (seat - self.learner) % 3 - 1

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Deal a new hand. ``options``: ``deck`` (R21 order), ``dealer`` and ``learner_seat`` (0, 1, 2);
        ``match_score`` only None. Unknown options are refused, as in the two-player Gymnasium env."""
        options = check_reset_arguments(seed, options, _RESET_OPTIONS)  # as the two-player Gymnasium env
        check_no_match_score(options)
        # Every option is checked before anything changes: a refused reset leaves the env as it was.
        forced_seat = options.get("learner_seat")
        if forced_seat is not None:
            forced_seat = int(check_three_seat(forced_seat, "options['learner_seat']", ()))
        forced_dealer = options.get("dealer")
        if forced_dealer is not None:
            forced_dealer = int(check_three_seat(forced_dealer, "options['dealer']", ()))
        deck = None if options.get("deck") is None else reset_deck(options["deck"], self.rules)
        super().reset(seed=None if seed is None else int(seed))
        if seed is not None:
            self.dealer_schedule.restart()
            self._seat_schedule.restart()
        draw = lambda: int(self.np_random.integers(3))  # noqa: E731
        self.learner = self._seat_schedule.next_seat(draw, forced_seat)
        dealer = self.dealer_schedule.next_seat(draw, forced_dealer)
        deal_seed = int(self.np_random.integers(1 << 62))
        opponent_seeds = [int(self.np_random.integers(1 << 62)) for _ in range(2)]
        self.game = ThreePlayerGame.deal(self.rules, deck=deck, dealer=dealer,
                                         seed=None if deck is not None else deal_seed)
        self.deals += 1
        for index, (_act, start, reseed) in enumerate(self._hooks):
            if reseed is not None:
                reseed(opponent_seeds[index])
            if start is not None:
                start((self.learner + 1 + index) % 3, self.rules)
        self._play_opponents()
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
            if self.illegal_action == "raise" or not is_action_id(action, NUM_ACTIONS_THREE):
                raise ValueError(f"learner (player {self.learner}): {error}") from None
            end_after_illegal_action(game, self.learner)  # mask all false, info["result"] set
            return self._observation(), -1.0, True, False, {**self._info(), "illegal_action": str(error)}
        self._play_opponents()
        terminated = game.stage == OVER
        reward = float(game.result.returns()[self.learner]) if terminated else 0.0
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, terminated, False, self._info()

    def _play_opponents(self) -> None:
        game = self.game
        while game.stage != OVER and game.to_move != self.learner:
            seat = game.to_move
            index = self._opponent_index(seat)
            action = self._hooks[index][0](ThreeInformationSet(game, seat))
            try:
                game.apply(action)
            except ValueError as error:
                raise ValueError(
                    f"the opponent {self.opponents[index]!r} (player {seat}) made an illegal move: {error}") from None

    def _observation(self) -> Any:
        vector = encode_three_infoset(ThreeInformationSet(self.game, self.learner))
        if self.dict_observation:
            return {"observation": vector, "action_mask": three_action_mask(self.game, self.learner)}
        return vector

    def render(self) -> str | None:
        return render_by_mode(self.render_mode, self.table_text)

    def table_text(self) -> str:
        game = self.game
        if game is None:
            return "ThreePlayerGymEnv: no deal yet (call reset)"
        lines = [f"deal {self.deals}: learner player {self.learner}"]
        lines += game.render(None if game.stage == OVER else self.learner).splitlines()
        if game.stage != OVER:
            lines.append("legal: " + ", ".join(three_player_action_name(a) for a in game.legal_actions()))
        return "\n".join(lines)

    def close(self) -> None:
        pass


def _register() -> None:
    """``gymnasium.make("SixtySixThree-v0", opponents=[...])`` and PettingZoo's ``sixtysix_three_v0``."""
    if "SixtySixThree-v0" not in gymnasium.registry:
        gymnasium.register(id="SixtySixThree-v0", entry_point="sixtysix_env.three_env:ThreePlayerGymEnv")
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # pragma: no cover - older PettingZoo
        return
    if not any(spec_id.startswith("sixtysix_three") for spec_id in aec_registry):
        register("aec", THREE_ENV_NAME, entry_point="sixtysix_env.three_env:three_env")


_register()

__all__ = [
    "ILLEGAL_ACTION_END", "THREE_AGENTS", "THREE_ENV_NAME", "ThreePlayerGymEnv", "ThreePlayerRawEnv",
    "end_after_illegal_action", "three_env",
]
