"""Details of the browser app's HTTP API (play/web/server.py) that a client sees: the bounds of each field, the
defaults of a new game, the status codes and messages of docs/play.md ("Safety and information hygiene"), the Host
names a loopback server answers to, expiry of a game held in memory, and the checks of ``sixtysix serve``'s
options. Each test fails if one of these checks is loosened, tightened or skipped."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")

from web_helpers import JSON, TestClient, api_error, web_client  # noqa: E402

from starlette.requests import Request  # noqa: E402

from play.web.server import ApiError, ServerSettings, parse_args, read_body  # noqa: E402

AGENTS = ("heuristic", "random")


def _client(tmp_path, **overrides) -> TestClient:
    return web_client(tmp_path, AGENTS, **overrides)


def _new(client, **fields) -> dict:
    response = client.post("/api/games", json={"player": "tess", **fields})
    assert response.status_code == 201, response.text
    return response.json()


def _finish_deal(client, game_id: str, view: dict, seed: int = 0) -> dict:
    rng = random.Random(seed)
    while view["result"] is None:
        response = client.post(f"/api/games/{game_id}/move", json={"action": rng.choice(view["legal"])["id"]})
        assert response.status_code == 200, response.text
        view = response.json()["view"]
    return view


# ---------------------------------------------------------------------------------------------- request bodies
def test_a_body_of_exactly_the_limit_is_read_and_one_byte_more_is_413(tmp_path):
    """docs/play.md: a body *over* the limit is a 413, with or without a Content-Length (chunked)."""
    client = _client(tmp_path, max_body_bytes=200)
    base = json.dumps({"player": "tess", "seed": 1, "pad": ""})
    exact = base.replace('"pad": ""', '"pad": "' + "x" * (200 - len(base)) + '"').encode()
    assert len(exact) == 200
    assert client.post("/api/games", content=exact, headers=JSON).status_code == 201
    over = exact.replace(b'"pad": "', b'"pad": "x')
    api_error(client.post("/api/games", content=over, headers=JSON), 413, "too large", "200 bytes")
    chunked = client.post("/api/games", content=iter([exact[:100], exact[100:]]), headers=JSON)
    assert chunked.status_code == 201, chunked.text
    api_error(client.post("/api/games", content=iter([over[:100], over[100:]]), headers=JSON), 413, "too large")


def _read_with_length(length: str, body: bytes = b"{}") -> bytes:
    """read_body of a request whose Content-Length header is ``length``, as a client may send it (the test client
    would set its own)."""
    scope = {"type": "http", "method": "POST", "path": "/api/games", "headers": [(b"content-length", length.encode())]}
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive():
        return messages.pop(0)

    return asyncio.run(read_body(Request(scope, receive), ServerSettings(max_body_bytes=200)))


@pytest.mark.parametrize("length", ["abc", "12abc", "-5", "", " 2", "²"])
def test_a_content_length_that_is_no_number_is_a_400_naming_the_header(length):
    with pytest.raises(ApiError) as refused:
        _read_with_length(length)
    assert refused.value.status == 400 and "malformed Content-Length header" in refused.value.message


@pytest.mark.parametrize("length", ["201", "9" * 5000, "1" + "0" * 4400])
def test_a_content_length_over_the_limit_is_a_413_however_long(length):
    with pytest.raises(ApiError) as refused:
        _read_with_length(length)
    assert refused.value.status == 413 and "at most 200 bytes" in refused.value.message


def test_a_content_length_with_leading_zeros_is_read_as_its_number():
    assert _read_with_length("0" * 5000 + "2") == b"{}"
    assert _read_with_length("200") == b"{}"


def test_a_body_just_under_four_megabytes_is_accepted_by_default(tmp_path):
    """docs/play.md: only a body over 4 MB is refused (a deals.json of a big tournament fits)."""
    client = _client(tmp_path)
    body = json.dumps({"seed": 3, "pad": "x" * 3_900_000}).encode()
    response = client.post("/api/watch/start", content=body, headers=JSON)
    assert response.status_code == 200 and response.json()["seed"] == 3, response.text[:200]


def test_the_json_media_type_is_matched_without_case_and_with_parameters(tmp_path):
    """A media type is case-insensitive and may carry parameters: these are JSON bodies, not 415s."""
    client = _client(tmp_path)
    for content_type in ("application/json; charset=utf-8", "Application/JSON", "APPLICATION/JSON ; charset=UTF-8"):
        response = client.post("/api/games", content=b'{"player": "tess"}', headers={"Content-Type": content_type})
        assert response.status_code == 201, (content_type, response.text)
    api_error(client.post("/api/games", content=b'{"player": "tess"}', headers={"Content-Type": "text/json"}),
              415, "must be JSON", "'text/json'")


def test_a_body_that_is_not_utf8_is_malformed_json_400(tmp_path):
    client = _client(tmp_path)
    response = client.post("/api/games", content=b'{"player": "t\xffss"}', headers=JSON)
    api_error(response, 400, "malformed JSON body: not UTF-8 text", "at byte 13")


# ---------------------------------------------------------------------------------------------- new games
def test_player_names_are_1_to_32_letters_digits_spaces_dots_dashes_underscores(tmp_path):
    client = _client(tmp_path)
    for name in ("a", "x" * 32, "Anne-Marie", "J. R_2"):
        assert client.post("/api/games", json={"player": name}).status_code == 201, name
    for name in ("", "x" * 33, "ann/bo", "ann:bo"):
        api_error(client.post("/api/games", json={"player": name}), 400, "bad player name", "1 to 32")
    assert client.get(f"/api/players/{'x' * 32}/history").status_code == 200
    api_error(client.get(f"/api/players/{'x' * 33}/history"), 400, "bad player name")


def test_only_the_agents_this_server_offers_may_be_chosen(tmp_path):
    """ServerSettings.agents: only these (a built-in agent the server does not offer is refused too)."""
    client = _client(tmp_path)
    assert client.get("/api/agents").json()["agents"] == list(AGENTS)
    api_error(client.post("/api/games", json={"player": "tess", "opponent": "greedy"}), 400,
              "unknown opponent 'greedy'; choose one of heuristic, random")
    api_error(client.post("/api/watch/step", json={"agents": ["heuristic", "greedy"], "seed": 1}), 400,
              "unknown opponent 'greedy'")


def test_a_new_game_defaults_to_a_standard_bummerl_against_heuristic(tmp_path):
    """R17: a Bummerl unless ``"bummerl": false``; the standard rules and the heuristic agent unless chosen."""
    view = _new(_client(tmp_path), seed=5)["view"]
    assert view["opponent"] == "heuristic" and view["rules"] == "standard" and view["match"]["bummerl"] is True
    chosen = _new(_client(tmp_path), seed=5, opponent="random", rules="paderborn", bummerl=False)["view"]
    assert chosen["opponent"] == "random" and chosen["rules"] == "paderborn" and chosen["match"]["bummerl"] is False


@pytest.mark.parametrize("path", ["/api/games", "/api/watch/start", "/api/watch/step"])
def test_a_seed_is_an_integer_0_to_2_63_minus_1(tmp_path, path):
    client = _client(tmp_path)
    body = {"player": "tess", "agents": ["heuristic", "random"]}
    for seed in (0, 2**63 - 1):
        assert client.post(path, json={**body, "seed": seed}).status_code in (200, 201), (path, seed)
    for seed in (-1, 2**63, 1.0, True):
        api_error(client.post(path, json={**body, "seed": seed}), 400, "field 'seed' must be an integer 0..2^63-1")


def test_a_seat_is_0_or_1(tmp_path):
    client = _client(tmp_path)
    for seat in (0, 1):
        _new(client, seed=2, seat=seat)
    for seat in (2, -1, "0", False):
        api_error(client.post("/api/games", json={"player": "tess", "seat": seat}), 400, "field 'seat' must be 0 or 1")


# ---------------------------------------------------------------------------------------------- moves
def test_an_out_of_range_action_is_an_illegal_move_named_by_its_number(tmp_path):
    client = _client(tmp_path)
    created = _new(client, seed=6, seat=0)
    for action in (37, -1, 10**6):
        api_error(client.post(f"/api/games/{created['id']}/move", json={"action": action}), 400,
                  f"illegal move 'action {action}'; legal now: ")


def test_next_deal_after_a_single_deal_game_ended_is_409(tmp_path):
    """docs/play.md: "next deal" after the game ended is a 409 (and a move says to start a new one)."""
    client = _client(tmp_path)
    created = _new(client, seed=13, bummerl=False)
    _finish_deal(client, created["id"], created["view"])
    api_error(client.post(f"/api/games/{created['id']}/next"), 409, "the game is over; start a new one")


def test_next_deal_deals_again_and_keeps_the_first_record(tmp_path):
    client = _client(tmp_path)
    created = _new(client, seed=14, seat=0)
    _finish_deal(client, created["id"], created["view"])
    first = client.get(f"/api/games/{created['id']}/deals/1").json()
    after = client.post(f"/api/games/{created['id']}/next")
    assert after.status_code == 200 and after.json()["view"]["deal"] == 2
    assert client.get(f"/api/games/{created['id']}/deals/1").json() == first
    api_error(client.get(f"/api/games/{created['id']}/deals/2"), 404, "no finished deal", "(1 finished)")


# ---------------------------------------------------------------------------------------------- finished deals
def test_a_finished_deals_frames_name_the_human_you_and_the_opponent_by_its_spec(tmp_path):
    client = _client(tmp_path)
    for seat in (0, 1):
        created = _new(client, seed=15, seat=seat, opponent="random")
        _finish_deal(client, created["id"], created["view"])
        deal = client.get(f"/api/games/{created['id']}/deals/1").json()
        assert deal["human"] == seat
        names = deal["frames"][0]["names"]
        assert names[seat] == "you" and names[1 - seat] == "random", names


def test_a_game_id_with_a_final_newline_is_unknown_for_its_deals_too(tmp_path):
    client = _client(tmp_path)
    created = _new(client, seed=16)
    _finish_deal(client, created["id"], created["view"])
    assert client.get(f"/api/games/{created['id']}/deals/1").status_code == 200
    api_error(client.get(f"/api/games/{created['id']}%0A/deals/1"), 404, "unknown game id")
    api_error(client.get("/api/games/short/deals/1"), 404, "unknown game id")


# ---------------------------------------------------------------------------------------------- watch and replay
def test_watch_step_takes_exactly_two_agents_and_move_names(tmp_path):
    client = _client(tmp_path)
    for agents in (["heuristic"], ["heuristic", "random", "random"], []):
        api_error(client.post("/api/watch/step", json={"agents": agents, "seed": 1}), 400, "two agents")
    api_error(client.post("/api/watch/step", json={"agents": ["heuristic", "random"], "seed": 1, "moves": [5]}), 400,
              "move 1 must be a move name, got 5")


def test_watch_step_deals_as_watch_start_did_and_refuses_a_finished_deal(tmp_path):
    """The step replays the deal the start page showed (seed and dealer); once the deal is over it is a 409."""
    client = _client(tmp_path)
    for seed in (12, 13):
        start = client.post("/api/watch/start", json={"seed": seed}).json()["frame"]
        moves, step = [], None
        for _ in range(64):
            step = client.post("/api/watch/step", json={"agents": ["random", "random"], "seed": seed, "moves": moves})
            assert step.status_code == 200, step.text
            moves.append(step.json()["move"])
            if step.json()["over"]:
                break
        record = step.json()["record"]
        assert record["dealer"] == start["dealer"] == seed % 2
        assert step.json()["frame"]["names"] == ["random (player 0)", "random (player 1)"]
        api_error(client.post("/api/watch/step", json={"agents": ["random", "random"], "seed": seed, "moves": moves}),
                  409, "the deal is over")


def _deals_document(count: int) -> dict:
    from sixtysix_env import Game, Rules
    from sixtysix_env.record import game_to_record

    records = [game_to_record(Game.deal(Rules.preset("standard"), seed=seed, dealer=seed % 2)) for seed in range(count)]
    return {"format": "sixtysix-deals", "version": 1, "rules": records[0]["rules"],
            "deals": [{"dealer": record["dealer"], "deck": record["deck"]} for record in records]}


def test_replay_of_a_deal_file_checks_the_index_and_the_two_agents(tmp_path):
    client = _client(tmp_path)
    deals = _deals_document(2)
    assert client.post("/api/replay", json={"deals": deals, "index": 1}).status_code == 200
    for index in (2, -1, "0"):
        api_error(client.post("/api/replay", json={"deals": deals, "index": index}), 400,
                     "field 'index' must be a deal index 0..1")
    for agents in (["heuristic"], ["heuristic", "random", "random"]):
        api_error(client.post("/api/replay", json={"deals": deals, "agents": agents}), 400, "two agents")
    api_error(client.post("/api/replay", json={"deals": deals, "agents": ["heuristic", "greedy"]}), 400,
              "unknown opponent 'greedy'")


# ---------------------------------------------------------------------------------------------- host names
def test_a_loopback_server_answers_to_its_loopback_names_with_or_without_a_port(tmp_path):
    client = _client(tmp_path)
    for host in ("127.0.0.1", "127.0.0.1:8066", "localhost", "localhost:8066", "[::1]", "[::1]:8066"):
        assert client.get("/api/agents", headers={"Host": host}).status_code == 200, host
    for host in ("evil.example", "evil.example:8066", "127.0.0.1.evil.example", "[::2]:8066"):
        api_error(client.get("/api/agents", headers={"Host": host}), 400, "not accepted", "127.0.0.1, localhost")


def test_a_server_on_another_interface_answers_to_its_addresses_and_names_not_to_any_name(tmp_path):
    """A security review: bound to 0.0.0.0 the server answered to any host name, so a page whose own domain name
    was pointed at this machine (DNS rebinding) read a player's history and games and posted moves. It answers to
    IP addresses (which rebinding never sends), this machine's names, and the names of --allowed-hosts."""
    import socket

    client = _client(tmp_path, host="0.0.0.0")
    for host in ("192.168.1.20:8066", "10.0.0.5", "[fe80::1]:8066", "127.0.0.1:8066", "localhost",
                 socket.gethostname(), socket.gethostname().upper() + ":8066"):
        assert client.get("/api/agents", headers={"Host": host}).status_code == 200, host
    for host in ("evil.example", "evil.example:8066", "table.example"):
        api_error(client.get("/api/agents", headers={"Host": host}), 400, "not accepted", "any of its addresses",
                  "--allowed-hosts")
    named = _client(tmp_path, host="0.0.0.0", allowed_hosts=("table.example",))
    assert named.get("/api/agents", headers={"Host": "table.example:8066"}).status_code == 200
    assert named.get("/api/agents", headers={"Host": "evil.example"}).status_code == 400
    other_loopback = _client(tmp_path, host="127.0.0.2")  # all of 127.0.0.0/8 is loopback: names only
    assert other_loopback.get("/api/agents", headers={"Host": "127.0.0.2:8066"}).status_code == 200
    assert other_loopback.get("/api/agents", headers={"Host": "10.0.0.5"}).status_code == 400


