"""Self-play training with MaskablePPO: the opponent pool, the periodic evaluation, checkpoints, the trainer.

One PPO stream learns one seat at a time: every environment is the single-agent
:class:`~sixtysix_env.gym_env.SixtySixGymEnv`, whose embedded opponent is a :class:`PoolOpponent`. At each deal the
pool opponent draws who plays the other seat: a baseline agent (``random``, ``greedy``, ``heuristic`` by default)
or a frozen snapshot of the learner, which plays its own masked policy on the observation of its own seat. The
learner's reward is always its own game points (R16); the opponent's decisions never enter the PPO batch.

Run directory (``run.out_dir/run.name``)::

    config.yaml              the full config of the run (also in TensorBoard as text)
    tb/                      TensorBoard event files
    scalars.csv              every logged scalar (step, tag, value), for notebooks
    eval.jsonl               one line per evaluation and opponent (margin with its 95% interval)
    pool/pool.json           the opponent pool's snapshots; pool/snap_<step>.npz their weights
    checkpoints/step_<N>.zip model + optimizer (stable-baselines3 zip + sixtysix.json metadata)
    checkpoints/step_<N>.json counters, pool and random states at that step
    checkpoint.json          which checkpoint is the latest (written last, atomically)
    final.zip                the trained model at the end (the ``ppo:path=...`` agent format)

Every file is written atomically, and ``checkpoint.json`` only after the files it points to, so a run killed at any
moment (``kill -9``) resumes from its last complete checkpoint with ``sixtysix train --resume RUN_DIR``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import pickle
import random
import re
import shutil
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from agents.base import Agent, rules_name
from agents.ppo import (ActorNetwork, PolicyAgent, add_metadata_to_zip, check_metadata, delegated, model_metadata,
                        read_model_metadata, torch_activation)
from agents.registry import make_agent
from eval.deals import derive_seed, generate_deals
from eval.stats import mean_interval, wilson_interval
from sixtysix_env.fileio import remove_stale_temp_files, write_bytes_atomic, write_json_atomic, write_text_atomic
from sixtysix_env.game import Game
from sixtysix_env.rules import Rules
from sixtysix_env.schema import check_keys, read_json_file, require_int

from .config import TrainConfig, config_from_dict, load_config
from .export import read_start_model
from .runlog import ScalarsCsv, truncate_log

POOL_MANIFEST = "pool.json"
CHECKPOINT_POINTER = "checkpoint.json"
SNAPSHOT_LABEL = "snapshot"


# ====================================================================================== the opponent pool
class PoolOpponent(Agent):
    """The embedded opponent of a training environment: a new draw from the pool at every deal.

    The pool is the baselines (built once) plus the snapshots listed in ``pool_dir/pool.json``, which the trainer
    rewrites when it adds one; the file is re-read when it changes, so environments in other processes see new
    snapshots without any message passing. ``current_label`` names the opponent of the current deal
    (the baseline's spec, or ``snapshot``).
    """

    name = "pool"

    def __init__(
        self,
        pool_dir: str | os.PathLike,
        baselines: dict[str, float],
        snapshot_weight: float,
        latest_snapshot_share: float,
        snapshot_deterministic: bool,
        rules: Rules,
        seed: int | None = None,
        phase2: str = "policy",
    ):
        super().__init__(seed)
        self.phase2 = phase2  # snapshots play R8 decisions as the learner does (env.phase2)
        self.pool_dir = Path(pool_dir)
        self.rules = rules
        self.snapshot_weight = snapshot_weight
        self.latest_snapshot_share = latest_snapshot_share
        self.snapshot_deterministic = snapshot_deterministic
        self.baselines = {
            spec: (weight, make_agent(spec, seed=derive_seed("pool", seed, spec)))
            for spec, weight in baselines.items()
            if weight > 0
        }
        self.snapshot_files: list[str] = []
        self._snapshot_agents: dict[str, PolicyAgent] = {}
        self._manifest_stamp: tuple[int, int] | None = None
        self.current: Agent | None = None
        self.current_label = ""
        self.current_member = ""

    def refresh(self) -> None:
        """Re-read the pool manifest if it changed since the last read."""
        manifest = self.pool_dir / POOL_MANIFEST
        try:
            stat = manifest.stat()
        except FileNotFoundError:
            self.snapshot_files = []
            return
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp == self._manifest_stamp:
            return
        try:
            document = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # cannot happen with atomic writes; keep the previous pool
        self._manifest_stamp = stamp
        self.snapshot_files = [entry["file"] for entry in document.get("snapshots", [])]
        for stale in set(self._snapshot_agents) - set(self.snapshot_files):
            del self._snapshot_agents[stale]

    def weights(self) -> tuple[list[str], list[float]]:
        """Pool members (baseline specs, then snapshot files) and their draw weights."""
        members = list(self.baselines)
        weights = [weight for weight, _agent in self.baselines.values()]
        count = len(self.snapshot_files)
        if count and self.snapshot_weight > 0:
            spread = self.snapshot_weight * (1.0 - self.latest_snapshot_share) / count
            for index, file_name in enumerate(self.snapshot_files):
                latest = self.snapshot_weight * self.latest_snapshot_share if index == count - 1 else 0.0
                members.append(file_name)
                weights.append(spread + latest)
        return members, weights

    def _snapshot_agent(self, file_name: str) -> PolicyAgent:
        agent = self._snapshot_agents.get(file_name)
        if agent is None:
            network, _metadata = ActorNetwork.load_npz(self.pool_dir / file_name)
            agent = PolicyAgent(network, self.rules, deterministic=self.snapshot_deterministic,
                                seed=self.rng.getrandbits(63), where=f"snapshot {file_name}", phase2=self.phase2)
            self._snapshot_agents[file_name] = agent
        return agent

    def start_deal(self, player: int, rules: Rules) -> None:
        self.refresh()
        members, weights = self.weights()
        member = self.rng.choices(members, weights)[0]
        if member in self.baselines:
            self.current = self.baselines[member][1]
            self.current_label = member
        else:
            self.current = self._snapshot_agent(member)
            self.current_label = SNAPSHOT_LABEL
        self.current_member = member
        if hasattr(self.current, "seed"):
            self.current.seed(self.rng.getrandbits(63))  # the deal's play depends only on the env's seed
        self.current.start_deal(player, rules)

    def act(self, infoset: Any) -> int:
        if self.current is None:
            self.start_deal(infoset.player, infoset.rules)
        return self.current.act(infoset)


def write_pool_manifest(pool_dir: Path, snapshots: Sequence[dict[str, Any]]) -> None:
    write_json_atomic(pool_dir / POOL_MANIFEST, {"snapshots": list(snapshots)})


# ====================================================================================== environments
def make_env(config_dict: dict[str, Any], pool_dir: str, seed: int):
    """Build one training environment (called inside the worker process with ``subproc``)."""
    from sixtysix_env.gym_env import SixtySixGymEnv

    config = config_from_dict(config_dict)
    rules = Rules.preset(config.env.rules)
    opponent = PoolOpponent(
        pool_dir,
        config.pool.baselines,
        config.pool.snapshot_weight,
        config.pool.latest_snapshot_share,
        config.pool.snapshot_deterministic,
        rules,
        seed=derive_seed("opponent", seed),
        phase2=config.env.phase2,
    )
    if rules.players == 3:
        # R21: two embedded opponents, each drawn from the same pool on its own generator.
        from sixtysix_env.three_env import ThreePlayerGymEnv

        second = PoolOpponent(pool_dir, config.pool.baselines, config.pool.snapshot_weight,
                              config.pool.latest_snapshot_share, config.pool.snapshot_deterministic, rules,
                              seed=derive_seed("opponent", "second", seed), phase2=config.env.phase2)
        illegal = "forfeit" if config.env.illegal == "renonce" else "raise"
        env = ThreePlayerGymEnv(rules=rules, opponents=[opponent, second], illegal_action=illegal)
        pools = [opponent, second]
    else:
        env = SixtySixGymEnv(rules=rules, opponent=opponent, illegal_action=config.env.illegal)
        pools = [opponent]
    if config.env.phase2 != "policy":
        env = SolverPlaysEndgame(env, config.env.phase2, seed=derive_seed("phase2", seed))
    env = OpponentLabel(env, *pools)
    env.reset(seed=seed)
    return env


def _import_gymnasium_wrapper():
    import gymnasium

    return gymnasium.Wrapper


RESUME_OVERRIDES = ("run.total_steps", "run.progress_bar")  # the config keys a resume may change


def config_fingerprint(config: TrainConfig) -> str:
    """A digest of everything in ``config`` that a resume may not change (all but ``RESUME_OVERRIDES``), kept in
    each checkpoint so that a ``config.yaml`` edited since is refused."""
    values = config.to_dict()
    values["run"] = {key: value for key, value in values["run"].items() if f"run.{key}" not in RESUME_OVERRIDES}
    return hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]


MAX_SEARCHED_DEALS = 100  # deals in a row the search may play to the end before SolverPlaysEndgame.reset refuses


class SolverPlaysEndgame(_import_gymnasium_wrapper()):  # type: ignore[misc]
    """``env.phase2: solver`` / ``endgame``: the learner's decisions from R8 on (talon closed or exhausted), or from
    the talon's last trick on, are played by the ``heuristic`` agent's exact search, as
    :class:`~agents.ppo.PolicyAgent` does in play with the same mode (:func:`agents.ppo.delegated`). The learner only
    sees (and PPO only learns) the other decisions; the rewards of the skipped steps are summed into the step that
    led to them, so the return is still the deal's game points (R16). The learner's first decision may be one to
    skip as well (forehand may close at his first lead, R10); a deal the search plays to its end before the learner
    decides anything holds nothing to learn, and the next deal is dealt (up to ``MAX_SEARCHED_DEALS`` in a row, and
    never again for a fixed ``deck``: then a ``ValueError`` says so)."""

    def __init__(self, env: Any, mode: str, seed: int):
        super().__init__(env)
        self.mode = mode
        from agents.rule_based import HeuristicAgent

        self.solver_agent = HeuristicAgent(seed=seed)
        self._seed_source = random.Random(seed)

    def reset(self, **kwargs: Any):
        observation, info = self.env.reset(**kwargs)
        options = kwargs.get("options") or {}
        searched_in_a_row = 0
        while True:
            base = self.env.unwrapped
            self.solver_agent.seed(self._seed_source.getrandbits(63))
            self.solver_agent.start_deal(base.learner, base.rules)
            observation, _, terminated, truncated, info = self._play_delegated(observation, 0.0, False, False, info)
            if not (terminated or truncated):
                return observation, info
            searched_in_a_row += 1
            # A fixed deck deals the same deal again, and options that always give the opponent an early closing
            # (R10) may never leave the learner a decision: refuse rather than loop, as the base env does.
            if options.get("deck") is not None or searched_in_a_row >= MAX_SEARCHED_DEALS:
                raise ValueError(
                    f"the search ({self.mode!r}) played {searched_in_a_row} deal(s) in a row to the end before the "
                    f"learner's first decision (reset options {options!r})")
            # The next deal follows the environment's generator (the seed, if any, was for the first).
            observation, info = self.env.reset(options=kwargs.get("options"))

    def step(self, action: Any):
        return self._play_delegated(*self.env.step(action))

    def _play_delegated(self, observation: Any, reward: float, terminated: bool, truncated: bool, info: dict):
        """After a step (its outcome given), play the learner's decisions that the search takes until one of the
        learner's own or the end of the deal; the rewards of those steps are added to ``reward``."""
        total = float(reward)
        base = self.env.unwrapped
        while not (terminated or truncated):
            infoset = base.information_set()
            if not delegated(infoset, self.mode):
                break
            observation, reward, terminated, truncated, info = self.env.step(self.solver_agent.act(infoset))
            total += float(reward)
        return observation, total, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()


class OpponentLabel(_import_gymnasium_wrapper()):  # type: ignore[misc]
    """Adds ``info["opponent"]`` (the pool member's label; with two pool opponents, R21, both labels sorted and
    joined by ``+``, e.g. ``greedy+random``) and the episode's return at the end of each deal."""

    def __init__(self, env: Any, pool: PoolOpponent, *more_pools: PoolOpponent):
        super().__init__(env)
        self.pool = pool  # the first seat's: its draws name the snapshot that plays
        self.pools = (pool, *more_pools)
        self._return = 0.0

    def reset(self, **kwargs: Any):
        self._return = 0.0
        return self.env.reset(**kwargs)

    def step(self, action: Any):
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._return += float(reward)
        if terminated or truncated:
            info = dict(info)
            info["opponent"] = "+".join(sorted(pool.current_label for pool in self.pools))
            info["deal_return"] = self._return
        return observation, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()


def _vec_env_wrapper_base():
    from stable_baselines3.common.vec_env import VecEnvWrapper

    return VecEnvWrapper


class MaskCachingVecEnv(_vec_env_wrapper_base()):  # type: ignore[misc]
    """Answers MaskablePPO's ``env_method("action_masks")`` from the masks the environments already returned in
    their step and reset infos (``info["action_mask"]``), saving one round trip to every worker process per step."""

    def __init__(self, venv: Any):
        super().__init__(venv)
        self._masks: list[np.ndarray] = []

    def reset(self):
        observations = self.venv.reset()
        self._masks = [info["action_mask"] for info in self.venv.reset_infos]
        return observations

    def step_wait(self):
        observations, rewards, dones, infos = self.venv.step_wait()
        reset_infos = self.venv.reset_infos
        self._masks = [reset_infos[i]["action_mask"] if done else infos[i]["action_mask"] for i, done in enumerate(dones)]
        return observations, rewards, dones, infos

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any):
        if method_name == "action_masks" and indices is None and not method_args and not method_kwargs and self._masks:
            return list(self._masks)
        return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)


