"""How far a search agent's choices fall from its own converged values: regret at sampled decisions.

A match of a few hundred deal pairs cannot tell apart two searches that differ by a few hundredths of a game point
per deal; a fixed set of positions can. The positions are the phase-1 decisions (talon open, R7; at least two legal
actions) of ``heuristic`` self-play deals with at least ``--min-talon`` cards in the talon. The **reference** values
every legal action there with the rollout search at many worlds, no clock and no pruning
(``expert_v3:samples=3000,seconds=none,prune=none`` by default: what the rollout search would find with unlimited
time, on one thread and without the network prior that ``expert`` shrinks toward since session 21). An
agent then decides at the same positions, and its **regret** is the reference value of the best action minus that
of the action it chose, in game points (R16); its **agreement** is the share of positions where it chose a best
one. A search that finds the reference's choices with fewer rollouts, or in less time, has a lower regret at the
same budget: the regret measures its noise, not the bias its rollout player shares with the reference. The
reference's own noise (about 0.02 game points between two actions at 3,000 worlds) puts a floor under every
agent's regret.

    python -m bench.decision_regret --positions 300 --seed 9160 --reference results/regret_reference_9160.json \\
        --agent expert --agent expert:seconds=0.4

``--labels WORLDS:HIDDEN`` scores the training labels of train/distill.py the same way: at each position the best
action of one label (``worlds`` rollouts of every action in the true deal, ``true_deal``, or in worlds drawn from the
decider's view, ``view``), how good a choice a single label is before any network fits it.

The reference is computed once and kept in ``--reference`` (written atomically after every position, so an
interrupted run resumes); later calls with the same file only run the agents.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Iterator

import numpy as np
from tqdm import tqdm

from agents import make_agent
from eval.stats import MeanInterval, ratio_interval
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.fileio import nonfinite_as_null, write_json_atomic
from sixtysix_env.schema import read_json_file, require_int, require_number, require_player

from .checks import check_agent_specs, check_output_paths

REFERENCE_SPEC = "expert_v3:samples=3000,seconds=none,prune=none"  # the rollouts alone, as in sessions 9-20
FORMAT = "sixtysix-decision-regret-reference"
POSITION_KEYS = ("deal_seed", "dealer", "history", "talon_size", "values")  # of each entry of "positions"
# The talon sizes of the positions (the standard deck's 12 cards after the deal, 2 fewer after each phase-1 trick):
# a talon range without one of them would make the sampling of positions search for ever.
TALON_SIZES = (2, 4, 6, 8, 10, 12)


def heuristic_self_play(seed: int, rules: Rules | None = None) -> Iterator[tuple[int, Game, InformationSet]]:
    """Every decision of ``heuristic`` self-play deals, deal ``d`` seeded ``seed + d`` with dealer ``d % 2``, as
    (``d``, the game, the mover's information set), without end; the game moves on once the next is asked for."""
    rules = rules or Rules()
    deal = 0
    while True:
        game = Game.deal(rules, seed=seed + deal, dealer=deal % 2)
        players = [make_agent("heuristic", seed=seed * 7 + 2 * deal + seat) for seat in range(2)]
        for seat, player in enumerate(players):
            player.start_deal(seat, game.rules)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            yield deal, game, infoset
            game.apply(players[game.current_player].act(infoset))
        deal += 1


def sampled_positions(count: int, seed: int, min_talon: int,
                      max_talon: int = 12) -> list[tuple[int, int, list[int]]]:
    """``count`` positions as (deal seed, dealer, actions so far): the phase-1 decisions with a choice and
    ``min_talon`` to ``max_talon`` talon cards of ``heuristic`` self-play deals seeded ``seed``, ``seed + 1``, ..."""
    positions = []
    if count <= 0:
        return positions
    for deal, game, infoset in heuristic_self_play(seed):
        if (len(infoset.legal_actions) > 1 and infoset.closed_by is None
                and max(min_talon, 1) <= infoset.talon_size <= max_talon):
            positions.append((seed + deal, deal % 2, list(game.history)))
            if len(positions) == count:
                return positions


def replay(position: tuple[int, int, list[int]]) -> Game:
    """The game of a position (its deal replayed to the decision)."""
    deal_seed, dealer, history = position
    game = Game.deal(Rules(), seed=deal_seed, dealer=dealer)
    for action in history:
        game.apply(action)
    return game


def load_reference(path: Path) -> dict:
    """A reference file written by :func:`build_reference`; a file of another kind is refused by name."""
    document = read_json_file(path, "regret reference")
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"{str(path)!r} is not a decision-regret reference (format {FORMAT!r})")
    if not isinstance(document.get("settings"), dict) or not isinstance(document.get("positions"), list):
        raise ValueError(f"regret reference {str(path)!r} lacks its settings or its list of positions")
    for index, entry in enumerate(document["positions"]):
        missing = [key for key in POSITION_KEYS if not isinstance(entry, dict) or key not in entry]
        if missing:
            raise ValueError(f"regret reference {str(path)!r}: position {index} lacks {', '.join(missing)}")
        _check_position(entry, f"regret reference {str(path)!r}: position {index}")
    return document


