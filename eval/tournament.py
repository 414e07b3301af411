"""Duplicate-deal round robins: running (in parallel, resumable) and summarising.

**Duplicate.** Every deal is played twice per pair of agents with the seats swapped: first agent A in seat 0 and
B in seat 1, then B in seat 0 and A in seat 1, on the same deck and with the same dealer. The luck of the cards
cancels within the pair, and the *deal pair* (both games) is the i.i.d. unit of every t interval and of the
ratings' bootstrap. In match mode (R17) the unit is a duplicate *Bummerl pair*: two Bummerls with the seats swapped
that see the same sequence of decks (the first is the deal's own deck, the later ones are derived from it). The win
rates' Wilson intervals count games (deals or Bummerls), as few as the units' spread says they are worth where the
games of a unit vary together (:func:`eval.stats.unit_wilson_interval`); mostly they vary less, since the two games
of a unit share the cards and tend to split (0.4 to 0.9 times the binomial variance on this project's runs), and then
the plain Wilson interval errs on the safe side.

**Work and resume.** A task is (pair of agents, deal). Tasks run in deal-major order in one process or a pool of
spawned processes (agents are rebuilt in each worker from their spec strings); each finished task is appended to
``journal.jsonl`` in the output directory and flushed. The journal's first line holds the run's settings; re-running
with the same output directory and the same settings skips finished tasks (a torn last line is dropped), different
settings raise ``ValueError`` unless ``overwrite`` is set. The number of workers does not change any result:
agents are re-seeded per game from ``(master seed, deal, game, seat)`` and told when each deal starts.

**Summary** (see :func:`summarise`): per pair the game-point margin per deal played with a 95% t interval over the
duplicate units (deal pairs; with Bummerls the total margin over the total deals, :func:`eval.stats.ratio_interval`),
the deal win rate with a Wilson interval (a deal not scored, R15, counts half a win), the W/T/L count of deal pairs,
in match mode the Bummerl win rate (Wilson) and mean Bummerl points; a cross-table; Bradley–Terry ratings on deal
wins (Elo scale, anchored at ``random`` = 0 when it plays, else mean 0; bootstrap over deal pairs); and the time per
decision (median and 95th percentile) per agent.
"""

from __future__ import annotations

import importlib
import itertools
import json
import multiprocessing
import os
import pickle
import platform
import queue
import signal
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from sixtysix_env.fileio import remove_stale_temp_files
from sixtysix_env.game import Game, shuffled_deck
from sixtysix_env.integers import plain_int
from sixtysix_env.rules import Rules
from sixtysix_env.schema import check_keys, loads_json, require_int, require_player, require_str

from . import stats
from .deals import Deal, deals_digest, derive_seed, save_deals
from .play import BummerlOutcome, DealOutcome, play_bummerl, play_deal
from .ray_backend import check_backend, ray_get, ray_session
from .records import prepare_records_dir, write_task_records

JOURNAL_FORMAT = "sixtysix-tournament-journal"
RESULTS_FORMAT = "sixtysix-tournament-results"
FORMAT_VERSION = 1
JOURNAL_NAME = "journal.jsonl"
DEALS_NAME = "deals.json"
OUTPUT_NAMES = ("results.json", "results.csv", "table.md", "crosstable.png")
RATING_ANCHOR = "random"
CONFIDENCE = 0.95


# --------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class TournamentSettings:
    """Everything that determines a tournament's results (the number of workers does not)."""

    agents: tuple[str, ...]
    rules: Rules
    deals: tuple[Deal, ...]
    master_seed: int = 0
    match: bool = False
    imports: tuple[str, ...] = ()
    deals_source: str = "generated"
    bootstrap: int = 1000

    def __post_init__(self) -> None:
        # A text would be taken letter by letter ("random": six agents r, a, n, d, o, m).
        if isinstance(self.agents, str) or not all(isinstance(spec, str) and spec.strip() for spec in self.agents):
            raise ValueError(f"agents must be a sequence of agent specs (texts), got {self.agents!r}")
        if len(self.agents) < 2:
            raise ValueError(f"a tournament needs at least two agents, got {len(self.agents)}: {list(self.agents)}")
        if not isinstance(self.rules, Rules):
            raise ValueError(f"rules must be a Rules object (Rules.preset(name)), got {self.rules!r}")
        if self.rules.players != 2:  # play_deal seats two agents
            raise ValueError("a tournament plays the two-player game; three-player rules (R21) are played by "
                             "eval.three_tournament.run_three_tournament")
        if not self.deals:
            raise ValueError("a tournament needs at least one deal")
        object.__setattr__(self, "master_seed", plain_int(self.master_seed, "master seed"))
        if not isinstance(self.match, bool):
            raise ValueError(f"match must be true or false, got {self.match!r}")
        bootstrap = plain_int(self.bootstrap, "bootstrap")
        if bootstrap < 0:
            raise ValueError(f"bootstrap must be 0 or more resamples, got {bootstrap}")
        object.__setattr__(self, "bootstrap", bootstrap)
        for deal in self.deals:
            if len(deal.deck) != self.rules.deck:
                raise ValueError(f"deal with {len(deal.deck)} cards does not fit the {self.rules.deck}-card rules (R2)")

    @property
    def labels(self) -> list[str]:
        """Unique display names: the spec strings, with ``#2``, ``#3`` appended to repeated specs (self-play)."""
        labels, seen = [], {}
        for spec in self.agents:
            seen[spec] = seen.get(spec, 0) + 1
            labels.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
        return labels

    @property
    def pairs(self) -> list[tuple[int, int]]:
        return [(i, j) for i in range(len(self.agents)) for j in range(i + 1, len(self.agents))]

    @property
    def mode(self) -> str:
        return "match" if self.match else "deal"

    def identity(self) -> dict[str, Any]:
        """The settings a resumed run must share with the journal it continues."""
        return {
            "agents": list(self.agents),
            "rules": self.rules.to_dict(),
            "master_seed": self.master_seed,
            "mode": self.mode,
            "deals": len(self.deals),
            "deals_sha256": deals_digest(self.deals),
            "imports": list(self.imports),
        }


