"""Play the shipped policy (models/ppo_standard.zip) with plain stable-baselines3, exactly as the ``ppo`` agent does.

    python examples/sb3_shipped_model.py --deals 20

Three things must match training (README "Training and the shipped model"):
  * the observation is the flat float32 vector of docs/observation.md for the learner's seat (``SixtySixGymEnv``
    with its default ``dict_observation=False``);
  * the legal-action mask goes to ``predict`` (``action_masks=env.action_masks()``);
  * from the talon's last trick on, the exact endgame search plays, not the network (``SolverPlaysEndgame`` with
    ``mode="endgame"``, the mode stored in the model's metadata).
Needs the ``train`` extra (torch, stable-baselines3, sb3-contrib).
"""

from __future__ import annotations

import argparse
from pathlib import Path

try:
    from sb3_contrib import MaskablePPO
except ModuleNotFoundError as error:  # a plain install has no training libraries
    raise SystemExit(f"examples/sb3_shipped_model.py needs the train extra (torch, stable-baselines3, sb3-contrib): "
                     f"pip install -e '.[train]' ({error})") from None

from agents import make_agent
from sixtysix_env import SixtySixGymEnv
from train.selfplay import SolverPlaysEndgame

MODEL = Path(__file__).resolve().parent.parent / "models" / "ppo_standard.zip"


def make_env(opponent: str, seed: int) -> SolverPlaysEndgame:
    """The single-agent environment the model was trained on, with the endgame played by the exact search."""
    return SolverPlaysEndgame(SixtySixGymEnv(rules="standard", opponent=make_agent(opponent, seed=seed + 1)),
                              mode="endgame", seed=seed)


def play(deals: int, opponent: str = "heuristic", seed: int = 0, model_path: Path = MODEL) -> list[float]:
    """The learner's game points (R16) in each of ``deals`` deals against ``opponent``."""
    model = MaskablePPO.load(model_path, device="cpu")
    env = make_env(opponent, seed)
    returns = []
    for deal in range(deals):
        observation, info = env.reset(seed=seed + deal)
        done, total = False, 0.0
        while not done:
            action, _ = model.predict(observation, action_masks=env.action_masks(), deterministic=True)
            observation, reward, terminated, truncated, info = env.step(int(action))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return returns


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=20, help="deals to play (default 20)")
    parser.add_argument("--opponent", default="heuristic", help="opponent agent spec (default heuristic)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first deal (default 0)")
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error(f"--deals must be at least 1, got {args.deals}")
    try:
        make_agent(args.opponent)  # a bad spec is named by its flag before the model loads
    except ValueError as error:
        parser.error(f"--opponent: {error}")
    returns = play(args.deals, args.opponent, args.seed)
    print(f"{len(returns)} deals against {args.opponent}: mean {sum(returns) / len(returns):+.3f} game points per "
          "deal (a few deals say little; use `sixtysix match ppo heuristic` for duplicate deals and an interval)")


if __name__ == "__main__":
    main()
