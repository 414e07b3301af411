"""How long "could I have won?" takes: the open solve (play/analysis.py) of whole deals from the first move.

    python -m bench.open_solve --deals 20 --first-seed 100 --budget 60

solves deals ``Game.deal(Rules(), seed=s, dealer=s % 2)`` for ``s`` in ``first_seed ..`` with all cards open (the
value for player 1) and prints the time of each and the median, 90th percentile and maximum. Timings depend on the
machine and on whether the compiled engine runs (``sixtysix_env.ENGINE_BACKEND``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from tqdm import tqdm

import sixtysix_env
from eval.stats import percentile
from play.analysis import BudgetExceeded, OpenSolver
from sixtysix_env import Game, Rules
from sixtysix_env.schema import finite_float


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.open_solve", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--budget", type=finite_float, default=60.0, help="seconds per deal before giving up")
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error(f"--deals must be at least 1, got {args.deals}")
    if not args.budget > 0:
        parser.error(f"--budget must be a positive number of seconds, got {args.budget:g}")
    try:  # untimed: the first solve of a process loads the kernels (about 0.4 s)
        OpenSolver(1, seconds=args.budget).value(Game.deal(Rules(), seed=args.first_seed - 1, dealer=0))
    except BudgetExceeded:
        pass
    times, unsolved = [], 0
    for seed in tqdm(range(args.first_seed, args.first_seed + args.deals), desc="deals", unit="deal"):
        game = Game.deal(Rules(), seed=seed, dealer=seed % 2)
        solver = OpenSolver(1, seconds=args.budget)
        start = time.perf_counter()
        try:
            value = solver.value(game)
        except BudgetExceeded:
            value, unsolved = None, unsolved + 1
        times.append(time.perf_counter() - start)
        tqdm.write(f"seed {seed}: value {value}, {solver.nodes} nodes, {times[-1]:.2f} s")
    times.sort()
    p90 = percentile(times, 90)
    print(f"engine {sixtysix_env.ENGINE_BACKEND}: {args.deals} deals, median {statistics.median(times):.2f} s, "
          f"p90 {p90:.2f} s, max {times[-1]:.2f} s, {unsolved} not solved within {args.budget:g} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
