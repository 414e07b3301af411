"""Details of the tuning helpers (train.tune_heuristic, train.tune_playout_policy), the training CLI (train.cli,
train.cpu) and the benchmark tools (bench.peers, bench.run, bench.play_load) that their other tests left open: each
test fails if the behaviour it names is changed (found by a mutation review of these modules)."""

from __future__ import annotations

import json
import math
import shlex
import statistics
import sys
import time
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
    requests = []

    async def record(request):
        requests.append((request.method, request.url.path, json.loads(request.content) if request.content else None))

    def client(**options):
        options.pop("limits", None)  # a pool's limits mean nothing to an in-process transport
        return real_client(transport=httpx.ASGITransport(app=app), event_hooks={"request": [record]}, **options)

    monkeypatch.setattr(httpx, "AsyncClient", client)
    return requests


class _NoServer:
    """Stands in for the ``sixtysix serve`` process that bench.play_load.main starts."""

    def __init__(self, command, **options):
        self.command, self.options = command, options
        self.returncode = None

    def poll(self):
        return None

    def terminate(self):
        self.returncode = -15

    def wait(self, timeout=None):
        self.waited = timeout
        return self.returncode


def _fake_server_start(monkeypatch) -> list:
    """Replace the start of ``sixtysix serve`` by a :class:`_NoServer`, and return the list the fakes go to. Other
    processes still start: matplotlib runs fc-list when it first builds its font cache (a new machine), and that
    call met the fake."""
    import subprocess

    real_popen, started = subprocess.Popen, []

    def popen(command, **options):
        if command[1:4] != ["-m", "sixtysix_cli", "serve"]:
            return real_popen(command, **options)
        started.append(_NoServer(command, **options))
        return started[-1]

    monkeypatch.setattr(subprocess, "Popen", popen)
    return started


def test_play_load_keeps_the_two_roles_timings_apart_when_both_name_the_same_agent(tmp_path, monkeypatch, capsys):
    """``--opponent random --search-opponent random`` pooled the search games' requests with the others under one
    label 'random' (one create row counting all the games); each role now has its own rows, labelled by role."""
    import asyncio

    from bench import play_load

    requests = _in_process_server(monkeypatch, tmp_path, ("random",))
    args = play_load.LoadArgs(games=2, search_games=1, opponent="random", search_opponent="random", seed=3,
                              timeout=120, out=str(tmp_path / "load.json"))
    run = asyncio.run(play_load.run_load(args, "http://127.0.0.1:8000"))
    timings = run.timings
    assert (run.finished, run.total, run.failures) == (3, 3, []) and run.elapsed > 0
    # single deals (no bummerl) of the seeds --seed * 100000 + n, search games from + 50000, named by seed
    creates = sorted(body["seed"] for method, path, body in requests if path == "/api/games")
    assert creates == [300_000, 300_001, 350_000]
    assert all(body == {"player": f"load{body['seed'] % 1000}", "opponent": "random", "bummerl": False,
                        "seed": body["seed"]} for _, path, body in requests if path == "/api/games")
    hints = [path for _, path, _ in requests if path.endswith("/hint")]
    assert hints and len(set(hints)) == len(hints)  # at most one hint a game
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
    from bench import play_load

    _in_process_server(monkeypatch, tmp_path, ("random", "greedy"))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the server gets the project's folder instead
    started = _fake_server_start(monkeypatch)
    monkeypatch.setattr(play_load, "server_failure", lambda server, base, log: None)
    out = tmp_path / "load.json"
    argv = ["--games", "1", "--search-games", "1", "--opponent", "random", "--search-opponent", "greedy",
            "--timeout", "120", "--seed", "2", "--out", str(out)]
    assert play_load.main(argv) == 0
    command = started[0].command
    assert command[command.index("--agents") + 1] == "random,greedy"
    assert command[command.index("--max-games") + 1] == "12"  # the games, and ten to spare
    assert command[command.index("--host") + 1] == "127.0.0.1" and started[0].returncode == -15  # stopped after
    assert command[:4] == [sys.executable, "-m", "sixtysix_cli", "serve"]
    assert 0 < started[0].waited < 60  # waited for, but not for ever
    assert command[command.index("--db") + 1].endswith("load.sqlite3")
    options = started[0].options
    assert options["stderr"].name.endswith("server.log") and options["env"]["PYTHONPATH"] == str(ROOT)
    assert options["stdout"] is options["stderr"]  # its banner goes to the log too, not into the table printed
    assert options["cwd"] == str(ROOT)
    written = json.loads(out.read_text())
    assert shlex.split(written["command"]) == ["python", "-m", "bench.play_load", *argv]
    assert (written["games_finished"], written["games"]) == (2, 2) and written["settings"]["seed"] == 2
    assert written["cpus"] == __import__("os").cpu_count() and written["seconds"] == round(written["seconds"], 1)
    assert {(row["role"], row["opponent"]) for row in written["rows"]} == {("--opponent", "random"),
                                                                           ("--search-opponent", "greedy")}
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "2/2 games finished in " in printed and "role" in printed.splitlines()[1]
    creates = [line.split() for line in printed.splitlines() if " create " in line]
    assert [(fields[0], fields[1], fields[3]) for fields in creates] == [("--opponent", "random", "1"),
                                                                         ("--search-opponent", "greedy", "1")]


def test_a_refused_request_stops_the_load_test_naming_the_request_and_the_answer(tmp_path, monkeypatch):
    import asyncio

    import httpx

    from bench import play_load

    _in_process_server(monkeypatch, tmp_path, ("random",))

    async def one_game():
        async with httpx.AsyncClient() as client:
            return await play_load.play_one(client, "http://127.0.0.1:8000", "greedy", 1, {}, float("inf"))

    with pytest.raises(RuntimeError, match=r"POST /api/games: 400 .*unknown opponent 'greedy'"):
        asyncio.run(one_game())


def test_a_request_that_gets_no_answer_fails_its_game_naming_the_transport_error(tmp_path):
    import asyncio

    import httpx

    from bench import play_load

    def refuse(request):
        raise httpx.ConnectError("connection refused", request=request)

    async def one_game():
        async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as client:
            return await play_load.play_one(client, "http://127.0.0.1:8000", "random", 1, timings, float("inf"))

    timings: dict = {}
    with pytest.raises(play_load.RequestFailed, match=r"POST /api/games: ConnectError connection refused") as caught:
        asyncio.run(one_game())
    assert (caught.value.kind, caught.value.status) == ("create", "ConnectError")
    assert timings == {}  # no answer, no latency


def test_a_failed_request_ends_its_game_only_and_the_run_counts_it_by_role_request_and_status(
        tmp_path, monkeypatch, capsys):
    """A load test used to stop at the first error status with a traceback and write nothing; the failed games are
    now counted (as wrk and locust count non-2xx answers), the other games play on and the figures are written."""

    from bench import play_load

    # The server offers only random: every game against greedy is refused at its create request (400).
    _in_process_server(monkeypatch, tmp_path, ("random",))
    _fake_server_start(monkeypatch)
    monkeypatch.setattr(play_load, "server_failure", lambda server, base, log: None)
    monkeypatch.setattr(play_load, "check_agent_specs", lambda parser, specs: None)
    out = tmp_path / "load.json"
    argv = ["--games", "2", "--search-games", "2", "--opponent", "random", "--search-opponent", "greedy",
            "--timeout", "120", "--out", str(out)]
    assert play_load.main(argv) == 1
    written = json.loads(out.read_text())
    assert (written["games_finished"], written["games_failed"], written["games"]) == (2, 2, 4)
    [failure] = written["failures"]
    assert {key: failure[key] for key in ("role", "opponent", "request", "status", "count")} == {
        "role": "--search-opponent", "opponent": "greedy", "request": "create", "status": "400", "count": 2}
    assert failure["example"].startswith("POST /api/games: 400 ") and "unknown opponent 'greedy'" in failure["example"]
    # the refused creates were answered, so they are timed too; the random games' rows are all there
    rows = {(row["role"], row["request"]): row["count"] for row in written["rows"]}
    assert rows[("--search-opponent", "create")] == 2 and rows[("--opponent", "create")] == 2
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "2/4 games finished in " in printed and "; 2 ended by a failed request" in printed
    assert "failed: --search-opponent greedy create 400 x2, e.g. POST /api/games: 400 " in printed


