"""The human-vs-agent session's details (play/session.py), from a mutation review: the public event log of explicit
deals (R4), what the view shows at a deal's end, the session's input checks, its saved state and its hints."""

from __future__ import annotations

import json
import random

import pytest

import agents.registry
from agents.base import Agent
from eval.deals import derive_seed
from play import session as session_module
from play.session import PlaySession, SessionSettings, decisions_of, hint_values, sorted_hand
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import parse_action
from sixtysix_env.cards import CARD_NAMES, parse_cards
from sixtysix_env.match import Match
from sixtysix_env.record import deck_from_hands
from play_helpers import play_session_deal


class LowestLegalAgent(Agent):
    """Plays the lowest legal action id (a lead or reply of the lowest card id), and records its seats."""

    name = "lowest_legal_for_session_tests"
    seats: list[int] = []

    def start_deal(self, player: int, rules: Rules) -> None:
        LowestLegalAgent.seats.append(player)

    def act(self, infoset: InformationSet) -> int:
        return infoset.legal_actions[0]


@pytest.fixture(autouse=True)
def lowest_legal_agent(monkeypatch):
    """The test agent is registered for these tests only."""
    monkeypatch.setitem(agents.registry._REGISTRY, LowestLegalAgent.name, LowestLegalAgent)


def _first_dealer(seed: int) -> int:
    return random.Random(derive_seed("first dealer", seed)).randrange(2)


def _session_on_deck(monkeypatch, deck: list[str], human_deals: bool, match: bool = False) -> PlaySession:
    """A session against LowestLegalAgent whose every deal is ``deck`` (R4 order), the human the dealer or forehand."""
    monkeypatch.setattr(Match, "new_deal",
                        lambda self, seed=None, deck_=None: Game.deal(self.rules, deck=deck, dealer=self.dealer))
    dealer = _first_dealer(0)
    human = dealer if human_deals else 1 - dealer
    return PlaySession(SessionSettings(opponent=LowestLegalAgent.name, seed=0, match=match, human=human))


def _play(session: PlaySession, *moves: str) -> None:
    for move in moves:
        session.run_agent()
        session.play(parse_action(move))
    session.run_agent()


def _events(session: PlaySession) -> list[tuple]:
    return [(event["player"], event["kind"], event["text"]) for event in session.events]


# The human leads (forehand, seat 1 with seed 0), the opponent answers with his lowest card: a trump marriage (R10,
# 40) and its trick, the trump nine exchanged for the trump card (R9), and a marriage in hearts (20) that reaches 66.
FOREHAND_MARRIES = deck_from_hands(forehand="KH QH KD QD 9D JC", dealer="AC TC KC QC 9C JS", trump_card="AD",
                                   talon="AH TH 9H JH")
FOREHAND_MARRIES_TO_66 = deck_from_hands(forehand="KH QH KD QD 9D JC", dealer="AC TC KC QC JS 9S", trump_card="AD",
                                         talon="AH TH 9H JH")
# The human deals; the opponent leads 9C, the human takes it with AC (the follower wins, R6) and closes (R11).
DEALER_CLOSES = deck_from_hands(forehand="9C JC QC KC TC 9S", dealer="AC 9D JD QD KD TD", trump_card="AS")


def test_the_event_log_of_marriages_an_exchange_and_draws(monkeypatch):
    """R10: a marriage in trumps is worth 40, another 20; R9: the exchange is logged as one (the trump card taken
    is not a draw); R7: the human's own draw is named, the opponent's is not."""
    session = _session_on_deck(monkeypatch, FOREHAND_MARRIES, human_deals=False)
    assert session.human == 1 - session.game.dealer
    _play(session, "marry KD", "exchange", "marry KH")
    play_session_deal(session)
    assert _events(session)[:9] == [
        (None, "deal", "deal 1: the opponent deals; trump card AD (Diamonds)"),
        ("you", "marry", "you announce the marriage in Diamonds (40) and lead KD"),
        ("opponent", "follow", "opponent plays 9C"),
        ("you", "trick", "you win the trick KD 9C (+4)"),
        ("you", "draw", "you draw AH"),
        ("you", "exchange", "you exchange 9D for the trump card AD"),
        ("you", "marry", "you announce the marriage in Hearts (20) and lead KH"),
        ("opponent", "follow", "opponent plays QC"),
        ("you", "trick", "you win the trick KH QC (+7)"),
    ]


