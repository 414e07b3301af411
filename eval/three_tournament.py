"""Duplicate tournaments for three seats (R21, three-player Sixty-six "echt zu dritt").

**Duplicate.** For every trio of agents (all of them when three are given) each deal is played in all six seat
permutations on the same deck and dealer, so every agent sits once in every seat against every arrangement of the
other two, and the luck of the cards cancels. The unit of every interval is the deal (its six games; the Wilson
intervals count games, as few as the deals' spread says they are worth: :func:`eval.stats.unit_wilson_interval`).
In match mode (``--match``) each permutation plays a whole Bummerl to ``rules.bummerl_target`` game points
(:class:`~sixtysix_env.match.ThreePlayerMatch`, the dealer rotating to the left) on decks derived from the deal,
and the unit is the deal's six Bummerls.

**Summary.** Per agent: game points per deal (the share of deals won, R21: one game point to the most points)
and points (card points in tricks plus counted marriages, R11/R12, so a deal's three add up to 120 or more) with
95% t intervals over units, and the *margin* — its game points per deal minus the mean of
the other two seats', a zero-sum measure — with a 95% t interval. Per pair of agents: the difference of their game
points per deal (paired by deal) with a 95% t interval, and how often one ends a game with more points than the
other (ties half), which feeds Bradley–Terry ratings over pairwise results (Elo scale, ``random`` anchored at 0
when it plays; bootstrap over deals). Outputs are those of the two-player harness: ``results.json``,
``results.csv`` (one row per game), ``table.md``, ``crosstable.png`` (pairwise differences), and ``deals.json``.

**Resume.** Each finished unit (trio x deal) is appended to ``journal.jsonl`` in the output directory, whose first
line holds the run's settings; running the same command again skips the finished units (other settings raise
``ValueError`` unless ``overwrite``). A unit keeps every game's deals (dealer and actions), and a resume replays
them from the deal (:func:`replay_game`), so a unit whose results its actions do not give is refused by line.

**Records.** With ``records_dir`` (``--records DIR``) every deal is written as a JSON game record
(:mod:`sixtysix_env.record`), rebuilt in the main process from the journal's units: ``deal0003_A_vs_B_vs_C.json``
with the labels of seats 0, 1 and 2 (``_bummerl02`` appended in match mode), see :mod:`eval.records`.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from sixtysix_env.fileio import remove_stale_temp_files, write_bytes_atomic, write_json_atomic, write_text_atomic
from sixtysix_env.game import Game, shuffled_deck
from sixtysix_env.infoset import InformationSet
from sixtysix_env.match import ThreePlayerMatch
from sixtysix_env.record import game_to_record
from sixtysix_env.rules import Rules
from sixtysix_env.schema import check_keys, loads_json, require_int, require_number

from . import stats
from .deals import Deal, deals_digest, derive_seed, save_deals
from .records import file_labels, prepare_records_dir, record_name, write_records
from .report import png_bytes, unidentified_ratings_note
from .tournament import (
    CONFIDENCE, RATING_ANCHOR, play_in_processes, refuse_a_file_as_output, refuse_results_without_journal,
    setting_differences, versions,
)

RESULTS_FORMAT = "sixtysix-three-tournament-results"
JOURNAL_FORMAT = "sixtysix-three-tournament-journal"
JOURNAL_VERSION = 2  # version 1 kept no actions, so its games could not be replayed
JOURNAL_NAME = "journal.jsonl"
OUTPUT_NAMES = ("results.json", "results.csv", "table.md", "crosstable.png")
PERMUTATIONS = tuple(itertools.permutations(range(3)))  # seat -> position in the trio


def generate_three_player_deals(master_seed: int, count: int) -> list[Deal]:
    """``count`` deals from ``master_seed``; deal ``i`` is dealt by seat ``i % 3`` (all seats deal equally)."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"deal count must be a positive integer, got {count!r}")
    deals = []
    for index in range(count):
        seed = derive_seed("deal3", master_seed, index)
        deals.append(Deal(dealer=index % 3, deck=tuple(shuffled_deck(24, seed)), seed=seed))
    return deals


def labels_of(specs: Sequence[str]) -> list[str]:
    labels, seen = [], {}
    for spec in specs:
        seen[spec] = seen.get(spec, 0) + 1
        labels.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    return labels