def test_unanswered_requests_are_counted_and_the_server_log_is_shown(tmp_path, monkeypatch, capsys):
    """A server that stops answering (here: every connection refused) fails each game at its first request; the run
    still writes its figures and shows the server's last output, which the temporary folder then takes away."""
    import httpx

    from bench import play_load

    real_client = httpx.AsyncClient

    def refuse(request):
        raise httpx.ConnectError("connection refused", request=request)

    def client(**options):
        options.pop("limits", None)
        return real_client(transport=httpx.MockTransport(refuse), **options)

    monkeypatch.setattr(httpx, "AsyncClient", client)
    started = _fake_server_start(monkeypatch)
    monkeypatch.setattr(play_load, "server_failure", lambda server, base, log: None)
    original_tail = play_load._tail
    monkeypatch.setattr(play_load, "_tail", lambda log: log.write_text("Traceback: the server fell over\n")
                        and original_tail(log))
    out = tmp_path / "load.json"
    assert play_load.main(["--games", "2", "--search-games", "1", "--opponent", "random", "--search-opponent",
                           "random", "--out", str(out)]) == 1
    written = json.loads(out.read_text())
    assert (written["games_finished"], written["games_failed"], written["rows"]) == (0, 3, [])
    assert [(row["role"], row["request"], row["status"], row["count"]) for row in written["failures"]] == [
        ("--opponent", "create", "ConnectError", 2), ("--search-opponent", "create", "ConnectError", 1)]
    assert started[0].returncode == -15
    captured = capsys.readouterr()
    assert "0/3 games finished" in captured.out and "; 3 ended by a failed request" in captured.out
    assert "requests went unanswered; the server's last output:\nTraceback: the server fell over" in captured.err


def test_failures_are_counted_by_role_first_then_opponent_request_and_status():
    from bench import play_load

    failures = [("--search-opponent", "pimc", "move", "503", "m1"),
                ("--opponent", "random", "move", "ReadTimeout", "t1"),
                ("--opponent", "random", "move", "500", "e1"), ("--opponent", "random", "move", "500", "e2")]
    counted = play_load.count_failures(failures)
    assert [(row["role"], row["status"], row["count"], row["example"]) for row in counted] == [
        ("--opponent", "500", 2, "e1"), ("--opponent", "ReadTimeout", 1, "t1"), ("--search-opponent", "503", 1, "m1")]


def test_play_load_counts_the_games_left_at_the_deadline_as_unfinished_and_exits_1(tmp_path, monkeypatch, capsys):
    from bench import play_load

    _in_process_server(monkeypatch, tmp_path, ("random",))
    _fake_server_start(monkeypatch)
    monkeypatch.setattr(play_load, "server_failure", lambda server, base, log: None)
    out = tmp_path / "load run.json"  # a space: the recorded command quotes the path
    argv = ["--games", "2", "--search-games", "0", "--opponent", "random", "--timeout", "1e-9", "--out", str(out)]
    monkeypatch.setattr(sys, "argv", ["play_load.py"] + argv)
    assert play_load.main() == 1  # the command line's arguments
    written = json.loads(out.read_text())
    assert shlex.split(written["command"]) == ["python", "-m", "bench.play_load", *argv]
    assert f"'{out}'" in written["command"]
    assert (written["games_finished"], written["games"]) == (0, 2)
    assert [(row["request"], row["count"]) for row in written["rows"]] == [("create", 2), ("all", 2)]
    assert "0/2 games finished" in capsys.readouterr().out


def test_play_load_takes_at_most_400_games_and_finds_a_free_loopback_port(tmp_path, capsys):
    import socket

    from bench import play_load

    out = ["--out", str(tmp_path / "l.json")]
    assert play_load.parse_args(["--games", "390", "--search-games", "10"] + out).games == 390
    assert play_load.parse_args(["--games", "0", "--search-games", "1"] + out).search_games == 1
    assert play_load.parse_args(["--games", "1", "--search-games", "0"] + out).games == 1
    with pytest.raises(SystemExit):
        play_load.parse_args(["--games", "391", "--search-games", "10"] + out)
    assert "at most 400 games in all, got 401" in capsys.readouterr().err
    port = play_load._free_port()
    assert 0 < port < 65536
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # free


def test_play_load_names_the_search_opponent_and_the_plot_beside_the_out_file(tmp_path, capsys):
    from bench import play_load

    (tmp_path / "l.png").mkdir()
    for arguments, message in ((["--search-opponent", "nosuch", "--out", str(tmp_path / "a.json")],
                                "--search-opponent 'nosuch'"),
                               (["--out", str(tmp_path / "l.json")], f"--out '{tmp_path / 'l.png'}': is a folder")):
        with pytest.raises(SystemExit):
            play_load.parse_args(arguments)
        assert message in capsys.readouterr().err


def test_play_load_summarises_each_kind_in_milliseconds_to_a_tenth():
    """1.0499 and 3.0499 ms, each figure just under a rounding step: median 2.0499 -> 2.0, 95th percentile
    (interpolated) 1.0499 + 0.95 * 2 = 2.9499 -> 2.9, max 3.0499 -> 3.0."""
    from bench import play_load

    figures = {"count": 2, "p50_ms": 2.0, "p95_ms": 2.9, "max_ms": 3.0}
    assert play_load.summarise({("--opponent", "x", "move"): [0.0010499, 0.0030499]}) == [
        {"role": "--opponent", "opponent": "x", "request": "move", **figures},
        {"role": "--opponent", "opponent": "x", "request": "all", **figures}]


class _Answers:
    """Stands in for httpx.get: refuses ``refusals`` connections, then answers."""

    def __init__(self, refusals):
        self.refusals, self.urls = refusals, []

    def __call__(self, url, timeout):
        import httpx

        self.urls.append((url, timeout))
        if len(self.urls) <= self.refusals:
            raise httpx.ConnectError("refused")


@pytest.mark.parametrize("refusals", [0, 3, 10_000])
def test_play_load_polls_a_starting_server_every_tenth_of_a_second_for_20_s(refusals, tmp_path, monkeypatch):
    import types

    import httpx

    from bench import play_load

    answers, sleeps = _Answers(refusals), []
    monkeypatch.setattr(httpx, "get", answers)
    monkeypatch.setattr(play_load, "time", types.SimpleNamespace(sleep=sleeps.append))
    log = tmp_path / "server.log"
    log.write_text("starting\n")
    failure = play_load.server_failure(_NoServer([]), "http://127.0.0.1:9", log)
    polls = min(refusals + 1, 200)
    assert answers.urls == [("http://127.0.0.1:9/api/agents", 1)] * polls and sleeps == [0.1] * min(refusals, 200)
    if refusals < 200:
        assert failure is None
    else:
        assert failure == "sixtysix serve did not answer at http://127.0.0.1:9 within 20 s; its last output:\nstarting"


def test_play_load_sees_a_server_that_exited_with_code_0(tmp_path, monkeypatch):
    import httpx

    from bench import play_load

    server = _NoServer([])
    server.poll, server.returncode = (lambda: 0), 0
    monkeypatch.setattr(httpx, "get", lambda url, timeout: pytest.fail("asked a server that exited"))
    (tmp_path / "server.log").write_text("bye\n")
    assert play_load.server_failure(server, "http://127.0.0.1:9", tmp_path / "server.log") == (
        "sixtysix serve exited with code 0 before it answered; its last output:\nbye")


def test_play_load_shows_the_last_15_lines_of_the_server_log(tmp_path):
    from bench import play_load

    log = tmp_path / "server.log"
    log.write_bytes(b"".join(b"line %d\n" % n for n in range(40)) + b"bad \xff byte\n")
    assert play_load._tail(log) == "\n".join([f"line {n}" for n in range(26, 40)] + ["bad \ufffd byte"])
    assert play_load._tail(log, 2) == "line 39\nbad \ufffd byte"


def test_play_load_reports_a_server_that_does_not_answer_and_writes_nothing(tmp_path, monkeypatch, capsys):
    from bench import play_load

    servers = _fake_server_start(monkeypatch)
    monkeypatch.setattr(play_load, "server_failure", lambda server, base, log: "it said no")
    assert play_load.main(["--games", "1", "--search-games", "0", "--out", str(tmp_path / "load.json")]) == 1
    assert "error: it said no" in capsys.readouterr().err
    assert servers[0].returncode == -15 and list(tmp_path.iterdir()) == []



