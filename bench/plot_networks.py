"""Plot networks' learning curves and match results side by side (the figures of docs/training.md).

Left: the margin per deal of each fit's evaluations by epoch (a distillation run's ``eval.jsonl``; one line per run
and opponent, with the 95% intervals). Right: the margin per deal of matches (a ``sixtysix match`` output folder),
each with its 95% interval. Given only one kind, the figure has that panel alone.

    python -m bench.plot_networks --curve "4.58 M labels=results/s11_tw300k_eval.jsonl" \\
        --match "4.58 M labels=results/s11_tw300k_tune" --out docs/training/true_world_networks.png
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sixtysix_env.schema import loads_json, read_json_file

from .checks import check_image_paths


def labelled_path(text: str) -> tuple[str, Path]:
    label, separator, path = text.rpartition("=")
    if not separator or not label or not path:
        raise argparse.ArgumentTypeError(f"expected LABEL=PATH, got {text!r}")
    return label, Path(path)


CURVE_KEYS = ("opponent", "epoch", "margin", "margin_ci_low", "margin_ci_high")  # what the plot reads
MARGIN_KEYS = ("mean", "low", "high")


def read_curve(path: Path) -> dict[str, list[dict]]:
    """The evaluations of an ``eval.jsonl`` grouped by opponent, in epoch order."""
    by_opponent: dict[str, list[dict]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"learning curve {str(path)!r} is unreadable: {error}") from None
    for number, line in enumerate(lines, 1):
        where = f"learning curve {str(path)!r} line {number}"
        try:
            record = loads_json(line, where)  # strict: never a RecursionError
        except ValueError:
            raise ValueError(f"{where} is not an evaluation record") from None
        if not isinstance(record, dict):
            raise ValueError(f"{where} is not an evaluation record")
        missing = [key for key in CURVE_KEYS if key not in record]
        if missing:
            raise ValueError(f"{where} is not an evaluation record: it lacks {', '.join(missing)}")
        wrong = [key for key in CURVE_KEYS[1:] if not _is_number(record[key])]
        if wrong or not isinstance(record["opponent"], str):
            raise ValueError(f"{where} is not an evaluation record: {', '.join(wrong or ['opponent'])} "
                             f"of the wrong type")
        by_opponent.setdefault(record["opponent"], []).append(record)
    return {opponent: sorted(records, key=lambda record: record["epoch"]) for opponent, records in by_opponent.items()}


def read_match(folder: Path) -> dict:
    """The first pair's margin per deal (mean and interval) of a match's ``results.json``."""
    results = read_json_file(folder / "results.json", "match results")
    try:
        margin = results["summary"]["pairs"][0]["margin_per_deal"]
    except (KeyError, IndexError, TypeError):
        raise ValueError(f"match results {str(folder / 'results.json')!r} hold no pair's margin") from None
    if not isinstance(margin, dict) or not all(_is_number(margin.get(key)) for key in MARGIN_KEYS):
        raise ValueError(f"match results {str(folder / 'results.json')!r}: the first pair's margin lacks a "
                         f"number among {', '.join(MARGIN_KEYS)}")
    return margin


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def plot(curves: list[tuple[str, Path]], matches: list[tuple[str, Path]], title: str, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from eval.report import write_figure

    # One panel per kind of input given: a figure of matches alone has no empty learning-curve panel beside it.
    panels = [kind for kind, given in (("curves", curves), ("matches", matches)) if given]
    figure, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.4), squeeze=False)
    panel_of = dict(zip(panels, axes[0]))
    if curves:
        _plot_curves(panel_of["curves"], curves)
    if matches:
        _plot_matches(panel_of["matches"], matches, title)
    figure.tight_layout()
    write_figure(figure, out, dpi=100)


def _plot_curves(left, curves: list[tuple[str, Path]]) -> None:
    styles = {"heuristic": "-", "expert": "--"}
    for index, (label, path) in enumerate(curves):
        for opponent, records in read_curve(path).items():
            epochs = [record["epoch"] for record in records]
            margins = [record["margin"] for record in records]
            errors = [[record["margin"] - record["margin_ci_low"] for record in records],
                      [record["margin_ci_high"] - record["margin"] for record in records]]
            left.errorbar(epochs, margins, yerr=errors, fmt="o", linestyle=styles.get(opponent, ":"), capsize=4,
                          color=f"C{index}", label=f"{label} vs {opponent}")
    left.axhline(0, color="grey", linewidth=0.8)
    left.set_xlabel("epoch of the fit")
    left.set_ylabel("game points per deal")
    left.set_title("Learning curves (the runs' evaluation pairs)")
    left.legend(fontsize=8)


def _plot_matches(right, matches: list[tuple[str, Path]], title: str) -> None:
    for index, (label, folder) in enumerate(matches):
        margin = read_match(folder)
        interval = [[margin["mean"] - margin["low"]], [margin["high"] - margin["mean"]]]
        right.errorbar([index], [margin["mean"]], yerr=interval,
                       fmt="o", capsize=6, color=f"C{index}")
    right.axhline(0, color="grey", linewidth=0.8)
    right.set_ylabel("game points per deal")
    right.set_xticks(range(len(matches)), [label for label, _ in matches], fontsize=8)
    right.set_title(title)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.plot_networks", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--curve", type=labelled_path, action="append", default=[],
                        help="LABEL=eval.jsonl of a distillation run (repeatable)")
    parser.add_argument("--match", type=labelled_path, action="append", default=[],
                        help="LABEL=folder of a `sixtysix match` run (repeatable)")
    parser.add_argument("--title", default="Matches, 95% intervals", help="title of the right panel")
    parser.add_argument("--out", type=Path, required=True, help="the image to write (PNG, or the format of its suffix)")
    arguments = parser.parse_args(argv)
    if not arguments.curve and not arguments.match:
        parser.error("nothing to plot: give --curve or --match")
    check_image_paths(parser, [("--out", arguments.out)])
    try:
        plot(arguments.curve, arguments.match, arguments.title, arguments.out)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {arguments.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
