"""bench.oracle_bounds: the informed side departs from its honest twin only where the oracle decides, and the
paired report names both sides and their difference."""

from __future__ import annotations

from bench.oracle_bounds import decision_kind, main, play_game
from bench.quick_strength import derived_seed
from sixtysix_env import Game, Rules
from sixtysix_env.core.solver import Table

DEALS_WITH_CLOSINGS = 12  # enough deals of seed 7 for the oracle to overrule the honest play after a closing


def _kind_at(seed: int, index: int, actions: list[int], step: int) -> str:
    game = Game.deal(Rules.preset("standard"), seed=derived_seed("deck", seed, index), dealer=index % 2)
    for action in actions[:step]:
        game.apply(action)
    return decision_kind(game)


def test_oracle_departs_from_the_honest_base_only_at_the_oracles_kinds_of_decision():
    """R7/R10 decision kinds: with the clairvoyant solver at phase-1 follows and leads that cannot close (``phase1``),
    the informed ``heuristic`` plays exactly its honest twin's game (same seeds) up to the first decision of that
    kind where the solver disagrees; some games do depart."""
    table = Table(16)
    departed = 0
    for index in range(3):
        for seat in (0, 1):
            informed = play_game("oracle", "phase1", "heuristic", "heuristic", 5, index, seat, table)
            honest = play_game("honest", "", "heuristic", "heuristic", 5, index, seat, table)
            actions, mine = informed[1], informed[2]
            first = next((step for step, (a, b) in enumerate(zip(actions, honest[1])) if a != b), None)
            if first is None:
                assert informed == honest
                continue
            departed += 1
            assert mine[first], "the honest opponent cannot be the first to play differently"
            assert _kind_at(5, index, actions, first) == "phase1"
    assert departed > 0


def test_an_oracle_after_the_opponents_closings_departs_only_after_them():
    """R10: ``closed_theirs`` gives the solver only the decisions after a closing by the informed side's opponent:
    the first departure from the honest game is one of those (``closed`` is both kinds)."""
    table = Table(16)
    departed = 0
    for index in range(DEALS_WITH_CLOSINGS):
        for seat in (0, 1):
            informed = play_game("oracle", "closed_theirs", "heuristic", "heuristic", 7, index, seat, table)
            honest = play_game("honest", "", "heuristic", "heuristic", 7, index, seat, table)
            first = next((step for step, (a, b) in enumerate(zip(informed[1], honest[1])) if a != b), None)
            if first is not None:
                departed += 1
                assert informed[2][first] and _kind_at(7, index, informed[1], first) == "closed_theirs"
    assert departed > 0


