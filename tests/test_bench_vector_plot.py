"""bench/vector_bench.py --plot: the bar chart is written whole, in the format its file name asks for."""

from __future__ import annotations

import pytest

from bench.vector_bench import plot_figures

FIGURES = {"engine_steps_per_s": 12_000.0, "engine_steps_per_cpu_s": 9_000.0, "not_a_rate": 3.0}


@pytest.mark.parametrize("name, magic", [("chart.png", b"\x89PNG"), ("chart.svg", b"<?xml"), ("chart.pdf", b"%PDF"),
                                         ("chart", b"\x89PNG")])
def test_the_plot_is_written_in_the_format_of_its_file_name(tmp_path, name, magic):
    path = tmp_path / name
    plot_figures(FIGURES, str(path))
    assert path.read_bytes().startswith(magic)
    assert [entry.name for entry in tmp_path.iterdir()] == [name]  # no temporary file left beside it


def test_an_unknown_image_format_is_refused_by_name_and_writes_nothing(tmp_path):
    path = tmp_path / "chart.xyz"
    with pytest.raises(ValueError, match="xyz"):
        plot_figures(FIGURES, str(path))
    assert list(tmp_path.iterdir()) == []


def test_a_plot_that_fails_midway_leaves_the_previous_file_whole(tmp_path, monkeypatch):
    """Nothing is half-written: matplotlib failing after its first bytes leaves the old chart as it was."""
    from matplotlib.figure import Figure

    def fail_after_some_bytes(self, target, *args, **kwargs):
        if hasattr(target, "write"):
            target.write(b"half a chart")
        else:
            with open(target, "wb") as file:
                file.write(b"half a chart")
        raise OSError("disk full")

    path = tmp_path / "chart.png"
    plot_figures(FIGURES, str(path))
    before = path.read_bytes()
    monkeypatch.setattr(Figure, "savefig", fail_after_some_bytes)
    with pytest.raises(OSError, match="disk full"):
        plot_figures(FIGURES, str(path))
    assert path.read_bytes() == before
