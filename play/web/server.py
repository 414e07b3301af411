"""``sixtysix serve``: the browser app (Starlette + uvicorn; plain HTML/JS pages in ``static/``, no build step).

Pages: ``/`` play a deal or a Bummerl (R17) against an agent, with hints and "could I have won?" after each deal;
``/watch`` two agents play, step by step or automatically; ``/replay`` step through a JSON game record or an entry
of a tournament's ``deals.json``; ``/history`` a player's deals, Bummerl and margin against each agent.

Safety (issue 13): the game lives on the server (:class:`~play.session.PlaySession`), every move is checked by the
engine, and a response holds only :meth:`PlaySession.view` — the human's information set — so the opponent's hidden
cards and the talon order never leave the server while a deal runs. Bad requests get a 4xx JSON ``{"error": ...}``
naming what is wrong and change nothing; an unexpected error is a JSON 500 whose traceback goes to the server's log
only. Live games are bounded (``max_games``) and expire after ``idle_minutes`` without a request; sessions are
cached in memory up to ``cache_size`` and otherwise rebuilt from SQLite, which also makes a restart (or ``kill -9``)
lose no game. Searches (agent moves, hints, analyses) run in a thread pool so the event loop keeps answering. The
server binds to 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import ipaddress
import json
import logging
import math
import re
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sixtysix_env import PRESET_NAMES, Game, InformationSet, Rules
from sixtysix_env.actions import ACTION_NAMES, parse_action
from sixtysix_env.cards import shown
from sixtysix_env.record import game_to_record, record_to_game
from sixtysix_env.schema import SEED_LIMIT, loads_json

from ..session import PlaySession, SessionSettings
from .frames import frames_of_game

STATIC = Path(__file__).with_name("static")
GAME_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")  # fullmatch: "$" alone also matches before a final newline
# A drawn seed must survive the pages' JavaScript numbers (exact up to 2^53): /watch sends its seed back with every
# step, and a rounded one would deal another deck than the one shown.
PAGE_SEED_BITS = 53
PLAYER_NAME = re.compile(r"[\w .-]{1,32}")  # \w: letters of any script (Jürgen, Zoë), digits and '_'
DEFAULT_AGENTS = ("heuristic", "pimc", "ismcts", "greedy", "random", "ppo")
MAX_DEAL_NUMBER_DIGITS = 6  # far more deals than any game has; longer text is not a deal number
THREE_PLAYER_DEALS = ("a deal file is played here by two agents; replay a three-player (R21) deal from its game record "
                      "instead (sixtysix tournament --rules three --records DIR)")
LOG = logging.getLogger(__name__)


@dataclass
class ServerSettings:
    """Options of ``sixtysix serve``."""

    host: str = "127.0.0.1"
    """Interface to bind; 127.0.0.1 keeps the server private to this machine."""
    port: int = 8066
    """TCP port."""
    db: str = "sixtysix-play.sqlite3"
    """SQLite file of games in progress and finished deals."""
    agents: tuple[str, ...] = DEFAULT_AGENTS
    """Agent specs a player may choose (only these: a spec with a huge search budget would tie up the server)."""
    max_games: int = 500
    """Live (unfinished, unexpired) games at most; a new game beyond it gets 503."""
    idle_minutes: float = 240.0
    """A game without a request for this long expires (410 afterwards)."""
    cache_size: int = 200
    """Sessions kept in memory; others are rebuilt from the database on their next request."""
    hint_seconds: float = 0.5
    """Search time of a hint."""
    analysis_seconds: float = 20.0
    """Time budget of the open solve of "could I have won?"."""
    max_body_bytes: int = 4_000_000
    """Largest request body (a deals.json of a big tournament fits)."""
    body_seconds: float = 30.0
    """Time a request body may take to arrive (408 after it): a client that sends all but its last bytes held its
    buffer for ever."""
    allowed_hosts: tuple[str, ...] = ()
    """Host names the server answers to besides its own (``--allowed-hosts``; see :func:`allowed_hosts`)."""
    search_workers: int = 2
    """Long searches (hints, analyses, watch and replay plays) running at the same time at most; the rest wait.
    Agents' replies in a game do not wait for them (they run in the thread pool directly)."""


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class LiveGame:
    session: PlaySession
    player: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # its last request: the store's "updated", kept in memory (read through a lambda, so a test's clock holds)
    touched: float = field(default_factory=lambda: time.time())


