"""Details of "could I have won?" (play/analysis.py) and the browser app's SQLite store (play/web/store.py) that the
broader tests in test_play_session.py, test_play_web.py and test_play_web_input.py leave open (from a mutation
review of both files)."""

from __future__ import annotations

import json
import sqlite3

import pytest

import play.analysis as analysis
from play.analysis import OpenSolver, analyse_deal, open_analysis, search_costs
from play.web.store import DamagedStoreError, Store
from sixtysix_env import Game, Rules
from sixtysix_env.actions import ACTION_NAMES, CLOSE, parse_action
from sixtysix_env.record import deck_from_hands, game_to_record, record_to_game

# Forehand (player 1, the dealer is 0) holds every high trump and the ace of hearts; the dealer holds no club and
# no heart, so whatever forehand leads wins the trick (R6, R8): a deal solved in a blink with all cards open.
SWEEP = deck_from_hands(forehand="AC TC KC QC JC AH", dealer="9D JD QD KD 9S JS", trump_card="9C")


def _closed_sweep() -> tuple[dict, dict[int, list[int]]]:
    """The SWEEP deal: forehand closes at once (R10), then both play their first legal card to the end — forehand
    takes every trick but never announces his marriage, ends at 52 and fails as closer: the dealer scores 3 (R16).
    The record and each seat's decisions (indexes into its actions)."""
    game = Game.deal(Rules(), deck=SWEEP, dealer=0)
    decisions: dict[int, list[int]] = {0: [], 1: []}
    game.apply(CLOSE)
    decisions[1].append(0)
    while not game.is_over:
        decisions[game.to_move].append(len(game.history))
        game.apply(game.legal_actions()[0])
    return game_to_record(game), decisions


# ---------------------------------------------------------------------------------------------- the open solve
def test_a_finished_deal_is_worth_its_result_to_each_seat():
    """R10/R16: the open value of a finished deal is that seat's game points: +3 for the dealer against a failed
    closer, -3 for forehand (not the other seat's)."""
    record, _ = _closed_sweep()
    final = record_to_game(record)
    assert final.is_over and tuple(final.result.returns()) == (3, -3)
    assert OpenSolver(0, seconds=None).value(final) == 3
    assert OpenSolver(1, seconds=None).value(final) == -3


def test_the_table_tells_a_marriage_lead_from_a_plain_lead_of_the_same_card():
    """R13: leading a queen with her marriage announced or without it leaves the same cards and trick points but not
    the same points; one solver (one transposition table) must value the two positions apart, as fresh ones do."""
    deck = deck_from_hands(forehand="AD TC 9D 9H QC AH", dealer="9S KS AS JC TS QD", trump_card="KC",
                           talon="QH JH TD JS KH TH KD AC JD QS 9C")
    game = Game.deal(Rules(), deck=deck, dealer=1)
    for name in ("play 9H", "play KS", "play TC", "play JH", "play QC", "play JC"):
        game.apply(parse_action(name))
    married, plain = game.clone(), game.clone()
    married.apply(parse_action("marry QH"))
    plain.apply(parse_action("play QH"))
    player = game.to_move
    assert OpenSolver(player, seconds=None).value(married) == 1
    assert OpenSolver(player, seconds=None).value(plain) == -1
    shared = OpenSolver(player, seconds=None)
    assert (shared.value(married), shared.value(plain)) == (1, -1)


def _scripted_values(monkeypatch, values: dict[int, int], budget_below: int = -1) -> None:
    """OpenSolver.value stubbed by the number of actions played: the bookkeeping of open_analysis alone. Positions
    with fewer than ``budget_below`` actions run out of time."""
    def value(self, game):
        if len(game.history) < budget_below:
            raise analysis.BudgetExceeded("stub")
        return values[len(game.history)]

    monkeypatch.setattr(OpenSolver, "value", value)