def _check_position(entry: dict, what: str) -> None:
    """Refuse a reference's position (its keys present) that is not one :func:`build_reference` writes: a
    hand-edited or truncated file failed later with a traceback, or an error that named neither file nor position."""
    require_int(entry["deal_seed"], f"{what}: deal_seed")
    require_player(entry["dealer"], f"{what}: dealer")
    history, values = entry["history"], entry["values"]
    if not isinstance(history, list):
        raise ValueError(f"{what}: history must be a list of action ids, got {history!r}")
    for action in history:
        require_int(action, f"{what}: history's action")
    if not isinstance(values, dict) or not values or not all(key.isdigit() for key in values):
        raise ValueError(f"{what}: values must map action ids to game points, got {values!r}")
    for action, value in values.items():
        require_number(value, f"{what}: the value of action {action}")
    try:
        game = replay((entry["deal_seed"], entry["dealer"], history))
    except ValueError as error:
        raise ValueError(f"{what}: its history does not replay: {error}") from None
    if game.is_over or entry["talon_size"] != game.talon_size or not {int(key) for key in values} <= set(
            game.legal_actions()):
        raise ValueError(f"{what}: the values (of actions {sorted(map(int, values))}) and talon_size "
                         f"{entry['talon_size']!r} are not those of the decision its history leads to")


def build_reference(path: Path, count: int, seed: int, min_talon: int, spec: str, progress: bool = True,
                    max_talon: int = 12) -> dict:
    """Value every action of ``count`` positions with ``spec`` (an agent with ``action_values``), resuming what
    ``path`` already holds for the same settings."""
    settings = {"positions": count, "seed": seed, "min_talon": min_talon, "reference": spec}
    if max_talon != 12:
        settings["max_talon"] = max_talon
    document = {"format": FORMAT, "settings": settings, "positions": []}
    if path.exists():
        document = load_reference(path)
        if document["settings"] != settings:
            raise ValueError(f"regret reference {str(path)!r} was made with {document['settings']}, not {settings}; "
                             f"give another file")
    searcher = make_agent(spec, seed=seed)
    if not hasattr(searcher, "action_values"):
        raise ValueError(f"reference agent {spec!r} has no action_values (a rollout or pimc search is needed)")
    positions = sampled_positions(count, seed, min_talon, max_talon)
    done = len(document["positions"])
    # A resume appends to what is stored: the stored positions must be the ones these settings sample today.
    for index, entry in enumerate(document["positions"]):
        if index >= count or (entry["deal_seed"], entry["dealer"], entry["history"]) != positions[index]:
            raise ValueError(f"regret reference {str(path)!r}: its position {index} is not the one these settings "
                             f"sample (a file of another version or edited); give another file")
    for index in tqdm(range(done, count), desc="reference", initial=done, total=count, disable=not progress):
        game = replay(positions[index])
        infoset = InformationSet(game, game.current_player)
        searcher.seed(seed * 1000 + index)
        searcher.start_deal(infoset.player, game.rules)
        values = searcher.action_values(infoset, None)
        deal_seed, dealer, history = positions[index]
        document["positions"].append({"deal_seed": deal_seed, "dealer": dealer, "history": history,
                                      "talon_size": infoset.talon_size,
                                      "values": {str(action): value for action, value in values.items()}})
        write_json_atomic(path, document)
    return document


def agent_seed(seed: int, repeat: int, index: int, positions: int) -> int:
    """The seed of an agent's ``repeat``-th decision at position ``index`` of ``positions``: a stride of 1,000 per
    repeat (the figures quoted so far), widened to ``positions`` when there are more, so that no two decisions of
    a run share a seed (with 1,000 stride, repeat r at index i + 1000 had repeat r + 1's seed at index i)."""
    return (seed + repeat) * max(1000, positions) + index


