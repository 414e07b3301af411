"""PettingZoo AEC environment of two-player Sixty-six: one deal per episode (docs/observation.md).

    import sixtysix_env
    env = sixtysix_env.env(rules="standard")          # raw_env inside AssertOutOfBounds + OrderEnforcing
    env.reset(seed=42)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        if termination or truncation:
            action = None
        else:
            legal = observation["action_mask"].nonzero()[0]
            action = int(legal[0])
        env.step(action)

Agents are ``player_0`` and ``player_1`` (engine players 0 and 1). The observation is a dict: ``observation``, the
float32 vector of :mod:`sixtysix_env.observation` (the agent's information set and nothing else), and
``action_mask``, int8 over the 37 actions of docs/actions.md (all zeros for the agent not to move). The reward is
given once, when the deal ends: the game points won or lost (R16), zero-sum. An illegal action either raises
``ValueError`` (``illegal_action="raise"``, the state is unchanged and the agent may try again) or ends the deal
as a Renonce, the offender's opponent scoring 3 (``illegal_action="renonce"``, R8/R16).

Deals and dealers: ``reset(seed=s)`` re-seeds the environment's generator; each deal's cards come from it, so a
seeded reset followed by unseeded ones is a reproducible sequence of deals. With ``dealer="alternate"`` (default,
R3) the dealer of the first deal after a seeded reset (or after construction) is drawn from the generator and
alternates on every further reset; ``dealer="random"`` draws it for every deal; ``dealer=0`` or ``1`` fixes it.
``reset(options=...)`` accepts ``deck`` (an explicit deck in R4 order, card ids or names), ``dealer`` (0 or 1, for
this deal) and ``match_score`` (game points of players 0 and 1 in the current Bummerl, R17, shown in the
observation; 0:0 unless given); other keys are ignored (PettingZoo's api_test passes its own).

The factory ``env`` shares its name with this module: import the module's contents with
``from sixtysix_env.env import raw_env`` (``sixtysix_env.env`` is the factory function).
"""

from __future__ import annotations

import random
import warnings
from typing import Any, Mapping

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from .actions import ACTION_NAMES, NUM_ACTIONS
from .cards import CARD_NAMES, integer_index
from .game import OVER, Game, parse_deck
from .infoset import InformationSet
from .observation import OBSERVATION_SIZE, ObservationEncoder, action_mask, agents_match_score, checked_score_pair
from .rules import Rules

AGENTS = ("player_0", "player_1")
_AGENT_INDEX = {name: index for index, name in enumerate(AGENTS)}
ILLEGAL_ACTION_MODES = ("raise", "renonce")
ENV_NAME = "sixtysix_v0"


def resolve_rules(rules: str | Rules | Mapping[str, Any]) -> Rules:
    """A preset name, a :class:`Rules` object or a mapping of switches -> :class:`Rules`."""
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        return Rules.preset(rules)
    if isinstance(rules, Mapping):
        return Rules.from_dict(rules)
    raise ValueError(f"rules must be a preset name, a Rules object or a mapping of switches, got {rules!r}")


def two_player_rules(rules: str | Rules | Mapping[str, Any], instead: str) -> Rules:
    """:func:`resolve_rules` for an environment of the two-player game; rules with three players (R21) are refused,
    naming ``instead``, the entry point that plays them."""
    resolved = resolve_rules(rules)
    if resolved.players != 2:
        raise ValueError(f"this environment plays the two-player game; for rules with {resolved.players} players "
                         f"(R21) use {instead}")
    return resolved


def check_illegal_action_mode(mode: str) -> str:
    if mode not in ILLEGAL_ACTION_MODES:
        raise ValueError(f"illegal_action must be one of {', '.join(ILLEGAL_ACTION_MODES)}, got {mode!r}")
    return mode


SEAT_MODES = ("alternate", "random")
RESET_OPTIONS = ("deck", "dealer", "match_score")


