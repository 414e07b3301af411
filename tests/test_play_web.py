"""The browser app's HTTP API (play/web/server.py): information hygiene and safety (issue 13, item 3).

Whole games are played through the API; every response is checked against the hidden cards derived from the
server's real game (tests/hidden_cards.py, independent of the code that builds responses). Bad requests get a
4xx JSON error and change nothing; games survive a restart and a kill -9; live games are bounded and expire."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")

from hidden_cards import card_tokens, hidden_cards, talon_order_shown  # noqa: E402
from web_helpers import TestClient, web_client  # noqa: E402

from play.web.server import ServerSettings, parse_args  # noqa: E402
from play.web.store import Store  # noqa: E402
from sixtysix_env.record import record_to_game  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ("heuristic", "random", "pimc")


def _client(tmp_path, **overrides) -> TestClient:
    return web_client(tmp_path, AGENTS, **overrides)


def _session(client: TestClient, game_id: str):
    return client.app.state.house.cache[game_id].session


def _assert_clean(response, session) -> None:
    """Nothing in the response that the human may not know about the deal being played."""
    hidden = hidden_cards(session.game, session.human)
    leaked = card_tokens(response.text) & hidden
    assert not leaked, f"response leaks hidden cards {sorted(leaked)}: {response.text[:300]}"
    assert not talon_order_shown(response.text, session.game)


@pytest.mark.parametrize("seed,opponent,seat", [(1, "heuristic", 0), (2, "random", 1), (3, "heuristic", 1)])
def test_whole_bummerl_through_the_api_never_leaks(tmp_path, seed, opponent, seat):
    """R17 Bummerl played by random legal clicks; EVERY response is inspected, hints included."""
    client = _client(tmp_path)
    rng = random.Random(seed)
    response = client.post("/api/games", json={"player": "tester", "opponent": opponent, "seed": seed, "seat": seat})
    assert response.status_code == 201
    game_id = response.json()["id"]
    session = _session(client, game_id)
    _assert_clean(response, session)
    responses = 1
    while True:
        view = response.json()["view"]
        if view["result"] is not None:
            if view["match"]["over"]:
                break
            # the finished deal may be reviewed; it is over, so its record may show everything
            number = view["deal"]
            record = client.get(f"/api/games/{game_id}/deals/{number}").json()["record"]
            assert record_to_game(record).is_over
            response = client.post(f"/api/games/{game_id}/next")
        else:
            assert view["to_move"] == "you" and view["legal"]
            if rng.random() < 0.15:
                hint = client.post(f"/api/games/{game_id}/hint")
                assert hint.status_code == 200
                _assert_clean(hint, session)
                assert {row["id"] for row in hint.json()["hints"]} == {m["id"] for m in view["legal"]}
            unfinished = client.get(f"/api/games/{game_id}/deals/{view['deal']}")
            assert unfinished.status_code == 404  # the deal being played has no record to show
            response = client.post(f"/api/games/{game_id}/move", json={"action": rng.choice(view["legal"])["id"]})
        assert response.status_code == 200, response.text
        _assert_clean(response, session)
        fetched = client.get(f"/api/games/{game_id}")
        _assert_clean(fetched, session)
        responses += 2
    assert session.session_over and responses > 20
    history = client.get("/api/players/tester/history").json()
    row = history["agents"][0]
    assert row["opponent"] == opponent and row["deals"] == len(session.finished)
    assert row["margin"] == sum(record_to_game(r).result.returns()[session.human] for r in session.finished)
    assert row["bummerl_won"] + row["bummerl_lost"] == 1


JSON = {"Content-Type": "application/json"}


def _state(client, game_id):
    return json.dumps(_session(client, game_id).to_state())


def test_bad_requests_get_a_clear_4xx_and_change_nothing(tmp_path):
    client = _client(tmp_path)
    created = client.post("/api/games", json={"player": "ann", "opponent": "heuristic", "seed": 4})
    game_id = created.json()["id"]
    view = created.json()["view"]
    legal = {move["id"] for move in view["legal"]}
    illegal = next(a for a in range(37) if a not in legal)
    before = _state(client, game_id)
    cases = [
        (client.post(f"/api/games/{game_id}/move", content=b"{not json", headers=JSON), 400, "malformed JSON"),
        (client.post(f"/api/games/{game_id}/move", content=b'{"action": 0}', headers={"Content-Type": "text/plain"}),
         415, "must be JSON"),
        (client.post(f"/api/games/{game_id}/move", json=[1, 2]), 400, "JSON object"),
        (client.post(f"/api/games/{game_id}/move", json={}), 400, "missing field"),
        (client.post(f"/api/games/{game_id}/move", json={"action": "x"}), 400, "action id"),
        (client.post(f"/api/games/{game_id}/move", json={"action": True}), 400, "action id"),
        (client.post(f"/api/games/{game_id}/move", json={"action": illegal}), 400, "illegal move"),
        (client.post(f"/api/games/{game_id}/move", json={"action": 99}), 400, "illegal move"),
        (client.post(f"/api/games/{game_id}/move", json={"move": "play ZZ"}), 400, "field 'move': malformed card"),
        (client.post(f"/api/games/{game_id}/move", json={"move": "marry H"}), 400, "field 'move': malformed card 'H'"),
        (client.post(f"/api/games/{game_id}/move", content=b"x" * 5_000_000, headers=JSON), 413, "too large"),
        (client.post(f"/api/games/{game_id}/next"), 409, "still being played"),
        (client.get(f"/api/games/{game_id}/deals/1"), 404, "no finished deal"),
        (client.get(f"/api/games/{game_id}/deals/abc"), 404, "no finished deal"),
        (client.post("/api/games/unknownid123/move", json={"action": 0}), 404, "unknown game id"),
        (client.get("/api/games/..%2F..%2Fetc"), 404, ""),
        (client.post("/api/games", json={"player": "ann", "opponent": "pimc:seconds=999"}), 400, "unknown opponent"),
        (client.post("/api/games", json={"player": "ann", "rules": "nonsense"}), 400, "unknown rules preset"),
        (client.post("/api/games", json={"player": "<script>"}), 400, "bad player name"),
        # only dots: the history page's address (/api/players/../history) is tidied away by browsers
        (client.post("/api/games", json={"player": ".."}), 400, "not only dots and spaces"),
        (client.post("/api/games", json={"player": ". ."}), 400, "not only dots and spaces"),
        (client.post("/api/games", json={"player": "ann", "seed": -1}), 400, "seed"),
        (client.post("/api/watch/step", json={"agents": ["heuristic"], "seed": 1}), 400, "two agents"),
        (client.post("/api/watch/step", json={"agents": ["heuristic", "random"], "seed": 1, "moves": ["play AH"] * 3}),
         400, "illegal action"),
        (client.post("/api/replay", json={"record": {"format": "nope"}}), 400, "bad game record"),
        (client.get("/api/players/%3Cx%3E/history"), 400, "bad player name"),
        # a "/" in the name (sent as %2F, decoded by the server) matched no route: a bare "Not Found"
        (client.get("/api/players/a%2Fb/history"), 400, "bad player name"),
        (client.get("/api/players/%3Cb%3Ex%3C%2Fb%3E/history"), 400, "bad player name"),
    ]
    for response, status, text in cases:
        assert response.status_code == status, (response.status_code, response.text)
        assert "error" in response.json() and text in response.json()["error"], response.text
    assert not client.app.state.house.loading  # unknown ids leave nothing behind in memory
    foreign = client.get(f"/api/games/{game_id}", headers={"Host": "evil.example"})
    assert foreign.status_code == 400 and "not accepted" in foreign.json()["error"]  # DNS rebinding
    assert _state(client, game_id) == before
    # moves when it is not the human's turn: after the deal ends
    session = _session(client, game_id)
    rng = random.Random(0)
    while not session.game.is_over:
        client.post(f"/api/games/{game_id}/move", json={"action": rng.choice(session.legal_moves())})
    after_deal = _state(client, game_id)
    response = client.post(f"/api/games/{game_id}/move", json={"action": 0})
    assert response.status_code == 409 and "deal is over" in response.json()["error"]
    response = client.post(f"/api/games/{game_id}/hint")
    assert response.status_code == 409 and "not your turn" in response.json()["error"]
    assert _state(client, game_id) == after_deal


def test_live_games_are_bounded_and_expire(tmp_path):
    client = _client(tmp_path, max_games=2, cache_size=1)
    ids = [client.post("/api/games", json={"player": "bo", "seed": n}).json()["id"] for n in range(2)]
    full = client.post("/api/games", json={"player": "bo"})
    assert full.status_code == 503 and "too many live games" in full.json()["error"]
    assert len(client.app.state.house.cache) == 1  # memory bounded; the other game is rebuilt from SQLite
    assert client.get(f"/api/games/{ids[0]}").status_code == 200
    store: Store = client.app.state.store
    store._run("UPDATE games SET updated=updated-100000 WHERE id=?", (ids[1],))
    client.app.state.house.sweep(force=True)
    gone = client.post(f"/api/games/{ids[1]}/move", json={"action": 0})
    assert gone.status_code == 410 and "expired" in gone.json()["error"]
    assert client.post("/api/games", json={"player": "bo"}).status_code == 201  # room again


def test_a_game_idle_past_the_limit_is_expired_at_its_next_request(tmp_path, monkeypatch):
    """The sweep runs at most once a minute: a game idle past ``idle_minutes`` was still played (200) until then,
    whether in memory or rebuilt from SQLite. A game with a request within the limit stays alive."""
    import time

    clock = [time.time()]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    client = _client(tmp_path, idle_minutes=0.02, cache_size=1)  # 1.2 s
    ids = [client.post("/api/games", json={"player": "bo", "seed": n}).json()["id"] for n in range(3)]
    house = client.app.state.house
    sweep, forced = house.sweep, []
    monkeypatch.setattr(house, "sweep", lambda force=False: forced.append(force) if force else sweep())
    clock[0] += 1.0
    assert client.get(f"/api/games/{ids[2]}").status_code == 200  # in memory, within the limit
    clock[0] += 1.0
    assert client.get(f"/api/games/{ids[2]}").status_code == 200  # its last request was 1 s ago
    assert forced == []  # a game asked for within the limit costs no sweep of the whole table
    monkeypatch.setattr(house, "sweep", sweep)
    clock[0] += 5.0  # far less than the minute between sweeps
    for game_id in (ids[0], ids[2]):  # one rebuilt from SQLite (asked first: its own check), and the one in memory
        gone = client.get(f"/api/games/{game_id}")
        assert gone.status_code == 410 and "expired" in gone.json()["error"], game_id
    assert client.app.state.house.cache.get(ids[2]) is None


def test_a_damaged_stored_game_gets_a_json_error(tmp_path):
    client = _client(tmp_path, cache_size=1)
    first = client.post("/api/games", json={"player": "di", "seed": 1}).json()["id"]
    client.post("/api/games", json={"player": "di", "seed": 2})  # pushes the first game out of memory
    client.app.state.store._run("UPDATE games SET state=? WHERE id=?", (json.dumps({"version": 99}), first))
    response = client.get(f"/api/games/{first}")
    assert response.status_code == 500 and "cannot be rebuilt" in response.json()["error"]
    # A row that is not JSON at all is the server's fault too, not a 400 of the catch-all ValueError handler.
    client.app.state.store._run("UPDATE games SET state='{not json' WHERE id=?", (first,))
    response = client.get(f"/api/games/{first}")
    assert response.status_code == 500
    assert f"the state of game {first!r} in the game database cannot be read back" in response.json()["error"]
    client.app.state.store._run("INSERT INTO deals VALUES (?, 1, 'di', 'heuristic', 0, 'garbage', 1, 0, NULL)",
                                (first,))
    response = client.get(f"/api/games/{first}/deals/1")
    assert response.status_code == 500 and "the record of deal 1 of game" in response.json()["error"]


def test_a_database_of_another_program_is_refused_unchanged(tmp_path):
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE deals (x)")
    before = foreign.read_bytes()
    with pytest.raises(ValueError, match=r"not a game database of sixtysix serve \(its tables: deals\(x\)\)"):
        Store(foreign)
    assert foreign.read_bytes() == before and not (tmp_path / "foreign.db-wal").exists()  # not switched to WAL
    ours = tmp_path / "ours.db"
    Store(ours).close()
    Store(ours).close()  # a file this server made opens again


def test_player_names_and_game_ids_must_match_whole_not_up_to_a_final_newline(tmp_path):
    client = _client(tmp_path)
    response = client.post("/api/games", json={"player": "bob\n"})
    assert response.status_code == 400 and "player" in response.json()["error"]
    for name in ("Jürgen", "Zoë K.", "名前"):  # letters of any script are letters
        assert client.post("/api/games", json={"player": name}).status_code == 201, name
    assert client.post("/api/games", json={"player": "<b>"}).status_code == 400
    game_id = client.post("/api/games", json={"player": "bob"}).json()["id"]
    assert client.get(f"/api/games/{game_id}%0A").status_code == 404


def test_a_move_from_a_view_the_game_has_left_is_refused(tmp_path):
    """Two tabs on one game: the second tab's move names the view it was chosen in, and the game has moved on."""
    client = _client(tmp_path)
    created = client.post("/api/games", json={"player": "bo", "opponent": "heuristic", "seed": 4}).json()
    game_id, view = created["id"], created["view"]
    first = view["legal"][0]["id"]
    moved = client.post(f"/api/games/{game_id}/move",
                        json={"action": first, "deal": view["deal"], "move_number": view["move_number"]})
    assert moved.status_code == 200 and moved.json()["view"]["move_number"] > view["move_number"]
    now = moved.json()["view"]
    stale = client.post(f"/api/games/{game_id}/move", json={"action": now["legal"][0]["id"], "deal": view["deal"],
                                                            "move_number": view["move_number"]})
    assert stale.status_code == 409 and f"move {now['move_number']}); reload it" in stale.json()["error"]
    assert client.get(f"/api/games/{game_id}").json()["view"] == now  # nothing changed
    hint = client.post(f"/api/games/{game_id}/hint", json={"deal": view["deal"], "move_number": view["move_number"]})
    assert hint.status_code == 409 and "reload it" in hint.json()["error"]  # a hint of a position not on screen
    bad = client.post(f"/api/games/{game_id}/move", json={"action": 0, "move_number": "3"})
    assert bad.status_code == 400 and "field 'move_number' must be an integer" in bad.json()["error"]


