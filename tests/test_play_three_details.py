"""The three-player session's details (play/three_session.py), from a mutation review: the public event log and the
view of an explicit deal (R21), seats left and right, the session's checks, and its seeds."""

from __future__ import annotations

import random

import pytest

import agents.registry
from agents.base import Agent
from eval.deals import derive_seed
from play.three_session import ThreePlaySession, ThreeSessionSettings
from sixtysix_env import Game, Rules
from sixtysix_env.match import ThreePlayerMatch
from sixtysix_env.three import ANNOUNCE_BASE, deck_from_seat_hands, parse_three_player_action

from play_helpers import play_session_deal
from test_three_rules import HANDS_A

AGENT = "shows_marriages_for_session_tests"


class ShowsMarriagesAgent(Agent):
    """Shows every marriage it may before the first lead (R21), else plays its lowest legal action; records the
    seats it is told and the seeds it is given."""

    name = AGENT

    def __init__(self, seed=None):
        super().__init__(seed)
        self.seats: list[int] = []
        self.seeds: list[int] = []

    def seed(self, seed):
        self.seeds.append(seed)
        super().seed(seed)

    def start_deal(self, player: int, rules: Rules) -> None:
        self.seats.append(player)

    def act(self, infoset) -> int:
        shows = [action for action in infoset.legal_actions if ANNOUNCE_BASE <= action < ANNOUNCE_BASE + 4]
        return shows[0] if shows else infoset.legal_actions[0]


class IllegalAgent(Agent):
    name = "illegal_for_session_tests"

    def act(self, infoset) -> int:
        return next(action for action in range(24) if action not in infoset.legal_actions)


@pytest.fixture(autouse=True)
def test_agents(monkeypatch):
    """The test agents are registered for these tests only."""
    monkeypatch.setitem(agents.registry._REGISTRY, AGENT, ShowsMarriagesAgent)
    monkeypatch.setitem(agents.registry._REGISTRY, IllegalAgent.name, IllegalAgent)


def _seed_with_first_dealer(dealer: int) -> int:
    return next(seed for seed in range(100) if random.Random(derive_seed("first dealer", seed)).randrange(3) == dealer)


def _session_on_hands_a(monkeypatch, human: int, **settings) -> ThreePlaySession:
    """Every deal is HANDS_A (R21 deal order: forehand seat 0, middlehand 1, the dealer 2), the first dealer seat 2."""
    deck = deck_from_seat_hands(*(hand.split() for hand in HANDS_A))
    monkeypatch.setattr(ThreePlayerMatch, "new_deal",
                        lambda self, seed=None, deck_=None: Game.deal(self.rules, deck=deck, dealer=self.dealer))
    return ThreePlaySession(ThreeSessionSettings(opponents=(AGENT, AGENT), seed=_seed_with_first_dealer(2),
                                                 human=human, **settings))


def _moves(session: ThreePlaySession, *texts: str) -> None:
    for text in texts:
        session.run_agents()
        session.play(session.parse_move(text))
    session.run_agents()


def _texts(session: ThreePlaySession) -> list[str]:
    return [event["text"] for event in session.events]


LEFT, RIGHT = f"left ({AGENT})", f"right ({AGENT})"


def test_before_the_first_lead_marry_shows_a_marriage_only_by_its_suit_or_a_card_of_the_pair(monkeypatch):
    """R21: in the round before the first lead, ``marry C``, ``marry KC`` and ``marry QC`` show the clubs marriage
    as ``announce C`` does; any other word ending in C (``marry AC``, ``marry 9C``, ``marry ZC``) was taken for it
    too (a sweep found), and is refused as at a lead."""
    session = _session_on_hands_a(monkeypatch, human=0, match=False)
    _moves(session, "name trump H")
    announce = parse_three_player_action("announce C")
    assert announce in session.legal_moves()
    assert {session.parse_move(text) for text in ("marry C", "marry KC", "marry qc", "announce C")} == {announce}
    for text in ("marry AC", "marry 9C", "marry ZC", "marry CC"):
        with pytest.raises(ValueError):
            session.parse_move(text)


