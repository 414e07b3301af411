"""Steps per second of the batched environments (``sixtysix_env.vector_env``) and of the PettingZoo AEC env.

``vector_env_steps_per_s`` times ``step`` of a vector env on one core, observations and action masks included
(every step writes ``num_envs`` observation rows and masks): in self-play mode (the caller plays both seats) or
against the core's random opponent. The actions come from a uniformly random legal-action policy vectorized in
NumPy (a fixed table of random priorities, the highest-priority legal action is played), whose cost is included.
Counted steps are decisions: a next-step autoreset's dealing step is not counted. Rates per wall-clock second
and per CPU second of the process are both reported: on a shared machine the CPU rate is the steadier one.

``aec_steps_per_s`` times the wrapped PettingZoo AEC env (``sixtysix_env.env()``) with uniformly random legal
actions chosen from the observation's mask, as ``bench/run.py`` does; ``core=False`` times the same env encoding
its observations with the Python encoder (``observe_with_core = False``), the AEC env before it used the core.
Both are measured in alternating runs of the same process, so their ratio is fair on a noisy machine.

The machine is shared and noisy: every figure is the median of ``repeats`` short timed runs.

    python -m bench.vector_bench [--num-envs 1024] [--seconds 2] [--repeats 5] [--rules standard] [--json FILE]
                                 [--plot FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from tqdm import tqdm

import sixtysix_env
from eval.report import write_figure
from sixtysix_env import PRESET_NAMES
from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.schema import finite_float

from .checks import check_image_paths, check_output_paths

_PRIORITY_ROWS = 64  # distinct random priority tables cycled through (the policy's randomness)


def _random_legal_policy(num_envs: int, seed: int):
    """A vectorized uniformly random legal-action policy: ``policy(masks) -> actions``."""
    priorities = np.random.default_rng(seed).random((_PRIORITY_ROWS, num_envs, NUM_ACTIONS), dtype=np.float32)
    counter = [0]

    def policy(masks: np.ndarray) -> np.ndarray:
        counter[0] += 1
        return (priorities[counter[0] % _PRIORITY_ROWS] * masks).argmax(axis=1)

    return policy


def _timed_vector_run(envs, seconds: float, seed: int) -> tuple[float, float]:
    """(decisions per wall-clock second, decisions per CPU second of this process) of one timed run."""
    policy = _random_legal_policy(envs.num_envs, seed)
    _observations, infos = envs.reset(seed=seed)
    masks = infos["action_mask"]
    decisions = 0
    start = time.perf_counter()
    cpu_start = time.process_time()
    deadline = start + seconds
    while True:
        for _ in range(16):
            acting = envs.num_envs - int(np.count_nonzero(envs._needs_reset))  # dealing steps are not decisions
            _observations, _rewards, _terminations, _truncations, infos = envs.step(policy(masks))
            masks = infos["action_mask"]
            decisions += acting
        if time.perf_counter() >= deadline:
            break
    return decisions / (time.perf_counter() - start), decisions / (time.process_time() - cpu_start)


def vector_env_rates(num_envs: int = 1024, seconds: float = 2.0, repeats: int = 5, self_play: bool = True,
                     rules: str = "standard", copy: bool = False, seed: int = 0) -> tuple[float, float]:
    """Medians of decisions per wall-clock second and per CPU second (the latter is steadier on a shared
    machine) of ``sixtysix_env.vector_env(num_envs, self_play=...)`` in one process, observations and masks
    included; ``copy=False`` hands out the env's buffers (no copy per step)."""
    envs = sixtysix_env.vector_env(num_envs, rules=rules, self_play=self_play, copy=copy)
    _timed_vector_run(envs, 0.2, seed)  # compile or load the kernels, warm the caches
    runs = [_timed_vector_run(envs, seconds, seed + run) for run in range(repeats)]
    return statistics.median(wall for wall, _cpu in runs), statistics.median(cpu for _wall, cpu in runs)


def vector_env_steps_per_s(num_envs: int = 1024, seconds: float = 2.0, repeats: int = 5, self_play: bool = True,
                           rules: str = "standard", copy: bool = False, seed: int = 0) -> float:
    """Median decisions per wall-clock second of ``sixtysix_env.vector_env(num_envs, self_play=...)`` on one
    core, observations and masks included (see :func:`vector_env_rates`)."""
    return vector_env_rates(num_envs, seconds, repeats, self_play, rules, copy, seed)[0]


def _timed_aec_run(seconds: float, seed: int, rules: str, core: bool = True) -> float:
    from bench.run import aec_steps_per_second

    return aec_steps_per_second(seconds, seed, rules, observe_with_core=core)


def aec_steps_per_s(seconds: float = 2.0, repeats: int = 5, rules: str = "standard", seed: int = 0,
                    core: bool = True) -> float:
    """Median steps per second of the wrapped PettingZoo AEC env with uniformly random legal actions
    (``core=False``: observations encoded in Python, as before the compiled core)."""
    _timed_aec_run(0.2, seed, rules, core)
    return statistics.median(_timed_aec_run(seconds, seed + run, rules, core) for run in range(repeats))


