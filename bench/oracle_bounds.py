"""How much of the game is information: agents given hidden cards they may not see, against an honest opponent.

Research bounds for the search agents (docs/strength.md, "What limits the search"), not agents anyone may play:

* ``clairvoyant``: every decision by the exact whole-deal solver on the true deal (the opponent's hand and the
  talon order known; :mod:`sixtysix_env.core.solver`), against ``--opponent``;
* ``sees-hand SPEC``: the agent ``SPEC`` is handed an information set in which the opponent's hand is revealed
  (the talon order stays hidden), against ``--opponent``;
* ``oracle KINDS``: ``heuristic``, except that at the decisions of the comma-separated kinds it plays the
  clairvoyant solver's choice: ``phase1`` (talon open, no closing possible: follows, and leads where R10 forbids
  closing), ``close_option`` (leads where closing is legal, the card played included), ``close_only`` (with
  ``close_option``: only whether to close, by the solver's values, else the heuristic's card), ``closed`` (phase 2
  after a closing, R8, R10). Once the talon is used up (R7) the heuristic already plays exactly.

Every deal (deck from ``(seed, index)`` as :mod:`bench.quick_strength` draws it, dealer ``index % 2``) is played
twice with the seats swapped; the figure is the informed side's mean game points per deal with a 95% t interval
over the deal pairs::

    python -m bench.oracle_bounds clairvoyant --deals 200 --seed 777 --workers 2
    python -m bench.oracle_bounds sees-hand heuristic --deals 200 --seed 777 --workers 2
    python -m bench.oracle_bounds oracle phase1 --deals 150 --seed 777 --workers 2
"""

from __future__ import annotations

import argparse
from multiprocessing import Pool

from agents import make_agent
from eval.stats import mean_interval
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import CLOSE

from .quick_strength import derived_seed

ORACLE_KINDS = ("phase1", "close_option", "close_only", "closed")


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
    if game.closed_by is not None:
        return "closed"
    if game.phase2:
        return "exhausted"
    return "close_option" if CLOSE in game.legal_actions() else "phase1"


def informed_action(mode: str, argument: str, game: Game, agent, table) -> int:
    if mode == "clairvoyant":
        return clairvoyant_action(game, table)
    if mode == "sees-hand":
        return agent.act(hand_revealed(game, game.current_player))
    action = agent.act(InformationSet(game, game.current_player))
    kinds = set(argument.split(","))
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


def play_pairs(task: tuple) -> list[float]:
    """The informed side's mean game points over the two games of each deal pair of ``indices``."""
    from sixtysix_env.core.solver import Table

    mode, argument, opponent_spec, seed, indices = task
    rules = Rules.preset("standard")
    table = Table(20)
    margins = []
    for index in indices:
        deck_seed = derived_seed("deck", seed, index)
        total = 0
        for seat in (0, 1):
            opponent = make_agent(opponent_spec, seed=derived_seed("agent", seed, index, seat))
            opponent.start_deal(1 - seat, rules)
            agent = None
            if mode != "clairvoyant":
                agent = make_agent(argument if mode == "sees-hand" else "heuristic",
                                   seed=derived_seed("me", seed, index, seat))
                agent.start_deal(seat, rules)
            game = Game.deal(rules, seed=deck_seed, dealer=index % 2)
            while not game.is_over:
                player = game.current_player
                if player == seat:
                    action = informed_action(mode, argument, game, agent, table)
                else:
                    action = opponent.act(InformationSet(game, player))
                game.apply(action)
            total += game.returns()[seat]
        margins.append(total / 2)
    return margins


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.oracle_bounds", description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("clairvoyant", "sees-hand", "oracle"))
    parser.add_argument("argument", nargs="?", default="",
                        help="sees-hand: the agent spec; oracle: comma-separated kinds " + ", ".join(ORACLE_KINDS))
    parser.add_argument("--opponent", default="heuristic", help="the honest opponent's spec (default heuristic)")
    parser.add_argument("--deals", type=int, default=200, help="deal pairs (each deal twice, seats swapped)")
    parser.add_argument("--seed", type=int, default=777, help="master seed of the decks and agent seeds")
    parser.add_argument("--workers", type=int, default=1, help="processes")
    args = parser.parse_args(argv)
    if args.mode == "sees-hand":
        if not args.argument:
            parser.error("sees-hand needs an agent spec, e.g. heuristic")
        make_agent(args.argument)
    if args.mode == "oracle":
        unknown = set(args.argument.split(",")) - set(ORACLE_KINDS)
        if not args.argument or unknown:
            parser.error(f"oracle needs kinds among {', '.join(ORACLE_KINDS)}, got {args.argument!r}")
    if args.deals < 2 or args.workers < 1:
        parser.error("--deals must be at least 2 and --workers at least 1")
    make_agent(args.opponent)
    from tqdm import tqdm

    tasks = [(args.mode, args.argument, args.opponent, args.seed, [index])
             for index in range(args.deals)]
    margins: list[float] = []
    with Pool(args.workers) as pool, tqdm(total=args.deals, desc=args.mode, unit="pair") as progress:
        for result in pool.imap(play_pairs, tasks):
            margins += result
            progress.update(len(result))
    interval = mean_interval(margins)
    label = args.mode + (f" {args.argument}" if args.argument else "")
    print(f"{label} vs {args.opponent}: {interval.mean:+.3f} game points per deal, 95% CI "
          f"[{interval.low:+.3f}, {interval.high:+.3f}] over {len(margins)} deal pairs (seed {args.seed})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
