"""Calibration of the opponent models of agents/inference.py on self-play of an agent (``heuristic`` by default).

A model of the opponent's play helps a sampling search only if, on average, the opponent's *true* hand gets more
likelihood than the worlds the search samples. At every decision of ``--deals`` self-play deals this takes the ratio
(likelihood of the true hidden hand) / (mean likelihood of ``--worlds`` sampled worlds) and reports its geometric
mean (above 1: the kept worlds are closer to the truth than uniform ones; below 1: the model misleads), for each kind
and for a grid of the play model's temperatures and uniform mixes (``--scales``, ``--mixes``).

With ``--fit`` it fits the play model to single plays instead: the log-likelihood per phase-1 lead and per follow
of the agent (not on the talon's last trick) for each temperature and mix, and how often the agent's play is the
model's best.

    python -m bench.inference_calibration --fit --deals 150 --seed 1000

With ``--agreement SPEC`` it also asks, at every decision with evidence and a choice, ``expert`` under two seeds and
``SPEC`` (e.g. ``pimc:samples=1000,override_margin=0.25,inference=rules``) under the second seed, and reports how
often each pair chooses differently: a variant whose choices differ from ``expert`` no more often than ``expert``
reseeded cannot differ much in strength.

    python -m bench.inference_calibration --deals 40 --seed 500 --worlds 60
    python -m bench.inference_calibration --deals 25 --seed 700 --worlds 1 --scales 1 --mixes 0.5 \
        --agreement pimc:samples=1000,override_margin=0.25,inference=rules
"""

from __future__ import annotations

import argparse
import math
import random

from tqdm import tqdm

import agents.inference as inference
from agents.registry import make_agent
from sixtysix_env import Game, InformationSet, Rules

from .checks import check_agent_specs


def positions(agent_spec: str, deals: int, seed: int) -> list[tuple[InformationSet, int]]:
    """Every decision of ``deals`` self-play deals (seeds ``seed``...), with the opponent's true hand."""
    found = []
    rules = Rules.preset("standard")
    for deal in tqdm(range(deals), desc="self-play deals"):
        game = Game.deal(rules, seed=seed + deal, dealer=deal % 2)
        players = [make_agent(agent_spec, seed=2 * (seed + deal)), make_agent(agent_spec, seed=2 * (seed + deal) + 1)]
        for player, agent in enumerate(players):
            agent.start_deal(player, rules)
        while not game.is_over:
            player = game.current_player
            infoset = InformationSet(game, player)
            found.append((infoset, game.hands[1 - player]))
            game.apply(players[player].act(infoset))
    return found


def fit_single_plays(found, scales: list[float], mixes: list[float]) -> None:
    """Print the play model's log-likelihood of each phase-1 lead and follow at each temperature and mix."""
    from agents.rule_based import is_phase2, on_last_talon_trick

    plays = {False: [], True: []}  # following? -> [(scores, played)]
    for (infoset, _hand), (next_infoset, _next) in zip(found, found[1:]):
        if is_phase2(infoset) or on_last_talon_trick(infoset) or len(next_infoset.history) <= len(infoset.history):
            continue
        played = next_infoset.history[len(infoset.history)]
        following = infoset.lead_card >= 0
        if played >= 24 or (not following and infoset.history and infoset.history[-1] >= 24):
            continue  # a marriage, exchange or closing, or a lead after one: not a plain choice of card
        hand = infoset.hand
        won = 0
        for trick in infoset.tricks:
            won |= (1 << trick[1]) | (1 << trick[2])
        plays[following].append((inference.play_scores(following, hand, infoset.lead_card, won,
                                                         infoset.trump_suit), played))
    for following, name, base in ((False, "lead", inference.LEAD_TEMPERATURE),
                                  (True, "follow", inference.FOLLOW_TEMPERATURE)):
        samples = plays[following]
        if not samples:
            print(f"no {name}s to fit")
            continue
        best = sum(max(scores, key=scores.get) == played for scores, played in samples) / len(samples)
        print(f"{len(samples)} {name}s; the model's best is the agent's in {best:.0%}; uniform: "
              f"{sum(-math.log(len(scores)) for scores, _ in samples) / len(samples):.3f} nats per {name}")
        for scale in scales:
            for mix in mixes:
                total = 0.0
                for scores, played in samples:
                    top = max(scores.values())
                    weights = {card: math.exp((score - top) / (base * scale)) for card, score in scores.items()}
                    chance = mix / len(weights) + (1 - mix) * weights[played] / sum(weights.values())
                    total += math.log(chance) if chance > 0 else -math.inf  # no mix: a play it never makes
                print(f"  temperature {base * scale:.3g} card points, mix {mix}: {total / len(samples):.3f} nats")


def agreement(found, spec: str) -> tuple[int, float, float]:
    """(decisions, share where expert and expert reseeded differ, share where expert and ``spec`` differ)."""
    count = reseeded = variant = 0
    for infoset, _hand in tqdm(found, desc="decisions"):
        if len(infoset.legal_actions) < 2 or not inference.OpponentModel(infoset, "rules").informative:
            continue
        agents = (make_agent("expert", seed=1000 + count), make_agent("expert", seed=2000 + count),
                  make_agent(spec, seed=2000 + count))
        for agent in agents:
            agent.start_deal(infoset.player, infoset.rules)
        first, second, third = (agent.act(infoset) for agent in agents)
        count += 1
        reseeded += first != second
        variant += first != third
    return count, reseeded / max(count, 1), variant / max(count, 1)


