"""The human-vs-agent session (play/session.py) and "could I have won?" (play/analysis.py)."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings, strategies as st

from agents import make_agent
from agents.pimc import position_value
from play import session as session_module
from play.analysis import OpenSolver, analyse_deal
from play.session import PlaySession, SessionSettings
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import ACTION_NAMES, CLOSE, parse_action
from sixtysix_env.record import deck_from_hands, record_to_game
from hidden_cards import card_tokens, hidden_cards, talon_order_shown
from play_helpers import play_session_deal


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), rules=st.sampled_from(["standard", "paderborn", "scharf"]))
def test_view_never_shows_a_hidden_card_or_the_talon_order(seed, rules):
    """RULES "What a player may know": the view holds no unseen opponent card and no talon order, in any state."""
    session = PlaySession(SessionSettings(opponent="random", rules=Rules.preset(rules), seed=seed, match=False))

    def check(current: PlaySession) -> None:
        view = current.view()
        assert not card_tokens(view) & hidden_cards(current.game, current.human)
        assert not talon_order_shown(view, current.game)

    play_session_deal(session, random.Random(seed), check)
    assert session.view()["result"] is not None


def test_illegal_moves_are_rejected_and_change_nothing():
    """R8: in phase 2 the follower must follow suit; the engine's check stands behind every human move."""
    # Forehand (player 1) holds only hearts and spades; the dealer leads a heart after closing.
    deck = deck_from_hands(forehand="AH TH KH QH JH 9H", dealer="AS TS KS QS JS 9S", trump_card="AC")
    session = PlaySession(SessionSettings(opponent="random", seed=1, match=False, human=1))
    session.game = Game.deal(Rules(), deck=deck, dealer=0)
    before = json.dumps(session.to_state()), session.game.history[:]
    for bad in (ACTION_NAMES.index("play AS"), 99, -1, True, "play AH"):
        with pytest.raises(ValueError):
            session.play(bad)
    assert session.game.history == before[1]
    with pytest.raises(ValueError, match="not legal now"):
        session.parse_move("play AS")
    with pytest.raises(ValueError, match="no move number"):
        session.parse_move("17")
    assert session.parse_move("AH") == parse_action("play AH")
    # R1 names a ten T; the terminal shows it as 10, and either is typed
    assert session.parse_move("10H") == session.parse_move("play 10H") == session.parse_move("TH")
    assert session.parse_move("TH") == parse_action("play TH")
    assert session.parse_move("marry H") == parse_action("marry KH")
    assert session.parse_move("1") == session.legal_moves()[0]
    # The suits as the terminal draws them may be typed back; a bad typed ten is named as typed, not as 'TX'
    assert session.parse_move("10♥") == session.parse_move("play 10♥") == session.parse_move("TH")
    assert session.parse_move("A♥") == parse_action("play AH") and session.parse_move("marry ♥") == parse_action(
        "marry KH")
    with pytest.raises(ValueError, match=r"malformed move 'play 10X': expected rank"):
        session.parse_move("play 10X")
    with pytest.raises(ValueError, match=r"malformed card 'ZZ'"):  # nothing rewritten: the parser's own words
        session.parse_move("play ZZ")


def test_session_state_round_trip_rebuilds_the_same_session():
    """A Bummerl (R17) in progress survives to_state/from_state (what the server stores) exactly."""
    session = PlaySession(SessionSettings(opponent="heuristic", seed=11, match=True))
    rng = random.Random(3)
    play_session_deal(session, rng)
    session.next_deal()
    session.run_agent()
    session.play(session.legal_moves()[0])
    session.run_agent()
    state = json.loads(json.dumps(session.to_state()))
    rebuilt = PlaySession.from_state(state)
    assert rebuilt.view() == session.view()
    assert rebuilt.game.history == session.game.history and rebuilt.game.deck == session.game.deck
    # The rebuilt session's agent goes on exactly as the original would.
    while not session.game.is_over:
        move = session.legal_moves()[-1]
        session.play(move)
        rebuilt.play(move)
        assert session.run_agent() == rebuilt.run_agent()


