"""Statistics for duplicate-deal tournaments: means with t intervals, Wilson intervals, Bradley–Terry ratings.

Pure functions on plain numbers (no tournament types) so they can be tested on synthetic data with known answers.
Distributions come from ``scipy.stats`` (the t and normal quantiles and the incomplete beta were hand-written
here before; tests/test_eval_stats.py checks the library against those figures and textbook tables).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from scipy import special
from scipy import stats as scipy_stats

ELO_PER_NATURAL_UNIT = 400.0 / math.log(10.0)
"""Bradley–Terry log-strength difference 1.0 expressed on the Elo scale (a 400-point gap = 10:1 odds)."""


# --------------------------------------------------------------------------- distributions (scipy.stats)
def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function (``scipy.special.betainc``)."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"regularized_beta needs 0 <= x <= 1, got {x!r}")
    return float(special.betainc(a, b, x))


def t_cdf(t: float, df: float) -> float:
    """Cumulative distribution function of Student's t with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df!r}")
    return float(scipy_stats.t.cdf(t, df))


def t_quantile(probability: float, df: float) -> float:
    """The ``probability`` quantile of Student's t (e.g. ``t_quantile(0.975, 9) == 2.2622...``)."""
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must be strictly between 0 and 1, got {probability!r}")
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df!r}")
    return float(scipy_stats.t.ppf(probability, df))


def normal_quantile(probability: float) -> float:
    return float(scipy_stats.norm.ppf(probability))


# --------------------------------------------------------------------------- means and proportions
@dataclass(frozen=True)
class MeanInterval:
    """A sample mean with its two-sided confidence interval (Student t on ``n - 1`` degrees of freedom)."""

    mean: float
    half_width: float  # ``inf`` with fewer than two values
    n: int
    std: float  # sample standard deviation (ddof 1); 0 with fewer than two values
    confidence: float

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def to_dict(self) -> dict:
        return {
            "mean": self.mean, "half_width": _finite_or_none(self.half_width), "low": _finite_or_none(self.low),
            "high": _finite_or_none(self.high), "n": self.n, "std": self.std, "confidence": self.confidence,
        }


def check_confidence(confidence: float) -> float:
    """A confidence level strictly between 0 and 1 (a NaN, 1.5 or 0 gave an interval that looked like one)."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.floating)) \
            or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> MeanInterval:
    """Mean and t confidence interval of i.i.d. values (in a duplicate tournament: one value per deal pair)."""
    check_confidence(confidence)
    try:
        data = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"mean_interval needs a sequence of numbers, got {values!r}") from None
    if data.ndim != 1:  # a table would be flattened into one sample, a scalar (None) read as one NaN value
        raise ValueError(f"mean_interval needs a one-dimensional sequence of values, got shape {data.shape}")
    n = int(data.size)
    if n == 0:
        raise ValueError("mean_interval needs at least one value")
    if not np.isfinite(data).all():
        raise ValueError(f"mean_interval needs finite values, got {data[~np.isfinite(data)][:3].tolist()} among them")
    mean = float(data.mean())
    if n < 2:
        return MeanInterval(mean, math.inf, n, 0.0, confidence)
    std = float(data.std(ddof=1))
    half_width = t_quantile(1.0 - (1.0 - confidence) / 2.0, n - 1) * std / math.sqrt(n)
    return MeanInterval(mean, half_width, n, std, confidence)


def ratio_interval(totals: Sequence[float], counts: Sequence[float], confidence: float = 0.95) -> MeanInterval:
    """``sum(totals) / sum(counts)`` with a t interval over the units (the delta method for a ratio of means, as for
    cluster samples): e.g. game points per deal over Bummerl pairs that play different numbers of deals. A unit's
    weight is its count, so a short Bummerl pair does not weigh as much as a long one. With equal counts this is
    :func:`mean_interval` of ``totals / count``. ``std`` is that of the units' linearised values, so
    ``half_width = t * std / sqrt(n)`` as in :func:`mean_interval`."""
    check_confidence(confidence)
    numerators, denominators = np.asarray(totals, dtype=float), np.asarray(counts, dtype=float)
    if numerators.shape != denominators.shape or numerators.ndim != 1:
        raise ValueError(f"ratio_interval needs one count per total, got {numerators.shape} and "
                         f"{denominators.shape}")
    n = int(numerators.size)
    if n == 0:
        raise ValueError("ratio_interval needs at least one unit")
    if np.any(denominators <= 0):
        raise ValueError("ratio_interval needs positive counts")
    ratio = float(numerators.sum() / denominators.sum())
    if n < 2:
        return MeanInterval(ratio, math.inf, n, 0.0, confidence)
    linearised = (numerators - ratio * denominators) / denominators.mean()
    std = float(linearised.std(ddof=1))
    half_width = t_quantile(1.0 - (1.0 - confidence) / 2.0, n - 1) * std / math.sqrt(n)
    return MeanInterval(ratio, half_width, n, std, confidence)


def wilson_interval(successes: float, trials: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion. ``successes`` may be fractional (ties counted as half a win).

    With no trials the interval is the whole range (0, 1).
    """
    check_confidence(confidence)
    if not (math.isfinite(successes) and math.isfinite(trials)) or trials < 0 or successes < 0 or successes > trials:
        raise ValueError(f"wilson_interval needs 0 <= successes <= trials, got {successes!r} of {trials!r}")
    if trials == 0:
        return (0.0, 1.0)
    z = normal_quantile(1.0 - (1.0 - confidence) / 2.0)
    p = successes / trials
    z2n = z * z / trials
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z * math.sqrt(p * (1.0 - p) / trials + z * z / (4.0 * trials * trials)) / (1.0 + z2n)
    # With no successes (or no failures) the bound is exactly 0 (or 1); computed, it may miss by a rounding error.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return (low, high)


