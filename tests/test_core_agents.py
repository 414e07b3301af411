"""The search agents' kernels on the compiled core against their pure-Python references (agents/pimc.py), the
sampling of worlds from an information set, ISMCTS on the core, and numba's cache surviving corruption."""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import CLOSE, NUM_ACTIONS
from sixtysix_env.game import LEAD
from sixtysix_env.core import core_implements, state_from_game
from sixtysix_env.core.layout import HAND0, STATE_SIZE, STOCK, STOCK_LEN, STOCK_POS
from sixtysix_env.core.policy import playout_value, policy_action
from sixtysix_env.core.search import determinize_into, information_template, seed_kernels
from sixtysix_env.core.solver import Table

from agents import pimc
from agents.ismcts import IsmctsAgent

PRESETS = ("standard", "paderborn", "scharf")
WEIGHTS = pimc.policy_weights()


def random_positions(rules: Rules, count: int, seed: int):
    """Positions met in random play, every decision of ``count`` deals."""
    for deal in range(count):
        rng = random.Random(seed + deal)
        game = Game.deal(rules, seed=seed + deal, dealer=deal & 1)
        while not game.is_over:
            yield game
            game.apply(rng.choice(game.legal_actions()))


@pytest.mark.parametrize("preset", PRESETS)
def test_core_policy_chooses_what_the_python_policy_chooses(preset):
    """The playout policy (R6–R11 aware rules of thumb) on the core equals agents.pimc.policy_action."""
    checked = 0
    for game in random_positions(Rules.preset(preset), 200, 40_000):
        assert policy_action(state_from_game(game), WEIGHTS) == pimc.policy_action(game), repr(game)
        checked += 1
    assert checked > 2000


@pytest.mark.parametrize("preset", PRESETS)
def test_core_playouts_value_worlds_like_the_python_playouts(preset):
    """Playouts to phase 2, solved exactly (R8), with closings checked by the solver (R10)."""
    table = Table(16)
    rng = random.Random(5)
    checked = 0
    for index, game in enumerate(random_positions(Rules.preset(preset), 60, 50_000)):
        if index % 3:
            continue
        player = rng.randrange(2)
        expected = pimc.python_playout_value(game.clone(), player)
        assert playout_value(state_from_game(game), player, WEIGHTS, table.entries, table.nodes) == expected
        checked += 1
    assert checked > 200


@pytest.mark.parametrize("preset", PRESETS)
def test_sampled_worlds_are_consistent_with_the_information_set(preset):
    """Every sampled world keeps the player's hand, the opponent's shown cards and his hand size, puts no card
    the opponent showed he cannot hold (R8 follows) into his hand, and fills the talon with the other unseen
    cards."""
    rules = Rules.preset(preset)
    world = np.empty(STATE_SIZE, dtype=np.int64)
    seed_kernels(3)
    checked = 0
    for index, game in enumerate(random_positions(rules, 80, 60_000)):
        if index % 4:
            continue
        player = game.to_move
        infoset = InformationSet(game, player)
        template, allowed, unseen, needed = information_template(infoset)
        for _ in range(3):
            determinize_into(world, template, 1 - player, allowed, unseen, needed)
            opponent_hand = int(world[HAND0 + 1 - player])
            assert int(world[HAND0 + player]) == game.hands[player]
            assert opponent_hand.bit_count() == game.hands[1 - player].bit_count()
            assert opponent_hand & infoset.opponent_known == infoset.opponent_known
            assert not opponent_hand & infoset.opponent_void
            talon = [int(card) for card in world[STOCK + int(world[STOCK_POS]):STOCK + int(world[STOCK_LEN])]]
            hidden = (opponent_hand & ~infoset.opponent_known) | sum(1 << card for card in talon)
            assert hidden == infoset.unseen and len(set(talon)) == len(talon)
        checked += 1
    assert checked > 100


def test_sampled_opponent_hands_are_uniform():
    """At the first lead the dealer's six cards are a uniform draw from the 11 + 6 unseen cards: each unseen card
    lands in his hand with probability 6/17 (chi-square over 17 cards, 20,000 worlds)."""
    from scipy.stats import chisquare

    game = Game.deal(Rules(), seed=11)
    player = game.to_move
    template, allowed, unseen, needed = information_template(InformationSet(game, player))
    world = np.empty(STATE_SIZE, dtype=np.int64)
    seed_kernels(7)
    counts = np.zeros(24)
    for _ in range(20_000):
        determinize_into(world, template, 1 - player, allowed, unseen, needed)
        hand = int(world[HAND0 + 1 - player])
        counts += [(hand >> card) & 1 for card in range(24)]
    observed = counts[[card for card in range(24) if unseen >> card & 1]]
    assert len(observed) == 17
    assert chisquare(observed).pvalue > 1e-4
    assert abs(observed.sum() / 20_000 - 6) < 1e-9


def test_core_ismcts_is_reproducible_and_searches_many_iterations():
    game = Game.deal(Rules(), seed=21)
    infoset = InformationSet(game, game.to_move)
    first = IsmctsAgent(seed=4, iterations=3000, seconds=None)
    second = IsmctsAgent(seed=4, iterations=3000, seconds=None)
    assert first.search(infoset) == second.search(infoset)
    assert first.last_iterations == 3000
    visits = sum(visits for visits, _ in first.search(infoset).values())
    assert visits == 3000  # every iteration passes through one root child


@pytest.mark.parametrize("prior", [None, "suit_iterated"])
def test_core_ismcts_loads_its_kernels_at_start_deal_and_plays_as_one_loading_them_in_act(prior):
    """A match's clock runs around ``act`` only: ``start_deal`` loads the kernels and makes the tree on a deal of its
    own, and the agent then chooses exactly as one that loads them inside its first ``act`` (clock-free)."""
    prepared = IsmctsAgent(seed=4, iterations=300, seconds=None, prior=prior)
    lazy = IsmctsAgent(seed=4, iterations=300, seconds=None, prior=prior)
    game = Game.deal(Rules(), seed=33)
    searcher = game.to_move
    prepared.start_deal(searcher, game.rules)
    assert prepared._tree is not None and lazy._tree is None
    decisions = 0
    while not game.is_over:
        if game.current_player == searcher:
            infoset = InformationSet(game, searcher)
            action = prepared.act(infoset)
            assert lazy.act(infoset) == action
            decisions += 1
        else:
            action = game.legal_actions()[0]
        game.apply(action)
    assert decisions >= 3


def test_heuristic_loads_the_solver_at_start_deal_not_in_its_first_decision():
    """The solver's first use costs about 0.7 s (numba's cache, the table): ``heuristic`` pays it in ``start_deal``,
    outside a match's clock. A fresh process, so no earlier test has loaded it."""
    script = (
        "from sixtysix_env import Rules\n"
        "from agents import solver\n"
        "from agents.rule_based import HeuristicAgent\n"
        "assert solver._CORE_TABLE is None\n"
        "HeuristicAgent(use_solver=False).start_deal(0, Rules())\n"
        "assert solver._CORE_TABLE is None\n"
        "HeuristicAgent().start_deal(0, Rules())\n"
        "assert solver._CORE_TABLE is not None\n"
    )
    from play_helpers import assert_runs_in_a_fresh_process

    assert_runs_in_a_fresh_process(script)


def test_core_ismcts_keeps_its_time_budget():
    """Slices of iterations check the clock: a 0.05 s budget is kept within a few milliseconds."""
    agent = IsmctsAgent(seed=2, seconds=0.05, leaf="solver")
    game = Game.deal(Rules(), seed=8)
    agent.act(InformationSet(game, game.to_move))  # loads the kernels
    durations = []
    for seed in range(5):
        game = Game.deal(Rules(), seed=100 + seed)
        start = time.perf_counter()
        agent.act(InformationSet(game, game.to_move))
        durations.append(time.perf_counter() - start)
    assert agent.last_iterations > 0
    assert sorted(durations)[2] < 0.05 + 0.03  # median: a generous margin on a shared machine


def test_core_ismcts_heuristic_leaves_are_the_heuristic_players_solved_values():
    """R7, R8: once the talon is exhausted every card is known and a ``heuristic`` leaf solves the position, so
    each root child expanded once carries the exact value of its action (game points / 3); the search is
    reproducible from its seed."""
    from sixtysix_env.core.solver import solve_actions

    rng = random.Random(3)
    game = Game.deal(Rules(), seed=41, dealer=0)
    while not (game.talon_size == 0 and game.closed_by is None and len(game.legal_actions()) > 2):
        if game.is_over or game.closed_by is not None:
            game = Game.deal(Rules(), seed=rng.randrange(10**6), dealer=0)
            continue
        legal = [action for action in game.legal_actions() if action != CLOSE]
        game.apply(rng.choice(legal))
    infoset = InformationSet(game, game.to_move)
    legal = infoset.legal_actions
    agent = IsmctsAgent(seed=5, iterations=len(legal), seconds=None, leaf="heuristic")
    children = agent.search(infoset)
    assert children == IsmctsAgent(seed=5, iterations=len(legal), seconds=None, leaf="heuristic").search(infoset)
    exact = solve_actions(state_from_game(game))
    assert set(children) == set(exact) == set(legal)
    for action, (visits, mean) in children.items():
        assert visits == 1 and mean == pytest.approx(exact[action] / 3)


def _children(tree, node):
    """(action, node) of a node's children in the core's flat tree."""
    child = int(tree.first_child[node])
    while child >= 0:
        yield int(tree.action[child]), child
        child = int(tree.next_sibling[child])


