"""Human play with three players (R21): the session (play/three_session.py) and `sixtysix play --rules three`."""

from __future__ import annotations

import os
import random
import re
import signal
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from play.terminal import parse_args
from play.three_session import ThreePlaySession, ThreeSessionSettings
from sixtysix_env import Rules
from sixtysix_env.cards import CARD_NAMES
from sixtysix_env.record import load_record, record_to_game
from sixtysix_env.three import ANNOUNCE_BASE, NAME_TRUMP, parse_three_player_action

from hidden_cards import card_tokens
from play_helpers import play_session_deal

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def hidden_from(game, human: int) -> set[str]:
    """The cards the human has not seen, from the real game: the other two hands, less the pairs they showed (R11,
    still in hand), and while he names trump as forehand his own last five cards (R21)."""
    shown = set()
    for marriage in game.marriages:
        if marriage.player != human:
            queen = marriage.suit * 6 + 2
            shown |= {queen, queen + 1}
    hidden = {card for seat in range(3) if seat != human for card in range(24) if game.hands[seat] >> card & 1}
    if game.stage == NAME_TRUMP and human == game.forehand:
        hidden |= {card for card in range(24) if game.hands[human] >> card & 1} - set(game.deck[:3])
    return {CARD_NAMES[card] for card in hidden - shown}


def play_out(session: ThreePlaySession, rng: random.Random, check=None) -> None:
    """Random legal moves for the human, the agents in between, to the end of the session."""
    while True:
        play_session_deal(session, rng, check)
        if session.session_over:
            return
        session.next_deal()


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6), human=st.sampled_from([0, 1, 2, None]), early=st.booleans())
def test_R21_the_view_never_shows_a_card_the_human_has_not_seen(seed, human, early):
    """RULES "What a player may know", three players: no card of the other hands that was not shown, and while the
    human names trump as forehand, none of his own last five cards."""
    rules = Rules.preset("three", three_player_early_marriage=early)
    session = ThreePlaySession(ThreeSessionSettings(opponents=("heuristic", "random"), rules=rules, seed=seed,
                                                    human=human, match=False))

    def check(current: ThreePlaySession) -> None:
        view = current.view()
        assert not card_tokens(view) & hidden_from(current.game, current.human)
        for move in view["legal"]:  # every move shown can be typed back as it is shown
            assert current.parse_move(move["label"]) == move["action"]

    play_out(session, random.Random(seed), check)
    assert session.view()["result"] is not None and len(session.finished) == 1


def test_R21_a_bummerl_with_two_agents_runs_to_seven_and_every_deal_replays():
    """R17 carried over to three people: deals until one has 7 game points, the dealer passing to the left; every
    finished deal's record replays to its result, and the results add up to the scores shown."""
    session = ThreePlaySession(ThreeSessionSettings(opponents=("greedy", "heuristic"), seed=11, match=True))
    play_out(session, random.Random(4))
    games = [record_to_game(record) for record in session.finished]
    assert len(games) >= 7 and all(game.is_over for game in games)
    assert all(later.dealer == (earlier.dealer + 1) % 3 for earlier, later in zip(games, games[1:]))
    totals = [sum(game.result.winner == seat for game in games) for seat in range(3)]
    view = session.view()["match"]
    assert max(totals) == 7 and view["over"] and view["scores"] == {
        session.who(seat): totals[seat] for seat in session.seats}
    assert view["winner"] == session.who(totals.index(7))
    with pytest.raises(ValueError, match="Bummerl is over"):
        session.next_deal()


def test_R21_the_same_seed_and_moves_give_the_same_session():
    """Every deck, the first dealer, the human's seat and the agents' choices derive from the seed."""
    records = []
    for _ in range(2):
        session = ThreePlaySession(ThreeSessionSettings(opponents=("random", "random"), seed=99, match=False))
        play_out(session, random.Random(7))
        records.append((session.human, session.finished))
    assert records[0] == records[1]


def test_R21_moves_by_number_name_or_card_and_refusals_by_name():
    """Forehand names trump (R21) by its number or its name; a card is typed bare or as `play X`, a ten as 10 or T;
    an illegal or malformed move is refused naming it and changes nothing."""
    session = next(session for session in (
        ThreePlaySession(ThreeSessionSettings(opponents=("random", "random"), seed=seed, human=1, match=False))
        for seed in range(30)) if session.game.forehand == 1)  # a deal where the human is forehand
    session.run_agents()
    game = session.game
    assert game.stage == NAME_TRUMP and game.to_move == 1 == game.forehand
    assert session.parse_move("1") == session.legal_moves()[0]
    assert session.parse_move("name trump H") == parse_three_player_action("name trump H")
    with pytest.raises(ValueError, match="is not legal now"):
        session.parse_move("play AH")
    with pytest.raises(ValueError, match="no move number 9"):
        session.parse_move("9")
    with pytest.raises(ValueError, match="no move number -1"):
        session.parse_move("-1")
    with pytest.raises(ValueError, match="malformed") as refused:
        session.parse_move("²")  # a digit that int() reads, but no move number
    assert "invalid literal" not in str(refused.value)
    session.play(session.parse_move("name trump H"))
    session.run_agents()
    while not any(move < 24 for move in session.legal_moves()):  # the early-marriage round first (R21)
        session.play(session.parse_move("pass"))
        assert session.events[-1]["player"] == "you" and "passes" in session.events[-1]["text"]
        session.run_agents()
    history = list(game.history)
    cards = [move for move in session.legal_moves() if move < 24]
    for card in cards:
        name = CARD_NAMES[card]
        typed = ("10" + name[1]) if name[0] == "T" else name
        assert session.parse_move(typed) == session.parse_move(f"play {name}") == card
    with pytest.raises(ValueError, match="malformed"):
        session.parse_move("play ZZ")
    with pytest.raises(ValueError, match="illegal action"):
        session.play(next(card for card in range(24) if card not in session.legal_moves()))
    assert game.history == history and cards
    with pytest.raises(ValueError, match="players=3"):
        ThreePlaySession(ThreeSessionSettings(rules=Rules()))
    with pytest.raises(ValueError, match="human seat must be 0, 1 or 2"):
        ThreePlaySession(ThreeSessionSettings(human=3))