def test_the_log_and_view_of_an_explicit_deal_as_forehand(monkeypatch):
    """R21: the human (forehand, seat 0) names hearts; in the round before the first lead he shows none, the seat to
    his left shows the trump marriage (40) and the one to his right diamonds and spades (20 each); the human then
    leads his clubs marriage (20); each trick goes to its winner with all three cards' points."""
    session = _session_on_hands_a(monkeypatch, human=0, match=False)
    view = session.view()
    assert view["trump_suit"] is None and view["hand"] == ["AC", "TC", "KC"]  # naming: his first three cards
    assert _texts(session) == [f"deal 1: {RIGHT} deals; you name trump"]
    _moves(session, "name trump H")
    assert session.view()["hand"] == ["JH", "9H", "AC", "TC", "KC", "QC", "TD", "JD"]  # trumps first
    _moves(session, "pass")
    assert [player["known"] for player in session.view()["players"]] == [[], ["KH", "QH"], ["KS", "QS", "KD", "QD"]]
    assert session.parse_move("marry C") == parse_three_player_action("marry KC")  # at a lead: marry, not show
    _moves(session, "marry KC")
    assert _texts(session)[1:11] == [
        "you: trump is Hearts",
        "you: passes (shows no more marriages before the first lead)",
        f"{LEFT}: shows the marriage in Hearts (40; it counts once a trick is won, R12)",
        f"{LEFT}: passes (shows no more marriages before the first lead)",
        f"{RIGHT}: shows the marriage in Diamonds (20; it counts once a trick is won, R12)",
        f"{RIGHT}: shows the marriage in Spades (20; it counts once a trick is won, R12)",
        f"{RIGHT}: passes (shows no more marriages before the first lead)",
        "you: the marriage in Clubs (20), leading KC",
        f"{LEFT}: 9C",
        f"{RIGHT}: QD",
    ]
    assert _texts(session)[11] == "you take the trick KC 9C QD (+7)"


def test_the_view_of_a_trick_led_by_the_left_seat_and_the_end(monkeypatch):
    """R21: the table lists the cards in the order played from the leader to his left; every seat's hand size, tricks
    and the points are its own; at the end the deal's winner gains 1 game point (R17) and no one else does."""
    session = _session_on_hands_a(monkeypatch, human=0, match=False)
    seen_tables = []

    def note_a_table_of_two_cards(current: ThreePlaySession) -> None:
        view = current.view()
        if len(view["table"]) == 2:
            seen_tables.append((view["table"], [player["cards"] for player in view["players"]]))

    _moves(session, "name trump C")
    play_session_deal(session, check=note_a_table_of_two_cards)
    led_by_left = [(table, cards) for table, cards in seen_tables if table[0]["player"] == LEFT]
    assert led_by_left, "no trick led by the left seat"
    table, cards = led_by_left[0]
    assert [entry["player"] for entry in table] == [LEFT, RIGHT]
    assert cards[1] == cards[2] == cards[0] - 1  # the two who played this trick hold one card fewer
    view = session.view()
    result = session.game.result
    assert view["result"]["points"] == {"you": result.points[0], LEFT: result.points[1], RIGHT: result.points[2]}
    assert [player["tricks"] for player in view["players"]] == [session.game.tricks_won[seat] for seat in (0, 1, 2)]
    assert len({player["tricks"] for player in view["players"]}) > 1
    assert view["deal"] == 1 and view["players"][0]["player"] == "you"
    winner = view["result"]["winner"]
    assert view["match"]["scores"] == {name: int(name == winner) for name in ("you", LEFT, RIGHT)}
    trick_takers = [event["player"] for event in session.events if event["kind"] == "trick"]
    assert trick_takers == [session.who(trick[2]) for trick in session.game.tricks]  # the winner, not the leader
    assert trick_takers != [session.who(trick[0]) for trick in session.game.tricks]
    verb = "win" if winner == "you" else "wins"
    assert _texts(session)[-1].startswith(f"{winner} {verb} the deal and 1 game point (you ")


