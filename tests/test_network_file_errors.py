"""Damaged network files are refused when they are loaded, with a ValueError that names the file and what is wrong
(agents/suit.py, agents/suit_int8.py, the actor entry of a PPO zip in agents/ppo.py); never a traceback of
another exception type, a message suggesting unsafe loading, or a network that plays with weights it misreads."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from agents.base import MODELS_DIR
from agents.ppo import ACTOR_ENTRY, DEFAULT_MODEL, ActorNetwork, PpoAgent
from agents.registry import make_agent
from agents.suit import SuitNetwork
from agents.suit_int8 import QuantizedSuitEnsemble
from eval.play import play_deal
from sixtysix_env import Game, Rules

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = MODELS_DIR / "suit_two_standard.npz"  # two rounds: it has mix and recombine layers to damage


def _shipped_arrays() -> dict[str, np.ndarray]:
    with np.load(SHIPPED, allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


def _saved(tmp_path: Path, arrays: dict[str, np.ndarray], name: str = "damaged.npz") -> Path:
    path = tmp_path / name
    np.savez(path, **arrays)
    return path


def _with_header(header_text: str) -> dict[str, np.ndarray]:
    return {**_shipped_arrays(), "header": np.array(header_text)}


def _header_without_rules() -> str:
    header = json.loads(str(_shipped_arrays()["header"]))
    del header["rules"]
    return json.dumps(header)


def _truncated(tmp_path: Path) -> Path:
    path = tmp_path / "truncated.npz"
    raw = SHIPPED.read_bytes()
    path.write_bytes(raw[:len(raw) // 2])
    return path


def _written(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "damaged.npz"
    path.write_bytes(content)
    return path


# Each case writes a damaged file and names a fragment of the message that says what is wrong with it.
DAMAGED_FILES = {
    "truncated": (_truncated, "is not an .npz archive (truncated or another format)"),
    "empty": (lambda tmp_path: _written(tmp_path, b""), "is not an .npz archive"),
    "text renamed .npz": (lambda tmp_path: _written(tmp_path, b"just some text\n"), "is not an .npz archive"),
    "header a JSON list": (lambda tmp_path: _saved(tmp_path, _with_header("[1, 2]")),
                           "header must be a JSON object"),
    # the strict reader: a RecursionError and a key given twice were not ValueErrors or went unnoticed
    "header nested 100,000 deep": (lambda tmp_path: _saved(tmp_path, _with_header("[" * 100_000 + "]" * 100_000)),
                                   "its header is not JSON (header: JSON nested deeper than"),
    "header with a key twice": (lambda tmp_path: _saved(tmp_path, _with_header('{"format": 1, "format": 2}')),
                                "its header is not JSON (header: duplicate key 'format')"),
    "header without rules": (lambda tmp_path: _saved(tmp_path, _with_header(_header_without_rules())),
                             "header has no 'rules'"),
    "no header entry": (lambda tmp_path: _saved(tmp_path, {name: array for name, array in _shipped_arrays().items()
                                                            if name != "header"}),
                        "has no 'header' entry"),
}


@pytest.mark.parametrize("content, fragment", [
    ("[" * 100_000 + "]" * 100_000, "nested deeper than"),
    ('{"weights": {"a": 1}, "weights": {"b": 2}}', "duplicate key 'weights'"),
    ('{"weights": NaN}', "NaN"),
    ('{"weights": {"trump_keep_9": 1}}', "its weights lack trump_keep_J, trump_keep_Q"),  # not the bare key
    ('{"margin": 0.1}', "it has no 'weights' mapping of names to numbers"),
    ('[1, 2]', "it has no 'weights' mapping of names to numbers"),
])
def test_a_damaged_playout_weights_file_is_refused_naming_it(tmp_path, content, fragment):
    from agents.pimc import load_playout_weights

    path = tmp_path / "weights.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=f"playout weights file {re.escape(repr(str(path)))} is not a tuning result: "
                                         f".*{re.escape(fragment)}"):
        load_playout_weights(str(path))


def test_a_playout_weights_file_of_the_policys_own_weights_loads_to_them(tmp_path):
    """The file's keys are the policy's slot names (sixtysix_env.core.policy.WEIGHT_NAMES), in the slots' order."""
    from agents.pimc import load_playout_weights, policy_weights
    from sixtysix_env.core.policy import WEIGHT_NAMES

    weights = policy_weights()
    path = tmp_path / "weights.json"
    path.write_text(json.dumps({"weights": dict(zip(WEIGHT_NAMES, weights.tolist()))}))
    np.testing.assert_array_equal(load_playout_weights(str(path)), weights)