# --------------------------------------------------------------------------- playing
def _play_game(agents: list, rules: Rules, game: Any, timing: list[list[float]]) -> Any:
    for seat, agent in enumerate(agents):
        agent.start_deal(seat, rules)
    while not game.is_over:
        seat = game.current_player
        start = time.perf_counter()
        action = agents[seat].act(InformationSet(game, seat))
        timing[seat].append(time.perf_counter() - start)
        game.apply(action)
    return game


def _bummerl_deal(bummerl: ThreePlayerMatch, deck: Sequence[int], number: int) -> Any:
    """The ``number``-th deal of the Bummerl a unit's deal starts (R17 with R21): the deal's own deck first, then
    decks derived from it. Playing and replaying a unit both deal through here."""
    if number == 0:
        return bummerl.new_deal(deck=list(deck))
    return bummerl.new_deal(seed=derive_seed("bummerl3", tuple(deck), number))


def _new_bummerl(rules: Rules, deck: Sequence[int], dealer: int) -> ThreePlayerMatch:
    return ThreePlayerMatch(rules, first_dealer=dealer, seed=derive_seed("bummerl3", tuple(deck), dealer))


def _outcome(played: Sequence[Any], bummerl: ThreePlayerMatch | None) -> tuple[list[int], list[int]]:
    """(game points, points) per seat of one seating: a deal's (R21), or a Bummerl's winner and scores (R17)."""
    if bummerl is None:
        return list(played[0].returns()), list(played[0].result.points)
    return [1 if seat == bummerl.winner else 0 for seat in range(3)], list(bummerl.scores)


def play_unit(task: tuple) -> dict[str, Any]:
    """One deal (or, in match mode, one Bummerl per permutation) of one trio in all six seat permutations. Each
    game keeps its deals' dealers and actions, so a resume replays it and ``--records`` rebuilds its records."""
    specs, rules_dict, trio, deal_index, dealer, deck, master_seed, match = task
    from agents import make_agent

    rules = Rules.from_dict(rules_dict)
    games = []
    for number, permutation in enumerate(PERMUTATIONS):
        members = [trio[position] for position in permutation]  # agent index in each seat
        agents = [make_agent(specs[agent], seed=derive_seed(master_seed, deal_index, number, seat))
                  for seat, agent in enumerate(members)]
        timing: list[list[float]] = [[], [], []]
        bummerl = _new_bummerl(rules, deck, dealer) if match else None
        played = []
        while bummerl is not None and not bummerl.is_over:
            played.append(_play_game(agents, rules, _bummerl_deal(bummerl, deck, len(played)), timing))
            bummerl.record_deal(played[-1])
        if bummerl is None:
            played.append(_play_game(agents, rules, Game.deal(rules, deck=list(deck), dealer=dealer), timing))
        game_points, points = _outcome(played, bummerl)
        games.append({"seats": members, "game_points": game_points, "points": points,
                      "deals": [{"dealer": game.dealer, "actions": list(game.history)} for game in played],
                      "timing": [sum(t) for t in timing], "decisions": [len(t) for t in timing],
                      "max_decision": [max(t, default=0.0) for t in timing]})
    return {"trio": list(trio), "deal": deal_index, "games": games}


def replay_game(rules: Rules, deal: Deal, entry: dict[str, Any], match: bool) -> list[Any]:
    """The deals of one journal game replayed from ``deal`` (R4 deck order); raises ``ValueError`` where an action
    is illegal, the deals do not end as the game did (one deal, or a Bummerl to its end), or the replay's game
    points, points or decisions per seat differ from the recorded ones."""
    bummerl = _new_bummerl(rules, deal.deck, deal.dealer) if match else None
    played: list[Any] = []
    decisions = [0, 0, 0]
    for number, deal_entry in enumerate(entry["deals"]):
        where = f"deal {number}"
        if bummerl is not None and bummerl.is_over:
            raise ValueError(f"{where} follows the end of the Bummerl (R17)")
        if bummerl is None and number > 0:
            raise ValueError("a game of a deal tournament holds one deal")
        game = _bummerl_deal(bummerl, deal.deck, number) if bummerl is not None else Game.deal(
            rules, deck=list(deal.deck), dealer=deal.dealer)
        if deal_entry["dealer"] != game.dealer:
            raise ValueError(f"{where}: dealer {deal_entry['dealer']} where player {game.dealer} deals")
        for action in deal_entry["actions"]:
            if game.is_over:
                raise ValueError(f"{where}: actions go on after the end of the deal")
            decisions[game.current_player] += 1
            try:
                game.apply(action)
            except ValueError as error:
                raise ValueError(f"{where}: action {action} is illegal ({error})") from None
        if not game.is_over:
            raise ValueError(f"{where}: the actions stop before the end of the deal")
        played.append(game)
        if bummerl is not None:
            bummerl.record_deal(game)
    if not played or (bummerl is not None and not bummerl.is_over):
        raise ValueError("the deals stop before the end of the Bummerl (R17)" if played else "deals is empty")
    replayed = _outcome(played, bummerl)
    if [entry["game_points"], entry["points"]] != list(replayed):
        raise ValueError(f"game_points {entry['game_points']} and points {entry['points']} do not match the replay's "
                         f"{replayed[0]} and {replayed[1]}")
    if entry["decisions"] != decisions:
        raise ValueError(f"decisions {entry['decisions']} do not match the replay's {decisions}")
    return played