@pytest.mark.parametrize("seed", ["-1", "92233720368547"])
def test_play_load_refuses_a_seed_whose_games_the_server_would_refuse_before_starting_it(seed, tmp_path, monkeypatch,
                                                                                         capsys):
    """The server deals from seeds 0..2^63-1: ``--seed -1`` started the server, then every game failed with a 400
    (a traceback naming the API, not the option)."""
    import subprocess

    from bench import play_load

    monkeypatch.setattr(subprocess, "Popen", lambda *args, **options: pytest.fail("the server was started"))
    with pytest.raises(SystemExit) as exit_info:
        play_load.main(["--games", "1", "--search-games", "1", "--seed", seed, "--out", str(tmp_path / "l.json")])
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and f"--seed must be 0..92233720368546, got {seed}" in error


def test_play_load_s_largest_seed_deals_games_the_server_takes(tmp_path, monkeypatch):
    import asyncio

    from bench import play_load

    _in_process_server(monkeypatch, tmp_path, ("random",))
    args = play_load.parse_args(["--games", "1", "--search-games", "1", "--opponent", "random", "--search-opponent",
                                 "random", "--seed", str(play_load.MAX_SEED), "--timeout", "1e-9",
                                 "--out", str(tmp_path / "l.json")])
    run = asyncio.run(play_load.run_load(args, "http://127.0.0.1:8000"))
    assert run.total == 2 and run.failures == []
    assert sorted(key[0] for key in run.timings) == sorted(play_load.ROLES)  # both creates answered


# ------------------------------------------------------------------------------------------ train.tune_heuristic
def _capture_search(monkeypatch, module, tuned_probe=None):
    """Replace ``module.coordinate_search`` by one that records its arguments, calls the duel once with
    ``tuned_probe`` (a candidate) against the start, and returns a result with no change kept."""
    calls = {}

    def search(names, start, duel_function, deals, sweeps, step, z, seed, test_seed, zero_steps=None):
        calls.update(names=list(names), start=np.array(start), deals=deals, sweeps=sweeps, step=step, z=z, seed=seed,
                     test_seed=test_seed, zero_steps=zero_steps)
        if tuned_probe is not None:
            calls["duel"] = duel_function(tuned_probe(np.array(start)), np.array(start), 123, 77)
        weights = dict(zip(names, map(float, start)))
        return {"weights": weights, "start": weights, "history": [],
                "test": {"deals": 4 * deals, "seed": test_seed, "margin": 0.0, "low": -0.5, "high": 0.5}}

    monkeypatch.setattr(module, "coordinate_search", search)
    return calls


def test_tune_heuristic_duels_the_whole_rollout_player_with_only_the_tuned_slots_changed(tmp_path, monkeypatch,
                                                                                         capsys):
    from agents.rollout import rollout_player_params
    from sixtysix_env.core.heuristic import TUNABLE_SLOTS
    from sixtysix_env.core.state import core_rule_bits
    from sixtysix_env.rules import Rules
    from train import tune_heuristic

    duels = []
    monkeypatch.setattr(tune_heuristic, "duel", lambda a, b, deals, seed, table, rule_bits: duels.append(
        (a.copy(), b.copy(), deals, seed, rule_bits)) or (0.25, 0.5))
    calls = _capture_search(monkeypatch, tune_heuristic, tuned_probe=lambda start: start + 1.0)
    out = tmp_path / "player.json"
    assert tune_heuristic.main(["--lead-samples", "1", "--close-samples", "3", "--endgame", "phase2",
                                "--out", str(out)]) == 0
    start = rollout_player_params(1, 3, "phase2")
    slots = list(TUNABLE_SLOTS.values())
    assert calls["names"] == list(TUNABLE_SLOTS) and np.array_equal(calls["start"], start[slots])
    # the defaults of the module's docstring and docs/strength.md (duels from seed 8001, the test on seed 9951)
    assert (calls["deals"], calls["seed"], calls["test_seed"]) == (6000, 8001, 9951)
    assert calls["zero_steps"] == tune_heuristic.ZERO_STEPS and calls["duel"] == (0.25, 0.5)
    (full_a, full_b, deals, seed, rule_bits), = duels
    assert (deals, seed, rule_bits) == (123, 77, core_rule_bits(Rules.preset("standard")))
    untuned = np.ones(len(start), dtype=bool)
    untuned[slots] = False
    assert np.array_equal(full_a[slots], start[slots] + 1.0) and np.array_equal(full_b, start)
    assert np.array_equal(full_a[untuned], start[untuned])  # samples, endgame and the rest stay the player's
    written = json.loads(out.read_text())
    assert written["settings"]["endgame"] == "phase2" and written["settings"]["lead_samples"] == 1
    assert "tuned vs start on 24000 test deals: +0.0000 [-0.5000, +0.5000]" in capsys.readouterr().out


def test_tune_heuristic_plays_the_expert_rollout_player_by_default(tmp_path, monkeypatch):
    from agents.rollout import rollout_player_params
    from sixtysix_env.core.heuristic import TUNABLE_SLOTS
    from train import tune_heuristic

    from agents.registry import make_agent

    duels = []
    monkeypatch.setattr(tune_heuristic, "duel", lambda a, b, deals, seed, table, rule_bits: duels.append(b.copy())
                        or (0.0, 1.0))
    calls = _capture_search(monkeypatch, tune_heuristic, tuned_probe=lambda start: start)
    monkeypatch.setattr(sys, "argv", ["tune_heuristic", "--out", str(tmp_path / "p.json"), "--sweeps", "1"])
    assert tune_heuristic.main() == 0  # the arguments of the command line
    assert np.array_equal(calls["start"], rollout_player_params(6, 6, "last_trick")[list(TUNABLE_SLOTS.values())])
    assert calls["sweeps"] == 1
    assert np.array_equal(duels[0], make_agent("expert")._params)  # the whole player, its sample counts too


@pytest.mark.parametrize("arguments, accepted", [(["--lead-samples", "1", "--close-samples", "1"], True),
                                                 (["--endgame", "nowhere"], False)])
def test_tune_heuristic_takes_one_sample_and_only_a_known_endgame(arguments, accepted, tmp_path, monkeypatch,
                                                                  capsys):
    from train import tune_heuristic

    _capture_search(monkeypatch, tune_heuristic)
    argv = arguments + ["--out", str(tmp_path / "p.json")]
    if accepted:
        assert tune_heuristic.main(argv) == 0
    else:
        with pytest.raises(SystemExit) as exit_info:
            tune_heuristic.main(argv)
        error = capsys.readouterr().err
        assert exit_info.value.code == 2 and "python -m train.tune_heuristic: error: argument --endgame" in error


class _CountingTable:
    """A stand-in for the solver's table: its arrays, and the worlds claimed."""

    entries, nodes = np.zeros((1, 4), dtype=np.int64), np.zeros(1, dtype=np.int64)

    def __init__(self):
        self.claimed = []

    def claim_worlds(self, count):
        self.claimed.append(count)
        return 1000 + count


MARGINS = np.array([3.0, -1.0, 0.0, 2.0, 1.0])  # mean 1, sample variance (4 + 4 + 1 + 1 + 0) / 4 = 2.5


def test_a_heuristic_duel_is_the_mean_margin_and_its_standard_error_from_the_sample_variance(monkeypatch):
    import sixtysix_env.core.heuristic as heuristic
    from train.tune_heuristic import duel

    seen = []

    def fake_duel(params_a, params_b, deals, seed, rule_bits, entries, nodes, first_world, margins):
        seen.append((deals, seed, rule_bits, first_world, params_a[0], params_b[0]))
        margins[:] = MARGINS

    monkeypatch.setattr(heuristic, "heuristic_duel", fake_duel)
    table = _CountingTable()
    mean, error = duel(np.array([7.0]), np.array([8.0]), 5, 41, table, 3)
    assert mean == pytest.approx(1.0) and error == pytest.approx(math.sqrt(2.5 / 5))
    assert seen == [(5, 41, 3, 1005, 7.0, 8.0)] and table.claimed == [5]  # a world number for each deal


