"""Luck-adjusted margins of a match run: each game's margin minus the luck of its talon draws (AIVAT's chance
correction, :mod:`sixtysix_env.core.luck`), for a tighter interval with the same expectation.

Duplicate deals remove the luck of the deal; once the two games of a pair part ways, the talon's cards (R7) still
go to whoever wins the trick before them, and that luck is most of the noise left in a margin. Every game of a run
is replayed from its journal (deck and plays); at each draw where chance picks two of at least three face-down
cards, the draw's value to agent A (rollouts of the compiled heuristic, ``orders`` talon orders) minus its
expectation over every pair that could have been drawn is subtracted from A's margin. Each term has mean zero
whatever the rollouts' quality, so the adjusted margin estimates the same quantity as the raw one::

    python -m eval.pool results/run --luck                              # raw and adjusted margin
    python -m eval.pool results/new --minus results/old --luck --workers 2

The corrections of a run are kept in ``RUN/luck.json`` (per orders and seed, tied to the journal's bytes and to the
rollout player's numbers), so a run is replayed once. Two runs on the same deals use the same generator seed for the
same deal and seat, so the draws of their common opening (until the games part ways) get the same terms and cancel
in a paired difference.
Runs of Bummerls (``--match``), of other player counts or of rules the compiled core does not play are refused.
"""

from __future__ import annotations

import hashlib
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from sixtysix_env.fileio import write_json_atomic
from sixtysix_env.schema import loads_json

from .tournament import JOURNAL_FORMAT, JOURNAL_NAME

LUCK_FORMAT = "sixtysix-luck"
LUCK_VERSION = 1  # bump when draw_luck's values change; the rollout player's numbers are checked by their digest
LUCK_NAME = "luck.json"
DEFAULT_ORDERS = 128  # talon orders per draw and value: docs/strength.md "Session 28" (noise against cost)