def run_three_tournament(specs: Sequence[str], rules: Rules, deals: Sequence[Deal], master_seed: int = 0,
                         out_dir: str | Path | None = None, workers: int = 1, progress: bool = True,
                         match: bool = False, bootstrap: int = 1000, deals_source: str = "generated",
                         overwrite: bool = False, records_dir: str | Path | None = None) -> dict[str, Any]:
    """Play every trio on every deal in all seat permutations; return (and write) the results document. With
    ``records_dir``, every deal's game record is written there too (:mod:`eval.records`), also those of units an
    earlier run finished."""
    if rules.players != 3:
        raise ValueError("a three-seat tournament needs rules with players=3 (preset 'three')")
    if len(specs) < 3:
        raise ValueError(f"a three-player tournament needs at least three agents, got {len(specs)}: {list(specs)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    check_agents(specs, rules)
    identity = run_identity(specs, rules, deals, master_seed, match)
    records: list[dict[str, Any]] = []
    journal_path = None
    if out_dir is not None:
        directory = Path(out_dir)
        journal_path = directory / JOURNAL_NAME
        refuse_a_file_as_output(directory)
        if overwrite:
            for name in (JOURNAL_NAME, *OUTPUT_NAMES):
                (directory / name).unlink(missing_ok=True)
        records = read_journal(journal_path, identity, rules, deals)  # refuses a journal of other settings
        if journal_path.exists():  # drop a torn last line before appending to the journal again
            write_text_atomic(journal_path, "".join(json.dumps(line) + "\n" for line in [identity, *records]))
        else:
            refuse_results_without_journal(directory, OUTPUT_NAMES)
        directory.mkdir(parents=True, exist_ok=True)
        remove_stale_temp_files(directory)  # a result file a kill interrupted mid-write (SIGKILL), never renamed
    labels = labels_of(specs)

    def write_unit_records(unit: dict[str, Any]) -> None:
        if records_dir is not None:
            write_records(records_dir, unit_records(labels, rules, deals, unit, match))

    if records_dir is not None:
        prepare_records_dir(records_dir)
        remove_stale_temp_files(records_dir)  # left by a run killed mid-write (SIGKILL)
        for unit in records:
            write_unit_records(unit)
    trios = list(itertools.combinations(range(len(specs)), 3))
    done = {(tuple(record["trio"]), record["deal"]) for record in records}
    tasks = [(tuple(specs), rules.to_dict(), trio, index, deal.dealer, deal.deck, master_seed, match)
             for index, deal in enumerate(deals) for trio in trios if (trio, index) not in done]
    bar = _progress(len(tasks) + len(done), progress, f"{len(trios)} trio(s) x {len(deals)} deals x 6 seatings")
    bar.update(len(done))
    journal = None
    if journal_path is not None:
        fresh = not journal_path.exists()
        journal = open(journal_path, "a", encoding="utf-8")
        if fresh:  # flushed now: a run killed before its first unit is still this run, continued by the same command
            journal.write(json.dumps(identity) + "\n")
            journal.flush()
    try:
        # Worker processes that report a dead worker (WorkerDied) instead of waiting for its units forever.
        for record in play_in_processes(play_unit, tasks, workers):
            records.append(record)
            if journal is not None:
                journal.write(json.dumps(record) + "\n")
                journal.flush()
            write_unit_records(record)
            bar.update(1)
    finally:
        bar.close()
        if journal is not None:
            journal.close()
    records.sort(key=lambda record: (record["deal"], record["trio"]))
    document = {
        "format": RESULTS_FORMAT,
        "version": 1,
        "settings": {"agents": list(specs), "labels": labels, "rules": rules.to_dict(),
                     "rules_preset": rules.preset_name, "deals": len(deals), "master_seed": master_seed,
                     "mode": "match" if match else "deal", "deals_source": deals_source, "trios": trios,
                     "workers": workers},
        "summary": summarise(labels, records, len(deals), bootstrap, master_seed),
        "timing": timing_summary(labels, records),
        "versions": versions(),
    }
    if out_dir is not None:
        directory = Path(out_dir)
        save_deals(directory / "deals.json", deals, rules, master_seed=master_seed)
        write_json_atomic(directory / "results.json", document)
        write_text_atomic(directory / "results.csv", results_csv(labels, records))
        write_text_atomic(directory / "table.md", markdown_table(document))
        write_bytes_atomic(directory / "crosstable.png", pairwise_png(document))
    return document


def unit_records(labels: Sequence[str], rules: Rules, deals: Sequence[Deal], unit: dict[str, Any],
                 match: bool) -> Iterator[tuple[str, dict[str, Any]]]:
    """(file name, game record) of every deal one unit played (:mod:`eval.records`: the seats' labels in seat
    order, and in match mode the Bummerl's deal number), replayed from the unit's deal (:func:`replay_game`)."""
    names = file_labels(labels)
    for game in unit["games"]:
        played = replay_game(rules, deals[unit["deal"]], game, match)
        seated = [names[agent] for agent in game["seats"]]
        for number, finished in enumerate(played):
            yield record_name(unit["deal"], seated, number if match else None), game_to_record(finished)


def check_agents(specs: Sequence[str], rules: Rules) -> None:
    """Refuse, by name, a spec that is not an agent and an agent that cannot play these rules (R21): one that
    searches the two-player game only, or a network fitted for two players, refuses the rules when a deal starts."""
    from agents import agent_for_rules

    for spec in specs:
        agent_for_rules(spec, rules)


def run_identity(specs: Sequence[str], rules: Rules, deals: Sequence[Deal], master_seed: int,
                 match: bool) -> dict[str, Any]:
    """The settings a journal's first line holds: a run continues only a journal with exactly these."""
    return {"format": JOURNAL_FORMAT, "version": JOURNAL_VERSION, "agents": list(specs), "rules": rules.to_dict(),
            "master_seed": master_seed, "mode": "match" if match else "deal", "deals": len(deals),
            "deals_sha256": deals_digest(deals)}


def check_output_dir(directory: Path, identity: dict[str, Any], rules: Rules, deals: Sequence[Deal],
                     overwrite: bool) -> None:
    """Refuse, reading only, an output directory this run cannot use: a file, a journal of other settings, or
    results without a journal (with ``overwrite`` only a file). The CLI calls it before ``--save-deals`` writes;
    :func:`run_three_tournament` makes the same checks as it reads the journal."""
    refuse_a_file_as_output(directory)
    if overwrite:
        return
    read_journal(directory / JOURNAL_NAME, identity, rules, deals)
    if not (directory / JOURNAL_NAME).exists():
        refuse_results_without_journal(directory, OUTPUT_NAMES)


def read_journal(path: Path, identity: dict[str, Any], rules: Rules, deals: Sequence[Deal]) -> list[dict[str, Any]]:
    """Finished units of an earlier run with the same settings (a torn last line is dropped); a journal of other
    settings raises ``ValueError`` naming the first difference, and a unit line that is not a whole unit of this run
    (strict JSON, every field of its type and range, each seating once, no unit twice, every game replaying from
    its deal to its recorded game points, points and decisions) names its line."""
    if not path.exists():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{str(path)!r} is not a three-player tournament journal (not UTF-8 text); use another "
                         "--out, or --overwrite to discard it") from None
    if "\n" not in text:  # killed before its header line ended: nothing finished, the run starts afresh
        return []
    lines = text.splitlines()
    try:
        stored = loads_json(lines[0], "journal header") if lines else None
    except ValueError:
        stored = None
    if isinstance(stored, dict) and stored.get("format") == JOURNAL_FORMAT and stored.get("version") != JOURNAL_VERSION:
        raise ValueError(f"{str(path)!r} is a three-player tournament journal of another version "
                         f"({stored.get('version', 1)!r}, this run writes {JOURNAL_VERSION}: version 1 kept no actions "
                         "to replay); use another --out, or --overwrite to discard it")
    if stored != identity:
        differing = setting_differences(stored, identity) if isinstance(stored, dict) else ["not a journal header"]
        raise ValueError(f"{str(path)!r} belongs to a run with other settings ({'; '.join(differing) or 'format'}); "
                         "use another --out, or --overwrite to discard it")
    records: list[dict[str, Any]] = []
    done: set[tuple[tuple[int, ...], int]] = set()
    for number, line in enumerate(lines[1:], start=2):
        try:
            record = loads_json(line, "unit")
        except ValueError:
            if number != len(lines):
                raise ValueError(f"{str(path)!r} line {number} is not JSON (only a torn last line is "
                                 "dropped)") from None
            continue
        try:
            unit = _unit_key(record, identity, rules, deals)
        except ValueError as error:
            raise ValueError(f"{str(path)!r} line {number} is not a unit of this run ({error}); use --overwrite "
                             "to discard the journal") from None
        if unit in done:
            raise ValueError(f"{str(path)!r} line {number} repeats trio {list(unit[0])} on deal {unit[1]}; use "
                             "--overwrite to discard the journal")
        done.add(unit)
        records.append(record)
    return records