def agents_regret(document: dict, specs: list[str], seed: int = 0, progress: bool = True,
                  repeats: int = 1) -> list[dict]:
    """Regret, agreement, time and worlds per decision of each agent of ``specs`` at the reference's positions, each
    position decided ``repeats`` times with different seeds (its regret the mean). The agents take turns position by
    position, so a clocked search meets the same load on a shared machine as its peers."""
    agents = [make_agent(spec, seed=seed) for spec in specs]
    regrets = [[] for _ in specs]
    agreements = [[] for _ in specs]
    seconds = [[] for _ in specs]
    worlds = [[] for _ in specs]  # worlds searched per decision, for agents that report them (``last_worlds``)
    talons, deals = [], []  # per position: its talon size and its deal (the unit of the intervals)
    for index, entry in enumerate(tqdm(document["positions"], desc="positions", disable=not progress)):
        game = replay((entry["deal_seed"], entry["dealer"], entry["history"]))
        values = {int(key): value for key, value in entry["values"].items()}
        best = max(values.values())
        talons.append(entry["talon_size"])
        deals.append(entry["deal_seed"])
        for number, agent in enumerate(agents):
            position_regrets, position_agreements = [], []
            for repeat in range(repeats):
                infoset = InformationSet(game, game.current_player)
                agent.seed(agent_seed(seed, repeat, index, len(document["positions"])))
                agent.start_deal(infoset.player, game.rules)
                started = time.perf_counter()
                action = agent.act(infoset)
                seconds[number].append(time.perf_counter() - started)
                if hasattr(agent, "last_worlds"):
                    worlds[number].append(agent.last_worlds)
                # An action the reference pruned or never valued counts as its worst valued one (it lost to that).
                chosen = values.get(action, min(values.values()))
                position_regrets.append(best - chosen)
                position_agreements.append(chosen == best)
            regrets[number].append(float(np.mean(position_regrets)))
            agreements[number].append(float(np.mean(position_agreements)))
    return [summarised(spec, regrets[number], agreements[number], seconds[number], worlds[number], talons, deals)
            for number, spec in enumerate(specs)]


def over_deals(values: list[float], deals: list[int]) -> MeanInterval:
    """The mean of ``values`` (one per position) with a t interval over the deals they come from: the positions of
    one deal share its cards and its history, so the deal is the independent unit (a ratio of the deals' sums over
    their positions, :func:`eval.stats.ratio_interval`)."""
    sums: dict[int, list[float]] = {}
    for value, deal in zip(values, deals):
        entry = sums.setdefault(deal, [0.0, 0])
        entry[0] += value
        entry[1] += 1
    return ratio_interval([entry[0] for entry in sums.values()], [entry[1] for entry in sums.values()])


def summarised(name: str, regrets: list[float], agreements: list[float], seconds: list[float], worlds: list,
               talons: list[int], deals: list[int]) -> dict:
    """One row of the table: mean regret and its standard error over deals, agreement, time and worlds per decision,
    regret by talon size, and the regrets and deals position by position (for paired differences)."""
    regrets_array = np.array(regrets)
    interval = over_deals(regrets, deals)
    by_talon = {talon: float(regrets_array[np.array(talons) == talon].mean()) for talon in sorted(set(talons))}
    return {
        "agent": name,
        "positions": len(regrets_array),
        "mean_regret": float(regrets_array.mean()),
        "deals": len(set(deals)),
        "regret_se": float(interval.std / np.sqrt(interval.n)) if interval.n > 1 else float("nan"),
        "agreement": float(np.mean(agreements)),
        "median_ms": 1000 * statistics.median(seconds),
        "median_worlds": statistics.median(worlds) if worlds else None,
        "regret_by_talon": by_talon,
        "regrets": list(regrets),
        "position_deals": list(deals),
    }


def labels_regret(document: dict, worlds: int, hidden: str, seed: int = 0) -> dict:
    """The regret of the best action by a distillation label (``sixtysix_env.core.labels.value_actions``: ``worlds``
    rollouts of every action, in the true deal with the talon reordered, ``true_deal``, or in worlds drawn from the
    decider's view, ``view``) at the reference's positions: how good a choice one label is before any network
    fits it. A ``true_deal`` label knows the opponent's hand, which no player does."""
    from agents.rollout import rollout_player_params
    from agents.solver import ROLLOUT_TABLE_BITS, core_table
    from sixtysix_env.core import state_from_game
    from sixtysix_env.core.labels import value_actions
    from sixtysix_env.core.search import seed_kernels

    params, table = rollout_player_params(), core_table(ROLLOUT_TABLE_BITS)
    regrets, agreements, seconds, talons, deals = [], [], [], [], []
    for index, entry in enumerate(document["positions"]):
        game = replay((entry["deal_seed"], entry["dealer"], entry["history"]))
        values = {int(key): value for key, value in entry["values"].items()}
        labels = np.full(NUM_ACTIONS, np.nan)
        seed_kernels(seed * 1000 + index)
        started = time.perf_counter()
        value_actions(state_from_game(game), game.current_player, params, worlds, hidden == "view", table.entries,
                      table.nodes, table.claim_worlds(worlds), labels)
        seconds.append(time.perf_counter() - started)
        chosen = values.get(int(np.nanargmax(labels)), min(values.values()))
        regrets.append(max(values.values()) - chosen)
        agreements.append(chosen == max(values.values()))
        talons.append(entry["talon_size"])
        deals.append(entry["deal_seed"])
    return summarised(f"labels:worlds={worlds},hidden={hidden}", regrets, agreements, seconds, [], talons, deals)