@dataclass(frozen=True)
class LuckAdjustment:
    """How the luck of the draws is estimated: ``orders`` talon orders per value (more: less noise of the estimate
    itself, linearly more time), numba's generator seeded from ``seed`` and each game's deal and seat, ``workers``
    processes, a progress bar unless ``progress`` is false."""

    orders: int = DEFAULT_ORDERS
    seed: int = 0
    workers: int = 1
    progress: bool = True

    def __post_init__(self) -> None:
        for name, low in (("orders", 1), ("seed", 0), ("workers", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"luck {name} must be an integer >= {low}, got {value!r}")


def game_seed(seed: int, deal: int, seat_a: int) -> int:
    """The generator seed of one game's corrections: the same for the same deal and seat in every run."""
    return (seed * 1_000_003 + deal * 2 + seat_a) % (2 ** 31 - 1)


def read_journal(directory: Path) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    """The settings, the games and the SHA-256 of a match run's journal (read once): one ``{deal, seat_a, dealer,
    actions}`` per game (a task recorded twice, after a resumed run, counts once); refuses what is not a two-player
    deal run."""
    path = Path(directory) / JOURNAL_NAME
    try:
        raw = path.read_bytes()
        lines = raw.decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read the match journal {str(path)!r}: {getattr(error, 'strerror', None) or error}") \
            from None
    if not lines:
        raise ValueError(f"{str(path)!r} is empty, not a match journal")
    header = loads_json(lines[0], f"journal {str(path)!r} header")
    if not isinstance(header, dict) or header.get("journal") != JOURNAL_FORMAT:
        raise ValueError(f"{str(path)!r} is not a tournament journal")
    settings = header.get("settings")
    if not isinstance(settings, dict) or settings.get("mode") != "deal":
        raise ValueError(f"{str(path)!r} is not a run of single deals (Bummerls, --match, are not adjusted)")
    if len(settings.get("agents", ())) != 2:
        raise ValueError(f"{str(path)!r} is a tournament of {len(settings.get('agents', ()))} agents, not a match")
    games: list[dict[str, Any]] = []
    seen = set()
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        record = loads_json(line, f"journal {str(path)!r} line {number}")
        try:
            key = (record["pair"], record["deal"])
            entries = record["games"]
        except (TypeError, KeyError):
            raise ValueError(f"journal {str(path)!r} line {number} is not a deal pair's record") from None
        if key in seen:
            continue
        seen.add(key)
        for entry in entries:
            try:
                games.append({"deal": int(record["deal"]), "seat_a": int(entry["seat_a"]),
                              "dealer": int(entry["dealer"]), "actions": [int(a) for a in entry["actions"]]})
            except (TypeError, KeyError, ValueError):
                raise ValueError(f"journal {str(path)!r} line {number} holds a malformed game") from None
    return settings, games, hashlib.sha256(raw).hexdigest()


# One worker's state: the rules, the deals' decks, the rollout player's numbers and a transposition table.
_WORKER: dict[str, Any] = {}


def _start_worker(rules_dict: dict[str, Any], decks: list[list[int]]) -> None:
    from agents.rollout import rollout_player_params
    from sixtysix_env.core.solver import Table
    from sixtysix_env.rules import Rules

    _WORKER.update(rules=Rules.from_dict(rules_dict), decks=decks, params=rollout_player_params(), table=Table(14))


def _game_correction(game: dict[str, Any], orders: int, seed: int) -> tuple[float, int, int]:
    """(the game's correction for agent A, its chance draws, A's margin as the replay ends) in this worker."""
    from sixtysix_env.actions import NUM_ACTIONS
    from sixtysix_env.core.engine import seed_generator, value_for
    from sixtysix_env.core.luck import MAX_CHANCE_DRAWS, game_luck
    from sixtysix_env.core.state import new_state

    deal, seat_a = game["deal"], game["seat_a"]
    where = f"deal {deal} (A in seat {seat_a})"
    if not 0 <= deal < len(_WORKER["decks"]):
        raise ValueError(f"the journal's {where} is not in the run's deals.json")
    actions = np.asarray(game["actions"], dtype=np.int64)
    if actions.size and (actions.min() < 0 or actions.max() >= NUM_ACTIONS):
        raise ValueError(f"the journal's {where} holds an action outside 0..{NUM_ACTIONS - 1}")
    state = new_state(_WORKER["rules"], _WORKER["decks"][deal], game["dealer"])
    table = _WORKER["table"]
    terms = np.zeros(len(actions))
    seed_generator(game_seed(seed, deal, seat_a))
    draws = game_luck(state, actions, seat_a, _WORKER["params"], orders, table.entries, table.nodes,
                      table.claim_worlds(2 * orders * MAX_CHANCE_DRAWS), terms)
    if draws < 0:
        raise ValueError(f"the journal's {where} does not replay: play {-1 - draws} is illegal or the deal "
                         "does not end")
    return float(terms.sum()), int(draws), int(value_for(state, seat_a))


def values_digest() -> str:
    """SHA-256 of the rollout player's numbers that value the draws (``agents.rollout.rollout_player_params``): kept
    corrections computed with other numbers are computed again."""
    from agents.rollout import rollout_player_params

    return hashlib.sha256(np.ascontiguousarray(rollout_player_params()).tobytes()).hexdigest()


def _correct_chunk(chunk: list[dict[str, Any]], orders: int, seed: int) -> list[tuple[float, int, int]]:
    return [_game_correction(game, orders, seed) for game in chunk]


def game_corrections(directory: Path, luck: LuckAdjustment) -> dict[tuple[int, int], tuple[float, int, int]]:
    """``{(deal, seat of A): (correction, chance draws, A's replayed margin)}`` for every game of a run, from its
    ``luck.json`` when that holds this journal's corrections for these orders and seed, else computed (and kept)."""
    directory = Path(directory)
    settings, games, digest = read_journal(directory)
    cache_path = directory / LUCK_NAME
    cached = _read_cache(cache_path)
    key = f"orders={luck.orders},seed={luck.seed}"
    player_digest = values_digest()
    kept = _kept_corrections(cached, key, digest, player_digest)
    if kept is not None:
        return kept
    from sixtysix_env.core.state import core_rule_bits
    from sixtysix_env.rules import Rules
    from .deals import load_deals

    try:
        rules = Rules.from_dict(settings.get("rules") if isinstance(settings, dict) else None)
    except (TypeError, ValueError) as error:  # from_dict names what it got: no bare key, no journal left unnamed
        raise ValueError(f"the journal of {str(directory)!r} names no valid rules ({error})") from None
    core_rule_bits(rules)  # refuses rules the compiled core does not play, by name
    try:
        deals, _ = load_deals(directory / "deals.json", rules)
    except FileNotFoundError as error:
        raise ValueError(str(error)) from None
    decks = [list(deal.deck) for deal in deals]
    chunks = [games[start:start + 25] for start in range(0, len(games), 25)]
    results: list[tuple[float, int, int]] = []
    bar = tqdm(total=len(games), desc=f"luck of {directory.name}", unit="game", disable=not luck.progress)
    if luck.workers == 1:
        _start_worker(settings["rules"], decks)
        for chunk in chunks:
            results += _correct_chunk(chunk, luck.orders, luck.seed)
            bar.update(len(chunk))
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(luck.workers, mp_context=context, initializer=_start_worker,
                                 initargs=(settings["rules"], decks)) as executor:
            for chunk, done in zip(chunks, executor.map(_correct_chunk, chunks, [luck.orders] * len(chunks),
                                                        [luck.seed] * len(chunks))):
                results += done
                bar.update(len(chunk))
    bar.close()
    corrections = {(game["deal"], game["seat_a"]): result for game, result in zip(games, results)}
    runs = dict(cached["runs"]) if isinstance(cached.get("runs"), dict) else {}
    runs[key] = {"journal_sha256": digest, "values_sha256": player_digest,
                 "games": [[deal, seat, *result] for (deal, seat), result in sorted(corrections.items())]}
    write_json_atomic(cache_path, {"format": LUCK_FORMAT, "version": LUCK_VERSION, "runs": runs})
    return corrections


def _kept_corrections(cached: dict[str, Any], key: str, digest: str,
                      player_digest: str) -> dict[tuple[int, int], tuple[float, int, int]] | None:
    """The corrections ``luck.json`` keeps under ``key`` for the journal with this digest, valued by the rollout
    player with ``player_digest``; ``None`` when it keeps none, or keeps them for another journal or other values, or
    in a shape not ours (they are then computed again)."""
    try:
        entry = cached["runs"][key]
        if entry["journal_sha256"] != digest or entry["values_sha256"] != player_digest:
            return None
        return {(int(deal), int(seat)): (float(value), int(draws), int(margin))
                for deal, seat, value, draws, margin in entry["games"]}
    except (KeyError, TypeError, ValueError):
        return None


def _read_cache(path: Path) -> dict[str, Any]:
    """The kept corrections, or nothing when the file is missing or not ours (it is then rewritten)."""
    try:
        value = loads_json(path.read_text(encoding="utf-8"), "luck cache")
    except (OSError, ValueError):  # UnicodeDecodeError included
        return {}
    if not isinstance(value, dict) or value.get("format") != LUCK_FORMAT or value.get("version") != LUCK_VERSION:
        return {}
    return value


def adjusted_game_margins(directory: Path, margins: dict[tuple[int, int], float],
                          luck: LuckAdjustment) -> dict[tuple[int, int], float]:
    """Each game's margin for A minus its luck; ``margins`` (from ``results.csv``) must be the replayed ones."""
    corrections = game_corrections(directory, luck)
    if corrections.keys() != margins.keys():
        raise ValueError(f"the journal and results.csv of {str(directory)!r} hold different games")
    adjusted = {}
    for key, margin in margins.items():
        correction, _, replayed = corrections[key]
        if replayed != margin:
            raise ValueError(f"{str(directory)!r}: deal {key[0]} with A in seat {key[1]} replays to a margin of "
                             f"{replayed}, results.csv says {margin}")
        adjusted[key] = margin - correction
    return adjusted


__all__ = ["DEFAULT_ORDERS", "LuckAdjustment", "adjusted_game_margins", "game_corrections", "game_seed",
           "read_journal"]