class GameHouse:
    """Live games: an LRU cache of sessions over the SQLite store, with expiry and a bound on their number."""

    def __init__(self, settings: ServerSettings, store):
        self.settings = settings
        self.store = store
        self.cache: OrderedDict[str, LiveGame] = OrderedDict()
        self.last_sweep = 0.0
        self.loading: dict[str, asyncio.Lock] = {}
        self.reserved = 0
        """New games counted against ``max_games`` but not yet in the database (their session is being built)."""

    def sweep(self, force: bool = False) -> None:
        """Expire idle games (at most once a minute unless forced) and drop them from memory."""
        now = time.time()
        if not force and now - self.last_sweep < 60:
            return
        self.last_sweep = now
        for game_id in self.store.expire_idle(self.settings.idle_minutes * 60):
            self.cache.pop(game_id, None)

    async def create(self, player: str, settings: SessionSettings) -> tuple[str, LiveGame]:
        self.sweep(force=True)
        # Check and reserve with no await in between: simultaneous requests cannot all pass the check while the
        # sessions are built in worker threads.
        if self.store.live_count() + self.reserved >= self.settings.max_games:
            raise ApiError(503, f"too many live games ({self.settings.max_games}); try again later")
        self.reserved += 1
        try:
            session = await run_in_threadpool(PlaySession, settings)
            game_id = secrets.token_urlsafe(12)
            live = LiveGame(session, player)
            self.store.create_game(game_id, player, settings.opponent, session.to_state(), settings.match)
        finally:
            self.reserved -= 1
        self._remember(game_id, live)
        return game_id, live

    def _remember(self, game_id: str, live: LiveGame) -> None:
        self.cache[game_id] = live
        self.cache.move_to_end(game_id)
        while len(self.cache) > self.settings.cache_size:
            oldest, old = next(iter(self.cache.items()))
            if old.lock.locked():
                break  # a request is using it; evict later
            self.cache.pop(oldest)

    async def get(self, game_id: str) -> LiveGame:
        if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id):
            raise ApiError(404, f"unknown game id {shown(game_id)}")
        self.sweep()
        live = self.cache.get(game_id)
        if live is not None and time.time() - live.touched > self.settings.idle_minutes * 60:
            # Idle past the limit since its last request: expired now, not at the next sweep up to a minute later.
            self.sweep(force=True)
            live = self.cache.get(game_id)
        if live is not None:
            self.cache.move_to_end(game_id)
        else:
            lock = self.loading.setdefault(game_id, asyncio.Lock())
            try:
                async with lock:  # one rebuild per game even when requests race
                    live = self.cache.get(game_id)
                    if live is None:
                        live = await self._rebuild(game_id)
            finally:
                self.loading.pop(game_id, None)  # also after a 404: unknown ids must not pile up here
        self.store.touch(game_id)  # any request to a game keeps it alive (docs/play.md)
        live.touched = time.time()
        return live

    async def _rebuild(self, game_id: str) -> LiveGame:
        self.sweep(force=True)  # a game idle past the limit is expired before it is read, not up to a minute later
        stored = self.store.load_game(game_id)
        if stored is None:
            raise ApiError(404, f"unknown game id {shown(game_id)}")
        state, player, expired = stored
        if expired:
            raise ApiError(410, f"game {game_id!r} expired after {self.settings.idle_minutes:g} minutes "
                                "without a request; start a new one")
        try:
            session = await run_in_threadpool(PlaySession.from_state, state)
        except (ValueError, KeyError, TypeError) as error:
            raise ApiError(500, f"the stored game {game_id!r} cannot be rebuilt: {error}") from None
        live = LiveGame(session, player)
        self._remember(game_id, live)
        return live

    async def run_agent(self, game_id: str, live: LiveGame) -> None:
        """The agent's moves until the human's turn or the deal's end, in a worker thread. If the agent fails, the
        session in memory is forgotten (it holds the human's unsaved move and waits on the agent), so the next
        request rebuilds the game from what was last stored, and the human may make his move again."""
        try:
            await run_in_threadpool(live.session.run_agent)
        except BaseException:
            if self.cache.get(game_id) is live:
                del self.cache[game_id]
            raise

    def save(self, game_id: str, live: LiveGame, deals_before: int) -> None:
        session = live.session
        new_deals = []
        for number in range(deals_before + 1, len(session.finished) + 1):
            record = session.deal_record(number)
            points = record_to_game(record).result.returns()[session.human]
            new_deals.append((number, points, json.dumps(record)))
        self.store.save_game(game_id, session.to_state(), session.session_over, session.view()["match"]["winner"]
                             if session.session_over else None, new_deals, live.player, session.settings.opponent,
                             session.human)


