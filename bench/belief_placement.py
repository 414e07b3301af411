"""How much of the opponent's hand can be learnt from his play: a belief network against the replay inference.

``bench.inference_overlap`` measures how many of the opponent's unknown cards a sampled world places right, for
uniform worlds and for the replay inference ``expert`` uses (:mod:`sixtysix_env.core.inference`: his past choices
replayed with the heuristic's rules). Neither says how much *could* be known. This bench fits a belief network to
``heuristic`` self-play (5 % random decisions): from the deciding player's observation (:mod:`sixtysix_env.observation`)
to, for each card he has not seen, whether the opponent holds it (binary cross-entropy over the unseen cards only).
Such a network learns the posterior that the heuristic's play leaves, whatever form it takes. Its placement is the
same figure as the other two: the mean share of the opponent's unknown cards a world drawn with the network's
inclusion probabilities puts in his hand (the probabilities shifted on the logit scale so that they add up to the
number of unknown cards he holds; :func:`inclusion_probabilities`), at the phase-1 decisions after the first trick
of ``heuristic`` self-play, on the deals of ``bench.inference_overlap`` (docs/strength.md, "Session 26")::

    python -m bench.belief_placement --deals 80000 --seed 50000000 --bench-deals 300 --bench-seed 3100 --workers 2

torch is needed (``pip install -e '.[train]'``); the network is not kept (it is a measurement, not an agent).
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from agents.rule_based import HeuristicAgent
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.cards import NUM_CARDS
from sixtysix_env.observation import OBSERVATION_SIZE, ObservationEncoder

RANDOM_SHARE = 0.05  # share of the behaviour's decisions played at random (as the distillation labels')
CHUNK_DEALS = 500  # deals per worker task
HELD_OUT_EVERY = 20  # one decision in 20 (5 %) is held out of the fit to measure it
WORLDS = 200  # worlds drawn per decision by the uniform and replay samplers
REPLAY_FLOORS = (0.1, 0.1, 1.0, 1.0, 1.0, 1.0)  # expert's: follow, rule, lead (unmodelled), closed, closing, played on


def card_bits(mask: int) -> np.ndarray:
    """(24,) 0/1 of a card mask."""
    return np.array([(mask >> card) & 1 for card in range(NUM_CARDS)], dtype=np.int8)


def measured(game: Game, infoset: InformationSet) -> int:
    """The opponent's unknown cards (his hand less what the player knows of it) at a decision measured here: a
    phase-1 decision (talon open, R7, R10) after the first trick; 0 elsewhere."""
    if game.phase2 or not game.tricks:
        return 0
    return game.hands[1 - infoset.player] & ~infoset.opponent_known


def self_play_positions(first_seed: int, deals: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(observations, unknown cards he holds, cards the player has not seen) at the measured decisions of ``deals``
    ``heuristic`` self-play deals from ``first_seed`` on, ``RANDOM_SHARE`` of the decisions random."""
    rules = Rules()
    encoder = ObservationEncoder(rules)
    observations, held, unseen = [], [], []
    for deal in range(deals):
        seed = first_seed + deal
        game = Game.deal(rules, seed=seed, dealer=deal % 2)
        players = [HeuristicAgent(seed=seed * 2 + seat) for seat in range(2)]
        rng = np.random.default_rng(seed)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            unknown = measured(game, infoset)
            if unknown:
                observations.append(encoder.encode(game, infoset.player))
                held.append(card_bits(unknown))
                unseen.append(card_bits(infoset.unseen))
            if rng.random() < RANDOM_SHARE:
                action = int(rng.choice(infoset.legal_actions))
            else:
                action = players[infoset.player].act(infoset)
            game.apply(action)
    if not observations:  # no measured decision (a chunk of deals that reach none: one deal may)
        return (np.zeros((0, OBSERVATION_SIZE), dtype=np.float32), np.zeros((0, NUM_CARDS), dtype=np.int8),
                np.zeros((0, NUM_CARDS), dtype=np.int8))
    return np.array(observations, dtype=np.float32), np.array(held, dtype=np.int8), np.array(unseen, dtype=np.int8)


def _positions_task(task: tuple[int, int]):
    return self_play_positions(*task)