def test_a_playout_policy_duel_is_the_mean_margin_and_its_standard_error_under_the_standard_rules(monkeypatch):
    import sixtysix_env.core.policy as policy
    from sixtysix_env.core.state import core_rule_bits
    from sixtysix_env.rules import Rules
    from train.tune_playout_policy import duel

    seen = []

    def fake_duel(candidate, baseline, deals, seed, rule_bits, entries, nodes, margins):
        seen.append((deals, seed, rule_bits, candidate[0], baseline[0]))
        margins[:] = MARGINS

    monkeypatch.setattr(policy, "policy_duel", fake_duel)
    mean, error = duel(np.array([7.0]), np.array([8.0]), 5, 41, _CountingTable())
    assert mean == pytest.approx(1.0) and error == pytest.approx(math.sqrt(2.5 / 5))
    assert seen == [(5, 41, core_rule_bits(Rules.preset("standard")), 7.0, 8.0)]


# ------------------------------------------------------------------------------------------ train.tune_playout_policy
def test_the_coordinate_search_moves_a_zero_entry_by_its_zero_step_and_gives_each_duel_its_own_seed():
    """A zero cannot be scaled: it is tried at +step then -step (its ``zero_steps`` entry, else ZERO_STEP); the
    duels run on the seeds ``seed``, ``seed + 1``, ... in order, and the test on ``4 * deals`` of ``test_seed``."""
    from train.tune_playout_policy import ZERO_STEP, coordinate_search

    duels = []

    def duel_function(candidate, current, deals, seed):
        duels.append((candidate.tolist(), current.tolist(), deals, seed))
        return -1.0, 0.5  # every change loses: nothing is kept

    result = coordinate_search(["a", "b", "c"], np.array([0.0, 0.0, 4.0]), duel_function, deals=100, sweeps=1,
                               step=0.25, z=2.0, seed=40, test_seed=7, zero_steps={"b": 0.1})
    start = [0.0, 0.0, 4.0]
    assert duels == [([ZERO_STEP, 0.0, 4.0], start, 100, 40), ([-ZERO_STEP, 0.0, 4.0], start, 100, 41),
                     ([0.0, 0.1, 4.0], start, 100, 42), ([0.0, -0.1, 4.0], start, 100, 43),
                     ([0.0, 0.0, 5.0], start, 100, 44), ([0.0, 0.0, 3.0], start, 100, 45),
                     (start, start, 400, 7)]
    assert result["weights"] == {"a": 0.0, "b": 0.0, "c": 4.0}
    assert result["history"][3] == {"sweep": 0, "weight": "b", "from": 0.0, "to": -0.1, "margin": -1.0, "se": 0.5,
                                    "kept": False}
    assert result["test"]["deals"] == 400 and result["test"]["seed"] == 7 and result["test"]["margin"] == -1.0
    time.strptime(result["finished"], "%Y-%m-%d %H:%M:%S")
    duels.clear()  # without zero steps of its own, every zero is tried at ZERO_STEP
    coordinate_search(["a"], np.array([0.0]), duel_function, deals=100, sweeps=1, step=0.25, z=2.0, seed=0, test_seed=7)
    assert [candidate for candidate, _, _, _ in duels] == [[ZERO_STEP], [-ZERO_STEP], [0.0]]


def test_the_search_test_interval_takes_students_t_of_its_test_deals_less_one():
    """Four test deals (deals=1): 3 degrees of freedom, t = 3.182446 (the two-sided 95 % table value)."""
    from train.tune_playout_policy import coordinate_search

    result = coordinate_search(["a"], np.array([1.0]), lambda candidate, current, deals, seed: (0.5, 1.0), deals=1,
                               sweeps=1, step=0.5, z=3.0, seed=0, test_seed=9)
    test = result["test"]
    assert test["deals"] == 4 and test["high"] - test["margin"] == pytest.approx(3.182446, abs=1e-6)
    assert test["margin"] - test["low"] == pytest.approx(3.182446, abs=1e-6)


def test_the_coordinate_search_keeps_a_change_only_above_z_errors_and_duels_the_next_against_it():
    from train.tune_playout_policy import coordinate_search

    margins = iter([1.0, 1.0 + 1e-9, -5.0, 3.0])  # one exactly z * se (not kept), then one just above (kept)
    duels = []

    def duel_function(candidate, current, deals, seed):
        duels.append((candidate.tolist(), current.tolist()))
        return next(margins, 0.0), 0.5

    result = coordinate_search(["a", "b"], np.array([2.0, 8.0]), duel_function, deals=100, sweeps=2, step=0.5,
                               z=2.0, seed=0, test_seed=99)
    assert [entry["kept"] for entry in result["history"]] == [False, True, False, True, False, False, False, False]
    # a kept change (a: 2 -> 1) is the current values of every later duel; b: 8 -> 12 kept in its turn
    assert duels[2] == ([1.0, 12.0], [1.0, 8.0]) and duels[3] == ([1.0, 4.0], [1.0, 8.0])
    assert duels[4] == ([1.5, 4.0], [1.0, 4.0]) and [entry["sweep"] for entry in result["history"]] == [0] * 4 + [1] * 4
    assert result["weights"] == {"a": 1.0, "b": 4.0} and result["start"] == {"a": 2.0, "b": 8.0}
    assert duels[-1] == ([1.0, 4.0], [2.0, 8.0])  # the test: the final values against the start


def test_save_and_report_writes_the_settings_and_prints_only_the_changes_kept(tmp_path, capsys):
    import argparse

    from train.tune_playout_policy import save_and_report

    out = tmp_path / "w.json"
    args = argparse.Namespace(out=str(out), deals=100)
    history = [{"weight": "a", "from": 2.0, "to": 2.5, "margin": 0.125, "se": 0.03, "kept": True},
               {"weight": "b", "from": 1.0, "to": 0.75, "margin": -0.5, "se": 0.25, "kept": False}]
    save_and_report({"history": history, "test": {"deals": 400, "margin": 0.0625, "low": -0.01, "high": 0.135}},
                    args)
    assert json.loads(out.read_text())["settings"] == {"out": str(out), "deals": 100}
    assert capsys.readouterr().out.splitlines() == ["tuned vs start on 400 test deals: +0.0625 [-0.0100, +0.1350]",
                                                    "  a: 2 -> 2.5 (+0.1250 ± 0.0300)"]


def test_tune_playout_policy_tunes_the_pimc_weights_on_the_documented_seeds(tmp_path, monkeypatch):
    from agents.pimc import policy_weights
    from sixtysix_env.core.policy import WEIGHT_NAMES
    from train import tune_playout_policy

    duels = []
    monkeypatch.setattr(tune_playout_policy, "duel", lambda a, b, deals, seed, table: duels.append(
        (a.copy(), b.copy(), deals, seed)) or (0.0, 1.0))
    calls = _capture_search(monkeypatch, tune_playout_policy, tuned_probe=lambda start: start * 2)
    assert tune_playout_policy.main(["--out", str(tmp_path / "w.json")]) == 0
    assert calls["names"] == list(WEIGHT_NAMES) and np.array_equal(calls["start"], policy_weights())
    # the module docstring's run: 10,000 deals a duel, two sweeps
    assert (calls["deals"], calls["sweeps"], calls["step"], calls["z"]) == (10_000, 2, 0.25, 2.5)
    assert calls["zero_steps"] is None and calls["test_seed"] > calls["seed"] + 4 * len(WEIGHT_NAMES) - 1
    (a, b, deals, seed), = duels
    assert np.array_equal(a, policy_weights() * 2) and np.array_equal(b, policy_weights())
    assert (deals, seed) == (123, 77)


@pytest.mark.parametrize("arguments, message", [
    (["--deals", "99"], "--deals must be at least 100"), (["--sweeps", "0"], "--sweeps at least 1"),
    (["--step", "0"], "--step between 0 and 1"), (["--step", "1"], "--step between 0 and 1"),
    (["--z", "-0.5"], "--z must be 0 or more"), (["--step", "inf"], "--step"),
    (["--seed", "10", "--test-seed", "41", "--sweeps", "1"], "--test-seed 41 is one of the tuning seeds 10..41"),
    (["--deals", "100", "--step", "0.999", "--z", "0", "--seed", "10", "--test-seed", "42", "--sweeps", "1"], None),
])
def test_the_search_options_are_checked_at_their_bounds(arguments, message, tmp_path, monkeypatch, capsys):
    """16 weights and one sweep tune on 32 seeds: 10..41 with --seed 10."""
    from train import tune_playout_policy

    calls = _capture_search(monkeypatch, tune_playout_policy)
    argv = arguments + ["--out", str(tmp_path / "w.json")]
    if message is None:
        assert tune_playout_policy.main(argv) == 0 and calls["deals"] == 100
        return
    with pytest.raises(SystemExit) as exit_info:
        tune_playout_policy.main(argv)
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in error and not calls
    assert "python -m train.tune_playout_policy: error: " in error