def tasks_in_order(settings: TournamentSettings) -> list[tuple[int, int]]:
    """(pair index, deal index) in deal-major order, so an interrupted run has every pair on the same deals."""
    return [(pair, deal) for deal in range(len(settings.deals)) for pair in range(len(settings.pairs))]


# --------------------------------------------------------------------------- playing one task
class _Context:
    """Per-process state: the settings and one agent object per agent index (built lazily, reused)."""

    def __init__(self, settings: TournamentSettings):
        import_agent_modules(settings.imports)
        self.settings = settings
        self.agent_objects: dict[int, object] = {}

    def agent(self, index: int) -> object:
        if index not in self.agent_objects:
            from agents import make_agent

            spec = self.settings.agents[index]
            self.agent_objects[index] = make_agent(spec, seed=derive_seed("build", self.settings.master_seed, index))
        return self.agent_objects[index]


def import_agent_modules(modules: Iterable[str]) -> None:
    """Import modules that register extra agents (``agents.register``) so spec strings can name them."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as error:
            raise ValueError(f"cannot import agent module {module!r}: {error}") from None


def _game_record(outcome: DealOutcome, seat_a: int | None) -> dict[str, Any]:
    record: dict[str, Any] = {}
    if seat_a is not None:
        record["seat_a"] = seat_a
    record.update(
        dealer=outcome.dealer,
        winner=outcome.winner,
        game_points=outcome.game_points,
        reason=outcome.reason,
        points=list(outcome.points),
        actions=outcome.actions,
        times_us=[[round(t * 1e6) for t in seat_times] for seat_times in outcome.decision_times],
    )
    return record


def play_task(context: _Context, pair_index: int, deal_index: int) -> dict[str, Any]:
    """Play one duplicate unit (a deal pair, or a Bummerl pair in match mode) and return its journal record."""
    settings = context.settings
    first, second = settings.pairs[pair_index]
    deal = settings.deals[deal_index]
    record: dict[str, Any] = {"pair": pair_index, "deal": deal_index}
    games = []
    for seat_a in (0, 1):  # A in seat 0, then the same deal with the seats swapped
        seated = [None, None]
        seated[seat_a] = context.agent(first)
        seated[1 - seat_a] = context.agent(second)
        if not settings.match:
            game = Game.deal(settings.rules, deck=list(deal.deck), dealer=deal.dealer)
            seeds = [derive_seed("agent", settings.master_seed, deal_index, seat_a, seat) for seat in (0, 1)]
            games.append(_game_record(play_deal(game, seated, seeds), seat_a))
        else:
            bummerl = play_bummerl(
                settings.rules,
                deal.dealer,
                lambda number: bummerl_deck(settings.rules, deal, number),
                seated,
                lambda number: [
                    derive_seed("agent", settings.master_seed, deal_index, seat_a, number, seat) for seat in (0, 1)
                ],
            )
            games.append(_bummerl_record(bummerl, seat_a))
    record["bummerls" if settings.match else "games"] = games
    return record


def bummerl_deck(rules: Rules, deal: Deal, number: int) -> list[int]:
    """Deck of the ``number``-th deal of the Bummerl started by ``deal``: its own deck, then decks derived from it."""
    if number == 0:
        return list(deal.deck)
    return shuffled_deck(rules.deck, derive_seed("bummerl", deal.key(), number))


def _bummerl_record(bummerl: BummerlOutcome, seat_a: int) -> dict[str, Any]:
    return {
        "seat_a": seat_a,
        "winner": bummerl.winner,
        "score": list(bummerl.score),
        "bummerl_points": bummerl.bummerl_points,
        "deals": [_game_record(outcome, None) for outcome in bummerl.deals],
    }


class _TaskPlayer:
    """Plays two-player tasks with agents built once, at the first task, in the process that plays them (picklable:
    sent to every worker process)."""

    def __init__(self, settings: TournamentSettings):
        self.settings = settings
        self.context: _Context | None = None

    def __call__(self, task: tuple[int, int]) -> dict[str, Any]:
        if self.context is None:
            self.context = _Context(self.settings)
        return play_task(self.context, *task)


def _worker_main(play: Callable[[Any], Any], task_queue: Any, result_queue: Any) -> None:
    """A worker process: play tasks with ``play`` until the ``None`` sentinel.

    Ctrl-C reaches every process of the terminal's group; workers ignore it and the main process stops them.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    try:
        while True:
            try:
                task = task_queue.get(timeout=1.0)
            except queue.Empty:
                # A main process killed with SIGKILL stops nobody: a worker whose parent is gone ends itself rather
                # than live on, playing queued tasks nobody reads, beside the run that continues them.
                if parent is not None and not parent.is_alive():
                    result_queue.cancel_join_thread()
                    return
                continue
            if task is None:
                return
            result_queue.put(("done", play(task)))
    except Exception as error:  # report to the main process, which raises it
        detail = traceback.format_exc()
        try:
            pickle.dumps(error)
        except Exception:
            error = RuntimeError(f"{type(error).__name__}: {error}")
        result_queue.put(("error", (error, detail)))