def test_each_move_is_valued_before_and_after_it_and_the_first_slip_is_named(monkeypatch):
    """The value before a move is that of the position it was made in, the value after that of the next position;
    the cost is before minus after; "slipped at" is the first move that turned a win into a loss."""
    record, decisions = _closed_sweep()
    human = 1
    moves = decisions[human][:4]  # indexes 0, 1, 3, 5
    values = {0: 2, 1: -1, 2: 1, 3: 1, 4: 2, 5: 2, 6: -2, 7: -2, 8: -2}
    _scripted_values(monkeypatch, values)
    result = open_analysis(record, human, moves, seconds=None)
    assert [(move["index"], move["value_before"], move["value_after"], move["cost"]) for move in result["moves"]] \
        == [(0, 2, -1, 3), (1, -1, 1, -2), (3, 1, 2, -1), (5, 2, -2, 4)]
    assert result["moves"][0]["move"] == ACTION_NAMES[CLOSE]
    assert result["start_value"] == 2 and result["solved"] and result["could_have_won"]
    assert result["slipped_at"]["index"] == 0  # the first of the two slips (indexes 0 and 5)


def test_a_budget_that_runs_out_leaves_the_early_moves_open(monkeypatch):
    """Solved from the last decision backwards: where the time runs out the earlier entries and the start value stay
    None and ``solved`` is false; "could I have won?" is answered from what was solved."""
    record, decisions = _closed_sweep()
    moves = decisions[1][:4]  # indexes 0, 1, 3, 5
    _scripted_values(monkeypatch, {3: -1, 4: -1, 5: -1, 6: -1}, budget_below=3)
    result = open_analysis(record, 1, moves, seconds=1.0)
    assert not result["solved"] and result["start_value"] is None
    assert [move["value_before"] for move in result["moves"]] == [None, None, -1, -1]
    assert not result["could_have_won"] and result["slipped_at"] is None


def test_a_real_budget_of_zero_seconds_is_exceeded():
    """The open solve of a deal whose phase 1 (R7) needs more than 255 searched positions stops at a zero budget."""
    deck = deck_from_hands(forehand="AC TC KC QC AH TH", dealer="9D JD QD KD 9S JS", trump_card="JC")
    game = Game.deal(Rules(), deck=deck, dealer=0)
    with pytest.raises(analysis.BudgetExceeded, match="more than 0 s"):
        OpenSolver(1, seconds=0).value(game)


# ---------------------------------------------------------------------------------------------- the search's costs
def test_search_costs_forced_moves_and_ties_of_the_best():
    """R8: the dealer's last card is forced (no search, cost 0, itself the only best move); forehand's first lead
    after closing still wins 3 (R16: the trump marriage can come later), so it costs nothing."""
    record, decisions = _closed_sweep()
    last = decisions[0][-1]
    (forced,) = search_costs(record, 0, [last], seconds_per_move=0.02)
    assert forced["forced"] and forced["value"] is None and forced["cost"] == 0.0
    assert forced["best_moves"] == [forced["move"]]
    (lead,) = search_costs(record, 1, [decisions[1][1]], seconds_per_move=0.05)
    assert not lead["forced"] and lead["value"] == lead["best_value"] == 3 and lead["cost"] == 0
    assert lead["move"] in lead["best_moves"]


def test_a_moves_cost_is_the_best_mean_minus_its_own_and_every_tied_best_is_listed(monkeypatch):
    """search_costs with the search's values stubbed: cost = best - the move's value (never negative), and every
    move with the best value is a best move, in the search's order."""
    import play.session

    record, decisions = _closed_sweep()
    position = Game.deal(Rules(), deck=SWEEP, dealer=0)
    position.apply(CLOSE)
    played, *others = position.legal_actions()
    values = {played: 1.0, others[0]: 2.5, others[1]: 2.5}
    rows = sorted(({"id": a, "name": ACTION_NAMES[a], "value": values.get(a, 0.0)} for a in position.legal_actions()),
                  key=lambda row: -row["value"])
    monkeypatch.setattr(play.session, "hint_values", lambda info, seconds, seed: rows)
    (row,) = search_costs(record, 1, [decisions[1][1]], seconds_per_move=0.01)
    assert row["move"] == ACTION_NAMES[played] and row["value"] == 1.0 and row["best_value"] == 2.5
    assert row["cost"] == 1.5
    assert row["best_moves"] == [ACTION_NAMES[others[0]], ACTION_NAMES[others[1]]]