@pytest.mark.parametrize("tool, weights", [("tune_playout_policy", 16), ("tune_heuristic", 24)])
def test_the_search_seeds_must_be_64_bit_integers_up_to_the_last_duel(tool, weights, tmp_path, monkeypatch, capsys):
    """The duels' kernels take 64-bit seeds (``seed + number`` for duel ``number``): ``--seed 2**63 - 8`` ran its
    first duels, then failed with an OverflowError. One sweep tunes on ``2 * weights`` seeds."""
    import importlib

    module = importlib.import_module(f"train.{tool}")
    calls = _capture_search(monkeypatch, module)
    out = ["--out", str(tmp_path / "w.json"), "--sweeps", "1"]
    top = 2**63 - 2 * weights  # its last tuning seed is 2**63 - 1
    assert module.main(["--seed", str(top), "--test-seed", str(-2**63)] + out) == 0 and calls["seed"] == top
    assert module.main(["--seed", str(-2**63), "--test-seed", str(2**63 - 1)] + out) == 0
    for seeds, message in ((["--seed", str(top + 1)], f"--seed {top + 1}: its tuning seeds {top + 1}..{2**63} "),
                           (["--seed", str(-2**63 - 1)], f"--seed {-2**63 - 1}: its tuning seeds"),
                           (["--test-seed", str(-2**63 - 1)], f"got {-2**63 - 1}"),
                           (["--test-seed", str(2**63)], f"--test-seed must be a 64-bit integer, -2**63 to 2**63 - 1, "
                                                         f"got {2**63}")):
        calls.clear()
        with pytest.raises(SystemExit) as exit_info:
            module.main(seeds + out)
        assert exit_info.value.code == 2 and message in capsys.readouterr().err and not calls

def test_tune_playout_policy_needs_an_out_file(monkeypatch, capsys):
    from train import tune_playout_policy

    calls = _capture_search(monkeypatch, tune_playout_policy)
    with pytest.raises(SystemExit):
        tune_playout_policy.main([])
    assert "the following arguments are required: --out" in capsys.readouterr().err and not calls


# ------------------------------------------------------------------------------------------ train.cli, train.cpu
class _FakeTrainer:
    """Stands in for train.selfplay.Trainer: records how a run was started, trains at once."""

    started: list = []

    def __init__(self, run_dir):
        self.run_dir = Path(run_dir)

    @classmethod
    def resume_run(cls, run_dir, overrides, quiet=False):
        cls.started.append(("resume", run_dir, list(overrides), quiet))
        return cls(run_dir)

    @classmethod
    def new_run(cls, config, quiet=False):
        cls.started.append(("new", config.run.name, config.ppo.learning_rate, quiet))
        return cls(Path("runs") / config.run.name)

    def train(self):
        return self.run_dir / "final.zip"


@pytest.fixture
def fake_trainer(monkeypatch):
    import types

    module = types.ModuleType("train.selfplay")
    module.Trainer = _FakeTrainer
    monkeypatch.setitem(sys.modules, "train.selfplay", module)
    monkeypatch.setattr(_FakeTrainer, "started", [])
    return _FakeTrainer.started


def test_cli_train_resumes_a_run_with_its_overrides_and_prints_where_the_model_and_logs_are(fake_trainer, tmp_path,
                                                                                           capsys):
    from train.cli import main

    assert main(["--resume", str(tmp_path / "run"), "--set", "run.total_steps=10", "--set", "ppo.n_steps=64",
                 "--quiet"]) == 0
    assert fake_trainer == [("resume", tmp_path / "run", ["run.total_steps=10", "ppo.n_steps=64"], True)]
    assert capsys.readouterr().out.splitlines() == [f"final model: {tmp_path / 'run' / 'final.zip'}",
                                                    f"TensorBoard: tensorboard --logdir {tmp_path / 'run' / 'tb'}"]


def test_cli_train_starts_a_new_run_from_its_config_with_the_overrides_applied(fake_trainer, tmp_path, capsys):
    from train.cli import main

    config = tmp_path / "c.yaml"
    config.write_text("run: {name: tiny}\n")
    assert main(["--config", str(config), "--set", "ppo.learning_rate=0.125", "--quiet"]) == 0
    assert fake_trainer == [("new", "tiny", 0.125, True)]
    assert "final model: " + str(Path("runs") / "tiny" / "final.zip") in capsys.readouterr().out


def test_cli_train_needs_one_source_and_describes_without_training(fake_trainer, tmp_path, capsys, monkeypatch):
    from train.cli import main

    assert main([]) == 2
    assert "give --config FILE, --resume RUN_DIR or --describe" in capsys.readouterr().err
    assert main(["--resume", str(tmp_path)]) == 0 and fake_trainer == [("resume", tmp_path, [], False)]
    fake_trainer.clear()
    monkeypatch.setattr(sys, "argv", ["sixtysix-train", "--describe"])
    assert main() == 0  # the command line's arguments
    described = capsys.readouterr().out
    assert "learning_rate" in described and "total_steps" in described and fake_trainer == []
    with pytest.raises(SystemExit) as exit_info:
        main(["--describe", "--resume", str(tmp_path)])
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and "sixtysix train: error: " in error and "not allowed with argument" in error


def test_denormals_are_flushed_again_after_a_block_that_raised():
    """The flag is cleared on the way out of a block that raised too, and set afresh by the next block."""
    import torch

    from train.cpu import denormals_flushed

    tiny = torch.tensor([1e-40], dtype=torch.float32)
    with pytest.raises(KeyError):
        with denormals_flushed():
            assert (tiny * 1.0).item() == 0.0
            raise KeyError("out")
    assert (tiny * 1.0).item() > 0.0
    with denormals_flushed():
        assert (tiny * 1.0).item() == 0.0
    assert (tiny * 1.0).item() > 0.0


def test_denormals_stay_flushed_to_the_end_of_the_outermost_block():
    """An inner block (a fit inside a training run) ending, or raising, leaves the outer block flushing; the flag
    goes off when the outermost block ends. It was turned off by the inner block's end."""
    import torch

    from train.cpu import denormals_flushed

    tiny = torch.tensor([1e-40], dtype=torch.float32)
    with denormals_flushed():
        with denormals_flushed():
            assert (tiny * 1.0).item() == 0.0
        assert (tiny * 1.0).item() == 0.0
        with pytest.raises(KeyError):
            with denormals_flushed():
                raise KeyError("inner")
        assert (tiny * 1.0).item() == 0.0
    assert (tiny * 1.0).item() > 0.0


# ------------------------------------------------------------------------------------------ bench.peers
class _SteppingClock(FakeClock):
    """A clock that moves on by ``step`` seconds at each call of ``run_steps``."""

    def __init__(self, step):
        super().__init__()
        self.step = step
        self.calls = []

    def run_steps(self, count):
        self.calls.append(count)
        self.now += self.step


def test_a_peer_rate_warms_up_for_a_tenth_of_its_seconds_then_counts_steps_per_second_of_whole_chunks(monkeypatch):
    from bench import peers

    clock = _SteppingClock(0.125)
    monkeypatch.setattr(peers, "time", clock)
    # warm-up: 0.1 s (a tenth of 1 s, under the 0.2 s cap) is one chunk; then 8 chunks of 64 steps fill 1 s
    assert peers._rate(clock.run_steps, 1.0) == 8 * peers.STEPS_BETWEEN_CLOCK_READS / 1.0
    assert clock.calls == [peers.STEPS_BETWEEN_CLOCK_READS] * 9
    clock.calls.clear()
    # 10 s: the warm-up is capped at 0.2 s, two chunks of 0.125 s
    assert peers._rate(clock.run_steps, 10.0) == 80 * 64 / 10.0 and len(clock.calls) == 2 + 80
    assert peers._run_for(clock.run_steps, 0.0) == (64, 0.125)  # at least one chunk, timed


