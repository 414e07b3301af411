"""How much of the game is information: agents given hidden cards they may not see, against an honest opponent.

Research bounds for the search agents (docs/strength.md, "What limits the search"), not agents anyone may play:

* ``clairvoyant``: every decision by the exact whole-deal solver on the true deal (the opponent's hand and the
  talon order known; :mod:`sixtysix_env.core.solver`), against ``--opponent``;
* ``sees-hand SPEC``: the agent ``SPEC`` is handed an information set in which the opponent's hand is revealed
  (the talon order stays hidden), against ``--opponent``; with ``--sees-at KINDS`` only at those kinds of decision
  (the oracle's kinds below), its own information set elsewhere; ``close_only``: at leads where closing is legal the
  agent is asked on both information sets, and the informed one decides only whether to close (R10), the honest one
  which card to lead otherwise; where the honest twin would close and the informed one does not, the honest twin has
  named no card, so the informed one's card is led, and there a little of the hand's knowledge reaches the card (a
  bound on closing alone that is slightly high);
* ``oracle KINDS``: ``--base`` (``heuristic`` by default), except that at the decisions of the comma-separated
  kinds it plays the clairvoyant solver's choice: ``phase1`` (talon open, no closing possible: follows, and leads
  where R10 forbids closing), ``close_option`` (leads where closing is legal, the card played included),
  ``close_only`` (with ``close_option``: only whether to close, by the solver's values, else the base's card),
  ``closed`` (phase 2 after a closing, R8, R10), ``closed_mine`` / ``closed_theirs`` (the same after a closing by
  the informed side / by its opponent). Once the talon is used up (R7) there is nothing hidden left.

Every deal (deck from ``(seed, index)`` as :mod:`bench.quick_strength` draws it, dealer ``index % 2``) is played
twice with the seats swapped; the figure is the informed side's mean game points per deal with a 95% t interval
over the deal pairs. With ``--paired`` every deal pair is also played by the honest peer (the ``sees-hand`` agent
with its own information set, or ``--base``), with the same agent seeds, and the paired difference (informed minus
honest) says what the information is worth to that agent, the deals' luck cancelled. Give it a search without a
clock (``seconds=none``): a timed search sees other worlds in the two games, which then part ways at the first
decision and carry the whole deal's noise into the difference (docs/strength.md, "Session 23")::

    python -m bench.oracle_bounds clairvoyant --deals 200 --seed 777 --workers 2
    python -m bench.oracle_bounds sees-hand heuristic --deals 200 --seed 777 --workers 2
    python -m bench.oracle_bounds sees-hand expert:seconds=none,samples=300 --sees-at close_option --paired --deals 500
    python -m bench.oracle_bounds oracle phase1 --deals 150 --seed 777 --workers 2
    python -m bench.oracle_bounds oracle closed --base expert:seconds=none,samples=300 --paired --deals 500 --seed 2324
"""

from __future__ import annotations

import argparse
from multiprocessing import Pool

from agents import make_agent
from eval.stats import mean_interval
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import CLOSE

from .checks import check_agent_specs
from .quick_strength import derived_seed

ORACLE_KINDS = ("phase1", "close_option", "close_only", "closed", "closed_mine", "closed_theirs")
SEES_AT_KINDS = ("phase1", "close_option", "close_only", "closed", "closed_mine", "closed_theirs")  # not exhausted


def solver_values(game: Game, table) -> dict[int, int]:
    """Exact game points of every legal action for the player to move, the true deal known."""
    from sixtysix_env.core import state_from_game
    from sixtysix_env.core.solver import action_values

    table.new_world()
    return action_values(state_from_game(game), table)


def clairvoyant_action(game: Game, table) -> int:
    legal = game.legal_actions()
    if len(legal) == 1:
        return legal[0]
    values = solver_values(game, table)
    return max(legal, key=lambda action: (values[action], -action))


def hand_revealed(game: Game, player: int) -> InformationSet:
    """``player``'s information set with the opponent's hand added to what he knows (the talon stays hidden)."""
    infoset = InformationSet(game, player)
    hand = game.hands[1 - player]
    infoset.opponent_known = hand
    infoset.unseen &= ~hand
    infoset._template.hands[1 - player] = hand
    return infoset


def decision_kind(game: Game) -> str:
    """The oracle kind of the decision of the player to move (module doc)."""
    if game.closed_by is not None:
        return "closed_mine" if game.closed_by == game.current_player else "closed_theirs"
    if game.phase2:
        return "exhausted"
    return "close_option" if CLOSE in game.legal_actions() else "phase1"