def test_a_bummerl_runs_to_its_end():
    """R17: deals alternate dealers until someone reaches 7 game points; the session then ends."""
    session = PlaySession(SessionSettings(opponent="random", seed=5, match=True))
    rng = random.Random(5)
    dealers = []
    while True:
        dealers.append(session.game.dealer)
        play_session_deal(session, rng)
        if session.session_over:
            break
        session.next_deal()
    view = session.view()
    assert max(view["match"]["scores"].values()) >= 7 and view["match"]["winner"] in ("you", "opponent")
    assert all(a != b for a, b in zip(dealers, dealers[1:]))  # R3
    with pytest.raises(ValueError, match="Bummerl is over"):
        session.next_deal()


def _bummerl_won_by_the_heuristic(seed: int, rules: Rules) -> PlaySession:
    """A whole Bummerl in which ``heuristic`` plays the human's seat against ``random``."""
    session = PlaySession(SessionSettings(opponent="random", rules=rules, seed=seed, match=True))
    human = make_agent("heuristic", seed=seed)
    while True:
        human.start_deal(session.human, rules)
        session.run_agent()
        while not session.game.is_over:
            session.play(human.act(InformationSet(session.game, session.human)))
            session.run_agent()
        if session.session_over:
            return session
        session.next_deal()


@pytest.mark.parametrize("seed, rules, schneider", [
    (0, Rules(), True),  # the loser ends at 0 game points: the Bummerl counts double
    (2, Rules(), False),  # the loser ends at 2
    (0, Rules(schneider_bummerl=False), False),  # the same 0, with the switch off
])
def test_the_view_says_when_a_bummerl_counts_double(seed, rules, schneider):
    """R17 (switch ``schneider_bummerl``): a Bummerl lost with no game point counts double, and the view says so at
    its end (the terminal and the web page show it); while it runs, the view says nothing either way."""
    session = PlaySession(SessionSettings(opponent="random", rules=rules, seed=seed, match=True))
    assert session.view()["match"]["schneider"] is None
    session = _bummerl_won_by_the_heuristic(seed, rules)
    view = session.view()["match"]
    assert view["over"] and view["schneider"] is schneider
    assert (min(view["scores"].values()) == 0) is (schneider or not rules.schneider_bummerl)
    assert session.match.bummerl_history[-1].marks == (2 if schneider else 1)


def test_the_agent_sees_the_bummerl_score_before_each_deal():
    """R17: in a Bummerl the agent's information sets carry the game points before the deal (both players know
    them); a single deal carries none."""
    session = PlaySession(SessionSettings(opponent="random", seed=6, match=True))
    seen = []
    real_act = session.agent.act

    def watching_act(infoset):
        seen.append((len(session.match.deals), infoset.match_score))
        return real_act(infoset)

    session.agent.act = watching_act
    rng = random.Random(6)
    expected = {}
    while True:
        expected[len(session.match.deals)] = (session.match.scores[0], session.match.scores[1])
        play_session_deal(session, rng)
        if session.session_over:
            break
        session.next_deal()
    assert seen and all(score == expected[deal] for deal, score in seen)
    assert len({score for _deal, score in seen}) > 1
    single = PlaySession(SessionSettings(opponent="random", seed=6, match=False))
    assert single.bummerl_score() is None


def test_hint_sees_only_the_information_set(monkeypatch):
    """Hints come from the human's InformationSet (its template game has the deck and hidden cards erased)."""
    seen = []
    real = session_module.hint_values

    def spy(infoset, seconds, seed):
        seen.append(infoset)
        return real(infoset, seconds, seed)

    monkeypatch.setattr(session_module, "hint_values", spy)
    session = PlaySession(SessionSettings(opponent="heuristic", seed=2, match=False, hint_seconds=0.05))
    session.run_agent()
    rows = session.hint()
    assert isinstance(seen[0], InformationSet) and seen[0]._template.deck is None
    assert sorted(row["id"] for row in rows) == sorted(session.legal_moves())
    assert [row["value"] for row in rows] == sorted((row["value"] for row in rows), reverse=True)