def test_no_page_or_answer_may_be_framed_by_another_site(tmp_path):
    """A security review: a page on another port framed the play page invisibly, and one click meant for it played
    a card of the game the browser keeps (clickjacking)."""
    client = _client(tmp_path)
    for path in ("/", "/watch", "/replay", "/history", "/api/agents", "/static/play.js", "/api/games/nosuchgame1"):
        response = client.get(path)
        assert response.headers["x-frame-options"] == "DENY", path
        assert response.headers["content-security-policy"] == "frame-ancestors 'none'", path


def test_the_default_settings_bind_to_loopback():
    assert ServerSettings().host == "127.0.0.1"


# ---------------------------------------------------------------------------------------------- expiry and memory
def test_an_expired_game_held_in_memory_is_410(tmp_path):
    """A game without a request for idle_minutes expires (410), also while its session is still cached."""
    client = _client(tmp_path)
    game_id = _new(client, seed=17)["id"]
    assert game_id in client.app.state.house.cache
    client.app.state.store._run("UPDATE games SET updated=updated-100000 WHERE id=?", (game_id,))
    client.app.state.house.sweep(force=True)
    api_error(client.get(f"/api/games/{game_id}"), 410, "expired after 240 minutes")
    api_error(client.post(f"/api/games/{game_id}/move", json={"action": 0}), 410, "expired")