def test_a_marriage_that_reaches_66_ends_the_deal_with_no_card_led(monkeypatch):
    """R10/R13: 40 + 7 in the first trick, then a marriage of 20 reaches 66 and ends the deal: the log does not say a
    card was led, the table shows none, no one is to move, and a single deal's session is over."""
    session = _session_on_deck(monkeypatch, FOREHAND_MARRIES_TO_66, human_deals=False)
    _play(session, "marry KD", "marry KH")
    assert session.game.is_over
    assert ("you", "marry", "you announce the marriage in Hearts (20)") in _events(session)
    assert _events(session)[-1] == ("you", "result", "you win 3 game points (declared)")
    view = session.view()
    assert view["table"] is None and view["to_move"] is None and view["legal"] == []
    assert view["deal"] == 1 and session.deal_number == 1  # the finished deal is still the first
    assert session.session_over and view["match"]["over"] and view["match"]["winner"] == "you"
    with pytest.raises(ValueError, match="the deal is over"):
        session.play(parse_action("play JC"))
    with pytest.raises(ValueError, match="the Bummerl is over; start a new game"):
        session.next_deal()
    with pytest.raises(ValueError, match="not your turn"):
        session.hint()


def test_the_view_of_a_trick_the_follower_wins_and_a_closed_talon(monkeypatch):
    """R6: the follower's trump-free ace takes the lead's nine, and the cards go to him, not to the leader; the
    table names the leader while the reply is awaited; R11: the closer is named."""
    session = _session_on_deck(monkeypatch, DEALER_CLOSES, human_deals=True)
    session.run_agent()
    assert session.view()["table"] == {"card": "9C", "leader": "opponent"}
    _play(session, "play AC")
    view = session.view()
    assert view["won_cards"] == {"you": ["9C", "AC"], "opponent": []} and view["table"] is None
    assert view["closed_by"] is None
    _play(session, "close")
    assert session.view()["closed_by"] == "you"
    assert _events(session)[:6] == [
        (None, "deal", "deal 1: you deal; trump card AS (Spades)"),
        ("opponent", "lead", "opponent leads 9C"),
        ("you", "follow", "you play AC"),
        ("you", "trick", "you win the trick 9C AC (+11)"),
        ("you", "draw", "you draw AD"),
        ("you", "close", "you close the talon"),
    ]


def test_a_bummerl_deal_summary_is_seen_from_the_humans_seat(monkeypatch):
    """R17: after the first deal of a Bummerl the deal's points are shown as the human's and the opponent's (the
    human sits in seat 1 here), no Bummerl winner is named yet, and the next deal is dealt by the other player (R3)."""
    session = _session_on_deck(monkeypatch, FOREHAND_MARRIES_TO_66, human_deals=False, match=True)
    assert session.human == 1
    _play(session, "marry KD", "marry KH")
    result = session.game.result
    view = session.view()
    assert view["match"]["deals"] == [{"winner": "you", "game_points": 3, "reason": "declared",
                                       "points": {"you": result.points[1], "opponent": result.points[0]}}]
    assert result.points[0] != result.points[1]
    assert view["match"]["winner"] is None and not view["match"]["over"] and view["match"]["scores"]["you"] == 3
    assert session.deal_number == 1
    session.next_deal()
    assert session.deal_number == 2 and session.game.dealer == session.human


def test_the_agent_is_told_its_own_seat_before_every_deal(monkeypatch):
    """The agent plays the seat the human does not, and is told so before each deal (Agent.start_deal)."""
    for human in (0, 1):
        LowestLegalAgent.seats = []
        session = PlaySession(SessionSettings(opponent=LowestLegalAgent.name, seed=4, match=True, human=human))
        play_session_deal(session)
        session.next_deal()
        assert LowestLegalAgent.seats == [1 - human, 1 - human]


def test_a_one_game_point_result_is_singular():
    """R14: the result line says '1 game point' without a plural s (and '2 game points' with it)."""
    texts = {}
    for seed in range(40):
        session = PlaySession(SessionSettings(opponent="random", seed=seed, match=False))
        rng = random.Random(seed)
        play_session_deal(session, rng)
        if session.game.result.winner is not None:
            texts.setdefault(session.game.result.game_points, session.events[-1]["text"])
        if {1, 2} <= texts.keys():
            break
    assert " 1 game point (" in texts[1] and " 2 game points (" in texts[2]


def test_the_bummerl_score_is_known_only_while_a_bummerl_runs():
    """R17: the score before the deal is given to the agent during a Bummerl; a single deal or a finished Bummerl
    has none."""
    assert PlaySession(SessionSettings(opponent="random", seed=1, match=False)).bummerl_score() is None
    session = PlaySession(SessionSettings(opponent="random", seed=1, match=True))
    rng = random.Random(1)
    assert session.bummerl_score() == (0, 0)
    while True:
        play_session_deal(session, rng)
        if session.session_over:
            break
        session.next_deal()
        assert session.bummerl_score() == tuple(session.match.scores)
    assert session.bummerl_score() is None


