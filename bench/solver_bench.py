"""Solve time of the exact phase-2 solver (agents/solver.py) on fresh phase-2 positions with six cards each.

Three kinds of position, a third each, from seeded deals of the chosen preset:

* ``closed``: forehand closes the talon at his first turn (R10) — six cards each, no points yet (mostly a
  failed closing, which the solver's R16 cut-off sees at once);
* ``closed-late``: phase 1 played by the PIMC playout policy for 1–4 tricks, then the leader closes — six cards
  each, points and marriages on the table: the positions PIMC solves when it values a closing;
* ``exhausted``: phase 1 played by the playout policy until the talon is exhausted (R7) — six cards each.

Every solve is cold (the transposition tables are cleared first) unless ``--warm``. The machine is shared, so both
wall-clock and process CPU time are reported (median and 95th percentile).

    python -m bench.solver_bench [--positions 200] [--preset standard] [--seed 0] [--warm]
"""

from __future__ import annotations

import argparse
import statistics
import time

from eval.stats import percentile
from sixtysix_env import PRESET_NAMES, Game, Rules
from sixtysix_env.actions import CLOSE
from sixtysix_env.game import FOLLOW, LEAD

from agents.pimc import policy_action
from agents.solver import clear_cache, solve


KINDS = ("closed", "closed-late", "exhausted")


def fresh_positions(count: int, rules: Rules, seed: int = 0) -> list[tuple[str, Game]]:
    """``count`` phase-2 LEAD positions with six cards each, cycling through :data:`KINDS` (see module doc)."""
    if rules.players != 2:  # R21: no closing and no phase 2 of six cards, so no deal would ever qualify
        raise ValueError(f"solver positions need two-player rules, got players={rules.players} (R21)")
    positions: list[tuple[str, Game]] = []
    deal = seed * 1_000_003
    while len(positions) < count:
        deal += 1
        game = Game.deal(rules, seed=deal, dealer=deal & 1)
        kind = KINDS[len(positions) % len(KINDS)]
        if kind == "exhausted":
            while not game.is_over and not game.phase2:
                game.apply(policy_action(game))
        else:
            tricks = 0 if kind == "closed" else 1 + deal % 4
            while not game.is_over and (len(game.tricks) < tricks or game.stage != LEAD):
                game.apply(policy_action(game))
            if game.is_over or CLOSE not in game.legal_actions():
                continue
            game.apply(CLOSE)
            while not game.is_over and game.stage not in (LEAD, FOLLOW):
                game.apply(policy_action(game))  # R9 paderborn: the exchange offered after a closing
        if game.is_over or game.stage != LEAD or game.hands[game.to_move].bit_count() != 6:
            continue
        positions.append((kind, game))
    return positions


def quantiles(values: list[float]) -> tuple[float, float]:
    return statistics.median(values), percentile(values, 95)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.solver_bench", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=200, help="positions per preset (default 200)")
    parser.add_argument("--preset", default="all", help="standard, paderborn, scharf or all (default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warm", action="store_true", help="keep the transposition tables between solves")
    args = parser.parse_args(argv)
    if args.positions < len(KINDS):  # one position of each kind at least, so every row has a figure
        parser.error(f"--positions must be at least {len(KINDS)}, got {args.positions}")
    # The two-player presets: the three-player game (R21) has no closing and no solver here.
    if args.preset != "all" and args.preset not in PRESET_NAMES:
        parser.error(f"--preset must be one of {', '.join(PRESET_NAMES)} or all, got {args.preset!r}")
    presets = PRESET_NAMES if args.preset == "all" else (args.preset,)
    print(f"{'preset':10} {'kind':11} {'n':>4} {'wall median':>12} {'wall p95':>9} {'cpu median':>11} {'cpu p95':>8}"
          "  value histogram")
    for preset in presets:
        rules = Rules.preset(preset)
        positions = fresh_positions(args.positions, rules, args.seed)
        solve(positions[0][1])  # untimed: the first solve of a process loads the kernels (about 0.2 s)
        timings: dict[str, tuple[list[float], list[float], dict[int, int]]] = {}
        for kind, game in positions:
            if not args.warm:
                clear_cache()
            wall_start = time.perf_counter()
            cpu_start = time.process_time()
            result = solve(game)
            cpu = time.process_time() - cpu_start
            wall = time.perf_counter() - wall_start
            for label in (kind, "all"):
                walls, cpus, histogram = timings.setdefault(label, ([], [], {}))
                walls.append(wall)
                cpus.append(cpu)
                histogram[result.value] = histogram.get(result.value, 0) + 1
        for label in (*KINDS, "all"):
            walls, cpus, histogram = timings[label]
            wall_median, wall_p95 = quantiles(walls)
            cpu_median, cpu_p95 = quantiles(cpus)
            values = " ".join(f"{value:+d}:{histogram[value]}" for value in sorted(histogram))
            print(f"{preset:10} {label:11} {len(walls):4d} {1000 * wall_median:9.2f} ms {1000 * wall_p95:6.2f} ms"
                  f" {1000 * cpu_median:8.2f} ms {1000 * cpu_p95:5.2f} ms  {values}")


if __name__ == "__main__":
    main()