def unit_wilson_interval(successes: Sequence[float], trials: Sequence[float],
                         confidence: float = 0.95) -> tuple[float, float]:
    """:func:`wilson_interval` of the pooled rate of units that hold several trials each (the games of a duplicate
    unit), which need not be independent within a unit. Where the units' successes vary more than independent trials
    would (Kish's design effect above 1, from the variance of the ratio estimate over units), the trials are counted
    as fewer by that factor, so the interval widens; where they vary less (the two games of a deal pair share the
    cards and tend to split), it is the plain Wilson interval, which then errs on the safe side."""
    wins, games = np.asarray(successes, dtype=float), np.asarray(trials, dtype=float)
    if wins.shape != games.shape or wins.ndim != 1:
        raise ValueError(f"unit_wilson_interval needs one trial count per unit, got {wins.shape} and {games.shape}")
    wins, games = wins[games > 0], games[games > 0]  # a unit not played yet holds no evidence
    total_wins, total_games = float(wins.sum()), float(games.sum())
    if total_games == 0:
        return wilson_interval(0.0, 0.0, confidence)
    rate, units = total_wins / total_games, len(wins)
    design_effect = 1.0
    if units >= 2 and 0.0 < rate < 1.0:
        ratio_variance = float(((wins - rate * games) ** 2).sum()) / (units - 1) / (units * (total_games / units) ** 2)
        design_effect = max(1.0, ratio_variance / (rate * (1.0 - rate) / total_games))
    effective_games = total_games / design_effect
    return wilson_interval(rate * effective_games, effective_games, confidence)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) with linear interpolation (numpy's default); NaN for no values."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return math.nan
    return float(np.percentile(data, q))


def time_figures(milliseconds: Sequence[float]) -> dict[str, Any]:
    """Times per decision summarised as the tournaments report them: count, mean, median, 95th and 99th
    percentiles and max, in milliseconds (``None`` for no times)."""
    data = np.asarray(milliseconds, dtype=float)
    present = data.size > 0
    return {
        "decisions": int(data.size),
        "mean_ms": float(data.mean()) if present else None,
        "median_ms": float(np.median(data)) if present else None,
        "p95_ms": percentile(data, 95) if present else None,
        "p99_ms": percentile(data, 99) if present else None,
        "max_ms": float(data.max()) if present else None,
    }


# --------------------------------------------------------------------------- Bradley–Terry
def bradley_terry(wins: np.ndarray, prior: float = 0.0, tolerance: float = 1e-12, max_iterations: int = 100_000) -> np.ndarray:
    """Maximum-likelihood Bradley–Terry log-strengths from a win matrix, centred to mean 0.

    ``wins[i, j]`` is how often ``i`` beat ``j`` (fractional counts allowed: a tie is half a win each way).
    The model: P(i beats j) = 1 / (1 + exp(theta_j - theta_i)). Fitted by Hunter's MM algorithm (2004), which
    increases the likelihood every step. ``prior`` adds that many virtual games, split evenly, to every pair that
    played at least once: a small prior keeps strengths finite when an agent won or lost every game (the MLE is
    then at infinity) and pulls slightly towards equality. Without a prior such data raises ``ValueError``.
    """
    wins = np.array(wins, dtype=float)
    if wins.ndim != 2 or wins.shape[0] != wins.shape[1]:
        raise ValueError(f"wins must be a square matrix, got shape {wins.shape}")
    if not np.isfinite(wins).all() or (wins < 0).any():
        raise ValueError("wins must be non-negative finite counts")
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, int) or max_iterations < 1:
        raise ValueError(f"max_iterations must be a positive integer, got {max_iterations!r}")  # 0 gave no fit
    k = wins.shape[0]
    if k == 0:
        return np.zeros(0)
    np.fill_diagonal(wins, 0.0)
    games = wins + wins.T
    if prior:
        played = games > 0
        wins = wins + np.where(played, prior / 2.0, 0.0)
        games = wins + wins.T
    _check_connected(games)
    total_wins = wins.sum(axis=1)
    if k > 1 and ((total_wins <= 0) | (total_wins >= games.sum(axis=1))).any():
        raise ValueError(
            "Bradley–Terry strengths are infinite: an agent won or lost every game; fit with a prior (e.g. prior=1)"
        )
    strengths = _mm_fit(wins[None, :, :], games[None, :, :], tolerance, max_iterations)[0]
    theta = np.log(strengths)
    return theta - theta.mean()


