"""bench.closings: a match run's margin split by who closed the talon (R10), replayed from its journal."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from bench.closings import CLOSERS, closer_split, game_closer, main
from eval.pool import game_margins
from sixtysix_env import Game, Rules
from sixtysix_env.actions import CLOSE, PASS
from sixtysix_env.core.engine import apply
from sixtysix_env.core.layout import TO_MOVE
from sixtysix_env.core.state import new_state

# R4 order, dealer 0: forehand (player 1) holds cards 1-3 and 7-9, the dealer 4-6 and 10-12, the trump card is 13.
DECK = ["AC", "TC", "KC", "AS", "TS", "KS", "QC", "JC", "9C", "QS", "JS", "9S", "9H",
        "AH", "9D", "TH", "KH", "QH", "JH", "AD", "TD", "KD", "QD", "JD"]


def first_legal_play(rules: Rules, deck: list[str], dealer: int, first: list[int]) -> list[int]:
    """The actions of a deal that starts with ``first`` and then always takes the lowest legal action."""
    game = Game.deal(rules, deck=deck, dealer=dealer)
    actions = list(first)
    for action in first:
        game.apply(action)
    while not game.is_over:
        action = min(game.legal_actions())
        game.apply(action)
        actions.append(action)
    return actions


@pytest.fixture(scope="module")
def match_run(play_match):
    return play_match(("heuristic", "greedy"), deals=30, seed=54)


def test_r10_a_closing_is_credited_to_the_player_who_led_it():
    rules = Rules()
    game = Game.deal(rules, deck=DECK, dealer=0)
    assert game.current_player == 1 and CLOSE in game.legal_actions()  # forehand may close before the first lead
    actions = first_legal_play(rules, DECK, 0, [CLOSE])
    closer, points_for_player_1 = game_closer(rules, _deck_ids(DECK), 0, 1, actions)  # A is player 1
    assert closer == "A"
    assert game_closer(rules, _deck_ids(DECK), 0, 0, actions) == ("B", -points_for_player_1)
    assert points_for_player_1 != 0  # a closed deal always scores (R10)
    # Without a closing the talon runs out or the deal is declared: nobody closed.
    unclosed = first_legal_play(rules, DECK, 0, [])
    assert CLOSE not in unclosed  # the lowest legal action is always a card (ids 0-23) before the close (33)
    assert game_closer(rules, _deck_ids(DECK), 0, 1, unclosed)[0] == "nobody"


def _deck_ids(names: list[str]) -> list[int]:
    from sixtysix_env.game import parse_deck

    return parse_deck(names, Rules())


def test_replay_refuses_illegal_and_unfinished_games():
    rules = Rules()
    actions = first_legal_play(rules, DECK, 0, [CLOSE])
    with pytest.raises(ValueError, match="do not finish"):
        game_closer(rules, _deck_ids(DECK), 0, 1, actions[:-1])
    with pytest.raises(ValueError):
        game_closer(rules, _deck_ids(DECK), 0, 1, [CLOSE, CLOSE])


def test_the_shares_add_up_to_the_runs_margin(match_run):
    split = closer_split(match_run, progress=False)
    assert split["pairs"] == 30
    assert sum(split["closers"][closer]["games"] for closer in CLOSERS) == 60
    _, margins = game_margins(match_run)
    assert split["margin"] == pytest.approx(np.mean(list(margins.values())))
    assert sum(split["closers"][closer]["share"] for closer in CLOSERS) == pytest.approx(split["margin"])
    for row in split["closers"].values():
        assert row["low"] <= row["share"] <= row["high"]
    # The heuristic closes (R10) and greedy never does, so every closing is A's.
    assert split["closers"]["B"]["games"] == 0 and split["closers"]["B"]["share"] == 0
    assert split["closers"]["A"]["games"] > 0


def test_the_closer_agrees_with_a_replay_on_the_compiled_engine(match_run):
    """Who closed, found a second way: the compiled engine's player to move when the close was played."""
    split = closer_split(match_run, progress=False)
    journal = (match_run / "journal.jsonl").read_text().splitlines()[1:]
    deals = json.loads((match_run / "deals.json").read_text())["deals"]
    by_a = 0
    for line in journal:
        record = json.loads(line)
        for game in record["games"]:
            state = new_state(Rules(), deck=deals[record["deal"]]["deck"], dealer=game["dealer"])
            for action in game["actions"]:
                if action == CLOSE:
                    by_a += int(state[TO_MOVE]) == game["seat_a"]
                apply(state, action)
    assert split["closers"]["A"]["games"] == by_a


