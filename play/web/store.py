"""SQLite storage of the browser app: games in progress (their session state after every move) and finished deals.

One file (path configurable); every write is a committed transaction in WAL mode, so a killed server loses at
most the request it was answering. A game is stored as its :meth:`PlaySession.to_state` — the moves, from which the
session is rebuilt by replaying them through the engine — never as pickled objects.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    player TEXT NOT NULL,
    opponent TEXT NOT NULL,
    state TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    finished INTEGER NOT NULL DEFAULT 0,
    expired INTEGER NOT NULL DEFAULT 0,
    bummerl INTEGER NOT NULL DEFAULT 1,
    winner TEXT
);
CREATE INDEX IF NOT EXISTS games_live ON games (finished, expired, updated);
CREATE INDEX IF NOT EXISTS games_player ON games (player);
CREATE TABLE IF NOT EXISTS deals (
    game_id TEXT NOT NULL,
    number INTEGER NOT NULL,
    player TEXT NOT NULL,
    opponent TEXT NOT NULL,
    human INTEGER NOT NULL,
    record TEXT NOT NULL,
    game_points INTEGER NOT NULL,
    finished REAL NOT NULL,
    analysis TEXT,
    PRIMARY KEY (game_id, number)
);
CREATE INDEX IF NOT EXISTS deals_player ON deals (player);
"""


class DamagedStoreError(RuntimeError):
    """A stored row that cannot be read back (the file edited or damaged outside the server): a fault of the
    server's data, answered with a 500 that says so, never blamed on the request."""


def _schema_columns(db: sqlite3.Connection) -> dict[str, list[str]]:
    """Each table's column names, in order."""
    tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE "
                                           "'sqlite_%' ORDER BY name")]  # SQLite's own (sqlite_stat1, ...) aside
    return {table: [row[1] for row in db.execute(f"PRAGMA table_info({table!r})")] for table in tables}


def _our_columns() -> dict[str, list[str]]:
    with sqlite3.connect(":memory:") as db:
        db.executescript(SCHEMA)
        return _schema_columns(db)


def _decoded(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError) as error:
        raise DamagedStoreError(f"{what} in the game database cannot be read back: {error}") from None


