"""Single-observer information-set Monte Carlo tree search (SO-ISMCTS, Cowling, Powley & Whitehouse 2012).

The tree is built over the observer's information sets: a node is the sequence of actions since the decision,
and every action in Sixty-six is public (cards played, marriages shown, exchange, close, declare, draw, pass), so
the opponent's nodes are keyed by what the observer sees. The cards drawn from the talon are chance events fixed by
the determinization; the opponent's draws are hidden from the observer, but his own he sees, so with
``draws=observed`` the tree also branches on the card the observer draws (his later choices may then depend on it);
``draws=fused`` keys nodes by actions alone, fusing his later choices across his possible draws.

Each iteration:

1. determinizes: a hidden layout consistent with what the observer knows, uniform (``inference=none``) or drawn
   from the replay that keeps worlds with the likelihood of the opponent's play so far (``inference=heuristic``,
   the default, :class:`agents.inference.ReplayedWorlds`, on the core);
2. descends from the root, at each node choosing by UCB1 among the children whose actions are legal in this
   determinization, with *availability counts* (a child's exploration term uses how often it was available, not
   the parent's visits);
3. expands one untried legal action;
4. evaluates the new position by a playout (``leaf``): ``policy`` plays the fast default policy of
   :func:`agents.pimc.policy_action` to the end, ``solver`` plays it until phase 2 and then solves exactly (R8,
   :func:`agents.pimc.playout_value`: stronger leaves, about 25x fewer iterations), ``heuristic`` lets the
   ``heuristic`` player play both seats from their own views and solves from the talon's last trick (R7), as the
   rollouts of ``agents.rollout`` do (the strongest leaves, the fewest iterations; the default), ``random`` plays at
   random;
5. backs up the observer's game points divided by 3 (rewards in [-1, 1]); opponent nodes maximise the negation.

With ``opponent=heuristic`` (the default) the opponent's moves inside the tree are not searched: in each
determinization he plays what the ``heuristic`` player would play from his own view of that world (an opponent
model, as the rollouts of ``agents.rollout`` assume), so the tree spends its iterations on the observer's own
choices only. ``opponent=search`` is plain SO-ISMCTS (his nodes choose by UCB1 on the negated reward). Measured
on tuning deals (docs/strength.md, session 6) the model lifts the search from about level with ``heuristic`` to
+0.26 game points per deal against it; the defaults before it are the alias ``ismcts_v1``.

With ``prior=NETWORK`` (a network fitted to action values, as ``expert``'s prior) the network's value of each root
action counts as ``prior_weight`` visits of it, in the root's UCB1 score and in the choice, which is then the best
shrunk mean (docs/strength.md, "Session 60").

Without a prior the action played is the root child visited most. ``iterations`` and ``seconds`` bound the work
(``seconds=None``: no time limit, so choices depend only on the seed).

Where the rules allow (every preset), the whole search runs on the compiled core
(:func:`sixtysix_env.core.ismcts.ismcts_iterations`): the tree lives in flat arrays and the agent runs it in short
slices, checking the clock between them so the budget holds. Other rules (manual declaring) run the same
algorithm in Python, far slower.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from sixtysix_env import InformationSet
from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.game import FOLLOW, LEAD, OVER, Game
from sixtysix_env.schema import finite_number

from .base import Agent, legal_actions_to_choose, refuse_other_rules, refuse_three_players
from .inference import inert_without_inference, replay_settings
from .pimc import (PRUNE_AFTER, _none_from_spec, playout_value, policy_action, policy_weights, prune_threshold,
                   time_budget)
from .rollout import ROLLOUT_PLAYER_SAMPLES, rollout_player_params
from .rule_based import HeuristicAgent, is_phase2
from .solver import ROLLOUT_TABLE_BITS, checked_table_bits, core_table

LEAVES = ("policy", "solver", "heuristic", "random")
OPPONENT_MODELS = ("search", "heuristic")  # the opponent's moves in the tree: UCB1, or the heuristic's choice
DRAW_MODES = ("fused", "observed")  # the observer's own draws: not tree edges, or one child per card drawn
FRESH_WORLDS = 16  # inferred worlds drawn per slice of iterations (a slice cycles through them)
PHASE2_MODES = ("solve", "search")
MAX_PHASE2_WORLDS = 2000  # sampled worlds solved per phase-2 decision after a closing
CLOCK_FREE_PHASE2_WORLDS = 200  # the same without a clock (seconds=None), so that a seed fixes the choice
PRUNE_EVERY = 32  # iterations between two pruning checks of the Python tree (the core's: every slice)
SLICE_SECONDS = 0.005  # the longest a slice of core iterations should run between two looks at the clock


class _Node:
    """Statistics of one action edge and the information set it leads to (rewards from the observer's side)."""

    __slots__ = ("children", "visits", "total", "square", "available")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.total = 0.0
        self.square = 0.0  # the sum of squared rewards (the variance of the mean, for pruning at the root)
        self.available = 1


def surviving_root_actions(statistics: dict[int, tuple[int, float, float]], active: list[int],
                           z: float) -> list[int]:
    """The root actions of ``active`` not significantly worse than the leader: ``statistics[action]`` = (visits,
    mean reward, sum of squared rewards). An action is dropped when both it and the leader (the best mean among the
    actions with ``PRUNE_AFTER`` visits) have at least ``PRUNE_AFTER`` visits and its mean is below the leader's by
    more than ``z`` standard errors of the difference (the two means come from different worlds, so the test is
    unpaired, Welch's, unlike the common-world test of ``agents.pimc``)."""
    def mean_and_variance(action):
        visits, mean, square = statistics[action]
        variance = max(square / visits - mean * mean, 0.0) * visits / (visits - 1)
        return mean, variance / visits

    ripe = [action for action in active if action in statistics and statistics[action][0] >= PRUNE_AFTER]
    if len(ripe) < 2:
        return list(active)
    leader = max(ripe, key=lambda action: statistics[action][1])
    leader_mean, leader_variance = mean_and_variance(leader)
    survivors = []
    for action in active:
        if action in ripe and action != leader:
            mean, variance = mean_and_variance(action)
            gap = leader_mean - mean
            if gap > 0 and gap * gap > z * z * (leader_variance + variance):
                continue
        survivors.append(action)
    return survivors


def policy_playout_value(game: Game, player: int) -> int:
    """Game points for ``player`` when both sides play the default policy to the end (``game`` is modified)."""
    while game.stage != OVER:
        game.apply(policy_action(game))
    return game.result.returns()[player]


def heuristic_playout_value(game: Game, player: int, seed: int) -> int:
    """Game points for ``player`` when the rollout search's ``heuristic`` player plays both seats from their own
    views to the end (``game`` is modified): the Python form of the core's ``heuristic`` leaf, for rules the core
    does not implement (it plays the talon's last trick and phase 2 instead of solving them)."""
    players = [HeuristicAgent(seed=seed + seat, lead_samples=ROLLOUT_PLAYER_SAMPLES,
                              close_samples=ROLLOUT_PLAYER_SAMPLES) for seat in range(2)]
    for seat, agent in enumerate(players):
        agent.start_deal(seat, game.rules)
    while game.stage != OVER:
        game.apply(players[game.to_move].act(InformationSet(game, game.to_move)))
    return game.result.returns()[player]


class IsmctsAgent(Agent):
    """SO-ISMCTS (see the module docstring). ``exploration`` is the UCB1 constant for rewards in [-1, 1];
    ``leaf`` the playout that values a new node (``policy``, ``solver``, ``heuristic`` or ``random``); ``tree_nodes``
    bounds the tree's size (when it is full, iterations still run, evaluating from where they stop); ``phase2``:
    ``solve`` plays phase 2 (R8) exactly — once the talon is exhausted a card counter knows the opponent's hand, so
    the one consistent world is solved; after a closing the action with the best mean over sampled worlds, each solved
    exactly (only the play of cards: the answer to the opponent's closing, R9, is searched) — or ``search`` runs
    ISMCTS there too; ``opponent``: ``search`` (his moves by UCB1 on the negated reward)
    or ``heuristic`` (his moves are the ``heuristic`` player's from his view of each determinization);
    ``inference``: ``none`` (uniform determinizations) or ``heuristic`` (worlds kept with the likelihood of his play
    so far under the heuristic's rules, :class:`agents.inference.ReplayedWorlds`, on the core only), with the
    floors of ``agents.rollout`` (``closed_floor`` / ``closing_floor`` / ``played_on_floor`` included); ``expand_after``: visits a node
    below the root needs before it grows children (1: at its second visit; more keeps the tree shallow, its values
    closer to rollouts); ``draws``: ``fused`` (the observer's own draws are not tree edges) or ``observed`` (a child
    per card he draws, R7, so his later choices may depend on it); ``prune``: drop a root action once its mean is
    this many standard errors below the leader's (:func:`surviving_root_actions`, checked between slices of
    iterations; the search stops when one is left; ``None``: never), as ``expert`` drops actions; ``table_bits``:
    the iterations' solver table has ``2**table_bits`` entries (as ``rollout``'s); ``prior``: ``None``, or a network
    fitted to action values named as ``rollout``'s prior (a path or an alias such as ``suit_iterated``,
    :class:`agents.ppo.QValueNetwork`); its value of each root action, centred on the mean of the root's means,
    counts as ``prior_weight`` visits of that action: in the UCB1 score at the root and in the choice, which is then
    the root action with the best shrunk mean ``(visits * mean + prior_weight * prior) / (visits + prior_weight)``
    instead of the most visited (the prior network guides the tree, as it guides ``expert``'s rollouts)."""

    name = "ismcts"

    def __init__(self, seed: int | None = None, iterations: int = 200_000, seconds: float | None = 0.1,
                 exploration: float = 0.7, leaf: str = "heuristic", tree_nodes: int = 1 << 18, phase2: str = "search",
                 opponent: str = "heuristic", inference: str = "heuristic", follow_floor: float = 0.1,
                 rule_floor: float = 0.1, lead_floor: float = 1.0, expand_after: int = 1, draws: str = "fused",
                 prune: float | None = None, table_bits: int = ROLLOUT_TABLE_BITS, closed_floor: float = 1.0,
                 closing_floor: float = 1.0, played_on_floor: float = 1.0, prior: str | None = None,
                 prior_weight: float = 128.0):
        super().__init__(seed)
        seconds = time_budget(seconds)
        # The iterations' solves (leaves, phase 2) are small: a table that stays in cache runs about 1.7 times the
        # iterations of the process's large one at the first decisions of a deal (docs/strength.md, session 9).
        self.table_bits = checked_table_bits(table_bits)
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
            raise ValueError(f"iterations must be a positive integer, got {iterations!r}")
        if not finite_number(exploration) or exploration < 0:
            raise ValueError(f"exploration must be a non-negative number, got {exploration!r}")
        if not isinstance(leaf, str) or leaf.strip().lower() not in LEAVES:
            raise ValueError(f"leaf must be one of {', '.join(LEAVES)}, got {leaf!r}")
        if isinstance(tree_nodes, bool) or not isinstance(tree_nodes, int) or not 2 <= tree_nodes <= 1 << 24:
            raise ValueError(f"tree_nodes must be an integer in 2..{1 << 24}, got {tree_nodes!r}")
        if not isinstance(phase2, str) or phase2.strip().lower() not in PHASE2_MODES:
            raise ValueError(f"phase2 must be one of {', '.join(PHASE2_MODES)}, got {phase2!r}")
        if not isinstance(opponent, str) or opponent.strip().lower() not in OPPONENT_MODELS:
            raise ValueError(f"opponent must be one of {', '.join(OPPONENT_MODELS)}, got {opponent!r}")
        self.inference, self.floors = replay_settings(inference, follow_floor, rule_floor, lead_floor, closed_floor,
                                                      closing_floor, played_on_floor)
        # The compiled tree takes a 64-bit count; no node is visited 10^9 times in a decision anyway.
        if isinstance(expand_after, bool) or not isinstance(expand_after, int) or not 1 <= expand_after <= 10**9:
            raise ValueError(f"expand_after must be a number of visits in 1..10^9, got {expand_after!r}")
        self.expand_after = expand_after
        if not isinstance(draws, str) or draws.strip().lower() not in DRAW_MODES:
            raise ValueError(f"draws must be one of {', '.join(DRAW_MODES)}, got {draws!r}")
        self.draws = draws.strip().lower()
        self.prune = prune_threshold(prune)
        self.last_active: list[int] = []  # the root actions still searched at the last decision (pruning drops some)
        self.opponent = opponent.strip().lower()
        self.iterations = iterations
        self.seconds = seconds
        self.exploration = float(exploration)
        self.leaf = leaf.strip().lower()
        self.phase2 = phase2.strip().lower()
        self.tree_nodes = tree_nodes
        self._replayed = None  # this decision's inferred worlds (inference=heuristic, on the core)
        self._model = None  # the Python opponent model (rules the core does not implement), made on first use
        self._tree = None  # the core's tree arrays, made on first use and reused across decisions
        self.last_iterations = 0  # iterations run at the last decision (for measurements)
        if not finite_number(prior_weight) or prior_weight < 0:
            raise ValueError(f"prior_weight must be a non-negative number of visits, got {prior_weight!r}")
        self.prior_weight = float(prior_weight)
        self.prior = _none_from_spec(prior)
        self._prior_network = None
        if self.prior is not None:
            from .ppo import QValueNetwork

            self._prior_network = QValueNetwork(self.prior, where="ismcts's prior")
        self._root_prior: dict[int, float] = {}  # this decision's prior in rewards, centred (empty: no prior)

    def search(self, infoset: InformationSet) -> dict[int, tuple[int, float]]:
        """Run the iterations for one decision; returns ``{action: (visits, mean reward)}`` of the root's
        children (rewards are game points / 3 from this player's side)."""
        legal_actions_to_choose(infoset)
        from sixtysix_env.core import core_implements  # numba loads only when a search runs

        start = time.perf_counter()  # the prior's forward pass counts against the budget too
        self.last_active = list(infoset.legal_actions)
        self._root_prior = {}
        if self._prior_network is not None and self.prior_weight > 0 and len(infoset.legal_actions) > 1:
            # The network's game points, centred over the legal actions, in rewards (R16: game points / 3).
            self._root_prior = {action: value / 3.0 for action, value in self._prior_network.values(infoset).items()}
        if core_implements(infoset.rules):
            return self._core_search(infoset, start)
        root = _Node()
        done = 0
        while done < self.iterations:
            if self.seconds is not None and done:
                elapsed = time.perf_counter() - start
                if elapsed + 2 * elapsed / done > self.seconds:  # the next iteration (with margin) would overrun
                    break
            self._iterate(root, infoset.determinize(self.rng), infoset.player)
            done += 1
            if self.prune is not None and done % PRUNE_EVERY == 0 and self._pruned_to_one({
                    action: (child.visits, child.total / child.visits, child.square)
                    for action, child in root.children.items()}):
                break
        self.last_iterations = done
        return self._still_searched({action: (child.visits, child.total / child.visits)
                                     for action, child in root.children.items()})

    def _pruned_to_one(self, statistics: dict[int, tuple[int, float, float]]) -> bool:
        """Drop the root actions that are clearly worse (``prune``); whether one is left."""
        if len(self.last_active) > 1:
            self.last_active = surviving_root_actions(statistics, self.last_active, self.prune)
        return len(self.last_active) == 1

    def start_deal(self, player: int, rules) -> None:
        from sixtysix_env.core import core_implements

        refuse_three_players(rules, "ismcts")
        if self._prior_network is not None:  # refused now, not at the first search
            refuse_other_rules(f"ismcts's prior {self.prior!r}", self._prior_network.rules, rules)
        if not core_implements(rules):  # the Python search solves phase 2 (agents.solver): load it now
            from .rule_based import prepare_solver

            prepare_solver(rules)
        if self._tree is None and core_implements(rules):
            game = Game.deal(rules, seed=0)  # any position will do: only the kernels' loading matters
            # The run searches the root actions still active, without a prior; act sets both anew at every search.
            self.last_active = game.legal_actions()
            self._root_prior = {}
            self._load_core(InformationSet(game, game.to_move))

    def _load_core(self, infoset: InformationSet) -> None:
        """First use in this process: load the compiled kernels (numba's cache) and make the tree, before a clock
        starts (``start_deal`` calls this, outside the time of the first decision)."""
        from sixtysix_env.core.ismcts import LEAF_NAMES
        from sixtysix_env.core.search import Tree, information_template

        template, allowed, unseen, needed = information_template(infoset)
        self._tree = Tree(self.tree_nodes)
        self._weights = policy_weights()
        self._heuristic_params = rollout_player_params()
        # The opponent model is the heuristic itself (its full sample counts), not the cheaper rollout player.
        self._opponent_params = HeuristicAgent().core_params()
        self._run(1, template, infoset.player, allowed, unseen, needed, LEAF_NAMES[self.leaf],
                  core_table(self.table_bits))

    def _core_search(self, infoset: InformationSet, start: float) -> dict[int, tuple[int, float]]:
        from sixtysix_env.core.ismcts import LEAF_NAMES
        from sixtysix_env.core.search import information_template, seed_kernels

        template, allowed, unseen, needed = information_template(infoset)
        table = core_table(self.table_bits)
        leaf = LEAF_NAMES[self.leaf]
        self._replayed = None
        if self._tree is None:  # act without start_deal: load here, then start the clock again
            self._load_core(infoset)
            start = time.perf_counter()
        tree = self._tree
        tree.reset()
        seed_kernels(self.rng.getrandbits(32))
        if self.inference == "heuristic" and infoset.history:
            from .inference import ReplayedWorlds

            self._replayed = ReplayedWorlds(infoset, *self.floors)
        done = 0
        batch = 16  # iterations per slice, grown while slices stay short
        while done < self.iterations:
            count = min(batch, self.iterations - done)
            slice_start = time.perf_counter()
            self._run(count, template, infoset.player, allowed, unseen, needed, leaf, table)
            done += count
            if self.prune is not None and self._pruned_to_one(tree.root_statistics()):
                break
            now = time.perf_counter()
            per_iteration = max((now - slice_start) / count, 1e-7)
            if self.seconds is not None:
                left = self.seconds - (now - start)
                if left <= 2 * per_iteration:
                    break
                # The next slice ends well inside the budget: at most half of what is left, and short enough to
                # look at the clock often (a slow iteration cannot overrun by much).
                batch = max(1, min(int(min(left / 2, SLICE_SECONDS) / per_iteration), 4096))
            else:
                # No clock: slices that do not depend on the machine's speed, so that the same seed gives the same
                # choices (the inferred worlds are drawn slice by slice).
                batch = min(batch * 2, 4096)
        self.last_iterations = done
        return self._still_searched(tree.root_children())

    def _solved_phase2(self, infoset: InformationSet) -> int:
        """Phase 2 (R8): the best mean over sampled worlds, each solved exactly (one world once the talon is
        exhausted: the card counter's view holds only the true one)."""
        from sixtysix_env.core.search import information_template, seed_kernels, solved_world_values

        start = time.perf_counter()
        template, allowed, unseen, needed = information_template(infoset)
        table = core_table(self.table_bits)
        seed_kernels(self.rng.getrandbits(32))
        sums = np.zeros(64, dtype=np.int64)
        wins = np.zeros(64, dtype=np.int64)
        unique = needed == allowed.bit_count() and infoset.face_down_count == 0
        worlds = 0
        batch = 1 if unique else 8
        while True:
            solved_world_values(batch, template, infoset.player, allowed, unseen, needed, sums, wins, table.entries,
                                table.claim_worlds(batch), table.nodes)
            worlds += batch
            elapsed = time.perf_counter() - start
            if unique or worlds >= MAX_PHASE2_WORLDS or (
                    self.seconds is not None and elapsed * (worlds + batch) / worlds > 0.8 * self.seconds):
                break
            if self.seconds is None and worlds >= CLOCK_FREE_PHASE2_WORLDS:
                break
        self.last_iterations = worlds
        legal = infoset.legal_actions
        best = max(int(sums[action]) for action in legal)
        return next(action for action in legal if sums[action] == best)

    def _run(self, count, template, player, allowed, unseen, needed, leaf, table) -> None:
        from sixtysix_env.core.ismcts import OPPONENT_NAMES, ismcts_iterations

        tree = self._tree
        replayed = self._replayed
        if replayed is None:
            worlds, world_count = template.reshape(1, -1), 0  # uniform determinizations of the template
        else:
            world_count = min(count, FRESH_WORLDS)
            worlds = np.stack([replayed.next_state(self.rng) for _ in range(world_count)])
        ismcts_iterations(count, template, player, allowed, unseen, needed, self.exploration, leaf, self._weights,
                          table.entries, table.nodes, tree.action, tree.first_child, tree.next_sibling,
                          tree.visits, tree.available, tree.total, tree.size, self._heuristic_params,
                          table.claim_worlds(count), OPPONENT_NAMES[self.opponent], self._opponent_params, worlds,
                          world_count, self.expand_after, self.draws == "observed", tree.square,
                          sum(1 << action for action in self.last_active),
                          self._prior_array(self._still_searched(tree.root_children())),
                          self.prior_weight if self._root_prior else 0.0)

    def _still_searched(self, children: dict[int, Any]) -> dict[int, Any]:
        """The root children that pruning has not dropped: what :meth:`search` returns, and what the prior is centred
        on in the search as in the choice (:meth:`act` shrinks only theirs), so that with ``prune`` both pull toward
        the same values."""
        return {action: value for action, value in children.items() if action in self.last_active}

    def _centred_prior(self, children: dict[int, tuple[int, float]]) -> dict[int, float]:
        """The prior of the root's actions, in rewards, moved to the mean of the root children's means (``children``:
        {action: (visits, mean)}): the network's values are centred over the legal actions, the search's are not, so
        a prior at zero would pull every action toward a draw."""
        means = [mean for action, (visits, mean) in children.items() if visits and action in self._root_prior]
        centre = float(np.mean(means)) if means else 0.0
        return {action: value + centre for action, value in self._root_prior.items()}

    def _prior_array(self, children: dict[int, tuple[int, float]]) -> np.ndarray:
        """The centred prior as the kernel's array by action (zeros without a prior)."""
        array = np.zeros(NUM_ACTIONS, dtype=np.float64)
        if self._root_prior:
            for action, value in self._centred_prior(children).items():
                array[action] = value
        return array

    def shrunk_means(self, children: dict[int, tuple[int, float]]) -> dict[int, float]:
        """Each root action's mean shrunk toward the centred prior, counted as ``prior_weight`` visits (the means
        themselves without a prior)."""
        if not self._root_prior:
            return {action: mean for action, (_visits, mean) in children.items()}
        prior = self._centred_prior(children)
        weight = self.prior_weight
        return {action: (visits * mean + weight * prior[action]) / (visits + weight)
                for action, (visits, mean) in children.items()}

    def _iterate(self, root: _Node, world: Game, me: int) -> None:
        node = root
        path = [root]
        log = math.log
        sqrt = math.sqrt
        exploration = self.exploration
        observed = self.draws == "observed"
        from sixtysix_env.core.ismcts import DRAWN_KEY  # the core's key for a drawn card, here too

        drawn = 0  # the card mask the observer drew by the last edge followed (draws=observed)
        weight = self.prior_weight
        root_prior = self._centred_prior(self._still_searched({
            action: (child.visits, child.total / child.visits) for action, child in root.children.items()
        })) if self._root_prior else None
        while True:
            if drawn:
                key = DRAWN_KEY + (drawn.bit_length() - 1)
                drawn = 0
                child = node.children.get(key)
                if child is None:
                    if node.visits < self.expand_after:
                        reward = self._leaf_reward(world, me)
                        break
                    child = node.children[key] = _Node()
                node = child
                path.append(node)
            if world.stage == OVER:
                reward = world.result.returns()[me]
                break
            legal = world.legal_actions()
            if node is root and self.prune is not None:  # (search sets last_active before any iteration)
                legal = [action for action in legal if action in self.last_active]
            if self.opponent == "heuristic" and world.to_move != me and len(legal) > 1:
                legal = [self._opponent_model(world)]  # only the modelled move is followed or grown
            children = node.children
            untried = []
            for action in legal:
                child = children.get(action)
                if child is None:
                    untried.append(action)
                else:
                    child.available += 1
            if untried:
                if node is root or node.visits >= self.expand_after:
                    action = untried[int(self.rng.random() * len(untried))]
                    child = children[action] = _Node()
                    world.apply(action)
                    path.append(child)
                # else: the node is not yet ripe (expand_after), so the playout starts from it
                reward = self._leaf_reward(world, me)
                break
            sign = 1.0 if world.to_move == me else -1.0
            best_score = -math.inf
            best_action = legal[0]
            prior = root_prior if node is root else None
            for action in legal:
                child = children[action]
                if prior:
                    mean = (child.total + weight * prior[action]) / (child.visits + weight)
                else:
                    mean = child.total / child.visits
                score = sign * mean + exploration * sqrt(log(child.available) / child.visits)
                if score > best_score:
                    best_score = score
                    best_action = action
            hand = world.hands[me]
            world.apply(best_action)
            if observed:
                drawn = world.hands[me] & ~hand
            node = children[best_action]
            path.append(node)
        reward /= 3.0  # R16: game points lie in -3..3
        for visited in path:
            visited.visits += 1
            visited.total += reward
            visited.square += reward * reward

    def _leaf_reward(self, world: Game, me: int) -> int:
        """Game points for ``me`` of the ``leaf`` playout from ``world`` (modified)."""
        if self.leaf == "solver":
            return playout_value(world, me)
        if self.leaf == "heuristic":
            return heuristic_playout_value(world, me, self.rng.getrandbits(32))
        if self.leaf == "policy":
            return policy_playout_value(world, me)
        while world.stage != OVER:
            legal = world.legal_actions()
            world.apply(legal[int(self.rng.random() * len(legal))])
        return world.result.returns()[me]

    def _opponent_model(self, world: Game) -> int:
        """The ``heuristic`` player's move for the opponent to move in ``world``, from his view of it."""
        model = self._model
        if model is None:
            model = self._model = HeuristicAgent(seed=self.rng.getrandbits(32))
        model.start_deal(world.to_move, world.rules)
        return model.act(InformationSet(world, world.to_move))

    def inert_parameters(self) -> dict[str, str]:
        inert = inert_without_inference(self.inference)
        if self._prior_network is None:
            inert["prior_weight"] = "it counts only with a prior network (prior=...)"
        return inert

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        self._model = None  # its generator is drawn from ours: a re-seeded agent must make it anew

    def act(self, infoset: InformationSet) -> int:
        refuse_three_players(infoset.rules, "ismcts")
        legal = legal_actions_to_choose(infoset)
        if len(legal) == 1:
            return legal[0]
        from sixtysix_env.core import core_implements

        if (self.phase2 == "solve" and is_phase2(infoset) and infoset.stage in (LEAD, FOLLOW)
                and core_implements(infoset.rules)):
            return self._solved_phase2(infoset)
        children = self.search(infoset)
        if self._root_prior and children:
            # With a prior: the best shrunk mean (ties: the first in legal order).
            shrunk = self.shrunk_means(children)
            return max((action for action in legal if action in shrunk), key=lambda action: shrunk[action])
        # The most visited root action (ties: the better mean, then the first in legal order).
        best_action = legal[0]
        best_key = (-1, -math.inf)
        for action in legal:
            if action not in children:
                continue
            key = children[action]
            if key > best_key:
                best_key = key
                best_action = action
        return best_action


__all__ = ["DRAW_MODES", "OPPONENT_MODELS", "IsmctsAgent", "policy_playout_value"]