def test_each_agent_is_told_its_seat_and_reseeded_per_deal_and_move(monkeypatch):
    """The agent to the human's left plays seat human+1, the other human+2 (R21: play passes to the left); each is
    told its seat before every deal, and its generator is reseeded from the deal and the move number."""
    session = _session_on_hands_a(monkeypatch, human=1, match=True)
    left, right = session.agents[2], session.agents[0]
    assert session.who(2) == LEFT and session.who(0) == RIGHT
    assert left.seats[-1] == 2 and right.seats[-1] == 0
    play_session_deal(session)
    first_deal_seeds = list(left.seeds)
    session.next_deal()
    assert left.seats[-1] == 2 and right.seats[-1] == 0
    play_session_deal(session)
    second_deal_seeds = left.seeds[len(first_deal_seeds):]
    seed = session.settings.seed
    assert set(first_deal_seeds) <= {derive_seed("move", seed, 0, move_number) for move_number in range(40)}
    assert set(second_deal_seeds) <= {derive_seed("move", seed, 1, move_number) for move_number in range(40)}
    assert second_deal_seeds and not set(first_deal_seeds) & set(second_deal_seeds)


def test_opponents_sit_left_and_right_as_given():
    """``opponents`` is (the seat to the human's left, the seat to his right): who plays after him comes first."""
    session = ThreePlaySession(ThreeSessionSettings(opponents=("random", "greedy"), seed=3, human=0, match=False))
    assert session.agents[1].name == "random" and session.agents[2].name == "greedy"
    assert session.who(1) == "left (random)" and session.who(2) == "right (greedy)"
    assert session.seats == (0, 1, 2)


def test_an_agent_that_chooses_an_illegal_move_is_named():
    session = ThreePlaySession(ThreeSessionSettings(opponents=(IllegalAgent.name, IllegalAgent.name), seed=1,
                                                    human=0, match=False))
    with pytest.raises(RuntimeError, match="chose the illegal action"):
        play_session_deal(session)


def test_the_first_dealer_and_the_human_seat_are_drawn_from_all_three_seats():
    """R3 carried over to three: the first dealer is drawn from the three seats, and so is the human's seat when
    none is given."""
    dealers, humans = set(), set()
    for seed in range(30):
        session = ThreePlaySession(ThreeSessionSettings(opponents=("random", "random"), seed=seed, match=False))
        dealers.add(session.game.dealer)
        humans.add(session.human)
    assert dealers == humans == {0, 1, 2}


@pytest.mark.parametrize("settings, message", [
    (dict(rules=Rules()), "^a three-player session needs rules with players=3"),
    (dict(seed=True), "^seed must be an integer, got True"),
    (dict(human=True), "^human seat must be 0, 1 or 2, got True"),
    (dict(opponents=("random",)), "^a three-player session needs two opponents, got 1"),
])
def test_settings_are_checked_by_name(settings, message):
    with pytest.raises(ValueError, match=message):
        ThreePlaySession(ThreeSessionSettings(**settings))


def test_a_boolean_move_is_malformed():
    """True is an int in Python: it is refused, not played as action 1."""
    session = ThreePlaySession(ThreeSessionSettings(opponents=("random", "random"), seed=1, human=0, match=False))
    session.run_agents()
    history = list(session.game.history)
    for move in (True, False):
        with pytest.raises(ValueError, match="malformed move"):
            session.play(move)
    assert session.game.history == history


def test_a_single_deal_names_no_bummerl_winner_even_at_a_target_of_one():
    """R17's target as a switch: with ``bummerl_target=1`` one deal reaches it, but a session of a single deal
    names no Bummerl winner (only a Bummerl session does)."""
    rules = Rules.preset("three", bummerl_target=1)
    for match in (False, True):
        session = ThreePlaySession(ThreeSessionSettings(opponents=("random", "random"), rules=rules, seed=0,
                                                        human=0, match=match))
        play_session_deal(session)
        assert session.game.result.winner is not None  # seed 0 deals a scored deal (R21: no tie at the top)
        expected = session.who(session.game.result.winner) if match else None
        assert session.view()["match"]["winner"] == expected and session.session_over


def test_a_tie_at_the_top_is_logged_with_everyones_points():
    """R21: a tie at the top is not scored; the log says so and gives each player's points (seed 33 deals one
    when the human plays at random)."""
    session = ThreePlaySession(ThreeSessionSettings(opponents=("random", "random"), seed=33, human=0, match=False))
    play_session_deal(session, random.Random(33))
    points = session.game.result.points
    assert session.game.result.winner is None and session.view()["match"]["scores"] == {
        "you": 0, "left (random)": 0, "right (random)": 0}
    assert session.events[-1]["text"] == (f"not scored: a tie at the top (you {points[0]}, left (random) {points[1]}, "
                                          f"right (random) {points[2]}; R21)")
