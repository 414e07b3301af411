"""notebooks/analysis.ipynb runs end to end (nbclient) on a tiny generated training run and tournament."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient", reason="the notebook test needs nbclient, nbformat and ipykernel (dev extra)")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipykernel")

from eval.deals import generate_deals  # noqa: E402
from eval.tournament import TournamentSettings, run_tournament  # noqa: E402
from sixtysix_env import Rules  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "analysis.ipynb"


def _tiny_run(run_dir: Path) -> None:
    """A training run's files as the trainer writes them, with made-up numbers at three evaluation points."""
    run_dir.mkdir(parents=True)
    (run_dir / "config.yaml").write_text("run: {name: tiny}\n")
    with open(run_dir / "scalars.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["step", "tag", "value"])
        evaluations = []
        for index, step in enumerate((0, 1000, 2000)):
            writer.writerow([step, "losses/entropy", 2.0 - 0.5 * index])
            writer.writerow([step, "charts/explained_variance", 0.1 * index])
            for opponent, base in (("random", -0.5), ("greedy", -2.0)):
                margin = base + 0.4 * index
                for suffix, value in (("margin", margin), ("margin_ci_low", margin - 0.3), ("margin_ci_high", margin + 0.3)):
                    writer.writerow([step, f"eval/{opponent}/{suffix}", value])
                evaluations.append({"step": step, "opponent": opponent, "margin": margin, "margin_ci_low": margin - 0.3,
                                    "margin_ci_high": margin + 0.3, "pairs": 4, "win_rate": 0.5})
    (run_dir / "eval.jsonl").write_text("".join(json.dumps(record) + "\n" for record in evaluations))


@pytest.mark.slow  # starts a Jupyter kernel: ~20 s on the shared 2-core machine
def test_analysis_notebook_runs_on_small_data(tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    _tiny_run(run_dir)
    rules = Rules.preset("standard")
    settings = TournamentSettings(agents=("random", "greedy"), rules=rules,
                                  deals=tuple(generate_deals(5, 2, rules)), master_seed=5)
    run_tournament(settings, out_dir=tmp_path / "tournament", workers=1, progress=False)
    monkeypatch.setenv("SIXTYSIX_RUN_DIR", str(run_dir))
    monkeypatch.setenv("SIXTYSIX_RESULTS", str(tmp_path / "tournament" / "results.json"))
    monkeypatch.setenv("SIXTYSIX_EXAMPLE_DEALS", "2")
    monkeypatch.setenv("SIXTYSIX_REPLAY_OPPONENT", "greedy")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT / "notebooks")}})
    client.execute()
    text = "\n".join(
        output.get("text", "")
        for cell in notebook.cells if cell.cell_type == "code"
        for output in cell.get("outputs", []) if output.get("output_type") == "stream"
    )
    assert "evaluated against: greedy, random" in text
    assert "vs greedy" in text and "+1.200" not in text.split("last evaluation")[0]  # the summary comes after
    assert "| **greedy** |" in text and "| **random** |" in text  # the cross-table of the tournament
    assert text.count("result: ") == 2  # two example deals replayed to their end
    assert "policy   [" in text
    images = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.get("outputs", [])
              if "image/png" in output.get("data", {})]
    assert len(images) == 2  # learning curve + cross-table heat map
    assert "(search)" in text  # the shipped model hands its endgame to the exact search: marked as such


def _executed_text(monkeypatch, **environment: str) -> str:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    return "\n".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                     for output in cell.get("outputs", []) if output.get("output_type") == "stream")


@pytest.mark.slow  # starts a Jupyter kernel
def test_analysis_notebook_reads_three_player_results_and_names_a_three_player_model(tmp_path, monkeypatch):
    """R21: a three-player results.json has no cross-table (KeyError before) and ppo_three cannot replay the
    two-player deals (AttributeError before): its pairs are shown, and the replay says why it plays none."""
    from eval.three_tournament import generate_three_player_deals, run_three_tournament

    rules = Rules.preset("three")
    run_three_tournament(("random", "greedy", "heuristic"), rules, generate_three_player_deals(3, 2), master_seed=3,
                         out_dir=tmp_path / "three", workers=1, progress=False)
    run_dir = tmp_path / "run"
    _tiny_run(run_dir)
    text = _executed_text(monkeypatch, SIXTYSIX_RUN_DIR=str(run_dir),
                          SIXTYSIX_RESULTS=str(tmp_path / "three" / "results.json"),
                          SIXTYSIX_MODEL=str(ROOT / "models" / "ppo_three.zip"))
    assert "2 deals, each in all six seatings (R21), rules three" in text
    assert "| **heuristic** |" in text and "| **random** |" in text
    assert "is a three-player model (R21)" in text and "result: " not in text