def test_core_ismcts_opponent_model_follows_only_the_heuristics_replies():
    """``opponent=heuristic``: inside the tree the opponent plays what the ``heuristic`` player would from his view.
    Once the talon is exhausted (R7, R8) every card is known, so in every world he has the one reply the heuristic
    solves, and each of his nodes has exactly that child; with ``opponent=search`` his nodes branch over his legal
    replies (R6 follow rules permitting)."""
    from sixtysix_env.core.heuristic import heuristic_action
    from sixtysix_env.game import FOLLOW

    from agents.rule_based import HeuristicAgent
    from agents.solver import core_table

    rng = random.Random(5)
    game = Game.deal(Rules(), seed=43, dealer=0)
    while not (game.talon_size == 0 and game.closed_by is None and game.stage == LEAD
               and len(game.legal_actions()) >= 3):
        if game.is_over or game.closed_by is not None:
            game = Game.deal(Rules(), seed=rng.randrange(10**6), dealer=0)
            continue
        game.apply(rng.choice([action for action in game.legal_actions() if action != CLOSE]))
    infoset = InformationSet(game, game.to_move)
    params, table = HeuristicAgent().core_params(), core_table()
    branching = 0
    for opponent in ("heuristic", "search"):
        agent = IsmctsAgent(seed=7, iterations=400, seconds=None, leaf="heuristic", phase2="search",
                            opponent=opponent)
        agent.search(infoset)
        for action, node in _children(agent._tree, 0):
            after = game.clone()
            after.apply(action)
            if after.is_over or after.stage != FOLLOW:
                continue
            replies = dict(_children(agent._tree, node))
            if opponent == "heuristic":
                expected = heuristic_action(state_from_game(after), params, table.entries, table.nodes)
                assert list(replies) == [expected], (action, replies)
            else:
                assert set(replies) <= set(after.legal_actions())
                branching += len(replies) > 1
    assert branching > 0  # the position does test something: unmodelled, some node of his branches


def test_core_ismcts_starts_iterations_from_the_worlds_it_is_given():
    """With worlds given (``inference=heuristic`` passes the replay's), iteration ``i`` starts from world
    ``i % world_count`` instead of a uniform determinization: one true world and the deterministic playout policy make
    every root child's value that world's playout after the action."""
    from sixtysix_env.core.engine import apply
    from sixtysix_env.core.ismcts import LEAF_NAMES, ismcts_iterations
    from sixtysix_env.core.policy import policy_playout_value
    from sixtysix_env.core.search import Tree

    from agents.rollout import rollout_player_params
    from agents.solver import core_table

    game = Game.deal(Rules(), seed=61, dealer=1)
    game.apply(game.legal_actions()[0])
    infoset = InformationSet(game, game.to_move)
    template, allowed, unseen, needed = information_template(infoset)
    truth = state_from_game(game)
    legal = infoset.legal_actions
    table, tree = core_table(), Tree(256)
    seed_kernels(3)
    ismcts_iterations(len(legal), template, game.to_move, allowed, unseen, needed, 0.7, LEAF_NAMES["policy"], WEIGHTS,
                      table.entries, table.nodes, tree.action, tree.first_child, tree.next_sibling, tree.visits,
                      tree.available, tree.total, tree.size, rollout_player_params(), table.claim_worlds(len(legal)),
                      0, rollout_player_params(), truth.reshape(1, -1), 1, 1, False, tree.square,
                      sum(1 << action for action in legal), np.zeros(NUM_ACTIONS), 0.0)
    children = tree.root_children()
    assert set(children) == set(legal)
    for action, (visits, mean) in children.items():
        world = truth.copy()
        apply(world, action)
        assert visits == 1 and mean == pytest.approx(policy_playout_value(world, game.to_move, WEIGHTS) / 3)


def test_core_ismcts_grows_a_node_only_after_expand_after_visits():
    """``expand_after``: a node below the root grows children only once visited that often, so a large value keeps
    the tree to the root's children (a rollout search over them) and a moderate one keeps every parent ripe."""
    game = Game.deal(Rules(), seed=62, dealer=0)
    infoset = InformationSet(game, game.to_move)
    flat = IsmctsAgent(seed=3, iterations=300, seconds=None, expand_after=10**9)
    flat.search(infoset)
    assert int(flat._tree.size[0]) == 1 + len(infoset.legal_actions)
    for expand_after, draws in ((1, "fused"), (8, "fused"), (8, "observed")):
        agent = IsmctsAgent(seed=3, iterations=300, seconds=None, expand_after=expand_after, draws=draws)
        agent.search(infoset)
        tree = agent._tree
        parents = [node for node in range(1, int(tree.size[0])) if tree.first_child[node] >= 0]
        assert parents, "the tree grew below the root"
        for node in parents:  # nodes keyed by a drawn card (draws=observed) are grown under the same rule
            assert tree.visits[node] >= expand_after + len(list(_children(tree, node)))


def test_python_ismcts_honours_expand_after_too():
    """Rules the core does not implement (manual declaring, R13) run the Python tree: with a huge ``expand_after``
    it also stays at the root's children, and with 1 it grows below them."""
    from agents.ismcts import _Node

    rules = Rules(auto_declare=False)
    game = Game.deal(rules, seed=63, dealer=0)
    infoset = InformationSet(game, game.to_move)
    for expand_after, grows in ((10**9, False), (1, True)):
        agent = IsmctsAgent(seed=4, iterations=60, seconds=None, leaf="policy", expand_after=expand_after)
        root = _Node()
        for _ in range(60):
            agent._iterate(root, infoset.determinize(agent.rng), game.to_move)
        assert set(root.children) <= set(infoset.legal_actions) and root.children
        assert any(child.children for child in root.children.values()) == grows


def _follow_position(rules: Rules, seed: int) -> InformationSet:
    """The follower's view after the leader's first plain lead: his follow completes a trick, and both draw (R7)."""
    game = Game.deal(rules, seed=seed, dealer=0)
    game.apply(game.legal_actions()[0])  # the lowest action id: a plain card
    return InformationSet(game, game.to_move)


def test_core_ismcts_observed_draws_branch_on_the_card_the_observer_draws():
    """R7: the observer sees the card he draws, so with ``draws=observed`` each of his follows (which complete the
    trick, after which both draw) leads on to one child per card he drew, keyed ``DRAWN_KEY`` + card: only cards
    unseen by him, several of them, each holding the visits that passed through it, and below them actions again.
    ``draws=fused`` has no such nodes."""
    from sixtysix_env.core.ismcts import DRAWN_KEY

    infoset = _follow_position(Rules(), 64)
    for draws in ("fused", "observed"):
        agent = IsmctsAgent(seed=3, iterations=400, seconds=None, leaf="policy", draws=draws)
        agent.search(infoset)
        tree = agent._tree
        keys = tree.action[:int(tree.size[0])]
        if draws == "fused":
            assert (keys < DRAWN_KEY).all()
            continue
        branching = 0
        for action, node in _children(tree, 0):
            drawn = dict(_children(tree, node))
            assert action in infoset.legal_actions
            assert all(key >= DRAWN_KEY and infoset.unseen >> (key - DRAWN_KEY) & 1 for key in drawn), drawn
            # Every visit but the one that created the follow went on to the card drawn in its world.
            assert sum(int(tree.visits[child]) for child in drawn.values()) == int(tree.visits[node]) - 1
            branching += len(drawn) > 1
            for child in drawn.values():
                assert all(key < DRAWN_KEY for key, _ in _children(tree, child))
        assert branching > 0


def test_python_ismcts_observed_draws_branch_too():
    """Rules the core does not implement (manual declaring, R13) run the Python tree, which branches on the
    observer's draws the same way (R7)."""
    from sixtysix_env.core.ismcts import DRAWN_KEY

    from agents.ismcts import _Node

    infoset = _follow_position(Rules(auto_declare=False), 64)
    for draws in ("fused", "observed"):
        agent = IsmctsAgent(seed=4, iterations=80, seconds=None, leaf="policy", draws=draws)
        root = _Node()
        for _ in range(80):
            agent._iterate(root, infoset.determinize(agent.rng), infoset.player)
        assert set(root.children) <= set(infoset.legal_actions)
        below = [key for child in root.children.values() for key in child.children]
        assert below
        if draws == "fused":
            assert all(key < DRAWN_KEY for key in below)
        else:
            assert all(key >= DRAWN_KEY and infoset.unseen >> (key - DRAWN_KEY) & 1 for key in below)
            assert len(set(below)) > 1


def test_surviving_root_actions_drop_only_clearly_worse_actions_with_enough_visits():
    """Welch's test between the leader and each other root action: dropped when both have ``PRUNE_AFTER`` visits
    and the gap exceeds ``z`` standard errors of the difference; unripe and close actions stay."""
    from agents.ismcts import surviving_root_actions
    from agents.pimc import PRUNE_AFTER

    def statistics(visits, mean, spread):  # rewards mean +- spread, half each: variance spread**2
        return visits, mean, visits * (mean * mean + spread * spread)

    table = {1: statistics(400, 0.5, 0.1), 2: statistics(400, 0.0, 0.1), 3: statistics(400, 0.49, 0.1),
             4: statistics(PRUNE_AFTER - 1, -1.0, 0.0), 5: statistics(10, 0.3, 0.5)}
    assert surviving_root_actions(table, [1, 2, 3, 4, 5], 2.5) == [1, 3, 4, 5]
    # 0.5 - 0.3 = 0.2 against a standard error of about 0.17 (mostly the 10 visits of spread 0.5): dropped at z 1.
    assert surviving_root_actions(table, [1, 5], 1.0) == [1]
    assert surviving_root_actions({1: statistics(3, 0.5, 0.1)}, [1, 2], 2.5) == [1, 2]  # nothing ripe to compare
    # Exactly PRUNE_AFTER visits are enough: a clearly worse action with that many is dropped.
    table[6] = statistics(PRUNE_AFTER, -1.0, 0.1)
    assert surviving_root_actions(table, [1, 6], 2.5) == [1]


@pytest.mark.parametrize("rules", [Rules(), Rules(auto_declare=False)], ids=["core", "python"])
def test_ismcts_prune_drops_root_actions_and_plays_a_survivor(rules):
    """``prune``: clearly worse root actions leave the search (on the core and in the Python tree): over a few
    decisions some are dropped, the action played is always a survivor, and the search reports survivors only."""
    pruned = 0
    for seed in range(6):
        game = Game.deal(rules, seed=500 + seed, dealer=seed & 1)
        infoset = InformationSet(game, game.to_move)
        iterations = 600 if core_implements(rules) else 120
        agent = IsmctsAgent(seed=seed, iterations=iterations, seconds=None, leaf="policy", prune=1.0)
        children = agent.search(infoset)
        assert set(children) == set(agent.last_active) <= set(infoset.legal_actions)
        pruned += len(agent.last_active) < len(infoset.legal_actions)
        assert agent.act(infoset) in agent.last_active
    assert pruned > 0


