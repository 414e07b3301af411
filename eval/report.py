"""Writing a tournament's results: ``results.json``, ``results.csv``, ``table.md`` and ``crosstable.png``.

Every file is written atomically (temporary file + ``os.replace``), so an interrupted run never leaves a
half-written result behind.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any, Sequence

from sixtysix_env.fileio import nonfinite_as_null, write_bytes_atomic, write_text_atomic

CSV_COLUMNS = (
    "agent_a", "agent_b", "deal", "bummerl_game", "bummerl_deal", "seat_a", "player0", "player1", "dealer",
    "winner", "game_points", "reason", "points0", "points1", "margin_a", "decisions0", "decisions1",
    "act_seconds0", "act_seconds1", "actions",
)


def write_outputs(directory: Path, document: dict[str, Any], records: Sequence[dict[str, Any]]) -> None:
    """Write all four result files into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    # NaN and infinities are not JSON: undefined figures are written as null.
    results = json.dumps(nonfinite_as_null(document), indent=1, allow_nan=False)
    write_text_atomic(directory / "results.json", results + "\n")
    write_text_atomic(directory / "results.csv", results_csv(document, records))
    write_text_atomic(directory / "table.md", markdown_table(document))
    write_bytes_atomic(directory / "crosstable.png", crosstable_png(document))


# --------------------------------------------------------------------------- CSV: one row per game (deal played)
def results_csv(document: dict[str, Any], records: Sequence[dict[str, Any]]) -> str:
    """One row per deal played. In match mode ``bummerl_game`` (0/1: which of the duplicate Bummerls) and
    ``bummerl_deal`` (the deal's number inside that Bummerl) locate it; they are empty otherwise."""
    from sixtysix_env.actions import action_name

    pairs = document["settings"]["pairs"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)

    def row(agent_a: str, agent_b: str, deal: int, bummerl_game: Any, bummerl_deal: Any, seat_a: int, game: dict) -> list:
        seated = [agent_a, agent_b] if seat_a == 0 else [agent_b, agent_a]
        winner = game["winner"]
        if winner is None:
            margin = 0
        else:
            margin = game["game_points"] if winner == seat_a else -game["game_points"]
        times = game["times_us"]
        return [
            agent_a, agent_b, deal, bummerl_game, bummerl_deal, seat_a, seated[0], seated[1], game["dealer"],
            "" if winner is None else seated[winner], game["game_points"], game["reason"], game["points"][0],
            game["points"][1], margin, len(times[0]), len(times[1]), f"{sum(times[0]) / 1e6:.6f}",
            f"{sum(times[1]) / 1e6:.6f}", " ".join(action_name(a).replace(" ", "_") for a in game["actions"]),
        ]

    for record in records:
        agent_a, agent_b = pairs[record["pair"]]
        if "games" in record:
            for game in record["games"]:
                writer.writerow(row(agent_a, agent_b, record["deal"], "", "", game["seat_a"], game))
        else:
            for which, bummerl in enumerate(record["bummerls"]):
                for number, game in enumerate(bummerl["deals"]):
                    writer.writerow(row(agent_a, agent_b, record["deal"], which, number, bummerl["seat_a"], game))
    return buffer.getvalue()


# --------------------------------------------------------------------------- Markdown
def _signed(value: float, digits: int = 3) -> str:
    return f"{value:+.{digits}f}"


def _half(value: float | None, digits: int = 3) -> str:
    return "∞" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _number(value: float | None, digits: int = 2) -> str:
    return "–" if value is None or (isinstance(value, float) and not math.isfinite(value)) else f"{value:.{digits}f}"