class Store:
    """Thread-safe access to the database (one connection, serialised by a lock; SQLite is fast enough for this)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        # Another program's database is refused before anything in it changes (WAL mode, our tables): an empty
        # file or one of ours (or some of our tables, if the first start was killed) is used; any other is named
        # by its tables.
        found, ours = _schema_columns(self._db), _our_columns()
        if any(ours.get(table) != columns for table, columns in found.items()):
            self._db.close()
            raise ValueError("it is not a game database of sixtysix serve (its tables: "
                             + "; ".join(f"{table}({', '.join(columns)})" for table, columns in found.items())
                             + "); give a new file or one this server made")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _run(self, sql: str, parameters: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, parameters).fetchall()

    # ------------------------------------------------------------------ games
    def create_game(self, game_id: str, player: str, opponent: str, state: dict, bummerl: bool) -> None:
        now = time.time()
        self._run("INSERT INTO games (id, player, opponent, state, created, updated, bummerl) VALUES (?,?,?,?,?,?,?)",
                  (game_id, player, opponent, json.dumps(state), now, now, int(bummerl)))

    def save_game(self, game_id: str, state: dict, finished: bool, winner: str | None,
                  new_deals: list[tuple[int, int, str]], player: str, opponent: str, human: int) -> None:
        """Store the state after a move, and any deals it finished (number, human's game points, record JSON)."""
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.execute("UPDATE games SET state=?, updated=?, finished=?, winner=? WHERE id=?",
                                 (json.dumps(state), now, int(finished), winner, game_id))
                for number, game_points, record_json in new_deals:
                    self._db.execute(
                        "INSERT OR IGNORE INTO deals (game_id, number, player, opponent, human, record, game_points, "
                        "finished) VALUES (?,?,?,?,?,?,?,?)",
                        (game_id, number, player, opponent, human, record_json, game_points, now))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def touch(self, game_id: str) -> None:
        self._run("UPDATE games SET updated=? WHERE id=?", (time.time(), game_id))

    def load_game(self, game_id: str) -> tuple[dict, str, bool] | None:
        """(state, player, expired) or None for an unknown id."""
        rows = self._run("SELECT state, player, expired FROM games WHERE id=?", (game_id,))
        if not rows:
            return None
        state, player, expired = rows[0]
        return _decoded(state, f"the state of game {game_id!r}"), player, bool(expired)

    def live_count(self) -> int:
        return self._run("SELECT COUNT(*) FROM games WHERE finished=0 AND expired=0")[0][0]

    def expire_idle(self, idle_seconds: float) -> list[str]:
        """Mark unfinished games idle for longer than ``idle_seconds`` as expired; returns their ids."""
        cutoff = time.time() - idle_seconds
        with self._lock:
            rows = self._db.execute("SELECT id FROM games WHERE finished=0 AND expired=0 AND updated<?",
                                    (cutoff,)).fetchall()
            if rows:
                self._db.execute("UPDATE games SET expired=1, state='{}' WHERE finished=0 AND expired=0 AND updated<?",
                                 (cutoff,))
        return [row[0] for row in rows]

    # ------------------------------------------------------------------ deals and history
    def finished_deals(self, game_id: str) -> int | None:
        """How many deals of the game are finished and stored, or None for an unknown id (expired games count)."""
        rows = self._run("SELECT (SELECT COUNT(*) FROM deals WHERE game_id=?), EXISTS(SELECT 1 FROM games WHERE id=?)",
                         (game_id, game_id))
        count, known = rows[0]
        return count if known else None

    def finished_deal(self, game_id: str, number: int) -> tuple[dict, int, str] | None:
        """(record, the human's seat, the opponent's spec) of a finished deal, or None."""
        rows = self._run("SELECT record, human, opponent FROM deals WHERE game_id=? AND number=?", (game_id, number))
        if not rows:
            return None
        record, human, opponent = rows[0]
        return _decoded(record, f"the record of deal {number} of game {game_id!r}"), human, opponent

    def deal_analysis(self, game_id: str, number: int) -> dict | None:
        rows = self._run("SELECT analysis FROM deals WHERE game_id=? AND number=?", (game_id, number))
        if not rows or not rows[0][0]:
            return None
        return _decoded(rows[0][0], f"the analysis of deal {number} of game {game_id!r}")

    def save_analysis(self, game_id: str, number: int, analysis: dict) -> None:
        self._run("UPDATE deals SET analysis=? WHERE game_id=? AND number=?", (json.dumps(analysis), game_id, number))

    def history(self, player: str) -> dict[str, Any]:
        """A player's deals, Bummerl and margin against each agent (finished deals only)."""
        per_agent: dict[str, dict[str, Any]] = {}
        for opponent, deals, won, lost, margin in self._run(
                "SELECT opponent, COUNT(*), SUM(game_points>0), SUM(game_points<0), SUM(game_points) FROM deals "
                "WHERE player=? GROUP BY opponent", (player,)):
            per_agent[opponent] = {"opponent": opponent, "deals": deals, "deals_won": won, "deals_lost": lost,
                                   "margin": margin, "bummerl_won": 0, "bummerl_lost": 0}
        for opponent, winner, count in self._run(
                "SELECT opponent, winner, COUNT(*) FROM games WHERE player=? AND finished=1 AND bummerl=1 "
                "GROUP BY opponent, winner", (player,)):
            row = per_agent.setdefault(opponent, {"opponent": opponent, "deals": 0, "deals_won": 0, "deals_lost": 0,
                                                  "margin": 0, "bummerl_won": 0, "bummerl_lost": 0})
            row["bummerl_won" if winner == "you" else "bummerl_lost"] += count
        recent = [{"game": game_id, "number": number, "opponent": opponent, "game_points": points, "finished": when}
                  for game_id, number, opponent, points, when in self._run(
                      "SELECT game_id, number, opponent, game_points, finished FROM deals WHERE player=? "
                      "ORDER BY finished DESC LIMIT 50", (player,))]
        games = [{"game": game_id, "opponent": opponent, "finished": bool(finished), "expired": bool(expired),
                  "winner": winner, "updated": updated}
                 for game_id, opponent, finished, expired, winner, updated in self._run(
                     "SELECT id, opponent, finished, expired, winner, updated FROM games WHERE player=? "
                     "ORDER BY updated DESC LIMIT 20", (player,))]
        return {"player": player, "agents": sorted(per_agent.values(), key=lambda row: row["opponent"]),
                "recent_deals": recent, "games": games}
