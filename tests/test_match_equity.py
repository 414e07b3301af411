"""Bummerl equity (R17, agents/match_equity.py), the match score in the information sets of a Bummerl, and the
rollout search valuing deals by the chance to win the Bummerl (``rollout:objective=bummerl``)."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.match_equity import bummerl_equity, deal_utilities
from eval.play import play_bummerl, play_deal
from sixtysix_env import Game, InformationSet, Rules


def test_R17_equity_by_hand_for_a_target_of_two_with_one_point_deals():
    """Target 2, every deal worth 1 game point, each player winning half: from 1:1 needed it is a coin toss, from
    2:1 needed the first deal must be won and then the toss (1/4), and 2:2 is even again."""
    equity = bummerl_equity(2, (1.0, 0.0, 0.0))
    assert equity[1, 1] == pytest.approx(0.5)
    assert equity[2, 1] == pytest.approx(0.25) and equity[1, 2] == pytest.approx(0.75)
    assert equity[2, 2] == pytest.approx(0.5)
    assert (equity[0, 1:] == 1).all() and (equity[1:, 0] == 0).all()


def test_R17_equity_is_symmetric_and_monotone():
    equity = bummerl_equity(7)
    inner = equity[1:, 1:]
    assert np.allclose(inner + inner.T, 1.0) and np.allclose(np.diag(inner), 0.5)
    assert (np.diff(inner, axis=0) < 0).all()  # needing more points is worse
    assert (np.diff(inner, axis=1) > 0).all()  # the opponent needing more is better


def test_R17_deal_utilities_where_one_point_wins_and_at_the_start():
    """At 6:3 (R17, target 7) any win ends the Bummerl: the three wins are worth 1 and the losses less the larger
    they are; at 0:0 the utilities rise with the game points and an unscored deal (R15) keeps 1/2."""
    rules = Rules()
    near = deal_utilities(rules, (6, 3), player=0)
    assert (near[4:] == 1.0).all() and near[0] < near[1] < near[2] < near[3] < 1.0
    assert near[3] == pytest.approx(bummerl_equity(7)[1, 4])
    start = deal_utilities(rules, (0, 0), player=1)
    assert (np.diff(start) > 0).all() and start[3] == pytest.approx(0.5)
    assert deal_utilities(rules, (3, 6), player=1) == pytest.approx(near)  # the same score from the other seat


def test_equity_refuses_a_finished_bummerl_and_bad_shares_by_name():
    with pytest.raises(ValueError, match="match_score"):
        deal_utilities(Rules(), (7, 2), player=0)
    with pytest.raises(ValueError, match="shares"):
        bummerl_equity(7, (0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="target"):
        bummerl_equity(0)
    with pytest.raises(ValueError, match="match_score"):
        InformationSet(Game.deal(Rules(), seed=1), 0, (1, 9))


class ScoreWatcher:
    """An agent that plays the first legal action and remembers the match score of every information set."""

    def __init__(self):
        self.scores = []

    def act(self, infoset):
        self.scores.append(infoset.match_score)
        return infoset.legal_actions[0]


def test_R17_the_players_see_the_bummerl_score_before_each_deal():
    """In a Bummerl every information set carries the game points before the deal (R17); a deal played on its own
    carries none."""
    watchers = [ScoreWatcher(), ScoreWatcher()]
    decks = {}

    def deck_for(number):
        return decks.setdefault(number, Game.deal(Rules(), seed=300 + number).deck)

    outcome = play_bummerl(Rules(), 0, deck_for, watchers)
    seen = [0, 0]
    expected = []
    for deal in outcome.deals:
        expected.append((seen[0], seen[1]))
        if deal.winner is not None:
            seen[deal.winner] += deal.game_points
    observed = []
    for watcher in watchers:
        assert all(score in expected for score in watcher.scores)
        observed += watcher.scores
    assert set(observed) == set(expected) and len(expected) > 1
    single = ScoreWatcher()
    play_deal(Game.deal(Rules(), seed=5), [single, ScoreWatcher()])
    assert set(single.scores) == {None}


@pytest.mark.parametrize("win_chance", [0.5, 0.6])
def test_bummerl_objective_values_the_same_rollouts_by_the_chance_to_win_the_bummerl(win_chance):
    """``objective=bummerl``: the same worlds and rollouts as ``deal`` (same seed), each result mapped to the chance
    to win the Bummerl after it in the table of a player who wins ``bummerl_win_chance`` of the deals (0.5: equal
    players; 0.6: `expert`'s since session 51); without a match score the values are game points, as ``deal``'s,
    so a lone deal is played alike whatever the table."""
    game = Game.deal(Rules(), seed=7, dealer=0)
    player = game.current_player
    spec = "expert:samples=40,seconds=none,prune=none"
    by_points = make_agent(spec + ",objective=deal", seed=2)
    by_bummerl = make_agent(f"{spec},objective=bummerl,bummerl_win_chance={win_chance}", seed=2)
    for agent in (by_points, by_bummerl):
        agent.start_deal(player, game.rules)
    score = (6, 2) if player == 0 else (2, 6)
    by_points.act(InformationSet(game, player, score))
    by_bummerl.act(InformationSet(game, player, score))
    utilities = deal_utilities(game.rules, score, player, win_chance)
    for action, value in by_bummerl.last_values.items():
        points = by_points._scores[:, action].astype(np.int64)
        assert value == pytest.approx(utilities[points + 3].mean())
        assert 0.0 <= value <= 1.0
    by_points.seed(2)
    by_bummerl.seed(2)
    assert by_bummerl.act(InformationSet(game, player)) == by_points.act(InformationSet(game, player))
    assert by_bummerl.last_values == by_points.last_values
    with pytest.raises(ValueError, match="objective"):
        make_agent("expert:objective=glory")
    with pytest.raises(ValueError, match="win_chance"):
        make_agent("expert:bummerl_win_chance=0")


def test_R17_equity_of_a_stronger_player_by_hand_for_a_target_of_two_with_one_point_deals():
    """Target 2, one-point deals, the first player winning each with chance 0.6: needing one each, the next deal
    decides (0.6); needing two against one, he must win twice (0.36); needing one against two, he wins unless he
    loses twice (1 - 0.16)."""
    equity = bummerl_equity(2, (1.0, 0.0, 0.0), win_chance=0.6)
    assert equity[1, 1] == pytest.approx(0.6)
    assert equity[2, 1] == pytest.approx(0.36) and equity[1, 2] == pytest.approx(0.84)
    # The table of the weaker player is the stronger's seen from the other side.
    assert bummerl_equity(7, win_chance=0.4)[1:, 1:] == pytest.approx(1 - bummerl_equity(7, win_chance=0.6)[1:, 1:].T)


def test_R17_a_stronger_player_fears_a_big_loss_more_than_he_seeks_a_big_win():
    """At 0:0 between equal players a loss by three costs what a win by three gains; a player who wins 60 % of
    the deals loses more by the loss than he gains by the win (the deals to come favour him)."""
    rules = Rules()
    equal = deal_utilities(rules, (0, 0), player=0)
    stronger = deal_utilities(rules, (0, 0), player=0, win_chance=0.6)
    assert equal[6] - equal[3] == pytest.approx(equal[3] - equal[0])
    assert stronger[3] - stronger[0] > stronger[6] - stronger[3] > 0
    assert stronger[3] == pytest.approx(bummerl_equity(7, win_chance=0.6)[7, 7]) and stronger[3] > 0.5
    for bad in (0, 1, 1.5, True, "0.6"):
        with pytest.raises(ValueError, match="win_chance"):
            deal_utilities(rules, (0, 0), player=0, win_chance=bad)