def test_a_game_idle_for_less_than_idle_minutes_lives(tmp_path):
    client = _client(tmp_path, idle_minutes=240)
    game_id = _new(client, seed=18)["id"]
    client.app.state.store._run("UPDATE games SET updated=updated-3600 WHERE id=?", (game_id,))  # one hour
    client.app.state.house.sweep(force=True)
    assert client.get(f"/api/games/{game_id}").status_code == 200


def test_the_sessions_kept_in_memory_are_the_most_recently_used(tmp_path):
    """GameHouse: an LRU cache of at most cache_size sessions; a game read recently stays in memory."""
    client = _client(tmp_path, cache_size=2)
    first, second = _new(client, seed=1)["id"], _new(client, seed=2)["id"]
    assert client.get(f"/api/games/{first}").status_code == 200
    third = _new(client, seed=3)["id"]
    assert list(client.app.state.house.cache) == [first, third]
    assert client.get(f"/api/games/{second}").status_code == 200  # rebuilt from SQLite


def test_a_stored_game_missing_a_part_is_a_500_naming_the_game(tmp_path):
    """docs/play.md: a stored game that cannot be rebuilt is a 500 that says so (not the anonymous internal error)."""
    client = _client(tmp_path, cache_size=1)
    first = _new(client, seed=1)["id"]
    _new(client, seed=2)  # pushes the first game out of memory
    state = json.loads(client.app.state.store._run("SELECT state FROM games WHERE id=?", (first,))[0][0])
    for damage in ("settings", "human_decisions"):
        client.app.state.store._run("UPDATE games SET state=? WHERE id=?",
                                    (json.dumps({k: v for k, v in state.items() if k != damage}), first))
        api_error(client.get(f"/api/games/{first}"), 500, f"the stored game {first!r} cannot be rebuilt")