@pytest.mark.parametrize("options, named", [
    ({"leaf": "oracle"}, "leaf"), ({"tree_nodes": 1}, "tree_nodes"), ({"opponent": "clairvoyant"}, "opponent"),
    ({"inference": "oracle"}, "inference"), ({"lead_floor": 0}, "lead_floor"), ({"expand_after": 0}, "expand_after"),
    ({"draws": "peeked"}, "draws"), ({"prune": 0}, "prune"), ({"prior_weight": -1}, "prior_weight"),
    ({"prior_weight": True}, "prior_weight"),
    ({"prior": "models/ppo_standard.zip"}, "ismcts's prior: .*ppo_standard.zip' was not fitted with fit.target: q"),
])
def test_bad_ismcts_parameters_are_refused_by_name(options, named):
    with pytest.raises(ValueError, match=named):
        IsmctsAgent(**options)


def test_core_ismcts_root_prior_steers_the_root_by_its_weight():
    """The kernel's ``root_prior``: with exploration 0 and a prior that favours one root action by far, every
    iteration after the root's expansion goes to that action; with weight 0 the same prior changes nothing."""
    from sixtysix_env.core.ismcts import LEAF_NAMES, ismcts_iterations
    from sixtysix_env.core.search import Tree

    from agents.rollout import rollout_player_params
    from agents.solver import core_table

    game = Game.deal(Rules(), seed=64, dealer=0)
    infoset = InformationSet(game, game.to_move)
    template, allowed, unseen, needed = information_template(infoset)
    legal = infoset.legal_actions
    favoured = legal[-1]
    prior = np.zeros(NUM_ACTIONS)
    prior[favoured] = 1.0  # a win of 3 game points, in rewards
    visits = {}
    for weight in (1e6, 0.0):
        table, tree = core_table(), Tree(4096)
        seed_kernels(5)
        count = len(legal) + 50
        ismcts_iterations(count, template, game.to_move, allowed, unseen, needed, 0.0, LEAF_NAMES["policy"],
                          WEIGHTS, table.entries, table.nodes, tree.action, tree.first_child, tree.next_sibling,
                          tree.visits, tree.available, tree.total, tree.size, rollout_player_params(),
                          table.claim_worlds(count), 0, rollout_player_params(), template.reshape(1, -1), 0, 1,
                          False, tree.square, sum(1 << action for action in legal), prior, weight)
        visits[weight] = {action: visits for action, (visits, _mean) in tree.root_children().items()}
    assert visits[1e6] == {action: 51 if action == favoured else 1 for action in legal}
    assert visits[0.0] != visits[1e6] and sum(visits[0.0].values()) == len(legal) + 50


@pytest.mark.parametrize("where", ["core", "python"])
def test_ismcts_prior_is_plain_at_weight_zero_and_the_network_at_a_huge_weight(where, monkeypatch):
    """``ismcts:prior=NETWORK``: a weight of no visits leaves the search as it was (the same root statistics and
    choice); an overwhelming one plays the network's best action (R7 phase-1 positions, on the core and in the
    Python tree of the rules the core does not implement); some choices differ."""
    from agents.ppo import QValueNetwork

    if where == "python":
        import sixtysix_env.core

        monkeypatch.setattr(sixtysix_env.core, "core_implements", lambda rules: False)
    model = "models/ppo_true_world_standard.zip"
    network = QValueNetwork(model)
    iterations = 300 if where == "core" else 40
    differs = 0
    for seed in range(4):
        game = Game.deal(Rules(), seed=320 + seed, dealer=seed % 2)
        while not game.is_over and game.talon_size >= 8:
            infoset = InformationSet(game, game.current_player)
            if len(infoset.legal_actions) > 1:
                plain, unweighted, follows = (
                    IsmctsAgent(seed=9, iterations=iterations, seconds=None, leaf="policy", prior=prior,
                                prior_weight=weight)
                    for prior, weight in ((None, 128.0), (model, 0), (model, 1e9)))
                searched = plain.act(infoset)
                assert unweighted.act(infoset) == searched
                assert unweighted.search(infoset) == plain.search(infoset)
                values = network.values(infoset)
                choice = follows.act(infoset)
                assert values[choice] == max(values.values())
                differs += choice != searched
            game.apply(game.legal_actions()[0])
    assert differs


def test_ismcts_prior_is_centred_on_the_roots_mean_before_it_shrinks():
    """The network's values are centred over the legal actions, the search's means are not: the prior is moved to
    the mean of the root's means, then each action's mean is shrunk toward it as ``prior_weight`` visits."""
    agent = IsmctsAgent(prior_weight=10)
    agent._root_prior = {1: 0.1, 2: -0.1}
    shrunk = agent.shrunk_means({1: (10, 0.6), 2: (30, 0.2)})
    # centre 0.4: prior 0.5 and 0.3; (10 * 0.6 + 10 * 0.5) / 20 and (30 * 0.2 + 10 * 0.3) / 40
    assert shrunk == pytest.approx({1: 0.55, 2: 0.225})
    agent._root_prior = {}
    assert agent.shrunk_means({1: (10, 0.6), 2: (30, 0.2)}) == {1: 0.6, 2: 0.2}


def test_ismcts_prior_is_centred_on_the_actions_still_searched_in_the_kernel_as_in_the_choice(monkeypatch):
    """With ``prune`` the choice shrinks only the root actions still searched, toward the prior centred on their
    means; the prior the kernel is given must be centred on the same actions, or the two pull toward different
    values (session 60 found the kernel's centred on every root child, the pruned ones too)."""
    import sixtysix_env.core.ismcts as core_ismcts

    calls = []
    kernel = core_ismcts.ismcts_iterations

    def recording(*arguments):
        agent = searching[0]
        children = agent._tree.root_children()
        calls.append((list(agent.last_active), children, arguments[-2].copy()))
        return kernel(*arguments)

    monkeypatch.setattr(core_ismcts, "ismcts_iterations", recording)
    pruned = 0
    for seed in range(6):
        game = Game.deal(Rules(), seed=700 + seed)
        infoset = InformationSet(game, game.to_move)
        if len(infoset.legal_actions) < 3:
            continue
        agent = IsmctsAgent(seed=1, iterations=3000, seconds=None, prior="suit_iterated", prior_weight=64, prune=1.0)
        searching = [agent]
        calls.clear()
        agent.act(infoset)
        for active, children, prior in calls:
            searched = {action: value for action, value in children.items() if action in active and value[0]}
            if not searched or len(active) == len(infoset.legal_actions):
                continue
            pruned += 1
            centre = float(np.mean([mean for _visits, mean in searched.values()]))
            for action in active:
                assert prior[action] == pytest.approx(agent._root_prior[action] + centre)
    assert pruned  # the case the test is about: slices searched after pruning dropped a root action


CORRUPT_AND_RUN = """
import glob, os, sys
cache = os.environ["NUMBA_CACHE_DIR"]
files = glob.glob(os.path.join(cache, "**", "*.nb*"), recursive=True)
assert files, "the first run wrote no cache files"
for index, path in enumerate(files):
    with open(path, "wb") as handle:
        handle.write(b"garbage" if index % 2 else os.urandom(64))
from sixtysix_env import Rules
from sixtysix_env.core import engine, new_state
decisions, _ = engine.random_playouts(20, 1, int(new_state(Rules(), seed=1)[37]))
print(decisions)
"""


@pytest.mark.slow
def test_a_corrupt_jit_cache_is_rebuilt_not_a_crash(tmp_path):
    """Every cache file overwritten with garbage: the kernels compile again and run (sixtysix_env/core/_jit.py)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    warm = "from sixtysix_env import Rules\nfrom sixtysix_env.core import engine, new_state\n" \
           "print(engine.random_playouts(20, 1, int(new_state(Rules(), seed=1)[37]))[0])"
    first = subprocess.run([sys.executable, "-c", warm], env=env, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", CORRUPT_AND_RUN], env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == first.stdout.split()


USE_EVERY_KERNEL = """
from numba.core import event
compiled = []


class Recorder(event.Listener):
    def on_start(self, record):
        dispatcher = record.data.get("dispatcher")
        compiled.append(dispatcher.py_func.__qualname__ if dispatcher is not None else str(record.data))

    def on_end(self, record):
        pass


event.register("numba:compile", Recorder())
import sixtysix_env
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.core import apply_action, legal_actions, new_state, result_of, state_from_game
from sixtysix_env.core.solver import solve_actions, solve_value
from agents import make_agent

state = new_state(Rules(), seed=3)
apply_action(state, legal_actions(state)[0])
result_of(state)
game = Game.deal(Rules(), seed=2)
game.apply(33)
solve_actions(state_from_game(game))
solve_value(state_from_game(game))
game = Game.deal(Rules(), seed=2)
for spec in ("ismcts:seconds=0.02", "ismcts:leaf=policy,seconds=0.02", "ismcts:leaf=random,seconds=0.02",
             "pimc:seconds=0.02", "expert:seconds=0.02", "heuristic"):
    make_agent(spec, seed=1).act(InformationSet(game, game.to_move))
played = Game.deal(Rules(), seed=2)
for _ in range(2):
    played.apply(played.legal_actions()[0])
for spec in ("rollout:seconds=0.02", "rollout:seconds=0.02,inference=heuristic", "rollout:seconds=0.02,continuation=suit_two",
             "pimc:seconds=0.02,inference=heuristic,inference_in_prior=true"):
    make_agent(spec, seed=1).act(InformationSet(played, played.to_move))
for options in ({"self_play": True}, {}):
    environment = sixtysix_env.vector_env(4, **options)
    environment.reset(seed=1)
    environment.step(environment.action_masks().argmax(axis=1))