def aec_speedup(seconds: float = 2.0, repeats: int = 5, rules: str = "standard", seed: int = 0) -> dict[str, float]:
    """The AEC env with and without the core's observations, in alternating runs: both medians and the median of
    the per-pair ratios."""
    _timed_aec_run(0.2, seed, rules, True)
    _timed_aec_run(0.2, seed, rules, False)
    with_core, without_core = [], []
    for run in range(repeats):
        without_core.append(_timed_aec_run(seconds, seed + run, rules, core=False))
        with_core.append(_timed_aec_run(seconds, seed + run, rules, core=True))
    return {"aec_steps_per_s": statistics.median(with_core),
            "aec_python_observation_steps_per_s": statistics.median(without_core),
            "aec_speedup": statistics.median(new / old for new, old in zip(with_core, without_core))}


def gym_env_steps_per_s(seconds: float = 2.0, repeats: int = 5, rules: str = "standard", seed: int = 0) -> float:
    """Median steps per second of one ``SixtySixGymEnv`` (the unbatched environment, for comparison), uniformly
    random legal learner actions, the same random opponent."""
    def run(run_seed: int, duration: float) -> float:
        env = sixtysix_env.SixtySixGymEnv(rules=rules)
        _observation, info = env.reset(seed=run_seed)
        fractions = np.random.default_rng(run_seed).random(1 << 16).tolist()
        steps = 0
        start = time.perf_counter()
        while time.perf_counter() - start < duration:
            legal = info["action_mask"].nonzero()[0]
            _observation, _reward, terminated, _truncated, info = env.step(
                int(legal[int(fractions[steps & 0xFFFF] * len(legal))]))
            steps += 1
            if terminated:
                _observation, info = env.reset()
        return steps / (time.perf_counter() - start)

    run(seed, 0.2)
    return statistics.median(run(seed + index, seconds) for index in range(repeats))


def plot_figures(figures: dict[str, float], path: str) -> None:
    """A bar chart of the steps-per-second figures, per wall-clock and per CPU second (log scale), to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [name for name in figures if name.endswith(("steps_per_s", "steps_per_cpu_s"))]
    figure, axes = plt.subplots(figsize=(8, 0.4 * len(names) + 1))
    colors = ["tab:orange" if name.endswith("cpu_s") else "tab:blue" for name in names]
    axes.barh(names, [figures[name] for name in names], color=colors)
    axes.set_xscale("log")
    axes.set_xlabel("per wall-clock s (blue), per CPU s (orange); medians")
    for index, name in enumerate(names):
        axes.text(figures[name], index, f" {figures[name]:,.0f}", va="center", fontsize=8)
    axes.invert_yaxis()
    figure.tight_layout()
    write_figure(figure, path, dpi=120)  # any format matplotlib writes, from the file's suffix


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(prog="python -m bench.vector_bench", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--seconds", type=finite_float, default=2.0, help="timed seconds per repetition")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions; the median is reported")
    parser.add_argument("--rules", default="standard", help=f"two-player rules preset ({', '.join(PRESET_NAMES)})")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--plot", help="draw the figures as a bar chart into this image file")
    args = parser.parse_args(argv)
    for option, count in (("--num-envs", args.num_envs), ("--repeats", args.repeats)):
        if count < 1:
            parser.error(f"{option} must be at least 1, got {count}")
    if not args.seconds > 0:
        parser.error(f"--seconds must be positive, got {args.seconds:g}")
    if args.rules not in PRESET_NAMES:
        parser.error(f"--rules must be a two-player preset ({', '.join(PRESET_NAMES)}), got {args.rules!r}")
    check_output_paths(parser, [("--json", args.json)])
    check_image_paths(parser, [("--plot", args.plot)])

    def vector_figures(name: str, **options) -> dict[str, float]:
        wall, cpu = vector_env_rates(args.num_envs, args.seconds, args.repeats, rules=args.rules, **options)
        return {f"{name}_steps_per_s": wall, f"{name}_steps_per_cpu_s": cpu}

    measures = {
        "vector_env": lambda: vector_figures("vector_env", self_play=True),
        "vector_env_random_opponent": lambda: vector_figures("vector_env_random_opponent", self_play=False),
        "vector_env_copy": lambda: vector_figures("vector_env_copy", self_play=True, copy=True),
        "aec": lambda: aec_speedup(args.seconds, args.repeats, args.rules),
        "gym_env_steps_per_s": lambda: gym_env_steps_per_s(args.seconds, args.repeats, args.rules),
    }
    figures: dict[str, float] = {}
    for name, measure in tqdm(measures.items(), desc="vector bench", unit="figure"):
        value = measure()
        figures.update({key: round(item, 3) for key, item in value.items()} if isinstance(value, dict)
                       else {name: round(value, 1)})
    for name, value in figures.items():
        print(f"{name:42s} {value:14,.2f}")
    if args.json:
        from sixtysix_env.fileio import write_text_atomic

        write_text_atomic(args.json, json.dumps({**figures, "num_envs": args.num_envs, "rules": args.rules,
                                                 "seconds": args.seconds, "repeats": args.repeats}, indent=2) + "\n")
    if args.plot:
        plot_figures(figures, args.plot)
    return figures


if __name__ == "__main__":
    main()
