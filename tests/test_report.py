"""eval.report: results.csv and table.md say what the records hold (found by a mutation review of eval/, session
72: the per-game CSV row, the seats, the margin's sign, the Bummerl columns and the table's orderings could be
changed without a test failing). The documents are built from hand-made records, so every expected cell is known."""

from __future__ import annotations

import csv
import io

from eval import TournamentSettings, generate_deals
from eval.report import markdown_table, results_csv
from eval.tournament import build_results
from eval_records import bummerl_entry, game_entry
from sixtysix_env import Rules

STANDARD = Rules.preset("standard")


def _settings(agents, count, match=False, bootstrap=0):
    return TournamentSettings(agents=tuple(agents), rules=STANDARD, deals=tuple(generate_deals(7, count, STANDARD)),
                              master_seed=7, match=match, bootstrap=bootstrap)


def _rows(document, records):
    return list(csv.DictReader(io.StringIO(results_csv(document, records))))


def test_a_csv_row_names_the_seats_the_winner_and_the_margin_from_as_side():
    """R16: in the unit's second game A sits in seat 1; there B (seat 0) won 2 game points with 70 card points to
    30, so A's margin is -2. A deal not scored (R15, 65:65) has no winner and a margin of 0. Times are summed in
    seconds per seat, decisions counted per seat."""
    settings = _settings(["alpha", "beta"], 1)
    records = [{"pair": 0, "deal": 0, "games": [
        game_entry(0, None, 0, points=(65, 65)),
        game_entry(1, 0, 2, points=(70, 30), times_us=((1000, 2000), (500_000,)), dealer=1),
    ]}]
    first, second = _rows(build_results(settings, records), records)
    assert (first["player0"], first["player1"], first["winner"], first["margin_a"]) == ("alpha", "beta", "", "0")
    assert (second["seat_a"], second["player0"], second["player1"]) == ("1", "beta", "alpha")
    assert (second["winner"], second["game_points"], second["margin_a"]) == ("beta", "2", "-2")
    assert (second["points0"], second["points1"], second["dealer"]) == ("70", "30", "1")
    assert (second["decisions0"], second["decisions1"]) == ("2", "1")
    assert (second["act_seconds0"], second["act_seconds1"]) == ("0.003000", "0.500000")


def test_bummerl_rows_number_the_bummerl_and_its_deal():
    """R17: a unit holds two Bummerls (seats swapped); each row says which Bummerl and which of its deals."""
    settings = _settings(["alpha", "beta"], 1, match=True)
    first = bummerl_entry(0, 0, [game_entry(0, 0, 3), game_entry(0, 0, 3), game_entry(0, 0, 1)])
    second = bummerl_entry(1, 0, [game_entry(1, 0, 3)] * 3)
    records = [{"pair": 0, "deal": 0, "bummerls": [first, second]}]
    rows = _rows(build_results(settings, records), records)
    assert [(row["bummerl_game"], row["bummerl_deal"]) for row in rows] == [
        ("0", "0"), ("0", "1"), ("0", "2"), ("1", "0"), ("1", "1"), ("1", "2")]
    assert [row["margin_a"] for row in rows] == ["3", "3", "1", "-3", "-3", "-3"]


def test_the_table_shows_units_won_tied_lost_intervals_low_to_high_and_ratings_best_first():
    settings = _settings(["alpha", "beta", "gamma"], 4, bootstrap=40)
    outcomes = {0: [(0, 1), (0, 1), (0, 0), (1, 0)], 1: [(1, 0), (0, 0), (1, 0), (1, 0)],
                2: [(0, 1), (0, 0), (1, 1), (0, 1)]}  # the winner's seat in each game (A in seat 0, then 1)
    records = [{"pair": pair, "deal": deal, "games": [game_entry(seat, winner, 1) for seat, winner in enumerate(games)]}
               for pair, per_deal in outcomes.items() for deal, games in enumerate(per_deal)]
    document = build_results(settings, records)
    table = markdown_table(document)
    assert "Incomplete run" not in table
    for pair in document["summary"]["pairs"]:
        margin, counts = pair["margin_per_deal"], pair["duplicate_pairs"]
        rate = pair["deal_win_rate"]
        line = next(line for line in table.splitlines() if line.startswith(f"| `{pair['a']}` | `{pair['b']}` |"))
        assert f"[{margin['low']:+.3f}, {margin['high']:+.3f}]" in line and margin["low"] < margin["high"]
        assert f"[{rate['low']:.3f}, {rate['high']:.3f}]" in line
        assert line.endswith(f"| {counts['won']}-{counts['tied']}-{counts['lost']} |")
    # alpha-beta: units +2, +2, 0, -2 -> 2 won, 1 tied, 1 lost (the order W-T-L is the header's)
    assert document["summary"]["pairs"][0]["duplicate_pairs"] == {"won": 2, "tied": 1, "lost": 1}
    ratings = document["summary"]["ratings"]["agents"]
    ranked = [line.split("`")[1] for line in table.splitlines() if line.startswith("| 1 |") or
              line.startswith("| 2 |") or line.startswith("| 3 |")]
    assert ranked == sorted(ratings, key=lambda name: -ratings[name]["elo"])
    assert ratings[ranked[0]]["elo"] > ratings[ranked[-1]]["elo"]
    unfinished = build_results(settings, records[:-1])
    assert "**Incomplete run.**" in markdown_table(unfinished)