def build_vec_env(config: TrainConfig, pool_dir: Path, seed: int):
    from functools import partial

    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    config_dict = config.to_dict()
    env_fns = [partial(make_env, config_dict, str(pool_dir), derive_seed("env", seed, rank)) for rank in range(config.run.n_envs)]
    if config.run.vec_env == "subproc":
        vec_env = SubprocVecEnv(env_fns)
    else:
        vec_env = DummyVecEnv(env_fns)
    return VecMonitor(MaskCachingVecEnv(vec_env))


# ====================================================================================== evaluation
def duplicate_margin(
    learner: Agent, opponent: Agent, rules: Rules, deals: Sequence[Any], seed: int
) -> dict[str, Any]:
    """The learner's mean game-point margin per deal over duplicate pairs (each deal played in both seats).

    The value of one pair is the learner's average return over its two deals (seats swapped), so the card luck
    cancels; the 95% interval is the t interval over pairs (eval.stats.mean_interval). Also returns the deal win
    rate with its Wilson interval (unscored deals count half).
    """
    from eval.play import play_deal

    if rules.players == 3:
        return three_player_margin(learner, opponent, rules, deals, seed)
    pair_values = []
    wins = 0.0
    for index, deal in enumerate(deals):
        total = 0.0
        for learner_seat in (0, 1):
            game = Game.deal(rules, deck=list(deal.deck), dealer=deal.dealer)
            seats = [learner, opponent] if learner_seat == 0 else [opponent, learner]
            agent_seeds = [derive_seed(seed, index, learner_seat, seat) for seat in (0, 1)]
            outcome = play_deal(game, seats, agent_seeds)
            value = outcome.returns[learner_seat]
            total += value
            wins += 1.0 if value > 0 else 0.5 if value == 0 else 0.0
        pair_values.append(total / 2.0)
    interval = mean_interval(pair_values)
    win_low, win_high = wilson_interval(wins, 2 * len(deals))
    return {
        "margin": interval.mean, "margin_ci_low": interval.low, "margin_ci_high": interval.high,
        "pairs": len(deals), "win_rate": wins / (2 * len(deals)), "win_rate_ci_low": win_low,
        "win_rate_ci_high": win_high,
    }


