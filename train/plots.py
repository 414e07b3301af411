"""The learning-curve plot of a training run (docs/training.md), from its ``scalars.csv`` or TensorBoard events.

    python -m train.plots RUN_DIR OUT.png
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np


def load_scalars(run_dir: str | Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """tag -> (steps, values) sorted by step: ``scalars.csv`` if the run has one, else its TensorBoard events."""
    run_dir = Path(run_dir)
    series: dict[str, list[tuple[int, float]]] = {}
    table = run_dir / "scalars.csv"
    if table.exists():
        with open(table, newline="", encoding="utf-8") as handle:
            rows = csv.DictReader(handle)
            if not {"step", "tag", "value"} <= set(rows.fieldnames or ()):
                raise ValueError(f"{str(table)!r} is not a scalars table: its header is not step,tag,value")
            for row in rows:
                try:
                    point = (int(row["step"]), float(row["value"]))
                except (TypeError, ValueError):  # a value cut short (None) or not a number
                    raise ValueError(f"{str(table)!r} line {rows.line_num}: the step {row['step']!r} or the value "
                                     f"{row['value']!r} is not a number") from None
                series.setdefault(row["tag"], []).append(point)
    else:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

        event_files = sorted((run_dir / "tb").glob("events.out.tfevents.*"))
        if not event_files:
            raise FileNotFoundError(f"{run_dir} has neither scalars.csv nor TensorBoard events in tb/")
        for event_file in event_files:
            accumulator = EventAccumulator(str(event_file), size_guidance={"scalars": 0})
            accumulator.Reload()
            for tag in accumulator.Tags()["scalars"]:
                series.setdefault(tag, []).extend((event.step, event.value) for event in accumulator.Scalars(tag))
    result = {}
    for tag, points in series.items():
        points.sort()
        steps, values = zip(*points)
        result[tag] = (np.asarray(steps), np.asarray(values))
    return result


def learning_curve_png(run_dir: str | Path, title: str | None = None,
                       step_label: str = "training steps (learner decisions)") -> bytes:
    """:func:`learning_curve_figure` as PNG bytes."""
    from eval.report import png_bytes

    return png_bytes(learning_curve_figure(run_dir, title, step_label), dpi=110)


def learning_curve_figure(run_dir: str | Path, title: str | None = None,
                          step_label: str = "training steps (learner decisions)"):
    """Left: evaluation margin per deal against each opponent with its 95% interval; right: the learner's mean
    training return against each kind of pool opponent, and the policy entropy. ``step_label``: what the
    logged steps count. A matplotlib figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scalars = load_scalars(run_dir)
    # The opponent between the tag's first and last part: a spec may hold "/" itself (ppo:path=models/x.zip).
    opponents = sorted(tag[len("eval/"):-len("/margin")] for tag in scalars
                       if tag.startswith("eval/") and tag.endswith("/margin"))
    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    for opponent in opponents:
        steps, margin = scalars[f"eval/{opponent}/margin"]
        _, low = scalars[f"eval/{opponent}/margin_ci_low"]
        _, high = scalars[f"eval/{opponent}/margin_ci_high"]
        left.plot(steps, margin, marker="o", markersize=3, label=f"vs {opponent}")
        left.fill_between(steps, low, high, alpha=0.2)
    left.axhline(0.0, color="black", linewidth=0.8)
    left.set_xlabel(step_label)
    left.set_ylabel("game points per deal (95% CI)")
    left.set_title("evaluation: duplicate deals, deterministic policy")
    if opponents:  # a run with no evaluation yet: no legend (matplotlib warns of one without entries)
        left.legend()
    pool_tags = sorted(tag for tag in scalars if tag.startswith("opponents/") and tag.endswith("/return"))
    for tag in pool_tags:
        steps, values = scalars[tag]
        # Per-rollout means are noisy: smooth over 9 rollouts.
        kernel = min(9, len(values))
        smooth = np.convolve(values, np.ones(kernel) / kernel, mode="valid")
        right.plot(steps[kernel - 1:], smooth, label=f"return vs {tag[len('opponents/'):-len('/return')]} (training)")
    if "losses/entropy" in scalars:
        steps, values = scalars["losses/entropy"]
        right.plot(steps, values, color="grey", linestyle="--", label="policy entropy")
    right.axhline(0.0, color="black", linewidth=0.8)
    right.set_xlabel(step_label)
    right.set_title("training: return per deal by pool opponent")
    if right.get_legend_handles_labels()[0]:
        right.legend(fontsize=8)
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    return figure


def main(argv: list[str] | None = None) -> int:
    import argparse

    from eval.report import check_image_path, write_figure
    from sixtysix_env.fileio import writable_file

    parser = argparse.ArgumentParser(prog="python -m train.plots", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the training run (its scalars.csv or tb/ events)")
    parser.add_argument("out", metavar="OUT.png", help="the plot to write (PNG, or the format of its suffix)")
    args = parser.parse_args(argv)
    try:
        if not Path(args.run_dir).is_dir():
            raise ValueError(f"RUN_DIR {args.run_dir!r} is not a folder")
        writable_file(args.out, f"OUT.png {args.out!r}")
        check_image_path(args.out, "OUT.png")
        figure = learning_curve_figure(args.run_dir, title=Path(args.run_dir).name)
    except (ValueError, OSError) as error:  # a run without scalars, an unreadable or malformed table: no traceback
        parser.error(str(error))
    except KeyError as error:  # an evaluation's margin logged without its interval
        parser.error(f"RUN_DIR {args.run_dir!r} lacks the scalar {error}")
    write_figure(figure, args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