aec = sixtysix_env.env()
aec.reset(seed=0)
aec.last()
print(compiled)
"""


@pytest.mark.slow
def test_the_warm_up_compiles_every_kernel_python_calls(tmp_path):
    """After ``python -m sixtysix_env.core`` the agents, solvers, environments and the state boundary only load
    kernels from the cache: none is compiled on first use (docs/core.md, "JIT compilation and its cache")."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-m", "sixtysix_env.core"], env=env, capture_output=True, text=True, check=True)
    used = subprocess.run([sys.executable, "-c", USE_EVERY_KERNEL], env=env, capture_output=True, text=True)
    assert used.returncode == 0, used.stderr
    assert used.stdout.strip().splitlines()[-1] == "[]"


def test_unwritable_cache_locations_fall_back_to_a_temporary_directory(monkeypatch):
    """A read-only install (package and home not writable): numba is pointed at a temporary cache directory."""
    import tempfile

    from numba.core import config

    from sixtysix_env.core import _jit

    def refuse(*args, **kwargs):
        raise OSError("read-only file system")

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    monkeypatch.setattr(config, "CACHE_DIR", config.CACHE_DIR)  # restored after the test
    _jit.ensure_cache_dir()
    # Every fixed place refused writing: a fresh directory of this process's own, never a shared name.
    assert os.path.dirname(config.CACHE_DIR) == tempfile.gettempdir() and os.path.isdir(config.CACHE_DIR)
    assert os.path.basename(config.CACHE_DIR).startswith("sixtysix-numba-cache-")
    assert config.CACHE_DIR != os.path.join(tempfile.gettempdir(), f"sixtysix-numba-cache-{os.getuid()}")
    os.rmdir(config.CACHE_DIR)


def test_cache_files_compiled_from_other_sources_are_dropped(tmp_path, monkeypatch):
    """numba checks a cached kernel against its own file only; a change in any core source drops them all."""
    from sixtysix_env.core import _jit

    monkeypatch.setattr(_jit, "_cache_directories", lambda: [str(tmp_path)])
    stale = tmp_path / "solver._solve_value-300.py311.nbi"
    stale.write_bytes(b"index of a kernel compiled against an older engine.py")
    (tmp_path / "sources.sha256").write_text("0" * 64)
    _jit.drop_stale_cache()
    assert not stale.exists()
    assert (tmp_path / "sources.sha256").read_text() == _jit._sources_digest()
    fresh = tmp_path / "solver._solve_value-300.py311.nbi"
    fresh.write_bytes(b"index compiled from these sources")
    _jit.drop_stale_cache()
    assert fresh.exists()


def test_a_first_run_stamps_the_cache_folder_before_numba_writes_there(tmp_path, monkeypatch):
    """With a CACHE_DIR (a read-only install, NUMBA_CACHE_DIR), numba makes its folder at the first compile: the
    stamp, looked for only in folders that existed at import, was missing after the first run, and the second run
    dropped the first run's kernels as stale (both runs compiled cold, a sweep found)."""
    from numba.core import config

    from sixtysix_env.core import _jit

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))
    _jit.drop_stale_cache()
    own = _jit._cache_directories()[-1]
    assert os.path.dirname(own) == str(tmp_path) and os.path.basename(own).startswith("core_")
    with open(os.path.join(own, "sources.sha256"), encoding="ascii") as handle:
        assert handle.read() == _jit._sources_digest()
    compiled = os.path.join(own, "engine.legal_mask-216.py311.nbi")  # what the first run's compile writes
    with open(compiled, "wb") as handle:
        handle.write(b"index")
    _jit.drop_stale_cache()  # the second run
    assert os.path.exists(compiled)


def test_the_cache_stamp_covers_the_package_modules_whose_constants_the_kernels_freeze(tmp_path):
    """The kernels read constants of observation.py, game.py, cards.py, ... as compile-time values: an edit there
    changes the stamp (and so drops the cache) as one of the core's own files does; a module the core does not
    import (the vector env, the three-player encoder) leaves it."""
    import shutil

    from sixtysix_env.core import _jit

    source = Path(_jit.__file__).resolve().parent.parent
    copy = tmp_path / "sixtysix_env"
    (copy / "core").mkdir(parents=True)
    for path in source.glob("*.py"):
        shutil.copy(path, copy / path.name)
    for path in (source / "core").glob("*.py"):
        shutil.copy(path, copy / "core" / path.name)
    stamp = _jit._sources_digest(str(copy / "core"))
    assert stamp == _jit._sources_digest()  # the same files give the same stamp wherever they lie
    # observation.py imports the three-player encoder inside a function only: no kernel reads it
    for name, changes_it in (("observation.py", True), ("cards.py", True), ("core/engine.py", True),
                             ("vector.py", False), ("three_observation.py", False)):
        path = copy / name
        original = path.read_text()
        path.write_text(original + "\n# edited\n")
        assert (_jit._sources_digest(str(copy / "core")) != stamp) is changes_it, name
        path.write_text(original)


def test_pimc_with_a_network_prior_keeps_the_networks_choice_unless_clearly_worse():
    """prior=network (expert iteration): in phase 1 (R7) the network's choice is the prior PIMC overrides."""
    from agents.pimc import PimcAgent
    from agents.ppo import DEFAULT_MODEL, PpoAgent

    with pytest.raises(ValueError, match="prior=network needs prior_model"):
        PimcAgent(prior="network")
    with pytest.raises(ValueError, match="prior_model needs prior=network"):
        PimcAgent(prior_model=str(DEFAULT_MODEL))
    rules = Rules.preset("standard")
    game = Game.deal(rules, seed=11, dealer=0)
    infoset = InformationSet(game, game.current_player)
    network = PpoAgent(phase2="policy")
    keeps = PimcAgent(seed=1, samples=40, seconds=None, prior="network", prior_model=str(DEFAULT_MODEL),
                      override_margin=6)  # no action can beat the prior by 6 game points
    assert keeps.act(infoset) == network.act(infoset) == keeps.last_prior


def test_rollout_search_shrunk_toward_a_q_network_follows_it_as_its_weight_grows():
    """rollout:prior=PATH: with a weight of no worlds the search is unchanged; with an overwhelming one it plays the
    q network's best action wherever it searches (R7 phase-1 positions here); a policy network is refused by name."""
    from agents import make_agent
    from agents.ppo import QValueNetwork

    model = "models/ppo_true_world_standard.zip"
    base = "expert_v3:samples=24,seconds=none,prune=none"  # no prior of its own (expert has suit_iterated)
    network = QValueNetwork(model)
    differs = 0
    for seed in range(6):
        game = Game.deal(Rules.preset("standard"), seed=300 + seed, dealer=seed % 2)
        while not game.is_over and game.talon_size >= 8:
            infoset = InformationSet(game, game.current_player)
            if len(infoset.legal_actions) > 1:
                plain, unweighted, follows = (make_agent(spec, seed=7) for spec in (
                    base, f"{base},prior={model},prior_weight=0", f"{base},prior={model},prior_weight=1e9"))
                searched = plain.act(infoset)
                assert unweighted.act(infoset) == searched
                values = network.values(infoset)
                assert abs(sum(values.values())) < 1e-6  # centred over the legal actions, in game points
                choice = follows.act(infoset)
                assert values[choice] == max(values.values())
                differs += choice != searched
            game.apply(game.legal_actions()[0])
    assert differs  # the prior did change some decisions
    # In a Bummerl (R17) the prior's game points are scaled to the chance of winning it: still its best action.
    game = Game.deal(Rules.preset("standard"), seed=300, dealer=0)
    infoset = InformationSet(game, game.current_player, (4, 5))
    values = network.values(infoset)
    bummerl = make_agent(f"{base},objective=bummerl,prior={model},prior_weight=1e9", seed=7)
    assert values[bummerl.act(infoset)] == max(values.values())
    with pytest.raises(ValueError, match="rollout's prior: .*ppo_standard.zip' was not fitted with fit.target: q"):
        make_agent("expert:prior=models/ppo_standard.zip")
    with pytest.raises(ValueError, match="prior_weight must be a non-negative number of worlds"):
        make_agent(f"expert:prior={model},prior_weight=-1")


def _decisions_half_closing(first_seed: int, deals: int = 8):
    """``(game, infoset)`` at every decision with a choice of ``deals`` deals played by their lowest legal action up
    to the talon's exhaustion, half of them (the even ones) closing the talon when they first may (R10)."""
    for seed in range(deals):
        game = Game.deal(Rules.preset("standard"), seed=first_seed + seed, dealer=seed % 2)
        closes = seed % 2 == 0
        while not game.is_over and game.talon_size > 0:
            if closes and CLOSE in game.legal_actions():
                game.apply(CLOSE)
            infoset = InformationSet(game, game.current_player)
            if len(infoset.legal_actions) > 1:
                yield game, infoset
            game.apply(game.legal_actions()[0])


def test_rollout_prior_counts_only_from_the_talon_size_it_names():
    """rollout:prior_talon=N: with an overwhelming weight the search plays the q network's best action at decisions
    with an open talon (R4, R7) of at least N cards, and exactly the search without the prior (same seed, same
    worlds) at smaller talons and after a closing (R10, counted as talon 0); bad values are refused by name."""
    from agents import make_agent
    from agents.ppo import QValueNetwork

    model = "models/ppo_true_world_standard.zip"
    base = "expert_v3:samples=24,seconds=none,prune=none"
    network = QValueNetwork(model)
    windowed_spec = f"{base},prior={model},prior_weight=1e9,prior_talon=8"
    windowed, plain = make_agent(windowed_spec), make_agent(base)
    seen = {"prior": 0, "plain": 0, "closed": 0}
    for game, infoset in _decisions_half_closing(first_seed=320):
        windowed.seed(7), plain.seed(7)
        choice = windowed.act(infoset)
        if game.closed_by is None and game.talon_size >= 8:
            values = network.values(infoset)
            assert values[choice] == max(values.values())
            seen["prior"] += 1
        else:
            assert choice == plain.act(infoset)
            assert windowed.last_values == plain.last_values
            seen["closed" if game.closed_by is not None else "plain"] += 1
    assert all(seen.values()), seen
    for bad in (-1, 13, 2.5, True):
        with pytest.raises(ValueError, match="prior_talon must be a talon size in 0..12"):
            make_agent(f"expert:prior_talon={bad}")


