"""bench.plot_networks: learning curves and match margins plotted from the files the runs write."""

from __future__ import annotations

import json

import pytest

from bench import plot_networks


def _curve(path, opponent_margins):
    lines = [json.dumps({"round": 0, "epoch": epoch, "opponent": opponent, "margin": margin,
                         "margin_ci_low": margin - 0.1, "margin_ci_high": margin + 0.1})
             for epoch, (opponent, margin) in enumerate(opponent_margins, 1)]
    path.write_text("\n".join(lines) + "\n")


def _match(folder, mean, low, high):
    """A match output folder whose results.json holds one pair's margin per deal."""
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({"summary": {"pairs": [
        {"margin_per_deal": {"mean": mean, "low": low, "high": high}}]}}))
    return folder


def test_curves_group_by_opponent_in_epoch_order_and_the_plot_is_written(tmp_path):
    curve = tmp_path / "eval.jsonl"
    _curve(curve, [("heuristic", 0.1), ("expert", -0.3), ("heuristic", 0.2)])
    grouped = plot_networks.read_curve(curve)
    assert [record["margin"] for record in grouped["heuristic"]] == [0.1, 0.2]
    assert [record["epoch"] for record in grouped["expert"]] == [2]
    match = _match(tmp_path / "match", 0.09, 0.05, 0.13)
    out = tmp_path / "plot.png"
    assert plot_networks.main(["--curve", f"net={curve}", "--match", f"net={match}", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _png_width(path) -> int:
    return int.from_bytes(path.read_bytes()[16:20], "big")  # the IHDR chunk's width, after the 8-byte signature


def test_matches_alone_make_a_figure_of_one_panel(tmp_path):
    match = _match(tmp_path / "match", -0.05, -0.09, -0.01)
    curve = tmp_path / "eval.jsonl"
    _curve(curve, [("heuristic", 0.1)])
    both, alone = tmp_path / "both.png", tmp_path / "alone.png"
    assert plot_networks.main(["--curve", f"net={curve}", "--match", f"net={match}", "--out", str(both)]) == 0
    assert plot_networks.main(["--match", f"net={match}", "--out", str(alone)]) == 0
    assert _png_width(alone) * 2 == _png_width(both)


def test_bad_inputs_are_refused_by_name(tmp_path, capsys):
    bad = tmp_path / "eval.jsonl"
    bad.write_text('{"epoch": 1}\n')
    assert plot_networks.main(["--curve", f"net={bad}", "--out", str(tmp_path / "p.png")]) == 2
    assert "eval.jsonl' line 1 is not an evaluation record" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        plot_networks.main(["--curve", "no-label-here", "--out", str(tmp_path / "p.png")])
    assert not (tmp_path / "p.png").exists()
