"""bench.belief_placement: a belief network's placement of the opponent's unknown cards (docs/strength.md,
"Session 26")."""

from __future__ import annotations

import re

import numpy as np
import pytest

from bench.belief_placement import inclusion_probabilities, main, self_play_positions
from sixtysix_env.observation import OBSERVATION_SIZE


def test_positions_hold_only_unseen_cards_and_the_inclusion_probabilities_add_up_to_his_unknown_cards():
    """At every measured decision the opponent's unknown cards are among the cards the player has not seen (the
    face-down talon holds the rest, R4), and the belief's probabilities live on those cards and add up to his
    count, ordered as the logits are."""
    observations, held, unseen = self_play_positions(7, 4)
    assert observations.shape == (len(held), OBSERVATION_SIZE) and len(held) > 10
    assert np.all(held <= unseen) and np.all(held.sum(axis=1) >= 1)
    assert np.all(unseen.sum(axis=1) > held.sum(axis=1))  # some unseen cards lie in the talon
    rng = np.random.default_rng(0)
    for row in range(len(held)):
        logits = rng.normal(size=24)
        count = int(held[row].sum())
        probabilities = inclusion_probabilities(logits, unseen[row].astype(float), count)
        assert probabilities.sum() == pytest.approx(count, abs=1e-6)
        assert np.all(probabilities[unseen[row] == 0] == 0) and np.all(probabilities <= 1)
        cards = np.flatnonzero(unseen[row])
        ranked = cards[np.argsort(logits[cards])]
        assert np.all(np.diff(probabilities[ranked]) >= -1e-12)


def test_a_small_run_prints_three_placements_between_zero_and_one(capsys):
    pytest.importorskip("torch")
    assert main(["--deals", "40", "--seed", "9000", "--bench-deals", "3", "--bench-seed", "3100", "--epochs", "1",
                 "--workers", "1"]) == 0
    output = capsys.readouterr().out
    figures = re.search(r"worlds ([0-9.]+) / ([0-9.]+) / ([0-9.]+)", output)
    assert figures is not None and all(0 < float(value) <= 1 for value in figures.groups())
    with pytest.raises(SystemExit):
        main(["--deals", "40", "--seed", "3101", "--bench-deals", "3", "--bench-seed", "3100"])  # overlapping deals
