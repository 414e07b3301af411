"""``sixtysix bench``: engine decisions/s, AEC environment steps/s and the compiled core's figures, with peers
measured in the same run.

The machine is shared and noisy, so every rate is the median of several timed repetitions after one untimed
warm-up repetition (the first call of a process loads compiled kernels), and peers (OpenSpiel euchre, a
PettingZoo classic card env) are measured in the same process right alongside ours: compare ratios, not absolute
numbers across runs. The compiled core's timings in the JSON summary (``phase2_solve_ms``, ``full_solve_ms``,
``expert_rollout_us``, ``jit_warmup_s``) are one pass each, medians and percentiles over their positions.

    sixtysix bench [--seconds 2] [--repeats 5] [--rules standard] [--no-peers] [--no-core] [--json FILE]

The JSON file holds, besides every measurement, the summary keys ``engine_decisions_per_s``, ``aec_steps_per_s``,
``core_playout_decisions_per_s``, ``vector_env_steps_per_s``, ``phase2_solve_ms``, ``full_solve_ms``,
``expert_rollout_us`` and ``jit_warmup_s`` (bench/core_bench.py, bench/vector_bench.py).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time
import warnings
from typing import Callable

from sixtysix_env import PRESET_NAMES, Game, Rules
from sixtysix_env.schema import finite_float
from sixtysix_env.extras import install_hint

from .checks import check_output_paths

PEERS_INSTALL = install_hint("peers")


THREE_ENGINE = "sixtysix three-player engine decisions/s (R21, pure Python)"


def engine_decisions_per_second(seconds: float = 2.0, seed: int = 0, rules: Rules | None = None) -> float:
    """Uniform random play of the bare engine: ``legal_actions()`` + ``apply()`` per decision, a new deal from a
    fresh seed whenever one ends (the deal's cost is included)."""
    rules = rules or Rules()
    rng = random.Random(seed)
    random_fraction = rng.random
    decisions = 0
    deal_seed = seed * 1_000_003
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    while True:
        game = Game.deal(rules, seed=deal_seed, dealer=deal_seed & 1)
        deal_seed += 1
        while not game.is_over:
            legal = game.legal_actions()
            game.apply(legal[int(random_fraction() * len(legal))])
            decisions += 1
        if decisions & 0xFF < 24 and time.perf_counter() >= deadline:
            break
    return decisions / (time.perf_counter() - start)


def aec_steps_per_second(seconds: float = 2.0, seed: int = 0, rules: str = "standard", wrapped: bool = True,
                         observe_with_core: bool | None = None) -> float:
    """PettingZoo AEC loop through the standard wrappers (``sixtysix_env.env()``), uniform random legal actions
    chosen from the observation's action mask, as PettingZoo's own examples do. ``observe_with_core`` switches the
    env's observation encoding (the compiled core, or the Python encoder it replaced) for comparisons."""
    import sixtysix_env

    env = sixtysix_env.env(rules=rules) if wrapped else sixtysix_env.raw_env(rules=rules)
    if observe_with_core is not None:
        env.unwrapped.observe_with_core = observe_with_core
    rng = random.Random(seed)
    steps = 0
    episode = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        env.reset(seed=seed + episode)
        episode += 1
        for agent in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            else:
                legal = observation["action_mask"].nonzero()[0]
                action = int(legal[int(rng.random() * len(legal))])
            env.step(action)
            steps += 1
    return steps / (time.perf_counter() - start)


def pure_python_engine_decisions_per_second(seconds: float, rules: str) -> float:
    """The same measurement with the pure Python engine, in a child process (``SIXTYSIX_PURE_PYTHON=1``): run
    when the compiled engine is in use, so both backends are measured side by side."""
    import subprocess
    import sys

    code = ("import sys; from bench.run import engine_decisions_per_second; from sixtysix_env import Rules, "
            "ENGINE_BACKEND; assert ENGINE_BACKEND == 'python'; "
            f"print(engine_decisions_per_second({seconds!r}, rules=Rules.preset({rules!r})))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                               env={**os.environ, "SIXTYSIX_PURE_PYTHON": "1"})
    return float(completed.stdout.strip())


def _median_of(measure: Callable[[], float | None], repeats: int) -> tuple[float | None, list[float]]:
    """The median of ``repeats`` runs of ``measure`` after one run left out (it loads kernels and warms caches)."""
    if measure() is None:
        return None, []
    runs = []
    for _ in range(repeats):
        value = measure()
        if value is None:
            return None, []
        runs.append(value)
    return statistics.median(runs), runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sixtysix bench", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seconds", type=finite_float, default=2.0, help="timed seconds per repetition")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions; the median is reported")
    parser.add_argument("--rules", default="standard", help="two-player rules preset for our engine and env "
                                                            f"({', '.join(PRESET_NAMES)}; default standard)")
    parser.add_argument("--no-peers", action="store_true", help="skip OpenSpiel / PettingZoo classic peers")
    parser.add_argument("--no-core", action="store_true", help="skip the compiled core's figures (bench/core_bench.py)")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if not args.seconds > 0:
        parser.error(f"--seconds must be positive, got {args.seconds:g}")
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    if args.rules not in PRESET_NAMES:  # the three-player engine is measured beside them anyway (R21)
        parser.error(f"--rules must be a two-player preset ({', '.join(PRESET_NAMES)}), got {args.rules!r}")
    check_output_paths(parser, [("--json", args.json)])
    rules = Rules.preset(args.rules)

    from sixtysix_env import ENGINE_BACKEND

    measurements: dict[str, Callable[[], float | None]] = {
        "sixtysix engine decisions/s": lambda: engine_decisions_per_second(args.seconds, rules=rules),
        "sixtysix AEC steps/s (env, wrapped)": lambda: aec_steps_per_second(args.seconds, rules=args.rules),
        "sixtysix AEC steps/s (raw_env)": lambda: aec_steps_per_second(args.seconds, rules=args.rules, wrapped=False),
        # The same env with the Python observation encoder it used before the compiled core (for the ratio).
        "sixtysix AEC steps/s (env, wrapped, Python observations)": (
            lambda: aec_steps_per_second(args.seconds, rules=args.rules, observe_with_core=False)),
    }
    if ENGINE_BACKEND == "compiled":
        measurements["sixtysix engine decisions/s (pure Python)"] = (
            lambda: pure_python_engine_decisions_per_second(args.seconds, args.rules)
        )
    # R21: the three-player engine (sixtysix_env/three.py, always pure Python) and its AEC env, as separate figures.
    measurements[THREE_ENGINE] = lambda: engine_decisions_per_second(args.seconds, rules=Rules.preset("three"))
    measurements["sixtysix three-player AEC steps/s (env, wrapped)"] = (
        lambda: aec_steps_per_second(args.seconds, rules="three"))
    if not args.no_core:
        from bench import core_bench

        measurements["sixtysix core random playout decisions/s"] = (
            lambda: core_bench.core_playout_decisions_per_second(args.seconds, rules=rules))
        vector_bench = _optional_vector_bench()
        if vector_bench is not None:
            measurements["sixtysix vector env steps/s (1024 envs, self-play)"] = (
                lambda: vector_bench.vector_env_steps_per_s(num_envs=1024, seconds=args.seconds, repeats=1,
                                                           rules=args.rules))
    peer_notes: dict[str, str] = {}
    if not args.no_peers:
        try:
            from bench import peers
        except ImportError as error:  # pragma: no cover - bench/peers.py missing
            peer_notes["peers"] = f"unavailable: {error}"
        else:
            peer_notes = peers.available_peers()
            measurements.update(peers.peer_measurements(args.seconds))

    try:
        from tqdm import tqdm
    except ImportError:  # progress is optional here
        tqdm = None
    results: dict[str, dict] = {}
    items = list(measurements.items())
    progress = tqdm(items, desc="bench", unit="measure") if tqdm else items
    with warnings.catch_warnings():
        # A missing peer is named once below, with what to install, not by a warning per measurement.
        warnings.filterwarnings("ignore", message="benchmark peer ", category=RuntimeWarning)
        for label, measure in progress:
            median, runs = _median_of(measure, args.repeats)
            results[label] = {"median": median, "runs": runs}

    print(f"\nmedian of {args.repeats} x {args.seconds:g} s, one process, {platform.python_implementation()} "
          f"{platform.python_version()}, {os.cpu_count()} cores; engine backend: {ENGINE_BACKEND}"
          + (" (mypyc build of sixtysix_env/game.py, `make compile`)" if ENGINE_BACKEND == "compiled" else ""))
    width = max(len(label) for label in results)
    for label, entry in results.items():
        value = entry["median"]
        print(f"  {label:<{width}}  {'n/a' if value is None else f'{value:12,.0f}'}")
    ours_engine = results["sixtysix engine decisions/s"]["median"]
    ours_env = results["sixtysix AEC steps/s (env, wrapped)"]["median"]
    ratios = {}
    for label, entry in results.items():
        if label.startswith("sixtysix") or entry["median"] is None:
            continue
        ours = ours_engine if "decisions" in label else ours_env
        ratios[label] = ours / entry["median"]
        print(f"  ratio ours / {label}: {ratios[label]:.2f}x")
    same_backend = results.get("sixtysix engine decisions/s (pure Python)", results["sixtysix engine decisions/s"])
    if same_backend["median"] and results[THREE_ENGINE]["median"]:
        ratios["two-player / three-player engine (both pure Python)"] = (
            same_backend["median"] / results[THREE_ENGINE]["median"])
        print(f"  two-player / three-player engine decisions/s, both pure Python: "
              f"{ratios['two-player / three-player engine (both pure Python)']:.2f}x")
    for name, note in peer_notes.items():
        print(f"  peer {name}: {note}")
    if any(note.startswith("unavailable") for note in peer_notes.values()):
        print(f"  the peers are the project's peers extra: {PEERS_INSTALL} (OpenSpiel, PettingZoo's classic games)")
    summary = {
        "engine_decisions_per_s": ours_engine,
        "aec_steps_per_s": ours_env,
        "core_playout_decisions_per_s": results.get("sixtysix core random playout decisions/s", {}).get("median"),
        "vector_env_steps_per_s": results.get("sixtysix vector env steps/s (1024 envs, self-play)", {}).get("median"),
    }
    if not args.no_core:
        core_figures = _core_figures(progress_label="core figures")
        summary.update(core_figures)
        core_rate = summary["core_playout_decisions_per_s"]
        summary["core_playouts_per_engine"] = core_rate / ours_engine
        # bench/core_bench.py measures its solves, rollouts and searches under the standard rules, whatever --rules
        summary["core_figures_rules"] = "standard"
        print(f"  core playouts / engine: {core_rate / ours_engine:.1f}x")
        if args.rules != "standard":
            print("  (the core figures below are measured under the standard rules, bench/core_bench.py)")
        python_observations = results["sixtysix AEC steps/s (env, wrapped, Python observations)"]["median"]
        summary["aec_speedup_from_core_observations"] = ours_env / python_observations
        print(f"  AEC env, core / Python observations: {ours_env / python_observations:.2f}x")
        for key, figure in core_figures.items():  # (the numbers; lists of single runs stay in the JSON)
            print(f"  {key}: " + ", ".join(f"{name} {value:,.4g}" for name, value in figure.items()
                                           if isinstance(value, (int, float))))
    if args.json:
        from sixtysix_env.fileio import write_json_atomic

        write_json_atomic(args.json, {**summary, "results": results, "ratios": ratios, "peers": peer_notes,
                                      "seconds": args.seconds, "repeats": args.repeats, "rules": args.rules,
                                      "engine_backend": ENGINE_BACKEND})
    return 0


def _optional_vector_bench():
    """bench/vector_bench.py when the batched environment is present."""
    try:
        from bench import vector_bench
    except ImportError:
        return None
    return vector_bench


def _core_figures(progress_label: str) -> dict:
    """The compiled core's solve, search and warm-up figures (bench/core_bench.py), one after another."""
    from bench import core_bench

    steps = core_bench.solve_and_search_figures(300)
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    items = list(steps.items())
    figures = {}
    for key, measure in (tqdm(items, desc=progress_label, unit="figure") if tqdm else items):
        figures[key] = measure()
    return figures


if __name__ == "__main__":
    raise SystemExit(main())
