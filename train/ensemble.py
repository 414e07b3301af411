"""Merge several networks into one MaskablePPO model that plays their ensemble (docs/training.md, "Session 13").

    sixtysix distill merge --out models/ensemble.zip runs/a/model.zip runs/b/model.zip ...

The members (same rules, activation, depth and phase-2 mode; widths may differ) are laid side by side: their first
layers stacked on the shared observation, their hidden layers block-diagonal, their output layers concatenated and
scaled by each member's weight. ReLU and tanh act elementwise, so the merged network's action logits are exactly the
weighted sum of the members' logits and its value the weighted sum of their values: an ensemble that loads with
``MaskablePPO.load`` and plays as ``ppo:path=...`` in one forward pass. Networks fitted to action values
(``fit.target: q``) are merged so that the merged logits are the members' mean value divided by the merged
``q_temperature`` (each member is scaled by its own temperature), so the merged model is again a q network.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import sys
from typing import Any, Sequence

import numpy as np

from sixtysix_env.fileio import writable_file, write_bytes_atomic

POLICY_PREFIX, VALUE_PREFIX = "mlp_extractor.policy_net.", "mlp_extractor.value_net."


def merge_layers(members: Sequence[list[tuple[np.ndarray, np.ndarray]]],
                 weights: Sequence[float]) -> list[tuple[np.ndarray, np.ndarray]]:
    """One MLP (list of (weight, bias), output last) whose output is ``sum(weights[i] * member_i(x))``."""
    depth = len(members[0])
    if any(len(layers) != depth for layers in members):
        raise ValueError(f"the networks to merge differ in depth: {[len(layers) - 1 for layers in members]} hidden "
                         "layers")
    merged = []
    for index in range(depth):
        parts = [layers[index] for layers in members]
        if depth == 1:  # no hidden layer: the output layers read the observation directly
            weight = sum(scale * w for (w, _), scale in zip(parts, weights))
            bias = sum(scale * b for (_, b), scale in zip(parts, weights))
        elif index == 0:  # every member reads the same observation: stack the rows
            weight = np.concatenate([w for w, _ in parts], axis=0)
            bias = np.concatenate([b for _, b in parts])
        elif index < depth - 1:  # hidden to hidden: each member's block on the diagonal
            rows, cols = sum(w.shape[0] for w, _ in parts), sum(w.shape[1] for w, _ in parts)
            weight = np.zeros((rows, cols), dtype=np.float32)
            row = col = 0
            for w, _ in parts:
                weight[row:row + w.shape[0], col:col + w.shape[1]] = w
                row, col = row + w.shape[0], col + w.shape[1]
            bias = np.concatenate([b for _, b in parts])
        else:  # the output: the weighted sum of the members' outputs
            weight = np.concatenate([scale * w for (w, _), scale in zip(parts, weights)], axis=1)
            bias = sum(scale * b for (_, b), scale in zip(parts, weights))
        merged.append((np.asarray(weight, dtype=np.float32), np.asarray(bias, dtype=np.float32)))
    return merged


def merge_models(paths: Sequence[str | os.PathLike], out: str | os.PathLike) -> dict[str, Any]:
    """Write the merged model of ``paths`` (equal weights) to ``out`` atomically; returns its metadata."""
    import torch

    from agents.ppo import (ActorNetwork, add_metadata_to_zip, check_metadata, check_network_spaces, model_metadata,
                            read_model_metadata, read_policy_state, sb3_mlp_layers)

    from .export import new_policy_model

    writable_file(out, f"--out {str(out)!r}")  # a folder is named now, not by the temp file of the late write
    if len(paths) < 2:
        raise ValueError(f"merging needs at least two models, got {len(paths)}")
    metadata, members = [], []  # each member's (weight, bias) layers by network: {"policy": [...], "value": [...]}
    rules = None  # the first model's
    for path in paths:
        where = f"model {str(path)!r}"
        if not os.path.isfile(path):
            raise ValueError(f"{where}: no such file")
        entry = read_model_metadata(path)
        model_rules = check_metadata(entry, where)
        rules = model_rules if rules is None else rules
        if model_rules != rules:
            raise ValueError(f"{where} was trained for other rules than {str(paths[0])!r}")
        if metadata and entry.get("activation") != metadata[0].get("activation"):
            raise ValueError(f"{where} has activation {entry.get('activation')!r}, {str(paths[0])!r} "
                             f"{metadata[0].get('activation')!r}: members must share it")
        if metadata and entry.get("phase2", "policy") != metadata[0].get("phase2", "policy"):
            raise ValueError(f"{where} plays phase 2 by {entry.get('phase2', 'policy')!r}, {str(paths[0])!r} by "
                             f"{metadata[0].get('phase2', 'policy')!r}: members must share it")
        if metadata and ("q_temperature" in entry) != ("q_temperature" in metadata[0]):
            raise ValueError(f"{where}: a q network (fit.target: q) and a policy cannot be merged")
        temperature = entry.get("q_temperature", 1.0)  # a member's logits are its values divided by it
        if type(temperature) not in (int, float) or not 0 < temperature < math.inf:
            raise ValueError(f"{where}: its q_temperature must be a positive number, got {temperature!r}")
        state = read_policy_state(path, where)  # damaged weights are named, not a torch traceback
        # Each member's own weights checked by name: not a NaN or a shape mismatch found in the merged network
        layers = {}
        for part in ("policy", "value"):
            try:
                layers[part] = sb3_mlp_layers(state, part)
                network = ActorNetwork(layers[part], entry["activation"])
            except ValueError as error:
                raise ValueError(f"{where}: its {part} network: {error}") from None
            check_network_spaces(network, model_rules, where, value=part == "value", name=f"{part} network",
                                 unit="outputs")
        members.append(layers)
        metadata.append(entry)
    count = len(paths)
    temperatures = [entry.get("q_temperature") for entry in metadata]
    is_q = temperatures[0] is not None
    merged_temperature = float(np.mean(temperatures)) if is_q else None
    # Logits of a q member are values / its temperature: scaled to values / the merged temperature.
    logit_weights = [temperature / merged_temperature / count if is_q else 1.0 / count for temperature in temperatures]
    policy = merge_layers([layers["policy"] for layers in members], logit_weights)
    value = merge_layers([layers["value"] for layers in members], [1.0 / count] * count)
    hidden = [weight.shape[0] for weight, _ in policy[:-1]]
    activation = metadata[0]["activation"]
    model = new_policy_model(rules, hidden, activation, value_hidden=[weight.shape[0] for weight, _ in value[:-1]])
    state = {}
    for prefix, head, layers in ((POLICY_PREFIX, "action_net", policy), (VALUE_PREFIX, "value_net", value)):
        for index, (weight, bias) in enumerate(layers):
            name = head if index == len(layers) - 1 else f"{prefix}{2 * index}"  # Linear, activation, Linear, ...
            state[f"{name}.weight"], state[f"{name}.bias"] = torch.from_numpy(weight), torch.from_numpy(bias)
    missing, unexpected = model.policy.load_state_dict(state, strict=False)
    if unexpected or any(not key.startswith(("features_extractor", "pi_features", "vf_features")) for key in missing):
        raise AssertionError(f"merged weights do not fit the policy: missing {missing}, unexpected {unexpected}")
    buffer = io.BytesIO()
    model.save(buffer)
    # The members' own phase 2 (a hybrid's exact endgame search stays one: R9 play is not the network's)
    extra: dict[str, Any] = {"phase2": metadata[0].get("phase2", "policy"),
                             "ensemble_of": [str(path) for path in paths],
                             "ensemble_member_hidden": [entry.get("hidden") for entry in metadata]}
    if is_q:
        extra["q_temperature"] = merged_temperature
    merged_metadata = model_metadata(rules, activation, hidden, **extra)
    write_bytes_atomic(out, add_metadata_to_zip(buffer.getvalue(), merged_metadata,
                                                ActorNetwork.from_policy(model.policy, activation)))
    return merged_metadata


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sixtysix distill merge", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("models", nargs="+", help="model zips to merge (two or more)")
    parser.add_argument("--out", required=True, help="the merged model zip")
    args = parser.parse_args(argv)
    try:
        metadata = merge_models(args.models, args.out)
    except (ValueError, OSError) as error:  # bad input, or a path that cannot be read or written: no traceback
        print(f"sixtysix distill merge: {error}", file=sys.stderr)
        return 2
    print(f"merged {len(args.models)} networks into {args.out} (hidden {metadata['hidden']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
