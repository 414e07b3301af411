"""Export a trained model (a run's ``final.zip`` or any checkpoint) as a ``ppo`` agent model file.

    python -m train.export runs/ppo_selfplay/final.zip models/ppo_standard.zip

The output is the same stable-baselines3 zip with the ``sixtysix.json`` metadata checked and the NumPy copy of the
actor (``sixtysix_actor.npz``) present, so the agent plays it with NumPy alone; ``--note KEY=VALUE`` adds
provenance to the metadata (for example the evaluation it passed).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

from agents.ppo import add_metadata_to_zip, check_metadata, read_model_metadata
from sixtysix_env.fileio import write_bytes_atomic
from sixtysix_env.rules import Rules


def new_policy_model(rules: Rules, hidden: list[int], activation: str, value_hidden: list[int] | None = None,
                     device: str = "cpu", seed: int = 0) -> Any:
    """A MaskablePPO model of this game's spaces with an MLP policy of ``hidden`` widths (its value network
    ``value_hidden``, default the same): the container that fits, merges and saves write their weights into."""
    from sb3_contrib import MaskablePPO

    from agents.ppo import torch_activation
    from sixtysix_env.gym_env import SixtySixGymEnv

    net_arch = dict(pi=list(hidden), vf=list(hidden if value_hidden is None else value_hidden))
    return MaskablePPO("MlpPolicy", SixtySixGymEnv(rules=rules), device=device, seed=seed,
                       policy_kwargs=dict(net_arch=net_arch, activation_fn=torch_activation(activation)))


def export_model(source: str | Path, target: str | Path, notes: dict[str, str] | None = None) -> dict:
    """Write ``target`` from ``source``; returns the metadata written."""
    import torch

    from agents.ppo import ActorNetwork

    source = Path(source)
    metadata = read_model_metadata(source)
    check_metadata(metadata, f"model {str(source)!r}")
    with zipfile.ZipFile(source) as archive:
        state = torch.load(io.BytesIO(archive.read("policy.pth")), map_location="cpu", weights_only=True)
    actor = ActorNetwork.from_state_dict(state, metadata["activation"])
    metadata = dict(metadata, **(notes or {}))
    write_bytes_atomic(target, add_metadata_to_zip(source.read_bytes(), metadata, actor))
    return metadata


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.export", description=__doc__.splitlines()[0])
    parser.add_argument("source", help="a model zip written by sixtysix train (final.zip or a checkpoint)")
    parser.add_argument("target", help="where to write the agent model (e.g. models/ppo_standard.zip)")
    parser.add_argument("--note", action="append", default=[], metavar="KEY=VALUE", help="provenance to record")
    args = parser.parse_args(argv)
    notes = {}
    for note in args.note:
        key, sep, value = note.partition("=")
        if not sep or not key:
            print(f"malformed --note {note!r}: expected KEY=VALUE", file=sys.stderr)
            return 2
        notes[key] = value
    metadata = export_model(args.source, args.target, notes)
    print(json.dumps({key: metadata[key] for key in ("rules_preset", "trained_steps", "observation_size")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