def test_a_missing_peer_warns_at_the_caller_of_the_measurement_and_measures_nothing(monkeypatch):
    from bench import peers

    monkeypatch.setattr(peers, "_import_pyspiel", lambda: (None, "open_spiel not importable (test)"))
    monkeypatch.setattr(peers, "_rate", lambda run, seconds: pytest.fail("measured without a peer"))
    for measure in (peers.openspiel_euchre_steps_per_second, peers.openspiel_euchre_decisions_per_second):
        with pytest.warns(RuntimeWarning, match=r"^benchmark peer open_spiel not importable \(test\)$") as caught:
            assert measure(0.01) is None
        assert caught[0].filename == __file__  # the line that asked for the figure, not bench/peers.py
    assert peers.openspiel_euchre_tensor_kind() is None
    assert peers._package_version("no-such-distribution-sixtysix") is None
    assert peers._package_version("numpy") == np.__version__


class _EuchreState:
    """A game of a chance step (outcome 1 of 0 and 1, with probability 1) and three decisions of players 0, 1, 0."""

    def __init__(self, log):
        self.log, self.moves = log, []

    def is_terminal(self):
        return len(self.moves) == 4

    def is_chance_node(self):
        return not self.moves

    def chance_outcomes(self):
        return [(0, 0.0), (1, 1.0)]

    def current_player(self):
        return (len(self.moves) - 1) % 2

    def legal_actions(self):
        return [10, 11, 12]

    def observation_tensor(self, player):
        self.log.append(("observation", player))

    def information_state_tensor(self, player):
        self.log.append(("information", player))

    def apply_action(self, action):
        assert action in ((1,) if self.is_chance_node() else (10, 11, 12)), action
        self.moves.append(action)
        self.log.append(("apply", action))


def _fake_pyspiel(observation=True, information=True):
    import types

    log = []
    game_type = types.SimpleNamespace(provides_observation_tensor=observation,
                                      provides_information_state_tensor=information)
    game = types.SimpleNamespace(get_type=lambda: game_type, new_initial_state=lambda: _EuchreState(log))
    module = types.SimpleNamespace(load_game=lambda name: game if name == "euchre" else pytest.fail(name), log=log)
    return module


def test_euchre_play_counts_decisions_not_chance_steps_and_reads_the_tensor_of_the_player_to_move():
    from bench import peers

    pyspiel = _fake_pyspiel()
    run = peers._euchre_random_play(pyspiel, 5, "information_state_tensor")
    run(5)  # a game's three decisions, a new game (its deal not counted) and two of its decisions
    log = pyspiel.log
    assert [entry for entry in log if entry[0] == "information"] == [("information", p) for p in (0, 1, 0, 0, 1)]
    assert [entry[1] for entry in log if entry[0] == "apply"][0] == 1 and len(log) == 2 * 5 + 2
    assert [entry[1] == 1 for entry in log if entry[0] == "apply"] == [True, False, False, False, True, False, False]
    bare = _fake_pyspiel()
    peers._euchre_random_play(bare, 5, None)(3)
    assert [entry[0] for entry in bare.log] == ["apply"] * 4


@pytest.mark.parametrize("observation, information, kind", [(True, True, "observation_tensor"),
                                                            (False, True, "information_state_tensor"),
                                                            (False, False, None)])
def test_euchre_tensor_kind_and_inventory_follow_what_the_game_provides(observation, information, kind,
                                                                        monkeypatch):
    from bench import peers

    pyspiel = _fake_pyspiel(observation, information)
    monkeypatch.setattr(peers, "_import_pyspiel", lambda: (pyspiel, ""))
    monkeypatch.setattr(peers, "_package_version", lambda name: {"open_spiel": "9.1"}.get(name))
    assert peers.openspiel_euchre_tensor_kind() == kind
    assert peers.available_peers()["openspiel_euchre"] == f"open_spiel 9.1 (euchre {kind})"
    measured = []
    monkeypatch.setattr(peers, "_rate", lambda run, seconds: measured.append(seconds) or 42.0)
    assert peers.openspiel_euchre_steps_per_second(0.5) == 42.0 == peers.openspiel_euchre_decisions_per_second(0.25)
    assert measured == [0.5, 0.25]
    monkeypatch.setattr(peers, "_rate", lambda run, seconds: run(1))
    peers.openspiel_euchre_decisions_per_second(0.5)
    assert [entry[0] for entry in pyspiel.log] == ["apply", "apply"]  # the deal and a decision, no tensor
    if kind is not None:  # the steps measurement reads that tensor
        peers.openspiel_euchre_steps_per_second(0.5)
        assert (kind.split("_")[0], 0) in pyspiel.log


def test_open_spiel_is_the_pyspiel_module_and_a_broken_one_is_reported_with_its_error(monkeypatch):
    import types

    from bench import peers

    pyspiel = types.ModuleType("pyspiel")
    monkeypatch.setitem(sys.modules, "pyspiel", pyspiel)
    assert peers._import_pyspiel() == (pyspiel, "")
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # importing it fails
    module, reason = peers._import_pyspiel()
    assert module is None and reason.startswith("open_spiel not importable (ModuleNotFoundError: ")
    assert "pyspiel" in reason

@pytest.fixture
def fake_classic(tmp_path, monkeypatch):
    """A ``pettingzoo.classic`` package of its own: foo_v1, foo_v3, foofoo_v7, broken_v2 (raises on import)."""
    import types

    folder = tmp_path / "classic_envs"
    folder.mkdir()
    for name in ("foo_v1", "foo_v3", "foofoo_v7"):
        (folder / f"{name}.py").write_text(f"NAME = {name!r}\n")
    (folder / "broken_v2.py").write_text("raise ValueError('needs rlcard')\n")
    package = types.ModuleType("pettingzoo.classic")
    package.__path__ = [str(folder)]
    monkeypatch.setitem(sys.modules, "pettingzoo.classic", package)
    for name in ("foo_v1", "foo_v3", "foofoo_v7", "broken_v2"):
        monkeypatch.delitem(sys.modules, f"pettingzoo.classic.{name}", raising=False)
    return folder


@pytest.mark.parametrize("asked, found", [("foo", "foo_v3"), ("foo_v1", "foo_v1"), ("foo_v3", "foo_v3"),
                                          ("foo_v2", "foo_v3"), ("foofoo", "foofoo_v7")])
def test_a_classic_env_name_resolves_to_its_own_version_else_the_highest_installed(asked, found, fake_classic):
    from bench import peers

    module, reason = peers._import_classic_env(asked)
    assert (module.NAME, reason) == (found, "")


def test_a_classic_env_that_is_missing_or_fails_to_import_is_reported_with_why(fake_classic, monkeypatch):
    from bench import peers

    monkeypatch.setattr(peers, "_package_version", lambda name: {"pettingzoo": "1.99"}.get(name))
    assert peers._import_classic_env("bar_v1") == (None, "pettingzoo 1.99 has no classic env bar_vN")
    assert peers._import_classic_env("gin_rummy_v4") == (
        None, "pettingzoo 1.99 has no classic env gin_rummy_vN (gin_rummy_v4 was last shipped in pettingzoo 1.26.0)")
    assert peers._import_classic_env("broken") == (
        None, "pettingzoo.classic.broken_v2 not importable (ValueError: needs rlcard)")
    monkeypatch.setitem(sys.modules, "pettingzoo.classic", None)  # an import that fails
    module, reason = peers._import_classic_env("foo")
    assert module is None and reason.startswith("pettingzoo not importable (ModuleNotFoundError: ")
    with pytest.warns(RuntimeWarning, match="benchmark peer pettingzoo not importable"):
        assert peers.pettingzoo_classic_steps_per_second("foo", 0.01) is None


def test_a_classic_env_is_measured_by_its_random_play_at_the_seed_asked(fake_classic, monkeypatch):
    from bench import peers

    monkeypatch.setattr(peers, "_aec_random_play", lambda module, seed: (module.NAME, seed))
    monkeypatch.setattr(peers, "_rate", lambda run, seconds: (run, seconds))
    assert peers.pettingzoo_classic_steps_per_second("foo_v1", 0.5, seed=4) == (("foo_v1", 4), 0.5)