def _with_closed_kinds(kinds: set[str]) -> set[str]:
    """``closed`` stands for both kinds of decision after a closing (R10)."""
    return kinds | {"closed_mine", "closed_theirs"} if "closed" in kinds else kinds


def informed_action(mode: str, argument: str, game: Game, agent, table, sees_at: frozenset | None = None,
                    revealed_agent=None) -> int:
    """The informed side's action: ``mode`` as in the module doc, or ``honest`` (the agent on its own information
    set: the ``--paired`` peer); ``sees_at``: the kinds of decision at which ``sees-hand`` reveals the hand (None:
    all); ``revealed_agent``: with ``close_only``, the agent asked on the revealed information set (``agent`` if
    None), so that ``agent`` answers the same questions with the same random stream as its honest twin."""
    if mode == "clairvoyant":
        return clairvoyant_action(game, table)
    if mode == "sees-hand":
        kind = decision_kind(game)
        if sees_at is not None and "close_only" in sees_at and kind == "close_option":
            honest = agent.act(InformationSet(game, game.current_player))
            informed = (revealed_agent or agent).act(hand_revealed(game, game.current_player))
            # The informed side decides whether to close; the honest one's card stands unless it would close.
            return informed if CLOSE in (informed, honest) else honest
        if sees_at is not None and kind not in _with_closed_kinds(set(sees_at)):
            return agent.act(InformationSet(game, game.current_player))
        return agent.act(hand_revealed(game, game.current_player))
    action = agent.act(InformationSet(game, game.current_player))  # asked even where the oracle decides: the
    if mode == "honest":  # agent's random stream stays that of its honest twin
        return action
    kinds = _with_closed_kinds(set(argument.split(",")))
    kind = decision_kind(game)
    if len(game.legal_actions()) == 1 or kind not in kinds:
        return action
    values = solver_values(game, table)
    if kind == "close_option" and "close_only" in kinds:
        if values[CLOSE] >= max(values.values()):
            return CLOSE
        if action == CLOSE:
            return max((a for a in values if a != CLOSE), key=lambda a: values[a])
        return action
    return max(game.legal_actions(), key=lambda a: (values[a], -a))


def informed_spec(mode: str, argument: str, base: str) -> str | None:
    """The agent behind the informed side (``None`` for the clairvoyant solver alone)."""
    return None if mode == "clairvoyant" else argument if mode == "sees-hand" else base


def play_game(mode: str, argument: str, base: str, opponent_spec: str, seed: int, index: int, seat: int,
              table, sees_at: frozenset | None = None) -> tuple[int, list[int], list[bool]]:
    """One game of deal ``index`` with the informed side in ``seat``: its game points (R16), the actions played and,
    for each, whether the informed side chose it (``sees_at``: :func:`informed_action`)."""
    rules = Rules.preset("standard")
    opponent = make_agent(opponent_spec, seed=derived_seed("agent", seed, index, seat))
    opponent.start_deal(1 - seat, rules)
    spec = informed_spec(mode, argument, base)
    agent = revealed_agent = None
    if spec is not None:
        agent = make_agent(spec, seed=derived_seed("me", seed, index, seat))
        agent.start_deal(seat, rules)
        if mode == "sees-hand" and sees_at is not None and "close_only" in sees_at:
            # A second instance answers the revealed question, so the first keeps its honest twin's random stream.
            revealed_agent = make_agent(spec, seed=derived_seed("me revealed", seed, index, seat))
            revealed_agent.start_deal(seat, rules)
    game = Game.deal(rules, seed=derived_seed("deck", seed, index), dealer=index % 2)
    actions, mine = [], []
    while not game.is_over:
        player = game.current_player
        if player == seat:
            action = informed_action(mode, argument, game, agent, table, sees_at, revealed_agent)
        else:
            action = opponent.act(InformationSet(game, player))
        actions.append(action)
        mine.append(player == seat)
        game.apply(action)
    return game.returns()[seat], actions, mine