# --------------------------------------------------------------------------- journal
class Journal:
    """The append-only record of finished tasks in an output directory (JSON lines, first line = settings)."""

    def __init__(self, path: Path):
        self.path = path
        self._handle = None

    def read(self, settings: TournamentSettings,
             repair: bool = True) -> dict[tuple[int, int], dict[str, Any]] | None:
        """Finished records by task, or ``None`` without a journal. Drops a torn last line (interrupted write) and,
        with ``repair``, cuts it from the file (a journal of only a torn header is deleted); without, it only reads,
        as a check before anything is written does."""
        if not self.path.exists():
            return None
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        records: dict[tuple[int, int], dict[str, Any]] = {}
        good_length = 0
        header = None
        for number, line in enumerate(lines):
            is_last = number == len(lines) - 1
            if is_last and line == b"":
                break
            try:
                value = loads_json(line.decode("utf-8"), "journal line")  # strict: no NaN, duplicate keys, deep nesting
                if is_last:
                    raise ValueError("no newline: torn write")
            except (ValueError, UnicodeDecodeError):
                if header is None and not is_last:  # a whole first line that is not JSON: another program's file
                    raise ValueError(f"{str(self.path)!r} is not a tournament journal; use another --out or "
                                     "--overwrite") from None
                if is_last or all(not rest.strip() for rest in lines[number + 1 :]):
                    break  # the interrupted last write: drop it
                raise ValueError(f"journal {str(self.path)!r} is corrupt at line {number + 1}; use --overwrite") from None
            if header is None:
                header = value
                if not isinstance(value, dict) or value.get("journal") != JOURNAL_FORMAT:
                    raise ValueError(f"{str(self.path)!r} is not a tournament journal; use another --out or --overwrite")
                check_keys(value, f"journal {str(self.path)!r} header", ("journal", "version", "settings"))
                if type(value["version"]) is not int or value["version"] != FORMAT_VERSION:
                    raise ValueError(f"journal {str(self.path)!r} has version {value['version']!r}, this program "
                                     f"reads {FORMAT_VERSION}; use another --out or --overwrite")
                describe_mismatch(value.get("settings"), settings.identity(), self.path.parent)
            else:
                key = _task_key(value, settings, self.path, number)
                records.setdefault(key, value)
            good_length += len(line) + 1
        if header is None:
            if repair:
                self.path.unlink()  # only a torn header: start afresh
            return None
        if repair and good_length < len(raw):
            with open(self.path, "r+b") as handle:
                handle.truncate(good_length)
        return records

    def start(self, settings: TournamentSettings) -> None:
        fresh = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "a", encoding="utf-8")
        if fresh:
            header = {"journal": JOURNAL_FORMAT, "version": FORMAT_VERSION, "settings": settings.identity()}
            self._write(header)

    def append(self, record: dict[str, Any]) -> None:
        self._write(record)

    def _write(self, value: dict[str, Any]) -> None:
        assert self._handle is not None
        self._handle.write(json.dumps(value, separators=(",", ":")) + "\n")
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _task_key(record: Any, settings: TournamentSettings, path: Path, number: int) -> tuple[int, int]:
    """The (pair, deal) of a journal line, after checking it strictly: exact types, no unknown key, every game
    replays to the result it records and, with ``--match``, every Bummerl to its winner, score and Bummerl points
    (a journal is never a source of silently wrong results)."""
    where = f"journal {str(path)!r} line {number + 1}"
    try:
        units = "bummerls" if settings.match else "games"
        check_keys(record, where, ("pair", "deal", units))
        key = (require_int(record["pair"], "pair", 0, len(settings.pairs) - 1),
               require_int(record["deal"], "deal", 0, len(settings.deals) - 1))
        entries = record[units]
        if not isinstance(entries, list) or len(entries) != 2:
            raise ValueError(f"{units} must be a list of two (one per seating)")
        deal = settings.deals[key[1]]
        for seat_a, entry in enumerate(entries):
            if settings.match:
                _check_bummerl_entry(entry, settings.rules, deal)
            else:
                _check_game_entry(entry, settings.rules, deal, seat_a)
            if entry["seat_a"] != seat_a or type(entry["seat_a"]) is not int:
                raise ValueError(f"seat_a must be {seat_a} in entry {seat_a}, got {entry['seat_a']!r}")
    except ValueError as error:
        raise ValueError(f"{where} is not a valid task record ({error}); use --overwrite") from None
    return key