def unidentified_ratings_note(ratings: dict[str, Any]) -> list[str]:
    """Markdown lines under a ratings table naming the agents whose rating the games do not bound."""
    unbounded = [label for label, rating in ratings["agents"].items() if not rating.get("identified", True)]
    if not unbounded:
        return []
    return ["", f"No interval for {', '.join(f'`{_escape(label)}`' for label in unbounded)}: won or lost every game "
                "against the rest, so the games do not bound the rating; its Elo comes from the virtual drawn games "
                "alone."]


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table(document: dict[str, Any]) -> str:
    """The cross-table, per-pair statistics, ratings and time per decision as Markdown."""
    settings = document["settings"]
    summary = document["summary"]
    labels = settings["labels"]
    match = settings["mode"] == "match"
    unit = "Bummerl pairs" if match else "deal pairs"
    rules = settings["rules_preset"] or "custom " + json.dumps(settings["rules"])
    lines = [
        "# Tournament results",
        "",
        f"Agents: {', '.join(f'`{label}`' for label in labels)}. Rules: {rules}. "
        f"{settings['deals']} duplicate {unit} per pair ({'R17 Bummerls' if match else 'each deal played twice, seats swapped'}), "
        f"master seed {settings['master_seed']}, deals {settings['deals_source']}."
        + ("" if settings["complete"] else " **Incomplete run.**"),
        "",
        "## Mean game-point margin per deal (row agent vs column agent, ± 95% CI half-width)",
        "",
        "The row agent's game points won minus lost per deal played (with Bummerls: the units' total over their "
        "total deals, so every deal weighs the same); the interval is a t interval over the duplicate units.",
        "",
        "| | " + " | ".join(f"`{_escape(label)}`" for label in labels) + " |",
        "|---|" + "---:|" * len(labels),
    ]
    margins = summary["crosstable"]["margin_per_deal"]
    for i, label in enumerate(labels):
        cells = []
        for j in range(len(labels)):
            cell = margins[i][j]
            cells.append("—" if i == j else ("" if cell is None else f"{_signed(cell['mean'], 2)} ± {_half(cell['half_width'], 2)}"))
        lines.append(f"| `{_escape(label)}` | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Pairs",
        "",
        "Deal win rate: deals won by A (a deal not scored, R15, counts half) with a 95% Wilson interval (on fewer "
        "games where the deal pairs' wins vary more than independent games would: Kish's design effect). "
        "Duplicate units W-T-L: units where A's summed game-point margin was positive, zero, negative"
        + (" (over a Bummerl pair's deals; the Bummerls themselves are counted under Bummerl pairs: A won both, one "
           "of the two, neither)." if match else "."),
        "",
    ]
    header = "| A | B | margin/deal (A) | 95% CI | A deal win rate | 95% Wilson | units W-T-L |"
    rule = "|---|---|---:|---|---:|---|---|"
    if match:
        header += " A Bummerl win rate | 95% Wilson | Bummerl pairs both-split-neither | Bummerl points/Bummerl (A) |"
        rule += "---:|---|---|---:|"
    lines += [header, rule]
    for pair in summary["pairs"]:
        margin = pair["margin_per_deal"]
        rate = pair["deal_win_rate"]
        counts = pair["duplicate_pairs"]
        interval = "–" if margin["low"] is None else f"[{margin['low']:+.3f}, {margin['high']:+.3f}]"
        line = (
            f"| `{_escape(pair['a'])}` | `{_escape(pair['b'])}` | {_signed(margin['mean'])} | {interval} | "
            f"{rate['rate']:.3f} | [{rate['low']:.3f}, {rate['high']:.3f}] | "
            f"{counts['won']}-{counts['tied']}-{counts['lost']} |"
        )
        if match:
            bummerl = pair["bummerl_win_rate"]
            points = pair["bummerl_points_per_bummerl"]
            outcome = pair.get("bummerl_pairs")  # absent from summaries written before it was counted
            outcome_cell = "–" if outcome is None else (
                f"{outcome['won_both']}-{outcome['split']}-{outcome['lost_both']}")
            line += (
                f" {bummerl['rate']:.3f} | [{bummerl['low']:.3f}, {bummerl['high']:.3f}] | {outcome_cell} | "
                f"{_signed(points['mean'])} ± {_half(points['half_width'])} |"
            )
        lines.append(line)
    ratings = summary.get("ratings")
    if ratings:
        lines += [
            "",
            f"## Ratings (Bradley–Terry on deal wins, Elo scale, anchor: {ratings['anchor']})",
            "",
            f"Fitted by maximum likelihood (MM algorithm) with {ratings['prior_games_per_pair']:g} virtual drawn game "
            f"per pair; uncertainty from {ratings['bootstrap_resamples']} bootstrap resamples of the duplicate units.",
            "",
            "| rank | agent | Elo | ± SE | 95% interval |",
            "|---:|---|---:|---:|---|",
        ]
        ordered = sorted(ratings["agents"].items(), key=lambda item: -item[1]["elo"])
        for rank, (label, rating) in enumerate(ordered, start=1):
            interval = "–" if rating["low"] is None else f"[{rating['low']:+.0f}, {rating['high']:+.0f}]"
            lines.append(
                f"| {rank} | `{_escape(label)}` | {rating['elo']:+.0f} | {_number(rating['std_error'], 0)} | {interval} |"
            )
        lines += unidentified_ratings_note(ratings)
    lines += [
        "",
        "## Time per decision (wall clock of `act`, milliseconds)",
        "",
        "| agent | decisions | median | p95 | p99 | mean | max |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, timing in document["timing"].items():
        lines.append(
            f"| `{_escape(label)}` | {timing['decisions']} | {_number(timing['median_ms'], 3)} | "
            f"{_number(timing['p95_ms'], 3)} | {_number(timing.get('p99_ms'), 3)} | {_number(timing['mean_ms'], 3)} | "
            f"{_number(timing['max_ms'], 3)} |"
        )
    versions = document["versions"]
    lines += [
        "",
        f"sixtysix {versions['sixtysix']}, Python {versions['python']}, commit {versions.get('git_commit') or 'unknown'}.",
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- images (PNG and others)
def figure_bytes(figure: Any, image_format: str = "png", dpi: float | None = None) -> bytes:
    """A matplotlib figure as the bytes of an image file in ``image_format`` (any format matplotlib writes: ``png``,
    ``svg``, ``pdf``, ...; an unknown one is refused by matplotlib, by name), ``dpi`` None: the figure's own; the
    figure closed either way. What every plot of the project writes (atomically, with
    :func:`sixtysix_env.fileio.write_bytes_atomic`) or embeds."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    try:
        figure.savefig(buffer, format=image_format, dpi=dpi)
    finally:
        plt.close(figure)
    return buffer.getvalue()


def png_bytes(figure: Any, dpi: float | None = None) -> bytes:
    """:func:`figure_bytes` as PNG."""
    return figure_bytes(figure, "png", dpi)


def image_format(path: str | Path) -> str:
    """The image format a plot named by the user is written in: its file's suffix (``.svg``, ``.pdf``, ...), PNG
    without one."""
    return Path(path).suffix.lstrip(".").lower() or "png"


def check_image_path(path: str | Path, what: str) -> None:
    """Refuse, naming ``what``, a plot path whose suffix is a format matplotlib does not write (a ``.txt`` would
    otherwise fail after the work, or before :func:`image_format` a PNG would have been written under that name)."""
    from matplotlib.backend_bases import FigureCanvasBase

    writable = FigureCanvasBase.get_supported_filetypes()
    if image_format(path) not in writable:
        raise ValueError(f"{what} {str(path)!r}: matplotlib writes no {image_format(path)!r} images; name it "
                         f"with one of {', '.join('.' + name for name in sorted(writable))}")


def write_figure(figure: Any, path: str | Path, dpi: float | None = None) -> None:
    """Write a matplotlib figure to ``path`` atomically, in the format of its suffix (:func:`image_format`)."""
    write_bytes_atomic(path, figure_bytes(figure, image_format(path), dpi))


def crosstable_png(document: dict[str, Any]) -> bytes:
    """A heat map of the margin cross-table (row agent's mean game points per deal against the column agent)."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed; safe in worker-less batch runs
    import matplotlib.pyplot as plt
    import numpy as np

    labels = document["settings"]["labels"]
    margins = document["summary"]["crosstable"]["margin_per_deal"]
    size = len(labels)
    values = np.full((size, size), np.nan)
    for i in range(size):
        for j in range(size):
            if margins[i][j] is not None:
                values[i, j] = margins[i][j]["mean"]
    limit = max(0.5, float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.5)
    figure, axes = plt.subplots(figsize=(1.6 + 1.3 * size, 1.2 + 1.1 * size), dpi=110)
    image = axes.imshow(values, cmap="RdBu", vmin=-limit, vmax=limit)
    axes.set_xticks(range(size), labels=labels, rotation=30, ha="right")
    axes.set_yticks(range(size), labels=labels)
    axes.set_xlabel("opponent")
    axes.set_ylabel("agent")
    for i in range(size):
        for j in range(size):
            cell = margins[i][j]
            if i == j or cell is None:
                continue
            text = f"{cell['mean']:+.2f}\n±{_half(cell['half_width'], 2)}"
            strong = abs(cell["mean"]) > 0.6 * limit
            axes.text(j, i, text, ha="center", va="center", fontsize=8, color="white" if strong else "black")
    figure.colorbar(image, ax=axes, label="mean game points per deal (row vs column)")
    axes.set_title("Duplicate cross-table (95% CI)")
    figure.tight_layout()
    return png_bytes(figure)


__all__ = ["CSV_COLUMNS", "crosstable_png", "markdown_table", "results_csv", "write_outputs"]
