"""``sixtysix play`` in detail, driven in-process (a scripted ``read`` and a rich Console writing to a string): the
options it refuses, how cards and moves are drawn, what a typed line does (a move's number, help, hint, quit, a
bad move), what each table shows, the deal summary and its saved record, "could I have won?", the three-player
variant (R21) and what ``main`` does before and after a session."""

from __future__ import annotations

import io
import json
import random

import pytest
from rich.console import Console

import play.analysis
from play import terminal
from play.terminal import (HELP, PlayArgs, TerminalGame, ThreeTerminalGame, analysis_headline, card_text, cards_text,
                           label_text, moves_text, parse_args)


class Script:
    """A player at the keyboard: typed lines first, then the numbered move ``choose(count)`` picks at every
    "your move" (1-based) and Enter at "press Enter for the next deal" until ``deals`` deals are over."""

    def __init__(self, typed=(), choose=lambda count: 1, deals=1):
        self.typed, self.choose, self.deals = list(typed), choose, deals
        self.prompts: list[str] = []
        self.game = None
        self.played: list[tuple[list, int]] = []  # (legal moves shown, number typed)
        self.screens: list[tuple[dict, str]] = []  # (view at the prompt, what was printed since the last prompt)
        self.printed = 0
        self.deal_events: list[list] = []  # each finished deal's events, at "press Enter"
        self.fresh = True  # the next screen follows a move (or the start), not a typed line

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if prompt.startswith("press Enter"):
            self.deal_events.append(list(self.game.session.events))
        output = self.game.console.file.getvalue()
        if self.fresh:
            self.screens.append((self.game.session.view(), output[self.printed:]))
        self.printed = len(output)
        self.fresh = not self.typed
        if self.typed:
            line = self.typed.pop(0)
            if isinstance(line, BaseException):
                raise line
            return line
        if prompt.startswith("press Enter"):
            return "" if len(self.game.session.finished) < self.deals else "quit"
        legal = self.game.session.legal_moves()
        number = self.choose(len(legal))
        self.played.append((list(legal), number))
        return str(number)


def _game(tmp_path, script: Script, game_class=TerminalGame, **options):
    options = {"seed": 7, "records": str(tmp_path / "records"), "analysis_seconds": 0, **options}
    game = game_class(PlayArgs(**options), console=Console(file=io.StringIO(), width=1000, highlight=False),
                      read=script)
    script.game = game
    return game


# ------------------------------------------------------------------ drawing


def test_cards_are_drawn_with_suit_symbols_a_ten_as_10_and_red_and_black_suits():
    assert [card_text(name).plain for name in ("TH", "QS", "9D", "AC")] == ["10♥", "Q♠", "9♦", "A♣"]
    assert "red" in str(card_text("KH").style) and "red" in str(card_text("KD").style)
    assert "red" not in str(card_text("KS").style) and "red" not in str(card_text("KC").style)
    assert cards_text(["QH", "TS"]).plain == "Q♥ 10♠"
    assert cards_text([]).plain == "-"  # an empty hand or nothing known is still shown


def test_labels_draw_every_card_name_in_them_and_keep_the_rest():
    assert label_text("marry KH").plain == "marry K♥"
    assert label_text("you lead TS, he takes it with AS.").plain == "you lead 10♠, he takes it with A♠."
    assert label_text("close the talon").plain == "close the talon"
    assert label_text("TOTAL").plain == "TOTAL"  # a card name only as a word of its own


def test_moves_are_numbered_from_one_as_they_are_typed():
    line = moves_text([{"label": "QH"}, {"label": "marry KS"}, {"label": "close the talon"}]).plain
    assert "[1] Q♥" in line and "[2] marry K♠" in line and "[3] close the talon" in line
    assert "[0]" not in line and "[4]" not in line


# ------------------------------------------------------------------ options


def test_the_defaults_are_those_of_play_args():
    assert parse_args([]) == PlayArgs()
    assert parse_args(["--match"]).match is True and parse_args([]).match is False


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_hint_seconds_must_be_a_positive_number(value):
    with pytest.raises(ValueError, match="--hint-seconds must be a positive number"):
        parse_args([f"--hint-seconds={value}"])


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "-inf"])
def test_analysis_seconds_must_be_a_positive_number_or_zero(value):
    with pytest.raises(ValueError, match="--analysis-seconds must be a positive number or 0"):
        parse_args([f"--analysis-seconds={value}"])


