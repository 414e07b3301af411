"""The searches of a closed deal (R8, R10). The lookahead (agents/closed_lookahead.py): exact in a single world,
never above the clairvoyant value in a world, and the observer's next decision one choice per group of worlds he
cannot tell apart. ``closed_search=ismcts`` (agents/rollout.py): SO-ISMCTS decides after a closing, and only
there."""

from __future__ import annotations

import numpy as np
import pytest
from search_positions import closed_decisions

from agents import make_agent
from agents.closed_lookahead import lookahead_values
from agents.solver import core_table
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.core import state_from_game
from sixtysix_env.core.layout import STATE_SIZE
from sixtysix_env.core.search import information_template, sample_worlds, seed_kernels
from sixtysix_env.core.solver import action_values


def test_in_the_true_world_alone_the_lookahead_is_the_exact_solve():
    """One world, the true one: every group is that world, so each action's value is its solved value."""
    table = core_table()
    checked = 0
    for game, infoset in closed_decisions(40, 300):
        state = state_from_game(game)
        exact = action_values(state, table)
        values = lookahead_values(state[None].copy(), infoset.player, list(exact), table)
        assert {action: values[0, action] for action in exact} == {action: float(v) for action, v in exact.items()}
        checked += 1
    assert checked > 30


def test_over_sampled_worlds_the_lookahead_never_credits_more_than_seeing_every_card():
    """Over 40 sampled worlds per decision: in every world each action is worth at most its solved value there (the
    observer's next move is one per group, not the best in each world), and at some decisions strictly less."""
    table = core_table()
    seed_kernels(11)
    lower = checked = 0
    for _game, infoset in closed_decisions(40, 500):
        template, allowed, unseen, needed = information_template(infoset)
        worlds = np.empty((40, STATE_SIZE), dtype=np.int64)
        sample_worlds(40, template, 1 - infoset.player, allowed, unseen, needed, worlds)
        actions = list(infoset.legal_actions)
        values = lookahead_values(worlds, infoset.player, actions, table)
        for index, world in enumerate(worlds):
            exact = action_values(world, table)
            for action in actions:
                assert values[index, action] <= exact[action]
                lower += values[index, action] < exact[action]
        checked += 1
    assert checked > 30 and lower > 0


def test_the_rollout_agent_uses_it_after_a_closing_and_refuses_a_bad_count():
    agent = make_agent("expert:seconds=none,samples=50,closed_lookahead=30", seed=4)
    searched = 0
    for _game, infoset in closed_decisions(15, 700):
        action = agent.act(infoset)
        assert action in infoset.legal_actions
        if agent.last_values:
            assert agent.last_worlds == 30 and set(agent.last_values) == set(infoset.legal_actions)
            searched += 1
    assert searched > 10
    for value in (-1, True, 10**6):
        with pytest.raises(ValueError, match="closed_lookahead"):
            make_agent(f"rollout:closed_lookahead={value}")


def test_closed_search_ismcts_decides_after_a_closing_and_nowhere_else():
    """R10: with ``closed_search=ismcts`` every decision with a choice after a closing is the ISMCTS agent's, and
    every other one is the plain search's (same seed, clock-free: the same actions); a twin seeded alike repeats
    the ISMCTS choices."""
    base = "expert:seconds=none,samples=30,threads=1"
    candidate_spec = f"{base},closed_search=ismcts,closed_iterations=300"
    plain, candidate, twin = (make_agent(spec, seed=9) for spec in (base, candidate_spec, candidate_spec))
    asked = []
    inner_act = candidate._closed_ismcts.act

    def spied_act(infoset):
        action = inner_act(infoset)
        asked.append((infoset.history[:], action))
        return action

    candidate._closed_ismcts.act = spied_act
    players = [make_agent("heuristic", seed=31), make_agent("heuristic", seed=32)]
    closed = open_talon = 0
    for deal in range(12):
        game = Game.deal(Rules(), seed=3500 + deal, dealer=deal & 1)
        for agent in (plain, candidate, twin):  # re-seeded per deal, as a match does
            agent.seed(700 + deal)
            agent.start_deal(0, game.rules)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            if game.current_player == 0 and len(infoset.legal_actions) > 1:
                calls = len(asked)
                action = candidate.act(infoset)
                assert twin.act(infoset) == action
                if game.closed_by is not None:  # a closing lasts to the deal's end: no open decision follows
                    assert len(asked) == calls + 1 and asked[-1] == (infoset.history, action)
                    closed += 1
                else:
                    assert len(asked) == calls and plain.act(infoset) == action
                    open_talon += 1
            game.apply(players[game.current_player].act(infoset))
    assert closed >= 3 and open_talon >= 50