def share_of_the_win(result: Any, seat: int) -> float:
    """``seat``'s share of a three-player deal's win (R21): 1 for the winner; in a deal not scored, ``1 / k`` for
    each of the ``k`` seats with the most points (a tie at the top), 0 for the others."""
    if result.winner is not None:
        return 1.0 if result.winner == seat else 0.0
    top = max(result.points)
    leaders = [index for index, points in enumerate(result.points) if points == top]
    return 1.0 / len(leaders) if seat in leaders else 0.0


def three_player_margin(learner: Agent, opponent: Agent, rules: Rules, deals: Sequence[Any], seed: int
                        ) -> dict[str, Any]:
    """R21: the learner against two instances of ``opponent``'s spec, each deal played three times with the
    learner in every seat. The value of a deal is the learner's mean game points minus the opponents' mean (a
    zero-sum margin), 95% t interval over deals; the win rate is the share of games the learner wins (a game not
    scored, a tie at the top, is shared among the seats with the most points: a half or a third to the learner if he
    is one of them, nothing if not)."""
    from agents import make_agent
    from eval.three_tournament import _play_game

    opponents = [opponent, make_agent(opponent.name, seed=0)]
    values = []
    wins = 0.0
    for index, deal in enumerate(deals):
        total = 0.0
        for learner_seat in range(3):
            seated = iter(opponents)
            seats = [learner if seat == learner_seat else next(seated) for seat in range(3)]
            for seat, agent in enumerate(seats):
                agent.seed(derive_seed(seed, index, learner_seat, seat))
            game = _play_game(seats, rules, Game.deal(rules, deck=list(deal.deck), dealer=deal.dealer),
                              [[], [], []])
            returns = game.returns()
            others = [returns[seat] for seat in range(3) if seat != learner_seat]
            total += returns[learner_seat] - sum(others) / 2.0
            wins += share_of_the_win(game.result, learner_seat)
        values.append(total / 3.0)
    interval = mean_interval(values)
    win_low, win_high = wilson_interval(wins, 3 * len(deals))
    return {
        "margin": interval.mean, "margin_ci_low": interval.low, "margin_ci_high": interval.high,
        "pairs": len(deals), "win_rate": wins / (3 * len(deals)), "win_rate_ci_low": win_low,
        "win_rate_ci_high": win_high,
    }


