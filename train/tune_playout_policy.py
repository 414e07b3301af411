"""Tune the search agents' playout policy (agents/pimc.py weights) by duplicate duels on the compiled core.

The playout policy values every world of ``pimc`` and every leaf of ``ismcts``; a better policy gives better
values. Its 16 weights (card keep values by rank for trumps and plain suits, the ten-under-ace value, the marriage
share, the win bonus and the closing threshold) are tuned by coordinate search: each weight is scaled up and down
in turn, and a change is kept when the candidate beats the current weights in a duplicate duel
(:func:`sixtysix_env.core.policy.policy_duel`: each deal played twice with the seats swapped, phase 2 solved
exactly) by more than ``--z`` standard errors. Tuning deals come from ``--seed``; the test of the final weights
against the starting ones uses other deals (``--test-seed``).

    python -m train.tune_playout_policy --deals 10000 --sweeps 2 --out runs/playout_policy.json
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from eval.stats import t_quantile
from sixtysix_env.fileio import write_json_atomic
from sixtysix_env.schema import SEED_LIMIT, finite_float

ZERO_STEP = 2.5  # card points tried for a weight that is zero (scaling cannot move it)


def duel(candidate: np.ndarray, baseline: np.ndarray, deals: int, seed: int, table) -> tuple[float, float]:
    """Mean margin of ``candidate`` per deal against ``baseline`` and its standard error (standard rules)."""
    from sixtysix_env.core.policy import policy_duel
    from sixtysix_env.core.state import core_rule_bits
    from sixtysix_env.rules import Rules

    margins = np.zeros(deals)
    policy_duel(candidate, baseline, deals, seed, core_rule_bits(Rules.preset("standard")), table.entries,
                table.nodes, margins)
    return float(margins.mean()), float(margins.std(ddof=1) / math.sqrt(deals))


def coordinate_search(names: list[str], start: np.ndarray, duel_function, deals: int, sweeps: int, step: float,
                      z: float, seed: int, test_seed: int, zero_steps: dict[str, float] | None = None) -> dict:
    """Coordinate search over the entries of ``start`` named ``names``: each is scaled by ``1 +- step`` in turn (a
    zero one moved by its ``zero_steps`` entry, else ``ZERO_STEP``), and a change is kept when the candidate beats
    the current values by more than ``z`` standard errors in ``duel_function(candidate, current, deals, seed)``
    (mean margin per duplicate deal, its standard error). Each duel has its own tuning seed ``seed + number``; the
    final values are tested against ``start`` on ``4 * deals`` deals of ``test_seed``, never tuned on."""
    from tqdm import tqdm

    zero_steps = zero_steps or {}
    current = start.copy()
    history = []
    steps = [(sweep, index, factor) for sweep in range(sweeps) for index in range(len(names))
             for factor in (1 + step, 1 - step)]
    for number, (sweep, index, factor) in enumerate(tqdm(steps, desc="coordinate search", unit="duel")):
        candidate = current.copy()
        if candidate[index]:
            candidate[index] = candidate[index] * factor
        else:
            candidate[index] = math.copysign(zero_steps.get(names[index], ZERO_STEP), factor - 1)
        mean, error = duel_function(candidate, current, deals, seed + number)
        kept = mean > z * error
        history.append({"sweep": sweep, "weight": names[index], "from": float(current[index]),
                        "to": float(candidate[index]), "margin": mean, "se": error, "kept": bool(kept)})
        if kept:
            current = candidate
    test_mean, test_error = duel_function(current, start, 4 * deals, test_seed)
    half_width = t_quantile(0.975, 4 * deals - 1) * test_error  # the error is of the mean of 4 * deals margins
    return {
        "weights": dict(zip(names, map(float, current))),
        "start": dict(zip(names, map(float, start))),
        "test": {"deals": 4 * deals, "seed": test_seed, "margin": test_mean,
                 "low": test_mean - half_width, "high": test_mean + half_width},
        "history": history, "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def search_arguments(parser: argparse.ArgumentParser, deals: int, seed: int, test_seed: int) -> None:
    """The options every coordinate search takes."""
    parser.add_argument("--deals", type=int, default=deals, help=f"duplicate deals per duel (default {deals})")
    parser.add_argument("--sweeps", type=int, default=2, help="passes over the weights")
    parser.add_argument("--step", type=finite_float, default=0.25,
                        help="relative change tried per weight (default 0.25)")
    parser.add_argument("--z", type=finite_float, default=2.5, help="standard errors a change must win by")
    parser.add_argument("--seed", type=int, default=seed, help="seed of the tuning deals")
    parser.add_argument("--test-seed", type=int, default=test_seed, help="seed of the test deals (never tuned on)")
    parser.add_argument("--out", required=True, help="JSON file for the tuned weights and the test figure")


def check_search_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace, weights: int) -> None:
    """Refuse bad search options and an unusable ``--out`` through ``parser.error`` (exit 2), before any duel; a
    search over ``weights`` entries tunes on the seeds ``--seed`` to ``--seed + 2 * sweeps * weights - 1``
    (:func:`coordinate_search`), which must not hold ``--test-seed``; every seed must be a 64-bit integer."""
    from sixtysix_env.fileio import writable_file

    if args.deals < 100 or args.sweeps < 1 or not 0 < args.step < 1:
        parser.error(f"--deals must be at least 100, --sweeps at least 1, --step between 0 and 1 (got --deals "
                     f"{args.deals}, --sweeps {args.sweeps}, --step {args.step})")
    if args.z < 0:  # a change that loses would be kept
        parser.error(f"--z must be 0 or more standard errors, got {args.z}")
    last_tuning_seed = args.seed + 2 * args.sweeps * weights - 1
    # The duels' kernels take 64-bit seeds: a search whose later seeds overflowed failed after its first duels.
    if not -SEED_LIMIT <= args.seed <= last_tuning_seed < SEED_LIMIT:
        parser.error(f"--seed {args.seed}: its tuning seeds {args.seed}..{last_tuning_seed} (one per duel) must be "
                     "64-bit integers, -2**63 to 2**63 - 1")
    if not -SEED_LIMIT <= args.test_seed < SEED_LIMIT:
        parser.error(f"--test-seed must be a 64-bit integer, -2**63 to 2**63 - 1, got {args.test_seed}")
    if args.seed <= args.test_seed <= last_tuning_seed:  # the test would be on deals that were tuned on
        parser.error(f"--test-seed {args.test_seed} is one of the tuning seeds {args.seed}..{last_tuning_seed} "
                     "(one per duel): choose a test seed outside them")
    try:
        writable_file(args.out, f"--out {args.out!r}")
    except ValueError as error:
        parser.error(str(error))


def save_and_report(result: dict, args: argparse.Namespace) -> None:
    """Write the search's result with its settings to ``args.out`` (atomically) and print the test figure and the
    changes kept."""
    result["settings"] = vars(args)
    write_json_atomic(args.out, result)
    test = result["test"]
    print(f"tuned vs start on {test['deals']} test deals: {test['margin']:+.4f} "
          f"[{test['low']:+.4f}, {test['high']:+.4f}]")
    for entry in result["history"]:
        if entry["kept"]:
            print(f"  {entry['weight']}: {entry['from']:g} -> {entry['to']:g} "
                  f"({entry['margin']:+.4f} ± {entry['se']:.4f})")


def main(argv: list[str] | None = None) -> int:
    from agents.pimc import policy_weights
    from sixtysix_env.core.policy import WEIGHT_NAMES
    from sixtysix_env.core.solver import Table

    parser = argparse.ArgumentParser(prog="python -m train.tune_playout_policy",
                                     description=(__doc__ or "").split("\n\n")[0])
    search_arguments(parser, deals=10_000, seed=7001, test_seed=9901)
    args = parser.parse_args(argv)
    check_search_arguments(parser, args, len(WEIGHT_NAMES))
    table = Table(18)
    result = coordinate_search(WEIGHT_NAMES, policy_weights(), lambda a, b, deals, seed: duel(a, b, deals, seed, table),
                               args.deals, args.sweeps, args.step, args.z, args.seed, args.test_seed)
    save_and_report(result, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