def test_analyse_deal_names_the_human(monkeypatch):
    """The combined answer names the seat it was made for (the human's, not the agent's)."""
    record, decisions = _closed_sweep()
    _scripted_values(monkeypatch, {n: 3 for n in range(len(record["actions"]) + 1)})
    monkeypatch.setattr(analysis, "search_costs", lambda *args: [])
    result = analyse_deal(record, 1, decisions[1][:1], open_seconds=None)
    assert result["human"] == 1 and result["result"] == record["result"] and result["search"] == []


# ---------------------------------------------------------------------------------------------- the store
@pytest.fixture
def store(tmp_path):
    opened = Store(tmp_path / "games.sqlite3")
    yield opened
    opened.close()


def _deal(store: Store, game_id: str, number: int, points: int, human: int = 1, opponent: str = "heuristic",
          player: str = "ann", finished: bool = False, winner: str | None = None) -> None:
    store.save_game(game_id, {"n": number}, finished, winner, [(number, points, json.dumps({"deal": number}))],
                    player, opponent, human)


def test_a_file_store_is_in_wal_mode(store):
    assert store._run("PRAGMA journal_mode")[0][0] == "wal"


def test_a_foreign_table_next_to_ours_is_refused_and_left_alone(tmp_path):
    """Every table is checked, not only the first by name: our deals table next to another program's table."""
    path = tmp_path / "mixed.db"
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE zzz (x)")
    with pytest.raises(ValueError, match=r"zzz\(x\)"):
        Store(path)


def test_a_finished_deal_keeps_its_seat_opponent_and_record(store):
    store.create_game("g1", "ann", "heuristic", {"n": 0}, bummerl=True)
    _deal(store, "g1", 1, 2, human=0, opponent="heuristic")
    assert store.finished_deal("g1", 1) == ({"deal": 1}, 0, "heuristic")
    assert store.finished_deal("g1", 2) is None
    assert store.finished_deals("g1") == 1 and store.finished_deals("nope") is None
    store.create_game("g2", "ann", "heuristic", {"n": 0}, bummerl=True)
    assert store.finished_deals("g2") == 0


def test_a_deal_saved_twice_keeps_its_first_record_and_analysis(store):
    store.create_game("g1", "ann", "heuristic", {"n": 0}, bummerl=True)
    _deal(store, "g1", 1, 2)
    store.save_analysis("g1", 1, {"open": 1})
    store.save_game("g1", {"n": 2}, False, None, [(1, -3, json.dumps({"deal": "again"}))], "ann", "heuristic", 1)
    assert store.finished_deal("g1", 1)[0] == {"deal": 1}
    assert store.deal_analysis("g1", 1) == {"open": 1}


def test_each_deal_has_its_own_analysis(store):
    store.create_game("g1", "ann", "heuristic", {"n": 0}, bummerl=True)
    _deal(store, "g1", 1, 2)
    assert store.deal_analysis("g1", 1) is None  # not analysed yet: None, not a damaged row
    _deal(store, "g1", 2, -1)
    store.save_analysis("g1", 2, {"deal": 2})
    assert store.deal_analysis("g1", 1) is None and store.deal_analysis("g1", 2) == {"deal": 2}
    store.save_analysis("g1", 1, {"deal": 1})
    assert store.deal_analysis("g1", 2) == {"deal": 2} and store.deal_analysis("g1", 1) == {"deal": 1}


def test_a_failed_save_changes_nothing(store):
    """A save is one transaction: a deal that cannot be written undoes the state update before it."""
    store.create_game("g1", "ann", "heuristic", {"n": 0}, bummerl=True)
    with pytest.raises(sqlite3.Error):
        store.save_game("g1", {"n": 1}, True, "you", [(1, 2, {"not": "text"})], "ann", "heuristic", 1)
    assert store.load_game("g1") == ({"n": 0}, "ann", False)
    assert store.live_count() == 1 and store.finished_deals("g1") == 0