# ====================================================================================== logging
TAG_RENAMES = {
    "train/policy_gradient_loss": "losses/policy_loss",
    "train/value_loss": "losses/value_loss",
    "train/approx_kl": "losses/approx_kl",
    "train/clip_fraction": "losses/clipfrac",
    "train/loss": "losses/loss",
    "train/explained_variance": "charts/explained_variance",
    "train/learning_rate": "charts/learning_rate",
    "train/clip_range": "charts/clip_range",
    "time/fps": "charts/SPS",
    "rollout/ep_rew_mean": "charts/episodic_return",
    "rollout/ep_len_mean": "charts/episodic_length",
}


def _make_writers(run_dir: Path, resume_step: int | None):
    from stable_baselines3.common.logger import KVWriter

    class RenamingWriter(KVWriter):
        """Logs PPO's values under the CleanRL-style tags (``losses/...``, ``charts/...``); ``train/entropy_loss``
        (minus the entropy) becomes ``losses/entropy``."""

        def __init__(self, inner: KVWriter):
            self.inner = inner

        def write(self, key_values: dict[str, Any], key_excluded: dict[str, Any], step: int = 0) -> None:
            values: dict[str, Any] = {}
            excluded: dict[str, Any] = {}
            for key, value in key_values.items():
                new_key = TAG_RENAMES.get(key, key)
                if key == "train/entropy_loss":
                    new_key, value = "losses/entropy", -float(value)
                values[new_key] = value
                excluded[new_key] = key_excluded.get(key)
            self.inner.write(values, excluded, step)

        def close(self) -> None:
            self.inner.close()

    class CsvScalarsWriter(KVWriter):
        """Appends every numeric value as a (step, tag, value) row to ``scalars.csv``."""

        def __init__(self, path: Path, keep_through: int | None):
            self.table = ScalarsCsv(path, keep_through)

        def write(self, key_values: dict[str, Any], key_excluded: dict[str, Any], step: int = 0) -> None:
            for key, value in sorted(key_values.items()):
                if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                    self.table.add(step, TAG_RENAMES.get(key, key) if key != "train/entropy_loss" else "losses/entropy",
                                   -float(value) if key == "train/entropy_loss" else float(value))
            self.table.flush()

        def close(self) -> None:
            self.table.close()

    # A resumed run redoes the steps after its checkpoint: their rows go.
    return [RenamingWriter(_tensorboard_writer(run_dir / "tb", resume_step)),
            CsvScalarsWriter(run_dir / "scalars.csv", resume_step)]


def _tensorboard_writer(folder: Path, resume_step: int | None):
    """SB3's TensorBoard output; after a resume its SummaryWriter purges the events a killed run logged after the
    checkpoint (``purge_step``), so TensorBoard shows every step once."""
    from stable_baselines3.common.logger import TensorBoardOutputFormat

    class ResumingTensorBoard(TensorBoardOutputFormat):
        def __init__(self) -> None:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(log_dir=str(folder), purge_step=None if resume_step is None else resume_step + 1)
            self._is_closed = False

    return ResumingTensorBoard()


# ====================================================================================== random states
def _pack(value: Any) -> str:
    return base64.b64encode(pickle.dumps(value)).decode("ascii")


def _unpack(text: str) -> Any:
    return pickle.loads(base64.b64decode(text))


def capture_rng_states() -> dict[str, str]:
    import torch

    return {"python": _pack(random.getstate()), "numpy": _pack(np.random.get_state()),
            "torch": _pack(torch.get_rng_state())}


def restore_rng_states(states: dict[str, str]) -> None:
    import torch

    random.setstate(_unpack(states["python"]))
    np.random.set_state(_unpack(states["numpy"]))
    torch.set_rng_state(_unpack(states["torch"]))