def test_analysis_seconds_zero_skips_and_is_accepted():
    assert parse_args(["--analysis-seconds", "0"]).analysis_seconds == 0
    assert parse_args(["--hint-seconds", "0.25"]).hint_seconds == 0.25


def test_a_second_opponent_needs_three_players_and_defaults_to_the_first(tmp_path):
    """R21: ``--second-opponent`` is the seat to your right; without it both agents are ``--opponent``."""
    for rules in ("standard", "paderborn"):
        with pytest.raises(ValueError, match="needs --rules three"):
            parse_args(["--rules", rules, "--second-opponent", "random"])
    game = _game(tmp_path, Script(), ThreeTerminalGame, rules="three", opponent="random")
    assert game.session.settings.opponents == ("random", "random")
    game = _game(tmp_path, Script(), ThreeTerminalGame, rules="three", opponent="random", second_opponent="greedy")
    assert game.session.settings.opponents == ("random", "greedy")


def test_the_given_seed_and_hint_time_are_the_sessions(tmp_path):
    """Seed 0 is a seed like any other (only no seed draws one), and --hint-seconds is the hint's search time."""
    game = _game(tmp_path, Script(), seed=0, hint_seconds=0.25)
    assert game.session.settings.seed == 0 and game.session.settings.hint_seconds == 0.25


# ------------------------------------------------------------------ typed lines


def test_a_move_is_read_until_one_is_legal_and_help_hint_and_errors_do_not_move(tmp_path, monkeypatch):
    script = Script(["", "HELP", "  Hint ", "play ZZ", "99", "0", "QUIT"],
                    choose=lambda count: pytest.fail("a move was asked for after 'QUIT'"))
    game = _game(tmp_path, script)
    rows = [{"label": "QH", "value": 0.5, "worlds": 12}, {"label": "close the talon", "value": -1.25, "worlds": 12}]
    monkeypatch.setattr(game.session, "hint", lambda seconds=None: rows)
    played = []
    monkeypatch.setattr(game.session, "play", played.append)
    assert game.run() == 0
    output = game.console.file.getvalue()
    assert script.prompts == ["your move: "] * 7  # every line but "quit" was answered and the move asked again
    assert output.count(HELP) == 2  # once at the start, once for "HELP"
    assert "+0.50" in output and "-1.25" in output and "Q♥" in output and "close the talon" in output
    legal = len(game.session.legal_moves())
    assert "malformed card" in output and f"no move number 99: choose 1 to {legal}" in output
    assert f"no move number 0: choose 1 to {legal}" in output
    assert output.rstrip().endswith("bye")
    assert played == []  # none of these lines made a move


@pytest.mark.parametrize("line", ["quit", "QUIT", " exit ", "q", "Q", EOFError()])
def test_quit_exit_q_and_ctrl_d_end_the_session(tmp_path, line):
    script = Script([line], choose=lambda count: pytest.fail(f"a move was asked for after {line!r}"))
    game = _game(tmp_path, script)
    assert game.run() == 0
    assert script.prompts == ["your move: "]
    assert "bye" in game.console.file.getvalue()
    assert not (tmp_path / "records").exists() or not any((tmp_path / "records").iterdir())


def test_a_number_plays_that_move_of_the_list(tmp_path):
    script = Script(choose=lambda count: count)  # always the last listed move
    game = _game(tmp_path, script)
    played = []
    original = game.session.play
    game.session.play = lambda action: (played.append(action), original(action))[1]
    assert game.run() == 0
    assert played == [legal[number - 1] for legal, number in script.played] and played


# ------------------------------------------------------------------ the table and the summary