def geometric_ratio(kind: str, found, worlds: list[list[int]], rng: random.Random) -> tuple[float, int]:
    logs = []
    for (infoset, true_hand), sampled in zip(found, worlds):
        model = inference.OpponentModel(infoset, kind)
        if not model.informative:
            continue
        # Both floored alike: at a tiny temperature without a uniform mix every sampled world's likelihood can
        # underflow to 0, and a ratio over 0 would be a ZeroDivisionError rather than a figure.
        mean = sum(model.likelihood(hand, rng) for hand in sampled) / len(sampled)
        logs.append(math.log(max(model.likelihood(true_hand, rng), 1e-12) / max(mean, 1e-12)))
    if not logs:  # no decision with evidence (a short run): no figure rather than a ZeroDivisionError
        return math.nan, 0
    return math.exp(sum(logs) / len(logs)), len(logs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.inference_calibration",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--agent", default="heuristic", help="agent spec playing both seats")
    parser.add_argument("--deals", type=int, default=40, help="self-play deals")
    parser.add_argument("--seed", type=int, default=500, help="seed of the first deal (deals use seed, seed+1, ...)")
    parser.add_argument("--worlds", type=int, default=60, help="sampled worlds per decision")
    parser.add_argument("--scales", default="0.5,1", help="play-model temperatures, as multiples of the shipped")
    parser.add_argument("--mixes", default="0.1,0.5", help="play-model uniform mixes")
    parser.add_argument("--floors", default=None,
                        help="also the rules model at these floors (comma-separated; the shipped one is "
                             f"{inference.RULE_FLOOR})")
    parser.add_argument("--fit", action="store_true", help="fit the play model to single plays instead")
    parser.add_argument("--agreement", default=None, metavar="SPEC",
                        help="also compare the choices of expert, expert reseeded and this agent spec")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.worlds < 1:
        parser.error("--deals and --worlds must be positive")
    try:
        scales = [float(text) for text in args.scales.split(",")]
        floors = [float(text) for text in args.floors.split(",")] if args.floors else []
        mixes = [float(text) for text in args.mixes.split(",")]
    except ValueError:
        parser.error("--scales, --mixes and --floors must be comma-separated numbers")
    # Checked now, not after the self-play: a temperature scale above 0, shares in their ranges (NaN fails each).
    for option, values, ok, what in (("--scales", scales, lambda value: 0 < value < math.inf, "above 0"),
                                     ("--mixes", mixes, lambda value: 0 <= value <= 1, "in [0, 1]"),
                                     ("--floors", floors, lambda value: 0 < value <= 1, "in (0, 1]")):
        bad = [value for value in values if not ok(value)]
        if bad:
            parser.error(f"{option} must be finite numbers {what}, got {bad[0]!r}")
    # --agreement is asked only after all the measuring: a bad spec is refused now, not then.
    specs = [("--agent", args.agent)] + ([("--agreement", args.agreement)] if args.agreement else [])
    check_agent_specs(parser, specs)
    rng = random.Random(args.seed)
    found = positions(args.agent, args.deals, args.seed)
    if args.fit:
        fit_single_plays(found, scales, mixes)
        return 0
    worlds = [[infoset.determinize(rng).hands[1 - infoset.player] for _ in range(args.worlds)]
              for infoset, _hand in found]
    ratio, count = geometric_ratio("rules", found, worlds, rng)
    print(f"rules: geometric mean ratio {ratio:.3f} over {count} decisions")
    shipped_floor = inference.RULE_FLOOR
    try:
        for floor in floors:
            inference.RULE_FLOOR = floor
            ratio, count = geometric_ratio("rules", found, worlds, rng)
            print(f"rules at floor {floor}: geometric mean ratio {ratio:.3f} over {count} decisions")
    finally:
        inference.RULE_FLOOR = shipped_floor
    lead, follow, mix = inference.LEAD_TEMPERATURE, inference.FOLLOW_TEMPERATURE, inference.PLAY_MIX
    try:
        for scale in scales:
            for play_mix in mixes:
                inference.LEAD_TEMPERATURE, inference.FOLLOW_TEMPERATURE = lead * scale, follow * scale
                inference.PLAY_MIX = play_mix
                ratio, count = geometric_ratio("policy", found, worlds, rng)
                print(f"policy (lead {lead * scale:.3g}, follow {follow * scale:.3g} card points, mix {play_mix}): "
                      f"geometric mean ratio {ratio:.3f} over {count} decisions")
    finally:
        inference.LEAD_TEMPERATURE, inference.FOLLOW_TEMPERATURE, inference.PLAY_MIX = lead, follow, mix
    if args.agreement:
        count, reseeded, variant = agreement(found, args.agreement)
        print(f"{count} decisions with evidence and a choice: expert vs expert reseeded differ in {reseeded:.1%}, "
              f"expert vs {args.agreement} in {variant:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