def check_rng_states(states: dict[str, Any], where: str) -> None:
    """Each state of :func:`capture_rng_states` must restore (tried on throwaway generators): a damaged one is a
    ``ValueError`` naming it before a resume builds anything, not a decoding or unpickling traceback after."""
    import torch

    restorers = {"python": lambda state: random.Random().setstate(state),
                 "numpy": lambda state: np.random.RandomState().set_state(state),
                 "torch": lambda state: torch.Generator().set_state(state)}
    for key, restore in restorers.items():
        try:
            restore(_unpack(states[key]))
        except Exception as error:  # unpickling damaged bytes may raise almost anything
            raise ValueError(f"{where} {key!r} is not a saved {key} random state ({type(error).__name__})") from None


# ====================================================================================== the trainer
class RunDirError(ValueError):
    """A run directory that cannot be started or resumed."""


class Trainer:
    """Sets up a run (new or resumed), trains, and keeps the run directory up to date."""

    def __init__(self, config: TrainConfig, run_dir: Path, resume: bool = False, quiet: bool = False):
        self.config = config
        self.run_dir = Path(run_dir)
        self.pool_dir = self.run_dir / "pool"
        self.checkpoint_dir = self.run_dir / "checkpoints"
        self.rules = Rules.preset(config.env.rules)
        self.resume = resume
        self.quiet = quiet
        self.state: dict[str, Any] = {}
        self.eval_deals = generate_deals(config.eval.seed, config.eval.pairs, self.rules)
        self.eval_history: list[dict[str, Any]] = []
        self._initial_state: dict[str, Any] | None = None  # run.init_model's policy weights, once checked

    # ------------------------------------------------------------------ run directory
    @classmethod
    def new_run(cls, config: TrainConfig, quiet: bool = False) -> "Trainer":
        run_dir = config.run_dir
        if (run_dir / "config.yaml").exists():
            raise RunDirError(
                f"run directory {str(run_dir)!r} already holds a run: continue it with --resume {run_dir}, or choose "
                "another name with --set run.name=..."
            )
        # Files of a run whose config.yaml is gone: a new run would append its logs to theirs and mix its
        # checkpoints and pool with theirs.
        leftovers = [name for name in ("final.zip", CHECKPOINT_POINTER, "checkpoints", "pool", "scalars.csv",
                                       "eval.jsonl", "tb") if (run_dir / name).exists()]
        if leftovers:
            raise RunDirError(f"run directory {str(run_dir)!r} holds {', '.join(leftovers)} of an earlier run but no "
                              "config.yaml: move them away, or choose another name with --set run.name=...")
        # Whatever can refuse the config is checked before the run directory is touched: a refused start leaves no
        # half-made run behind that the next start would take for one to continue with --resume.
        trainer = cls(config, run_dir, resume=False, quiet=quiet)
        trainer.initial_policy_state()
        run_dir.mkdir(parents=True, exist_ok=True)
        write_text_atomic(run_dir / "config.yaml", config.to_yaml())
        return trainer

    @classmethod
    def resume_run(cls, run_dir: str | os.PathLike, overrides: Sequence[str] = (), quiet: bool = False) -> "Trainer":
        run_dir = Path(run_dir)
        if not (run_dir / "config.yaml").exists():
            raise RunDirError(f"{str(run_dir)!r} is not a run directory (no config.yaml)")
        for override in overrides:
            key = override.partition("=")[0].strip()
            if key not in RESUME_OVERRIDES:
                raise ValueError(
                    f"cannot change config key {key!r} when resuming (the run continues with its own config); "
                    f"allowed: {', '.join(RESUME_OVERRIDES)}"
                )
        config = load_config(run_dir / "config.yaml", list(overrides))
        trainer = cls(config, run_dir, resume=True, quiet=quiet)
        # The checkpoint is checked before config.yaml takes the overrides: a refused resume changes nothing.
        checkpoint = trainer.latest_checkpoint()
        if checkpoint is not None and config.run.total_steps < checkpoint["step"]:
            # it would train nothing and write a total below the run's own into config.yaml
            raise RunDirError(f"{str(run_dir)!r} has already trained {checkpoint['step']} steps, more than "
                              f"run.total_steps {config.run.total_steps}: resume it with a total at least that large "
                              "(--set run.total_steps=N)")
        if overrides:
            write_text_atomic(run_dir / "config.yaml", config.to_yaml())
        return trainer

    def latest_checkpoint(self) -> dict[str, Any] | None:
        """The state of the checkpoint ``checkpoint.json`` names, checked (a damaged or foreign file is refused by
        name, not a traceback); ``None`` before the first checkpoint."""
        pointer = self.run_dir / CHECKPOINT_POINTER
        if not pointer.exists():
            return None
        try:
            latest = check_keys(read_json_file(pointer, "checkpoint pointer"), "checkpoint pointer", ("name", "step"))
            step = require_int(latest["step"], "checkpoint pointer step", 0)
            if latest["name"] != f"step_{step:010d}":
                raise ValueError(f"checkpoint pointer names {latest['name']!r} for step {step}")
            state_path = self.checkpoint_dir / f"{latest['name']}.json"
            state = check_keys(read_json_file(state_path, "checkpoint state"), "checkpoint state",
                               ("pool", "next_snapshot", "next_eval", "next_checkpoint", "resumes", "step", "name",
                                "rng"), ("config",))
            # Checkpoints since session 66 name the config they were trained with: one edited since is refused.
            if "config" in state and state["config"] != config_fingerprint(self.config):
                raise ValueError("config.yaml differs from the config this checkpoint was trained with (on resume "
                                 f"only {' and '.join(RESUME_OVERRIDES)} may change)")
            require_int(state["step"], "checkpoint state step", 0)
            if (state["name"], state["step"]) != (latest["name"], step):
                raise ValueError(f"checkpoint state {str(state_path)!r} is of {state['name']!r} at step "
                                 f"{state['step']}, not {latest['name']!r} at step {step}")
            for key in ("next_snapshot", "next_checkpoint", "resumes"):
                require_int(state[key], f"checkpoint state {key}", 0)
            if state["next_eval"] is not None:
                require_int(state["next_eval"], "checkpoint state next_eval", 0)
            if not isinstance(state["pool"], list):
                raise ValueError("checkpoint state pool must be a list")
            for entry in state["pool"]:
                check_keys(entry, "checkpoint state pool entry", ("file", "step"))
                if not isinstance(entry["file"], str) or not re.fullmatch(r"snap_\d{10}\.npz", entry["file"]):
                    raise ValueError(f"checkpoint state pool entry {entry['file']!r} is not a snapshot file name")
                require_int(entry["step"], "checkpoint state pool entry step", 0)
            check_keys(state["rng"], "checkpoint state rng", ("python", "numpy", "torch"))
            check_rng_states(state["rng"], "checkpoint state rng")
            model_path = self.checkpoint_dir / f"{latest['name']}.zip"
            if not model_path.is_file():  # sb3's load would name '<name>.zip.zip' as the missing file
                raise ValueError(f"its model {str(model_path)!r} is missing")
            # The model's own metadata: a layout this code no longer builds (the observation changed mid-run) or
            # other rules would otherwise resume silently and label the final model with the run's rules.
            fitted = check_metadata(read_model_metadata(model_path), f"its model {str(model_path)!r}")
            if fitted != self.rules:
                raise ValueError(f"its model {str(model_path)!r} was trained for the rules {rules_name(fitted)!r}, "
                                 f"the run is {self.config.env.rules!r}")
        except (ValueError, OSError) as error:
            raise RunDirError(f"{str(self.run_dir)!r}: its last checkpoint cannot be resumed ({error})") from None
        return state

    # ------------------------------------------------------------------ model files
    def metadata(self, steps: int) -> dict[str, Any]:
        return model_metadata(
            self.rules, self.config.net.activation, self.config.net.hidden,
            trained_steps=int(steps), run=self.config.run.name, seed=self.config.run.seed,
            phase2=self.config.env.phase2,
        )

    def save_model(self, model: Any, path: Path, steps: int) -> None:
        buffer = io.BytesIO()
        model.save(buffer)
        actor = ActorNetwork.from_policy(model.policy, self.config.net.activation)
        write_bytes_atomic(path, add_metadata_to_zip(buffer.getvalue(), self.metadata(steps), actor))

    def add_snapshot(self, model: Any, steps: int) -> None:
        file_name = f"snap_{steps:010d}.npz"
        network = ActorNetwork.from_policy(model.policy, self.config.net.activation)
        network.save_npz(self.pool_dir / file_name, self.metadata(steps))
        snapshots = [entry for entry in self.state["pool"] if entry["file"] != file_name]
        snapshots.append({"file": file_name, "step": int(steps)})
        snapshots = snapshots[-self.config.pool.max_snapshots:]
        self.state["pool"] = snapshots
        write_pool_manifest(self.pool_dir, snapshots)
        self._prune_pool_files()

    def _prune_pool_files(self) -> None:
        """Bounded disk use: delete the snapshot files that neither the pool nor a kept checkpoint lists (a resume
        restores its checkpoint's pool, so those files stay until the checkpoint is pruned)."""
        keep = {entry["file"] for entry in self.state.get("pool", [])}
        for state_path in self.checkpoint_dir.glob("step_*.json"):
            try:
                keep.update(entry["file"] for entry in json.loads(state_path.read_text(encoding="utf-8"))["pool"])
            except (OSError, ValueError, KeyError, TypeError):
                continue  # a checkpoint state that cannot be read cannot be resumed from either
        for path in self.pool_dir.glob("snap_*.npz"):
            if path.name not in keep:
                path.unlink(missing_ok=True)

    def save_checkpoint(self, model: Any, steps: int) -> None:
        name = f"step_{steps:010d}"
        self.checkpoint_dir.mkdir(parents=True, exist_ok=True)
        self.save_model(model, self.checkpoint_dir / f"{name}.zip", steps)
        state = dict(self.state, step=int(steps), name=name, rng=capture_rng_states(),
                     config=config_fingerprint(self.config))
        write_json_atomic(self.checkpoint_dir / f"{name}.json", state)
        write_json_atomic(self.run_dir / CHECKPOINT_POINTER, {"name": name, "step": int(steps)})  # last: commits it
        self._prune_checkpoints(keep_name=name)
        self._prune_pool_files()

    def _prune_checkpoints(self, keep_name: str) -> None:
        names = sorted(path.stem for path in self.checkpoint_dir.glob("step_*.json"))
        for old in names[: max(0, len(names) - self.config.checkpoint.keep)]:
            if old == keep_name:
                continue
            for suffix in (".zip", ".json"):
                try:
                    (self.checkpoint_dir / f"{old}{suffix}").unlink()
                except FileNotFoundError:
                    pass

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, model: Any, steps: int) -> list[dict[str, Any]]:
        network = ActorNetwork.from_policy(model.policy, self.config.net.activation)
        learner = PolicyAgent(network, self.rules, deterministic=True, seed=0, where="learner",
                              phase2=self.config.env.phase2)
        learner.name = "learner"
        records = []
        for spec in self.config.eval.opponents:
            opponent = make_agent(spec, seed=0)
            started = time.perf_counter()
            figures = duplicate_margin(learner, opponent, self.rules, self.eval_deals, self.config.eval.seed)
            record = {"step": int(steps), "opponent": spec, **figures, "seconds": time.perf_counter() - started}
            records.append(record)
        with open(self.run_dir / "eval.jsonl", "a", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record) + "\n")
        self.eval_history.extend(records)
        return records

    # ------------------------------------------------------------------ training
    def train(self) -> Path:
        """Run (or continue) training to ``run.total_steps``; returns the path of the final model."""
        import torch
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.logger import Logger
        from stable_baselines3.common.utils import set_random_seed

        config = self.config
        torch.set_num_threads(config.run.torch_threads)
        for directory in (self.run_dir, self.checkpoint_dir, self.pool_dir, self.run_dir / "imitation"):
            remove_stale_temp_files(directory)  # left by a write a kill interrupted (sixtysix_env/fileio.py)
        checkpoint = self.latest_checkpoint() if self.resume else None
        if self.resume and checkpoint is None:
            # Saved work without the pointer that commits it (the pointer was deleted, or a kill fell between the
            # two writes): starting over would delete it, so refuse rather than guess.
            saved = [path.relative_to(self.run_dir).as_posix() for path in
                     [self.run_dir / "final.zip", *sorted(self.checkpoint_dir.glob("step_*.json"))] if path.exists()]
            if saved:
                raise RunDirError(f"{str(self.run_dir)!r} holds {', '.join(saved[:3])} but no {CHECKPOINT_POINTER} "
                                  "naming a checkpoint to continue from; move them away to start the run over")
            # Killed before its first checkpoint: nothing to continue from, start over in the same directory.
            for stale in ("scalars.csv", "eval.jsonl"):
                (self.run_dir / stale).unlink(missing_ok=True)
            shutil.rmtree(self.run_dir / "tb", ignore_errors=True)  # its TensorBoard events too
        if checkpoint is not None:
            self.state = {key: checkpoint[key] for key in ("pool", "next_snapshot", "next_eval", "next_checkpoint",
                                                           "resumes")}
            self.state["resumes"] += 1
            write_pool_manifest(self.pool_dir, self.state["pool"])  # the pool as it was at the checkpoint
            resume_step = int(checkpoint["step"])
            truncate_log(self.run_dir / "eval.jsonl", resume_step)
        else:
            self.state = {"pool": [], "next_snapshot": config.pool.snapshot_every,
                          "next_eval": 0 if config.eval.every else None,  # 0: the untrained policy too
                          "next_checkpoint": config.checkpoint.every, "resumes": 0}
            write_pool_manifest(self.pool_dir, [])
            resume_step = None
        self._prune_pool_files()  # snapshots a killed run wrote after its last checkpoint
        seed = config.run.seed if checkpoint is None else derive_seed(config.run.seed, "resume", self.state["resumes"]) % 2**32
        set_random_seed(seed)
        vec_env = build_vec_env(config, self.pool_dir, seed)
        model = None
        try:
            if checkpoint is not None:
                model = MaskablePPO.load(self.checkpoint_dir / f"{checkpoint['name']}.zip", env=vec_env, device="cpu")
                # load() re-seeds the environments with the run's own seed, so they would deal the hands of step 0
                # again: the resume's seed goes to them instead (then the global generators as they were).
                model.set_random_seed(seed)
                restore_rng_states(checkpoint["rng"])
            else:
                model = self._new_model(vec_env)
            model.set_logger(Logger(str(self.run_dir / "tb"), _make_writers(self.run_dir, resume_step)))
            if checkpoint is None:
                model.logger.record("config", config.to_yaml())
                model.logger.dump(0)
                if config.imitation.deals > 0:
                    self._imitate(model)
            remaining = config.run.total_steps - model.num_timesteps
            callback = SelfPlayCallback(self)
            final = self.run_dir / "final.zip"
            if remaining > 0:
                model.learn(total_timesteps=remaining, callback=callback, reset_num_timesteps=checkpoint is None)
            elif not final.exists():
                self.save_model(model, final, model.num_timesteps)
            return final
        finally:
            if getattr(model, "_logger", None) is not None:  # SB3 never closes the writers it was given
                model.logger.close()
            vec_env.close()

    def _imitate(self, model: Any) -> None:
        """The optional behaviour-cloning warm start (train/imitation.py); its final figures are logged as
        ``imitation/*`` at step 0 (per-epoch figures: ``imitation/summary.json``)."""
        from .imitation import run_imitation

        summary = run_imitation(self, model)
        for name, value in summary["final"].items():
            model.logger.record(f"imitation/{name}", value)
        model.logger.dump(0)
        if not self.quiet:
            print(f"imitation of {summary['teacher']}: {summary['decisions']} decisions from {summary['deals']} deals, "
                  f"validation accuracy {summary['final'].get('validation_accuracy', float('nan')):.3f}")

    def _new_model(self, vec_env: Any) -> Any:
        from sb3_contrib import MaskablePPO

        config = self.config
        # Read before the model seeds the generators: checking the weights builds a throwaway policy.
        initial_state = self.initial_policy_state()
        learning_rate: Any = config.ppo.learning_rate
        if config.ppo.lr_schedule == "linear":
            start = config.ppo.learning_rate
            learning_rate = _LinearSchedule(start)
        activation = torch_activation(config.net.activation)
        model = MaskablePPO(
            "MlpPolicy",
            vec_env,
            learning_rate=learning_rate,
            n_steps=config.ppo.n_steps,
            batch_size=config.ppo.batch_size,
            n_epochs=config.ppo.n_epochs,
            gamma=config.ppo.gamma,
            gae_lambda=config.ppo.gae_lambda,
            clip_range=config.ppo.clip_range,
            ent_coef=config.ppo.ent_coef,
            vf_coef=config.ppo.vf_coef,
            max_grad_norm=config.ppo.max_grad_norm,
            target_kl=config.ppo.target_kl,
            normalize_advantage=config.ppo.normalize_advantage,
            policy_kwargs=dict(net_arch=dict(pi=list(config.net.hidden), vf=list(config.net.hidden)),
                               activation_fn=activation),
            seed=config.run.seed,
            device="cpu",
            verbose=0,
        )
        if initial_state is not None:
            model.policy.load_state_dict(initial_state)  # policy and value weights; the optimizer starts fresh
        return model

    def initial_policy_state(self) -> dict[str, Any] | None:
        """The policy and value weights of ``run.init_model`` (``None`` without one), checked against this run's
        rules and net: a model that does not fit raises ``ValueError`` naming it, before anything is written."""
        if not self.config.run.init_model:
            return None
        if self._initial_state is None:
            net = self.config.net
            self._initial_state = read_start_model(self.config.run.init_model, "run.init_model", self.rules,
                                                   net.hidden, net.activation)
        return self._initial_state


