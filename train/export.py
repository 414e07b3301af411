"""Export a trained model (a run's ``final.zip`` or any checkpoint) as a ``ppo`` agent model file.

    python -m train.export runs/ppo_selfplay/final.zip models/ppo_standard.zip

The output is the same stable-baselines3 zip with the ``sixtysix.json`` metadata checked and the NumPy copy of the
actor (``sixtysix_actor.npz``) present, so the agent plays it with NumPy alone; ``--note KEY=VALUE`` adds
provenance to the metadata (for example the evaluation it passed); it may not replace a key that describes the
model itself (``agents.ppo.MODEL_METADATA_KEYS``: its rules, network or format).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from agents.ppo import (
    MODEL_METADATA_KEYS, add_metadata_to_zip, check_metadata, read_model_metadata, read_policy_state, spaces_for,
)
from sixtysix_env.fileio import writable_file, write_bytes_atomic
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


def check_policy_fits(state: Mapping[str, Any], rules: Rules, hidden: list[int], activation: str, where: str) -> None:
    """Refuse (``ValueError`` naming ``where``) policy weights that do not load into a MaskablePPO MLP policy of
    this game's spaces with ``hidden`` widths (policy and value network) and ``activation``: a model about to be
    trained on is checked before its run writes anything."""
    import torch
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from agents.ppo import one_line_reason, torch_activation

    observation_size, num_actions = spaces_for(rules)
    # Built directly, not by MaskablePPO, which would reseed the global generators.
    policy = MaskableActorCriticPolicy(
        spaces.Box(-np.inf, np.inf, (observation_size,), np.float32), spaces.Discrete(num_actions),
        lambda _progress: 0.0, net_arch=dict(pi=list(hidden), vf=list(hidden)),
        activation_fn=torch_activation(activation))
    try:
        policy.load_state_dict(state)
    except (RuntimeError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"{where}: its weights do not fit the net {list(hidden)} {activation} "
                         f"({one_line_reason(error)})") from None
    if not all(torch.isfinite(tensor).all() for tensor in policy.state_dict().values()):
        raise ValueError(f"{where}: its weights hold NaN or infinite values")


def read_start_model(path: str | Path, key: str, rules: Rules, hidden: list[int], activation: str) -> dict[str, Any]:
    """The sb3 policy weights of the model zip a run starts from (config key ``key``): refused by name, before the
    run writes anything, when it cannot be read, is not a model of ours, was trained for other rules or another net
    (``hidden``, ``activation``; as its metadata says), or its weights do not load into that net."""
    where = f"config key {key!r}: model {str(path)!r}"
    try:
        metadata = read_model_metadata(path)
    except (ValueError, FileNotFoundError) as error:
        raise ValueError(f"config key {key!r}: {error}") from None
    model_rules = check_metadata(metadata, where)
    if model_rules != rules:
        raise ValueError(f"{where} was trained for other rules ({model_rules.preset_name or 'custom'}), the run's "
                         f"are {rules.preset_name or 'custom'!r}")
    if metadata.get("hidden") != list(hidden) or metadata.get("activation") != activation:
        raise ValueError(f"{where} has net {metadata.get('hidden')} {metadata.get('activation')}, the run's net "
                         f"{list(hidden)} {activation}")
    state = read_policy_state(path, where)
    check_policy_fits(state, rules, hidden, activation, where)  # as it will load into the run's model
    return state


def export_model(source: str | Path, target: str | Path, notes: dict[str, str] | None = None) -> dict:
    """Write ``target`` from ``source``; returns the metadata written."""
    from agents.ppo import ActorNetwork, check_network_spaces

    source = Path(source)
    replaced = sorted(MODEL_METADATA_KEYS & set(notes or {}))
    if replaced:  # a note that changed how the model loads or plays would make the export another model
        raise ValueError(f"--note {replaced[0]!r}: that key describes the model itself (its rules, network or "
                         f"format), not its provenance; notes may not replace {', '.join(sorted(MODEL_METADATA_KEYS))}")
    writable_file(target, f"target {str(target)!r}")  # a folder is named now, not by the temp file of the write
    where = f"model {str(source)!r}"
    metadata = read_model_metadata(source)
    rules = check_metadata(metadata, where)
    state = read_policy_state(source, where)
    try:
        actor = ActorNetwork.from_state_dict(state, metadata["activation"])
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    check_network_spaces(actor, rules, where)
    output = add_metadata_to_zip(source.read_bytes(), metadata | dict(notes or {}), actor)
    write_bytes_atomic(target, output)  # temp file + rename: a failed export leaves no output behind
    return metadata | dict(notes or {})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.export", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("source", help="a model zip written by sixtysix train (final.zip or a checkpoint)")
    parser.add_argument("target", help="where to write the agent model (e.g. models/ppo_standard.zip)")
    parser.add_argument("--note", action="append", default=[], metavar="KEY=VALUE", help="provenance to record")
    args = parser.parse_args(argv)
    notes = {}
    for note in args.note:
        key, sep, value = note.partition("=")
        if not sep or not key:
            print(f"python -m train.export: error: malformed --note {note!r}: expected KEY=VALUE", file=sys.stderr)
            return 2
        notes[key] = value
    try:
        metadata = export_model(args.source, args.target, notes)
    except (ValueError, OSError) as error:  # bad input, or a path that cannot be read or written: no traceback
        print(f"python -m train.export: error: {error}", file=sys.stderr)
        return 2
    # A merged ensemble or a hand-made model records no trained_steps: shown when the metadata has it
    shown = ("rules_preset", "trained_steps", "observation_size")
    print(json.dumps({key: metadata[key] for key in shown if key in metadata}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
