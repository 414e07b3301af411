"""Quick duplicate-deal comparison of two agents (a tuning aid; the real tournament harness lives in ``eval/``).

Deal ``i`` is the deck shuffled from seed ``(seed, i)`` with dealer ``i % 2``; it is played twice with the seats
swapped, so both agents hold both hands of the same deal. The figure reported is agent A's mean game-point margin
per deal (the mean of its two results on a deal pair, R16) with a 95% confidence interval over the pairs, plus
the deal win rates and each agent's median and 95th-percentile time per decision. Each process first plays one
untimed warm-up deal with other instances of the two agents, so no timing includes compiling or loading.

    .venv/bin/python -m bench.quick_strength heuristic greedy --deals 300 --seed 1
    .venv/bin/python -m bench.quick_strength heuristic random --deals 1000 --preset paderborn --workers 2
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from multiprocessing import Pool

from tqdm import tqdm

from agents import make_agent
from eval.stats import mean_interval, percentile
from sixtysix_env import PRESET_NAMES, Game, InformationSet, Rules

from .checks import check_agent_specs


def derived_seed(*parts: object) -> int:
    """A 63-bit seed from the parts (stable across platforms and Python versions)."""
    digest = hashlib.blake2b("/".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def play_deal(rules: Rules, agents: list, deck_seed: int, dealer: int, agent_seeds: list[int],
              timings: list[list[float]]) -> tuple[int, int]:
    """Play one deal with ``agents[p]`` in seat ``p``; returns the game points of both seats."""
    game = Game.deal(rules, seed=deck_seed, dealer=dealer)
    for seat, agent in enumerate(agents):
        agent.seed(agent_seeds[seat])
        agent.start_deal(seat, rules)
    while not game.is_over:
        player = game.current_player
        infoset = InformationSet(game, player)
        start = time.perf_counter()
        action = agents[player].act(infoset)
        timings[player].append(time.perf_counter() - start)
        game.apply(action)
    return game.returns()


_WARMED_UP: set[tuple[str, str, str]] = set()  # the agent pairs and rules this process has warmed up


def warm_up(spec_a: str, spec_b: str, rules: Rules, preset: str) -> None:
    """Play one untimed deal between fresh instances of the two specs, once per process: the first decisions
    compile and load what the process keeps (the core's kernels, the solver), and would otherwise count as the slowest
    ones measured. Fresh instances, so the measured agents' random streams and every result stay as they were."""
    if (spec_a, spec_b, preset) in _WARMED_UP:
        return
    play_deal(rules, [make_agent(spec_a), make_agent(spec_b)], derived_seed("warm-up deck"), 0,
              [derived_seed("warm-up agent", seat) for seat in (0, 1)], [[], []])
    _WARMED_UP.add((spec_a, spec_b, preset))


def play_pairs(task: tuple) -> tuple[list[float], list[int], list[float], list[float]]:
    """Play deal pairs ``indices``; returns A's mean margin per pair, A's deal wins (+1/0/-1 each deal) and the
    decision times of A and B."""
    spec_a, spec_b, preset, seed, indices = task
    rules = Rules.preset(preset)
    warm_up(spec_a, spec_b, rules, preset)
    agent_a = make_agent(spec_a)
    agent_b = make_agent(spec_b)
    margins, outcomes, times_a, times_b = [], [], [], []
    for index in indices:
        deck_seed = derived_seed("deck", seed, index)
        dealer = index % 2
        total = 0
        for a_seat in (0, 1):
            seats = [agent_a, agent_b] if a_seat == 0 else [agent_b, agent_a]
            seeds = [derived_seed("agent", seed, index, a_seat, seat) for seat in (0, 1)]
            timings: list[list[float]] = [[], []]
            returns = play_deal(rules, seats, deck_seed, dealer, seeds, timings)
            total += returns[a_seat]
            outcomes.append((returns[a_seat] > 0) - (returns[a_seat] < 0))
            times_a.extend(timings[a_seat])
            times_b.extend(timings[1 - a_seat])
        margins.append(total / 2)
    return margins, outcomes, times_a, times_b


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quick_strength",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("agent_a", help="agent spec, e.g. heuristic")
    parser.add_argument("agent_b", help="agent spec, e.g. greedy")
    parser.add_argument("--deals", type=int, default=200, help="deal pairs to play (each deal twice, seats swapped)")
    parser.add_argument("--seed", type=int, default=0, help="master seed of the decks and agent seeds")
    parser.add_argument("--preset", default="standard", choices=PRESET_NAMES, help="rules preset (two players)")
    parser.add_argument("--workers", type=int, default=1, help="processes")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.deals < 2:
        parser.error("--deals must be at least 2")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    check_agent_specs(parser, [("agent_a", args.agent_a), ("agent_b", args.agent_b)], Rules.preset(args.preset))
    chunk = 25
    tasks = [(args.agent_a, args.agent_b, args.preset, args.seed, list(range(start, min(start + chunk, args.deals))))
             for start in range(0, args.deals, chunk)]
    started = time.perf_counter()
    margins: list[float] = []
    outcomes: list[int] = []
    times_a: list[float] = []
    times_b: list[float] = []
    if args.workers == 1:
        results = map(play_pairs, tasks)
    else:
        pool = Pool(args.workers)
        results = pool.imap(play_pairs, tasks)
    with tqdm(total=args.deals, unit="pair", desc="deal pairs", disable=args.no_progress, file=sys.stderr) as bar:
        for pair_margins, pair_outcomes, pair_times_a, pair_times_b in results:
            margins += pair_margins
            outcomes += pair_outcomes
            times_a += pair_times_a
            times_b += pair_times_b
            bar.update(len(pair_margins))
    if args.workers > 1:
        pool.close()
        pool.join()
    interval = mean_interval(margins)  # a t interval over deal pairs
    mean, half_width = interval.mean, interval.half_width
    wins = outcomes.count(1)
    losses = outcomes.count(-1)
    print(f"{args.agent_a} vs {args.agent_b}, preset {args.preset}, {len(margins)} deal pairs, seed {args.seed}")
    print(f"  margin per deal for {args.agent_a}: {mean:+.3f} game points, "
          f"95% CI [{mean - half_width:+.3f}, {mean + half_width:+.3f}]")
    print(f"  deals won/lost/unscored by {args.agent_a}: {wins}/{losses}/{len(outcomes) - wins - losses}")
    for spec, times in ((args.agent_a, times_a), (args.agent_b, times_b)):
        print(f"  {spec}: {len(times)} decisions, median {1000 * percentile(times, 50):.3f} ms, "
              f"p95 {1000 * percentile(times, 95):.3f} ms, max {1000 * max(times):.1f} ms")
    print(f"  wall time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