def test_a_huge_move_is_named_cut_short_not_echoed(tmp_path):
    client = _client(tmp_path)
    game_id = client.post("/api/games", json={"player": "bo", "seat": 0, "seed": 1}).json()["id"]
    for move in ("x" * 1_000_000, "play " + "x" * 1_000_000):
        response = client.post(f"/api/games/{game_id}/move", json={"move": move})
        assert response.status_code == 400 and len(response.text) < 400, response.text[:200]
        assert "malformed" in response.json()["error"] and "xxx..." in response.json()["error"]


def test_the_address_to_open_brackets_an_ipv6_host():
    from play.web.server import server_url

    assert server_url("127.0.0.1", 8000) == "http://127.0.0.1:8000/"
    assert server_url("::1", 8765) == "http://[::1]:8765/"


def test_default_bind_is_loopback():
    assert parse_args([]).host == "127.0.0.1"
    assert ServerSettings().host == "127.0.0.1"


def test_allowed_hosts_are_read_as_lower_case_names():
    assert parse_args([]).allowed_hosts == ()
    assert parse_args(["--allowed-hosts", "Table.Example, b.example,"]).allowed_hosts == ("table.example", "b.example")


def test_agents_list_keeps_a_specs_parameters_together():
    # a spec's parameters are comma-separated too: the list is split as sixtysix tournament splits it
    assert parse_args(["--agents", "heuristic,pimc:samples=30,seconds=0.1,greedy"]).agents == (
        "heuristic", "pimc:samples=30,seconds=0.1", "greedy")
    with pytest.raises(ValueError, match="--agents: .*parameter 'samples=3' does not follow an agent"):
        parse_args(["--agents", "heuristic,samples=3"])