def play_pairs(task: tuple) -> list[tuple[float, float | None]]:
    """For each deal pair of ``indices``: the informed side's mean game points over its two games and, with
    ``paired``, the honest peer's on the same pair (else ``None``)."""
    from sixtysix_env.core.solver import Table

    mode, argument, base, opponent_spec, seed, indices, paired, sees_at = task
    table = Table(20)
    peer = argument if mode == "sees-hand" else base  # the honest twin of the informed side
    margins = []
    for index in indices:
        informed = sum(play_game(mode, argument, base, opponent_spec, seed, index, seat, table, sees_at)[0]
                       for seat in (0, 1)) / 2
        honest = None
        if paired:
            honest = sum(play_game("honest", "", peer, opponent_spec, seed, index, seat, table)[0]
                         for seat in (0, 1)) / 2
        margins.append((informed, honest))
    return margins


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.oracle_bounds", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("mode", choices=("clairvoyant", "sees-hand", "oracle"))
    parser.add_argument("argument", nargs="?", default="",
                        help="sees-hand: the agent spec; oracle: comma-separated kinds " + ", ".join(ORACLE_KINDS))
    parser.add_argument("--opponent", default="heuristic", help="the honest opponent's spec (default heuristic)")
    parser.add_argument("--base", default="heuristic",
                        help="oracle: the agent that makes the decisions the oracle does not; clairvoyant: the honest "
                             "peer of --paired (default heuristic)")
    parser.add_argument("--sees-at", default=None, metavar="KINDS",
                        help="sees-hand: reveal the hand only at these comma-separated kinds of decision, among "
                             + ", ".join(SEES_AT_KINDS) + " (default: every decision)")
    parser.add_argument("--paired", action="store_true",
                        help="also play every deal pair with the honest peer (the sees-hand agent, or --base) and "
                             "report the paired difference")
    parser.add_argument("--deals", type=int, default=200, help="deal pairs (each deal twice, seats swapped)")
    parser.add_argument("--seed", type=int, default=777, help="master seed of the decks and agent seeds")
    parser.add_argument("--workers", type=int, default=1, help="processes")
    args = parser.parse_args(argv)
    if args.mode == "sees-hand":
        if not args.argument:
            parser.error("sees-hand needs an agent spec, e.g. heuristic")
    if args.mode == "clairvoyant" and args.argument:  # it would stand in the printed label, and change nothing
        parser.error(f"clairvoyant takes no argument (its honest peer of --paired is --base), got {args.argument!r}")
    sees_at = None
    if args.sees_at is not None:
        sees_at = frozenset(args.sees_at.split(","))
        if args.mode != "sees-hand" or not sees_at <= set(SEES_AT_KINDS):
            parser.error(f"--sees-at goes with sees-hand and takes kinds among {', '.join(SEES_AT_KINDS)}, got "
                         f"{args.sees_at!r}")
        if {"close_only", "close_option"} <= sees_at:  # else close_only would silently take the close_option leads
            parser.error("--sees-at takes close_only (the hand decides only whether to close at the close_option "
                         "leads) or close_option (it decides the whole lead there), not both")
    if args.mode == "oracle":
        kinds = set(args.argument.split(","))
        if not args.argument or kinds - set(ORACLE_KINDS):
            parser.error(f"oracle needs kinds among {', '.join(ORACLE_KINDS)}, got {args.argument!r}")
        if "close_only" in kinds and "close_option" not in kinds:  # else the base decides everything, silently
            parser.error(f"oracle close_only goes with close_option (it leaves the solver only whether to close at "
                         f"the close_option leads), got {args.argument!r}")
    if args.deals < 2 or args.workers < 1:
        parser.error("--deals must be at least 2 and --workers at least 1")
    specs = [("--opponent", args.opponent), ("--base", args.base)]
    check_agent_specs(parser, [("sees-hand", args.argument)] + specs if args.mode == "sees-hand" else specs)
    from tqdm import tqdm

    tasks = [(args.mode, args.argument, args.base, args.opponent, args.seed, [index], args.paired, sees_at)
             for index in range(args.deals)]
    results: list[tuple[float, float | None]] = []
    with Pool(args.workers) as pool, tqdm(total=args.deals, desc=args.mode, unit="pair") as progress:
        for result in pool.imap(play_pairs, tasks):
            results += result
            progress.update(len(result))
    informed = [margin for margin, _ in results]
    spec = informed_spec(args.mode, args.argument, args.base)
    label = args.mode + (f" {args.argument}" if args.argument else "") + (
        f" (base {args.base})" if args.mode == "oracle" else "") + (f" at {args.sees_at}" if sees_at else "")
    print(_figure(label, args.opponent, informed, args.seed))
    if args.paired:
        honest = [margin for _, margin in results]
        print(_figure(f"honest {spec or args.base}", args.opponent, honest, args.seed))
        print(_figure(f"{label} minus honest {spec or args.base}, paired", args.opponent,
                      [a - b for a, b in zip(informed, honest)], args.seed))
    return 0


def _figure(label: str, opponent: str, margins: list[float], seed: int) -> str:
    interval = mean_interval(margins)
    return (f"{label} vs {opponent}: {interval.mean:+.3f} game points per deal, 95% CI "
            f"[{interval.low:+.3f}, {interval.high:+.3f}] over {len(margins)} deal pairs (seed {seed})")


if __name__ == "__main__":
    raise SystemExit(main())
