"""Every file in configs/ is a documented command or agent option: each loads through the check its command runs
(training configs through their loaders, weights files through the agents that read them), so a renamed key or a
moved model is caught here, not by the next user who runs it. The distillation configs have their own test
(tests/test_distill.py, ``test_every_shipped_distill_config_loads_with_agents_that_exist``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from agents.registry import make_agent  # noqa: E402
from agents.rollout import rollout_player_params  # noqa: E402
from sixtysix_env.core.heuristic import TUNABLE_SLOTS  # noqa: E402
from train.config import load_config  # noqa: E402
from train.vector_ppo import load_args  # noqa: E402

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
SELFPLAY_CONFIGS = sorted(CONFIGS.glob("ppo*.yaml"))
VECTOR_CONFIGS = sorted(CONFIGS.glob("vector_ppo*.yaml"))
WEIGHTS_FILES = sorted(CONFIGS.glob("*.json"))


def test_every_file_in_configs_is_covered_by_a_test():
    covered = set(SELFPLAY_CONFIGS) | set(VECTOR_CONFIGS) | set(WEIGHTS_FILES) | set(CONFIGS.glob("distill*.yaml"))
    covered |= {CONFIGS / "positions_heuristic.yaml"}  # tests/test_relabel.py
    assert len(SELFPLAY_CONFIGS) >= 6 and len(VECTOR_CONFIGS) >= 5 and len(WEIGHTS_FILES) >= 4
    assert sorted(path.name for path in CONFIGS.iterdir() if path not in covered) == []


@pytest.mark.parametrize("path", SELFPLAY_CONFIGS, ids=lambda path: path.name)
def test_every_shipped_selfplay_config_loads(path):
    """``sixtysix train --config PATH``: the values pass the config checks (keys, ranges, the agents it names)."""
    config = load_config(path)
    assert config.run.name


@pytest.mark.parametrize("path", VECTOR_CONFIGS, ids=lambda path: path.name)
def test_every_shipped_vector_config_loads_with_its_start_model(path):
    """``sixtysix train-vector --config PATH``: the values pass the checks, and a start model it names exists and
    fits the configured net (``load_args`` reads it)."""
    args = load_args(path)
    if args.init_model is not None:
        assert Path(args.init_model).is_file()


@pytest.mark.parametrize("path", WEIGHTS_FILES, ids=lambda path: path.name)
def test_every_shipped_weights_file_changes_the_rollout_player_it_is_given_to(path):
    """``expert:player=PATH`` and ``expert:opponent_weights=PATH`` (R10 closing numbers and the like): every name in
    the file is one of the compiled heuristic's numbers, and the agent built with it plays with those numbers in
    place of the heuristic's own."""
    weights = json.loads(path.read_text())["weights"]
    assert weights and set(weights) <= set(TUNABLE_SLOTS)
    option = "opponent_weights" if path.name.startswith("opponent_") else "player"
    agent = make_agent(f"expert:{option}={path}", seed=0)
    params = agent._opponent_params if option == "opponent_weights" else agent._params
    default = rollout_player_params()
    for name, value in weights.items():
        assert params[TUNABLE_SLOTS[name]] == pytest.approx(value)
        assert default[TUNABLE_SLOTS[name]] != pytest.approx(value)  # the file changes something
    untouched = [slot for name, slot in TUNABLE_SLOTS.items() if name not in weights]
    if option == "player":
        np.testing.assert_allclose(params[untouched], default[untouched])
