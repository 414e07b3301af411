"""bench.world_cap (docs/strength.md, "Seeds of session 86"): where a rollout search stops at its world cap."""

from __future__ import annotations

import numpy as np
import pytest

from bench.world_cap import cap_table, main, searched_decisions


def test_the_table_counts_the_decisions_at_the_cap_by_talon_size():
    # seconds, worlds, actions kept, talon
    rows = np.array([[0.01, 20, 2, 8], [0.02, 20, 1, 8], [0.03, 7, 1, 8], [0.04, 20, 3, 0], [0.05, 5, 1, 0]])
    lines = cap_table(rows, cap=20)
    assert lines[2] == "| 8 | 3 | 2 | 20 | 20.0 | 0.50 |"
    assert lines[3] == "| 0 | 2 | 1 | 12 | 45.0 | 1.00 |"
    assert lines[4] == "| all | 5 | 3 | 20 | 30.0 | 0.67 |"
    assert cap_table(rows[[2, 4]], cap=20)[-1].endswith("| – |")  # none at the cap: no share to give


def test_a_clock_free_search_ends_every_decision_at_its_cap_or_with_one_action_left():
    """Without a clock the cap or the prune ends each search: a decision below the cap kept a single action."""
    rows, cap = searched_decisions("expert:samples=24,seconds=none,threads=1", "greedy", deals=2, seed=9100,
                                   progress=False)
    assert len(rows) > 3 and cap == 24
    below_cap = rows[:, 1] < 24
    assert (rows[:, 1] <= 24).all() and (rows[below_cap, 2] == 1).all() and (rows[~below_cap]).size
    assert set(rows[:, 3].tolist()) <= set(range(0, 13))


def test_the_command_prints_the_table_and_refuses_an_agent_without_a_cap(capsys):
    assert main(["--agent", "expert:samples=24,seconds=none,threads=1", "--opponent", "greedy", "--deals", "1",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "cap 24 worlds" in out and "| all |" in out
    with pytest.raises(SystemExit):
        main(["--agent", "greedy", "--deals", "1", "--no-progress"])
    assert "has no world cap" in capsys.readouterr().err
