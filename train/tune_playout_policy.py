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

from sixtysix_env.fileio import write_json_atomic

ZERO_STEP = 2.5  # card points tried for a weight that is zero (scaling cannot move it)
WEIGHT_NAMES = (
    [f"trump_keep_{rank}" for rank in "9JQKTA"] + [f"plain_keep_{rank}" for rank in "9JQKTA"]
    + ["ten_under_ace", "pair_share", "win_bonus", "close_potential"]
)


def duel(candidate: np.ndarray, baseline: np.ndarray, deals: int, seed: int, table) -> tuple[float, float]:
    """Mean margin of ``candidate`` per deal against ``baseline`` and its standard error."""
    from sixtysix_env.core.policy import policy_duel

    margins = np.zeros(deals)
    policy_duel(candidate, baseline, deals, seed, 0b1100000, table.entries, table.nodes, margins)
    return float(margins.mean()), float(margins.std(ddof=1) / math.sqrt(deals))


def main(argv: list[str] | None = None) -> int:
    from agents.pimc import policy_weights
    from sixtysix_env.core.solver import Table

    parser = argparse.ArgumentParser(prog="python -m train.tune_playout_policy", description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=10_000, help="duplicate deals per duel")
    parser.add_argument("--sweeps", type=int, default=2, help="passes over the weights")
    parser.add_argument("--step", type=float, default=0.25, help="relative change tried per weight (default 0.25)")
    parser.add_argument("--z", type=float, default=2.5, help="standard errors a change must win by")
    parser.add_argument("--seed", type=int, default=7001, help="seed of the tuning deals")
    parser.add_argument("--test-seed", type=int, default=9901, help="seed of the test deals (never tuned on)")
    parser.add_argument("--out", required=True, help="JSON file for the tuned weights and the test figure")
    args = parser.parse_args(argv)
    if args.deals < 100 or args.sweeps < 1 or not 0 < args.step < 1:
        raise ValueError("--deals must be at least 100, --sweeps at least 1, --step between 0 and 1")
    table = Table(18)
    start_weights = policy_weights()
    current = start_weights.copy()
    history = []
    from tqdm import tqdm

    steps = [(sweep, index, factor) for sweep in range(args.sweeps) for index in range(len(WEIGHT_NAMES))
             for factor in (1 + args.step, 1 - args.step)]
    for number, (sweep, index, factor) in enumerate(tqdm(steps, desc="coordinate search", unit="duel")):
        candidate = current.copy()
        # A weight is scaled; a zero weight is tried at +-ZERO_STEP card points instead.
        candidate[index] = candidate[index] * factor if candidate[index] else math.copysign(ZERO_STEP, factor - 1)
        seed = args.seed + number
        mean, error = duel(candidate, current, args.deals, seed, table)
        kept = mean > args.z * error
        history.append({"sweep": sweep, "weight": WEIGHT_NAMES[index], "from": float(current[index]),
                        "to": float(candidate[index]), "margin": mean, "se": error, "kept": kept})
        if kept:
            current = candidate
    test_mean, test_error = duel(current, start_weights, 4 * args.deals, args.test_seed, table)
    result = {
        "weights": dict(zip(WEIGHT_NAMES, map(float, current))),
        "start": dict(zip(WEIGHT_NAMES, map(float, start_weights))),
        "test": {"deals": 4 * args.deals, "seed": args.test_seed, "margin": test_mean,
                 "low": test_mean - 1.96 * test_error, "high": test_mean + 1.96 * test_error},
        "history": history, "settings": vars(args), "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    write_json_atomic(args.out, result)
    print(f"tuned vs start on {4 * args.deals} test deals: {test_mean:+.4f} "
          f"[{test_mean - 1.96 * test_error:+.4f}, {test_mean + 1.96 * test_error:+.4f}]")
    for entry in history:
        if entry["kept"]:
            print(f"  {entry['weight']}: {entry['from']:g} -> {entry['to']:g} ({entry['margin']:+.4f} ± {entry['se']:.4f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
