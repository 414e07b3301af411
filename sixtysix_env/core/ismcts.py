"""Single-observer ISMCTS (Cowling, Powley & Whitehouse 2012) on the core, for ``agents.ismcts``.

:func:`ismcts_iterations` runs iterations on a tree kept in flat arrays (:class:`.search.Tree`), so a Python caller
can run it in short slices and keep to a time budget: each iteration determinizes (:func:`.search.determinize_into`),
descends by UCB1 with availability counts among the children legal in that world, expands one untried action,
evaluates the leaf by a playout and backs up the observer's game points / 3 (R16). The leaf playouts: random play,
the fast playout policy (:mod:`.policy`, to the end or with phase 2 solved), or the compiled ``heuristic``
(:mod:`.heuristic`) from both seats' views, solved exactly from the talon's last trick (R7) as the rollout search's
player is. With ``branch_draws`` the tree also branches on the card the observer draws from the talon (R7): he
sees it, so his later choices may depend on it; without it, nodes are keyed by actions alone and his later choices
are fused across his possible draws.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from .engine import apply, bit_index, copy_state, legal_mask, popcount, random_action, value_for
from .heuristic import _heuristic_action, heuristic_playout_value
from .layout import HAND0, OVER, STAGE, STATE_SIZE, TO_MOVE
from .policy import duel_value, policy_playout_value
from .search import _determinize_into

# Leaf evaluations of ISMCTS.
LEAF_RANDOM = 0  # uniformly random play to the end
LEAF_POLICY = 1  # the playout policy to the end
LEAF_SOLVER = 2  # the playout policy until phase 2, then the exact solver (agents.pimc.playout_value)
LEAF_HEURISTIC = 3  # the compiled heuristic, solved from the talon's last trick (agents.rollout's player)
LEAF_NAMES = {"random": LEAF_RANDOM, "policy": LEAF_POLICY, "solver": LEAF_SOLVER, "heuristic": LEAF_HEURISTIC}

# How the opponent's moves inside the tree are chosen.
OPPONENT_SEARCH = 0  # by UCB1 on the negated reward, as the observer's own (SO-ISMCTS)
OPPONENT_HEURISTIC = 1  # by the compiled heuristic from his view of the determinized world (an opponent model)
OPPONENT_NAMES = {"search": OPPONENT_SEARCH, "heuristic": OPPONENT_HEURISTIC}

# A node reached by the observer drawing card c (``branch_draws``) is keyed DRAWN_KEY + c, apart from the actions
# (0..36), so one flat tree holds both.
DRAWN_KEY = 64


@kernel
def _leaf_value(world, observer, leaf, weights, heuristic_params, entries, nodes, world_number):
    """Game points for ``observer`` of the playout ``leaf`` from ``world`` (modified)."""
    if leaf == LEAF_HEURISTIC:
        return heuristic_playout_value(world, observer, heuristic_params, entries, nodes, world_number)
    if leaf == LEAF_SOLVER:
        return duel_value(world, observer, weights, weights, entries, nodes)
    if leaf == LEAF_POLICY:
        return policy_playout_value(world, observer, weights)
    while world[STAGE] != OVER:
        apply(world, random_action(world))
    return value_for(world, observer)


@kernel
def _grow(node, key, action_of, first_child, next_sibling, visits, available, total, square, size):
    """A new, unvisited child of ``node`` keyed ``key`` (an action, or ``DRAWN_KEY`` + a drawn card); its index."""
    new = size[0]
    size[0] = new + 1
    action_of[new] = key
    first_child[new] = -1
    next_sibling[new] = first_child[node]
    first_child[node] = new
    visits[new] = 0
    available[new] = 1
    total[new] = 0.0
    square[new] = 0.0
    return new


@kernel
def ismcts_iterations(count, template, observer, allowed, unseen, needed, exploration, leaf, weights, entries,
                      nodes, action_of, first_child, next_sibling, visits, available, total, size, heuristic_params,
                      first_world, opponent_model, opponent_params, worlds, world_count, expand_after,
                      branch_draws, square, root_allowed, root_prior, root_prior_weight):
    """Run ``count`` ISMCTS iterations on the tree (see the module docstring); ``weights``: the playout policy's
    (leaves ``policy``, ``solver``), ``heuristic_params``: the heuristic's (leaf ``heuristic``), ``opponent_params``:
    the heuristic's that plays the opponent's moves in the tree under ``opponent_model`` ``OPPONENT_HEURISTIC``;
    iteration ``i``'s world is number ``first_world + i`` of the transposition table (``Table.claim_worlds``).
    With ``world_count`` > 0 iteration ``i`` starts from
    ``worlds[i % world_count]`` (worlds drawn by the caller, e.g. weighted by inference) instead of a uniform
    determinization of ``template``. A node below the root grows children only once it has been visited
    ``expand_after`` times (1: at its second visit); until then iterations evaluate from it. With ``branch_draws``
    an edge after which the observer has drawn a card leads on to one child per card drawn (key ``DRAWN_KEY`` +
    card), created under the same ripeness rule, so his information sets below it are told apart by his draw.
    ``square`` sums each node's squared rewards (for the variance of its mean); at the root only the actions of the
    mask ``root_allowed`` are tried (the caller drops actions that are clearly worse, as ``agents.rollout`` does).
    At the root a child's mean in the UCB1 score is shrunk toward ``root_prior[action]`` (a network's value of the
    action, in rewards), counted as ``root_prior_weight`` visits: ``(total + weight * prior) / (visits + weight)``
    (weight 0: plain UCB1); the exploration term keeps the real visits."""
    world = np.empty(STATE_SIZE, dtype=np.int64)
    path = np.empty(128, dtype=np.int64)
    capacity = action_of.shape[0]
    opponent = 1 - observer
    for iteration in range(count):
        if world_count > 0:
            copy_state(world, worlds[iteration % world_count])
        else:
            _determinize_into(world, template, opponent, allowed, unseen, needed)
        node = 0
        depth = 0
        path[0] = 0
        reward = 0.0
        drawn = 0  # the card mask the observer drew by the last edge followed (branch_draws)
        while True:
            if drawn:
                # The observer saw what he drew: descend to (or grow) the child for that card.
                key = DRAWN_KEY + bit_index(drawn)
                drawn = 0
                child = first_child[node]
                while child >= 0 and action_of[child] != key:
                    child = next_sibling[child]
                if child < 0:
                    if size[0] >= capacity or visits[node] < expand_after:
                        reward = _leaf_value(world, observer, LEAF_POLICY if leaf == LEAF_RANDOM else leaf, weights,
                                             heuristic_params, entries, nodes, first_world + iteration)
                        break
                    child = _grow(node, key, action_of, first_child, next_sibling, visits, available, total, square,
                                  size)
                node = child
                depth += 1
                path[depth] = node
            if world[STAGE] == OVER:
                reward = value_for(world, observer)
                break
            legal = legal_mask(world)
            if node == 0:
                legal &= root_allowed
            tried = 0
            child = first_child[node]
            while child >= 0:
                if legal >> action_of[child] & 1:
                    available[child] += 1
                    tried |= 1 << action_of[child]
                child = next_sibling[child]
            untried = legal & ~tried
            if opponent_model == OPPONENT_HEURISTIC and world[TO_MOVE] == opponent and popcount(legal) > 1:
                # The modelled opponent plays one move in this world: only that edge is followed or grown.
                modelled = _heuristic_action(world, opponent_params, entries, nodes)
                untried &= 1 << modelled
                if not untried:
                    child = first_child[node]
                    while action_of[child] != modelled:
                        child = next_sibling[child]
                    hand = world[HAND0 + observer]
                    apply(world, modelled)
                    if branch_draws:
                        drawn = world[HAND0 + observer] & ~hand
                    node = child
                    depth += 1
                    path[depth] = node
                    continue
            if untried and size[0] < capacity and (node == 0 or visits[node] >= expand_after):
                action = 0
                pick = np.random.randint(0, popcount(untried))
                for _ in range(pick):
                    untried &= untried - 1
                action = bit_index(untried & -untried)
                new = _grow(node, action, action_of, first_child, next_sibling, visits, available, total, square,
                            size)
                apply(world, action)
                depth += 1
                path[depth] = new
                reward = _leaf_value(world, observer, leaf, weights, heuristic_params, entries, nodes,
                                     first_world + iteration)
                break
            if untried:  # the tree is full or the node not yet ripe: evaluate from here (random leaves: the policy)
                reward = _leaf_value(world, observer, LEAF_POLICY if leaf == LEAF_RANDOM else leaf, weights,
                                     heuristic_params, entries, nodes, first_world + iteration)
                break
            sign = 1.0 if world[TO_MOVE] == observer else -1.0
            best_score = -1e300
            best_child = -1
            child = first_child[node]
            while child >= 0:
                if legal >> action_of[child] & 1:
                    if node == 0 and root_prior_weight > 0.0:
                        mean = (total[child] + root_prior_weight * root_prior[action_of[child]]) / (
                            visits[child] + root_prior_weight)
                    else:
                        mean = total[child] / visits[child]
                    score = sign * mean + exploration * np.sqrt(np.log(available[child]) / visits[child])
                    if score > best_score:
                        best_score = score
                        best_child = child
                child = next_sibling[child]
            hand = world[HAND0 + observer]
            apply(world, action_of[best_child])
            if branch_draws:
                drawn = world[HAND0 + observer] & ~hand
            node = best_child
            depth += 1
            path[depth] = node
        reward /= 3.0  # R16: game points lie in -3..3
        for index in range(depth + 1):
            visits[path[index]] += 1
            total[path[index]] += reward
            square[path[index]] += reward * reward


__all__ = ["DRAWN_KEY", "LEAF_NAMES", "OPPONENT_NAMES", "ismcts_iterations"]
