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