_UNIT_GAME_KEYS = ("seats", "game_points", "points", "deals", "timing", "decisions", "max_decision")
_SEAT_KEYS = ("seats", "game_points", "points", "timing", "decisions", "max_decision")  # one value per seat


def _unit_key(record: Any, identity: dict[str, Any], rules: Rules,
              deals: Sequence[Deal]) -> tuple[tuple[int, ...], int]:
    """(trio, deal) of a journal unit after checking it is one :func:`play_unit` could have written for the run of
    ``identity``: every field of its type and range, and every game replayed from its deal (:func:`replay_game`)."""
    check_keys(record, "unit", ("trio", "deal", "games"))
    agent_count = len(identity["agents"])
    trio = record["trio"]
    if (not isinstance(trio, list) or len(trio) != 3 or any(type(agent) is not int for agent in trio)
            or not 0 <= trio[0] < trio[1] < trio[2] < agent_count):
        raise ValueError(f"trio must be three ascending agent indices below {agent_count}, got {trio!r}")
    deal = require_int(record["deal"], "deal", 0, identity["deals"] - 1)
    games = record["games"]
    if not isinstance(games, list) or len(games) != len(PERMUTATIONS):
        raise ValueError(f"games must be a list of {len(PERMUTATIONS)} (one per seat permutation, R21)")
    seatings = set()
    for number, game in enumerate(games):
        where = f"game {number}"
        check_keys(game, where, _UNIT_GAME_KEYS)
        for key in _SEAT_KEYS:
            if not isinstance(game[key], list) or len(game[key]) != 3:
                raise ValueError(f"{where}: {key} must be a list of three (one per seat)")
        seats = tuple(game["seats"])
        if any(type(agent) is not int for agent in seats) or sorted(seats) != trio:
            raise ValueError(f"{where}: seats {list(seats)} are not the trio {trio} in some order")
        seatings.add(seats)
        game_points = [require_int(value, f"{where} game_points", 0, 1) for value in game["game_points"]]
        # R21: the deal's winner alone scores 1 (a tie at the top: nobody); a Bummerl's winner is 1, the others 0
        one_winner = (sorted(game_points) == [0, 0, 1] if identity["mode"] == "match"
                      else sum(value > 0 for value in game_points) <= 1)
        if not one_winner:
            raise ValueError(f"{where}: game_points {game_points} do not name one winner (R21)")
        for value in game["points"]:
            require_int(value, f"{where} points", 0)
        for value in game["decisions"]:
            require_int(value, f"{where} decisions", 0)
        for key in ("timing", "max_decision"):
            for value in game[key]:
                if require_number(value, f"{where} {key}") < 0:
                    raise ValueError(f"{where}: {key} must not be negative, got {value!r}")
        _check_deal_entries(game["deals"], where)
        try:
            replay_game(rules, deals[deal], game, identity["mode"] == "match")
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
    if len(seatings) != len(PERMUTATIONS):
        raise ValueError("games must seat the trio in each of the six permutations once (R21)")
    return tuple(trio), deal


