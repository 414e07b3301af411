"""The browser app's input handling (play/web/server.py): hostile or odd requests get a 4xx JSON error naming what is
wrong (never a 500, nothing half-written in the database), bounds hold under concurrent requests, and any request
keeps a game alive (docs/play.md, "Safety and information hygiene")."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")

from web_helpers import JSON, TestClient, api_error, web_client, web_settings  # noqa: E402

import play.analysis  # noqa: E402
from play.web.server import ServerSettings, create_app  # noqa: E402
from sixtysix_env import Game, Rules  # noqa: E402
from sixtysix_env.record import game_to_record  # noqa: E402

AGENTS = ("heuristic", "random")


def _settings(tmp_path, **overrides) -> ServerSettings:
    return web_settings(tmp_path, AGENTS, **overrides)


def _client(tmp_path, **overrides) -> TestClient:
    return web_client(tmp_path, AGENTS, **overrides)


def _async_client(app) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


def _rows(app, table: str) -> int:
    return app.state.store._run(f"SELECT COUNT(*) FROM {table}")[0][0]


def _still_serves(client) -> None:
    assert client.post("/api/games", json={"player": "after", "seed": 1}).status_code == 201


def _finish_first_deal(client, game_id: str, view: dict, seed: int = 0) -> None:
    """Random legal moves until deal 1 is over (a Bummerl, R17, goes on: the game stays live)."""
    rng = random.Random(seed)
    while view["result"] is None:
        move = {"action": rng.choice(view["legal"])["id"]}
        view = client.post(f"/api/games/{game_id}/move", json=move).json()["view"]


def _fake_analysis(record, human, decisions, *args):
    """Stands in for play.analysis.analyse_deal (a real open solve takes seconds); analysis_headline accepts it."""
    time.sleep(0.3)  # long enough for a second request to arrive while this one runs
    return {"open": {"slipped_at": None, "could_have_won": False, "solved": False, "start_value": None, "moves": []},
            "search": [], "result": record["result"], "human": human}


# ---------------------------------------------------------------------------------------------- 1: strict JSON
def test_strict_json_body_refuses_deep_nesting_duplicate_keys_and_huge_numbers(tmp_path):
    client = _client(tmp_path)
    cases = [
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 64 levels"),
        (b'{"player": "a", "player": "b"}', "duplicate key 'player'"),
        (b'{"player": "ann", "seed": ' + b"9" * 5000 + b"}", "field 'seed'"),
        (b'{"player": "ann", "seed": [' + b"9" * 5000 + b"]}", "a number"),
        (b'{"player": "ann", "seed": NaN}', "NaN"),
        (b'{"player": "\xff"}', "not UTF-8"),
    ]
    for body, words in cases:
        response = client.post("/api/games", content=body, headers=JSON)
        message = api_error(response, 400, "malformed JSON body", words)
        assert "set_int_max_str_digits" not in message and len(message) < 300, message
    assert "more than 4300 digits" in client.post("/api/games", content=cases[2][0], headers=JSON).json()["error"]
    assert _rows(client.app, "games") == 0
    _still_serves(client)


def test_a_long_value_is_not_echoed_whole(tmp_path):
    """A 4,000-digit seed parses (under CPython's 4300-digit limit) but is out of range: the message stays short."""
    client = _client(tmp_path)
    response = client.post("/api/games", content=b'{"player": "ann", "seed": ' + b"9" * 4000 + b"}", headers=JSON)
    message = api_error(response, 400, "field 'seed' must be an integer 0..2^63-1")
    assert len(message) < 300 and _rows(client.app, "games") == 0


# ---------------------------------------------------------------------------------------------- 2: replay, R21
def test_replay_shows_three_player_records_and_refuses_their_deal_files(tmp_path):
    """R21: a three-player record is replayed with three open hands, no talon and the trump unnamed until forehand
    names it, trick by trick; a three-player deal file (two agents play a deal file here) is refused with a 400."""
    client = _client(tmp_path)
    three = Rules.preset("three")
    game = Game.deal(three, seed=5, dealer=2)
    rng = random.Random(5)
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    record = game_to_record(game)
    response = client.post("/api/replay", json={"record": record})
    assert response.status_code == 200, response.text
    frames = response.json()["frames"]
    assert len(frames) == len(record["actions"]) + 1 and frames[-1]["result"] == record["result"]
    first = frames[0]
    assert [len(hand) for hand in first["hands"]] == [8, 8, 8] and first["names"] == ["player 0", "player 1",
                                                                                         "player 2"]
    assert first["trump_suit"] is None and first["talon_size"] == 0 and first["trump_card"] is None
    assert first["to_move"] == 0 and "player 0 names trump" in first["text"]  # forehand sits left of dealer 2
    assert frames[1]["trump_suit"] == record["actions"][0][-1]  # "name trump H" -> H
    assert sorted(card for hand in first["hands"] for card in hand) == sorted(record["deck"])
    finished = [frame for frame in frames if "the trick" in frame["text"]]
    assert len(finished) == 8  # eight tricks of three cards (R21)
    for frame in finished:
        assert len(frame["last_trick"]["cards"]) == 3 and frame["table"] is None
    assert [frame["last_trick"]["winner"] for frame in finished] == [trick[2] for trick in game.tricks]
    assert frames[-1]["points"] == record["result"]["points"] and sum(map(len, frames[-1]["hands"])) == 0
    deals = {"format": "sixtysix-deals", "version": 1, "rules": three.to_dict(),
             "deals": [{"dealer": 2, "deck": record["deck"]}]}
    api_error(client.post("/api/replay", json={"deals": deals, "index": 0}), 400, "played here by two agents",
              "R21", "--records")
    api_error(client.post("/api/replay", json={"record": {"format": "nope"}}), 400, "bad game record")


def test_an_agent_that_cannot_play_the_rules_asked_is_a_400_naming_it(tmp_path):
    """``ppo`` (a network of the standard rules, R19-R20) is offered since it plays one preset; a new game, a
    watched move or a replayed deal file under other rules failed with a 500 at its first decision."""
    from eval.deals import generate_deals, save_deals

    client = web_client(tmp_path, ("random", "ppo"))
    for rules in ("scharf", "paderborn"):
        api_error(client.post("/api/games", json={"player": "a", "opponent": "ppo", "rules": rules}), 400,
                  "agent 'ppo' cannot play these rules: it plays standard only")
        api_error(client.post("/api/watch/step", json={"agents": ["random", "ppo"], "rules": rules, "seed": 4,
                                                       "moves": []}), 400, "agent 'ppo' cannot play these rules")
    paderborn = Rules.preset("paderborn")
    save_deals(tmp_path / "deals.json", generate_deals(1, 1, paderborn), paderborn)
    deals = json.loads((tmp_path / "deals.json").read_text())
    message = api_error(client.post("/api/replay", json={"deals": deals, "agents": ["ppo", "random"]}), 400,
                        "agent 'ppo' cannot play these rules: it plays standard only")
    assert "models" not in message and ".zip" not in message  # no path on the server's disk
    # the page is told which pairs these are, so it can grey them out (R19-R20: ppo's network is the standard one)
    meta = client.get("/api/agents").json()
    assert meta["plays"] == {"random": ["standard", "paderborn", "scharf"], "ppo": ["standard"]}
    assert {name: Rules.from_dict(switches) for name, switches in meta["presets"].items()} == {
        name: Rules.preset(name) for name in ("standard", "paderborn", "scharf")}  # how a deal file's rules read
    # what it plays still works, and the other agent plays the other rules
    assert client.post("/api/games", json={"player": "a", "opponent": "ppo", "rules": "standard"}).status_code == 201
    assert client.post("/api/games", json={"player": "a", "opponent": "random", "rules": "scharf"}).status_code == 201
    assert client.post("/api/replay", json={"deals": deals, "agents": ["random", "random"]}).status_code == 200


# ---------------------------------------------------------------------------------------------- 3: internal errors
@pytest.mark.parametrize("failure", [RuntimeError, ValueError])  # a ValueError inside the server is no bad input
def test_an_unexpected_error_is_a_json_500_with_the_traceback_only_in_the_log(tmp_path, monkeypatch, caplog, failure):
    client = _client(tmp_path)

    def broken(player):
        raise failure("secret detail of the failure")

    monkeypatch.setattr(client.app.state.store, "history", broken)
    with caplog.at_level(logging.ERROR):
        response = client.get("/api/players/ann/history")
    api_error(response, 500, "internal error")
    assert "secret detail" not in response.text and "Traceback" not in response.text
    assert response.headers["content-type"].startswith("application/json")
    logged = [record for record in caplog.records if record.exc_info]
    assert logged and "secret detail" in caplog.text and "/api/players/ann/history" in caplog.text
    monkeypatch.undo()
    assert client.get("/api/players/ann/history").status_code == 200
    _still_serves(client)


# ---------------------------------------------------------------------------------------------- 4: --max-games
def test_simultaneous_new_games_do_not_exceed_max_games(tmp_path):
    app = create_app(_settings(tmp_path, max_games=2))

    async def create_many():
        async with _async_client(app) as client:
            responses = await asyncio.gather(*(client.post("/api/games", json={"player": "bo", "seed": n})
                                               for n in range(6)))
            return [response.status_code for response in responses]

    statuses = asyncio.run(create_many())
    assert sorted(statuses) == [201, 201, 503, 503, 503, 503], statuses
    assert _rows(app, "games") == 2 and app.state.store.live_count() == 2
    assert app.state.house.reserved == 0  # every reservation released, also by the refused requests


# ---------------------------------------------------------------------------------------------- 5: chunked bodies
def test_a_chunked_body_over_the_limit_is_refused_before_it_is_read_whole(tmp_path):
    app = create_app(_settings(tmp_path, max_body_bytes=1000))
    chunk, total = b" " * 100, 1000  # 100 kB of JSON whitespace, sent without a Content-Length
    yielded = 0

    async def chunks():
        nonlocal yielded
        for _ in range(total):
            yielded += 1
            yield chunk

    async def post_then_create():
        async with _async_client(app) as client:
            refused = await client.post("/api/games", content=chunks(), headers=JSON)
            created = await client.post("/api/games", json={"player": "cy", "seed": 3})
            return refused, created

    refused, created = asyncio.run(post_then_create())
    api_error(refused, 413, "too large", "1000 bytes")
    assert yielded <= 1000 // len(chunk) + 2, f"the server read {yielded} of {total} chunks"
    assert created.status_code == 201 and _rows(app, "games") == 1


# ---------------------------------------------------------------------------------------------- 6: idle expiry
def test_every_request_to_a_game_keeps_it_alive(tmp_path, monkeypatch):
    """docs/play.md: a game expires after --idle-minutes *without a request*; reading it counts as one."""
    monkeypatch.setattr(play.analysis, "analyse_deal", _fake_analysis)
    client = _client(tmp_path)
    created = client.post("/api/games", json={"player": "di", "seed": 7, "seat": 0}).json()
    game_id = created["id"]
    _finish_first_deal(client, game_id, created["view"])
    store, house = client.app.state.store, client.app.state.house
    requests = {"GET game": lambda: client.get(f"/api/games/{game_id}"),
                "GET deal": lambda: client.get(f"/api/games/{game_id}/deals/1"),
                "POST analysis": lambda: client.post(f"/api/games/{game_id}/deals/1/analysis")}
    for name, request in requests.items():
        store._run("UPDATE games SET updated=updated-100000 WHERE id=?", (game_id,))
        assert request().status_code == 200, name
        house.sweep(force=True)
        updated, expired = store._run("SELECT updated, expired FROM games WHERE id=?", (game_id,))[0]
        assert not expired and updated > time.time() - 60, f"{name} did not refresh the game's last use"


# ---------------------------------------------------------------------------------------------- 7: 415
def test_endpoints_without_a_body_refuse_a_non_json_one(tmp_path):
    client = _client(tmp_path)
    created = client.post("/api/games", json={"player": "ed", "seed": 8, "seat": 0}).json()
    game_id = created["id"]
    state = client.app.state.store._run("SELECT state FROM games WHERE id=?", (game_id,))
    text = {"Content-Type": "text/plain"}
    for path in ("hint", "next", "deals/1/analysis"):
        response = client.post(f"/api/games/{game_id}/{path}", content=b"x", headers=text)
        api_error(response, 415, "must be JSON", "'text/plain'")
    assert client.app.state.store._run("SELECT state FROM games WHERE id=?", (game_id,)) == state
    # no body (what static/common.js sends) and an empty JSON object are fine
    assert client.post(f"/api/games/{game_id}/hint").status_code == 200
    assert client.post(f"/api/games/{game_id}/hint", json={}).status_code == 200
    api_error(client.post(f"/api/games/{game_id}/next"), 409, "still being played")


# ---------------------------------------------------------------------------------------------- 8: deal numbers
def test_odd_deal_numbers_get_the_same_404(tmp_path):
    client = _client(tmp_path)
    game_id = client.post("/api/games", json={"player": "fi", "seed": 9}).json()["id"]
    for number in ("%C2%B2", "%D9%A3", "9" * 5000, "-1", "0", "1.0", "%201"):
        for response in (client.get(f"/api/games/{game_id}/deals/{number}"),
                         client.post(f"/api/games/{game_id}/deals/{number}/analysis")):
            message = api_error(response, 404, "no finished deal", "(0 finished)")
            assert len(message) < 300, message


# ---------------------------------------------------------------------------------------------- 9: one solve
def test_simultaneous_analyses_of_a_deal_run_one_solve(tmp_path, monkeypatch):
    calls = []

    def counting(*args):
        calls.append(args[0]["deck"])
        return _fake_analysis(*args)

    monkeypatch.setattr(play.analysis, "analyse_deal", counting)
    app = create_app(_settings(tmp_path))

    async def analyse_twice():
        async with _async_client(app) as client:
            created = (await client.post("/api/games", json={"player": "gu", "seed": 10, "seat": 1})).json()
            view, rng = created["view"], random.Random(10)
            while view["result"] is None:
                move = {"action": rng.choice(view["legal"])["id"]}
                view = (await client.post(f"/api/games/{created['id']}/move", json=move)).json()["view"]
            path = f"/api/games/{created['id']}/deals/1/analysis"
            return await asyncio.gather(client.post(path), client.post(path))

    first, second = asyncio.run(analyse_twice())
    assert first.status_code == second.status_code == 200, (first.text, second.text)
    assert first.json() == second.json()
    assert len(calls) == 1, f"{len(calls)} solves of the same deal"


# ---------------------------------------------------------------------------------------------- 10: after expiry
def test_finished_deals_stay_readable_after_the_game_expired(tmp_path, monkeypatch):
    """The history lists a game's finished deals with replay links after the game expired: the record and its
    analysis are read from the stored deals, and the analysis gets the human's moves (R8: his turns) from the
    record itself."""
    seen = []

    def recording(record, human, decisions, *args):
        seen.append((human, decisions))
        return _fake_analysis(record, human, decisions, *args)

    monkeypatch.setattr(play.analysis, "analyse_deal", recording)
    client = _client(tmp_path)
    created = client.post("/api/games", json={"player": "ha", "seed": 11, "seat": 1, "bummerl": True}).json()
    game_id = created["id"]
    _finish_first_deal(client, game_id, created["view"])
    house = client.app.state.house
    session = house.cache[game_id].session
    live_record = client.get(f"/api/games/{game_id}/deals/1").json()
    decisions = session.deal_decisions(1)
    client.app.state.store._run("UPDATE games SET updated=updated-100000 WHERE id=?", (game_id,))
    house.sweep(force=True)
    api_error(client.get(f"/api/games/{game_id}"), 410, "expired")
    assert client.get(f"/api/games/{game_id}/deals/1").json() == live_record
    assert client.post(f"/api/games/{game_id}/deals/1/analysis").status_code == 200
    assert seen == [(1, decisions)]
    api_error(client.get(f"/api/games/{game_id}/deals/2"), 404, "no finished deal", "(1 finished)")
    api_error(client.get("/api/games/nosuchgame01/deals/1"), 404, "unknown game id")


def test_the_human_decisions_read_from_a_record_are_the_sessions():
    from play.session import PlaySession, SessionSettings, decisions_of

    for seed in range(12):
        session = PlaySession(SessionSettings(opponent="random", seed=seed, match=False, human=seed % 2))
        rng = random.Random(seed)
        session.run_agent()
        while not session.game.is_over:
            session.play(rng.choice(session.legal_moves()))
            session.run_agent()
        assert decisions_of(session.deal_record(1), session.human) == session.deal_decisions(1)


# ---------------------------------------------------------------------------------------------- 11: a failing agent
def test_an_agent_that_fails_once_leaves_the_game_as_last_stored(tmp_path, monkeypatch, caplog):
    """The agent's reply fails after the human's move (a 500): the game is not left waiting on the agent in memory.
    The next request rebuilds it from the database, where the move was never stored, and the human moves again."""
    client = _client(tmp_path)
    created = client.post("/api/games", json={"player": "ig", "seed": 12, "seat": 0, "bummerl": False}).json()
    game_id, view = created["id"], created["view"]
    session = client.app.state.house.cache[game_id].session
    real_act = session.agent.act

    def fails(infoset):
        session.agent.act = real_act  # only once
        raise RuntimeError("the agent failed")

    monkeypatch.setattr(session.agent, "act", fails)
    stored = client.app.state.store._run("SELECT state FROM games WHERE id=?", (game_id,))
    move = {"action": view["legal"][0]["id"]}
    caplog.set_level(logging.CRITICAL)  # the failure's traceback goes to the server's log
    api_error(client.post(f"/api/games/{game_id}/move", json=move), 500, "internal error")
    assert client.app.state.store._run("SELECT state FROM games WHERE id=?", (game_id,)) == stored
    again = client.get(f"/api/games/{game_id}").json()["view"]
    assert again["legal"] == view["legal"], "the human is to move again, as the database says"
    assert client.post(f"/api/games/{game_id}/move", json=move).status_code == 200


def test_a_move_after_the_game_ended_says_to_start_a_new_one(tmp_path):
    client = _client(tmp_path)
    created = client.post("/api/games", json={"player": "jo", "seed": 13, "bummerl": False}).json()
    _finish_first_deal(client, created["id"], created["view"])
    response = client.post(f"/api/games/{created['id']}/move", json={"action": 0})
    api_error(response, 409, "the game is over; start a new one")