def test_a_bummerl_shows_each_table_every_event_once_and_saves_every_deal(tmp_path):
    """R17 with ``--match``: at every move the header (trump, face-up card, talon, who closed, the Bummerl score),
    the points and tricks, the known cards, the led card and the hand as the session's view has them; each event
    once; each finished deal summarised and its record saved under the given seed."""
    rng = random.Random(5)
    script = Script(choose=lambda count: rng.randint(1, count), deals=4)
    game = _game(tmp_path, script, opponent="random", match=True, seed=11)
    assert game.run() == 0
    seen = set()
    for view, screen in script.screens:
        if not view["legal"]:
            continue
        assert f"Deal {view['deal']} · trump " in screen
        assert f"talon {view['talon_size']}" in screen
        if view["bottom_card"]:
            assert "face-up card " + card_text(view["bottom_card"]).plain in screen
        if view["closed_by"]:
            seen.add("closed")
            assert f"closed by {view['closed_by']}" in screen
        score = view["match"]["scores"]
        assert f"Bummerl you {score['you']} : {score['opponent']} opponent (to 7)" in screen
        if score["you"] != score["opponent"]:
            seen.add("score")
        points, tricks = view["points"], view["tricks_won"]
        assert f"you {points['you']} · opponent {points['opponent']}" in screen
        assert f"tricks {tricks['you']}:{tricks['opponent']}" in screen
        assert f"opponent holds {view['opponent_hand_size']} cards" in screen
        if view["opponent_known"]:
            seen.add("known")
            assert "the opponent is known to hold " + cards_text(view["opponent_known"]).plain in screen
        if view["table"]:
            seen.add("table")
            assert f"on the table: {view['table']['leader']} led {card_text(view['table']['card']).plain}" in screen
        assert "your hand: " + cards_text(view["hand"]).plain in screen
        assert "  moves: " + "  ".join(f"[{n}] {label_text(m['label']).plain}"
                                       for n, m in enumerate(view["legal"], 1)) in screen
    assert seen == {"closed", "score", "known", "table"}, "the seed shows every part of the table"
    output = game.console.file.getvalue()
    session = game.session
    finished = len(session.finished)
    assert finished >= 3
    events = [line for line in output.splitlines() if line.startswith("  • ")]
    expected = [event for deal in script.deal_events for event in deal]
    if not script.prompts[-1].startswith("press Enter"):  # the Bummerl ended with the last deal
        expected += session.events
    assert events == ["  • " + label_text(event["text"]).plain for event in expected]
    for number in range(1, finished + 1):
        (path,) = (tmp_path / "records").glob(f"sixtysix-*-seed11-deal{number}.json")
        assert json.loads(path.read_text()) == session.deal_record(number)
        assert f"record saved: {path}  (replay it with: sixtysix replay {path})" in output
    assert "this session's seed" not in output  # the player gave it


def test_each_deal_summary_says_who_won_how_many_game_points_and_why(tmp_path):
    """The headline of a finished deal: "you win"/"the opponent wins" N game point(s) (reason), then the points and
    the Bummerl score."""
    rng = random.Random(2)
    summaries = []
    for seed in range(6):
        script = Script(choose=lambda count: rng.randint(1, count))
        game = _game(tmp_path / str(seed), script, opponent="random", seed=seed, match=True)
        script.deals = 1
        game.run()
        result = game.session.view()["result"]
        match = game.session.view()["match"]
        output = game.console.file.getvalue()
        if result["winner"] is None:
            headline = "not scored (65:65, R15)"
        else:
            who = "you win" if result["winner"] == "you" else "the opponent wins"
            points = result["game_points"]
            headline = f"{who} {points} game point{'' if points == 1 else 's'} ({result['reason']})"
        summaries.append((result["winner"], result["game_points"]))
        assert f"Deal 1 over: {headline}" in output
        assert f"points: you {result['points']['you']} · opponent {result['points']['opponent']}" in output
        score = match["scores"]
        assert f"Bummerl: you {score['you']} · opponent {score['opponent']} (to 7)" in output
    assert {winner for winner, _ in summaries} == {"you", "opponent"}
    assert {points for _, points in summaries} > {1}, "some deal is won by more than one game point"


def test_enter_deals_the_next_deal_and_quit_there_ends(tmp_path):
    script = Script(deals=2)
    game = _game(tmp_path, script, opponent="random", match=True)
    assert game.run() == 0
    assert len(game.session.finished) == 2
    assert script.prompts.count("press Enter for the next deal (or 'quit'): ") == 2
    assert "Deal 2 over" in game.console.file.getvalue()
    assert "The Bummerl is over" not in game.console.file.getvalue()


