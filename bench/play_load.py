"""Load test of ``sixtysix serve`` over loopback: many concurrent games, response latency p50/p95.

Starts the server as its own process on 127.0.0.1 (a fresh SQLite file in a temporary folder), then plays
``--games`` games against ``--opponent`` concurrently, each a single deal of random legal moves (one hint per
game), and ``--search-games`` more against ``--search-opponent`` at the same time. Every request's latency is
recorded under its games' role (``--opponent`` or ``--search-opponent``, kept apart even when both name the same
agent); bounded by ``--timeout`` seconds in all. A request the server refuses (an HTTP error status) or that fails
on the way (a timeout, a dropped connection) ends its game and is counted by role, request kind and status, as a
load tester reports errors; the other games play on. Loopback only: nothing leaves the machine.

    python -m bench.play_load --games 50 --search-games 5 --out docs/play_load.json

prints a table and writes the figures (JSON) and a latency plot next to it.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import random
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from eval.stats import percentile
from sixtysix_env.extras import needs_extra
from sixtysix_env.schema import SEED_LIMIT

from .checks import check_agent_specs, check_output_paths

ROOT = Path(__file__).resolve().parents[1]
MAX_GAMES = 400  # a bounded load test: the server's games and the client's connections stay few
ROLES = ("--opponent", "--search-opponent")  # the two groups of games, by the option naming their agent
GAME_SEEDS = 100_000  # game n of --seed s is dealt from s * GAME_SEEDS + n (search games from + GAME_SEEDS // 2)
MAX_SEED = SEED_LIMIT // GAME_SEEDS - 1  # the server takes game seeds 0..2^63-1


@dataclass
class LoadArgs:
    """Options of the load test."""

    games: int = 50
    """Concurrent games against ``opponent``."""
    opponent: str = "heuristic"
    """Agent spec of the many games."""
    search_games: int = 5
    """Concurrent games against ``search_opponent`` (a search agent: each of its moves takes real time)."""
    search_opponent: str = "pimc"
    """Agent spec of the search games."""
    seed: int = 0
    """Seeds the games' decks and the simulated players' choices (0..MAX_SEED)."""
    timeout: float = 300.0
    """Whole run at most this many seconds; unfinished games are reported."""
    out: str = "docs/play_load.json"
    """Where the figures go (JSON; a PNG plot with the same stem)."""


class RequestFailed(RuntimeError):
    """A request of one game failed: the server answered with an error status, or the request never got an answer
    (``status`` then names the transport error, e.g. ``ReadTimeout``). Ends that game, not the load test."""

    def __init__(self, kind: str, status: str, message: str):
        super().__init__(message)
        self.kind, self.status = kind, status


@dataclass
class LoadRun:
    """What a load test measured."""

    timings: dict
    """Latencies in seconds by (role, opponent, request kind), of every request answered (error statuses too)."""
    finished: int
    """Games played to the end."""
    total: int
    """Games started."""
    elapsed: float
    """Seconds of the whole run."""
    failures: list
    """One (role, opponent, request kind, status, message) per game a failed request ended."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def play_one(client, base: str, opponent: str, seed: int, timings: dict, deadline: float,
                   role: str = ROLES[0]) -> bool:
    """One single-deal game of random legal moves with one hint; returns whether it finished before the deadline.
    Each answered request's latency is appended to ``timings[(role, opponent, kind)]``; a failed request raises
    :class:`RequestFailed` naming it."""
    import httpx

    rng = random.Random(seed)

    async def call(kind: str, method: str, path: str, body=None):
        start = time.perf_counter()
        try:
            response = await client.request(method, base + path, json=body)
        except httpx.TransportError as error:  # no answer at all: nothing to time
            raise RequestFailed(kind, type(error).__name__, f"{method} {path}: {type(error).__name__} {error}") \
                from error
        timings.setdefault((role, opponent, kind), []).append(time.perf_counter() - start)
        if response.status_code >= 400:
            raise RequestFailed(kind, str(response.status_code),
                                f"{method} {path}: {response.status_code} {response.text[:200]}")
        return response.json()

    data = await call("create", "POST", "/api/games", {"player": f"load{seed % 1000}", "opponent": opponent,
                                                      "bummerl": False, "seed": seed})
    game_id = data["id"]
    hinted = False
    while data["view"]["result"] is None:
        if time.time() > deadline:
            return False
        legal = data["view"]["legal"]
        if not hinted and rng.random() < 0.3:
            await call("hint", "POST", f"/api/games/{game_id}/hint")
            hinted = True
        await asyncio.sleep(rng.uniform(0.0, 0.05))  # a little think time, so requests interleave
        data = await call("move", "POST", f"/api/games/{game_id}/move", {"action": rng.choice(legal)["id"]})
    return True


