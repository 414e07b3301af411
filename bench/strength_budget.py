"""Strength against time budget: one agent at several seconds per decision against a fixed opponent, each budget
on the same duplicate deals (pre-declared seed), with 95% intervals; a Markdown table and a plot.

    python -m bench.strength_budget --agent expert --opponent heuristic --budgets 0.01,0.03,0.1,0.3,1 \\
        --deals 200 --seed 20261125 --workers 2 --out docs/strength_budget

Writes ``OUT.json`` (every figure), ``OUT.md`` (the table) and ``OUT.png`` (margin per deal against seconds per
decision, log scale, with the intervals). Each budget is a separate duplicate-deal match through the tournament
harness (eval/tournament.py), so a killed run resumes where it stopped (per budget, under ``--runs``).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from sixtysix_env import Rules
from sixtysix_env.fileio import writable_folder, write_bytes_atomic, write_json_atomic, write_text_atomic

from .checks import check_agent_specs, check_output_paths


def parse_budgets(text: str) -> list[float]:
    """The seconds per decision of ``--budgets`` ("0.01,0.1,1"), smallest first."""
    try:
        budgets = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--budgets must be comma-separated seconds, e.g. 0.01,0.1,1; got {text!r}") from None
    if not budgets or any(not 0 < budget < math.inf for budget in budgets):  # inf was blamed on --agent
        raise ValueError(f"--budgets must be positive finite seconds, got {text!r}")
    # Each budget has its run folder named f"{seconds:g}": two spellings of one budget would share it and its row.
    names = [f"{budget:g}" for budget in budgets]
    repeated = sorted({name for name in names if names.count(name) > 1}, key=float)
    if repeated:
        raise ValueError(f"--budgets names {', '.join(repeated)} more than once, got {text!r}")
    return sorted(budgets)  # the table's rows and the plot's line run from the smallest budget up


def with_seconds(spec: str, seconds: float) -> str:
    """``spec`` with its ``seconds`` parameter set (added or replaced)."""
    from agents.registry import with_parameter

    return with_parameter(spec, "seconds", f"{seconds:g}")


def main(argv: list[str] | None = None) -> int:
    from eval.deals import generate_deals
    from eval.tournament import TournamentSettings, check_output_dir, run_tournament

    parser = argparse.ArgumentParser(prog="python -m bench.strength_budget",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--agent", default="expert", help="the agent spec whose budget varies (default expert)")
    parser.add_argument("--opponent", default="heuristic", help="the fixed opponent (default heuristic)")
    parser.add_argument("--budgets", default="0.01,0.03,0.1,0.3,1", help="seconds per decision, comma-separated")
    parser.add_argument("--deals", type=int, default=200, help="duplicate deal pairs per budget (default 200)")
    parser.add_argument("--seed", type=int, default=20261125, help="master seed of the deals (fix it in advance)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", required=True, help="output path without extension (OUT.json, OUT.md, OUT.png)")
    parser.add_argument("--runs", default=None,
                        help="directory for each budget's tournament run (resumable; default results/NAME-runs)")
    args = parser.parse_args(argv)
    try:
        budgets = parse_budgets(args.budgets)
    except ValueError as error:
        parser.error(str(error))
    if args.deals < 2:
        parser.error(f"--deals must be at least 2, got {args.deals}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    # Every budget's agent is built now (the agent must take a seconds parameter), not when its match comes.
    check_agent_specs(parser, [("--agent", with_seconds(args.agent, seconds)) for seconds in budgets]
                      + [("--opponent", args.opponent)])
    out = Path(args.out)
    runs = Path(args.runs) if args.runs else Path("results") / f"{out.name}-runs"
    # The three outputs are written together at the end: all of them are tried first.
    check_output_paths(parser, [("--out", f"{out}.{suffix}") for suffix in ("json", "md", "png")])
    try:
        writable_folder(runs, f"--runs {str(runs)!r}")
    except ValueError as error:
        parser.error(str(error))
    rules = Rules()
    deals = tuple(generate_deals(args.seed, args.deals, rules))
    settings_by_budget = {seconds: TournamentSettings(agents=(with_seconds(args.agent, seconds), args.opponent),
                                                      rules=rules, deals=deals, master_seed=args.seed)
                          for seconds in budgets}
    for seconds, settings in settings_by_budget.items():  # every budget's run folder now, not after the others played
        try:
            check_output_dir(runs / f"{seconds:g}", settings)
        except ValueError as error:
            parser.error(f"--runs {str(runs)!r}: {error} (a budget's run of other deals or seed: give another "
                         "--runs, or delete that folder)")
    rows = []
    for seconds, settings in settings_by_budget.items():
        spec = settings.agents[0]
        results = run_tournament(settings, out_dir=runs / f"{seconds:g}",
                                 workers=args.workers, progress=True, write_outputs=True)
        pair = results["summary"]["pairs"][0]
        margin = pair["margin_per_deal"]
        rows.append({"seconds": seconds, "agent": spec, "opponent": args.opponent, "deal_pairs": pair["units"],
                     "margin": margin["mean"], "low": margin["low"], "high": margin["high"],
                     "deal_win_rate": pair["deal_win_rate"]["rate"]})
    table = ["| seconds per decision | agent | vs | deal pairs | margin per deal | 95% interval | deal win rate |",
             "| ---: | --- | --- | ---: | ---: | --- | ---: |"]
    for row in rows:
        table.append(f"| {row['seconds']:g} | `{row['agent']}` | `{row['opponent']}` | {row['deal_pairs']} | "
                     f"{row['margin']:+.3f} | [{row['low']:+.3f}, {row['high']:+.3f}] | {row['deal_win_rate']:.3f} |")
    write_json_atomic(f"{out}.json", {"rows": rows, "seed": args.seed, "deals": args.deals})
    write_text_atomic(f"{out}.md", "\n".join(table) + "\n")
    plot(rows, f"{out}.png")
    print("\n".join(table))
    return 0


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from eval.report import png_bytes

    figure, axes = plt.subplots(figsize=(6, 4))
    seconds = [row["seconds"] for row in rows]
    margins = [row["margin"] for row in rows]
    errors = [[row["margin"] - row["low"] for row in rows], [row["high"] - row["margin"] for row in rows]]
    axes.errorbar(seconds, margins, yerr=errors, marker="o", capsize=4)
    axes.axhline(0.0, color="grey", linewidth=0.8)
    axes.set_xscale("log")
    axes.set_xlabel("seconds per decision")
    axes.set_ylabel(f"game points per deal vs {rows[0]['opponent']}")
    axes.set_title(f"{rows[0]['agent'].split(':')[0]}: strength against budget (95% intervals)")
    figure.tight_layout()
    write_bytes_atomic(path, png_bytes(figure, dpi=120))


if __name__ == "__main__":
    raise SystemExit(main())
