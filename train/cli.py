"""``sixtysix train``: start a self-play run from a YAML config, or resume one.

    sixtysix train --config configs/ppo_selfplay.yaml [--set ppo.learning_rate=1e-4 ...]
    sixtysix train --resume runs/ppo_selfplay [--set run.total_steps=8000000]
    sixtysix train --describe            # every config key with its docstring
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sixtysix train", description="MaskablePPO self-play training")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--config", help="YAML config file (configs/ppo_selfplay.yaml)")
    source.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its last checkpoint")
    source.add_argument("--describe", action="store_true", help="list every config key with its meaning and exit")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value by dotted key, e.g. --set ppo.n_steps=1024 (repeatable)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or evaluation lines")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from .config import describe_config, load_config

    if args.describe:
        print(describe_config())
        return 0
    from .selfplay import Trainer

    if args.resume:
        trainer = Trainer.resume_run(Path(args.resume), args.overrides, quiet=args.quiet)
    else:
        if not args.config:
            print("sixtysix train: give --config FILE, --resume RUN_DIR or --describe", file=sys.stderr)
            return 2
        config = load_config(args.config, args.overrides)
        trainer = Trainer.new_run(config, quiet=args.quiet)
    final = trainer.train()
    print(f"final model: {final}")
    print(f"TensorBoard: tensorboard --logdir {trainer.run_dir / 'tb'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
