"""Figures of the compiled core (sixtysix_env/core), measured side by side with the engine they replace.

* ``core_playout_decisions_per_s``: random playouts of whole deals inside the core (dealing included), one core;
* ``phase2_solve_ms``: exact phase-2 solves (R8) of positions at talon exhaustion and at closings after tricks
  1–5, cold (empty table), the kernel alone; the pure-Python solver on the same positions as the peer;
* ``full_solve_ms``: whole-deal solves with the talon order known, from the first lead and from the fourth trick;
* ``expert_rollout_us``: one rollout of ``expert``'s search (its rollout player, the heuristic with six lead and
  closing samples, solving from the talon's last trick or a closing) from the phase-1 decisions with six or more
  talon cards of 150 ``heuristic`` self-play deals, every legal action once: microseconds and solver nodes per
  rollout (the cost that decides how many worlds a decision sees, docs/core.md "What a rollout costs");
* ``ismcts_first_decision_iterations``: ``ismcts_v1`` (SO-ISMCTS with playout-policy leaves, the ``ismcts`` this
  figure was first measured with) at its default 0.1 s on the first decision of fresh deals;
* ``jit_warmup_s``: a fresh process compiling every kernel into an empty cache, and one loading them from it.

    python -m bench.core_bench [--positions 300] [--only FIGURE] [--json FILE]      (also part of ``sixtysix bench``)
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

from eval.stats import percentile
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import CLOSE
from sixtysix_env.core import engine, new_state, state_from_game
from sixtysix_env.core.layout import RULE_BITS
from sixtysix_env.core.solver import Table, _solve_value
from sixtysix_env.game import FOLLOW, LEAD

from .checks import check_output_paths


def core_playout_decisions_per_second(seconds: float = 2.0, seed: int = 0, rules: Rules | None = None) -> float:
    """Uniform random play of whole deals inside the core, dealing included (one thread)."""
    bits = int(new_state(rules or Rules(), seed=0)[RULE_BITS])
    engine.random_playouts(100, seed, bits)  # compiled / loaded before the clock starts
    decisions = 0
    batch = 20_000
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        made, _ = engine.random_playouts(batch, seed, bits)
        decisions += made
        seed += 1
    return decisions / (time.perf_counter() - start)


def phase2_positions(count: int, seed: int = 0, rules: Rules | None = None) -> list[Game]:
    """Phase-2 lead positions: a third at talon exhaustion, the rest at a closing after 1–4 tricks (R7, R10). A
    sixth are asked to close after 5 tricks, where the standard and scharf presets no longer allow it (R10: the
    talon then holds two cards), so they play on to exhaustion too (paderborn's close_draw_option, R10, still lets
    the trick's winner close before drawing); the mix is kept as it is so the figures of docs/performance.md
    (standard rules) reproduce."""
    rules = rules or Rules()
    positions: list[Game] = []
    deal = seed * 1_000_003
    while len(positions) < count:
        deal += 1
        rng = random.Random(deal)
        game = Game.deal(rules, seed=deal, dealer=deal & 1)
        close_after = len(positions) % 6 + 1  # 6: play on to exhaustion
        while not game.is_over and not game.phase2:
            legal = game.legal_actions()
            if close_after < 6 and len(game.tricks) >= close_after and CLOSE in legal:
                game.apply(CLOSE)
                break
            game.apply(rng.choice([action for action in legal if action != CLOSE]))
        while not game.is_over and game.stage not in (LEAD, FOLLOW):
            game.apply(game.legal_actions()[0])
        if not game.is_over:
            positions.append(game)
    return positions


def phase2_solve_ms(count: int = 300, seed: int = 0) -> dict:
    """Cold solve times of the core kernel and, on the same positions, of the pure-Python solver."""
    from agents.solver import _check_position, _search_for, clear_cache

    positions = phase2_positions(count, seed)
    table = Table(16)
    _solve_value(state_from_game(positions[0]), -4, 4, table.entries, 0, table.nodes)  # compile / load first
    core_times, python_times = [], []
    for game in positions:
        state = state_from_game(game)
        table.clear()
        start = time.perf_counter()
        _solve_value(state, -4, 4, table.entries, 0, table.nodes)
        core_times.append((time.perf_counter() - start) * 1000)
        clear_cache()
        _check_position(game)
        search = _search_for(game)
        start = time.perf_counter()
        if game.stage == LEAD:
            search.lead_action_values(game, exact=False)
        else:
            search.follow_action_values(game, exact=False)
        python_times.append((time.perf_counter() - start) * 1000)
    return {"median": statistics.median(core_times), "p99": percentile(core_times, 99), "max": max(core_times),
            "python_median": statistics.median(python_times), "python_p99": percentile(python_times, 99),
            "positions": len(positions)}


def full_solve_ms(count: int = 30, seed: int = 0, from_trick: int = 0) -> dict:
    """Whole-deal solves (talon order known) after ``from_trick`` random tricks without closing."""
    table = Table(20)
    times = []
    deal = seed * 1_000_003
    _solve_value(state_from_game(phase2_positions(1)[0]), -4, 4, table.entries, 1, table.nodes)  # load first
    while len(times) < count:
        deal += 1
        rng = random.Random(deal)
        game = Game.deal(Rules(), seed=deal, dealer=deal & 1)
        while not game.is_over and (len(game.tricks) < from_trick or game.stage != LEAD):
            game.apply(rng.choice([action for action in game.legal_actions() if action != CLOSE]))
        if game.is_over:
            continue
        state = state_from_game(game)
        table.clear()
        start = time.perf_counter()
        _solve_value(state, -4, 4, table.entries, 1, table.nodes)
        times.append((time.perf_counter() - start) * 1000)
    return {"median": statistics.median(times), "p95": percentile(times, 95), "max": max(times),
            "deals": count, "from_trick": from_trick + 1}


def expert_rollout_cost(deals: int = 150, repeats: int = 5) -> dict:
    """Microseconds (median over ``repeats`` passes) and solver nodes per rollout of ``expert``'s rollout player from
    the phase-1 decisions (talon open, R7, six or more cards, a choice) of ``deals`` ``heuristic`` self-play deals."""
    import numpy as np

    from agents.rollout import rollout_player_params
    from agents.rule_based import HeuristicAgent
    from agents.solver import ROLLOUT_TABLE_BITS
    from sixtysix_env.core.engine import legal_mask
    from sixtysix_env.core.heuristic import rollout_values
    from sixtysix_env.core.layout import TO_MOVE

    player = HeuristicAgent(seed=0)
    states = []
    for deal in range(deals):
        game = Game.deal(Rules(), seed=deal, dealer=deal & 1)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            if infoset.closed_by is None and infoset.talon_size >= 6 and len(infoset.legal_actions) > 1:
                states.append(state_from_game(game))
            game.apply(player.act(infoset))
    worlds = np.array(states)
    params = rollout_player_params()
    table = Table(ROLLOUT_TABLE_BITS)
    values = np.zeros((1, 37))

    def one_pass(seed: int) -> tuple[float, float]:
        nodes_before = int(table.nodes[0])
        rollouts = 0
        start = time.perf_counter()
        for index, world in enumerate(worlds):
            mask = int(legal_mask(world))
            rollout_values(worlds[index:index + 1], 1, mask, int(world[TO_MOVE]), params, params, table.entries,
                           table.nodes, np.array([seed + index], dtype=np.int64), table.claim_worlds(1), values)
            rollouts += bin(mask).count("1")
        return (time.perf_counter() - start) / rollouts * 1e6, (int(table.nodes[0]) - nodes_before) / rollouts

    one_pass(0)  # compiled / loaded, and the table warm, before the clock
    runs = [one_pass(1000 * (repeat + 1)) for repeat in range(repeats)]
    return {"us_median": statistics.median(us for us, _ in runs), "us_runs": [us for us, _ in runs],
            "nodes_per_rollout": statistics.median(nodes for _, nodes in runs), "positions": len(worlds)}


def ismcts_first_decision_iterations(deals: int = 20, seed: int = 0) -> dict:
    from agents.registry import make_agent

    # ismcts_v1: the iteration rate of the tree search itself, comparable across sessions (today's default
    # heuristic leaves cost far more per iteration).
    agent = make_agent("ismcts_v1", seed=seed)
    iterations, seconds = [], []
    for deal in range(deals):
        game = Game.deal(Rules(), seed=seed * 1_000_003 + deal)
        infoset = InformationSet(game, game.to_move)
        start = time.perf_counter()
        agent.act(infoset)
        seconds.append(time.perf_counter() - start)
        iterations.append(agent.last_iterations)
    return {"median": statistics.median(iterations), "min": min(iterations),
            "seconds_median": statistics.median(seconds), "seconds_max": max(seconds[1:] or seconds)}


WARMUP_CODE = """
import time
start = time.perf_counter()
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.core import engine, new_state, state_from_game
from sixtysix_env.core.solver import Table, solve_value
from agents.ismcts import IsmctsAgent
engine.random_playouts(10, 1, int(new_state(Rules(), seed=1)[37]))
game = Game.deal(Rules(), seed=1)
game.apply(33)  # close at once: a phase-2 position, solved in microseconds
solve_value(state_from_game(game), Table(12))
game = Game.deal(Rules(), seed=1)
IsmctsAgent(seed=1, seconds=None, iterations=5, leaf="solver").act(InformationSet(game, game.to_move))
import sixtysix_env
environment = sixtysix_env.vector_env(2, self_play=True)
environment.reset(seed=0)
environment.step(environment.action_masks().argmax(axis=1))
print(time.perf_counter() - start)
"""


def jit_warmup_seconds() -> dict:
    """Seconds to compile every kernel into an empty cache (``python -m sixtysix_env.core``, what ``make install``
    runs: two processes at once), and for a fresh process to import and first call the main kernels from the
    cache it wrote (every later use)."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sixtysix_env.core"], capture_output=True, text=True, check=True,
                       env=env)
        compile_seconds = time.perf_counter() - start
        completed = subprocess.run([sys.executable, "-c", WARMUP_CODE], capture_output=True, text=True,
                                   check=True, env=env)
    return {"compile": compile_seconds, "cached": float(completed.stdout.strip().splitlines()[-1])}


