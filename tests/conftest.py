"""Fixtures shared by several test modules."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def play_match(tmp_path_factory):
    """A factory: ``play_match(agents, deals, seed)`` plays a duplicate match of the two agent specs over ``deals``
    deals generated from ``seed`` (standard rules, one worker, no bootstrap) and returns the run's directory."""
    from eval.deals import generate_deals
    from eval.tournament import TournamentSettings, run_tournament
    from sixtysix_env import Rules

    def play(agents: tuple[str, str], deals: int, seed: int):
        rules = Rules()
        settings = TournamentSettings(agents=tuple(agents), rules=rules,
                                      deals=tuple(generate_deals(seed, deals, rules)), master_seed=seed, bootstrap=0)
        out = tmp_path_factory.mktemp("match") / "run"
        run_tournament(settings, out_dir=out, progress=False)
        return out

    return play