def test_prune_test_with_a_prior_asks_it_of_the_shrunk_values():
    """_surviving_actions: without a prior (or at weight 0) the paired test of the rollouts; with a prior counted as
    worlds, of the shrunk means with the standard error of the worlds and the prior together. By hand, 8 worlds at
    2.5 standard errors: b below a by 1 in half the worlds (mean 0.5, variance 2/7) is dropped by the rollouts and
    kept by a prior that favours b by 0.5 at weight 8 (shrunk gap 0); c below a by 1 in a quarter of them (mean
    0.25, variance 1.5/7) survives the rollouts and is dropped when a prior favours a by 1 (gap 0.625)."""
    from agents.pimc import _surviving_actions

    scores = {0: [1.0] * 8, 1: [0.0, 1.0] * 4, 2: [0.0, 1.0, 1.0, 1.0] * 2}
    assert _surviving_actions([0, 1, 2], scores, 2.5) == [0, 2]
    # A flat prior says the actions are equal: it halves b's gap (0.25) at weight 8, and b stays.
    assert _surviving_actions([0, 1, 2], scores, 2.5, {0: 5.0, 1: 5.0, 2: 5.0}, 8.0) == [0, 1, 2]
    assert _surviving_actions([0, 1, 2], scores, 2.5, {0: 0.0, 1: 0.5, 2: 0.0}, 0.0) == [0, 2]
    assert _surviving_actions([0, 1], scores, 2.5, {0: 0.0, 1: 0.5}, 8.0) == [0, 1]
    assert _surviving_actions([0, 2], scores, 2.5, {0: 1.0, 2: 0.0}, 8.0) == [0]
    # The leader is the shrunk one: a prior that lifts c above a keeps c and tests a against it.
    assert _surviving_actions([0, 2], scores, 2.5, {0: 0.0, 2: 10.0}, 8.0) == [2]


def test_rollout_prune_on_posterior_uses_the_prior_and_nothing_else():
    """rollout:prune_on=posterior: without a prior the search is the plain one (same seed: same values, same
    choices), so a spec giving it there is refused as inert; with a prior of overwhelming weight only the network's
    best action survives the first prune, where the rollouts' test keeps more than one somewhere; a bad value is
    refused by name."""
    from agents import make_agent
    from agents.ppo import QValueNetwork
    from agents.registry import resolve_alias
    from agents.rollout import RolloutAgent

    model = "models/ppo_true_world_standard.zip"
    base = "expert_v3:samples=24,seconds=none"
    network = QValueNetwork(model)
    with pytest.raises(ValueError, match="prune_on would be ignored, since it counts only with a prior network"):
        make_agent(f"{base},prune_on=posterior")
    plain = make_agent(base)
    # From Python the constructor takes it (only specs are checked), which shows that it is inert.
    posterior_plain = RolloutAgent(**resolve_alias("expert_v3", {"samples": 24, "seconds": None,
                                                                 "prune_on": "posterior"})[1])
    heavy, heavy_posterior = (make_agent(f"{base},prior={model},prior_weight=1e9{option}")
                              for option in ("", ",prune_on=posterior"))
    searched = kept_more = 0
    for game, infoset in _decisions_half_closing(first_seed=340):
        for agent in (plain, posterior_plain, heavy, heavy_posterior):
            agent.seed(11)
        assert plain.act(infoset) == posterior_plain.act(infoset)
        assert plain.last_values == posterior_plain.last_values
        choice = heavy_posterior.act(infoset)
        heavy.act(infoset)
        if game.closed_by is None and heavy_posterior.last_values:  # searched (empty where it does not search)
            values = network.values(infoset)
            best = max(values.values())
            if sum(value == best for value in values.values()) == 1:
                assert list(heavy_posterior.last_values) == [choice]
                assert values[choice] == best
                searched += 1
                kept_more += len(heavy.last_values) > 1
    assert searched and kept_more, (searched, kept_more)
    with pytest.raises(ValueError, match="prune_on must be one of rollouts, posterior"):
        make_agent("expert:prune_on=sideways")


def test_rollout_unsearched_prior_lets_the_network_decide_where_the_search_does_not():
    """rollout:search_at=lead+follow,search_min_talon=4,unsearched=prior: after a closing (R10) and at an open talon
    (R4, R7) below 4 cards the prior network's best action (nothing searched); elsewhere exactly the search with the
    same prior (same seed, same worlds); bad values are refused by name."""
    from agents import make_agent
    from agents.ppo import QValueNetwork

    model = "models/ppo_true_world_standard.zip"
    base = f"expert_v3:samples=24,seconds=none,prune=none,prior={model}"
    network = QValueNetwork(model)
    hybrid = make_agent(f"{base},search_at=lead+follow,search_min_talon=4,unsearched=prior")
    plain = make_agent(base)
    seen = {"closed": 0, "small talon": 0, "searched": 0}
    for game, infoset in _decisions_half_closing(first_seed=420):
        hybrid.seed(7), plain.seed(7)
        choice = hybrid.act(infoset)
        if game.closed_by is not None or game.talon_size < 4:
            values = network.values(infoset)
            # the network agent's own choice: the best value, of equals the lowest id
            assert choice == min(action for action in values if values[action] == max(values.values()))
            assert hybrid.last_values == {}  # nothing searched
            seen["closed" if game.closed_by is not None else "small talon"] += 1
        else:
            assert choice == plain.act(infoset)
            assert hybrid.last_values == plain.last_values
            seen["searched"] += 1
    assert all(seen.values()), seen
    with pytest.raises(ValueError, match="unsearched must be one of heuristic, prior"):
        make_agent(f"{base},unsearched=network")
    with pytest.raises(ValueError, match="unsearched=prior plays the prior network .* with prior="):
        make_agent("expert_v3:unsearched=prior")
    for key, bad in (("search_min_talon", 13), ("search_max_talon", -1), ("search_min_talon", True)):
        with pytest.raises(ValueError, match=f"{key} must be a talon size in 0..12"):
            make_agent(f"{base},{key}={bad}")
    with pytest.raises(ValueError, match=r"search_min_talon \(8\) is above search_max_talon \(6\)"):
        make_agent(f"{base},search_min_talon=8,search_max_talon=6")


def test_r10_rollout_close_bias_moves_only_the_value_of_closing():
    """rollout:close_bias=B: at phase-1 leads where closing the talon is legal (R10), the value of closing drops by
    exactly B game points in the same worlds, every other action's value is unchanged; a bias of 6 (the most a deal
    is worth, R16) means the search never closes, -6 that it always does; bad values are refused by name."""
    from agents import make_agent
    from sixtysix_env.actions import CLOSE

    base = "expert_v3:samples=24,seconds=none,prune=none"
    checked = 0
    for infoset in itertools.islice(_closing_leads(500, 12), 4):
        plain, biased = make_agent(base, seed=7), make_agent(f"{base},close_bias=0.75", seed=7)
        plain.act(infoset)
        biased.act(infoset)
        assert set(plain.last_values) == set(biased.last_values) == set(infoset.legal_actions)
        for action, value in plain.last_values.items():
            expected = value - 0.75 if action == CLOSE else value
            assert biased.last_values[action] == pytest.approx(expected, abs=1e-9)
        assert make_agent(f"{base},close_bias=6", seed=7).act(infoset) != CLOSE
        assert make_agent(f"{base},close_bias=-6", seed=7).act(infoset) == CLOSE
        checked += 1
    assert checked == 4
    with pytest.raises(ValueError, match="close_bias must be a number of game points between -6 and 6"):
        make_agent("expert:close_bias=7")


def test_r10_rollout_close_risk_lowers_closing_by_its_spread_over_the_worlds():
    """rollout:close_risk=K: at phase-1 leads where closing is legal (R10), the closing's value in every world drops
    by K times the standard deviation of its values over the same worlds, so a closing whose worlds disagree loses
    value and one solved alike in every world keeps it; every other action's values are unchanged; bad values are
    refused by name."""
    from agents import make_agent
    from agents.rollout import _closing_at_risk
    from sixtysix_env.actions import CLOSE

    base = "expert_v3:samples=24,seconds=none,prune=none"
    spread_seen = alike_seen = 0
    for infoset in _closing_leads(600, 40):
        plain, risky = make_agent(base, seed=7), make_agent(f"{base},close_risk=0.5", seed=7)
        plain.act(infoset)
        risky.act(infoset)
        spread = float(np.std(plain.world_values[:, CLOSE]))
        assert set(plain.last_values) == set(risky.last_values) == set(infoset.legal_actions)
        for action, value in plain.last_values.items():
            shift = 0.5 * spread if action == CLOSE else 0.0
            assert risky.last_values[action] == pytest.approx(value - shift, abs=1e-9)
            assert np.allclose(risky.world_values[:, action], plain.world_values[:, action] - shift)
        spread_seen += spread > 0
        alike_seen += spread == 0
        if spread_seen == 3:
            break
    assert spread_seen == 3 and alike_seen >= 1
    table = np.zeros((2, CLOSE + 1))
    table[:, 0], table[:, CLOSE] = [1.0, 3.0], [-3.0, 1.0]  # two worlds; the closing's values disagree by 4 (std 2)
    lowered = _closing_at_risk(table, [0, CLOSE], 0.25)
    assert lowered[:, CLOSE].tolist() == [-3.5, 0.5] and lowered[:, 0].tolist() == [1.0, 3.0]
    assert table[:, CLOSE].tolist() == [-3.0, 1.0]  # the rollouts' own values are left as they were
    assert _closing_at_risk(table, [0], 0.25) is table and _closing_at_risk(table, [0, CLOSE], 0.0) is table
    for bad in ("-0.1", "4", "true"):
        with pytest.raises(ValueError, match="close_risk must be a number of standard deviations between 0 and 3"):
            make_agent(f"expert:close_risk={bad}")


