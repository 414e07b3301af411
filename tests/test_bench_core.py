"""bench/core_bench.py: the rollout-cost figure counts what it claims, and the command refuses unknown figures."""

from __future__ import annotations

import pytest

from bench import core_bench


def test_expert_rollout_cost_counts_rollouts_and_solver_nodes():
    figure = core_bench.expert_rollout_cost(deals=3, repeats=2)
    assert figure["positions"] > 0
    assert len(figure["us_runs"]) == 2 and figure["us_median"] > 0
    # Early rollouts of expert's player end in solves (the talon's last trick, R7, or a closing, R10).
    assert figure["nodes_per_rollout"] >= 1


def test_only_measures_the_named_figure_and_refuses_others(capsys):
    assert set(core_bench.solve_and_search_figures()) >= {"phase2_solve_ms", "expert_rollout_us", "jit_warmup_s"}
    assert core_bench.main(["--only", "phase2_solve_ms", "--positions", "5"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("phase2_solve_ms:") and "full_solve_ms" not in printed
    with pytest.raises(SystemExit):
        core_bench.main(["--only", "no_such_figure"])
    assert "invalid choice: 'no_such_figure'" in capsys.readouterr().err


def test_bench_percentiles_interpolate_instead_of_taking_an_upper_rank():
    """The bench tools take percentiles from eval.stats (numpy's linear rule): the p95 of 20 timings is no longer
    their maximum, as the former hand-written rank rule made it."""
    from bench import solver_bench

    times = [float(value) for value in range(1, 21)]
    median, p95 = solver_bench.quantiles(times)
    assert median == 10.5 and p95 == pytest.approx(19.05) and p95 < max(times)


def test_bench_run_leaves_out_a_warm_up_repetition():
    from bench.run import _median_of

    calls = []

    def measure():
        calls.append(len(calls))
        return 1000.0 if len(calls) == 1 else 10.0 + len(calls)  # the first call is slow to start

    median, runs = _median_of(measure, 3)
    assert len(calls) == 4 and runs == [12.0, 13.0, 14.0] and median == 13.0
    assert _median_of(lambda: None, 3) == (None, [])


@pytest.mark.slow  # the whole bench at its smallest: about 30 s
def test_bench_under_other_rules_says_its_core_figures_are_the_standard_rules(tmp_path, capsys):
    """`sixtysix bench --rules scharf` wrote the core figures (measured under the standard rules) beside
    "rules": "scharf", and printed a core/engine ratio it did not save."""
    import json

    from bench.run import main

    out = tmp_path / "bench.json"
    assert main(["--seconds", "0.05", "--repeats", "1", "--no-peers", "--rules", "scharf", "--json", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["rules"] == "scharf" and written["core_figures_rules"] == "standard"
    assert written["core_playouts_per_engine"] == pytest.approx(
        written["core_playout_decisions_per_s"] / written["engine_decisions_per_s"])
    assert "core figures below are measured under the standard rules" in capsys.readouterr().out
