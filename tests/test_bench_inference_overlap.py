"""bench.inference_overlap: how many of the opponent's unknown cards the replay inference's worlds place right, when
any agent plays the deals (docs/strength.md, sessions 4 and 52)."""

from __future__ import annotations

import re

import pytest

from agents.rule_based import HeuristicAgent
from bench.inference_overlap import main, self_play_decisions
from sixtysix_env import Game, InformationSet, Rules


def _histories(decisions) -> list[tuple[int, ...]]:
    return [tuple(infoset.history) for _game, infoset in decisions]


def test_the_deals_are_played_by_the_agent_named():
    """The default agent plays the deals as the heuristic with the bench's seeds did (R4 deals from the seeds);
    another agent plays them otherwise."""
    rules = Rules()
    expected = []
    for deal in range(2):
        game = Game.deal(rules, seed=40 + deal, dealer=deal % 2)
        players = [HeuristicAgent(seed=deal * 2 + seat) for seat in range(2)]
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            expected.append(tuple(infoset.history))
            game.apply(players[infoset.player].act(infoset))
    assert _histories(self_play_decisions(range(2), 40, rules)) == expected
    assert _histories(self_play_decisions(range(2), 40, rules, "random")) != expected


def test_several_floors_are_measured_on_the_same_decisions(capsys):
    assert main(["--agent", "greedy", "--deals", "2", "--seed", "40", "--worlds", "8", "--floors", "0.1,0.5"]) == 0
    lines = re.findall(r"(\d+) decisions of greedy: .* uniform worlds ([0-9.]+), by inferred worlds ([0-9.]+) "
                       r"\(floors ([0-9.]+)", capsys.readouterr().out)
    assert [floor for *_rest, floor in lines] == ["0.1", "0.5"]
    assert len({count for count, *_rest in lines}) == 1 and int(lines[0][0]) > 0
    assert all(0 <= float(share) <= 1 for _count, uniform, inferred, _floor in lines for share in (uniform, inferred))


@pytest.mark.parametrize("floors", ["0.1,0", "0.1,x", "0.1,0.1"])
def test_bad_floors_are_refused_by_name(floors, capsys):
    with pytest.raises(SystemExit):
        main(["--deals", "1", "--floors", floors])
    assert "floors" in capsys.readouterr().err


@pytest.mark.parametrize("argv, named", [
    (["--played-on-floor", "0"], "--played-on-floor must lie in (0, 1], got 0"),
    (["--closing-floor", "1.5"], "--closing-floor must lie in (0, 1], got 1.5"),
    (["--lead-floor", "-0.1"], "--lead-floor must lie in (0, 1], got -0.1"),
    (["--closed-floor", "2"], "--closed-floor must lie in (0, 1], got 2"),
    (["--worlds", "0"], "--worlds must be positive, got 0"),
])
def test_a_bad_option_is_refused_with_its_name_and_value(argv, named, capsys):
    with pytest.raises(SystemExit):
        main(["--deals", "1", *argv])
    assert named in capsys.readouterr().err


def _figures(capsys) -> dict[str, tuple[str, str]]:
    lines = re.findall(r"uniform worlds ([0-9.]+), by inferred worlds ([0-9.]+) \(floors ([0-9.]+)",
                       capsys.readouterr().out)
    return {floor: (uniform, inferred) for uniform, inferred, floor in lines}


def test_the_floors_share_their_random_draws(capsys):
    """Common random numbers: a floor measures the same figures alone as beside another floor measured first (each
    decision seeds the draws afresh), and the uniform worlds are the same for every floor."""
    arguments = ["--agent", "greedy", "--deals", "2", "--seed", "40", "--worlds", "8"]
    assert main([*arguments, "--floors", "0.1"]) == 0
    alone = _figures(capsys)
    assert main([*arguments, "--floors", "0.5,0.1"]) == 0
    beside = _figures(capsys)
    assert set(beside) == {"0.5", "0.1"}
    assert beside["0.1"] == alone["0.1"]
    assert beside["0.5"][0] == beside["0.1"][0]