_GAME_KEYS = ("dealer", "winner", "game_points", "reason", "points", "actions", "times_us")


def _check_bummerl_entry(entry: Any, rules: Rules, deal: Deal) -> None:
    """One Bummerl of a journal line: its deals replay from their decks (:func:`bummerl_deck`) with the dealer
    alternating (R3), and :class:`~sixtysix_env.match.Match` scores them to the recorded end (R17)."""
    from sixtysix_env.match import Match

    check_keys(entry, "bummerl", ("seat_a", "winner", "score", "bummerl_points", "deals"))
    require_player(entry["winner"], "bummerl winner")
    require_int(entry["bummerl_points"], "bummerl_points", 1, 2)
    match = Match(rules, first_dealer=deal.dealer)
    finished = None
    for number, deal_entry in enumerate(_list_of(entry["deals"], "bummerl deals")):
        if finished is not None:
            raise ValueError(f"bummerl deal {number} goes on after the Bummerl ended")
        this_deal = Deal(dealer=match.dealer, deck=tuple(bummerl_deck(rules, deal, number)))
        game = _check_game_entry(deal_entry, rules, this_deal, None)
        finished = match.record_deal(game)
    if finished is None:
        raise ValueError("bummerl deals end before the Bummerl does (R17)")
    replayed = [finished.winner, list(finished.scores), finished.marks]
    recorded = [entry["winner"], entry["score"], entry["bummerl_points"]]
    if replayed != recorded:
        raise ValueError(f"bummerl winner, score and points {recorded} do not match its replay {replayed}")


def _list_of(value: Any, what: str) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{what} must be a list, got {type(value).__name__}")
    return value


def _check_game_entry(entry: Any, rules: Rules, deal: Deal, seat_a: int | None) -> Game:
    """One game of a journal line, dealt from ``deal``: it must replay to the recorded result (R4 deck order), and
    the replayed game is returned."""
    check_keys(entry, "game", _GAME_KEYS, () if seat_a is None else ("seat_a",))
    if seat_a is not None and "seat_a" not in entry:
        raise ValueError("game is missing key 'seat_a'")
    dealer = require_player(entry["dealer"], "game dealer")
    if entry["winner"] is not None:
        require_player(entry["winner"], "game winner")
    require_int(entry["game_points"], "game_points", 0, 3)
    require_str(entry["reason"], "game reason")
    points = _list_of(entry["points"], "game points")
    if len(points) != 2:
        raise ValueError(f"game points must hold two integers, got {points!r}")
    for value in points:
        require_int(value, "game points", 0)
    actions = [require_int(action, "game action", 0) for action in _list_of(entry["actions"], "game actions")]
    times = _list_of(entry["times_us"], "times_us")
    if len(times) != 2:
        raise ValueError(f"times_us must hold one list per player, got {len(times)}")
    for seat_times in times:
        for value in _list_of(seat_times, "times_us"):
            require_int(value, "times_us", 0)
    if dealer != deal.dealer:
        raise ValueError(f"game dealer {dealer} is not the deal's dealer {deal.dealer}")
    game = Game.deal(rules, deck=list(deal.deck), dealer=deal.dealer)
    decisions = [0, 0]
    for action in actions:
        if game.is_over:
            raise ValueError("game actions go on after the end of the deal")
        decisions[game.to_move] += 1
        game.apply(action)
    if [len(seat_times) for seat_times in times] != decisions:
        raise ValueError(f"times_us holds {[len(t) for t in times]} decision times, the actions make {decisions}")
    replayed = [game.result.winner, game.result.game_points, game.result.reason, list(game.result.points)] \
        if game.result is not None else None
    if replayed != [entry["winner"], entry["game_points"], entry["reason"], points]:
        raise ValueError(f"game result {[entry['winner'], entry['game_points'], entry['reason'], points]} does not "
                         f"match its replay {replayed}")
    return game


def describe_mismatch(stored: Any, wanted: dict[str, Any], directory: Path) -> None:
    """Raise a clear ``ValueError`` when an output directory holds a run with other settings."""
    if stored == wanted:
        return
    if not isinstance(stored, dict):
        raise ValueError(f"output directory {str(directory)!r} holds a journal without settings; use --overwrite")
    differences = setting_differences(stored, wanted)
    raise ValueError(
        f"output directory {str(directory)!r} holds a run with different settings ({'; '.join(differences)}); "
        "use another --out, or --overwrite to discard it"
    )