def test_a_journal_that_does_not_replay_is_refused_by_name(match_run, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(match_run, broken)
    lines = (broken / "journal.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record["games"][0]["actions"].insert(0, PASS)  # a pass only declines an exchange (R9)
    lines[1] = json.dumps(record)
    (broken / "journal.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=f"deal {record['deal']} with A in seat"):
        closer_split(broken, progress=False)


def test_the_command_writes_json_and_a_plot(match_run, tmp_path, capsys):
    assert main([str(match_run), "--out", str(tmp_path / "closings.json"), "--plot", str(tmp_path / "c.png")]) == 0
    assert "| closed by |" in capsys.readouterr().out
    document = json.loads((tmp_path / "closings.json").read_text())
    assert document["format"] == "sixtysix-closings" and len(document["splits"]) == 1
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_deal_without_both_of_its_games_is_refused(match_run, tmp_path):
    halved = tmp_path / "halved"
    shutil.copytree(match_run, halved)
    lines = (halved / "journal.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record["games"] = record["games"][:1]  # the pair's second seating lost
    lines[1] = json.dumps(record)
    (halved / "journal.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="holds a deal without both of its games"):
        closer_split(halved, progress=False)


def test_r10_closing_wins_solves_the_closed_deal_from_an_explicit_deck():
    """R10, R8, R11: forehand holds every club, the dealer every spade, hearts are trump. Closing at once, forehand
    wins every trick (the dealer can neither follow nor trump) and his club marriage takes him past 66; with the
    nines and jacks against the aces and tens of the same suits he loses every trick instead."""
    from agents.solver import closing_wins
    from sixtysix_env.cards import names_of

    rules = Rules()
    assert closing_wins(Game.deal(rules, deck=DECK, dealer=0))
    weak = ["9C", "JC", "9S", "AC", "TC", "AS", "JS", "9D", "JD", "TS", "AD", "TD", "9H",
            "AH", "TH", "KH", "QH", "JH", "KC", "QC", "KS", "QS", "KD", "QD"]
    game = Game.deal(rules, deck=weak, dealer=0)
    assert sorted(names_of(game.hand(1))) == sorted(["9C", "JC", "9S", "JS", "9D", "JD"])  # forehand's hand
    assert CLOSE in game.legal_actions() and not closing_wins(game)


def test_closing_rates_count_every_closable_lead_and_every_closing(match_run, tmp_path, capsys):
    """--rates: over both seats and the four (plausible, wins) rows, the leads are every lead where closing was
    legal (R10) and the closings add up to the games each seat closed in the split; each rate lies in its Wilson
    interval; the command prints the table and writes the rates into the JSON."""
    from bench.closings import closing_rates
    from sixtysix_env.game import LEAD

    from eval.deals import load_deals
    from eval.luck import read_journal

    rates = closing_rates(match_run, progress=False)
    split = closer_split(match_run, progress=False)
    _settings, games, _ = read_journal(match_run)
    deals, rules = load_deals(match_run / "deals.json")
    closable = 0
    for record in games:
        game = Game.deal(rules, deck=list(deals[record["deal"]].deck), dealer=record["dealer"])
        for action in record["actions"]:
            closable += game.stage == LEAD and CLOSE in game.legal_actions()
            game.apply(action)
    assert sum(row["leads"] for seat in ("A", "B") for row in rates["rates"][seat]) == closable > 0
    for seat in ("A", "B"):
        assert sum(row["closed"] for row in rates["rates"][seat]) == split["closers"][seat]["games"]
        for row in rates["rates"][seat]:
            if row["leads"]:
                assert row["low"] - 1e-12 <= row["rate"] <= row["high"] + 1e-12 and 0 <= row["rate"] <= 1
    assert any(row["wins"] and row["leads"] for row in rates["rates"]["A"])
    assert any(not row["wins"] and row["leads"] for row in rates["rates"]["A"])
    out = tmp_path / "closings.json"
    assert main([str(match_run), "--rates", "--out", str(out)]) == 0
    assert "closing rates at the leads where closing was legal" in capsys.readouterr().out
    assert json.loads(out.read_text())["splits"][0]["closing_rates"] == rates["rates"]


def test_a_one_pair_run_writes_its_json_and_the_plot_in_the_format_of_its_suffix(play_match, tmp_path, capsys):
    """One deal pair gives no interval: the JSON holds null bounds (infinite ones are not JSON) and the table says
    so; --plot writes the format its suffix names, and one matplotlib does not write is refused before any work."""
    run = play_match(("heuristic", "greedy"), deals=1, seed=55)
    out = tmp_path / "one.json"
    assert main([str(run), "--out", str(out), "--plot", str(tmp_path / "one.png")]) == 0
    assert "one deal pair: no interval" in capsys.readouterr().out
    closers = json.loads(out.read_text())["splits"][0]["closers"]
    assert all(row["low"] is None and row["high"] is None for row in closers.values())
    assert (tmp_path / "one.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main([str(run), "--plot", str(tmp_path / "chart.svg")]) == 0
    assert b"<svg" in (tmp_path / "chart.svg").read_bytes()[:1000]
    with pytest.raises(SystemExit):
        main([str(run), "--out", str(tmp_path / "never.json"), "--plot", str(tmp_path / "chart.text")])
    assert "matplotlib writes no 'text' images" in capsys.readouterr().err
    assert not (tmp_path / "never.json").exists()