def paired_difference(first: dict, second: dict) -> MeanInterval:
    """``first``'s regret minus ``second``'s, position by position, with a t interval over deals."""
    differences = np.array(first["regrets"]) - np.array(second["regrets"])
    return over_deals(differences.tolist(), first["position_deals"])


def parse_labels(text: str) -> tuple[int, str]:
    """``WORLDS:HIDDEN`` of ``--labels``, refused by name when malformed."""
    worlds, _, hidden = text.partition(":")
    if not worlds.isdigit() or int(worlds) < 1 or hidden not in ("true_deal", "view"):
        raise ValueError(f"--labels must be WORLDS:HIDDEN with a positive number of worlds and HIDDEN true_deal or "
                         f"view, got {text!r}")
    return int(worlds), hidden


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.decision_regret",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--reference", type=Path, required=True, help="reference file (built when missing)")
    parser.add_argument("--positions", type=int, default=300, help="positions of a new reference (default 300)")
    parser.add_argument("--seed", type=int, default=9160, help="first deal seed of a new reference (default 9160)")
    parser.add_argument("--min-talon", type=int, default=8,
                        help="positions with at least this many talon cards (default 8: the first three tricks)")
    parser.add_argument("--max-talon", type=int, default=12, help="and at most this many (default 12)")
    parser.add_argument("--reference-spec", default=REFERENCE_SPEC, help=f"default {REFERENCE_SPEC}")
    parser.add_argument("--agent", action="append", default=[], help="agent spec to measure (repeatable)")
    parser.add_argument("--agent-seed", type=int, default=0, help="seed of the agents' generators (default 0)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="decisions per agent and position, with different seeds (default 1)")
    parser.add_argument("--labels", action="append", default=[], metavar="WORLDS:HIDDEN",
                        help="also the best action of one distillation label per position, e.g. 16:view or "
                             "4:true_deal (repeatable; train/distill.py label.worlds and label.hidden)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.positions < 1 or args.min_talon < 0 or args.repeats < 1:
        parser.error("--positions and --repeats must be positive and --min-talon non-negative")
    if not args.min_talon <= args.max_talon <= TALON_SIZES[-1] or not any(
            args.min_talon <= size <= args.max_talon for size in TALON_SIZES):
        parser.error(f"--min-talon {args.min_talon} to --max-talon {args.max_talon} holds no talon size of a "
                     f"position ({', '.join(map(str, TALON_SIZES))} cards)")
    # The agents and the reference's searcher are built now, not after the reference has been computed.
    check_agent_specs(parser, [("--reference-spec", args.reference_spec)] + [("--agent", spec) for spec in args.agent])
    check_output_paths(parser, [("--reference", args.reference), ("--json", args.json)])
    try:
        labels = [parse_labels(text) for text in args.labels]  # before the reference, which may take long
        document = build_reference(args.reference, args.positions, args.seed, args.min_talon, args.reference_spec,
                                   progress=not args.no_progress, max_talon=args.max_talon)
        results = agents_regret(document, args.agent, args.agent_seed, progress=not args.no_progress,
                                repeats=args.repeats)
        results += [labels_regret(document, worlds, hidden, args.agent_seed) for worlds, hidden in labels]
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"reference: {args.reference_spec} at {len(document['positions'])} positions (seed {args.seed}, "
          f"talon {args.min_talon}-{args.max_talon})")
    print("| agent | mean regret (game points) | ± SE over deals | agreement | median ms | median worlds | "
          "minus the first agent (95%, over deals) |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for result in results:
        difference = ""
        if result is not results[0]:
            interval = paired_difference(result, results[0])
            difference = f"{interval.mean:+.4f} ± {interval.half_width:.4f}"
        worlds = "—" if result["median_worlds"] is None else f"{result['median_worlds']:g}"
        print(f"| `{result['agent']}` | {result['mean_regret']:.4f} | {result['regret_se']:.4f} | "
              f"{result['agreement']:.3f} | {result['median_ms']:.1f} | {worlds} | {difference} |")
    if args.json:
        # An SE over one deal is undefined (NaN, ± inf printed): null in the file, which is still written.
        write_json_atomic(args.json, nonfinite_as_null({"reference": str(args.reference), "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