def test_the_hand_is_shown_trumps_first_then_alternating_colours_high_to_low():
    """Display order: the trump suit, then spades, hearts, clubs, diamonds without it (colours alternate), each suit
    from the ace down (R2's ranks)."""
    every_card = (1 << 24) - 1
    assert " ".join(CARD_NAMES[card] for card in sorted_hand(every_card, trump_suit=1)) == (
        "AD TD KD QD JD 9D AS TS KS QS JS 9S AH TH KH QH JH 9H AC TC KC QC JC 9C")
    hand = sum(1 << card for card in parse_cards(["9H", "AC", "TS", "QD", "KH"], "hand"))
    assert [CARD_NAMES[card] for card in sorted_hand(hand, trump_suit=0)] == ["AC", "TS", "KH", "9H", "QD"]


def test_typed_words_that_are_not_cards_get_the_parsers_own_words():
    """A typed ten is rewritten only when it is a ten and a suit ('10H' -> 'TH', R1); a longer word, or a three
    letter word, is not a card and the parser says why in its own words."""
    session = PlaySession(SessionSettings(opponent="random", seed=1, match=False))
    session.run_agent()
    with pytest.raises(ValueError, match=r"^malformed card '10HH'"):
        session.parse_move("play 10HH")
    with pytest.raises(ValueError, match=r"^malformed action 'XYZ'"):
        session.parse_move("XYZ")


@pytest.mark.parametrize("field, value", [("human", True), ("seed", True), ("seed", 1.0)])
def test_settings_refuse_a_boolean_seat_or_seed(field, value):
    """True is an int in Python: a seat or seed given as a boolean is named, not taken as 1."""
    with pytest.raises(ValueError, match=f"^{field}( seat)? must be"):
        PlaySession(SessionSettings(opponent="random", **{field: value}))


def test_finished_deals_are_asked_for_by_their_number_only():
    """deal_record and deal_decisions take a 1-based number of a finished deal: not 0, not True, not the current."""
    session = PlaySession(SessionSettings(opponent="random", seed=2, match=True))
    rng = random.Random(2)
    play_session_deal(session, rng)
    assert session.deal_record(1)["result"]["game_points"] == session.game.result.game_points
    for bad in (0, 2, True):
        with pytest.raises(ValueError, match="no finished deal"):
            session.deal_record(bad)
        with pytest.raises(ValueError, match="no finished deal"):
            session.deal_decisions(bad)
    # decisions_of reads the same moves from the record alone; the opponent's are the rest
    record = session.deal_record(1)
    human_moves = decisions_of(record, session.human)
    assert human_moves == session.deal_decisions(1) and human_moves
    opponent_moves = decisions_of(record, 1 - session.human)
    assert sorted(human_moves + opponent_moves) == list(range(len(record["actions"])))


def test_a_finished_single_deal_is_saved_and_rebuilt():
    """The saved state of a finished single deal has no current moves, and rebuilds the same view; a state of
    another version is refused by name."""
    session = PlaySession(SessionSettings(opponent="random", seed=6, match=False))
    rng = random.Random(6)
    play_session_deal(session, rng)
    state = json.loads(json.dumps(session.to_state()))
    assert state["current"] is None
    assert PlaySession.from_state(state).view() == session.view()
    with pytest.raises(ValueError, match="unknown session state version"):
        PlaySession.from_state({**state, "version": state["version"] + 1})


def test_hints_are_seeded_by_the_position_and_see_every_move_on_every_world(monkeypatch):
    """A hint's search is seeded from the session's seed, the deal and the move, so a rebuilt session hints the same
    and another move is searched afresh; every move is valued on all the worlds (no pruning), and only an
    InformationSet is accepted (RULES "What a player may know")."""
    seeds = []
    real_hint_values = session_module.hint_values
    monkeypatch.setattr(session_module, "hint_values",
                        lambda infoset, seconds, seed: seeds.append(seed) or real_hint_values(infoset, 0.01, seed))
    session = PlaySession(SessionSettings(opponent="random", seed=3, match=False))
    session.run_agent()
    session.hint()
    PlaySession.from_state(session.to_state()).hint()
    session.play(session.legal_moves()[0])
    session.run_agent()
    assert not session.game.is_over
    session.hint()
    assert len(seeds) == 3 and seeds[0] == seeds[1] != seeds[2]

    deck = deck_from_hands(forehand="KH QH KD QD 9D JC", dealer="AC TC KC QC JS 9S", trump_card="AD")
    game = Game.deal(Rules(), deck=deck, dealer=0)
    hints = hint_values(InformationSet(game, 1), None, 7)  # clock-free: PIMC's 200 worlds
    assert len(hints) == len(game.legal_actions()) == 12
    assert all(hint["worlds"] == 200 for hint in hints)
    assert [hint["value"] for hint in hints] == sorted((hint["value"] for hint in hints), reverse=True)
    with pytest.raises(ValueError, match="from an InformationSet only"):
        hint_values(game, None, 7)