def test_the_search_is_compiled_once_before_a_hints_clock_starts(monkeypatch):
    """A first hint after an install spent its budget compiling numba's kernels and rated every move on one sampled
    world (a fresh-venv sweep: "worlds 1", +2.00 for a move worth -1.61). The kernels are now compiled (or loaded
    from the cache) once per process before the agent's clock starts."""
    import sixtysix_env.core.__main__ as core_main
    from agents import pimc

    events = []
    monkeypatch.setattr(session_module, "_search_compiled", False)
    monkeypatch.setattr(core_main, "warm_up_search", lambda: events.append("compiled"))
    real_agent = pimc.PimcAgent

    def agent(*args, **kwargs):
        events.append("clock")
        return real_agent(*args, **kwargs)

    monkeypatch.setattr(pimc, "PimcAgent", agent)
    session = PlaySession(SessionSettings(opponent="heuristic", seed=2, match=False, hint_seconds=0.05))
    session.run_agent()
    session.hint()
    session.hint()
    assert events == ["compiled", "clock", "clock"]


def test_open_solver_matches_plain_minimax_late_in_phase_one():
    """R7/R8/R10: the open solve (alpha-beta, MTD(f), transposition table) equals PIMC's plain minimax over the
    same perfect-information position, searched to the end of phase 1 (independent code, no table)."""
    rng = random.Random(8)
    checked = 0
    for seed in range(40):
        game = Game.deal(Rules(), seed=seed, dealer=seed % 2)
        while not game.is_over and not game.phase2 and game.face_down_count > 3:
            game.apply(rng.choice([a for a in game.legal_actions() if a != CLOSE]))
        if game.is_over or game.phase2:
            continue
        for player in (0, 1):
            assert OpenSolver(player, seconds=None).value(game) == position_value(game.clone(), player, depth=30)
        checked += 1
    assert checked >= 10


def test_could_i_have_won_from_an_explicit_deal():
    """R13/R16: forehand holds the trump marriage and enough high trumps; with all cards open he wins 3 (the
    dealer never takes a trick) — a human who threw the deal away sees where the win slipped."""
    deck = deck_from_hands(forehand="AC TC KC QC AH TH", dealer="9D JD QD KD 9S JS", trump_card="JC")
    game = Game.deal(Rules(), deck=deck, dealer=0)
    solver = OpenSolver(1, seconds=None)
    assert solver.value(game) == 3
    session = PlaySession(SessionSettings(opponent="heuristic", seed=1, match=False, human=1))
    session.game = Game.deal(Rules(), deck=deck, dealer=0)
    session.match.dealer = 0
    while not session.game.is_over:  # the human leads his lowest card every time, throwing points away
        session.play(min(a for a in session.legal_moves() if a < 24) if any(a < 24 for a in session.legal_moves())
                     else session.legal_moves()[0])
        session.run_agent()
    record = session.deal_record(1)
    analysis = analyse_deal(record, 1, session.human_decisions[0], open_seconds=30, search_seconds=0.05)
    assert analysis["open"]["start_value"] == 3 and analysis["open"]["could_have_won"]
    first = analysis["open"]["moves"][0]
    assert first["value_before"] == 3
    assert record_to_game(record).result.returns()[1] < 3  # he did not get all three
    assert any(move["cost"] > 0 for move in analysis["open"]["moves"])


def test_a_drawn_seed_is_shown_only_when_the_session_ends(tmp_path):
    """Every deck derives from the session's seed (R4), so a seed shown mid-Bummerl would tell the cards of every deal
    to come: a drawn seed stays out of the output and the records' names until the session ends; one the player
    gave is his to see."""
    import io

    from rich.console import Console

    from play.terminal import PlayArgs, TerminalGame

    for given_seed in (None, 4321):
        output = io.StringIO()
        shown_before_the_end = []

        def read(prompt):
            if prompt.startswith("press Enter"):  # deal 1 is over and the Bummerl goes on (R17)
                shown_before_the_end.append(output.getvalue())
                return "quit"
            return "1"

        args = PlayArgs(opponent="random", match=True, seed=given_seed, records=str(tmp_path / str(given_seed)),
                        analysis_seconds=0)
        terminal = TerminalGame(args, console=Console(file=output, width=200), read=read)
        assert terminal.run() == 0
        seed = str(terminal.session.settings.seed)
        (record,) = (tmp_path / str(given_seed)).iterdir()
        if given_seed is None:
            assert shown_before_the_end and seed not in shown_before_the_end[0]
            assert seed not in record.name
            assert f"--seed {seed}" in output.getvalue()
        else:
            assert f"seed{given_seed}" in record.name
