"""Where a rollout search stops at its world cap (``samples``) before its clock, and whether it had decided there.

``expert`` searches each decision until its clock (0.1 s) or its ``samples`` worlds run out, and stops sooner once
the prune leaves one action. This plays ``--deals`` deals of ``--agent`` against ``--opponent`` (the agent dealer in
the even deals) and prints, by talon size (R4; 0 after a closing, R10), the searched decisions, how many of them ended
at the cap, the median worlds and time, and the share where two actions or more were still in contention at the end
(docs/strength.md, "Seeds of session 86")::

    python -m bench.world_cap --deals 40 --seed 9100

The times are wall clock on whatever the machine is doing, so only the worlds are exact; run it alone.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agents.registry import make_agent
from sixtysix_env import Game, InformationSet, Rules


def searched_decisions(agent_spec: str, opponent_spec: str, deals: int, seed: int,
                       progress: bool = True) -> tuple[np.ndarray, int]:
    """(One row per decision the agent searched (``last_values`` set, two legal actions or more): seconds, worlds,
    actions kept at the end, the open talon's size (0 once closed); the agent's world cap). Deal ``i`` is
    ``seed + i``, the agent's seat ``i % 2`` and its dealer too."""
    from tqdm.auto import tqdm

    rules = Rules.preset("standard")
    agent, opponent = make_agent(agent_spec, seed=seed), make_agent(opponent_spec, seed=seed + 1)
    if not (hasattr(agent, "samples") and hasattr(agent, "last_worlds")):
        raise ValueError(f"agent {agent_spec!r} has no world cap (samples): a rollout search such as expert has")
    rows = []
    for index in tqdm(range(deals), desc="world cap: deals", unit="deal", disable=not progress, dynamic_ncols=True):
        game = Game.deal(rules, seed=seed + index, dealer=index % 2)
        seat = index % 2
        agent.start_deal(seat, rules)
        opponent.start_deal(1 - seat, rules)
        while not game.is_over:
            mover = game.current_player
            infoset = InformationSet(game, mover)
            if mover != seat:
                game.apply(opponent.act(infoset))
                continue
            start = time.perf_counter()
            action = agent.act(infoset)
            seconds = time.perf_counter() - start
            if len(infoset.legal_actions) > 1 and agent.last_values:
                talon = 0 if game.closed_by is not None else game.talon_size
                rows.append((seconds, agent.last_worlds, len(agent.last_values), talon))
            game.apply(action)
    return np.array(rows, dtype=float).reshape(-1, 4), agent.samples


def cap_table(rows: np.ndarray, cap: int) -> list[str]:
    """Markdown rows by talon size, then all decisions: searched, at the cap, median worlds and ms, and the share of
    the decisions at the cap where two actions or more were still kept."""
    lines = ["| talon | searched | at the cap | median worlds | median ms | at the cap with 2+ actions kept |",
             "|---:|---:|---:|---:|---:|---:|"]
    groups = [(str(int(size)), rows[:, 3] == size) for size in sorted(set(rows[:, 3].tolist()), reverse=True)]
    for label, selected in groups + [("all", np.ones(len(rows), dtype=bool))]:
        part = rows[selected]
        capped = part[:, 1] >= cap
        kept = f"{np.mean(part[capped, 2] > 1):.2f}" if capped.any() else "–"
        lines.append(f"| {label} | {len(part)} | {int(capped.sum())} | {np.median(part[:, 1]):.0f} | "
                     f"{1000 * np.median(part[:, 0]):.1f} | {kept} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.world_cap", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--agent", default="expert", help="a rollout search spec (default expert)")
    parser.add_argument("--opponent", default="heuristic", help="its opponent's spec (default heuristic)")
    parser.add_argument("--deals", type=int, default=40, help="deals to play (default 40)")
    parser.add_argument("--seed", type=int, default=9100, help="the first deal's seed (default 9100)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error(f"--deals must be at least 1, got {args.deals}")
    try:
        rows, cap = searched_decisions(args.agent, args.opponent, args.deals, args.seed, progress=not args.no_progress)
    except ValueError as error:
        parser.error(str(error))
    if not len(rows):
        print("no searched decision")
        return 0
    print(f"{args.agent} against {args.opponent}, {args.deals} deals from seed {args.seed}, cap {cap} worlds")
    print("\n".join(cap_table(rows, cap)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