def _check_connected(games: np.ndarray) -> None:
    k = games.shape[0]
    seen, stack = {0}, [0]
    while stack:
        i = stack.pop()
        for j in np.nonzero(games[i] > 0)[0]:
            if int(j) not in seen:
                seen.add(int(j))
                stack.append(int(j))
    if len(seen) != k:
        raise ValueError("Bradley–Terry needs a connected comparison graph: some agents never met the others")


def _mm_fit(wins: np.ndarray, games: np.ndarray, tolerance: float, max_iterations: int) -> np.ndarray:
    """Vectorised MM iterations for a batch of win matrices (shape batch x k x k); returns strengths (batch x k)."""
    batch, k, _ = wins.shape
    total_wins = wins.sum(axis=2)
    strengths = np.ones((batch, k))
    for _ in range(max_iterations):
        pair_sums = strengths[:, :, None] + strengths[:, None, :]
        denominators = (games / pair_sums).sum(axis=2)
        updated = total_wins / denominators
        updated /= np.exp(np.log(updated).mean(axis=1, keepdims=True))  # fix the scale: geometric mean 1
        change = np.max(np.abs(np.log(updated) - np.log(strengths)))
        strengths = updated
        if change < tolerance:
            break
    return strengths


@dataclass(frozen=True)
class Ratings:
    """Bradley–Terry ratings on the Elo scale with bootstrap uncertainty."""

    names: tuple[str, ...]
    elo: tuple[float, ...]
    std_error: tuple[float, ...]
    low: tuple[float, ...]  # 2.5th bootstrap percentile (for confidence 0.95)
    high: tuple[float, ...]
    anchor: str  # "mean 0" or the name of the agent fixed at 0
    prior: float
    bootstrap: int
    # False where the games do not bound the rating (below): its Elo is the prior's, with no interval
    identified: tuple[bool, ...] = ()

    def to_dict(self) -> dict:
        return {
            "scale": "Elo (Bradley-Terry log-strength x 400/ln 10)",
            "anchor": self.anchor,
            "prior_games_per_pair": self.prior,
            "bootstrap_resamples": self.bootstrap,
            "agents": {
                name: {
                    "elo": elo, "std_error": _finite_or_none(se), "low": _finite_or_none(low),
                    "high": _finite_or_none(high), "identified": identified,
                }
                for name, elo, se, low, high, identified in zip(self.names, self.elo, self.std_error, self.low,
                                                                self.high, self.identified or (True,) * len(self.names))
            },
        }