def test_r10_rollout_opponent_weights_change_only_the_opponents_seat(tmp_path):
    """rollout:opponent_weights=FILE: the opponent's seat of the heuristic rollouts plays with the file's numbers and
    the searcher's seat with its own. An opponent who closes the talon (R10) whenever the rules let him (no filter, no
    minimum value or share) moves the values of the searched decisions of phase 1; a file that names the heuristic's
    own closing numbers moves nothing; a missing file, an unknown number and a continuation beside it are refused by
    name."""
    import json

    from agents import make_agent
    from sixtysix_env.core.heuristic import P_CLOSE_FILTER, P_CLOSE_MIN_VALUE, P_CLOSE_MIN_WIN

    eager = tmp_path / "eager_closer.json"
    eager.write_text(json.dumps({"weights": {"close_filter": 0.0, "close_min_value": -6.0, "close_min_win": 0.0}}))
    same = tmp_path / "same_closer.json"
    same.write_text(json.dumps({"weights": {"close_filter": 56.0, "close_min_value": 1.0, "close_min_win": 0.8}}))
    base = "expert_v3:samples=24,seconds=none,prune=none"
    modelled = make_agent(f"{base},opponent_weights={eager}", seed=7)
    assert modelled._opponent_params[P_CLOSE_MIN_VALUE] == -6.0 and modelled._opponent_params[P_CLOSE_MIN_WIN] == 0
    assert modelled._opponent_params[P_CLOSE_FILTER] == 0.0
    assert modelled._params[P_CLOSE_MIN_VALUE] == 1.0 and modelled._params[P_CLOSE_FILTER] == 56.0  # his own seat
    moved, compared = _opponent_model_moves(640, base, f"{base},opponent_weights={same}",
                                            f"{base},opponent_weights={eager}")
    assert compared >= 8 and moved >= compared // 2
    with pytest.raises(ValueError, match="rollout player weights .*missing.json"):
        make_agent(f"{base},opponent_weights={tmp_path / 'missing.json'}")
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"weights": {"close_eagerly": 1.0}}))
    with pytest.raises(ValueError, match="unknown heuristic weight.*close_eagerly"):
        make_agent(f"{base},opponent_weights={unknown}")
    with pytest.raises(ValueError, match="opponent_weights .* cannot be combined with continuation"):
        make_agent(f"rollout:continuation=suit_two,opponent_weights={eager}")


def test_r10_rollout_opponent_samples_change_only_the_opponents_seat():
    """rollout:opponent_samples=N: the opponent's seat of the heuristic rollouts samples N worlds in its lead model
    and closing check (R10), the searcher's seat keeps lead_samples / close_samples. N equal to the searcher's
    counts is the plain search, value for value; a lighter opponent moves the values of searched phase-1 decisions;
    bad values, another opponent and a continuation beside it are refused by name."""
    from agents import make_agent
    from sixtysix_env.actions import NUM_ACTIONS
    from sixtysix_env.core.heuristic import P_CLOSE_SAMPLES, P_LEAD_SAMPLES

    base = "expert_v3:samples=24,seconds=none,prune=none"  # its rollout player: 6 samples on both seats
    split = make_agent(f"{base},lead_samples=12,close_samples=12,opponent_samples=6", seed=7)
    assert split._params[P_LEAD_SAMPLES] == split._params[P_CLOSE_SAMPLES] == 12
    assert split._opponent_params[P_LEAD_SAMPLES] == split._opponent_params[P_CLOSE_SAMPLES] == 6
    others = [index for index in range(len(split._params)) if index not in (P_LEAD_SAMPLES, P_CLOSE_SAMPLES)]
    assert np.array_equal(split._params[others], split._opponent_params[others])
    moved, compared = _opponent_model_moves(660, base, f"{base},opponent_samples=6", f"{base},opponent_samples=1")
    assert compared >= 8 and moved >= compared // 2
    searcher = make_agent(base, seed=7)
    assert searcher.world_values.shape == (0, NUM_ACTIONS)  # nothing searched yet
    infoset = next(infoset for _game, infoset in _searched_positions(660, 1) if infoset.talon_size >= 6)
    searcher.act(infoset)
    assert len(searcher.last_values) > 1 and len(searcher.world_values) == 24
    for action, value in searcher.last_values.items():  # world_values: the worlds behind each value
        assert searcher.world_values[:, action].mean() == pytest.approx(value, abs=1e-12)
    for bad in ("0", "-2", "1.5", "true"):
        with pytest.raises(ValueError, match="opponent_samples must be a positive number of samples"):
            make_agent(f"{base},opponent_samples={bad}")
    with pytest.raises(ValueError, match="opponent_samples .* needs opponent=rollout, not 'heuristic'"):
        make_agent(f"{base},opponent=heuristic,opponent_samples=6")
    with pytest.raises(ValueError, match="opponent_samples .* cannot be combined with continuation"):
        make_agent("rollout:continuation=suit_two,opponent_samples=6")


def test_r10_rollout_opponent_closing_reads_the_world_on_the_opponents_seat_only():
    """rollout:opponent_closing=world: the opponent's seat of the heuristic rollouts decides to close (R10) by
    solving the rollout's world (``P_CLOSE_READS_WORLD``), the searcher's seat keeps its sampled check, and no other
    number changes. It moves the values of searched phase-1 decisions; the default (``heuristic``) is the plain
    search value for value; a bad value and a continuation beside it are refused by name."""
    from agents import make_agent
    from sixtysix_env.core.heuristic import P_CLOSE_READS_WORLD

    base = "expert_v3:samples=24,seconds=none,prune=none"
    modelled = make_agent(f"{base},opponent_closing=world", seed=7)
    assert modelled._opponent_params[P_CLOSE_READS_WORLD] == 1.0 and modelled._params[P_CLOSE_READS_WORLD] == 0.0
    others = [index for index in range(len(modelled._params)) if index != P_CLOSE_READS_WORLD]
    assert np.array_equal(modelled._params[others], modelled._opponent_params[others])
    moved, compared = _opponent_model_moves(680, base, f"{base},opponent_closing=heuristic",
                                            f"{base},opponent_closing=world")
    assert compared >= 8 and moved >= compared // 2
    for bad in ("clairvoyant", "World", "1"):
        with pytest.raises(ValueError, match="opponent_closing must be one of heuristic, world"):
            make_agent(f"{base},opponent_closing={bad}")
    with pytest.raises(ValueError, match="opponent_closing .* cannot be combined with continuation"):
        make_agent("rollout:continuation=suit_two,opponent_closing=world")


def test_r10_played_on_floor_reaches_the_replayed_worlds_of_both_searches():
    """rollout:played_on_floor / ismcts:played_on_floor: the floor of the opponent's playing on where closing (R10)
    would have won him the world is the sixth floor of the replay inference (sixtysix_env/core/inference.py), 1 (not
    modelled) by default; at a decision after he played on, the worlds drawn with it differ from those without."""
    import random

    from agents import make_agent
    from agents.inference import ReplayedWorlds

    assert make_agent("expert").floors == (0.1, 0.1, 1.0, 1.0, 1.0, 1.0)
    assert make_agent("expert:played_on_floor=0.5").floors[-1] == 0.5
    assert make_agent("ismcts:played_on_floor=0.25").floors[-1] == 0.25
    moved = compared = 0
    for infoset in _closing_leads(700, 12):
        if not infoset.history or infoset.talon_size < 4:
            continue
        worlds = []
        for floor in (1.0, 0.05):
            sampler = ReplayedWorlds(infoset, played_on_floor=floor)
            rng = random.Random(11)
            worlds.append([sampler.sample_opponent_hand(rng) for _ in range(64)])
        moved += worlds[0] != worlds[1]
        compared += 1
    assert compared >= 20 and moved >= 5, (moved, compared)


def _closing_leads(first_seed: int, deals: int):
    """The leads where closing the talon is legal (R10) of ``deals`` heuristic deals from ``first_seed``, each played
    on after it is yielded."""
    from agents import make_agent

    for index in range(deals):
        game = Game.deal(Rules.preset("standard"), seed=first_seed + index, dealer=index % 2)
        players = [make_agent("heuristic", seed=index), make_agent("heuristic", seed=index + 1)]
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            if CLOSE in infoset.legal_actions:
                yield infoset
            game.apply(players[game.current_player].act(infoset))


def _opponent_model_moves(seed: int, base: str, same: str, changed: str) -> tuple[int, int]:
    """Over the searched phase-1 positions with at least six talon cards of six heuristic deals from ``seed``: how
    many positions the ``changed`` spec values otherwise than ``base``, of how many compared; the ``same`` spec must
    give ``base``'s values at every one."""
    from agents import make_agent

    moved = compared = 0
    for _game, infoset in _searched_positions(seed, 6):
        if infoset.talon_size < 6:
            continue
        plain, alike, other = (make_agent(spec, seed=7) for spec in (base, same, changed))
        for agent in (plain, alike, other):
            agent.act(infoset)
        assert alike.last_values == plain.last_values
        moved += other.last_values != plain.last_values
        compared += 1
    return moved, compared


def _searched_positions(seed: int, deals: int):
    """Phase-1 positions with a choice (R7: talon open) of ``deals`` deals played by ``heuristic`` from ``seed``."""
    from agents import make_agent

    for index in range(deals):
        game = Game.deal(Rules.preset("standard"), seed=seed + index, dealer=index % 2)
        players = [make_agent("heuristic", seed=index), make_agent("heuristic", seed=index + 1)]
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            if not game.phase2 and len(infoset.legal_actions) > 1:
                yield game, infoset
            game.apply(players[game.current_player].act(infoset))