def solve_and_search_figures(positions: int = 300) -> dict:
    """The solve, search and warm-up figures by name, each as a call that measures it (``sixtysix bench`` runs them
    one after another with a progress bar)."""
    return {
        "phase2_solve_ms": lambda: phase2_solve_ms(positions),
        "full_solve_ms": lambda: full_solve_ms(20),
        "full_solve_ms_from_trick_4": lambda: full_solve_ms(60, from_trick=3),
        "expert_rollout_us": expert_rollout_cost,
        "ismcts_first_decision_iterations": ismcts_first_decision_iterations,
        "jit_warmup_s": jit_warmup_seconds,
    }


def measure_all(positions: int = 300, seconds: float = 2.0, repeats: int = 3) -> dict:
    """Every figure of this module (medians over ``repeats`` where a figure is a rate)."""
    playouts = [core_playout_decisions_per_second(seconds) for _ in range(repeats)]
    figures = {"core_playout_decisions_per_s": statistics.median(playouts), "core_playout_runs": playouts}
    figures.update({name: measure() for name, measure in solve_and_search_figures(positions).items()})
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.core_bench", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=300, help="phase-2 positions to solve")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--only", action="append", choices=sorted(solve_and_search_figures()),
                        help="measure only this figure (repeatable)")
    args = parser.parse_args(argv)
    if args.positions < 1:
        parser.error(f"--positions must be at least 1, got {args.positions}")
    check_output_paths(parser, [("--json", args.json)])
    if args.only:
        steps = solve_and_search_figures(args.positions)
        figures = {name: steps[name]() for name in args.only}
    else:
        figures = measure_all(args.positions)
    for key, value in figures.items():
        print(f"{key}: {value}")
    if args.json:
        from sixtysix_env.fileio import write_json_atomic

        write_json_atomic(args.json, figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