def rate_agents(
    names: Sequence[str],
    wins_per_unit: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    anchor: str | None = None,
    prior: float = 1.0,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Ratings:
    """Fit Bradley–Terry ratings and bootstrap them over the i.i.d. units (deal pairs).

    ``wins_per_unit`` has shape (pairs, units, 2): ``wins_per_unit[p, u]`` is (wins of the first agent of
    ``pairs[p]``, games played) on unit ``u``; ties count half a win. Resampling draws units with replacement jointly for all pairs, because in a
    duplicate round robin every pair plays the same deals. ``anchor`` names the agent fixed at 0 (None: mean 0).
    """
    names = tuple(names)
    k = len(names)
    check_confidence(confidence)
    data = np.asarray(wins_per_unit, dtype=float)
    if data.ndim != 3 or data.shape[0] != len(pairs) or data.shape[2] != 2:
        raise ValueError(f"wins_per_unit must have shape (pairs, units, 2), got {data.shape}")
    if not np.isfinite(data).all() or (data < 0).any() or (data[..., 0] > data[..., 1]).any():
        raise ValueError("wins_per_unit must hold finite (wins, games) with 0 <= wins <= games")
    for pair in pairs:
        if len(pair) != 2 or not all(isinstance(i, (int, np.integer)) and 0 <= i < k for i in pair) \
                or pair[0] == pair[1]:
            raise ValueError(f"pairs must be (i, j) of two different agents among 0..{k - 1}, got {pair!r}")
    if anchor is not None and anchor not in names:
        raise ValueError(f"rating anchor {anchor!r} is not one of the agents {', '.join(names)}")

    def matrices(unit_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Win and game matrices (batch x k x k) for unit weight vectors (batch x units)."""
        sums = np.einsum("bu,puc->bpc", unit_weights, data)
        wins = np.zeros((unit_weights.shape[0], k, k))
        for p, (i, j) in enumerate(pairs):
            wins[:, i, j] += sums[:, p, 0]
            wins[:, j, i] += sums[:, p, 1] - sums[:, p, 0]
        if prior:
            for i, j in pairs:
                wins[:, i, j] += prior / 2.0
                wins[:, j, i] += prior / 2.0
        return wins, wins + np.transpose(wins, (0, 2, 1))

    def to_elo(strengths: np.ndarray) -> np.ndarray:
        theta = np.log(strengths)
        if anchor is None:
            theta = theta - theta.mean(axis=1, keepdims=True)
        else:
            theta = theta - theta[:, [names.index(anchor)]]
        return theta * ELO_PER_NATURAL_UNIT

    units = data.shape[1]
    point_wins, point_games = matrices(np.ones((1, units)))
    # Validate once through the scalar fitter (clear errors for infinite strengths or disconnected graphs).
    bradley_terry(point_wins[0], prior=0.0)
    estimate = to_elo(_mm_fit(point_wins, point_games, 1e-12, 100_000))[0]
    if bootstrap > 0 and units > 1:
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, units, size=(bootstrap, units))
        weights = np.zeros((bootstrap, units))
        np.add.at(weights, (np.arange(bootstrap)[:, None], draws), 1.0)
        boot_wins, boot_games = matrices(weights)
        total = boot_wins.sum(axis=2)
        feasible = ((total > 0) & (total < boot_games.sum(axis=2))).all(axis=1)
        samples = to_elo(_mm_fit(boot_wins[feasible], boot_games[feasible], 1e-10, 100_000))
        std_error = samples.std(axis=0, ddof=1) if len(samples) > 1 else np.full(k, math.nan)
        tail = (1.0 - confidence) / 2.0 * 100.0
        low = np.percentile(samples, tail, axis=0) if len(samples) else np.full(k, math.nan)
        high = np.percentile(samples, 100.0 - tail, axis=0) if len(samples) else np.full(k, math.nan)
    else:
        std_error = low = high = np.full(k, math.nan)
    identified = identified_ratings(point_wins[0] - (_prior_matrix(k, pairs, prior) if prior else 0.0), names,
                                    anchor)
    # An unidentified rating's resamples all repeat the prior's value: a zero-width interval the data do not give.
    std_error, low, high = (np.where(identified, values, math.nan) for values in (std_error, low, high))
    return Ratings(
        names=names,
        elo=tuple(float(x) for x in estimate),
        std_error=tuple(float(x) for x in std_error),
        low=tuple(float(x) for x in low),
        high=tuple(float(x) for x in high),
        anchor=anchor or "mean 0",
        prior=prior,
        bootstrap=bootstrap,
        identified=tuple(bool(flag) for flag in identified),
    )


def _prior_matrix(k: int, pairs: Sequence[tuple[int, int]], prior: float) -> np.ndarray:
    """The virtual drawn games :func:`rate_agents` adds: half a win each way per pair."""
    matrix = np.zeros((k, k))
    for i, j in pairs:
        matrix[i, j] += prior / 2.0
        matrix[j, i] += prior / 2.0
    return matrix


def identified_ratings(wins: np.ndarray, names: Sequence[str], anchor: str | None) -> np.ndarray:
    """Which ratings the games bound (Zermelo's condition): with ``wins[i, j]`` the points ``i`` scored against
    ``j`` (no prior), agent ``i``'s rating relative to the anchor is finite only if each beat the other, directly or
    through others (the same strongly connected part of the "scored against" graph). An agent that won or lost every
    game against the rest has a likelihood that grows without end: only the prior holds its rating. With the mean
    anchored (``anchor`` None), every rating needs the whole graph to be one such part."""
    k = len(names)
    reach = (np.asarray(wins) > 0) | np.eye(k, dtype=bool)
    for _ in range(max(1, k.bit_length())):  # transitive closure by repeated squaring
        reach = reach | ((reach.astype(np.int64) @ reach.astype(np.int64)) > 0)
    mutual = reach & reach.T
    if anchor is None:
        return np.full(k, bool(mutual.all()))
    return mutual[list(names).index(anchor)]


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


__all__ = [
    "ELO_PER_NATURAL_UNIT", "MeanInterval", "Ratings", "bradley_terry", "mean_interval", "normal_quantile",
    "percentile", "rate_agents", "ratio_interval", "regularized_beta", "t_cdf", "t_quantile", "unit_wilson_interval",
    "wilson_interval",
]