# ---------------------------------------------------------------------------------------------- serve's options
def test_serve_options_are_checked_by_name():
    base = ["--agents", "heuristic"]
    assert parse_args([*base, "--port", "65535"]).port == 65535
    for options, message in ((["--port", "65536"], "--port must be 1..65535"),
                             (["--port", "0"], "--port must be 1..65535"),
                             (["--max-games", "0"], "--max-games must be at least 1"),
                             (["--idle-minutes", "nan"], "--idle-minutes must be a positive number"),
                             (["--idle-minutes", "inf"], "--idle-minutes must be a positive number"),
                             (["--hint-seconds", "0"], "--hint-seconds must be a positive number"),
                             (["--analysis-seconds", "-1"], "--analysis-seconds must be a positive number")):
        with pytest.raises(ValueError, match=message.replace(".", r"\.")):
            parse_args([*base, *options])
    settings = parse_args([*base, "--max-games", "1", "--idle-minutes", "0.5", "--hint-seconds", "1.5",
                           "--analysis-seconds", "3", "--host", "::1"])
    assert (settings.max_games, settings.idle_minutes, settings.hint_seconds, settings.analysis_seconds,
            settings.host, settings.agents) == (1, 0.5, 1.5, 3.0, "::1", ("heuristic",))



# ---------------------------------------------------------------------------------------------- long values
def test_a_huge_bad_move_or_action_is_named_cut_short_not_echoed(tmp_path):
    """As for a huge seed or move name (test_play_web*.py): a bad value in an error message is cut short. A bad move
    of /api/watch/step (a 100 kB name, a long list, a 4000-digit number) and a 4000-digit action were echoed whole."""
    client = _client(tmp_path)
    for move in ("x" * 100_000, "play " + "x" * 100_000, [1] * 50_000, 9**4000):
        response = client.post("/api/watch/step", json={"agents": ["heuristic", "random"], "seed": 1,
                                                        "moves": [move]})
        message = api_error(response, 400, "move 1")
        assert len(message) < 300, message[:200]
    game_id = _new(client, seed=20, seat=0)["id"]
    response = client.post(f"/api/games/{game_id}/move", content=b'{"action": ' + b"9" * 4000 + b"}", headers=JSON)
    message = api_error(response, 400, "illegal move 'action 999", "legal now: ")
    assert len(message) < 300, message[:200]


