"""Details of the tuning helpers (train.tune_heuristic, train.tune_playout_policy), the training CLI (train.cli,
train.cpu) and the benchmark tools (bench.peers, bench.run, bench.play_load) that their other tests left open: each
test fails if the behaviour it names is changed (found by a mutation review of these modules)."""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

import numpy as np
import pytest

from fake_clock import FakeClock

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------ bench.play_load
def _in_process_server(monkeypatch, tmp_path, agents):
    """Point bench.play_load's httpx client at an in-process app (play/web/server.py) with ``agents``: the load
    test's requests go through the real API with no server process or socket."""
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("starlette")
    from web_helpers import web_settings

    from play.web.server import create_app

    app = create_app(web_settings(tmp_path, agents))
    real_client = httpx.AsyncClient

    def client(**options):
        options.pop("limits", None)  # a pool's limits mean nothing to an in-process transport
        return real_client(transport=httpx.ASGITransport(app=app), **options)

    monkeypatch.setattr(httpx, "AsyncClient", client)


class _NoServer:
    """Stands in for the ``sixtysix serve`` process that bench.play_load.main starts."""

    def __init__(self, command, **options):
        self.command = command
        self.returncode = None

    def poll(self):
        return None

    def terminate(self):
        self.returncode = -15

    def wait(self, timeout=None):
        return self.returncode


def test_play_load_keeps_the_two_roles_timings_apart_when_both_name_the_same_agent(tmp_path, monkeypatch, capsys):
    """``--opponent random --search-opponent random`` pooled the search games' requests with the others under one
    label 'random' (one create row counting all the games); each role now has its own rows, labelled by role."""
    import asyncio

    from bench import play_load

    _in_process_server(monkeypatch, tmp_path, ("random",))
    args = play_load.LoadArgs(games=2, search_games=1, opponent="random", search_opponent="random", seed=3,
                              timeout=120, out=str(tmp_path / "load.json"))
    timings, finished, total, elapsed = asyncio.run(play_load.run_load(args, "http://127.0.0.1:8000"))
    assert (finished, total) == (3, 3) and elapsed > 0
    assert {key[:2] for key in timings} == {("--opponent", "random"), ("--search-opponent", "random")}
    # every game makes exactly one create request: two games in one role, one in the other
    assert len(timings[("--opponent", "random", "create")]) == 2
    assert len(timings[("--search-opponent", "random", "create")]) == 1
    # a single deal has at least six moves of the human's (one per trick of the stock at least)
    for role in play_load.ROLES:
        assert len(timings[(role, "random", "move")]) >= 6 * (2 if role == "--opponent" else 1)

    rows = play_load.summarise(timings)
    for role in play_load.ROLES:
        values = [value for (r, _, _), vs in timings.items() if r == role for value in vs]
        every = [row for row in rows if row["role"] == role and row["request"] == "all"]
        assert len(every) == 1 and every[0]["count"] == len(values)
        assert every[0]["p50_ms"] == round(1000 * statistics.median(values), 1)
        assert every[0]["max_ms"] == round(1000 * max(values), 1)
    # the rows of each kind, the --opponent games' first, then the "all" rows in the same order
    assert [(row["role"], row["request"]) for row in rows] == (
        [("--opponent", kind) for kind in sorted({key[2] for key in timings if key[0] == "--opponent"})]
        + [("--search-opponent", kind) for kind in sorted({key[2] for key in timings if key[0] != "--opponent"})]
        + [("--opponent", "all"), ("--search-opponent", "all")])


def test_play_load_main_prints_and_writes_the_rows_by_role_and_starts_the_server_with_both_specs(
        tmp_path, monkeypatch, capsys):
    import subprocess

    from bench import play_load

    _in_process_server(monkeypatch, tmp_path, ("random", "greedy"))
    started = []
    monkeypatch.setattr(subprocess, "Popen", lambda command, **options: started.append(_NoServer(command)) or
                        started[-1])
    monkeypatch.setattr(play_load, "server_failure", lambda server, base, log: None)
    out = tmp_path / "load.json"
    argv = ["--games", "1", "--search-games", "1", "--opponent", "random", "--search-opponent", "greedy",
            "--timeout", "120", "--seed", "2", "--out", str(out)]
    assert play_load.main(argv) == 0
    command = started[0].command
    assert command[command.index("--agents") + 1] == "random,greedy"
    assert command[command.index("--max-games") + 1] == "12"  # the games, and ten to spare
    assert command[command.index("--host") + 1] == "127.0.0.1" and started[0].returncode == -15  # stopped after
    written = json.loads(out.read_text())
    assert written["command"] == "python -m bench.play_load " + " ".join(argv)
    assert (written["games_finished"], written["games"]) == (2, 2) and written["settings"]["seed"] == 2
    assert {(row["role"], row["opponent"]) for row in written["rows"]} == {("--opponent", "random"),
                                                                           ("--search-opponent", "greedy")}
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "2/2 games finished in " in printed and "role" in printed.splitlines()[1]
    creates = [line.split() for line in printed.splitlines() if " create " in line]
    assert [(fields[0], fields[1], fields[3]) for fields in creates] == [("--opponent", "random", "1"),
                                                                         ("--search-opponent", "greedy", "1")]


def test_play_load_counts_the_games_left_at_the_deadline_as_unfinished_and_exits_1(tmp_path, monkeypatch, capsys):
    import subprocess

    from bench import play_load

    _in_process_server(monkeypatch, tmp_path, ("random",))
    monkeypatch.setattr(subprocess, "Popen", lambda command, **options: _NoServer(command))
    monkeypatch.setattr(play_load, "server_failure", lambda server, base, log: None)
    out = tmp_path / "load.json"
    assert play_load.main(["--games", "2", "--search-games", "0", "--opponent", "random", "--timeout", "1e-9",
                           "--out", str(out)]) == 1
    written = json.loads(out.read_text())
    assert (written["games_finished"], written["games"]) == (0, 2)
    assert [(row["request"], row["count"]) for row in written["rows"]] == [("create", 2), ("all", 2)]
    assert "0/2 games finished" in capsys.readouterr().out


def test_play_load_reports_a_server_that_does_not_answer_and_writes_nothing(tmp_path, monkeypatch, capsys):
    import subprocess

    from bench import play_load

    servers = []
    monkeypatch.setattr(subprocess, "Popen", lambda command, **options: servers.append(_NoServer(command)) or
                        servers[-1])
    monkeypatch.setattr(play_load, "server_failure", lambda server, base, log: "it said no")
    assert play_load.main(["--games", "1", "--search-games", "0", "--out", str(tmp_path / "load.json")]) == 1
    assert "error: it said no" in capsys.readouterr().err
    assert servers[0].returncode == -15 and list(tmp_path.iterdir()) == []