@pytest.mark.parametrize("case", list(DAMAGED_FILES))
def test_a_damaged_suit_network_file_is_a_value_error_naming_the_file_and_the_problem(tmp_path, case):
    write, problem = DAMAGED_FILES[case]
    path = write(tmp_path)
    with pytest.raises(ValueError, match=re.escape(str(path)) + ".*" + re.escape(problem)) as raised:
        SuitNetwork.load(path)
    assert "allow_pickle" not in str(raised.value)  # numpy's hint to load unsafely is not passed on


def _set(name: str, value: Callable) -> Callable:
    return lambda arrays: arrays.__setitem__(name, value(arrays[name]))


def _with_nan(array: np.ndarray) -> np.ndarray:
    array = array.copy()
    array[3, 5] = np.nan
    return array


# Each change breaks one layer of the shipped network; the message names the layer that no longer fits.
BROKEN_LAYERS = {
    "a weight row short of its bias": ([_set("recombine.2.weight", lambda weight: weight[:-1])],
                                       r"layer recombine\.2: a weight of shape \(255, 256\) and a bias of shape "
                                       r"\(256,\) do not fit"),
    "an input short": ([_set("recombine.2.weight", lambda weight: weight[:, :-1])],
                       r"layer recombine\.2: takes 255 inputs, expected 256: the outputs of recombine\.0"),
    "a narrower context": ([_set("recombine.2.weight", lambda weight: weight[:-1]),
                            _set("recombine.2.bias", lambda bias: bias[:-1])],
                           r"layer suit_head\.0: takes 384 inputs, expected 383"),
    "a mix that cannot be added": ([_set("mix.0.weight", lambda weight: weight[:-1]),
                                    _set("mix.0.bias", lambda bias: bias[:-1])],
                                   r"layer mix\.0: gives 127 outputs, expected 128"),
    "an action too many": ([_set("other_head.weight", lambda weight: np.concatenate([weight, weight[:1]])),
                            _set("other_head.bias", lambda bias: np.concatenate([bias, bias[:1]]))],
                           r"layer other_head: gives 6 outputs, expected 5"),
    "a NaN weight": ([_set("combine.0.weight", _with_nan)], r"layer combine\.0: its weights hold NaN or infinite"),
    "a bias of text": ([_set("encode.2.bias", lambda bias: np.full(bias.shape, "x"))],
                       r"layer encode\.2: holds .* values, not numbers"),
}


def _broken_arrays(case: str) -> dict[str, np.ndarray]:
    changes, _ = BROKEN_LAYERS[case]
    arrays = _shipped_arrays()
    for change in changes:
        change(arrays)
    return arrays


@pytest.mark.parametrize("precision", ["float32", "int8"])
@pytest.mark.parametrize("case", list(BROKEN_LAYERS))
def test_a_layer_that_does_not_fit_is_refused_at_load_naming_file_and_layer(tmp_path, case, precision):
    """Not only the encoder's input: every layer's shapes must chain as the forward pass multiplies them, in
    both precisions (float32 failed at the first move naming neither file nor layer; int8 played misreading)."""
    path = _saved(tmp_path, _broken_arrays(case))
    with pytest.raises(ValueError, match=re.escape(str(path)) + ".*" + BROKEN_LAYERS[case][1]):
        make_agent(f"suit:path={path},precision={precision}", seed=0)


@pytest.mark.parametrize("case", [case for case in BROKEN_LAYERS if case != "a bias of text"])
def test_int8_packing_refuses_layers_that_do_not_chain_before_they_reach_the_kernel(case):
    """A network built from weights directly (not through SuitNetwork.load) is checked again when packed."""
    network = SuitNetwork({name: array for name, array in _broken_arrays(case).items() if name != "header"})
    with pytest.raises(ValueError, match=BROKEN_LAYERS[case][1]):
        QuantizedSuitEnsemble([network])


