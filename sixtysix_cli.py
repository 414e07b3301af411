"""The ``sixtysix`` console command. Subcommands import their modules lazily so each stays fast to start."""

from __future__ import annotations

import argparse
import os
import sys


def package_version() -> str:
    """The installed distribution's version (importlib.metadata); in a checkout that is not installed, the
    package's own ``__version__``, marked as such."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sixtysix")
    except PackageNotFoundError:
        from sixtysix_env import __version__

        return f"{__version__} (not installed: version of the source tree)"


def _replay(args: argparse.Namespace) -> int:
    from eval.records import load_replay
    from sixtysix_env.record import render_record

    print(render_record(load_replay(args.file)))
    return 0


def _bench(args: argparse.Namespace) -> int:
    from bench.run import main as bench_main

    return bench_main(args.rest)


def _tournament(args: argparse.Namespace) -> int:
    from eval.cli import tournament_main

    return tournament_main(args.rest)


def _match(args: argparse.Namespace) -> int:
    from eval.cli import match_main

    return match_main(args.rest)


# The training commands need the train extra (yaml, torch, sb3) from their first import to their last step (torch
# is imported when training starts); human play needs the play extra. A missing package is one line naming it.
def _train(args: argparse.Namespace) -> int:
    from sixtysix_env.extras import needs_extra

    with needs_extra("train"):
        from train.cli import main as train_main

        return train_main(args.rest)


def _distill(args: argparse.Namespace) -> int:
    from sixtysix_env.extras import needs_extra

    with needs_extra("train"):
        from train.distill import main as distill_main

        return distill_main(args.rest)


def _train_vector(args: argparse.Namespace) -> int:
    from sixtysix_env.extras import needs_extra

    with needs_extra("train"):
        from train.vector_ppo import main as train_vector_main

        return train_vector_main(args.rest)


def _play(args: argparse.Namespace) -> int:
    from sixtysix_env.extras import needs_extra

    with needs_extra("play"):
        from play.terminal import main as play_main
    return play_main(args.rest)


def _serve(args: argparse.Namespace) -> int:
    from sixtysix_env.extras import needs_extra

    with needs_extra("play"):
        from play.web.server import main as serve_main
    return serve_main(args.rest)


_PASS_THROUGH = {"bench": _bench, "tournament": _tournament, "match": _match, "train": _train,
                 "train-vector": _train_vector, "play": _play, "serve": _serve, "distill": _distill}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sixtysix", description="Sixty-six (Sechsundsechzig) toolkit")
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser("replay", help="print a recorded deal trick by trick")
    replay.add_argument("file", help="a JSON game record (e.g. from --records DIR), or FILE#N: deal N (from 0) of "
                                     "a deal file such as a tournament's deals.json")
    replay.set_defaults(handler=_replay)
    for name, handler, text in (
        ("bench", _bench, "measure engine and environment speed (and peers when installed)"),
        ("tournament", _tournament, "round robin of agents on duplicate deals"),
        ("match", _match, "one pair of agents on duplicate deals"),
        ("train", _train, "self-play training from a YAML config"),
        ("distill", _distill, "distil a search agent into a network: label, fit, run (configs/distill.yaml)"),
        ("train-vector", _train_vector, "PPO on the batched env with a privileged critic (train/vector_ppo.py)"),
        ("play", _play, "play a deal or a Bummerl against an agent in the terminal"),
        ("serve", _serve, "the browser app: play, watch agents, replay deals (http://127.0.0.1:8066)"),
    ):
        sub = commands.add_parser(name, help=text, add_help=False)
        sub.add_argument("rest", nargs=argparse.REMAINDER)
        sub.set_defaults(handler=handler)
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in _PASS_THROUGH:
        # These subcommands parse their own options; argparse's REMAINDER refuses a list starting with an option.
        args = argparse.Namespace(command=argv[0], rest=argv[1:], handler=_PASS_THROUGH[argv[0]])
    else:
        args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: not an error. Point stdout at devnull so the
        # interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ValueError, OSError) as error:  # bad input, or a path that cannot be read or written: no traceback
        print(f"sixtysix {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