def test_expiry_spares_finished_games_and_clears_idle_ones(store):
    for game_id in ("live", "done", "fresh"):
        store.create_game(game_id, "ann", "heuristic", {"id": game_id}, bummerl=True)
    store.save_game("done", {"id": "done"}, True, "you", [], "ann", "heuristic", 1)
    store._run("UPDATE games SET updated=updated-1000 WHERE id IN ('live', 'done')")
    assert store.live_count() == 2  # a finished game is not live
    assert store.expire_idle(500) == ["live"]
    assert store.load_game("live") == ({}, "ann", True)
    assert store.load_game("done") == ({"id": "done"}, "ann", False)
    assert store.load_game("fresh") == ({"id": "fresh"}, "ann", False)
    assert store.live_count() == 1 and store.expire_idle(500) == []


def test_history_counts_deals_margin_and_bummerl_per_agent(store):
    """R16/R17: deals won and lost by the sign of the human's game points, the margin their sum, and Bummerl only
    for finished Bummerl games, won when the winner is "you"."""
    store.create_game("b1", "ann", "random", {}, bummerl=True)
    _deal(store, "b1", 1, 3, opponent="random")
    _deal(store, "b1", 2, -2, opponent="random", finished=True, winner="you")
    store.create_game("b2", "ann", "random", {}, bummerl=True)
    _deal(store, "b2", 1, -1, opponent="random", finished=True, winner="opponent")
    store.create_game("single", "ann", "random", {}, bummerl=False)
    _deal(store, "single", 1, 1, opponent="random", finished=True, winner="you")
    store.create_game("h1", "ann", "heuristic", {}, bummerl=True)
    _deal(store, "h1", 1, 2, opponent="heuristic")
    store.create_game("other", "bob", "random", {}, bummerl=True)
    _deal(store, "other", 1, 3, opponent="random", player="bob", finished=True, winner="you")
    store.create_game("b3", "ann", "random", {}, bummerl=True)
    store.save_game("b3", {}, True, "you", [], "ann", "random", 1)
    store.create_game("alpha", "ann", "alpha", {}, bummerl=True)  # a Bummerl without stored deals
    store.save_game("alpha", {}, True, "opponent", [], "ann", "alpha", 1)
    history = store.history("ann")
    assert [row["opponent"] for row in history["agents"]] == ["alpha", "heuristic", "random"]
    assert history["agents"][0] == {"opponent": "alpha", "deals": 0, "deals_won": 0, "deals_lost": 0, "margin": 0,
                                    "bummerl_won": 0, "bummerl_lost": 1}
    assert history["agents"][2] == {"opponent": "random", "deals": 4, "deals_won": 2, "deals_lost": 2, "margin": 1,
                                    "bummerl_won": 2, "bummerl_lost": 1}


def test_history_lists_the_newest_deals_and_games_first(store):
    store.create_game("old", "ann", "random", {}, bummerl=True)
    store.create_game("new", "ann", "random", {}, bummerl=True)
    for number in range(1, 56):
        _deal(store, "old", number, 1, opponent="random")
    store._run("UPDATE deals SET finished=number")
    store._run("UPDATE games SET created=1, updated=2 WHERE id='old'")
    store._run("UPDATE games SET created=0, updated=1 WHERE id='new'")
    history = store.history("ann")
    assert [deal["number"] for deal in history["recent_deals"]] == list(range(55, 5, -1))
    assert [game["game"] for game in history["games"]] == ["old", "new"]


def test_a_damaged_analysis_is_the_stores_fault(store):
    store.create_game("g1", "ann", "heuristic", {"n": 0}, bummerl=True)
    _deal(store, "g1", 1, 2)
    store._run("UPDATE deals SET analysis='{not json'")
    with pytest.raises(DamagedStoreError, match="the analysis of deal 1 of game 'g1'"):
        store.deal_analysis("g1", 1)