def _check_deal_entries(entries: Any, where: str) -> None:
    """The ``deals`` of a journal game: a list of ``{"dealer": seat, "actions": [action ids]}``."""
    if not isinstance(entries, list):
        raise ValueError(f"{where}: deals must be a list, got {type(entries).__name__}")
    for number, entry in enumerate(entries):
        check_keys(entry, f"{where} deal {number}", ("dealer", "actions"))
        require_int(entry["dealer"], f"{where} deal {number} dealer", 0, 2)
        if not isinstance(entry["actions"], list):
            raise ValueError(f"{where} deal {number}: actions must be a list of action ids")
        for action in entry["actions"]:
            require_int(action, f"{where} deal {number} action", 0)


def _progress(total: int, enabled: bool, what: str):
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, desc=what, unit="unit")


# --------------------------------------------------------------------------- statistics
def _interval_over_deals(values_by_deal: dict[int, list[float]]) -> dict[str, Any]:
    """The mean and t interval over deals of the values of each deal averaged (one value per trio that played it)."""
    return stats.mean_interval([float(np.mean(values)) for values in values_by_deal.values()], CONFIDENCE).to_dict()


def summarise(labels: Sequence[str], records: Sequence[dict[str, Any]], deal_count: int, bootstrap: int,
              seed: int) -> dict[str, Any]:
    count = len(labels)
    # Values by deal: with four agents or more, each deal is played by several trios, whose figures share the deal's
    # cards; they are averaged within the deal, and the intervals are over deals (the independent units).
    per_agent_units: dict[int, dict[str, dict[int, list[float]]]] = {
        i: {"game_points": defaultdict(list), "points": defaultdict(list), "margin": defaultdict(list)}
        for i in range(count)}
    pairs = [(i, j) for i in range(count) for j in range(i + 1, count)]
    pair_index = {pair: number for number, pair in enumerate(pairs)}
    pair_differences: dict[tuple[int, int], dict[int, list[float]]] = {pair: defaultdict(list) for pair in pairs}
    wins_per_unit = np.zeros((len(pairs), deal_count, 2))
    for record in records:
        totals = {agent: [0.0, 0.0] for agent in record["trio"]}  # game points, points (R12) over 6 games
        for game in record["games"]:
            for seat, agent in enumerate(game["seats"]):
                totals[agent][0] += game["game_points"][seat]
                totals[agent][1] += game["points"][seat]
            for first, second in itertools.combinations(range(3), 2):
                a, b = game["seats"][first], game["seats"][second]
                i, j, seat_i, seat_j = (a, b, first, second) if a < b else (b, a, second, first)
                difference = game["points"][seat_i] - game["points"][seat_j]
                cell = wins_per_unit[pair_index[(i, j)], record["deal"]]
                cell[0] += 1.0 if difference > 0 else 0.5 if difference == 0 else 0.0
                cell[1] += 1.0
        games = len(record["games"])
        means = {agent: (value[0] / games, value[1] / games) for agent, value in totals.items()}
        deal = record["deal"]
        for agent, (game_points, points) in means.items():
            others = [means[other][0] for other in means if other != agent]
            per_agent_units[agent]["game_points"][deal].append(game_points)
            per_agent_units[agent]["points"][deal].append(points)
            per_agent_units[agent]["margin"][deal].append(game_points - sum(others) / len(others))
        for i, j in itertools.combinations(sorted(record["trio"]), 2):
            pair_differences[(i, j)][deal].append(means[i][0] - means[j][0])
    agents = {labels[i]: {key: _interval_over_deals(by_deal) for key, by_deal in units.items()}
              for i, units in per_agent_units.items()}
    pair_rows = []
    for (i, j) in pairs:
        cells = wins_per_unit[pair_index[(i, j)]]  # per deal: (wins, games)
        wins, games = cells.sum(axis=0)
        low, high = stats.unit_wilson_interval(cells[:, 0], cells[:, 1], CONFIDENCE)
        pair_rows.append({"a": labels[i], "b": labels[j],
                          "game_points_difference": _interval_over_deals(pair_differences[(i, j)]),
                          "more_points_rate": {"rate": wins / games if games else None, "low": low, "high": high,
                                               "games": int(games)}})
    ratings = None
    if bootstrap >= 0 and count >= 2:
        try:
            anchor = RATING_ANCHOR if RATING_ANCHOR in labels else None
            # A negative master seed is a valid run seed, but not a generator's (the same for every other seed).
            ratings = stats.rate_agents(labels, wins_per_unit, pairs, anchor=anchor, bootstrap=bootstrap,
                                        seed=seed % 2**64).to_dict()
            ratings["basis"] = "pairwise: more counted points than the other agent in the same game (ties half)"
        except ValueError as error:
            ratings = {"error": str(error)}
    return {"agents": agents, "pairs": pair_rows, "ratings": ratings}