def test_the_inventory_names_the_installed_classic_env_and_the_versions(monkeypatch):
    import types

    from bench import peers

    monkeypatch.setattr(peers, "_import_pyspiel", lambda: (None, "open_spiel not importable (test)"))
    monkeypatch.setattr(peers, "_import_classic_env", lambda env_name: (
        types.SimpleNamespace(__name__="pettingzoo.classic." + env_name.replace("_v4", "_v5")), "")
        if env_name.startswith("leduc") else (None, f"no {env_name}"))
    monkeypatch.setattr(peers, "_package_version", {"pettingzoo": "1.2", "rlcard": "3.4"}.get)
    assert peers.available_peers() == {
        "openspiel_euchre": "unavailable: open_spiel not importable (test)",
        "pettingzoo_leduc_holdem": "pettingzoo 1.2 leduc_holdem_v5, rlcard 3.4",
        "pettingzoo_texas_holdem": "unavailable: no texas_holdem_v4"}


class _AecEnv:
    """Two agents, hands of three steps each: 'a' then 'b' act on masks with one legal action (index 2 for 'a', 0
    and 3 for 'b'); then each agent steps once more with a terminated observation (action None)."""

    def __init__(self, log):
        self.log = log

    def reset(self, seed=None):
        self.log.append(("reset", seed))
        self.queue = ["a", "b"] * 3 + ["a", "b"]
        self.count = 0

    def agent_iter(self):
        while self.queue:
            self.agent = self.queue.pop(0)
            yield self.agent

    def last(self):
        done = self.count >= 6
        mask = np.array([0, 0, 1, 0], dtype=np.int8) if self.agent == "a" else np.array([1, 0, 0, 1], dtype=np.int8)
        return {"action_mask": mask}, 0.0, done, False, {}

    def step(self, action):
        self.log.append((self.agent, action))
        self.count += 1


def test_an_aec_peer_plays_masked_actions_steps_finished_agents_with_none_and_resets_when_all_are_done():
    import types

    from bench import peers

    log = []
    env_module = types.SimpleNamespace(env=lambda: _AecEnv(log))
    run = peers._aec_random_play(env_module, 9)
    run(10)
    assert log[0] == ("reset", 9) and log[9] == ("reset", None)
    steps = [entry for entry in log if entry[0] != "reset"]
    assert len(steps) == 10
    assert [action for agent, action in steps[:6] if agent == "a"] == [2, 2, 2]
    assert all(action in (0, 3) for agent, action in steps[:6] if agent == "b")
    assert steps[6:8] == [("a", None), ("b", None)] and steps[8][1] == 2  # the next hand


# ------------------------------------------------------------------------------------------ bench.run
@pytest.fixture
def fixed_rates(monkeypatch):
    """Every measurement of ``sixtysix bench`` replaced by a fixed rate; each call is recorded (name, arguments)."""
    import types

    import sixtysix_env
    from bench import core_bench, peers
    from bench import run as bench_run
    from sixtysix_env import Rules

    calls = []

    def engine(seconds, rules=None):
        calls.append(("engine", seconds, rules))
        return 250.0 if rules == Rules.preset("three") else 1000.0

    def aec(seconds, rules="standard", wrapped=True, observe_with_core=None):
        calls.append(("aec", seconds, rules, wrapped, observe_with_core))
        if rules == "three":
            return 50.0
        return 100.0 if observe_with_core is False else 400.0 if wrapped else 800.0

    monkeypatch.setattr(bench_run, "engine_decisions_per_second", engine)
    monkeypatch.setattr(bench_run, "aec_steps_per_second", aec)
    monkeypatch.setattr(bench_run, "pure_python_engine_decisions_per_second",
                        lambda seconds, rules: calls.append(("pure", seconds, rules)) or 500.0)
    monkeypatch.setattr(core_bench, "core_playout_decisions_per_second",
                        lambda seconds, rules=None: calls.append(("core", seconds, rules)) or 20_000.0)
    monkeypatch.setattr(core_bench, "solve_and_search_figures", lambda positions: {
        "phase2_solve_ms": lambda: calls.append(("figure", positions)) or {"median": 1.5, "p95": 2.0, "runs": [1, 2]}})
    vector = types.SimpleNamespace(vector_env_steps_per_s=lambda **options: calls.append(("vector", options)) or 7000.0)
    monkeypatch.setattr(bench_run, "_optional_vector_bench", lambda: vector)
    monkeypatch.setattr(peers, "peer_measurements", lambda seconds: {
        "OpenSpiel euchre decisions/s (bare)": lambda: 125.0, "PettingZoo foo AEC steps/s": lambda: 160.0,
        "OpenSpiel missing steps/s": lambda: None})
    monkeypatch.setattr(peers, "available_peers", lambda: {"openspiel_euchre": "open_spiel 1 (euchre x)",
                                                           "pettingzoo_foo": "unavailable: no foo"})
    monkeypatch.setattr(sixtysix_env, "ENGINE_BACKEND", "python")
    return calls


def test_bench_compares_each_peer_with_our_engine_or_env_and_writes_the_summary(fixed_rates, tmp_path, capsys):
    from bench import run as bench_run
    from sixtysix_env import Rules

    out = tmp_path / "bench.json"
    assert bench_run.main(["--seconds", "0.5", "--repeats", "2", "--rules", "scharf", "--json", str(out)]) == 0
    written = json.loads(out.read_text())
    # a peer's decisions against our engine's decisions, its env steps against our env's steps
    assert written["ratios"] == {"OpenSpiel euchre decisions/s (bare)": 1000 / 125,
                                 "PettingZoo foo AEC steps/s": 400 / 160,
                                 "two-player / three-player engine (both pure Python)": 1000 / 250}
    assert {key: written[key] for key in ("engine_decisions_per_s", "aec_steps_per_s", "core_playout_decisions_per_s",
                                          "vector_env_steps_per_s", "core_playouts_per_engine",
                                          "aec_speedup_from_core_observations", "core_figures_rules")} == {
        "engine_decisions_per_s": 1000.0, "aec_steps_per_s": 400.0, "core_playout_decisions_per_s": 20_000.0,
        "vector_env_steps_per_s": 7000.0, "core_playouts_per_engine": 20.0, "aec_speedup_from_core_observations": 4.0,
        "core_figures_rules": "standard"}
    assert written["phase2_solve_ms"] == {"median": 1.5, "p95": 2.0, "runs": [1, 2]}
    assert written["results"]["sixtysix AEC steps/s (raw_env)"] == {"median": 800.0, "runs": [800.0, 800.0]}
    assert written["results"]["OpenSpiel missing steps/s"] == {"median": None, "runs": []}
    assert (written["seconds"], written["repeats"], written["rules"], written["engine_backend"]) == (
        0.5, 2, "scharf", "python")
    assert written["peers"] == {"openspiel_euchre": "open_spiel 1 (euchre x)", "pettingzoo_foo": "unavailable: no foo"}
    # every measurement: one warm-up and two timed runs, of --seconds under --rules (the three-player ones aside)
    engine_calls = [call for call in fixed_rates if call[0] == "engine"]
    assert engine_calls == [("engine", 0.5, Rules.preset("scharf"))] * 3 + [("engine", 0.5, Rules.preset("three"))] * 3
    assert fixed_rates.count(("aec", 0.5, "scharf", False, None)) == 3 and ("core", 0.5, Rules.preset("scharf")) in \
        fixed_rates
    assert ("vector", {"num_envs": 1024, "seconds": 0.5, "repeats": 1, "rules": "scharf"}) in fixed_rates
    assert ("figure", 300) in fixed_rates and not [call for call in fixed_rates if call[0] == "pure"]
    printed = capsys.readouterr().out
    assert "median of 2 x 0.5 s" in printed and printed.splitlines()[1].endswith("engine backend: python")
    assert written["results"]["sixtysix three-player AEC steps/s (env, wrapped)"]["median"] == 50.0
    assert "  ratio ours / OpenSpiel euchre decisions/s (bare): 8.00x" in printed
    assert "two-player / three-player engine decisions/s, both pure Python: 4.00x" in printed
    assert "core playouts / engine: 20.0x" in printed and "AEC env, core / Python observations: 4.00x" in printed
    assert "core figures below are measured under the standard rules" in printed
    assert "  phase2_solve_ms: median 1.5, p95 2\n" in printed
    assert "  peer pettingzoo_foo: unavailable: no foo" in printed and printed.count(bench_run.PEERS_INSTALL) == 1
    assert "OpenSpiel missing steps/s" in printed and "n/a" in printed


