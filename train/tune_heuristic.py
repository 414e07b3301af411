"""Tune the numbers of the compiled heuristic as it plays inside the rollout search (agents/rollout.py).

The rollout search (`expert`) is a one-step improvement over the player that plays its rollouts, so a stronger
rollout player is a stronger search. That player is the compiled ``heuristic`` (sixtysix_env/core/heuristic.py)
with fewer samples and the rest solved from the talon's last trick (R7); its 24 numbers (card keep values by rank
for trumps and plain suits, the ten under the ace, marriage and exchange shares, trick bonuses, the worth of an
unseen draw, the closing filter and thresholds, R10) were set by hand in Python (agents/rule_based.py ``Weights``).
Here they are tuned by the same coordinate search as the playout policy (:mod:`train.tune_playout_policy`), in
duplicate duels of the compiled player against itself (:func:`sixtysix_env.core.heuristic.heuristic_duel`).

    python -m train.tune_heuristic --deals 6000 --sweeps 1 --out runs/rollout_player.json

The ``heuristic`` agent itself keeps its numbers: it is the benchmark every other agent is measured against.
The result plays as ``rollout:player=OUT.json``. Run with the defaults above (session 5, docs/strength.md), no
change passed its duel: the hand-set numbers are a local optimum of the player's own duels.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from agents.rollout import rollout_player_params

from .tune_playout_policy import check_search_arguments, coordinate_search, save_and_report, search_arguments

# What a zero entry is first tried at: card points for values, a share for shares.
ZERO_STEPS = {"pending_share": 0.1, "marriage_drawable": 0.05}


def duel(params_a: np.ndarray, params_b: np.ndarray, deals: int, seed: int, table,
         rule_bits: int) -> tuple[float, float]:
    """Mean margin of ``params_a`` per duplicate deal against ``params_b`` and its standard error."""
    from sixtysix_env.core.heuristic import heuristic_duel

    margins = np.zeros(deals)
    heuristic_duel(params_a, params_b, deals, seed, rule_bits, table.entries, table.nodes,
                   table.claim_worlds(deals), margins)
    return float(margins.mean()), float(margins.std(ddof=1) / math.sqrt(deals))


def main(argv: list[str] | None = None) -> int:
    from agents.rollout import ROLLOUT_ENDGAMES
    from sixtysix_env.core.solver import Table
    from sixtysix_env.core.state import core_rule_bits
    from sixtysix_env.rules import Rules

    parser = argparse.ArgumentParser(prog="python -m train.tune_heuristic",
                                     description=(__doc__ or "").split("\n\n")[0])
    search_arguments(parser, deals=6000, seed=8001, test_seed=9951)
    parser.add_argument("--lead-samples", type=int, default=6, help="the rollout player's lead samples (expert: 6)")
    parser.add_argument("--close-samples", type=int, default=6, help="the rollout player's closing samples (expert: 6)")
    parser.add_argument("--endgame", choices=ROLLOUT_ENDGAMES, default="last_trick",
                        help="where the duels stop and solve, as the rollouts do (expert: last_trick)")
    args = parser.parse_args(argv)
    for flag, samples in (("--lead-samples", args.lead_samples), ("--close-samples", args.close_samples)):
        if samples < 1:
            parser.error(f"{flag} must be at least 1, got {samples}")
    from sixtysix_env.core.heuristic import TUNABLE_SLOTS

    check_search_arguments(parser, args, len(TUNABLE_SLOTS))

    start = rollout_player_params(args.lead_samples, args.close_samples, args.endgame)
    names = list(TUNABLE_SLOTS)
    slots = [TUNABLE_SLOTS[name] for name in names]
    rule_bits = core_rule_bits(Rules.preset("standard"))
    table = Table(20)

    def duel_tuned(tuned_a, tuned_b, deals, seed):
        full_a, full_b = start.copy(), start.copy()
        full_a[slots], full_b[slots] = tuned_a, tuned_b
        return duel(full_a, full_b, deals, seed, table, rule_bits)

    result = coordinate_search(names, start[slots], duel_tuned, args.deals, args.sweeps, args.step, args.z,
                               args.seed, args.test_seed, ZERO_STEPS)
    save_and_report(result, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