def test_a_single_deal_ends_without_a_bummerl(tmp_path):
    script = Script()
    game = _game(tmp_path, script, opponent="random")
    assert game.run() == 0
    output = game.console.file.getvalue()
    assert "Deal 1 over" in output and "Bummerl" not in output and "press Enter" not in "".join(script.prompts)


def test_a_drawn_seed_is_told_at_the_end(tmp_path):
    script = Script()
    game = _game(tmp_path, script, opponent="random", seed=None)
    assert game.run() == 0
    seed = game.session.settings.seed
    assert f"this session's seed was {seed}: play it again with --seed {seed}" in game.console.file.getvalue()
    (path,) = (tmp_path / "records").iterdir()
    assert "seed" not in path.name


# ------------------------------------------------------------------ could I have won?


def _fake_analysis(human=0, winner=1, points=2):
    return {"human": human, "result": {"winner": winner, "game_points": points},
            "open": {"slipped_at": None, "could_have_won": False, "solved": True, "start_value": -2,
                     "moves": [{"move": "QH", "value_before": 1, "value_after": -1},
                               {"move": "close the talon", "value_before": None, "value_after": None}]},
            "search": [{"forced": False, "cost": 0.3, "best_moves": ["KH", "AS"]},
                       {"forced": True, "cost": 0.0, "best_moves": ["TS"]}]}


def test_could_i_have_won_runs_with_the_given_budget_and_shows_each_move(tmp_path, monkeypatch):
    calls = []

    def analyse(record, human, decisions, open_seconds, search_seconds, seed):
        calls.append(open_seconds)
        return _fake_analysis()

    monkeypatch.setattr(play.analysis, "analyse_deal", analyse)
    game = _game(tmp_path, Script(), opponent="random", analysis_seconds=3.5)
    assert game.run() == 0
    output = game.console.file.getvalue()
    assert calls == [3.5]
    assert "Could I have won?" in output and analysis_headline(_fake_analysis()) in output
    rows = [line.split() for line in output.splitlines()]
    assert ["Q♥", "│", "+1", "→", "-1", "│", "0.30", "│", "K♥,", "A♠"] in rows
    # a forced move: nothing to choose, so no cost and no best move
    assert ["close", "the", "talon", "│", "not", "solved", "│", "forced", "│"] in rows


def test_analysis_seconds_zero_skips_could_i_have_won(tmp_path, monkeypatch):
    monkeypatch.setattr(play.analysis, "analyse_deal", lambda *args, **kwargs: pytest.fail("the analysis ran"))
    game = _game(tmp_path, Script(), opponent="random", analysis_seconds=0)
    assert game.run() == 0 and "Could I have won?" not in game.console.file.getvalue()


def test_the_headline_answers_could_i_have_won():
    won = _fake_analysis(winner=0)
    assert analysis_headline(won).startswith("You won the deal.")
    slipped = _fake_analysis()
    slipped["open"]["slipped_at"] = {"move": "QH", "value_before": 1, "value_after": -1}
    assert analysis_headline(slipped).startswith(
        "Yes: with all cards open you still had a win before QH (value +1, after it -1).")
    could = _fake_analysis()
    could["open"]["could_have_won"] = True
    assert analysis_headline(could).startswith("Yes: with all cards open there was a winning line.")
    lost = analysis_headline(_fake_analysis(points=2))
    assert lost.startswith("No: with all cards open and best play by both, the deal was lost from your first move "
                           "(best then: +1 game points; you got -2).")
    no_moves = _fake_analysis()
    no_moves["open"]["moves"] = []
    assert "(best then: -2 game points" in analysis_headline(no_moves)
    unsolved = _fake_analysis()
    unsolved["open"].update(solved=False, start_value=None)
    assert analysis_headline(unsolved).startswith("Not settled")
    assert "Value of the deal" not in analysis_headline(unsolved)


def test_the_headline_gives_the_open_value_and_the_searchs_cost_of_chosen_moves():
    analysis = _fake_analysis()
    assert " Value of the deal with all cards open: -2 game points for you." in analysis_headline(analysis)
    analysis["open"]["start_value"] = 0  # a value of 0 (not scored, R15) is a value too
    assert " Value of the deal with all cards open: +0 game points for you." in analysis_headline(analysis)
    # forced moves cost nothing and are not summed; one chosen move is a sum too
    assert analysis_headline(analysis).endswith(" The search thinks your moves cost 0.30 game points in all.")
    for row in analysis["search"]:
        row["forced"] = True
    assert "The search thinks" not in analysis_headline(analysis)