@pytest.mark.parametrize("endgame", ["exhausted", "phase2"])
def test_rollout_search_with_a_network_continuation_values_each_world_by_the_networks_own_play(endgame):
    """rollout:continuation=NET: in each world the search is given (R4 layouts drawn from the searcher's view by
    ``InformationSet.determinize``), every candidate action is worth the game points the searcher gets when the
    network then plays both seats, each mover from his own observation, a phase 2 after the talon's exhaustion (R8)
    solved exactly and one after a closing (R10) played, or solved with ``continuation_endgame=phase2``: exactly
    what the Python engine gives with the network's agent."""
    from agents import make_agent
    from agents.solver import ROLLOUT_TABLE_BITS, core_table
    from play_helpers import network_playout

    search = make_agent(f"rollout:continuation=suit_two,seconds=none,continuation_endgame={endgame}", seed=1)
    network_agent = make_agent("suit_two", seed=0)
    table = core_table(ROLLOUT_TABLE_BITS)
    checked = closings = 0
    for game, infoset in _searched_positions(5100, 3):
        player = infoset.player
        worlds = [infoset.determinize(random.Random(1000 * checked + k)) for k in range(2)]
        states = np.stack([state_from_game(world) for world in worlds])
        mask = sum(1 << action for action in infoset.legal_actions)
        values = np.full((len(worlds), 37), np.nan)
        search._network_roll_out(table, states, mask, player, np.zeros(2, np.float32), values)
        for world, row in zip(worlds, values):
            assert sorted(np.flatnonzero(~np.isnan(row))) == sorted(infoset.legal_actions)
            for action in infoset.legal_actions:
                expected = network_playout(world, action, network_agent, player, solve_closed=endgame == "phase2")
                assert row[action] == expected, (game.history, action)
        closings += CLOSE in infoset.legal_actions
        checked += 1
    assert checked > 10 and closings > 0


def test_rollout_search_with_a_network_continuation_reproduces_and_searches_every_action():
    """Without a clock the search with a network continuation depends on its seed alone; it values every legal
    action of a phase-1 decision (R7) over its worlds, plays one of them, and the heuristic as the opponent
    (``opponent=heuristic``: the network plays the searcher's seat only) values them differently."""
    from agents import make_agent

    spec = "rollout:continuation=suit_two,seconds=none,samples=12,prune=none"
    differ = searched = 0
    for game, infoset in _searched_positions(5200, 1):
        first, again = make_agent(spec, seed=4), make_agent(spec, seed=4)
        assert first.act(infoset) == again.act(infoset)
        assert first.last_values == again.last_values and first.last_worlds == again.last_worlds == 12
        assert sorted(first.last_values) == sorted(infoset.legal_actions)
        assert max(first.last_values, key=first.last_values.get) in infoset.legal_actions
        against_heuristic = make_agent(f"{spec},opponent=heuristic", seed=4)
        against_heuristic.act(infoset)
        differ += against_heuristic.last_values != first.last_values
        searched += 1
    assert searched > 5 and differ > 0


def test_a_continuation_or_prior_network_that_reads_the_history_planes_is_handed_them(tmp_path):
    """A suit network fitted with the history planes (what each player led) plays the rollouts from observations
    that the core extends with them, and as a prior reads them from the infoset: ``suit_two`` grown to read them at
    zero weight values every action as ``suit_two`` does (docs/training.md, "Session 33")."""
    pytest.importorskip("torch")
    from agents import make_agent
    from agents.suit import SuitNetwork, save_suit_weights, suit_header
    from train.suit_network import with_history_inputs

    original = Path(__file__).resolve().parent.parent / "models" / "suit_two_standard.npz"
    network, rules = SuitNetwork.load(original)
    grown = tmp_path / "suit_two_history.npz"
    save_suit_weights(grown, with_history_inputs(network.weights), rules, suit_header(original)["provenance"])
    assert SuitNetwork.load(grown)[0].history
    base = "rollout:seconds=none,samples=12,prune=none"
    compared = 0
    for _game, infoset in _searched_positions(5300, 1):
        for option in ("continuation", "prior"):
            values = []
            for path in (original, grown):
                search = make_agent(f"{base},{option}={path}", seed=5)
                search.act(infoset)
                values.append(search.last_values)
            assert values[0].keys() == values[1].keys()
            assert all(abs(values[0][action] - values[1][action]) < 1e-4 for action in values[0]), option
            compared += 1
    assert compared > 10


def test_the_continuation_plays_only_the_rollouts_of_decisions_from_its_talon_size_on():
    """``continuation_talon=N``: decisions with more than N talon cards (R4) are searched by the heuristic's rollouts
    exactly as without a continuation (the same values from the same seed); from N on the network plays them."""
    from agents import make_agent

    plain = "rollout:seconds=none,samples=8,prune=none"
    early = late = 0
    for game, infoset in _searched_positions(5300, 5):
        searches = [make_agent(spec, seed=2) for spec in (plain, f"{plain},continuation=suit_two,continuation_talon=6")]
        for search in searches:
            search.act(infoset)
        same = searches[0].last_values == searches[1].last_values
        if infoset.talon_size > 6:
            assert same, game.history
            early += 1
        else:
            late += not same
    assert early > 4 and late > 2


def test_the_continuation_on_the_searchers_seat_only_meets_the_heuristic_as_it_plays():
    """``continuation_seats=mover``: in the network's rollouts (talon 6 or less, R4) the network plays the searcher's
    seat and the ``heuristic`` agent's own numbers the opponent's, exactly as ``opponent=heuristic`` has them there
    (the same values from the same seed); the heuristic rollouts of earlier decisions keep the rollout player in
    both seats, exactly as without a continuation. Both seats played by the network value the late decisions
    otherwise."""
    from agents import make_agent

    plain = "rollout:seconds=none,samples=8,prune=none"
    late = f"{plain},continuation=suit_two,continuation_talon=6"
    early = checked_late = differ = 0
    for game, infoset in _searched_positions(5400, 5):
        searches = [make_agent(spec, seed=3) for spec in (plain, f"{late},continuation_seats=mover",
                                                          f"{late},opponent=heuristic", late)]
        for search in searches:
            search.act(infoset)
        if infoset.talon_size > 6:  # phase-1 positions only (R7): no closing yet
            assert searches[1].last_values == searches[0].last_values, game.history
            early += 1
        else:
            assert searches[1].last_values == searches[2].last_values, game.history
            differ += searches[1].last_values != searches[3].last_values
            checked_late += 1
    assert early > 4 and checked_late > 2 and differ > 0


def test_a_continuation_solving_from_the_talons_last_trick_values_it_as_the_heuristic_rollouts_do():
    """``continuation_endgame=last_trick``: at the talon's last trick (R7: one face-down card and the bottom card
    left) nobody plays: the rest is solved with the last face-down card known, as the heuristic rollouts of
    ``endgame=last_trick`` solve it, so a search there values every action exactly as the plain search does (the
    same worlds and values from the same seed, one slice of worlds). At larger talons the network plays the
    searcher's seat, and the values differ from the plain search's; the rollout player's numbers as the opponent
    (``continuation_opponent=rollout``) value them otherwise than the heuristic's own."""
    from agents import make_agent

    plain = "rollout:seconds=none,samples=4,prune=none,endgame=last_trick,lead_samples=6,close_samples=6"
    network = (f"{plain},continuation=suit_two,continuation_talon=6,continuation_seats=mover,"
               "continuation_endgame=last_trick")
    last = later = differ = cheaper = 0
    for game, infoset in _searched_positions(5500, 6):
        if infoset.talon_size > 6:
            continue
        searches = [make_agent(spec, seed=5) for spec in (plain, network, f"{network},continuation_opponent=rollout")]
        for search in searches:
            search.act(infoset)
        if infoset.talon_size == 2:
            assert searches[1].last_values == searches[0].last_values, game.history
            assert searches[2].last_values == searches[0].last_values, game.history
            last += 1
        else:
            differ += searches[1].last_values != searches[0].last_values
            cheaper += searches[2].last_values != searches[1].last_values
            later += 1
    assert last > 2 and later > 4 and differ > 0 and cheaper > 0


def test_a_bad_continuation_is_refused_by_name():
    """A policy network (no action values), policy switching beside it, a talon size outside 0..12 (R4) or an unknown
    seat, opponent or endgame of the continuation are refused when the agent is made; a network fitted for other
    rules when it is asked to play them (R19 Paderborn here)."""
    from agents import make_agent

    refused = {
        "continuation=models/ppo_standard.zip": "rollout's continuation: .*ppo_standard.zip' was not fitted with "
                                                "fit.target: q",
        "continuation=suit_two,switch=heuristic": "cannot be combined with continuation",
        "continuation=suit_two,continuation_talon=13": "continuation_talon must be a talon size in 0..12, got 13",
        "continuation=suit_two,continuation_seats=opponent": "continuation_seats must be one of both, mover, got "
                                                             "'opponent'",
        "continuation=suit_two,continuation_opponent=network": "continuation_opponent must be one of heuristic, "
                                                               "rollout, got 'network'",
        "continuation=suit_two,continuation_endgame=x": "continuation_endgame must be one of exhausted, phase2, "
                                                        "last_trick, got 'x'",
    }
    for options, message in refused.items():
        with pytest.raises(ValueError, match=message):
            make_agent(f"rollout:{options}")
    game = Game.deal(Rules.preset("paderborn"), seed=3)
    infoset = InformationSet(game, game.current_player)
    with pytest.raises(ValueError, match="continuation 'suit_two' was fitted for the rules 'standard', not 'paderborn'"):
        make_agent("rollout:continuation=suit_two,seconds=none,samples=4", seed=1).act(infoset)


def _leaf_case(seed: int):
    """A searched phase-1 decision (R7) of a heuristic deal, two worlds of it as core states, their legal mask and
    the expert rollout player's numbers."""
    from agents.rollout import rollout_player_params

    for game, infoset in _searched_positions(seed, 4):
        if infoset.talon_size >= 6 and CLOSE in infoset.legal_actions:
            worlds = [infoset.determinize(random.Random(seed + k)) for k in range(2)]
            states = np.ascontiguousarray(np.stack([state_from_game(world) for world in worlds]))
            mask = sum(1 << action for action in infoset.legal_actions)
            return infoset, states, mask, rollout_player_params()
    raise AssertionError("no searched decision with a closing among the positions")