def fit_belief(observations: np.ndarray, held: np.ndarray, unseen: np.ndarray, epochs: int, seed: int,
               progress: bool = True):
    """A 2 x 512 MLP fitted to the positions (binary cross-entropy over the unseen cards, step 1e-3, batch 512,
    one torch thread), and its held-out loss by epoch (5 % of the rows held out)."""
    import torch
    from torch import nn
    from tqdm import tqdm

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    inputs, targets, mask = (torch.as_tensor(observations), torch.as_tensor(held.astype(np.float32)),
                             torch.as_tensor(unseen.astype(np.float32)))
    order = torch.randperm(len(inputs))
    validation, training = order[: len(order) // HELD_OUT_EVERY], order[len(order) // HELD_OUT_EVERY:]
    network = nn.Sequential(nn.Linear(inputs.shape[1], 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                            nn.Linear(512, NUM_CARDS))
    optimizer = torch.optim.Adam(network.parameters(), lr=1e-3)
    loss_fn = nn.BCEWithLogitsLoss(reduction="none")

    def loss_of(rows):
        return (loss_fn(network(inputs[rows]), targets[rows]) * mask[rows]).sum() / mask[rows].sum().clamp(min=1)

    losses = []
    for _ in tqdm(range(epochs), desc="belief network", unit="epoch", disable=not progress):
        shuffled = training[torch.randperm(len(training))]
        for start in range(0, len(shuffled), 512):
            loss = loss_of(shuffled[start:start + 512])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            losses.append(float(loss_of(validation)))
    network.eval()
    return network, losses


def inclusion_probabilities(logits: np.ndarray, unseen: np.ndarray, count: int) -> np.ndarray:
    """(24,) probabilities that each unseen card is in his hand, ``sigmoid(logit + shift)`` on the unseen cards
    (0 elsewhere), the shift found by bisection so that they add up to ``count``, the unknown cards he holds."""
    low, high = -40.0, 40.0
    for _ in range(80):
        shift = (low + high) / 2
        total = (unseen / (1.0 + np.exp(-(logits + shift)))).sum()
        low, high = (shift, high) if total < count else (low, shift)
    return unseen / (1.0 + np.exp(-(logits + (low + high) / 2)))


def placements(network, deals: int, first_seed: int, progress: bool = True) -> dict[int, list[tuple]]:
    """{tricks played: [(uniform, replay-inferred, belief network) placement per decision]} at the measured
    decisions of ``deals`` ``heuristic`` self-play deals (no random decisions) from ``first_seed`` on, dealt and
    played as ``bench.inference_overlap`` plays them."""
    import torch
    from tqdm import tqdm

    from agents.solver import core_table
    from sixtysix_env.core.layout import STATE_SIZE
    from sixtysix_env.core.search import seed_kernels

    from .inference_overlap import self_play_decisions, world_placements

    rules = Rules()
    encoder = ObservationEncoder(rules)
    params = HeuristicAgent().core_params()
    table = core_table()
    seed_kernels(5)
    worlds = np.empty((WORLDS, STATE_SIZE), dtype=np.int64)
    by_trick: dict[int, list[tuple]] = {}
    for game, infoset in self_play_decisions(tqdm(range(deals), desc="placements", unit="deal",
                                                  disable=not progress), first_seed, rules):
        unknown = measured(game, infoset)
        if unknown:
            uniform, inferred = world_placements(infoset, unknown, worlds, params, table, REPLAY_FLOORS)
            with torch.no_grad():
                logits = network(torch.as_tensor(encoder.encode(game, infoset.player))[None])[0].numpy()
            count = unknown.bit_count()  # his hand less what the player knows of it
            probabilities = inclusion_probabilities(logits.astype(np.float64),
                                                    card_bits(infoset.unseen).astype(np.float64), count)
            belief = float(probabilities[card_bits(unknown).astype(bool)].sum()) / count
            by_trick.setdefault(len(game.tricks), []).append((uniform, inferred, belief))
    return by_trick


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.belief_placement",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=80000, help="self-play deals the belief network is fitted on")
    parser.add_argument("--seed", type=int, default=50000000, help="first seed of those deals")
    parser.add_argument("--bench-deals", type=int, default=300, help="deals measured (bench.inference_overlap's)")
    parser.add_argument("--bench-seed", type=int, default=3100, help="first seed of the measured deals")
    parser.add_argument("--epochs", type=int, default=5, help="epochs of the fit")
    parser.add_argument("--workers", type=int, default=2, help="processes playing the self-play deals")
    args = parser.parse_args(argv)
    if min(args.deals, args.bench_deals, args.epochs, args.workers) < 1:
        parser.error("--deals, --bench-deals, --epochs and --workers must be positive")
    if args.seed < args.bench_seed + args.bench_deals and args.bench_seed < args.seed + args.deals:
        parser.error("the fitted deals (--seed, --deals) overlap the measured ones (--bench-seed, --bench-deals)")
    from tqdm import tqdm

    tasks = [(start, min(CHUNK_DEALS, args.seed + args.deals - start))
             for start in range(args.seed, args.seed + args.deals, CHUNK_DEALS)]
    with ProcessPoolExecutor(args.workers) as pool:
        parts = list(tqdm(pool.map(_positions_task, tasks), total=len(tasks), desc="self-play", unit="chunk"))
    observations, held, unseen = (np.concatenate([part[index] for part in parts]) for index in range(3))
    if len(observations) < HELD_OUT_EVERY:  # else no decision is held out, and the held-out loss would read 0.0000
        parser.error(f"--deals {args.deals} gave {len(observations)} decisions: the fit holds out 5 % of them and "
                     f"needs at least {HELD_OUT_EVERY} (give more --deals)")
    network, losses = fit_belief(observations, held, unseen, args.epochs, args.seed)
    print(f"fitted on {len(observations)} decisions of {args.deals} deals; held-out loss by epoch "
          + ", ".join(f"{loss:.4f}" for loss in losses))
    by_trick = placements(network, args.bench_deals, args.bench_seed)
    rows = [row for trick_rows in by_trick.values() for row in trick_rows]
    if not rows:  # the means below would be NaN
        parser.error(f"--bench-deals {args.bench_deals} gave no measured decision (give more --bench-deals)")
    print(f"{len(rows)} decisions: unknown cards placed right by uniform / replay-inferred / belief-network worlds "
          + " / ".join(f"{value:.3f}" for value in np.mean(rows, axis=0)))
    for tricks in sorted(by_trick):
        print(f"  after {tricks} tricks: {len(by_trick[tricks])} decisions, "
              + " / ".join(f"{value:.3f}" for value in np.mean(by_trick[tricks], axis=0)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