# ---------------------------------------------------------------------------------------------- helpers
async def read_body(request: Request, settings: ServerSettings) -> bytes:
    """The request body, refused with 413 as soon as it passes ``max_body_bytes``: read chunk by chunk, so a chunked
    upload (no Content-Length) is never held in memory whole."""
    too_large = ApiError(413, f"request body too large (at most {settings.max_body_bytes} bytes)")
    length = request.headers.get("content-length")
    if length is not None:
        if not (length.isascii() and length.isdigit()):
            raise ApiError(400, f"malformed Content-Length header {shown(length)}: a number of bytes")
        digits = length.lstrip("0") or "0"  # more digits than the limit has: too large, with no int() of a huge text
        if len(digits) > len(str(settings.max_body_bytes)) or int(digits) > settings.max_body_bytes:
            raise too_large
    chunks: list[bytes] = []

    async def receive() -> None:
        total = 0
        async for chunk in request.stream():
            total += len(chunk)
            if total > settings.max_body_bytes:
                raise too_large
            chunks.append(chunk)

    try:
        await asyncio.wait_for(receive(), settings.body_seconds)
    except ClientDisconnect:  # the client went away: nobody reads the answer, and it is no internal error
        raise ApiError(400, "the client disconnected before the request body was complete") from None
    except asyncio.TimeoutError:
        raise ApiError(408, f"the request body did not arrive within {settings.body_seconds:g} s") from None
    return b"".join(chunks)


async def read_json(request: Request, settings: ServerSettings) -> dict[str, Any]:
    """The JSON object of the request body ({} for no body); also called by endpoints that take no body, so that
    a non-JSON one gets the 415 of docs/play.md there too."""
    body = await read_body(request, settings)
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if body and content_type != "application/json":
        # Only JSON: a browser sends JSON to another origin only after a CORS preflight, which this server never
        # grants, so another web site cannot post moves or create games from a visitor's browser.
        raise ApiError(415, f"the request body must be JSON (Content-Type: application/json), got {content_type!r}")
    if not body:
        return {}
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ApiError(400, f"malformed JSON body: not UTF-8 text ({error.reason} at byte {error.start})") from None
    try:  # strict: duplicate keys, NaN, nesting deeper than 64 levels and overlong numbers are refused by name
        if len(text) > LARGE_BODY_CHARS:  # its checks scan in Python (0.5 s for 4 MB): not on the event loop
            value = await run_in_threadpool(loads_json, text, "malformed JSON body")
        else:
            value = loads_json(text, "malformed JSON body")
    except ValueError as error:
        raise ApiError(400, str(error)) from None
    if not isinstance(value, dict):
        raise ApiError(400, f"the request body must be a JSON object, got {type(value).__name__}")
    return value


def field_of(body: dict, name: str, kind: type, default: Any = ..., check=None, what: str = "") -> Any:
    """``body[name]`` checked to be a ``kind`` (a JSON true/false is not an integer here) passing ``check``."""
    if name not in body:
        if default is ...:
            raise ApiError(400, f"missing field {name!r}{' (' + what + ')' if what else ''}")
        return default
    value = body[name]
    wrong_bool = isinstance(value, bool) and kind is not bool
    if wrong_bool or not isinstance(value, kind) or (check is not None and not check(value)):
        raise ApiError(400, f"field {name!r} must be {what or kind.__name__}, got {shown(value)}")
    return value


def server_url(host: str, port: int) -> str:
    """The address to open: an IPv6 host goes in brackets (``http://[::1]:8000/``), or the port reads as part of it."""
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def refuse_a_stale_view(body: dict, session: PlaySession) -> None:
    """A move or hint may name the view it was chosen in (optional ``deal`` and ``move_number``): two tabs (or
    scripts) on one game would otherwise each have a move applied, the second to a position its sender never saw,
    or be shown a hint of another position. A view the game has left is a 409."""
    seen = {name: field_of(body, name, int, default=None, what=f"an integer, the {name} of the view it was chosen in")
            for name in ("deal", "move_number")}
    now = {"deal": session.deal_number, "move_number": len(session.game.history)}
    if any(seen[name] is not None and seen[name] != now[name] for name in now):
        raise ApiError(409, f"the game moved on since your view (it is at deal {now['deal']}, move "
                            f"{now['move_number']}); reload it")


def player_name(value: str) -> str:
    # Only dots ("." or "..") would name a history page whose address browsers tidy away (/api/players/../history).
    if not isinstance(value, str) or not PLAYER_NAME.fullmatch(value) or not value.strip(". "):
        raise ApiError(400, f"bad player name {shown(value)}: 1 to 32 letters, digits, spaces, '_', '.' or '-', "
                            "not only dots and spaces")
    return value


def agent_spec(value: Any, settings: ServerSettings) -> str:
    if not isinstance(value, str) or value not in settings.agents:
        raise ApiError(400, f"unknown opponent {shown(value)}; choose one of {', '.join(settings.agents)}")
    return value