def test_an_agent_that_plays_none_of_the_offered_rules_is_refused_at_start():
    """The app offers the two-player presets; a three-player model (R21) plays none of them and is refused when the
    server starts, not at its first game. One that plays some of them is offered (a game under the others is a
    400 naming the network)."""
    with pytest.raises(ValueError, match="--agents: PPO model .*ppo_three.zip' was trained for rules 'three'"):
        parse_args(["--agents", "heuristic,ppo:path=models/ppo_three.zip"])
    assert parse_args(["--agents", "heuristic,expert"]).agents == ("heuristic", "expert")


def test_watch_and_replay_endpoints(tmp_path):
    client = _client(tmp_path)
    start = client.post("/api/watch/start", json={"seed": 12}).json()
    assert start["seed"] == 12 and start["frame"]["talon_size"] == 12
    moves = []
    for _ in range(60):
        step = client.post("/api/watch/step", json={"agents": ["heuristic", "random"], "seed": 12, "moves": moves})
        assert step.status_code == 200, step.text
        moves.append(step.json()["move"])
        if step.json()["over"]:
            break
    record = step.json()["record"]
    assert record_to_game(record).is_over and [a for a in record["actions"]] == moves
    frames = client.post("/api/replay", json={"record": record}).json()["frames"]
    assert len(frames) == len(moves) + 1 and frames[-1]["result"] == record["result"]
    deals = {"format": "sixtysix-deals", "version": 1, "rules": record["rules"],
             "deals": [{"dealer": 0, "deck": record["deck"]}, {"dealer": 1, "deck": record["deck"]}]}
    replayed = client.post("/api/replay", json={"deals": deals, "index": 1, "agents": ["heuristic", "heuristic"]})
    assert replayed.status_code == 200
    assert replayed.json()["record"]["deck"] == record["deck"] and replayed.json()["record"]["dealer"] == 1
    assert client.post("/api/replay", json={"deals": deals, "index": 5}).status_code == 400


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_server(db: Path, port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "sixtysix_cli", "serve", "--port", str(port), "--db", str(db), "--agents", "heuristic"],
        cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/agents", timeout=1)
            return process
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    _output, errors = process.communicate()  # waits and closes the pipes
    raise AssertionError("the server did not start: " + errors.decode()[-2000:])


