"""bench.quick_strength: its timings leave out what a process does once (compiling, loading), its warm-up changes
no result, and its report is the mean margin with a t interval over the deal pairs it played."""

from __future__ import annotations

import time

import agents.registry
from agents import Agent
from bench import quick_strength
from reference_stats import t_interval
from sixtysix_env.infoset import InformationSet

COLD_SECONDS = 0.2


class ColdOnceAgent(Agent):
    """The lowest legal action; the first decision in the process takes ``COLD_SECONDS``, as a first call that
    compiles a kernel or loads a file does."""

    name = "cold-once"
    warm = False

    def act(self, infoset: InformationSet) -> int:
        if not ColdOnceAgent.warm:
            time.sleep(COLD_SECONDS)
            ColdOnceAgent.warm = True
        return infoset.legal_actions[0]


def test_the_timed_decisions_leave_out_the_process_s_first_cold_one(monkeypatch):
    monkeypatch.setitem(agents.registry._REGISTRY, "cold-once", lambda seed=None, **params: ColdOnceAgent(seed))
    monkeypatch.setattr(quick_strength, "_WARMED_UP", set())
    monkeypatch.setattr(ColdOnceAgent, "warm", False)
    _, _, times_a, times_b = quick_strength.play_pairs(("cold-once", "random", "standard", 3, [0, 1]))
    assert len(times_a) >= 20 and len(times_b) >= 20
    assert max(times_a) < COLD_SECONDS / 2, "the cold first decision was timed"


def test_the_warm_up_changes_no_result(monkeypatch):
    task = ("heuristic", "random", "standard", 11, [0, 1, 2])
    monkeypatch.setattr(quick_strength, "_WARMED_UP", set())
    warmed = quick_strength.play_pairs(task)
    monkeypatch.setattr(quick_strength, "_WARMED_UP", {("heuristic", "random", "standard")})  # no warm-up
    cold = quick_strength.play_pairs(task)
    assert warmed[:2] == cold[:2]  # margins and deal outcomes
    assert len(warmed[2]) == len(cold[2]) and len(warmed[3]) == len(cold[3])  # the same decisions were timed


def test_the_report_gives_the_mean_margin_and_a_t_interval_over_the_pairs_played(capsys):
    deals, seed = 5, 17
    quick_strength.main(["heuristic", "random", "--deals", str(deals), "--seed", str(seed), "--no-progress"])
    captured = capsys.readouterr()
    assert captured.err == ""  # --no-progress: no bar
    margins, outcomes, _, _ = quick_strength.play_pairs(("heuristic", "random", "standard", seed, list(range(deals))))
    mean, low, high = t_interval(margins)
    assert f"{deals} deal pairs, seed {seed}" in captured.out
    assert (f"margin per deal for heuristic: {mean:+.3f} game points, "
            f"95% CI [{low:+.3f}, {high:+.3f}]") in captured.out
    wins, losses = outcomes.count(1), outcomes.count(-1)
    assert f"deals won/lost/unscored by heuristic: {wins}/{losses}/{2 * deals - wins - losses}" in captured.out


def test_the_progress_bar_counts_deal_pairs_on_stderr(capsys):
    quick_strength.main(["random", "random", "--deals", "2", "--seed", "1"])
    assert "deal pairs" in capsys.readouterr().err