def rules_preset(value: Any) -> Rules:
    if not isinstance(value, str) or value not in PRESET_NAMES:
        raise ApiError(400, f"unknown rules preset {shown(value)}; choose one of {', '.join(PRESET_NAMES)}")
    return Rules.preset(value)


def game_payload(game_id: str, live: LiveGame) -> dict[str, Any]:
    return {"id": game_id, "player": live.player, "view": live.session.view()}


# ---------------------------------------------------------------------------------------------- the app
def create_app(settings: ServerSettings | None = None, store=None) -> Starlette:
    from agents.registry import registered_names

    from .store import DamagedStoreError, Store

    settings = settings or ServerSettings()
    store = store or Store(settings.db)
    house = GameHouse(settings, store)
    searches = asyncio.Semaphore(settings.search_workers)
    analysing: dict[tuple[str, int], asyncio.Lock] = {}
    registered_names()  # register the built-in agents now, not inside the first new game's request

    async def search(function, *args):
        async with searches:
            return await run_in_threadpool(function, *args)

    def page(name: str):
        async def handler(request: Request):
            return FileResponse(STATIC / name, headers={"Cache-Control": "no-cache"})
        return handler

    async def agents(request: Request):
        # "plays": the presets each agent can play (R19-R21), so the pages offer only the pairs a game accepts
        plays = {spec: await run_in_threadpool(presets_played, spec) for spec in settings.agents}
        # each preset's switches, so the replay page knows a deal file's rules (it stores them as switches)
        presets = {name: Rules.preset(name).to_dict() for name in PRESET_NAMES}
        return JSONResponse({"agents": list(settings.agents), "rules": list(PRESET_NAMES), "plays": plays,
                             "presets": presets})

    async def new_game(request: Request):
        body = await read_json(request, settings)
        player = player_name(field_of(body, "player", str, what="a player name"))
        opponent = agent_spec(field_of(body, "opponent", str, "heuristic"), settings)
        rules = rules_preset(field_of(body, "rules", str, "standard"))
        await check_plays([opponent], rules)
        bummerl = field_of(body, "bummerl", bool, True, what="true or false")
        seed = field_of(body, "seed", int, secrets.randbits(PAGE_SEED_BITS), check=lambda v: 0 <= v < SEED_LIMIT,
                        what="an integer 0..2^63-1")
        session_settings = SessionSettings(opponent=opponent, rules=rules, match=bummerl, seed=seed,
                                           human=secrets.randbelow(2) if "seat" not in body else
                                           field_of(body, "seat", int, check=lambda v: v in (0, 1), what="0 or 1"),
                                           hint_seconds=settings.hint_seconds)
        game_id, live = await house.create(player, session_settings)
        async with live.lock:
            await house.run_agent(game_id, live)
            house.save(game_id, live, 0)
            return JSONResponse(game_payload(game_id, live), status_code=201)

    async def show_game(request: Request):
        game_id = request.path_params["game_id"]
        live = await house.get(game_id)
        async with live.lock:  # not while an agent is moving in a worker thread
            session = live.session
            if not session.game.is_over and session.game.to_move != session.human:
                # Rebuilt after the agent failed (GameHouse.run_agent): its move is still to come.
                deals_before = len(session.finished)
                await house.run_agent(game_id, live)
                house.save(game_id, live, deals_before)
            return JSONResponse(game_payload(game_id, live))

    async def move(request: Request):
        game_id = request.path_params["game_id"]
        body = await read_json(request, settings)
        live = await house.get(game_id)
        async with live.lock:
            session = live.session
            if "action" in body:
                action = field_of(body, "action", int, what="an action id 0..36 (docs/actions.md)")
            elif "move" in body:
                text = field_of(body, "move", str, what="a move name such as 'play QH'")
                try:
                    action = parse_action(text)
                except ValueError as error:
                    raise ApiError(400, f"field 'move': {error}") from None
            else:
                raise ApiError(400, "missing field 'action' (an action id) or 'move' (a name such as 'play QH')")
            if session.session_over:
                raise ApiError(409, "the game is over; start a new one")
            if session.game.is_over:
                raise ApiError(409, "the deal is over; ask for the next deal")
            if session.game.to_move != session.human:
                raise ApiError(409, "it is not your turn")
            refuse_a_stale_view(body, session)
            if action not in session.game.legal_actions():
                legal = ", ".join(ACTION_NAMES[a] for a in session.game.legal_actions())
                named = ACTION_NAMES[action] if 0 <= action < len(ACTION_NAMES) else f"action {shown(action)}"
                raise ApiError(400, f"illegal move {named!r}; legal now: {legal}")
            deals_before = len(session.finished)
            session.play(action)
            await house.run_agent(game_id, live)  # the agent's reply: not queued behind long searches
            house.save(game_id, live, deals_before)
            return JSONResponse(game_payload(game_id, live))

    async def next_deal(request: Request):
        game_id = request.path_params["game_id"]
        await read_json(request, settings)  # no body expected; a non-JSON one gets 415
        live = await house.get(game_id)
        async with live.lock:
            session = live.session
            if not session.game.is_over:
                raise ApiError(409, "the current deal is still being played")
            if session.session_over:
                raise ApiError(409, "the game is over; start a new one")
            session.next_deal()
            await house.run_agent(game_id, live)
            house.save(game_id, live, len(session.finished))
            return JSONResponse(game_payload(game_id, live))

    async def hint(request: Request):
        game_id = request.path_params["game_id"]
        body = await read_json(request, settings)  # optional: the view's deal and move_number; non-JSON gets 415
        live = await house.get(game_id)
        async with live.lock:
            session = live.session
            refuse_a_stale_view(body, session)
            if not session.human_to_move:
                raise ApiError(409, "it is not your turn")
            # The search is handed the human's information set only (PlaySession.hint builds it).
            rows = await search(session.hint)
            house.store.touch(game_id)
            return JSONResponse({"id": game_id, "hints": rows})

    def finished_deal(request: Request) -> tuple[str, int, dict, int, str]:
        """(game id, deal number, record, the human's seat, the opponent's spec) of the finished deal in the path,
        read from the stored deals: a game's finished deals stay readable after the game itself expired."""
        game_id = request.path_params["game_id"]
        if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id):
            raise ApiError(404, f"unknown game id {shown(game_id)}")
        finished = store.finished_deals(game_id)
        if finished is None:
            raise ApiError(404, f"unknown game id {shown(game_id)}")
        text = request.path_params["number"]
        # isdigit() alone admits '²', which int() refuses, and int() of a very long text hits Python's digit limit
        plain = text.isascii() and text.isdigit() and len(text) <= MAX_DEAL_NUMBER_DIGITS
        row = store.finished_deal(game_id, int(text)) if plain else None
        if row is None:
            raise ApiError(404, f"no finished deal {shown(text)} in this game ({finished} finished)")
        store.touch(game_id)  # any request to a game keeps it alive (docs/play.md)
        return (game_id, int(text), *row)

    async def deal_record(request: Request):
        game_id, number, record, human, opponent = finished_deal(request)
        names = ["", ""]
        names[human], names[1 - human] = "you", opponent
        return JSONResponse({"id": game_id, "number": number, "human": human, "record": record,
                             "frames": frames_of_game(record_to_game(record), names=names)})

    async def analysis(request: Request):
        from eval.deals import derive_seed

        from ..analysis import analyse_deal
        from ..session import decisions_of

        await read_json(request, settings)  # no body expected; a non-JSON one gets 415
        game_id, number, record, human, _opponent = finished_deal(request)
        # One solve per deal: a simultaneous request for it waits for the first and reads its stored result.
        lock = analysing.setdefault((game_id, number), asyncio.Lock())
        try:
            async with lock:
                cached = store.deal_analysis(game_id, number)
                if cached is None:
                    cached = await search(analyse_deal, record, human, decisions_of(record, human),
                                          settings.analysis_seconds, 0.2, derive_seed("analysis", game_id, number))
                    store.save_analysis(game_id, number, cached)
        finally:
            if analysing.get((game_id, number)) is lock:
                del analysing[(game_id, number)]  # the result is stored: later requests read it without a lock
        from ..terminal import analysis_headline

        return JSONResponse({"id": game_id, "number": number, "analysis": cached,
                             "headline": analysis_headline(cached)})

    async def history(request: Request):
        name = player_name(request.path_params["player"])
        return JSONResponse(store.history(name))

    async def watch_step(request: Request):
        """Stateless: the page sends the agents, rules, seed and the moves so far; the server replays them,
        lets the agent to move choose (seeded by the move number) and returns the new frame. Spectators see all
        hands (both players are agents)."""
        body = await read_json(request, settings)
        seats = field_of(body, "agents", list, what="a list of two agent specs")
        if len(seats) != 2:
            raise ApiError(400, "field 'agents' must name two agents")
        specs = [agent_spec(spec, settings) for spec in seats]
        rules = rules_preset(field_of(body, "rules", str, "standard"))
        await check_plays(specs, rules)
        seed = field_of(body, "seed", int, check=lambda v: 0 <= v < SEED_LIMIT, what="an integer 0..2^63-1")
        moves = field_of(body, "moves", list, [], what="a list of move names")
        if len(moves) > 64:
            raise ApiError(400, "field 'moves' is longer than any deal")
        game = Game.deal(rules, seed=seed, dealer=seed % 2)
        for number, text in enumerate(moves, start=1):
            if not isinstance(text, str):
                raise ApiError(400, f"move {number} must be a move name, got {shown(text)}")
            try:
                game.apply(parse_action(text))
            except ValueError as error:
                raise ApiError(400, f"move {number} ({shown(text)}): {error}") from None
        if game.is_over:
            raise ApiError(409, "the deal is over")
        action = await search(_agent_choice, specs[game.to_move], game, seed)
        game.apply(action)
        frame = frames_of_game(game, names=[f"{specs[0]} (player 0)", f"{specs[1]} (player 1)"], last_only=True)[-1]
        return JSONResponse({"move": ACTION_NAMES[action], "frame": frame, "over": game.is_over,
                             "record": game_to_record(game) if game.is_over else None})

    async def watch_start(request: Request):
        body = await read_json(request, settings)
        rules = rules_preset(field_of(body, "rules", str, "standard"))
        seed = field_of(body, "seed", int, secrets.randbits(PAGE_SEED_BITS), check=lambda v: 0 <= v < SEED_LIMIT,
                        what="an integer 0..2^63-1")
        game = Game.deal(rules, seed=seed, dealer=seed % 2)
        return JSONResponse({"seed": seed, "frame": frames_of_game(game, names=["player 0", "player 1"])[0]})

    async def replay(request: Request):
        """Frames of a JSON record (sixtysix_env/record.py), or of deal ``index`` of a deals.json played by two
        agents."""
        body = await read_json(request, settings)
        if "record" in body:
            try:
                game = record_to_game(body["record"])
            except ValueError as error:
                raise ApiError(400, f"bad game record: {error}") from None
            names = [f"player {seat}" for seat in range(game.rules.players)]  # R21: three seats
        elif "deals" in body:
            from eval.deals import parse_deals_document

            try:
                deals, rules = parse_deals_document(body["deals"], where="deals.json")
            except ValueError as error:
                raise ApiError(400, str(error)) from None
            if rules.players != 2:  # eval.play's play_deal plays two seats (R21 has three)
                raise ApiError(400, THREE_PLAYER_DEALS)
            index = field_of(body, "index", int, 0, check=lambda v: 0 <= v < len(deals),
                             what=f"a deal index 0..{len(deals) - 1}")
            specs = [agent_spec(spec, settings) for spec in field_of(body, "agents", list, ["heuristic", "heuristic"])]
            if len(specs) != 2:
                raise ApiError(400, "field 'agents' must name two agents")
            await check_plays(specs, rules)
            deal = deals[index]
            game = Game.deal(rules, deck=list(deal.deck), dealer=deal.dealer)
            game = await search(_play_out, game, specs, index)
            names = [f"{specs[0]} (player 0)", f"{specs[1]} (player 1)"]
        else:
            raise ApiError(400, "send {'record': a JSON game record} or {'deals': a deals.json document, 'index': n}")
        return JSONResponse({"frames": frames_of_game(game, names=names), "record": game_to_record(game)})

    async def api_error(request: Request, error: ApiError):
        return JSONResponse({"error": error.message}, status_code=error.status)

    async def http_error(request: Request, error: HTTPException):
        return JSONResponse({"error": error.detail}, status_code=error.status_code)

    async def damaged_store(request: Request, error: DamagedStoreError):
        return JSONResponse({"error": str(error)}, status_code=500)

    routes = [
        Route("/", page("play.html")),
        Route("/watch", page("watch.html")),
        Route("/replay", page("replay.html")),
        Route("/history", page("history.html")),
        Route("/api/agents", agents),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{game_id}", show_game),
        Route("/api/games/{game_id}/move", move, methods=["POST"]),
        Route("/api/games/{game_id}/next", next_deal, methods=["POST"]),
        Route("/api/games/{game_id}/hint", hint, methods=["POST"]),
        Route("/api/games/{game_id}/deals/{number}", deal_record),
        Route("/api/games/{game_id}/deals/{number}/analysis", analysis, methods=["POST"]),
        # :path, so a name holding "/" (sent as %2F, which the server decodes) is refused by name, not a bare 404
        Route("/api/players/{player:path}/history", history),
        Route("/api/watch/start", watch_start, methods=["POST"]),
        Route("/api/watch/step", watch_step, methods=["POST"]),
        Route("/api/replay", replay, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    names, any_address = allowed_hosts(settings.host, settings.allowed_hosts)
    middleware = [Middleware(InternalErrors), Middleware(HostCheck, allowed=names, any_address=any_address),
                  Middleware(NoFraming)]
    app = Starlette(routes=routes, middleware=middleware,
                    exception_handlers={ApiError: api_error, HTTPException: http_error,
                                        DamagedStoreError: damaged_store})
    app.state.house = house
    app.state.store = store
    app.state.settings = settings
    return app


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
LARGE_BODY_CHARS = 64_000


def _ip_address(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``name`` (a bind address or a Host name, ``[...]`` around IPv6) as an IP address, or ``None``."""
    try:
        return ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return None


def _is_loopback(host: str) -> bool:
    address = _ip_address(host)
    return address.is_loopback if address is not None else host == "localhost"  # all of 127.0.0.0/8, and ::1


def allowed_hosts(host: str, extra: tuple[str, ...] = ()) -> tuple[list[str], bool]:
    """The Host header names the server answers to, and whether any IP address is one of them. DNS rebinding (a page
    elsewhere that points its own domain name at this server, then reads its answers and posts moves) sends that
    domain name, never an address: a loopback bind answers to the loopback names only; another bind (``0.0.0.0``,
    a LAN address) to its addresses, so any IP literal, to this machine's names and to ``extra``
    (``--allowed-hosts``). Before, a bind off loopback answered to any name."""
    import socket

    if _is_loopback(host):
        return list(dict.fromkeys([*LOOPBACK_NAMES, host, *extra])), False
    own_names = [name.lower() for name in (socket.gethostname(), socket.getfqdn()) if name]
    return list(dict.fromkeys([*LOOPBACK_NAMES, *own_names, *extra])), True


class InternalErrors:
    """ASGI middleware (the outermost): an unexpected exception becomes a JSON 500 — the docs promise JSON errors —
    and its traceback goes to the server's log only (a client learns nothing of the code or its data)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_tracked(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_tracked)
        except Exception:
            LOG.exception("internal error answering %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise  # part of a response is out: the server closes the connection
            response = JSONResponse({"error": "internal error; the server's log has the details"}, status_code=500)
            await response(scope, receive, send)


class HostCheck:
    """ASGI middleware: refuse a request whose Host header is not an allowed name (:func:`allowed_hosts`), with a
    JSON error."""

    def __init__(self, app, allowed: list[str], any_address: bool = False):
        self.app = app
        self.allowed = allowed
        self.any_address = any_address

    def _accepts(self, name: str) -> bool:
        if name in self.allowed or name.lower() in self.allowed:
            return True
        return self.any_address and _ip_address(name) is not None

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if not self._accepts(name):
                addresses = " or any of its addresses" if self.any_address else ""
                response = JSONResponse({"error": f"host name {name!r} not accepted: this server answers to "
                                                  f"{', '.join(self.allowed)}{addresses} only (sixtysix serve "
                                                  "--allowed-hosts adds names)"}, status_code=400)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class NoFraming:
    """ASGI middleware: no page of this server may be shown inside another site's frame, where a click meant for
    that site would play a card of the game this browser keeps (clickjacking)."""

    HEADERS = [(b"x-frame-options", b"DENY"), (b"content-security-policy", b"frame-ancestors 'none'")]

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self.HEADERS]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _agent_choice(spec: str, game: Game, seed: int) -> int:
    from agents.registry import make_agent
    from eval.deals import derive_seed

    agent = make_agent(spec, seed=derive_seed("watch", seed, len(game.history)))
    agent.start_deal(game.to_move, game.rules)
    return agent.act(InformationSet(game, game.to_move))


def _play_out(game: Game, specs: list[str], index: int) -> Game:
    from agents.registry import make_agent
    from eval.play import play_deal

    agents = [make_agent(spec, seed=index * 2 + seat) for seat, spec in enumerate(specs)]
    play_deal(game, agents)
    return game


@functools.lru_cache(maxsize=256)
def _why_unplayable(spec: str, rules: Rules) -> str | None:
    """Why the agent of ``spec`` cannot play ``rules`` (a network fitted for others, R19-R21), or ``None``; asked
    once per pair (building an agent loads its networks)."""
    from agents.registry import agent_for_rules

    try:
        agent_for_rules(spec, rules)
    except ValueError as error:
        return str(error)
    return None


def presets_played(spec: str) -> list[str]:
    """The presets of :data:`PRESET_NAMES` the agent of ``spec`` can play (a network plays the rules it was fitted
    for, R19-R21), in their order; asked through :func:`_why_unplayable`'s cache."""
    return [preset for preset in PRESET_NAMES if _why_unplayable(spec, Rules.preset(preset)) is None]


async def check_plays(specs: list[str], rules: Rules) -> None:
    """A 400 for an agent offered (``--agents`` takes one that plays any preset) that cannot play these rules: its
    first move failed with a 500."""
    for spec in specs:
        reason = await run_in_threadpool(_why_unplayable, spec, rules)
        if reason is not None:
            # Named by the presets it plays: the agent's own reason names the model's path on the server.
            plays = await run_in_threadpool(presets_played, spec)
            raise ApiError(400, f"agent {spec!r} cannot play these rules: it plays {', '.join(plays)} only (a "
                                "network fitted for other rules, R19-R20)")


def parse_args(argv: list[str]) -> ServerSettings:
    defaults = ServerSettings()
    parser = argparse.ArgumentParser(prog="sixtysix serve", description="The Sixty-six browser app.")
    parser.add_argument("--host", default=defaults.host,
                        help="interface to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=defaults.port)
    parser.add_argument("--db", default=defaults.db, help="SQLite file for games and records")
    parser.add_argument("--agents", default=",".join(defaults.agents),
                        help="comma-separated opponent specs offered (pimc:samples=30,seconds=0.1 is one spec)")
    parser.add_argument("--allowed-hosts", default="",
                        help="comma-separated host names the server answers to besides its own (a bind off "
                             "loopback answers to its addresses and this machine's names; others are refused, "
                             "against DNS rebinding)")
    parser.add_argument("--max-games", type=int, default=defaults.max_games, help="live games at most (default 500)")
    parser.add_argument("--idle-minutes", type=float, default=defaults.idle_minutes,
                        help="a game without a request this long expires (default 240)")
    parser.add_argument("--hint-seconds", type=float, default=defaults.hint_seconds,
                        help="search time of a hint (default 0.5)")
    parser.add_argument("--analysis-seconds", type=float, default=defaults.analysis_seconds,
                        help='time budget of the open solve of "could I have won?" (default 20)')
    values = parser.parse_args(argv)
    if not 0 < values.port < 65536:
        raise ValueError(f"--port must be 1..65535, got {values.port}")
    if values.max_games < 1:
        raise ValueError(f"--max-games must be at least 1, got {values.max_games}")
    for option, value in (("--idle-minutes", values.idle_minutes), ("--hint-seconds", values.hint_seconds),
                          ("--analysis-seconds", values.analysis_seconds)):
        if not (math.isfinite(value) and value > 0):  # "nan" and "inf" parse as floats, and NaN passes "<= 0"
            raise ValueError(f"{option} must be a positive number, got {value}")
    from agents.registry import split_agent_list

    try:  # a spec's own parameters may hold commas: pimc:samples=30,seconds=0.1
        specs = tuple(split_agent_list(values.agents))
    except ValueError as error:
        raise ValueError(f"--agents: {error}") from None
    usable = []
    for spec in specs:
        try:  # an unknown spec, or an agent that plays none of the presets offered here (a three-player model)
            _refuse_unplayable(spec)
        except (ValueError, OSError) as error:
            if spec in DEFAULT_AGENTS and values.agents == ",".join(defaults.agents):
                continue  # a default agent whose model or library is missing here is just not offered
            raise ValueError(f"--agents: {error}") from None
        usable.append(spec)
    extra_hosts = tuple(name.strip().lower() for name in values.allowed_hosts.split(",") if name.strip())
    return ServerSettings(host=values.host, port=values.port, db=values.db, agents=tuple(usable),
                          max_games=values.max_games, idle_minutes=values.idle_minutes,
                          hint_seconds=values.hint_seconds, analysis_seconds=values.analysis_seconds,
                          allowed_hosts=extra_hosts)


def _refuse_unplayable(spec: str) -> None:
    """Refuse the agent of ``spec`` when it plays none of the presets of :data:`PRESET_NAMES` (R19-R21: a network
    fitted for other rules), with the error of the first preset (standard); an unknown spec is refused too. The
    answers are :func:`presets_played`'s, which ``/api/agents`` and the requests then find cached."""
    if not presets_played(spec):
        raise ValueError(_why_unplayable(spec, Rules.preset(PRESET_NAMES[0])))


def main(argv: list[str]) -> int:
    import socket
    import sqlite3

    import uvicorn

    from .store import Store

    settings = parse_args(argv)
    try:
        store = Store(settings.db)
    except (OSError, sqlite3.Error, ValueError) as error:  # ValueError: another program's database
        raise ValueError(f"cannot open the game database {settings.db!r}: {error}") from None
    try:  # a clear message for a busy port (uvicorn would only log it)
        with socket.socket(socket.AF_INET6 if ":" in settings.host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((settings.host, settings.port))
    except OSError as error:
        raise ValueError(f"cannot listen on {settings.host}:{settings.port}: {error.strerror or error}") from None
    print(f"Sixty-six: open {server_url(settings.host, settings.port)}  (games stored in {settings.db})", flush=True)
    uvicorn.run(create_app(settings, store), host=settings.host, port=settings.port, log_level="warning")
    return 0