def test_paired_report_gives_the_informed_side_its_honest_twin_and_the_difference(capsys):
    assert main(["oracle", "closed", "--base", "heuristic", "--paired", "--deals", "2", "--seed", "3"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("oracle closed (base heuristic) vs heuristic:")
    assert lines[1].startswith("honest heuristic vs heuristic:")
    assert lines[2].startswith("oracle closed (base heuristic) minus honest heuristic, paired vs heuristic:")
    figures = [float(line.split(": ")[1].split()[0]) for line in lines]
    assert abs(figures[0] - figures[1] - figures[2]) < 1e-9


def test_hand_revealed_only_at_some_kinds_departs_no_earlier_than_the_first_of_them():
    """R10: with ``sees_at`` the ``heuristic`` handed the opponent's hand plays its honest twin's game (same seeds)
    up to its first decision of those kinds (after it the two may part ways anywhere: its sampling there draws from
    fewer unseen cards, so its random stream moves on differently), and some games part ways. Revealed only after
    closings, no game parts ways at a lead where closing is legal, as games do when it is revealed there."""
    table = Table(16)
    for kinds in ({"close_option"}, {"closed_mine", "closed_theirs"}):
        departed = 0
        for index in range(DEALS_WITH_CLOSINGS):
            for seat in (0, 1):
                honest = play_game("honest", "", "heuristic", "heuristic", 7, index, seat, table)
                first_of_kinds = next((step for step, mine in enumerate(honest[2])
                                       if mine and _kind_at(7, index, honest[1], step) in kinds), len(honest[1]))
                informed = play_game("sees-hand", "heuristic", "", "heuristic", 7, index, seat, table,
                                     frozenset(kinds))
                first = next((step for step, (a, b) in enumerate(zip(informed[1], honest[1])) if a != b), None)
                if first is not None:
                    departed += 1
                    assert first >= first_of_kinds, (kinds, index, seat)
        assert departed > 0, kinds


def test_sees_at_is_checked_and_named_in_the_report(capsys):
    assert main(["sees-hand", "heuristic", "--sees-at", "closed", "--paired", "--deals", "2", "--seed", "3"]) == 0
    assert capsys.readouterr().out.startswith("sees-hand heuristic at closed vs heuristic:")
    for bad in (["sees-hand", "heuristic", "--sees-at", "exhausted"], ["oracle", "closed", "--sees-at", "closed"]):
        try:
            main(bad + ["--deals", "2"])
        except SystemExit as error:
            assert error.code == 2
        else:
            raise AssertionError(f"{bad} was accepted")


def test_hand_revealed_for_the_closing_choice_only():
    """R10: with ``sees_at={"close_only"}``, at a lead where closing is legal, the informed side closes exactly when
    the agent handed the hand closes; when it keeps the talon open and the honest twin would close, it leads the
    informed choice; when neither closes, the honest twin's card. Without ``sees_at`` the informed choice stands."""
    from bench.oracle_bounds import informed_action
    from sixtysix_env import InformationSet
    from sixtysix_env.actions import CLOSE

    from agents import make_agent

    rules = Rules.preset("standard")
    players = [make_agent("heuristic", seed=1), make_agent("heuristic", seed=2)]
    game = Game.deal(rules, seed=derived_seed("deck", 7, 0), dealer=0)
    for seat in (0, 1):
        players[seat].start_deal(seat, rules)
    while decision_kind(game) != "close_option":
        game.apply(players[game.current_player].act(InformationSet(game, game.current_player)))
    cards = [action for action in game.legal_actions() if action < 24]
    opponent_hand = game.hands[1 - game.current_player]

    class Scripted:
        """Answers ``revealed`` when handed the opponent's hand, else ``honest``."""

        def __init__(self, revealed: int, honest: int):
            self.revealed, self.honest = revealed, honest

        def act(self, infoset):
            return self.revealed if infoset.opponent_known == opponent_hand else self.honest

    only = frozenset({"close_only"})
    assert informed_action("sees-hand", "", game, Scripted(CLOSE, cards[0]), None, only) == CLOSE
    assert informed_action("sees-hand", "", game, Scripted(cards[0], CLOSE), None, only) == cards[0]
    assert informed_action("sees-hand", "", game, Scripted(cards[0], cards[1]), None, only) == cards[1]
    assert informed_action("sees-hand", "", game, Scripted(cards[0], cards[1]), None, None) == cards[0]


def test_closing_choice_only_keeps_the_honest_twins_random_stream():
    """R10: with ``sees_at={"close_only"}`` the informed ``heuristic`` plays its honest twin's game (same seeds) up
    to a lead where closing is legal and the two choose differently: the agent asked on the revealed hand is a
    second instance, so asking it does not move the honest agent's random stream on. Some games do part ways."""
    table = Table(16)
    departed = 0
    for index in range(DEALS_WITH_CLOSINGS):
        for seat in (0, 1):
            honest = play_game("honest", "", "heuristic", "heuristic", 7, index, seat, table)
            informed = play_game("sees-hand", "heuristic", "", "heuristic", 7, index, seat, table,
                                 frozenset({"close_only"}))
            first = next((step for step, (a, b) in enumerate(zip(informed[1], honest[1])) if a != b), None)
            if first is None:
                assert informed == honest
                continue
            departed += 1
            assert informed[2][first] and _kind_at(7, index, informed[1], first) == "close_option", (index, seat)
    assert departed > 0