# ------------------------------------------------------------------ three players


def test_three_players_table_summary_and_records(tmp_path):
    """R21: who sits where, trump not named until it is, each player's points, tricks and cards, the cards on the
    table in order, a declined hint, each deal's headline and record."""
    rng = random.Random(2)
    script = Script(["hint"], choose=lambda count: rng.randint(1, count), deals=3)
    game = _game(tmp_path, script, ThreeTerminalGame, rules="three", opponent="random", second_opponent="greedy",
                 match=True, seed=3)
    assert game.run() == 0
    output = game.console.file.getvalue()
    assert "against random (to your left, plays after you) and greedy (to your right)" in output
    assert "no hints with three players" in output
    seen = set()
    for view, screen in script.screens:
        if not view["legal"]:
            continue
        if view["trump_suit"] is None:
            seen.add("unnamed")
            assert "trump not named yet" in screen
        assert ("your first three cards: name trump from them" in screen) is bool(view["naming"])
        seen.add("naming" if view["naming"] else "playing")
        for player in view["players"]:
            tricks, cards = player["tricks"], player["cards"]
            assert (f"{player['player']}: {player['points']} points, {tricks} trick{'' if tricks == 1 else 's'}, "
                    f"{cards} card{'' if cards == 1 else 's'}") in screen
            if tricks == 1:
                seen.add("one trick")
            if player["known"]:
                seen.add("known")
                assert "known to hold " + cards_text(player["known"]).plain in screen
        if len(view["table"]) == 2:
            seen.add("two on the table")
            first, second = view["table"]
            assert (f"on the table: {first['player']} {card_text(first['card']).plain}, "
                    f"{second['player']} {card_text(second['card']).plain}") in screen
    assert seen == {"unnamed", "naming", "playing", "one trick", "known", "two on the table"}
    session = game.session
    assert len(session.finished) == 3
    for number in (1, 2, 3):
        (path,) = (tmp_path / "records").glob(f"sixtysix-three-*-seed3-deal{number}.json")
        assert json.loads(path.read_text()) == session.finished[number - 1]
    for number, record in enumerate(session.finished, 1):
        winner = record["result"]["winner"]
        who = session.who(winner)
        assert f"Deal {number} over: {who} win{'' if who == 'you' else 's'} 1 game point" in output


# ------------------------------------------------------------------ main


def test_main_refuses_a_records_path_that_is_a_file_before_playing(tmp_path, monkeypatch):
    target = tmp_path / "taken"
    target.write_text("")
    monkeypatch.setattr(TerminalGame, "run", lambda self: pytest.fail("the session started"))
    with pytest.raises(ValueError, match="--records .* is a file, not a folder"):
        terminal.main(["--opponent", "random", "--records", str(target)])


@pytest.mark.parametrize("seed", [None, 5])
def test_ctrl_c_ends_with_130_and_tells_only_a_drawn_seed(tmp_path, monkeypatch, capsys, seed):
    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(TerminalGame, "run", interrupted)
    argv = ["--opponent", "random", "--records", str(tmp_path)] + ([] if seed is None else ["--seed", str(seed)])
    assert terminal.main(argv) == 130
    out = capsys.readouterr().out
    assert ("this session's seed was" in out) is (seed is None)


def test_three_players_keep_a_drawn_seed_out_of_the_record_names_until_the_end(tmp_path):
    """As with two players: every deck derives from the seed (R4), so a drawn one is not in the records' names and
    is told only when the session ends."""
    game = _game(tmp_path, Script(), ThreeTerminalGame, rules="three", opponent="random", seed=None)
    assert game.run() == 0
    (path,) = (tmp_path / "records").iterdir()
    assert path.name.startswith("sixtysix-three-") and "seed" not in path.name
    seed = game.session.settings.seed
    assert f"this session's seed was {seed}: play it again with --seed {seed}" in game.console.file.getvalue()
