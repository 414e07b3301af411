"""How well a network's value of a position predicts the deal: the value a cut rollout's leaf would be given.

``rollout:leaf_tricks`` values the leaves of cut rollouts by a network from the view of the player to move there
(docs/strength.md, session 55). A leaf compares positions with each other, so what counts is the level of the value,
not only which action is best. At every phase-1 decision with a choice (talon open, R7) of ``heuristic`` self-play
deals, each estimator gives the game points the player to move expects, and the figure is how they go with the game
points (R16) he then scores: Pearson's r and the least-squares slope and intercept (``scipy.stats.linregress``). A
calibrated state value has a slope near 1 and an intercept near 0::

    python -m bench.leaf_calibration --deals 120 --seed 9000 --prior suit_iterated --critic ppo_true_world \\
        --critic models/ppo_standard.zip --out results/leaf_calibration_9000.json

``--prior NET`` is a q network's best legal action (its values times its temperature, as the prior's),
``--critic MODEL`` a PPO model's critic or a critic file of ``python -m train.critic``
(:func:`agents.ppo.load_critic`); one that reads the sampled world (its opponent's hand, the talon's order) is given
the true deal's.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from scipy.stats import linregress
from tqdm import tqdm

from agents.ppo import InfosetEncoder, QValueNetwork, load_critic, network_path_of_alias, reads_history
from sixtysix_env import Rules
from sixtysix_env.actions import NUM_ACTIONS
from sixtysix_env.core.critic_inputs import critic_features
from sixtysix_env.core.state import state_from_game
from sixtysix_env.fileio import write_text_atomic

from .checks import check_output_paths
from .inference_overlap import self_play_decisions


def estimators(priors: list[str], critics: list[str], rules: Rules) -> dict:
    """Each estimator by its label: a function of the true game and the mover's information set giving his expected
    game points (only a critic that reads the sampled world, ``train.critic``, looks at the game)."""
    found = {}
    for name in priors:
        _not_a_folder("--prior", name)
        try:
            network = QValueNetwork(name, where="--prior")
        except OSError as error:  # its own ValueErrors name --prior already
            raise ValueError(f"--prior {name!r}: {error}") from None
        encoder = InfosetEncoder(network.rules, history=reads_history(network.network))

        def best(game, infoset, network=network, encoder=encoder):
            legal = np.zeros((1, NUM_ACTIONS), dtype=bool)
            legal[0, infoset.legal_actions] = True
            return float(network.best_values(encoder.encode(infoset)[None], legal)[0])
        found[f"prior {name} (best action)"] = best
    for name in critics:
        _not_a_folder("--critic", name)
        try:
            critic, critic_rules = load_critic(network_path_of_alias(name))
        except (ValueError, OSError) as error:
            raise ValueError(f"--critic {name!r}: {error}") from None
        if critic_rules != rules:
            raise ValueError(f"--critic {name!r} was fitted for the rules {critic_rules.preset_name!r}, "
                             f"not {rules.preset_name!r}")
        encoder = InfosetEncoder(rules)

        def state_value(game, infoset, critic=critic, encoder=encoder):
            # A critic that reads beyond the observation sees the true deal, as a search's sampled world.
            features = critic_features(encoder.encode(infoset)[None], state_from_game(game)[None], critic.inputs)
            return float(critic.logits(features)[0, 0])
        found[f"critic {name}"] = state_value
    return found


def _not_a_folder(option: str, name: str) -> None:
    """Refuse a folder given as a network file (the loaders would call it a missing model)."""
    if Path(name).is_dir():
        raise ValueError(f"{option} {name!r} is a folder, not a network file")


def calibration(deals: int, seed: int, priors: list[str], critics: list[str], progress: bool = True) -> dict:
    """Per estimator: decisions, r, slope and intercept of the mover's game points on its value."""
    rules = Rules.preset("standard")
    return calibration_of(estimators(priors, critics, rules), deals, seed, rules, progress)


def calibration_of(found: dict, deals: int, seed: int, rules: Rules, progress: bool = True) -> dict:
    """The figures of :func:`calibration` for estimators already loaded (:func:`estimators`)."""
    values = {label: [] for label in found}
    outcomes = []
    pending: list[tuple[int, dict]] = []
    last_game = None
    decisions = self_play_decisions(tqdm(range(deals), desc="self-play deals", unit="deal", disable=not progress),
                                    seed, rules)
    for game, infoset in decisions:
        if game is not last_game:  # a new deal: settle the last one's decisions
            settle(last_game, pending, values, outcomes)
            last_game = game
        if not game.phase2 and len(infoset.legal_actions) > 1:
            pending.append((infoset.player, {label: value(game, infoset) for label, value in found.items()}))
    settle(last_game, pending, values, outcomes)
    result = {"deals": deals, "seed": seed, "decisions": len(outcomes), "estimators": {}}
    for label, column in values.items():
        fit = linregress(np.asarray(column), np.asarray(outcomes, dtype=float))
        result["estimators"][label] = {"r": float(fit.rvalue), "slope": float(fit.slope),
                                       "intercept": float(fit.intercept)}
    return result


def settle(game, pending: list, values: dict, outcomes: list) -> None:
    """Move ``pending`` decisions of the finished ``game`` into ``values`` and ``outcomes`` (the mover's points)."""
    if game is None:
        return
    returns = game.returns()
    for player, by_label in pending:
        for label, value in by_label.items():
            values[label].append(value)
        outcomes.append(returns[player])
    pending.clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.leaf_calibration",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=120, help="self-play deals of heuristic (default 120)")
    parser.add_argument("--seed", type=int, default=9000, help="deal d is dealt from seed + d (default 9000)")
    parser.add_argument("--prior", action="append", default=[], metavar="NET", help="a q network (repeatable)")
    parser.add_argument("--critic", action="append", default=[], metavar="MODEL",
                        help="a PPO model or a critic file of train.critic (repeatable)")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON (atomically)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error("--deals must be at least 1")
    if not args.prior and not args.critic:
        parser.error("name at least one --prior or --critic")
    check_output_paths(parser, [("--out", args.out)])
    rules = Rules.preset("standard")
    try:
        found = estimators(args.prior, args.critic, rules)  # every network loaded now, before the deals are played
    except (ValueError, OSError) as error:
        parser.error(str(error))
    result = calibration_of(found, args.deals, args.seed, rules, progress=not args.no_progress)
    print(f"{result['decisions']} phase-1 decisions of {args.deals} heuristic self-play deals (seed {args.seed})\n")
    print("| estimator | r | slope | intercept |\n| --- | ---: | ---: | ---: |")
    for label, fit in result["estimators"].items():
        print(f"| {label} | {fit['r']:.3f} | {fit['slope']:.3f} | {fit['intercept']:+.3f} |")
    if args.out:
        write_text_atomic(args.out, json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
