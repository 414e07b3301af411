"""Reference figures the tests check the project's statistics against, computed from their definitions with scipy
(not through eval.stats, which they test)."""

from __future__ import annotations

import numpy as np
from scipy import stats


def t_interval(values) -> tuple[float, float, float]:
    """(mean, low, high): the mean of ``values`` and its 95 % t interval, mean ± t(0.975, n - 1) · s / √n."""
    values = np.asarray(values, dtype=float)
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return float(values.mean()), float(values.mean() - half), float(values.mean() + half)
