"""Time per decision of several agents at the same positions, interleaved, on one core.

Issue 12 asks for a network that decides in at most 1 ms at p95 on one core. A match's timing table mixes an agent's
own time with whatever else the shared machine did meanwhile, and two matches run at different times are not
comparable (session 33 found the same code 2.6 times slower at p95 than in earlier sessions). Here every agent
decides at the same positions, the agents take turns position by position (who goes first rotates), and the whole
set is timed ``--repeats`` times after one untimed pass over the first deal: a slow spell of the machine falls on
all of them alike, and the spread of the repeats' p95 shows how noisy the run was.

The positions are every decision of ``heuristic`` self-play deals (phase 1 and phase 2, single legal actions
included), as a match would ask them. Each agent has one player per seat, told of each deal's start as in a match
(``start_deal``, re-seeded per deal), so agents that keep state across a deal see their seat's decisions in order.
The timed agents' choices are not played: ``heuristic`` plays every deal, so every agent meets the same positions.
The process is pinned to one core (``--core``), and BLAS libraries are held to one thread when this module starts
the interpreter (``python -m``).

    python -m bench.decision_time --deals 200 --seed 3400 --repeats 5 \\
        --agent suit_pair --agent suit_pair:precision=int8 --json results/decision_time_3400.json
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # one core: effective when nothing imported numpy before this module

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Sequence  # noqa: E402

from tqdm import tqdm  # noqa: E402

from agents import make_agent  # noqa: E402
from bench.checks import check_agent_specs, check_output_paths  # noqa: E402
from bench.decision_regret import heuristic_self_play  # noqa: E402
from eval.play import begin_deal, validated_action  # noqa: E402
from eval.stats import percentile, time_figures  # noqa: E402
from sixtysix_env import InformationSet, Rules  # noqa: E402
from sixtysix_env.fileio import write_json_atomic  # noqa: E402

FORMAT = "sixtysix-decision-time"


def self_play_positions(deals: int, seed: int, rules: Rules | None = None) -> list[list[InformationSet]]:
    """Every decision of ``deals`` deals of ``heuristic`` self-play (:func:`bench.decision_regret.heuristic_self_play`:
    deal ``d`` seeded ``seed + d``, dealer ``d % 2``), as information sets grouped by deal in the order asked."""
    if deals < 1:
        raise ValueError(f"deals must be at least 1, got {deals}")
    positions: list[list[InformationSet]] = [[] for _ in range(deals)]
    for deal, _game, infoset in heuristic_self_play(seed, rules):
        if deal == deals:
            break
        positions[deal].append(infoset)  # an information set keeps its own copy of the game (its template)
    return positions


def check_request(specs: Sequence[str], repeats: int) -> None:
    """Refuse a timing request without agents, with an agent named twice, or with no repeat."""
    if not specs:
        raise ValueError("name at least one agent to time (--agent SPEC)")
    if len(set(specs)) != len(specs):
        raise ValueError(f"each agent may be named once, got {list(specs)}")
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")


def time_decisions(specs: Sequence[str], positions: list[list[InformationSet]], repeats: int, seed: int = 0,
                   progress: bool = True) -> dict[str, Any]:
    """Each agent's time per decision (``act``) at every position, ``repeats`` times over: the figures over all
    timed decisions, and each repeat's p95 (milliseconds)."""
    check_request(specs, repeats)
    seats = {spec: [make_agent(spec, seed=seed + seat) for seat in range(2)] for spec in specs}

    def start_deal(number: int, rules: Rules) -> None:  # as a match starts a deal: re-seeded, then told
        for agents in seats.values():
            begin_deal(agents, rules, [seed + 2 * number + seat for seat in range(2)])

    start_deal(0, positions[0][0].rules)
    for spec in specs:  # untimed: compiled kernels and caches warm up before the first timed decision
        for infoset in positions[0]:
            seats[spec][infoset.player].act(infoset)
    times: dict[str, list[list[float]]] = {spec: [[] for _ in range(repeats)] for spec in specs}
    clock = time.perf_counter
    total = repeats * sum(len(deal) for deal in positions)
    turn = 0
    with tqdm(total=total, unit="position", desc="timing", disable=not progress, file=sys.stderr) as bar:
        for repeat in range(repeats):
            for number, deal in enumerate(positions):
                start_deal(number, deal[0].rules)
                for infoset in deal:
                    order = specs[turn % len(specs):] + specs[:turn % len(specs)]  # who goes first rotates
                    turn += 1
                    for spec in order:
                        agent = seats[spec][infoset.player]
                        started = clock()
                        action = agent.act(infoset)
                        elapsed = clock() - started
                        validated_action(action, infoset, spec)
                        times[spec][repeat].append(1000.0 * elapsed)
                    bar.update(1)
    return {spec: {**time_figures([value for run in runs for value in run]),
                   "repeat_p95_ms": [percentile(run, 95) for run in runs]}
            for spec, runs in times.items()}


def table(result: dict[str, Any]) -> str:
    lines = ["| agent | decisions | median | p95 | p99 | mean | max | p95 of each repeat |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for spec, figures in result.items():
        repeats = ", ".join(f"{value:.3f}" for value in figures["repeat_p95_ms"])
        lines.append(f"| `{spec}` | {figures['decisions']} | {figures['median_ms']:.3f} | {figures['p95_ms']:.3f} | "
                     f"{figures['p99_ms']:.3f} | {figures['mean_ms']:.3f} | {figures['max_ms']:.3f} | {repeats} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.decision_time", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--agent", action="append", default=[], help="agent spec to time (repeatable)")
    parser.add_argument("--deals", type=int, default=200, help="heuristic self-play deals (default 200)")
    parser.add_argument("--seed", type=int, default=3400, help="first deal seed (default 3400)")
    parser.add_argument("--repeats", type=int, default=5, help="times over the whole set (default 5)")
    parser.add_argument("--core", type=int, help="the core to pin the process to (default: the first one allowed)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error(f"--deals must be at least 1, got {args.deals}")
    try:  # before the self-play deals are played, not after
        check_request(args.agent, args.repeats)
    except ValueError as error:
        parser.error(str(error))
    check_agent_specs(parser, [("--agent", spec) for spec in args.agent])
    check_output_paths(parser, [("--json", args.json)])
    try:
        allowed = sorted(os.sched_getaffinity(0))
        core = allowed[0] if args.core is None else args.core
        if core not in allowed:
            raise ValueError(f"--core {core} is not one this process may run on ({allowed})")
        os.sched_setaffinity(0, {core})
        positions = self_play_positions(args.deals, args.seed)
        result = time_decisions(args.agent, positions, args.repeats, seed=args.seed,
                                progress=not args.no_progress)
    except ValueError as error:
        parser.error(str(error))
    print(f"{sum(len(deal) for deal in positions)} positions of {args.deals} deals (seed {args.seed}), "
          f"{args.repeats} repeats, core {core}; milliseconds per decision\n")
    print(table(result))
    if args.json is not None:
        write_json_atomic(args.json, {"format": FORMAT, "deals": args.deals, "seed": args.seed,
                                      "repeats": args.repeats, "core": core, "agents": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
