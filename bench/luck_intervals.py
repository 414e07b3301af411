"""Raw and luck-adjusted margins of match runs side by side: the figure and table of docs/strength.md "Session 28".

Each ``LABEL=RUN`` is one ``sixtysix match`` output folder (its margin per deal for agent A); each
``LABEL=RUN,RUN2`` a paired difference of two runs on the same deals (RUN minus RUN2). For each the 95 % interval
of the raw margins and of the margins with the luck of the talon's draws taken out (:mod:`eval.luck`, computed once
per run and kept in its ``luck.json``), and the ratio of the adjusted to the raw variance::

    python -m bench.luck_intervals --entry "seed 163=results/s27_expert_s163" \\
        --entry "163 paired=results/s27_expert_s163,results/s27_expert_s26code_s163" \\
        --orders 128 --workers 2 --json docs/luck_intervals.json --plot docs/luck_intervals.png
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from eval.luck import DEFAULT_ORDERS, LuckAdjustment
from eval.pool import paired_differences, unit_margins
from eval.report import write_figure
from eval.stats import mean_interval
from sixtysix_env.fileio import nonfinite_as_null, write_json_atomic

from .checks import check_image_paths, check_output_paths


def entry(text: str) -> tuple[str, list[Path]]:
    label, separator, runs = text.partition("=")
    if not separator or not label or not runs:
        raise argparse.ArgumentTypeError(f"expected LABEL=RUN or LABEL=RUN,RUN2, got {text!r}")
    parts = runs.split(",")
    if len(parts) > 2 or not all(parts):  # checked before Path(), which makes an empty part '.'
        raise argparse.ArgumentTypeError(f"expected one run or two runs separated by a comma, got {runs!r}")
    return label, [Path(part) for part in parts]


def intervals(label: str, runs: list[Path], luck: LuckAdjustment) -> dict:
    """The raw and adjusted intervals of one entry, as a JSON-ready row."""
    row: dict = {"label": label, "runs": [str(run) for run in runs]}
    for name, adjustment in (("raw", None), ("adjusted", luck)):
        if len(runs) == 1:
            _, values = unit_margins(runs[0], adjustment)
        else:
            *_, values = paired_differences(runs[0], runs[1], adjustment)
        interval = mean_interval(values)
        row[name] = {"mean": interval.mean, "low": interval.low, "high": interval.high, "n": interval.n,
                     "std": interval.std}
    raw_std = row["raw"]["std"]
    row["variance_ratio"] = (row["adjusted"]["std"] / raw_std) ** 2 if raw_std > 0 else None
    return row


def plot(rows: list[dict], path: Path, orders: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(8, 0.55 * len(rows) + 1.4))
    for index, row in enumerate(reversed(rows)):
        for offset, name, colour in ((0.13, "raw", "tab:gray"), (-0.13, "adjusted", "tab:blue")):
            value = row[name]
            axis.errorbar(value["mean"], index + offset, xerr=[[value["mean"] - value["low"]],
                                                               [value["high"] - value["mean"]]],
                          fmt="o", color=colour, capsize=3, label=name if index == 0 else None)
    axis.set_yticks(range(len(rows)), [row["label"] for row in reversed(rows)])
    axis.axvline(0, color="black", linewidth=0.6)
    axis.set_xlabel("game points per deal (95 % interval)")
    axis.set_title(f"Raw and luck-adjusted margins ({orders} talon orders per draw)")
    axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, frameon=False)
    figure.tight_layout()
    write_figure(figure, path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.luck_intervals",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--entry", type=entry, action="append", required=True,
                        help="LABEL=RUN (a run's margin) or LABEL=RUN,RUN2 (RUN minus RUN2, paired by deal)")
    parser.add_argument("--orders", type=int, default=DEFAULT_ORDERS, help="talon orders per draw's value")
    parser.add_argument("--workers", type=int, default=1, help="processes computing the luck")
    parser.add_argument("--json", type=Path, default=None, help="write the rows here")
    parser.add_argument("--plot", type=Path, default=None, 
                        help="draw the intervals here (PNG, or the format of its suffix)")
    args = parser.parse_args(argv)
    check_output_paths(parser, [("--json", args.json)])
    check_image_paths(parser, [("--plot", args.plot)])
    try:
        luck = LuckAdjustment(args.orders, 0, args.workers)
        rows = [intervals(label, runs, luck) for label, runs in args.entry]
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("| entry | pairs | raw margin, 95 % CI | luck-adjusted, 95 % CI | variance ratio |")
    print("| --- | ---: | --- | --- | ---: |")
    for row in rows:
        raw, adjusted = row["raw"], row["adjusted"]
        print(f"| {row['label']} | {raw['n']:,} | {raw['mean']:+.3f} [{raw['low']:+.3f}, {raw['high']:+.3f}] | "
              f"{adjusted['mean']:+.3f} [{adjusted['low']:+.3f}, {adjusted['high']:+.3f}] | "
              f"{'-' if row['variance_ratio'] is None else format(row['variance_ratio'], '.2f')} |")
    if args.json is not None:
        # A run of one deal pair has no interval ([-inf, +inf] printed): null in the file, which is still written.
        write_json_atomic(args.json, nonfinite_as_null({"orders": args.orders, "rows": rows}))
    if args.plot is not None:
        plot(rows, args.plot, args.orders)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