def check_reset_arguments(seed: Any, options: Any, known: tuple[str, ...] = RESET_OPTIONS,
                          refuse_unknown: bool = True) -> dict[str, Any]:
    """``reset``'s arguments, checked alike by both environments: ``seed`` None or a non-negative integer,
    ``options`` None or a mapping of ``known`` keys. An unknown key raises, or only warns with
    ``refuse_unknown=False`` (PettingZoo's API test resets with an option no environment knows). Returns the
    options as a dict."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be None or a non-negative integer, got {seed!r}")
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(f"options must be a dict, got {type(options).__name__}")
    unknown = sorted(str(key) for key in options if key not in known)
    if unknown:
        message = f"unknown reset option {unknown[0]!r}; known options: {', '.join(known)}"
        if refuse_unknown:
            raise ValueError(message)
        warnings.warn(message + " (ignored)", UserWarning, stacklevel=3)
    return dict(options)


def reset_deck(deck: Any, rules: Rules) -> list[int]:
    """``options["deck"]`` of a reset (two or three players: ``rules.deck`` cards, R2, R21), parsed; an error
    names the option."""
    try:
        return parse_deck(deck, rules)
    except ValueError as error:
        raise ValueError(f"options['deck']: {error}") from None


def check_seat(value: Any, what: str, modes: tuple[str, ...] = SEAT_MODES) -> int | str:
    """A seat choice: 0 or 1, or one of ``modes`` — ``"alternate"`` (drawn, then alternating: R3 for the dealer)
    or ``"random"`` (drawn for every deal). Anything else raises ``ValueError`` naming ``what``."""
    if isinstance(value, str) and value in modes:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value not in (0, 1):
        choices = "".join(f"{mode!r}, " for mode in modes)
        raise ValueError(f"{what} must be {choices}0 or 1, got {value!r}")
    return int(value)


class SeatSchedule:
    """Which seat (0 or 1) takes a role, deal after deal: the dealer, or a learner's seat. Fixed, drawn for every
    deal (``"random"``), or drawn once and then alternating (``"alternate"``, R3 for the dealer).

    ``restart()`` (on a seeded reset) makes the next deal's seat a fresh draw again, so a seeded reset always
    starts the same sequence.
    """

    def __init__(self, mode: int | str, what: str = "dealer"):
        self.mode = check_seat(mode, what)
        self._next: int | None = None

    def restart(self) -> None:
        self._next = None

    def next_seat(self, draw_bit: Any, forced: int | None = None) -> int:
        """The seat for the next deal; ``draw_bit()`` returns 0 or 1 from the environment's generator.
        ``forced`` (a seat chosen for this one deal) overrides the schedule, which then goes on from it."""
        if forced is not None:
            seat = forced
        elif self.mode in (0, 1):
            seat = self.mode
        elif self.mode == "random" or self._next is None:
            seat = int(draw_bit())
        else:
            seat = self._next
        self._next = 1 - seat
        return seat


def env(**kwargs: Any) -> AECEnv:
    """The AEC environment inside the standard wrappers of PettingZoo's classic environments: out-of-bounds
    assertion, then order enforcing (:class:`AssertOutOfBoundsWrapper`, :class:`OrderEnforcingWrapper`).

    No ``TerminateIllegalWrapper``: illegal actions are this environment's own business (``illegal_action``).
    Rules with three players (``rules="three"``, R21) give the three-player environment
    (:func:`sixtysix_env.three_env.three_env`, agents ``player_0..2``).
    """
    if resolve_rules(kwargs.get("rules", "standard")).players == 3:
        from .three_env import three_env

        return three_env(**kwargs)
    environment = raw_env(**kwargs)
    environment = AssertOutOfBoundsWrapper(environment)
    environment = OrderEnforcingWrapper(environment)
    return environment


# --- the standard wrappers, without the cost of attribute forwarding -------------------------------------------
# PettingZoo's wrappers reach the wrapped environment's attributes through a generic ``__getattr__`` chain: about
# 17 chained look-ups per AEC step, some 35 µs on this project's machines, which alone would hold any environment
# under 30,000 steps/s. These subclasses forward the attributes read on every step through properties and skip
# the generic space check for plain in-range action ids; every check of the originals (accessed before reset,
# stepped after the end, action outside the space) is kept and raises the same errors.

_ORDER_CHECKED = ("agent_selection", "agents", "rewards", "terminations", "truncations", "infos")


def _forwarded(name: str, check_reset: bool) -> property:
    """A property reading ``name`` from the first wrapped environment that is not one of these forwarding wrappers
    (they change no attribute, so skipping them reads the same value)."""
    if check_reset:
        def read(self: Any) -> Any:
            if not self._has_reset:
                raise AttributeError(f"{name} cannot be accessed before reset")
            return getattr(self._source, name)
    else:
        def read(self: Any) -> Any:
            return getattr(self._source, name)

    def write(self: Any, value: Any) -> None:
        setattr(self._source, name, value)

    return property(read, write, doc=f"The wrapped environment's ``{name}``.")


def _attribute_source(environment: AECEnv) -> AECEnv:
    while isinstance(environment, (AssertOutOfBoundsWrapper, OrderEnforcingWrapper)):
        environment = environment.env
    return environment


class AssertOutOfBoundsWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper`` (asserts that a step's action lies in the action space)."""

    def __init__(self, env: AECEnv):
        super().__init__(env)
        self._source = _attribute_source(env)

    def step(self, action: Any) -> None:
        if type(action) is int and 0 <= action < NUM_ACTIONS:  # in Discrete(37), the space of both agents
            self.env.step(action)
            return
        agent = self.agent_selection
        space = self.action_space(agent)
        dead_step = action is None and (self.terminations[agent] or self.truncations[agent])
        if not dead_step and not space.contains(action):
            # The original's AssertionError, with a message that names the action and the space.
            raise AssertionError(f"action {action!r} of {agent} is not in the action space {space}")
        self.env.step(action)


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` (errors on use before ``reset``, warns on steps after the end)."""

    def __init__(self, env: AECEnv):
        super().__init__(env)
        self._source = _attribute_source(env)

    def observe(self, agent: str) -> Any:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self._source.observe(agent)

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not self._source.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self._source.last(observe)


for _name in _ORDER_CHECKED:
    setattr(AssertOutOfBoundsWrapper, _name, _forwarded(_name, check_reset=False))
    setattr(OrderEnforcingWrapper, _name, _forwarded(_name, check_reset=True))
for _wrapper in (AssertOutOfBoundsWrapper, OrderEnforcingWrapper):
    _wrapper._cumulative_rewards = _forwarded("_cumulative_rewards", check_reset=False)
del _name, _wrapper


class StateCopy:
    """``copy.deepcopy`` that continues from the copied state. ``EzPickle`` (which PettingZoo's envs use to send an
    env to a worker as its constructor's arguments) also served deepcopy, so a copy made mid-deal was a fresh env
    that was never reset: ``last()`` failed and ``game`` was None."""

    def __deepcopy__(self, memo: dict) -> Any:
        import copy

        copied = type(self).__new__(type(self))
        memo[id(self)] = copied
        for name, value in self.__dict__.items():
            copied.__dict__[name] = copy.deepcopy(value, memo)
        return copied


class raw_env(StateCopy, AECEnv, EzPickle):
    """Two-player Sixty-six, one deal per episode. See the module docstring for the options."""

    metadata = {
        "render_modes": ["ansi", "human"],
        "name": ENV_NAME,
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        rules: str | Rules | Mapping[str, Any] = "standard",
        illegal_action: str = "raise",
        render_mode: str | None = None,
        dealer: int | str = "alternate",
        render_view: str | int | None = None,
    ):
        """``rules``: preset name, :class:`Rules` or mapping of switches. ``illegal_action``: ``"raise"`` or
        ``"renonce"``. ``render_mode``: ``"ansi"`` (render returns the text), ``"human"`` (prints it) or None.
        ``dealer``: ``"alternate"`` (R3: drawn, then alternating), ``"random"`` (drawn for every deal) or a fixed
        0 / 1. ``render_view``: None shows the whole table, ``"current"`` only the hand of the agent to move, an
        agent name or 0 / 1 that seat's view."""
        EzPickle.__init__(self, rules, illegal_action, render_mode, dealer, render_view)
        super().__init__()
        self.rules = two_player_rules(rules, "sixtysix_env.env(rules='three')")
        self.illegal_action = check_illegal_action_mode(illegal_action)
        self.render_mode = checked_render_mode(render_mode, self.metadata["render_modes"])
        self.dealer_schedule = SeatSchedule(dealer)
        if isinstance(render_view, str) and render_view in (*AGENTS, "current"):
            self.render_view = _AGENT_INDEX.get(render_view, render_view)
        elif render_view is None or integer_index(render_view) in (0, 1):  # 1.0 and True are no seat
            self.render_view = None if render_view is None else integer_index(render_view)
        else:
            raise ValueError(f"render_view must be None, 'current', 0, 1 or an agent name, got {render_view!r}")
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        # One space object per agent, returned as is every time (seeding a space must stick).
        self.observation_spaces = {agent: observation_space() for agent in AGENTS}
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in AGENTS}
        self._encoder = ObservationEncoder(self.rules)
        self._core_observer = _core_observer(self.rules)
        # Observations are encoded in the compiled core when it implements the rules (every preset): the same
        # vectors as the Python encoder, faster. False uses the Python encoder (benchmarks compare the two).
        self.observe_with_core = self._core_observer is not None
        self._rng = random.Random()
        self.deals = 0
        self.game: Game | None = None

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        options = check_reset_arguments(seed, options, refuse_unknown=False)
        # Every option is checked before anything changes: a refused reset leaves the env as it was.
        forced = options.get("dealer")
        if forced is not None:
            forced = check_seat(forced, "options['dealer']", modes=())
        deck = None if options.get("deck") is None else reset_deck(options["deck"], self.rules)
        match_score = checked_score_pair(options.get("match_score", (0, 0)))
        if seed is not None:
            self._rng = random.Random(int(seed))
            self.dealer_schedule.restart()
        dealer = self.dealer_schedule.next_seat(lambda: self._rng.getrandbits(1), forced)
        deal_seed = self._rng.getrandbits(64)  # drawn even for an explicit deck: the sequence stays the same
        if deck is not None:
            self.game = Game.deal(self.rules, deck=deck, dealer=dealer)
        else:
            self.game = Game.deal(self.rules, seed=deal_seed, dealer=dealer)
        self._encoder.set_match_score(match_score)
        # Agents see the score in their information sets when the caller gave one of a Bummerl in progress (R17: both
        # below the target; the observation clips larger ones); a deal on its own has none.
        self._info_match_score = agents_match_score(options.get("match_score"), self.rules.bummerl_target)
        if self._core_observer is not None:
            self._core_observer.set_match_score(self._encoder.match_score)
        self.deals += 1
        self.agents = list(AGENTS)
        self.rewards = {agent: 0.0 for agent in AGENTS}
        self._cumulative_rewards = {agent: 0.0 for agent in AGENTS}
        self.terminations = {agent: False for agent in AGENTS}
        self.truncations = {agent: False for agent in AGENTS}
        self.infos = {agent: {} for agent in AGENTS}
        self.agent_selection = AGENTS[self.game.to_move]

    def step(self, action: Any) -> None:
        if self.game is None:
            raise ValueError("call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        player = game.to_move
        self._cumulative_rewards[agent] = 0.0
        try:
            game.apply(action)
        except ValueError as error:
            if self.illegal_action == "raise" or not is_action_id(action):
                raise ValueError(f"{agent}: {error}") from None
            game.forfeit(player)  # R8 Renonce: the opponent scores 3 (R16)
        if game.stage == OVER:
            self._finish(player)
        else:
            self.agent_selection = AGENTS[game.to_move]
        if self.render_mode == "human":
            self.render()

    def _finish(self, last_player: int) -> None:
        result = self.game.result
        first, second = result.returns()
        self.rewards = {AGENTS[0]: float(first), AGENTS[1]: float(second)}
        self._accumulate_rewards()
        self.terminations = {agent: True for agent in AGENTS}
        self.infos = {agent: {"result": result} for agent in AGENTS}
        self.agent_selection = AGENTS[1 - last_player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        player = _AGENT_INDEX[agent]
        if self.game is None:  # the raw env unwrapped: the wrapper's order check is not there
            raise ValueError("call reset() before observe()")
        game = self.game
        if self.observe_with_core:
            return self._core_observer.observe(game, player)
        return {"observation": self._encoder.encode(game, player), "action_mask": action_mask(game, player)}

    def information_set(self, agent: str | int) -> InformationSet:
        """What ``agent`` may know now, for the agents of ``agents/`` (``agent.act(env.information_set(name))``)."""
        player = _AGENT_INDEX.get(agent, agent) if isinstance(agent, str) else agent
        if player not in (0, 1) or isinstance(player, bool):
            raise ValueError(f"agent must be one of {', '.join(AGENTS)} (or 0 / 1), got {agent!r}")
        if self.game is None:
            raise ValueError("call reset() before information_set()")
        return InformationSet(self.game, player, self._info_match_score)

    @property
    def match_score(self) -> tuple[int, int]:
        return self._encoder.match_score

    # ------------------------------------------------------------------ display
    def render(self) -> str | None:
        return render_by_mode(self.render_mode, self.table_text)

    def table_text(self, viewer: int | None | str = "default") -> str:
        """The table as text from ``viewer``'s seat (None: everything; default: the ``render_view`` option)."""
        game = self.game
        if game is None:
            return f"{ENV_NAME}: no deal yet (call reset)"
        if viewer == "default":
            viewer = self.render_view
        if viewer == "current":
            viewer = game.current_player  # None once the deal is over: then both hands are shown
        viewer = _AGENT_INDEX.get(viewer, viewer) if isinstance(viewer, str) else viewer
        lines = [f"{ENV_NAME} deal {self.deals}, dealer {AGENTS[game.dealer]}"
                 + (f", match score {self.match_score[0]}:{self.match_score[1]}" if any(self.match_score) else "")]
        lines += game.render(viewer).splitlines()
        if game.tricks:
            leader, lead, follow, winner, _phase2 = game.tricks[-1]
            lines.append(f"last trick: {AGENTS[leader]} led {CARD_NAMES[lead]}, {AGENTS[1 - leader]} played "
                         f"{CARD_NAMES[follow]}, won by {AGENTS[winner]}")
        mover = game.current_player
        if mover is not None and (viewer is None or viewer == mover):
            lines.append("legal: " + ", ".join(ACTION_NAMES[a] for a in game.legal_actions()))
        return "\n".join(lines)

    def close(self) -> None:
        pass


def _core_observer(rules: Rules) -> Any:
    """A :class:`~sixtysix_env.core.mirror.CoreObserver` for ``rules``, or None when the compiled core does not
    implement them (``auto_declare`` off, ``allow_false_declaration`` on); imported here, not at package import,
    because it loads numba."""
    from .core.mirror import CoreObserver

    try:
        return CoreObserver(rules)
    except ValueError:
        return None


def is_action_id(action: Any, action_count: int = NUM_ACTIONS) -> bool:
    """An integer (Python or numpy, not a bool or a float) naming one of the ``action_count`` actions (37; 45 in the
    three-player game, R21)."""
    return 0 <= integer_index(action) < action_count


def observation_space() -> spaces.Dict:
    """A new observation space of one agent: the float32 vector and the int8 action mask."""
    return spaces.Dict({
        "observation": spaces.Box(low=0.0, high=1.0, shape=(OBSERVATION_SIZE,), dtype=np.float32),
        "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
    })


def _register() -> None:
    """Register ``sixtysix_v0`` with PettingZoo's registry (PettingZoo >= 1.27 has one; older versions do not)."""
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # pragma: no cover - older PettingZoo
        return
    if not any(spec_id.startswith("sixtysix") for spec_id in aec_registry):
        register("aec", ENV_NAME, entry_point="sixtysix_env.env:env")


_register()

__all__ = [
    "AGENTS", "AssertOutOfBoundsWrapper", "ENV_NAME", "ILLEGAL_ACTION_MODES", "OrderEnforcingWrapper", "SEAT_MODES",
    "SeatSchedule", "check_seat", "env", "is_action_id", "raw_env", "resolve_rules", "two_player_rules",
]


def checked_render_mode(render_mode: Any, modes: list[str]) -> str | None:
    """The render mode an environment keeps: None or one of ``modes``. ``"rgb_array"``, which tools pass by default
    (stable-baselines3's ``make_vec_env`` with an env id), is taken as None with a warning, as ``gymnasium.make``
    warns about a mode the environment does not list, since these environments draw text, not images; any other
    value is refused by name."""
    if render_mode is None or render_mode in modes:
        return render_mode
    if render_mode == "rgb_array":
        gymnasium.logger.warn(f"render_mode='rgb_array' is not offered (the environment renders text: one of "
                              f"{modes}); rendering is off")
        return None
    raise ValueError(f"render_mode must be one of {modes} or None, got {render_mode!r}")


def render_by_mode(render_mode: str | None, table_text) -> str | None:
    """Shared by both environments: ``ansi`` returns the table text, ``human`` prints it."""
    if render_mode is None:
        gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'.")
        return None
    text = table_text()
    if render_mode == "human":
        print(text)
        return None
    return text