def test_bench_with_the_compiled_engine_also_times_the_pure_python_one_and_compares_three_players_with_it(
        fixed_rates, monkeypatch, tmp_path, capsys):
    import sixtysix_env
    from bench import run as bench_run

    monkeypatch.setattr(sixtysix_env, "ENGINE_BACKEND", "compiled")
    out = tmp_path / "bench.json"
    assert bench_run.main(["--seconds", "0.25", "--repeats", "1", "--no-core", "--no-peers", "--json", str(out)]) == 0
    written = json.loads(out.read_text())
    assert fixed_rates.count(("pure", 0.25, "standard")) == 2
    assert written["ratios"] == {"two-player / three-player engine (both pure Python)": 500 / 250}
    assert written["peers"] == {} and written["core_playout_decisions_per_s"] is None
    assert "core_playouts_per_engine" not in written and "phase2_solve_ms" not in written
    assert not [call for call in fixed_rates if call[0] in ("core", "vector", "figure")]
    printed = capsys.readouterr().out
    assert "(mypyc build of sixtysix_env/game.py" in printed and bench_run.PEERS_INSTALL not in printed
    assert "standard rules" not in printed


@pytest.mark.parametrize("arguments, message", [(["--seconds", "0"], "--seconds must be positive, got 0"),
                                                (["--repeats", "0"], "--repeats must be at least 1, got 0"),
                                                (["--rules", "three"], "--rules must be a two-player preset")])
def test_bench_refuses_bad_options_before_measuring(arguments, message, fixed_rates, capsys):
    from bench import run as bench_run

    with pytest.raises(SystemExit) as exit_info:
        bench_run.main(arguments)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err and fixed_rates == []


def test_a_median_of_repeats_is_none_as_soon_as_a_repeat_measures_nothing():
    from bench.run import _median_of

    values = iter([5.0, 1.0, None, 3.0])
    assert _median_of(lambda: next(values), 3) == (None, [])
    values = iter([5.0, 1.0, 4.0, 3.0, 2.0])
    assert _median_of(lambda: next(values), 4) == (2.5, [1.0, 4.0, 3.0, 2.0])
    values = iter([None, 1.0])  # nothing measured at the warm-up: no repeats
    assert _median_of(lambda: next(values), 1) == (None, []) and next(values) == 1.0


def test_bench_defaults_are_the_docstrings_five_repeats_of_two_seconds_under_the_standard_rules(fixed_rates, capsys):
    """``sixtysix bench [--seconds 2] [--repeats 5] [--rules standard]`` (bench/run.py's docstring)."""
    from bench import run as bench_run
    from sixtysix_env import Rules

    assert bench_run.main(["--no-core", "--no-peers"]) == 0
    assert [call for call in fixed_rates if call[0] == "engine" and call[2] != Rules.preset("three")] == [
        ("engine", 2.0, Rules.preset("standard"))] * 6
    assert "median of 5 x 2 s" in capsys.readouterr().out
    assert bench_run.main(["--repeats", "1", "--no-peers"]) == 0  # the core's figures are of these rules
    printed = capsys.readouterr().out
    assert "core playouts / engine: 20.0x" in printed and "measured under the standard rules" not in printed


def test_bench_finds_the_vector_bench_and_goes_without_it_when_it_is_missing(monkeypatch):
    from bench import run as bench_run
    from bench import vector_bench

    assert bench_run._optional_vector_bench() is vector_bench
    monkeypatch.setitem(sys.modules, "bench.vector_bench", None)  # its import fails
    monkeypatch.delattr(sys.modules["bench"], "vector_bench")
    assert bench_run._optional_vector_bench() is None


class _CountedGame:
    """A dealt game whose moves are counted (bench.run's engine loop sees only these three members)."""

    moves = 0

    def __init__(self, game):
        self.game = game

    @property
    def is_over(self):
        return self.game.is_over

    def legal_actions(self):
        return self.game.legal_actions()

    def apply(self, action):
        assert action in self.game.legal_actions()
        _CountedGame.moves += 1
        self.game.apply(action)


def test_engine_rate_plays_fresh_deals_of_consecutive_seeds_until_a_clock_check_after_the_deadline(monkeypatch):
    """The clock reads 100 s before the first deal (deadline, start) and at the first check, then 110 s: the rate
    is the decisions of the deals played over those 10 s. The clock is checked only at the end of a deal that leaves
    the decision count less than 24 over a multiple of 256 (the first deal's end, then about every 256 decisions),
    so the run stops at the first such end after 256 decisions."""
    import types

    from bench import run as bench_run
    from sixtysix_env import Game, Rules

    reads = []
    monkeypatch.setattr(bench_run, "time", types.SimpleNamespace(
        perf_counter=lambda: reads.append(1) or (100.0 if len(reads) <= 3 else 110.0)))
    deals = []

    def deal(rules, seed, dealer):
        deals.append((rules, seed, dealer))
        return _CountedGame(Game.deal(rules, seed=seed, dealer=dealer))

    monkeypatch.setattr(bench_run, "Game", types.SimpleNamespace(deal=deal))
    monkeypatch.setattr(_CountedGame, "moves", 0)
    rate = bench_run.engine_decisions_per_second(5.0, seed=3)
    assert rate == _CountedGame.moves / 10.0 and _CountedGame.moves >= 256
    assert [(seed, dealer) for _, seed, dealer in deals] == [(3_000_009 + n, (3_000_009 + n) % 2)
                                                             for n in range(len(deals))]
    assert all(rules == Rules() for rules, _, _ in deals)
    assert _CountedGame.moves - 256 < 24  # stopped at the first deal's end past 256 decisions
    assert len(reads) == 5  # deadline, start, the check after the first deal, the one past 256, the end
    reads.clear()
    deals.clear()
    bench_run.engine_decisions_per_second(5.0, seed=3, rules=Rules.preset("scharf"))
    assert deals and all(rules == Rules.preset("scharf") for rules, _, _ in deals)


class _TimedAecEnv:
    """Episodes of five steps (the last two of finished agents), each step a quarter of a second on ``clock``."""

    def __init__(self, clock, log):
        self.clock, self.log, self.unwrapped = clock, log, self

    def reset(self, seed=None):
        self.log.append(("reset", seed))
        self.left = 5

    def agent_iter(self):
        while self.left:
            yield "player_0"

    def last(self):
        return {"action_mask": np.array([0, 1, 1, 0], dtype=np.int8)}, 0.0, self.left <= 2, False, {}

    def step(self, action):
        assert action in ((None,) if self.left <= 2 else (1, 2)), action
        self.log.append(("step", action))
        self.left -= 1
        self.clock.now += 0.25


def test_aec_rate_counts_every_step_over_whole_episodes_of_consecutive_seeds(monkeypatch):
    import sixtysix_env
    from bench import run as bench_run

    clock, log, made = FakeClock(), [], []
    monkeypatch.setattr(bench_run, "time", clock)
    for factory in ("env", "raw_env"):
        monkeypatch.setattr(sixtysix_env, factory, lambda rules, factory=factory: made.append((factory, rules)) or
                            _TimedAecEnv(clock, log))
    # 2 s: a first episode (1.25 s), a second started before the deadline; 10 steps in 2.5 s
    assert bench_run.aec_steps_per_second(2.0, seed=7, rules="scharf") == 10 / 2.5
    assert [entry for entry in log if entry[0] == "reset"] == [("reset", 7), ("reset", 8)]
    assert [action for kind, action in log if kind == "step"].count(None) == 4 and made == [("env", "scharf")]
    environment = _TimedAecEnv(clock, [])
    monkeypatch.setattr(sixtysix_env, "raw_env", lambda rules: environment)
    assert bench_run.aec_steps_per_second(1.0, wrapped=False, observe_with_core=False) == 5 / 1.25
    assert environment.observe_with_core is False
    assert not hasattr(_TimedAecEnv(clock, []), "observe_with_core")


def test_the_pure_python_engine_rate_comes_from_a_child_process_with_the_pure_python_engine(monkeypatch):
    import subprocess

    from bench import run as bench_run

    real_run = subprocess.run
    children = []

    def run(command, **options):
        children.append(options)
        return real_run(command, **options)

    monkeypatch.setattr(subprocess, "run", run)
    rate = bench_run.pure_python_engine_decisions_per_second(0.05, "paderborn")
    assert rate > 0 and isinstance(rate, float)
    (options,) = children
    assert options["env"]["SIXTYSIX_PURE_PYTHON"] == "1" and options["check"] and options["capture_output"]