# ---------------------------------------------------------------------------------------------- a failing agent
def test_a_move_while_the_agent_still_owes_its_first_move_is_409_and_reading_the_game_makes_it(tmp_path, monkeypatch):
    """The agent's opening move fails as the game is created (a 500): the stored game waits on the agent. A move
    then is a 409 ("it is not your turn", docs/play.md) and changes nothing; reading the game lets the agent move."""
    import logging

    from play.session import PlaySession

    client = _client(tmp_path)
    seat = next(seat for seat in (0, 1) if _new(client, seed=21, seat=seat)["view"]["move_number"] == 1)
    real = PlaySession.run_agent

    def fails_once(session):
        monkeypatch.setattr(PlaySession, "run_agent", real)
        raise RuntimeError("the agent failed")

    monkeypatch.setattr(PlaySession, "run_agent", fails_once)
    logging.getLogger("play.web.server").setLevel(logging.CRITICAL + 1)
    try:
        api_error(client.post("/api/games", json={"player": "ulf", "seed": 21, "seat": seat}), 500, "internal error")
    finally:
        logging.getLogger("play.web.server").setLevel(logging.NOTSET)
    store = client.app.state.store
    game_id = store._run("SELECT id FROM games WHERE player='ulf'")[0][0]
    state = store._run("SELECT state FROM games WHERE id=?", (game_id,))
    for action in range(37):
        api_error(client.post(f"/api/games/{game_id}/move", json={"action": action}), 409, "it is not your turn")
    assert store._run("SELECT state FROM games WHERE id=?", (game_id,)) == state
    view = client.get(f"/api/games/{game_id}").json()["view"]
    assert view["move_number"] == 1 and view["legal"]