def timing_summary(labels: Sequence[str], records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    totals = {label: [0.0, 0, 0.0] for label in labels}  # seconds, decisions, max
    for record in records:
        for game in record["games"]:
            for seat, agent in enumerate(game["seats"]):
                entry = totals[labels[agent]]
                entry[0] += game["timing"][seat]
                entry[1] += game["decisions"][seat]
                entry[2] = max(entry[2], game["max_decision"][seat])
    return {label: {"decisions": decisions, "mean_ms": 1000 * seconds / decisions if decisions else None,
                    "max_ms": 1000 * longest}
            for label, (seconds, decisions, longest) in totals.items()}


# --------------------------------------------------------------------------- outputs
CSV_COLUMNS = ("deal", "permutation", "agent_seat0", "agent_seat1", "agent_seat2", "game_points_seat0",
               "game_points_seat1", "game_points_seat2", "points_seat0", "points_seat1", "points_seat2")


def results_csv(labels: Sequence[str], records: Sequence[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for record in records:
        for number, game in enumerate(record["games"]):
            writer.writerow([record["deal"], number, *(labels[agent] for agent in game["seats"]),
                             *game["game_points"], *game["points"]])
    return buffer.getvalue()


def _ci(cell: dict[str, Any], digits: int = 3) -> str:
    if cell["low"] is None:
        return f"{cell['mean']:+.{digits}f}"
    return f"{cell['mean']:+.{digits}f} [{cell['low']:+.{digits}f}, {cell['high']:+.{digits}f}]"


def markdown_table(document: dict[str, Any]) -> str:
    settings, summary = document["settings"], document["summary"]
    match = settings["mode"] == "match"
    unit = "Bummerl" if match else "deal"
    lines = [
        "# Three-player tournament results (R21)",
        "",
        f"Agents: {', '.join(f'`{label}`' for label in settings['labels'])}. Rules: "
        f"{settings['rules_preset'] or 'custom'}. {settings['deals']} deals, each played by every trio in all 6 seat "
        f"permutations{' as a Bummerl to ' + str(settings['rules']['bummerl_target']) if match else ''}; "
        f"master seed {settings['master_seed']}, deals {settings['deals_source']}. Intervals: 95%, over deals.",
        "",
        f"## Per agent (game points per {unit}: the share won; margin: minus the mean of the other two seats)",
        "",
        # In match mode a seating's points are its game points when the Bummerl ended (R17), not a deal's points.
        f"| agent | game points per {unit} | margin | "
        f"{'game points at the Bummerl end' if match else 'points per deal (tricks + counted marriages)'} |",
        "|---|---|---|---|",
    ]
    ordered = sorted(summary["agents"].items(), key=lambda item: -item[1]["margin"]["mean"])
    for label, row in ordered:
        lines.append(f"| `{label}` | {_ci(row['game_points'])} | {_ci(row['margin'])} | {_ci(row['points'], 1)} |")
    lines += ["", "## Pairs (A minus B, paired by deal)", "",
              f"| A | B | game points per {unit}, A - B | A ends with more points than B (ties half) | 95% Wilson |",
              "|---|---|---|---:|---|"]
    for pair in summary["pairs"]:
        rate = pair["more_points_rate"]
        lines.append(f"| `{pair['a']}` | `{pair['b']}` | {_ci(pair['game_points_difference'])} | "
                     f"{rate['rate']:.3f} | [{rate['low']:.3f}, {rate['high']:.3f}] |")
    ratings = summary.get("ratings")
    if ratings and "agents" in ratings:
        lines += ["", f"## Ratings (Bradley–Terry over pairwise results, Elo scale, anchor: {ratings['anchor']})", "",
                  "| agent | Elo | 95% interval |", "|---|---:|---|"]
        for label, rating in sorted(ratings["agents"].items(), key=lambda item: -item[1]["elo"]):
            interval = "–" if rating["low"] is None else f"[{rating['low']:+.0f}, {rating['high']:+.0f}]"
            lines.append(f"| `{label}` | {rating['elo']:+.0f} | {interval} |")
        lines += unidentified_ratings_note(ratings)
    lines += ["", "## Time per decision (mean of `act`, milliseconds)", "", "| agent | decisions | mean | max |",
              "|---|---:|---:|---:|"]
    for label, timing in document["timing"].items():
        mean = "–" if timing["mean_ms"] is None else f"{timing['mean_ms']:.3f}"
        lines.append(f"| `{label}` | {timing['decisions']} | {mean} | {timing['max_ms']:.1f} |")
    version = document["versions"]
    lines += ["", f"sixtysix {version['sixtysix']}, Python {version['python']}, "
                  f"commit {version.get('git_commit') or 'unknown'}.", ""]
    return "\n".join(lines)


def pairwise_png(document: dict[str, Any]) -> bytes:
    """Heat map of the pairwise game-point differences per deal (row minus column) with their intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = document["settings"]["labels"]
    size = len(labels)
    values = np.full((size, size), np.nan)
    half = np.full((size, size), np.nan)
    for pair in document["summary"]["pairs"]:
        i, j = labels.index(pair["a"]), labels.index(pair["b"])
        cell = pair["game_points_difference"]
        values[i, j], values[j, i] = cell["mean"], -cell["mean"]
        half[i, j] = half[j, i] = cell["half_width"] if cell["half_width"] is not None else np.nan
    limit = max(0.1, float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.1)
    figure, axes = plt.subplots(figsize=(1.6 + 1.3 * size, 1.2 + 1.1 * size), dpi=110)
    image = axes.imshow(values, cmap="RdBu", vmin=-limit, vmax=limit)
    axes.set_xticks(range(size), labels=labels, rotation=30, ha="right")
    axes.set_yticks(range(size), labels=labels)
    for i in range(size):
        for j in range(size):
            if i != j and np.isfinite(values[i, j]):
                axes.text(j, i, f"{values[i, j]:+.3f}\n±{half[i, j]:.3f}", ha="center", va="center", fontsize=8,
                          color="white" if abs(values[i, j]) > 0.6 * limit else "black")
    figure.colorbar(image, ax=axes, label="game points per deal, row minus column")
    axes.set_title("Three-player duplicate: pairwise differences (95% CI)")
    figure.tight_layout()
    return png_bytes(figure)


def three_player_cli(args: Any, specs: Sequence[str], rules: Rules) -> dict[str, Any]:
    """``sixtysix tournament --rules three ...`` (called by eval/cli.py with its parsed options)."""
    from .deals import load_deals

    if len(specs) < 3:  # refused before --save-deals writes anything
        raise ValueError(f"a three-player tournament needs at least three agents, got {len(specs)}: {list(specs)}")
    check_agents(specs, rules)  # an agent that cannot play R21, as early
    if args.deals_file:
        deals, rules = load_deals(args.deals_file, rules)
        if args.deals is not None:
            if args.deals > len(deals):  # as the two-player path says it (eval/cli.py)
                raise ValueError(f"--deals {args.deals} but deal file {args.deals_file!r} holds only {len(deals)} "
                                 "deals")
            deals = deals[: args.deals]
        source = f"file {args.deals_file}"
    else:
        deals = generate_three_player_deals(args.seed, args.deals if args.deals is not None else 100)
        source = f"generated from master seed {args.seed}"
    if args.out is not None:  # before --save-deals writes: a run with other settings there is refused first
        check_output_dir(Path(args.out), run_identity(specs, rules, deals, args.seed, args.match), rules, deals,
                         args.overwrite)
    if args.records is not None:
        prepare_records_dir(args.records)  # the last check: it creates the folder
    if args.save_deals:
        save_deals(args.save_deals, deals, rules, master_seed=None if args.deals_file else args.seed)
    return run_three_tournament(specs, rules, deals, master_seed=args.seed, out_dir=args.out, workers=args.workers,
                                progress=not args.no_progress and not args.quiet, match=args.match,
                                bootstrap=args.bootstrap, deals_source=source, overwrite=args.overwrite,
                                records_dir=args.records)


__all__ = ["generate_three_player_deals", "markdown_table", "play_unit", "replay_game", "run_three_tournament",
           "summarise", "three_player_cli", "unit_records"]
