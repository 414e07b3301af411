"""bench.decision_time: every agent timed at the same self-play positions, interleaved (timings are not asserted)."""

import json
import os

import numpy as np
import pytest

from bench import decision_time
from eval.stats import time_figures
from sixtysix_env import Game, Rules


def test_positions_are_every_decision_of_the_heuristic_self_play_deals():
    positions = decision_time.self_play_positions(3, seed=41)
    assert len(positions) == 3
    for number, deal in enumerate(positions):
        replay = Game.deal(Rules(), seed=41 + number, dealer=number % 2)
        assert deal[0].hand == replay.hands[replay.current_player]  # the deal's first decision, from the same deck
        assert all(infoset.legal_actions for infoset in deal)
        # one position per action of the deal: each history is the one before it and one more action
        for before, after in zip(deal, deal[1:]):
            assert after.history[:-1] == before.history and after.history[-1] in before.legal_actions
        for action in deal[-1].history:
            replay.apply(action)
        assert not replay.is_over  # the last position was still a decision
    assert {infoset.player for deal in positions for infoset in deal} == {0, 1}


def test_every_agent_is_timed_at_every_position_of_every_repeat():
    positions = decision_time.self_play_positions(2, seed=7)
    count = sum(len(deal) for deal in positions)
    result = decision_time.time_decisions(["random", "heuristic"], positions, repeats=3, progress=False)
    assert list(result) == ["random", "heuristic"]
    for figures in result.values():
        assert figures["decisions"] == 3 * count
        assert len(figures["repeat_p95_ms"]) == 3
        assert 0 < figures["median_ms"] <= figures["p95_ms"] <= figures["p99_ms"] <= figures["max_ms"]
    assert "| `heuristic` | " + str(3 * count) + " |" in decision_time.table(result)


def test_the_agents_take_turns_who_goes_first(monkeypatch):
    calls = []

    class Recorder:
        def __init__(self, name):
            self.name = name

        def act(self, infoset):
            calls.append(self.name)
            return infoset.legal_actions[0]

    positions = decision_time.self_play_positions(1, seed=3)
    monkeypatch.setattr(decision_time, "make_agent", lambda spec, seed=None: Recorder(spec))
    decision_time.time_decisions(["a", "b"], positions, repeats=1, progress=False)
    timed = calls[2 * len(positions[0]):]  # after the untimed warm-up pass of both agents
    assert timed[:4] == ["a", "b", "b", "a"]


def test_bad_input_is_refused_by_name(monkeypatch, tmp_path):
    positions = decision_time.self_play_positions(1, seed=5)
    with pytest.raises(ValueError, match="at least one agent"):
        decision_time.time_decisions([], positions, repeats=1, progress=False)
    with pytest.raises(ValueError, match="named once"):
        decision_time.time_decisions(["random", "random"], positions, repeats=1, progress=False)
    with pytest.raises(ValueError, match="repeats must be at least 1"):
        decision_time.time_decisions(["random"], positions, repeats=0, progress=False)
    with pytest.raises(ValueError, match="deals must be at least 1"):
        decision_time.self_play_positions(0, seed=5)

    class Illegal:
        def act(self, infoset):
            return 10_000

    monkeypatch.setattr(decision_time, "make_agent", lambda spec, seed=None: Illegal())
    with pytest.raises(ValueError, match=r"agent 'x' chose illegal action 10000 \(out of range\)"):
        decision_time.time_decisions(["x"], [positions[0][1:]], repeats=1, progress=False)


def test_main_writes_the_figures_and_refuses_a_core_it_may_not_use(tmp_path, capsys):
    allowed = sorted(os.sched_getaffinity(0))
    out = tmp_path / "times.json"
    try:
        assert decision_time.main(["--agent", "random", "--deals", "2", "--repeats", "2", "--no-progress",
                                   "--json", str(out)]) == 0
        assert sorted(os.sched_getaffinity(0)) == allowed[:1]  # pinned to one core
    finally:
        os.sched_setaffinity(0, set(allowed))  # main pinned this process; the other tests get their cores back
    document = json.loads(out.read_text())
    assert document["format"] == decision_time.FORMAT and document["core"] == allowed[0]
    assert document["agents"]["random"]["decisions"] > 0
    assert "| `random` |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        decision_time.main(["--agent", "random", "--deals", "1", "--core", str(max(allowed) + 100), "--no-progress"])


def test_time_figures_are_the_tournament_table_figures():
    figures = time_figures([1.0, 2.0, 3.0, 4.0])
    assert figures["decisions"] == 4 and figures["mean_ms"] == 2.5 and figures["max_ms"] == 4.0
    assert figures["p95_ms"] == pytest.approx(np.percentile([1, 2, 3, 4], 95))
    assert time_figures([])["median_ms"] is None


@pytest.mark.parametrize("arguments, fragment", [
    ([], "name at least one agent to time (--agent SPEC)"),
    (["--agent", "random", "--agent", "random"], "each agent may be named once"),
    (["--agent", "random", "--repeats", "0"], "repeats must be at least 1, got 0"),
    (["--agent", "nosuch"], "--agent 'nosuch': unknown agent 'nosuch'"),
])
def test_a_bad_request_is_refused_before_any_self_play_deal(arguments, fragment, monkeypatch, capsys):
    def no_deals(*_args, **_kwargs):
        raise AssertionError("the self-play deals were played before the request was checked")

    monkeypatch.setattr(decision_time, "self_play_positions", no_deals)
    with pytest.raises(SystemExit) as stopped:
        decision_time.main(arguments + ["--deals", "3", "--no-progress"])
    assert stopped.value.code == 2
    assert fragment in capsys.readouterr().err