def test_R21_marry_before_the_first_lead_shows_the_marriage():
    """With the early marriages of the preset `three` (R21), `marry H` or `marry KH` typed in the round before the
    first lead means `announce H`; the event says what was shown."""
    for seed in range(60):
        session = ThreePlaySession(ThreeSessionSettings(opponents=("random", "random"), seed=seed, match=False))
        session.run_agents()
        while session.game.stage == NAME_TRUMP:  # the human names trump when he is forehand
            session.play(session.legal_moves()[0])
            session.run_agents()
        announce = [move for move in session.legal_moves() if move >= ANNOUNCE_BASE]
        if announce:
            break
    else:
        raise AssertionError("no deal with a marriage to show")
    suit = "CDHS"[announce[0] - ANNOUNCE_BASE]
    assert session.parse_move(f"marry {suit}") == session.parse_move(f"marry K{suit}") == announce[0]
    assert session.parse_move(f"announce {suit.lower()}") == announce[0]
    session.play(announce[0])
    assert "shows the marriage" in session.events[-1]["text"]


def test_options_that_need_or_exclude_three_players():
    with pytest.raises(ValueError, match="--second-opponent .* needs --rules three"):
        parse_args(["--second-opponent", "greedy"])
    assert parse_args(["--rules", "three", "--second-opponent", "greedy"]).second_opponent == "greedy"
    for option in ("--hint-seconds", "--analysis-seconds"):  # no hint, no analysis with three: refused, not ignored
        for value in ("3", "1", "20"):  # the defaults too, when typed
            with pytest.raises(ValueError, match=f"{option} has no use with --rules three"):
                parse_args(["--rules", "three", option, value])
    assert (parse_args([]).hint_seconds, parse_args([]).analysis_seconds) == (1.0, 20.0)


def test_ctrl_c_tells_the_drawn_seed(tmp_path):
    """Ctrl-C ends a session with exit code 130 and, as its normal end does, names the drawn seed that replays it."""
    pexpect = pytest.importorskip("pexpect")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "COLUMNS": "200"}
    # A job started in the background by a shell (`make test &`, nohup) inherits SIGINT ignored, and Python then
    # installs no KeyboardInterrupt handler: the session is given the default disposition, as a terminal gives it.
    child = pexpect.spawn(sys.executable, ["-m", "sixtysix_cli", "play", "--rules", "three", "--records",
                                           str(tmp_path)], cwd=str(tmp_path), env=env, encoding="utf-8", timeout=60,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    child.expect("your move: ")
    time.sleep(0.5)  # input() writes its prompt before it reads: a SIGINT in between waits for the next line
    child.sendintr()
    child.expect(r"this session's seed was (\d+): play it again with --seed \d+")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130


def test_terminal_plays_a_three_player_bummerl(tmp_path):
    """`sixtysix play --rules three --match`: the table shows the three players, a hint is declined with a reason,
    every deal's record is saved and replays, and the announced winner is the one the records make."""
    pexpect = pytest.importorskip("pexpect")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "COLUMNS": "200"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "sixtysix_cli", "play", "--rules", "three", "--opponent", "random", "--second-opponent", "greedy",
         "--match", "--seed", "3", "--records", str(tmp_path)],
        cwd=str(tmp_path), env=env, encoding="utf-8", timeout=60, dimensions=(50, 200))
    saved, screens, asked_hint = [], [], False
    while True:
        index = child.expect(["your move: ", r"record saved: (\S+\.json)", "press Enter for the next deal",
                              r"The Bummerl is over: ([^\r\n]*)\r?\n"])
        if index == 0:
            screens.append(ANSI.sub("", child.before))
            child.sendline("1" if asked_hint else "hint")
            asked_hint = True
        elif index == 1:
            saved.append(Path(child.match.group(1)))
        elif index == 2:
            child.sendline("")
        else:
            announced = ANSI.sub("", child.match.group(1)).rstrip(".")
            break
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    first = screens[0]
    assert "left (random)" in first and "right (greedy)" in first and "your hand" in first
    assert "no hints with three players" in screens[1]
    games = [record_to_game(load_record(path)) for path in saved]
    assert len(games) >= 7 and all(game.is_over for game in games)
    totals = [sum(game.result.winner == seat for game in games) for seat in range(3)]
    assert max(totals) == 7
    human = ThreePlaySession(ThreeSessionSettings(opponents=("random", "greedy"), seed=3)).human  # drawn from the seed
    expected = {human: "you win", (human + 1) % 3: "left (random) wins", (human + 2) % 3: "right (greedy) wins"}
    assert announced == expected[totals.index(7)]