def test_every_shipped_suit_network_passes_the_checks():
    paths = sorted(MODELS_DIR.glob("suit_*.npz"))
    assert len(paths) >= 10
    for path in paths:
        network, rules = SuitNetwork.load(path)
        assert rules == Rules() and network.rounds >= 1


@pytest.mark.parametrize("precision", ["float32", "int8"])
def test_a_good_shipped_network_still_loads_and_plays_a_deal(precision):
    player = make_agent(f"suit:path={SHIPPED},precision={precision}", seed=0)
    result = play_deal(Game.deal(Rules(), seed=5, dealer=0), [player, make_agent("heuristic", seed=1)])
    assert result.winner in (0, 1)


def _ppo_model_with_actor_entry(tmp_path: Path, entry: bytes) -> Path:
    """The shipped PPO model with its NumPy actor entry replaced by ``entry`` (no torch weights to fall back on)."""
    path = tmp_path / "garbage_actor.zip"
    with zipfile.ZipFile(DEFAULT_MODEL) as source, zipfile.ZipFile(path, "w") as target:
        for item in source.infolist():
            if item.filename == ACTOR_ENTRY:
                target.writestr(item.filename, entry)
            elif item.filename != "policy.pth":
                target.writestr(item.filename, source.read(item.filename))
    return path


def _half_of_the_shipped_actor() -> bytes:
    with zipfile.ZipFile(DEFAULT_MODEL) as source:
        actor = source.read(ACTOR_ENTRY)
    return actor[:len(actor) // 2]


@pytest.mark.parametrize("entry", [b"not an npz at all", b"", "half"], ids=["text", "empty", "truncated npz"])
def test_a_ppo_model_whose_actor_entry_is_not_an_npz_archive_is_refused_naming_model_and_entry(tmp_path, entry):
    path = _ppo_model_with_actor_entry(tmp_path, _half_of_the_shipped_actor() if entry == "half" else entry)
    with pytest.raises(ValueError, match=re.escape(f"PPO model {str(path)!r}") +
                       f".*entry {re.escape(ACTOR_ENTRY)}: .*not an .npz archive") as raised:
        PpoAgent(path=str(path))
    assert "allow_pickle" not in str(raised.value)


@pytest.mark.parametrize("damage, precision", [("truncated", "float32"), ("layer", "int8")])
def test_cli_match_refuses_a_damaged_suit_network_with_exit_2_and_no_traceback(tmp_path, damage, precision):
    """``sixtysix match``: a truncated file (once a BadZipFile traceback) and a layer that does not fit at int8
    (once a whole match played silently) are both one clean ``error:`` line naming the file."""
    bad = _truncated(tmp_path) if damage == "truncated" else _saved(tmp_path, _broken_arrays("an input short"))
    run = subprocess.run([sys.executable, "-m", "sixtysix_cli", "match", f"suit:path={bad},precision={precision}",
                          "heuristic", "--deals", "1", "--no-progress", "--out", str(tmp_path / "out")],
                         cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and "error:" in run.stderr and str(bad) in run.stderr


def test_a_good_ppo_actor_entry_still_loads():
    with zipfile.ZipFile(DEFAULT_MODEL) as source:
        network, metadata = ActorNetwork.load_npz(io.BytesIO(source.read(ACTOR_ENTRY)))
    assert network.output_size == 37 and metadata["format"]
    assert PpoAgent(path=str(DEFAULT_MODEL)).rules == Rules()


def test_a_ppo_model_whose_metadata_names_no_rules_is_refused_naming_what_it_holds(tmp_path):
    """A model's metadata without "rules" said "has unusable rules in its metadata: 'rules'", the bare key."""
    path = tmp_path / "no_rules.zip"
    with zipfile.ZipFile(DEFAULT_MODEL) as source, zipfile.ZipFile(path, "w") as target:
        for item in source.infolist():
            content = source.read(item.filename)
            if item.filename == "sixtysix.json":
                metadata = json.loads(content)
                del metadata["rules"]
                content = json.dumps(metadata).encode()
            target.writestr(item.filename, content)
    with pytest.raises(ValueError, match=re.escape(f"PPO model {str(path)!r} has unusable rules in its metadata: "
                                                   "rules must be a mapping of switch names to values, got NoneType")):
        PpoAgent(path=str(path))