def test_a_body_that_stops_arriving_is_refused_after_the_deadline():
    """A security review: 40 connections that each sent all but the last byte of a 4 MB body held their buffers
    for good (the server's memory grew by 180 MB, and no answer came). A body must arrive within body_seconds."""
    import asyncio

    from starlette.requests import Request

    from play.web.server import ApiError, read_body

    async def trickle():
        yield {"type": "http.request", "body": b"{\"a\":", "more_body": True}
        await asyncio.sleep(3600)  # the rest never comes

    async def read():
        messages = trickle()
        request = Request({"type": "http", "method": "POST", "path": "/api/replay",
                           "headers": [(b"content-length", b"10")]}, receive=messages.__anext__)
        return await read_body(request, ServerSettings(body_seconds=0.05))

    with pytest.raises(ApiError) as refused:
        asyncio.run(read())
    assert refused.value.status == 408 and "did not arrive within 0.05 s" in str(refused.value)


def test_a_large_body_is_parsed_off_the_event_loop(tmp_path, monkeypatch):
    """The strict reader's checks scan a body in Python (about 0.5 s for 4 MB): a large body is parsed in a worker
    thread, so other requests are answered meanwhile; a small one stays on the loop. Both give the same answer."""
    import asyncio

    import play.web.server as server_module

    on_the_loop = []
    real = server_module.loads_json

    def spy(text, what):
        try:
            asyncio.get_running_loop()  # a worker thread runs no event loop
            on_the_loop.append(True)
        except RuntimeError:
            on_the_loop.append(False)
        return real(text, what)

    monkeypatch.setattr(server_module, "loads_json", spy)
    client = _client(tmp_path)
    padding = "x" * (server_module.LARGE_BODY_CHARS + 1)
    for body in ({"player": "tess"}, {"player": "tess", "padding": padding}):
        assert client.post("/api/games", json=body).status_code == 201
    assert on_the_loop == [True, False]