def setting_differences(stored: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """``"key: A there, B now"`` for every setting that differs; of a mapping (the rules), the entries that differ,
    which a cut-short whole would hide (``rules.schneider_bummerl: true there, false now``)."""
    differences = []
    for key in wanted:
        there, now = stored.get(key), wanted.get(key)
        if there == now:
            continue
        if isinstance(there, dict) and isinstance(now, dict):
            differences += [f"{key}.{name}: {_short(there.get(name))} there, {_short(now.get(name))} now"
                            for name in sorted(set(there) | set(now)) if there.get(name) != now.get(name)]
        else:
            differences.append(f"{key}: {_short(there)} there, {_short(now)} now")
    return differences


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def refuse_a_file_as_output(directory: Path) -> None:
    """An output directory (``--out``) that is an existing file is refused (both tournament runners)."""
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"output directory {str(directory)!r} is an existing file, not a directory; "
                         "choose another --out")


def refuse_results_without_journal(directory: Path, output_names: Sequence[str]) -> None:
    """Where no journal was found, results already in ``directory`` would be overwritten: refused (both
    tournament runners)."""
    leftovers = [name for name in output_names if (directory / name).exists()]
    if leftovers:
        raise ValueError(
            f"output directory {str(directory)!r} holds {', '.join(leftovers)} but no {JOURNAL_NAME}; "
            "use another --out, or --overwrite to replace them"
        )


def check_output_dir(out_dir: str | os.PathLike, settings: TournamentSettings, overwrite: bool = False) -> None:
    """Refuse, reading only, an output directory this run cannot use: a file, a journal of a run with other
    settings (or not a journal), or results without a journal. With ``overwrite`` only the first is refused, since
    the rest will be replaced. The CLI calls it before it writes anything (``--save-deals``); :func:`run_tournament`
    makes the same checks as it reads the journal."""
    directory = Path(out_dir)
    refuse_a_file_as_output(directory)
    if not overwrite and Journal(directory / JOURNAL_NAME).read(settings, repair=False) is None:
        refuse_results_without_journal(directory, OUTPUT_NAMES)


# --------------------------------------------------------------------------- running
class WorkerDied(RuntimeError):
    """A worker process ended without reporting (killed, out of memory): the run stops, the journal keeps the
    finished tasks, and the same command continues it."""