def test_closed_search_refuses_bad_settings_by_name():
    for spec, name in (("rollout:closed_search=mcts", "closed_search"),
                       ("rollout:closed_search=ismcts,closed_lookahead=30", "closed_lookahead"),
                       ("rollout:closed_search=ismcts,closed_iterations=0", "closed_iterations"),
                       ("rollout:closed_iterations=true", "closed_iterations")):
        with pytest.raises(ValueError, match=name):
            make_agent(spec)


def test_the_presumed_reply_depends_only_on_what_the_opponent_sees():
    """R8, R10: with ``presumed_params`` the opponent answers from his own view (the heuristic's sampled solves of a
    closed deal), so the observer's hand, which he cannot see, does not change his reply: the same position with
    that hand redrawn from the opponent's view (his own hand, the played and the shown cards kept) gets the same
    reply from the same generator. The solver's reply, which sees every card, does change at some of them."""
    from agents.closed_lookahead import _opponent_reply, _presumed_reply
    from agents.rule_based import HeuristicAgent
    from sixtysix_env.core.heuristic import world_for
    from sixtysix_env.core.layout import HAND0

    params = HeuristicAgent(phase2_samples=8).core_params()
    table = core_table()
    checked = solver_moved = 0
    for game, infoset in closed_decisions(60, 1300):
        state = state_from_game(game)
        mover = infoset.player
        seed_kernels(5)
        redrawn = np.empty_like(state)
        world_for(redrawn, state, mover)  # the other seat's hand drawn from the mover's view
        if redrawn[HAND0 + 1 - mover] == state[HAND0 + 1 - mover]:
            continue
        seed_kernels(17)
        reply = _presumed_reply(state, params, table)
        seed_kernels(17)
        assert _presumed_reply(redrawn, params, table) == reply
        assert reply in infoset.legal_actions
        solver_moved += _opponent_reply(state, table) != _opponent_reply(redrawn, table)
        checked += 1
    assert checked > 50 and solver_moved > 0


def test_the_lookahead_with_the_presumed_opponent_in_the_agent():
    """``closed_opponent=presumed``: the agent values every legal action after a closing over its lookahead worlds,
    a twin with the same seed repeats its choices, and it values most decisions otherwise than the lookahead with the
    solver's replies, and chooses otherwise at some."""
    base = "expert:seconds=none,samples=50,threads=1,closed_lookahead=40"
    solver, presumed, twin = (make_agent(spec, seed=6) for spec in (base, f"{base},closed_opponent=presumed",
                                                                    f"{base},closed_opponent=presumed"))
    searched = differ = valued_otherwise = 0
    for _game, infoset in closed_decisions(40, 900):
        action = presumed.act(infoset)
        assert twin.act(infoset) == action
        if presumed.last_values:
            assert presumed.last_worlds == 40 and set(presumed.last_values) == set(infoset.legal_actions)
            searched += 1
        values = presumed.last_values
        differ += solver.act(infoset) != action
        valued_otherwise += solver.last_values != values
    assert searched > 30 and valued_otherwise > searched / 2 and differ > 0


def test_the_presumed_opponent_refuses_bad_settings_by_name():
    for spec, name in (("rollout:closed_opponent=clairvoyant,closed_lookahead=30", "closed_opponent"),
                       ("rollout:closed_opponent=presumed", "closed_lookahead"),
                       ("rollout:closed_lookahead=30,closed_opponent=presumed,presumed_worlds=0", "presumed_worlds"),
                       ("rollout:closed_lookahead=30,presumed_worlds=65", "presumed_worlds"),
                       ("rollout:presumed_worlds=true", "presumed_worlds")):
        with pytest.raises(ValueError, match=name):
            make_agent(spec)