def _stop(server: subprocess.Popen, stop_signal: int) -> None:
    """Stop a server of ``_start_server`` and close its pipes."""
    server.send_signal(stop_signal)
    server.wait()
    server.stdout.close()
    server.stderr.close()


def test_kill_9_loses_no_game(tmp_path):
    """A real server process is killed with SIGKILL mid-game; restarted on the same database the game goes on."""
    db = tmp_path / "games.sqlite3"
    port = _free_port()
    server = _start_server(db, port)
    base = f"http://127.0.0.1:{port}"
    try:
        view = httpx.post(f"{base}/api/games", json={"player": "kim", "opponent": "heuristic", "seed": 9}).json()
        game_id = view["id"]
        for _ in range(3):
            legal = view["view"]["legal"]
            view = httpx.post(f"{base}/api/games/{game_id}/move", json={"action": legal[0]["id"]}).json()
        before = httpx.get(f"{base}/api/games/{game_id}").json()
    finally:
        _stop(server, signal.SIGKILL)
    server = _start_server(db, port)
    try:
        after = httpx.get(f"{base}/api/games/{game_id}").json()
        assert after == before
        moved = httpx.post(f"{base}/api/games/{game_id}/move", json={"action": after["view"]["legal"][0]["id"]})
        assert moved.status_code == 200
    finally:
        _stop(server, signal.SIGTERM)


def test_serve_bad_options_exit_2_with_a_message(tmp_path):
    """The CLI never shows a traceback for bad input: a busy port, an unusable database, an unknown agent."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        (tmp_path / "file").write_text("not a folder")
        with sqlite3.connect(tmp_path / "foreign.db") as foreign:
            foreign.execute("CREATE TABLE notes (text)")
        cases = [
            (["--port", str(port), "--db", str(tmp_path / "a.sqlite3")], "cannot listen on 127.0.0.1"),
            (["--db", str(tmp_path / "file" / "x.sqlite3"), "--port", str(port)], "cannot open the game database"),
            (["--db", str(tmp_path / "foreign.db"), "--port", str(port)],
             f"cannot open the game database {str(tmp_path / 'foreign.db')!r}: it is not a game database"),
            (["--agents", "nosuch"], "unknown agent 'nosuch'"),
            (["--port", "70000"], "--port must be 1..65535"),
        ]
        for options, message in cases:
            run = subprocess.run([sys.executable, "-m", "sixtysix_cli", "serve", *options], cwd=str(ROOT),
                                 env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                                 timeout=60)
            assert run.returncode == 2, (options, run.stdout, run.stderr)
            assert message in run.stderr and "Traceback" not in run.stderr, run.stderr