def run_tournament(
    settings: TournamentSettings,
    out_dir: str | os.PathLike | None = None,
    workers: int = 1,
    progress: bool = True,
    overwrite: bool = False,
    write_outputs: bool = True,
    records_dir: str | os.PathLike | None = None,
    backend: str = "multiprocessing",
    address: str | None = None,
) -> dict[str, Any]:
    """Play every pending task and return the results document (also written to ``out_dir`` if given).

    With ``records_dir``, every deal's game record is written there too (:mod:`eval.records`), also those of
    tasks a resumed run finished earlier. ``backend``: ``multiprocessing`` (the default: worker processes on this
    machine) or ``ray`` (Ray actors: a local ``ray.init()``, or the cluster at ``address``); both give the same
    records for the same settings, since every task's seeds derive from the settings alone."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    check_backend(backend, address)
    # Fail fast, in this process, on bad specs or modules (workers would report them less clearly).
    import_agent_modules(settings.imports)
    from agents import make_agent

    for spec in settings.agents:
        make_agent(spec, seed=0)

    records: dict[tuple[int, int], dict[str, Any]] = {}
    journal = None
    if out_dir is not None:
        directory = Path(out_dir)
        refuse_a_file_as_output(directory)
        journal = Journal(directory / JOURNAL_NAME)
        if overwrite:
            for name in (JOURNAL_NAME, DEALS_NAME, *OUTPUT_NAMES):
                (directory / name).unlink(missing_ok=True)
        previous = journal.read(settings)  # refuses a journal of other settings
        if previous is None:
            refuse_results_without_journal(directory, OUTPUT_NAMES)
        else:
            records.update(previous)
        journal.start(settings)
        remove_stale_temp_files(directory)  # a result file a kill interrupted mid-write (SIGKILL), never renamed
        # Written at every start, a continued run's too: a deal file damaged or removed since is this run's again.
        # Deals read from a file did not come from this run's master seed (it seeds only the agents): none is named.
        generated = settings.deals_source.startswith("generated")
        save_deals(directory / DEALS_NAME, settings.deals, settings.rules,
                   master_seed=settings.master_seed if generated else None)

    if records_dir is not None:
        prepare_records_dir(records_dir)
        remove_stale_temp_files(records_dir)  # left by a run killed mid-write (SIGKILL)
        for task in sorted(records):
            write_task_records(records_dir, settings, records[task])
    pending = [task for task in tasks_in_order(settings) if task not in records]
    bar = _progress_bar(len(records) + len(pending), len(records), progress, settings)
    if backend == "ray" and pending:
        finished = _execute_on_ray(settings, pending, workers, address)
    else:
        finished = _execute(settings, pending, workers)
    try:
        for record in finished:
            records[(record["pair"], record["deal"])] = record
            if journal is not None:
                journal.append(record)
            if records_dir is not None:
                write_task_records(records_dir, settings, record)
            bar.update(1)
    finally:
        finished.close()  # stops the worker pool at once on an error or Ctrl-C
        bar.close()
        if journal is not None:
            journal.close()

    ordered = [records[task] for task in sorted(records)]
    document = build_results(settings, ordered, workers)
    if out_dir is not None and write_outputs:
        from .report import write_outputs as write_files

        write_files(Path(out_dir), document, ordered)
    return document


def _execute(settings: TournamentSettings, tasks: list[tuple[int, int]], workers: int):
    """Yield the records of two-player ``tasks`` (in completion order), in this process or in ``workers``
    processes (:func:`play_in_processes`)."""
    return play_in_processes(_TaskPlayer(settings), tasks, workers)


def play_in_processes(play: Callable[[Any], Any], tasks: Sequence[Any], workers: int):
    """Yield ``play(task)`` for every task (in completion order), in this process or in ``workers`` processes;
    ``play`` is pickled to each (a top-level function, or an object whose state builds itself there). Used by the
    two- and three-player runners.

    A small hand-rolled pool instead of ``multiprocessing.Pool``: ``Pool.terminate`` can hang (CPython issues
    #78178, #96995), and ``Pool`` silently replaces a worker that was killed, so its tasks are waited for forever;
    here a dead worker is a :class:`WorkerDied`. At most two tasks per worker are queued at a time, so no pipe fills
    up and stopping never waits on undelivered work.
    """
    if not tasks:
        return
    if workers == 1 or len(tasks) == 1:
        for task in tasks:
            yield play(task)
        return
    spawn = multiprocessing.get_context("spawn")  # fork is unsafe with threads and unavailable on some platforms
    task_queue, result_queue = spawn.Queue(), spawn.Queue()
    task_queue.cancel_join_thread()  # never block interpreter exit on tasks nobody will read
    processes = [
        spawn.Process(target=_worker_main, args=(play, task_queue, result_queue), daemon=True)
        for _ in range(min(workers, len(tasks)))
    ]
    for process in processes:
        process.start()
    pending = iter(tasks)
    in_flight = 0
    for task in itertools.islice(pending, 2 * len(processes)):
        task_queue.put(task)
        in_flight += 1
    try:
        while in_flight:
            try:
                kind, payload = result_queue.get(timeout=1.0)
            except queue.Empty:
                dead = [p for p in processes if not p.is_alive()]
                if dead:
                    raise WorkerDied(
                        f"a tournament worker process died (exit code {dead[0].exitcode}); "
                        "finished tasks are kept in the journal"
                    ) from None
                continue
            if kind == "error":
                error, detail = payload
                if hasattr(error, "add_note"):  # Python 3.11+: show where it happened in the worker
                    error.add_note(f"raised in a tournament worker process:\n{detail}")
                raise error
            in_flight -= 1
            following = next(pending, None)
            if following is not None:
                task_queue.put(following)
                in_flight += 1
            yield payload
        for _ in processes:
            task_queue.put(None)
        for process in processes:
            process.join(timeout=10)
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join()
        task_queue.close()
        result_queue.close()


def _execute_on_ray(settings: TournamentSettings, tasks: list[tuple[int, int]], workers: int, address: str | None):
    """Yield the records of ``tasks`` (in completion order) from ``workers`` Ray actors, each holding its agents
    (a :class:`_Context`) like a worker process; at most two tasks per actor are in flight. Joins the cluster at
    ``address``, or starts a local Ray with ``workers`` CPUs (:func:`eval.ray_backend.ray_session`)."""
    with ray_session(workers, address) as ray:
        runner = ray.remote(num_cpus=1)(_RayTaskRunner)
        actors = [runner.remote(settings) for _ in range(min(workers, len(tasks)))]
        pending = iter(tasks)
        in_flight: dict[Any, Any] = {}
        try:
            for actor in actors:
                for task in itertools.islice(pending, 2):
                    in_flight[actor.play.remote(*task)] = actor
            while in_flight:
                done, _ = ray.wait(list(in_flight), num_returns=1)
                actor = in_flight.pop(done[0])
                try:
                    record = ray_get(ray, done[0])
                except ray.exceptions.RayActorError as error:
                    raise WorkerDied(f"a tournament worker (Ray actor) died ({type(error).__name__}); "
                                     "finished tasks are kept in the journal") from None
                following = next(pending, None)
                if following is not None:
                    in_flight[actor.play.remote(*following)] = actor
                yield record
        finally:
            for actor in actors:
                ray.kill(actor)


class _RayTaskRunner:
    """A Ray actor's state: the tournament's agents, built once (as a worker process's :class:`_Context`)."""

    def __init__(self, settings: TournamentSettings):
        self.context = _Context(settings)

    def play(self, pair_index: int, deal_index: int) -> dict[str, Any]:
        return play_task(self.context, pair_index, deal_index)


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, initial: int, enabled: bool, settings: TournamentSettings):
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:  # the eval extra is optional for library use
        return _NoBar()
    unit = "Bummerl pairs" if settings.match else "deal pairs"
    return tqdm(total=total, initial=initial, desc=unit, unit="task", file=sys.stderr, dynamic_ncols=True)


# --------------------------------------------------------------------------- summarising
def _unit_games(record: dict[str, Any]) -> list[tuple[dict[str, Any], int]]:
    """(game record, seat of agent A) for every deal played in a task record (both modes)."""
    if "games" in record:
        return [(game, game["seat_a"]) for game in record["games"]]
    return [(deal, bummerl["seat_a"]) for bummerl in record["bummerls"] for deal in bummerl["deals"]]


def _margin_for(game: dict[str, Any], seat: int) -> int:
    """Game points won minus game points lost by the player in ``seat`` in this deal (zero-sum, R16)."""
    if game["winner"] is None:
        return 0
    return game["game_points"] if game["winner"] == seat else -game["game_points"]


def _win_value(game: dict[str, Any], seat: int) -> float:
    if game["winner"] is None:
        return 0.5  # not scored (R15, 65:65): half a win each
    return 1.0 if game["winner"] == seat else 0.0


def summarise_pair(records: Sequence[dict[str, Any]], match: bool) -> dict[str, Any]:
    """Statistics of one pair (A = the pair's first agent) over its task records, one record per deal pair."""
    unit_margins, unit_wins, unit_games = [], [], []
    wins = ties = losses = 0
    for record in records:
        games = _unit_games(record)
        margin_total = sum(_margin_for(game, seat) for game, seat in games)
        unit_margins.append(margin_total)
        unit_wins.append(sum(_win_value(game, seat) for game, seat in games))
        unit_games.append(len(games))
        wins += margin_total > 0
        ties += margin_total == 0
        losses += margin_total < 0
    deal_wins, deal_games = float(sum(unit_wins)), int(sum(unit_games))
    # Per deal played: the units' total margin over their total deals. Bummerl pairs play different numbers of deals,
    # and a mean of each pair's own per-deal margin would weigh the deals of short (one-sided) pairs more.
    margin = stats.ratio_interval(unit_margins, unit_games, CONFIDENCE)
    low, high = stats.unit_wilson_interval(unit_wins, unit_games, CONFIDENCE)
    summary: dict[str, Any] = {
        "units": len(records),
        "deals_played": deal_games,
        "margin_per_deal": margin.to_dict(),
        "deal_win_rate": {"wins": deal_wins, "deals": deal_games, "rate": deal_wins / deal_games, "low": low, "high": high},
        "duplicate_pairs": {"won": wins, "tied": ties, "lost": losses},
    }
    if match:
        unit_bummerl_wins, unit_bummerls, unit_points = [], [], []
        # Each pair's two Bummerls (the same decks, seats swapped) by their outcome: A won both, one, or none. Not the
        # sign of the summed game-point margin ("duplicate_pairs"), which a lost Bummerl pair can still have positive.
        both = split = neither = 0
        for record in records:
            points = won_here = 0
            for bummerl in record["bummerls"]:
                won = bummerl["winner"] == bummerl["seat_a"]
                won_here += won
                points += bummerl["bummerl_points"] if won else -bummerl["bummerl_points"]
            unit_bummerl_wins.append(won_here)
            unit_bummerls.append(len(record["bummerls"]))
            unit_points.append(points / len(record["bummerls"]))
            both += won_here == len(record["bummerls"])
            neither += won_here == 0
            split += 0 < won_here < len(record["bummerls"])
        bummerl_wins, bummerl_count = sum(unit_bummerl_wins), sum(unit_bummerls)
        low, high = stats.unit_wilson_interval(unit_bummerl_wins, unit_bummerls, CONFIDENCE)
        summary["bummerl_win_rate"] = {
            "wins": bummerl_wins, "bummerls": bummerl_count, "rate": bummerl_wins / bummerl_count, "low": low,
            "high": high,
        }
        summary["bummerl_points_per_bummerl"] = stats.mean_interval(unit_points, CONFIDENCE).to_dict()
        summary["bummerl_pairs"] = {"won_both": both, "split": split, "lost_both": neither}
    summary["_unit_wins"] = unit_wins
    summary["_unit_games"] = unit_games
    return summary


def summarise(settings: TournamentSettings, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per-pair statistics, cross-tables and ratings from all task records (sorted by pair, then deal)."""
    labels = settings.labels
    by_pair: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        by_pair.setdefault(record["pair"], []).append(record)
    pairs, per_unit, deals_per_pair = [], [], []
    size = len(labels)
    margin_table: list[list[Any]] = [[None] * size for _ in range(size)]
    win_table: list[list[Any]] = [[None] * size for _ in range(size)]
    for index, (i, j) in enumerate(settings.pairs):
        pair_records = sorted(by_pair.get(index, []), key=lambda r: r["deal"])
        if not pair_records:
            continue
        summary = summarise_pair(pair_records, settings.match)
        deals_per_pair.append([record["deal"] for record in pair_records])
        per_unit.append(np.stack([summary.pop("_unit_wins"), summary.pop("_unit_games")], axis=1))
        pairs.append({"a": labels[i], "b": labels[j], **summary})
        margin = summary["margin_per_deal"]
        margin_table[i][j] = {"mean": margin["mean"], "half_width": margin["half_width"]}
        margin_table[j][i] = {"mean": -margin["mean"], "half_width": margin["half_width"]}
        rate = summary["deal_win_rate"]
        win_table[i][j] = {"rate": rate["rate"], "low": rate["low"], "high": rate["high"]}
        win_table[j][i] = {"rate": 1.0 - rate["rate"], "low": 1.0 - rate["high"], "high": 1.0 - rate["low"]}
    result: dict[str, Any] = {
        "confidence": CONFIDENCE,
        "pairs": pairs,
        "crosstable": {"agents": labels, "margin_per_deal": margin_table, "deal_win_rate": win_table},
    }
    # The ratings' bootstrap resamples deals jointly over the pairs, so every pair must have played the same deals
    # (an unfinished run may hold as many units of each pair but not the same ones).
    complete = len(pairs) == len(settings.pairs) and all(deals == deals_per_pair[0] for deals in deals_per_pair)
    if complete:
        anchor = RATING_ANCHOR if RATING_ANCHOR in labels else None
        ratings = stats.rate_agents(
            labels,
            np.stack(per_unit),
            settings.pairs,
            anchor=anchor,
            prior=1.0,
            bootstrap=settings.bootstrap,
            seed=derive_seed("bootstrap", settings.master_seed) % (2**32),
            confidence=CONFIDENCE,
        )
        result["ratings"] = {"fitted_on": "deal wins (not scored = half a win)", **ratings.to_dict()}
    return result


def timing_summary(settings: TournamentSettings, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Time per decision (``act`` call) per agent over the whole run: count, mean, median, 95th and 99th
    percentiles, max."""
    labels = settings.labels
    samples: dict[str, list[int]] = {label: [] for label in labels}
    for record in records:
        first, second = settings.pairs[record["pair"]]
        for game, seat_a in _unit_games(record):
            for seat in (0, 1):
                label = labels[first] if seat == seat_a else labels[second]
                samples[label].extend(game["times_us"][seat])
    return {label: stats.time_figures(np.asarray(values, dtype=float) / 1000.0) for label, values in samples.items()}


def versions() -> dict[str, Any]:
    """Versions of everything that could change results (recorded in results.json)."""
    from sixtysix_env import __version__

    info: dict[str, Any] = {
        "sixtysix": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
    }
    repository = Path(__file__).resolve().parent.parent
    info["git_commit"] = None
    # Only a checkout of this project: an installed copy's site-packages may lie inside another repository (a venv
    # in the user's own project), whose commit says nothing about this code.
    if not (repository / ".git").exists() or not (repository / "sixtysix_env").is_dir():
        return info
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repository, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        info["git_commit"] = commit or None
    except (OSError, subprocess.SubprocessError):
        info["git_commit"] = None
    return info


def _public_unit(record: dict[str, Any]) -> dict[str, Any]:
    """A task record without its timings (timings vary between runs; everything else is reproducible)."""

    def strip(game: dict[str, Any]) -> dict[str, Any]:
        clean = {key: value for key, value in game.items() if key != "times_us"}
        clean["decisions"] = [len(times) for times in game["times_us"]]
        return clean

    unit = {"pair": record["pair"], "deal": record["deal"]}
    if "games" in record:
        unit["games"] = [strip(game) for game in record["games"]]
    else:
        unit["bummerls"] = [
            {**{k: v for k, v in bummerl.items() if k != "deals"}, "deals": [strip(deal) for deal in bummerl["deals"]]}
            for bummerl in record["bummerls"]
        ]
    return unit


def build_results(settings: TournamentSettings, records: Sequence[dict[str, Any]], workers: int = 1) -> dict[str, Any]:
    """The results document: settings, versions, summary, timing and every per-deal outcome."""
    return {
        "format": RESULTS_FORMAT,
        "version": FORMAT_VERSION,
        "settings": {
            **settings.identity(),
            "labels": settings.labels,
            "pairs": [[settings.labels[i], settings.labels[j]] for i, j in settings.pairs],
            "rules_preset": settings.rules.preset_name,
            "deals_source": settings.deals_source,
            "bootstrap": settings.bootstrap,
            "workers": workers,
            "complete": len(records) == len(tasks_in_order(settings)),
        },
        "versions": versions(),
        "summary": summarise(settings, records),
        "timing": timing_summary(settings, records),
        "units": [_public_unit(record) for record in records],
    }


__all__ = [
    "DEALS_NAME", "JOURNAL_NAME", "OUTPUT_NAMES", "TournamentSettings", "build_results", "bummerl_deck",
    "play_task", "run_tournament", "summarise", "summarise_pair", "tasks_in_order", "timing_summary",
]