class _LinearSchedule:
    """Learning rate decaying linearly to 0 over the run (picklable, unlike a lambda, so checkpoints load)."""

    def __init__(self, start: float):
        self.start = start

    def __call__(self, progress_remaining: float) -> float:
        return self.start * progress_remaining


def _callback_base():
    from stable_baselines3.common.callbacks import BaseCallback

    return BaseCallback


class SelfPlayCallback(_callback_base()):  # type: ignore[misc]
    """Snapshots into the pool, evaluations, checkpoints (all between rollouts), episode statistics per opponent,
    and the progress bar."""

    def __init__(self, trainer: Trainer):
        super().__init__(verbose=0)
        self.trainer = trainer
        self.returns: dict[str, list[float]] = {}
        self.bar = None
        self.finished = False

    def _on_training_start(self) -> None:
        config = self.trainer.config
        if config.run.progress_bar and not self.trainer.quiet:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=config.run.total_steps, initial=self.num_timesteps, unit="step", dynamic_ncols=True,
                            desc=config.run.name)
        self._bar_position = self.num_timesteps

    def _on_step(self) -> bool:
        for info, done in zip(self.locals["infos"], self.locals["dones"]):
            if done and "opponent" in info:
                self.returns.setdefault(info["opponent"], []).append(info["deal_return"])
        if self.bar is not None and self.num_timesteps - self._bar_position >= 1000:
            self.bar.update(self.num_timesteps - self._bar_position)
            self._bar_position = self.num_timesteps
        return True

    def _on_rollout_end(self) -> None:
        for label, values in sorted(self.returns.items()):
            self.logger.record(f"opponents/{label}/return", float(np.mean(values)))
            self.logger.record(f"opponents/{label}/deals", len(values))
        self.returns = {}

    def _on_rollout_start(self) -> None:
        self._periodic(self.model, final=False)

    def _on_training_end(self) -> None:
        self.finish(self.model)

    def finish(self, model: Any) -> None:
        if self.finished:
            return
        self.finished = True
        self._periodic(model, final=True)
        self.trainer.save_model(model, self.trainer.run_dir / "final.zip", model.num_timesteps)
        if self.bar is not None:
            self.bar.update(self.num_timesteps - self._bar_position)
            self.bar.close()

    def _periodic(self, model: Any, final: bool) -> None:
        trainer = self.trainer
        config = trainer.config
        state = trainer.state
        steps = model.num_timesteps
        if steps >= state["next_snapshot"]:
            trainer.add_snapshot(model, steps)
            while state["next_snapshot"] <= steps:
                state["next_snapshot"] += config.pool.snapshot_every
        due_eval = state["next_eval"] is not None and steps >= state["next_eval"]
        if due_eval or (final and not any(r["step"] == steps for r in trainer.eval_history)):
            records = trainer.evaluate(model, steps)
            for record in records:
                for key in ("margin", "margin_ci_low", "margin_ci_high", "win_rate"):
                    model.logger.record(f"eval/{record['opponent']}/{key}", record[key])
            model.logger.record("eval/pool_size", len(state["pool"]))
            model.logger.dump(steps)
            if self.bar is not None:
                self.bar.write(f"step {steps}: " + ", ".join(
                    f"{r['opponent']} {r['margin']:+.3f} [{r['margin_ci_low']:+.3f}, {r['margin_ci_high']:+.3f}]"
                    for r in records))
            if state["next_eval"] is not None:
                while state["next_eval"] <= steps:
                    state["next_eval"] += config.eval.every
        if steps >= state["next_checkpoint"] or final:
            while state["next_checkpoint"] <= steps:
                state["next_checkpoint"] += config.checkpoint.every
            trainer.save_checkpoint(model, steps)


__all__ = [
    "PoolOpponent", "SelfPlayCallback", "Trainer", "build_vec_env", "duplicate_margin", "make_env",
    "write_pool_manifest",
]
