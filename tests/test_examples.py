"""The runnable examples under examples/ (docs/examples.md, README): each runs here on a few hundred steps, or is
skipped with the reason when its library is not installed."""

from __future__ import annotations

import importlib.util
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def load_example(name: str):
    """Import examples/<name>.py as a module (the examples are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def needs(*modules: str):
    missing = [module for module in modules if importlib.util.find_spec(module) is None]
    return pytest.mark.skipif(
        bool(missing), reason=f"{', '.join(missing)} not installed (pip install -e '.[examples]')"
    )


# --------------------------------------------------------------------------- plain SB3 and the shipped model
@needs("sb3_contrib", "torch")
def test_plain_sb3_plays_the_shipped_model_as_the_ppo_agent_does():
    """The README's recipe (flat observation, masks to predict, the endgame to the exact search) chooses exactly
    the ``ppo`` agent's actions, decision by decision."""
    from agents import make_agent
    from sb3_contrib import MaskablePPO

    example = load_example("sb3_shipped_model")
    model = MaskablePPO.load(example.MODEL, device="cpu")
    agent = make_agent("ppo", seed=0)
    env = example.make_env("heuristic", seed=3)
    decisions = 0
    for deal in range(4):
        observation, _ = env.reset(seed=100 + deal)
        base = env.unwrapped
        agent.start_deal(base.learner, base.rules)
        done = False
        while not done:
            action, _ = model.predict(observation, action_masks=env.action_masks(), deterministic=True)
            assert int(action) == agent.act(base.information_set())
            assert env.action_masks()[int(action)]
            decisions += 1
            observation, reward, terminated, truncated, _ = env.step(int(action))
            done = terminated or truncated
        assert reward in (-3, -2, -1, 0, 1, 2, 3)  # R16 game points, from the learner's side
    assert decisions >= 8


@needs("sb3_contrib", "torch")
def test_sb3_example_script_plays_whole_deals():
    returns = load_example("sb3_shipped_model").play(3, opponent="random", seed=5)
    assert len(returns) == 3 and all(value in (-3, -2, -1, 0, 1, 2, 3) for value in returns)