def test_r7_leaf_values_beyond_the_deal_are_the_heuristic_rollouts():
    """leaf_values cut after more tricks than a deal has (R7: 12) is exactly rollout_values: every rollout ends or is
    solved first, so no leaf is valued and the game points (R16) are the heuristic rollouts' own, world by world."""
    from sixtysix_env.core.continuation import leaf_values
    from sixtysix_env.core.heuristic import rollout_values

    infoset, states, mask, params = _leaf_case(7100)
    seeds = np.array([11, 12], dtype=np.int64)
    expected, got = np.full((2, 37), np.nan), np.full((2, 37), np.nan)
    reference = Table(16)
    rollout_values(states, 2, mask, infoset.player, params, params, reference.entries, reference.nodes, seeds, 1,
                   expected)
    table = Table(16)
    leaves = leaf_values(states, 2, mask, infoset.player, params, params, table, seeds, 1, 13, np.zeros(2, np.float32),
                         lambda observations, masks, states: pytest.fail("no leaf should be valued"), False, got)
    assert leaves == 0
    np.testing.assert_array_equal(got, expected)


def test_r10_leaf_values_value_each_leaf_from_its_movers_view():
    """leaf_values cut one trick after the decision (R7): each rollout that reaches the leaf is worth the best legal
    action's value for the player to move there, negated when he is the observer's opponent (R16); the leaf comes
    after that trick, at a decision with a choice, and the valuation is given the leaf's state in its world (what a
    critic of the world reads). A closing (R10) is solved before any leaf, as the heuristic rollouts solve it."""
    from sixtysix_env.core.continuation import leaf_values
    from sixtysix_env.core.engine import apply, legal_mask
    from sixtysix_env.core.heuristic import PLAYING_ON, play_to_leaf, rollout_values
    from sixtysix_env.core.layout import TO_MOVE, TRICK_COUNT

    infoset, states, mask, params = _leaf_case(7200)
    seeds = np.array([21, 22], dtype=np.int64)
    action_values = np.arange(37, dtype=np.float64) / 100  # a stand-in network: action a is worth a / 100
    got = np.full((2, 37), np.nan)
    leaf_trick = int(states[0, TRICK_COUNT]) + 1
    leaf_states = []

    def stand_in(observations, masks, states):
        leaf_states.extend(states.copy())
        return np.where(masks, action_values, -np.inf).max(axis=1)
    leaves = leaf_values(states, 2, mask, infoset.player, params, params, Table(16), seeds, 1, leaf_trick,
                         np.zeros(2, np.float32), stand_in, False, got)
    assert leaves >= len(infoset.legal_actions) and len(leaf_states) == leaves  # all but the closing reach a leaf
    reference = Table(16)
    for world in range(2):
        for action in infoset.legal_actions:
            state = states[world].copy()
            seed_kernels(int(seeds[world]))
            apply(state, action)
            value = play_to_leaf(state, infoset.player, params, params, reference.entries, reference.nodes, 1 + world,
                                 leaf_trick)
            if action == CLOSE:
                assert value != PLAYING_ON
            if value != PLAYING_ON:
                assert got[world, action] == value
                continue
            legal = legal_mask(state)
            assert state[TRICK_COUNT] >= leaf_trick and bin(legal).count("1") > 1
            assert any(np.array_equal(state, leaf_state) for leaf_state in leaf_states)
            best = max(action_values[a] for a in range(37) if legal >> a & 1)
            sign = 1 if state[TO_MOVE] == infoset.player else -1
            assert got[world, action] == pytest.approx(sign * best)
    solved = np.full((2, 37), np.nan)
    rollout_values(states, 2, 1 << CLOSE, infoset.player, params, params, reference.entries, reference.nodes, seeds,
                   1, solved)
    np.testing.assert_array_equal(got[:, CLOSE], solved[:, CLOSE])


def test_rollout_leaf_tricks_plays_legally_repeats_and_refuses_bad_settings():
    """rollout:leaf_tricks=N plays a whole deal legally, a twin seeded alike repeats it, and its values are the
    searched actions'; without a prior network, beside a continuation, or out of 0..12 it is refused by name."""
    from agents import make_agent
    from eval.play import play_deal

    spec = "expert:seconds=none,samples=24,threads=1,leaf_tricks=1"
    outcomes = []
    for _twin in range(2):
        game = Game.deal(Rules.preset("standard"), seed=7300)
        outcome = play_deal(game, [make_agent(spec, seed=5), make_agent("heuristic", seed=6)], seeds=[5, 6])
        outcomes.append((outcome.winner, outcome.game_points, tuple(game.history)))
    assert outcomes[0] == outcomes[1]
    for bad, message in (("expert_v3:leaf_tricks=1", "leaf_tricks .* prior network"),
                         ("expert:leaf_tricks=13", "leaf_tricks must be a count of tricks in 0..12"),
                         ("expert:leaf_tricks=-1", "leaf_tricks must be a count"),
                         ("expert:leaf_tricks=1,continuation=suit_two", "leaf_tricks .* continuation")):
        with pytest.raises(ValueError, match=message):
            make_agent(bad)


def test_r16_load_critic_gives_the_ppo_models_own_state_values():
    """agents.ppo.load_critic: a model's critic in NumPy gives the game points (R16) its sb3 policy's value head
    gives, observation by observation; rollout:leaf_value with it plays, and is refused without leaf_tricks or for a
    missing model, by name."""
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    from agents import make_agent
    from agents.ppo import InfosetEncoder, load_critic

    path = Path(__file__).resolve().parents[1] / "models" / "ppo_true_world_standard.zip"
    critic, rules = load_critic(path)
    assert rules == Rules.preset("standard") and critic.output_size == 1
    encoder = InfosetEncoder(rules)
    observations = np.stack([encoder.encode(infoset) for _game, infoset in _searched_positions(7400, 2)])
    policy = MaskablePPO.load(path, device="cpu").policy
    with torch.no_grad():
        expected = policy.predict_values(torch.as_tensor(observations)).numpy()[:, 0]
    np.testing.assert_allclose(critic.logits(observations)[:, 0], expected, rtol=1e-4, atol=1e-4)
    agent = make_agent("expert:seconds=none,samples=16,threads=1,leaf_tricks=1,leaf_value=ppo_true_world", seed=3)
    game = Game.deal(rules, seed=7401)
    infoset = InformationSet(game, game.current_player)
    assert agent.act(infoset) in infoset.legal_actions
    with pytest.raises(ValueError, match="leaf_value .* set leaf_tricks"):
        make_agent("expert:leaf_value=ppo_true_world")
    with pytest.raises(ValueError, match="agent spec 'expert:leaf_tricks=1,leaf_value=missing.zip'.*missing.zip"):
        make_agent("expert:leaf_tricks=1,leaf_value=missing.zip")



FORK_AFTER_A_TWO_THREAD_SEARCH = """
import multiprocessing, sys
from agents import make_agent
from sixtysix_env import Game, InformationSet, Rules

def decide(queue=None):
    game = Game.deal(Rules(), seed=1, dealer=1)
    agent = make_agent("rollout:seconds=none,samples=24,threads=2", seed=0)
    agent.start_deal(game.current_player, game.rules)
    action = agent.act(InformationSet(game, game.current_player))
    if queue is not None:
        queue.put(action)
    return action

if __name__ == "__main__":
    in_parent = decide()
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=decide, args=(queue,))
    child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        sys.exit("the forked child is still deciding after 60 s")
    in_child = queue.get(timeout=5)
    sys.exit(0 if child.exitcode == 0 and in_child == in_parent else f"child {in_child} parent {in_parent}")
"""


def test_a_search_on_two_threads_decides_in_a_process_forked_after_one(tmp_path):
    """The helper thread pools are kept per process: a child forked after a two-thread search (``expert``'s
    default) inherited the pool without its thread and waited for ever at its first decision. Run in a fresh
    interpreter, so that nothing else of the test session is forked with it."""
    script = tmp_path / "fork_after_search.py"
    script.write_text(FORK_AFTER_A_TWO_THREAD_SEARCH)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parent.parent,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert done.returncode == 0, done.stderr[-2000:]


def test_an_unwritable_package_cache_goes_to_a_cache_dir_the_stale_check_reads(monkeypatch, tmp_path):
    """A read-only install: numba's CACHE_DIR is set to the per-user cache, else to a temporary directory of this
    user's (a shared name may be another user's and read-only), so that drop_stale_cache looks there too."""
    from numba.core import config

    from sixtysix_env.core import _jit

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(_jit.tempfile, "tempdir", str(tmp_path / "tmp"))
    package_cache = os.path.join(os.path.dirname(_jit.__file__), "__pycache__")
    refused = {package_cache}

    def writable(path):
        os.makedirs(path, exist_ok=True)
        return path not in refused

    monkeypatch.setattr(_jit, "_writable", writable)
    _jit.ensure_cache_dir()
    assert config.CACHE_DIR == str(tmp_path / "home" / ".cache" / "numba")
    # numba's own folder for these sources there (core_<sha1 of their folder>), not another install's
    from numba.core.caching import UserProvidedCacheLocator

    from sixtysix_env.core import engine

    own = UserProvidedCacheLocator(engine.legal_mask.py_func, engine.__file__).get_cache_path()  # where numba writes
    other = os.path.join(config.CACHE_DIR, "core_0123456789abcdef")
    os.makedirs(other)
    assert own in _jit._cache_directories() and other not in _jit._cache_directories()
    refused.add(config.CACHE_DIR)
    _jit.ensure_cache_dir()
    assert config.CACHE_DIR == str(tmp_path / "tmp" / f"sixtysix-numba-cache-{os.getuid()}")
    refused.add(config.CACHE_DIR)
    _jit.ensure_cache_dir()
    assert os.path.basename(config.CACHE_DIR).startswith("sixtysix-numba-cache-") and os.path.isdir(config.CACHE_DIR)
    assert config.CACHE_DIR.startswith(str(tmp_path / "tmp")) and config.CACHE_DIR not in refused