async def run_load(args: LoadArgs, base: str) -> LoadRun:
    import httpx
    from tqdm import tqdm

    timings: dict = {}
    failures: list = []
    deadline = time.time() + args.timeout

    async def game(opponent: str, seed: int, role: str) -> bool:
        try:
            return await play_one(client, base, opponent, seed, timings, deadline, role=role)
        except RequestFailed as failure:
            failures.append((role, opponent, failure.kind, failure.status, str(failure)))
            return False

    limits = httpx.Limits(max_connections=args.games + args.search_games + 4)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        tasks = [game(args.opponent, args.seed * GAME_SEEDS + n, ROLES[0]) for n in range(args.games)]
        tasks += [game(args.search_opponent, args.seed * GAME_SEEDS + GAME_SEEDS // 2 + n, ROLES[1])
                  for n in range(args.search_games)]
        finished = 0
        start = time.perf_counter()
        with tqdm(total=len(tasks), desc="games", unit="game") as progress:
            for outcome in asyncio.as_completed(tasks):
                finished += bool(await outcome)
                progress.update()
                progress.set_postfix(failed=len(failures), refresh=False)
        elapsed = time.perf_counter() - start
    return LoadRun(timings, finished, len(tasks), elapsed, failures)


def count_failures(failures: list) -> list[dict]:
    """The failed requests counted by role, opponent, request kind and status, the ``--opponent`` games' first;
    each row keeps the first message of its kind as an example."""
    rows: dict = {}
    for role, opponent, kind, status, message in failures:
        row = rows.setdefault((role, opponent, kind, status), {"role": role, "opponent": opponent, "request": kind,
                                                               "status": status, "count": 0, "example": message})
        row["count"] += 1
    return [rows[key] for key in sorted(rows, key=lambda key: (ROLES.index(key[0]), *key[1:]))]


def summarise(timings: dict) -> list[dict]:
    """A row per role, opponent and request kind, then one per role and opponent of all its requests; the
    ``--opponent`` games' rows first."""
    rows = [_row(role, opponent, kind, values)
            for (role, opponent, kind), values in sorted(timings.items(), key=_by_role)]
    for role, opponent in sorted({key[:2] for key in timings}, key=lambda group: ROLES.index(group[0])):
        values = [v for (r, o, _), vs in timings.items() if (r, o) == (role, opponent) for v in vs]
        rows.append(_row(role, opponent, "all", values))
    return rows


def _row(role: str, opponent: str, request: str, values: list[float]) -> dict:
    """One row of the summary: the count and the latencies' median, p95 and maximum in milliseconds."""
    return {"role": role, "opponent": opponent, "request": request, "count": len(values),
            "p50_ms": round(1000 * statistics.median(values), 1), "p95_ms": round(1000 * percentile(values, 95), 1),
            "max_ms": round(1000 * max(values), 1)}


def _by_role(item) -> tuple:
    (role, opponent, kind), _ = item
    return ROLES.index(role), opponent, kind


def plot(timings: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from eval.report import png_bytes
    from sixtysix_env.fileio import write_bytes_atomic

    figure, axis = plt.subplots(figsize=(8, 4.2))
    labels, data = [], []
    for (role, opponent, kind), values in sorted(timings.items(), key=_by_role):
        labels.append(f"{opponent}\n{kind}" if role == ROLES[0] else f"{opponent} (search)\n{kind}")
        data.append([1000 * v for v in values])
    axis.boxplot(data, whis=(5, 95), showfliers=False)
    axis.set_xticks(range(1, len(labels) + 1), labels)
    axis.set_yscale("log")
    axis.set_ylabel("response time (ms, log scale)")
    axis.set_title("sixtysix serve over loopback: latency per request kind (box: quartiles, whiskers: p5–p95)")
    axis.title.set_fontsize(9)
    figure.tight_layout()
    write_bytes_atomic(path, png_bytes(figure, dpi=110))


def parse_args(argv: list[str]) -> LoadArgs:
    defaults = LoadArgs()
    parser = argparse.ArgumentParser(prog="python -m bench.play_load", description=(__doc__ or "").split("\n\n")[0])
    for name, value in vars(defaults).items():
        parser.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)
    values = parser.parse_args(argv)
    try:
        with needs_extra("play"):  # the client of every request; a missing one was a traceback at the first poll
            importlib.import_module("httpx")
    except ValueError as error:
        parser.error(str(error))
    if values.games < 0 or values.search_games < 0 or values.games + values.search_games == 0:
        parser.error(f"need at least one game, got --games {values.games} and --search-games {values.search_games}")
    if values.games + values.search_games > MAX_GAMES:
        parser.error(f"bounded load test: at most {MAX_GAMES} games in all, got "
                     f"{values.games + values.search_games}")
    if not values.timeout > 0:
        parser.error(f"--timeout must be a positive number of seconds, got {values.timeout:g}")
    if not 0 <= values.seed <= MAX_SEED:  # the server refuses the games' seeds: every game failed once it started
        parser.error(f"--seed must be 0..{MAX_SEED}, got {values.seed}")
    # The server would refuse a bad spec only once started, and the games' client then fail to connect.
    check_agent_specs(parser, [("--opponent", values.opponent), ("--search-opponent", values.search_opponent)])
    out = Path(values.out)
    if out.suffix.lower() == ".png":  # the plot goes beside the JSON as its .png: it would overwrite it
        parser.error(f"--out names the JSON table (its plot is written beside it as .png), got {values.out}")
    check_output_paths(parser, [("--out", out), ("--out", out.with_suffix(".png"))])
    return LoadArgs(**vars(values))


def server_failure(server: subprocess.Popen, base: str, log: Path) -> str | None:
    """Poll the server until it answers (``None``), else why not, with the tail of its log: it exited (polling on
    would only wait) or stayed silent for 20 s."""
    import httpx

    for _ in range(200):
        if server.poll() is not None:
            return (f"sixtysix serve exited with code {server.returncode} before it answered; its last output:\n"
                    f"{_tail(log)}")
        try:
            httpx.get(base + "/api/agents", timeout=1)
            return None
        except httpx.TransportError:
            time.sleep(0.1)
    return f"sixtysix serve did not answer at {base} within 20 s; its last output:\n{_tail(log)}"


def _tail(log: Path, lines: int = 15) -> str:
    return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"  # a file, not a pipe: nobody reads the server's output while it runs
        with open(log, "wb") as log_file:
            server = subprocess.Popen(
                [sys.executable, "-m", "sixtysix_cli", "serve", "--host", "127.0.0.1", "--port", str(port),
                 "--db", os.path.join(folder, "load.sqlite3"), "--agents", f"{args.opponent},{args.search_opponent}",
                 "--max-games", str(args.games + args.search_games + 10)],
                cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=log_file, stderr=log_file)
        try:
            failure = server_failure(server, base, log)
            if failure is not None:
                print(f"error: {failure}", file=sys.stderr)
                return 1
            run = asyncio.run(run_load(args, base))
            if any(not status.isdigit() for *_, status, _ in run.failures):  # no answer: did the server fall over?
                print(f"note: requests went unanswered; the server's last output:\n{_tail(log)}", file=sys.stderr)
        finally:
            server.terminate()
            server.wait(timeout=20)
    timings, finished, total, elapsed = run.timings, run.finished, run.total, run.elapsed
    rows = summarise(timings)
    failed = count_failures(run.failures)
    print(f"{finished}/{total} games finished in {elapsed:.1f} s"
          + (f"; {len(run.failures)} ended by a failed request" if run.failures else ""))
    for row in failed:
        print(f"failed: {row['role']} {row['opponent']} {row['request']} {row['status']} x{row['count']}, "
              f"e.g. {row['example']}")
    print(f"{'role':<19}{'opponent':<12}{'request':<9}{'count':>7}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for row in rows:
        print(f"{row['role']:<19}{row['opponent']:<12}{row['request']:<9}{row['count']:>7}{row['p50_ms']:>9}"
              f"{row['p95_ms']:>9}{row['max_ms']:>9}")
    out = Path(args.out)
    from sixtysix_env.fileio import write_json_atomic

    # Quoted as a shell reads it, so that the recorded command runs again as it is (an --out path with a space).
    write_json_atomic(out, {"command": shlex.join(["python", "-m", "bench.play_load",
                                                   *(sys.argv[1:] if argv is None else argv)]),
                            "settings": vars(args), "games_finished": finished, "games": total,
                            "games_failed": len(run.failures), "seconds": round(elapsed, 1),
                            "cpus": os.cpu_count(), "rows": rows, "failures": failed})
    plot(timings, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")
    return 0 if finished == total else 1


if __name__ == "__main__":
    sys.exit(main())
