"""Game records of tournament deals (``--records DIR``) and the inputs ``sixtysix replay`` accepts.

**Writing.** Every deal a tournament or match plays is written as one JSON game record (the format of
:mod:`sixtysix_env.record`, which replays exactly) per deal and seat arrangement::

    deal0003_heuristic_vs_random.json          # deal 3 of deals.json, heuristic in seat 0, random in seat 1
    deal0003_random_vs_heuristic.json          # the same deck with the seats swapped
    deal0003_heuristic_vs_random_bummerl02.json  # match mode (R17): deal 2 of the Bummerl started by deal 3
    deal0003_heuristic_vs_greedy_vs_random.json  # three players (R21): one file per deal and seating, six per trio

The first name sits in seat 0, the second in seat 1 (the third in seat 2); the deal number is the index into the
run's ``deals.json`` (so ``sixtysix replay OUT/deals.json#3`` shows the same deck before any card is played). Agent
labels are made safe for file names (characters other than letters, digits, ``.``, ``=``, ``+`` and ``-`` become
``-``).

The records are built in the main process from the task records the journal keeps (deck from the deal, the
actions played, the dealer), replayed through the engine and checked against the outcome the game reported, then
written atomically. So they come out the same with any number of workers, and a resumed run writes the records of
tasks finished earlier too: a file already holding the right record is left alone, anything else is rewritten.

**Reading.** :func:`load_replay` takes a game record file, or ``FILE#N`` for deal ``N`` (0-based) of a deal file
such as a tournament's ``deals.json``; it raises ``FileNotFoundError`` or ``ValueError`` naming what is wrong.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from sixtysix_env.fileio import writable_folder, write_json_atomic
from sixtysix_env.game import Game
from sixtysix_env.record import game_to_record, load_record
from sixtysix_env.rules import Rules
from sixtysix_env.schema import loads_json, read_json_file

from .deals import DEALS_FORMAT, Deal, parse_deals_document

_UNSAFE = re.compile(r"[^A-Za-z0-9.=+-]+")
MAX_LABEL_LENGTH = 60  # file names stay far below the usual 255-byte limit


def file_labels(labels: Sequence[str]) -> list[str]:
    """Agent labels made safe and unique for file names (the agent's index is appended where two would clash)."""
    safe = [(_UNSAFE.sub("-", label).strip("-.") or "agent")[:MAX_LABEL_LENGTH] for label in labels]
    return [f"{name}-{index}" if safe.count(name) > 1 else name for index, name in enumerate(safe)]


def record_name(deal_index: int, seat_labels: Sequence[str], bummerl_deal: int | None = None) -> str:
    """File name of one deal's record: deal number, the label of each seat in seat order (two, or three for R21),
    and the Bummerl deal."""
    name = f"deal{deal_index:04d}_" + "_vs_".join(seat_labels)
    if bummerl_deal is not None:
        name += f"_bummerl{bummerl_deal:02d}"
    return name + ".json"


def task_games(settings: Any, task: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(file name, game record) for every deal played in one tournament task record (a journal line).

    Each deal is replayed from its deck and the recorded actions; a replay that does not end with the outcome the
    game reported raises ``ValueError`` (the journal would not belong to these settings).
    """
    from .tournament import bummerl_deck  # the Bummerl deck sequence is the tournament's

    labels = file_labels(settings.labels)
    first, second = settings.pairs[task["pair"]]
    deal: Deal = settings.deals[task["deal"]]
    units = task["games"] if "games" in task else task["bummerls"]
    for unit in units:
        seat_a = unit["seat_a"]
        seated = [labels[first], labels[second]] if seat_a == 0 else [labels[second], labels[first]]
        if "games" in task:
            yield record_name(task["deal"], seated), _replayed(settings.rules, list(deal.deck), unit)
        else:
            for number, game in enumerate(unit["deals"]):
                deck = bummerl_deck(settings.rules, deal, number)
                yield record_name(task["deal"], seated, number), _replayed(settings.rules, deck, game)


def _replayed(rules: Rules, deck: list[int], game_entry: dict[str, Any]) -> dict[str, Any]:
    game = Game.deal(rules, deck=deck, dealer=game_entry["dealer"])
    for action in game_entry["actions"]:
        game.apply(action)
    result = game.result
    reported = (game_entry["winner"], game_entry["game_points"], game_entry["reason"], list(game_entry["points"]))
    if result is None or (result.winner, result.game_points, result.reason, list(result.points)) != reported:
        raise ValueError(f"recorded actions do not replay to the reported outcome {reported} (deck {deck})")
    return game_to_record(game)


def prepare_records_dir(directory: str | os.PathLike) -> Path:
    """Create the records directory up front, so an unwritable path fails before any deal is played."""
    return writable_folder(directory, f"game records folder {str(directory)!r}")


def write_task_records(directory: str | os.PathLike, settings: Any, task: dict[str, Any]) -> int:
    """Write the records of one two-player task into ``directory``; returns how many files were (re)written."""
    return write_records(directory, task_games(settings, task))


def write_records(directory: str | os.PathLike, named_records: Iterable[tuple[str, dict[str, Any]]]) -> int:
    """Write (file name, record) pairs into ``directory`` atomically; returns how many files were (re)written.
    A file that already holds exactly the right record is kept (resuming rewrites nothing)."""
    target = Path(directory)
    written = 0
    for name, record in named_records:
        path = target / name
        if _holds(path, record):
            continue
        write_json_atomic(path, record)
        written += 1
    return written


def _holds(path: Path, record: dict[str, Any]) -> bool:
    try:
        return loads_json(path.read_text(encoding="utf-8"), "game record") == record
    except (OSError, ValueError):  # a damaged or foreign file (not UTF-8, not JSON, nested too deep): rewrite it
        return False


# --------------------------------------------------------------------------- replay inputs
def split_replay_source(source: str) -> tuple[str, int | None]:
    """``"FILE"`` or ``"FILE#N"`` -> (file, N or None). A path that exists as given is a file even if it holds ``#``."""
    path, hash_sign, number = source.rpartition("#")
    if not hash_sign or os.path.exists(source):
        return source, None
    if not path:
        raise ValueError(f"replay source {source!r}: no file before '#' (write FILE#N, e.g. results/rr/deals.json#0)")
    if not (number.isascii() and number.isdigit()):  # isdigit alone takes '²', which int() refuses
        raise ValueError(f"replay source {source!r}: after '#' comes a deal number 0, 1, 2, ..., got {number!r}")
    return path, int(number)


def load_replay(source: str | os.PathLike) -> dict[str, Any]:
    """The game record to show for ``source``: a record file, or ``FILE#N`` (deal ``N`` of a deal file, unplayed)."""
    path, number = split_replay_source(os.fspath(source))  # a Path too, as load_record takes one
    if number is None:
        if not os.path.exists(path):
            raise FileNotFoundError(f"replay file {path!r} does not exist")
        try:
            return load_record(path)
        except ValueError:
            deal_count = _deal_file_size(path)
            if deal_count is None:
                raise
            # A deal file holds unplayed decks, not one game: say how to pick one instead of "missing key 'deck'".
            raise ValueError(f"{path!r} is a deal file holding {deal_count} deal(s), not a game record; pick a deal "
                             f"with FILE#N, e.g. {path}#0 (N from 0 to {deal_count - 1})") from None
    if not os.path.exists(path):
        raise FileNotFoundError(f"deal file {path!r} does not exist (in {source!r})")
    document = read_json_file(path, "deal file")  # strict JSON, as every file the project reads
    if not isinstance(document, dict) or document.get("format") != DEALS_FORMAT:
        found = document.get("format") if isinstance(document, dict) else type(document).__name__
        raise ValueError(
            f"{path!r} is not a deal file (format {found!r}, expected {DEALS_FORMAT!r}); '#N' selects a deal of a "
            "deal file such as a tournament's deals.json, a game record is replayed without '#N'"
        )
    deals, rules = parse_deals_document(document, where=f"deal file {path!r}")
    if number >= len(deals):
        raise ValueError(f"deal file {path!r} holds deals 0..{len(deals) - 1}, there is no deal {number}")
    deal = deals[number]
    return game_to_record(Game.deal(rules, deck=list(deal.deck), dealer=deal.dealer))


def _deal_file_size(path: str) -> int | None:
    """How many deals ``path`` lists if it is a deal file (format :data:`DEALS_FORMAT`), else ``None``."""
    try:
        document = read_json_file(path, "replay file")
    except ValueError:
        return None
    if not isinstance(document, dict) or document.get("format") != DEALS_FORMAT:
        return None
    deals = document.get("deals")
    return len(deals) if isinstance(deals, list) and deals else None


__all__ = ["file_labels", "load_replay", "prepare_records_dir", "record_name", "split_replay_source", "task_games",
           "write_records", "write_task_records"]
