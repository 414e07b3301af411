"""Tournament statistics (eval/stats.py) on synthetic data with known answers."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from eval import stats
from eval.tournament import summarise_pair
from eval_records import bummerl_entry, game_entry


@pytest.mark.parametrize(
    "probability, df, expected",
    [
        (0.975, 1, 12.706204736),  # textbook t table values
        (0.975, 9, 2.262157163),
        (0.975, 30, 2.042272456),
        (0.95, 4, 2.131846786),
        (0.975, 1000, 1.962339081),
        (0.975, 1e9, 1.959963985),  # tends to the normal quantile
        (0.025, 9, -2.262157163),
    ],
)
def test_t_quantile_matches_tables(probability, df, expected):
    assert stats.t_quantile(probability, df) == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize(
    "a, b, x, expected",
    [  # figures of the hand-written continued fraction that scipy.special.betainc replaced
        (4.5, 0.5, 0.9, 0.343436396137915),
        (2.0, 3.0, 0.4, 0.5248),
        (0.5, 0.5, 0.25, 1 / 3),
    ],
)
def test_regularized_beta_matches_the_former_hand_written_figures(a, b, x, expected):
    assert stats.regularized_beta(a, b, x) == pytest.approx(expected, rel=1e-8)


def test_normal_quantile():
    assert stats.normal_quantile(0.975) == pytest.approx(1.959963985, rel=1e-9)
    assert stats.normal_quantile(0.5) == 0.0


def test_t_cdf_inverts_quantile_and_is_symmetric():
    for df in (2, 5, 17):
        for p in (0.6, 0.9, 0.995):
            assert stats.t_cdf(stats.t_quantile(p, df), df) == pytest.approx(p, abs=1e-12)
        assert stats.t_cdf(-1.3, df) == pytest.approx(1 - stats.t_cdf(1.3, df), abs=1e-14)


def test_mean_interval_of_known_sample():
    result = stats.mean_interval([1, 2, 3, 4, 5])
    assert result.mean == 3
    assert result.std == pytest.approx(math.sqrt(2.5))
    # t(0.975, 4) = 2.776445105; half width = t * s / sqrt(n)
    assert result.half_width == pytest.approx(2.776445105 * math.sqrt(2.5) / math.sqrt(5), rel=1e-8)
    assert (result.low, result.high) == pytest.approx((3 - result.half_width, 3 + result.half_width))


def test_mean_interval_edge_cases():
    single = stats.mean_interval([2.5])
    assert single.mean == 2.5 and math.isinf(single.half_width) and single.to_dict()["half_width"] is None
    constant = stats.mean_interval([1.0] * 10)
    assert constant.half_width == 0.0
    with pytest.raises(ValueError, match="at least one value"):
        stats.mean_interval([])


@pytest.mark.parametrize(
    "successes, trials, low, high",
    [
        (0, 10, 0.0, 0.277532),  # known Wilson score values (z = 1.959964)
        (5, 10, 0.236593, 0.763407),
        (10, 10, 0.722468, 1.0),
        (1, 10, 0.017876, 0.404150),
    ],
)
def test_wilson_interval_known_values(successes, trials, low, high):
    assert stats.wilson_interval(successes, trials) == pytest.approx((low, high), abs=1e-6)


def test_wilson_interval_half_wins_and_errors():
    low, high = stats.wilson_interval(4.5, 9)  # ties counted half: symmetric around 0.5
    assert low == pytest.approx(1 - high)
    assert stats.wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes <= trials"):
        stats.wilson_interval(11, 10)


def test_bradley_terry_two_players_closed_form():
    # Two players: the MLE log-odds is log(wins / losses) exactly.
    wins = np.array([[0, 30], [10, 0]])
    theta = stats.bradley_terry(wins)
    assert theta[0] - theta[1] == pytest.approx(math.log(3.0), abs=1e-9)
    assert theta.sum() == pytest.approx(0.0, abs=1e-12)


def test_bradley_terry_recovers_known_strengths_from_expected_counts():
    true_theta = np.array([-1.2, 0.0, 0.4, 0.8])
    k = len(true_theta)
    wins = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            if i != j:  # expected win counts of 1000 games per pair: the MLE equals the truth exactly
                wins[i, j] = 1000 / (1 + math.exp(true_theta[j] - true_theta[i]))
    theta = stats.bradley_terry(wins)
    assert theta == pytest.approx(true_theta - true_theta.mean(), abs=1e-8)


def test_bradley_terry_unbeaten_needs_prior_and_disconnected_fails():
    wins = np.array([[0, 5], [0, 0]])
    with pytest.raises(ValueError, match="infinite"):
        stats.bradley_terry(wins)
    theta = stats.bradley_terry(wins, prior=1.0)  # 5.5 : 0.5
    assert theta[0] - theta[1] == pytest.approx(math.log(11.0), abs=1e-9)
    disconnected = np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]])
    with pytest.raises(ValueError, match="connected"):
        stats.bradley_terry(disconnected)


def test_rate_agents_anchor_and_bootstrap_error_match_theory():
    rng = np.random.default_rng(7)
    units, p = 2000, 0.75  # 2 games per unit, independent here, P(A wins) = 0.75
    data = np.stack([rng.binomial(2, p, units), np.full(units, 2)], axis=1)[None].astype(float)
    ratings = stats.rate_agents(["random", "strong"], data, [(0, 1)], anchor="random", prior=0.0, bootstrap=400)
    assert ratings.elo[0] == 0.0 and ratings.std_error[0] == 0.0
    observed = data[0, :, 0].sum() / data[0, :, 1].sum()
    expected_elo = -math.log(observed / (1 - observed)) * stats.ELO_PER_NATURAL_UNIT  # 'strong' lost with p
    assert ratings.elo[1] == pytest.approx(expected_elo, abs=1e-6)
    # Delta method: SE(logit) = 1 / sqrt(n p (1 - p)) with n = 4000 games.
    theory = stats.ELO_PER_NATURAL_UNIT / math.sqrt(2 * units * p * (1 - p))
    assert ratings.std_error[1] == pytest.approx(theory, rel=0.2)
    assert ratings.low[1] < ratings.elo[1] < ratings.high[1]
    centred = stats.rate_agents(["a", "b"], data, [(0, 1)], prior=0.0, bootstrap=0)
    assert sum(centred.elo) == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError, match="anchor"):
        stats.rate_agents(["a", "b"], data, [(0, 1)], anchor="random")


def test_a_rating_the_games_do_not_bound_gets_no_interval():
    """An agent that won every game: its likelihood grows without end, the prior alone holds its rating, and every
    bootstrap resample repeated that value, a zero-width interval (+529 ± 0 after ten won games)."""
    swept = np.array([[[2.0, 2.0]] * 5])  # 'strong' (first of the pair) won both games of all five deal pairs
    ratings = stats.rate_agents(["random", "strong"], swept, [(1, 0)], anchor="random", bootstrap=200)
    assert ratings.identified == (True, False)
    assert ratings.elo[1] == pytest.approx(stats.ELO_PER_NATURAL_UNIT * math.log(10.5 / 0.5))  # the prior's value
    assert all(math.isnan(value) for value in (ratings.std_error[1], ratings.low[1], ratings.high[1]))
    assert ratings.to_dict()["agents"]["strong"] == {"elo": ratings.elo[1], "std_error": None, "low": None,
                                                      "high": None, "identified": False}
    # One lost game anywhere links the two: a finite interval again.
    mixed = swept.copy()
    mixed[0, 2] = [1.0, 2.0]
    again = stats.rate_agents(["random", "strong"], mixed, [(1, 0)], anchor="random", bootstrap=200)
    assert again.identified == (True, True) and again.low[1] < again.elo[1] < again.high[1]
    # Three agents: c beats a and b, which beat each other; c is unbounded, a and b are not (anchored at a);
    # with the mean anchored, no rating is bounded.
    wins = np.array([[0, 1, 0], [1, 0, 0], [3, 2, 0]], dtype=float)
    assert stats.identified_ratings(wins, ["a", "b", "c"], "a").tolist() == [True, True, False]
    assert stats.identified_ratings(wins, ["a", "b", "c"], None).tolist() == [False, False, False]
    wins[0, 2] = 1  # a beat c once: one strongly connected whole
    assert stats.identified_ratings(wins, ["a", "b", "c"], None).tolist() == [True, True, True]


def test_the_report_says_which_ratings_have_no_interval():
    from eval.report import unidentified_ratings_note

    ratings = {"agents": {"random": {"identified": True}, "heuristic": {"identified": False}}}
    (_, note) = unidentified_ratings_note(ratings)
    assert note.startswith("No interval for `heuristic`: won or lost every game")
    assert unidentified_ratings_note({"agents": {"random": {"identified": True}}}) == []


def test_summarise_pair_on_synthetic_records():
    # Unit 0: A wins 3 as seat 0 and loses 1 as seat 1 -> margin (3 - 1) / 2 = +1, 1 deal win.
    # Unit 1: A loses 2 in both seats -> margin -2, 0 wins.  Unit 2: A wins 1 twice -> +1, 2 wins.
    # Unit 3: one deal not scored (R15, half a win) and A wins 2 as seat 1 -> +1, 1.5 wins.
    records = [
        {"pair": 0, "deal": 0, "games": [game_entry(0, 0, 3), game_entry(1, 0, 1)]},
        {"pair": 0, "deal": 1, "games": [game_entry(0, 1, 2), game_entry(1, 0, 2)]},
        {"pair": 0, "deal": 2, "games": [game_entry(0, 0, 1), game_entry(1, 1, 1)]},
        {"pair": 0, "deal": 3, "games": [game_entry(0, None, 0), game_entry(1, 1, 2)]},
    ]
    summary = summarise_pair(records, match=False)
    expected = stats.mean_interval([1.0, -2.0, 1.0, 1.0])
    assert summary["margin_per_deal"]["mean"] == pytest.approx(0.25)
    assert summary["margin_per_deal"]["half_width"] == pytest.approx(expected.half_width)
    assert summary["deal_win_rate"]["wins"] == 4.5 and summary["deal_win_rate"]["deals"] == 8
    # The units' wins (1, 0, 2, 1.5 of 2) vary more than independent deals would: the interval counts fewer deals.
    assert (summary["deal_win_rate"]["low"], summary["deal_win_rate"]["high"]) == pytest.approx(
        stats.unit_wilson_interval([1.0, 0.0, 2.0, 1.5], [2, 2, 2, 2])
    )
    assert summary["deal_win_rate"]["high"] - summary["deal_win_rate"]["low"] > (
        stats.wilson_interval(4.5, 8)[1] - stats.wilson_interval(4.5, 8)[0])
    assert summary["duplicate_pairs"] == {"won": 3, "tied": 0, "lost": 1}


def test_ratio_interval_is_the_mean_interval_when_every_unit_counts_alike():
    totals = [2.0, -4.0, 2.0, 2.0, 6.0]
    ratio = stats.ratio_interval(totals, [2] * 5)
    mean = stats.mean_interval([total / 2 for total in totals])
    assert (ratio.mean, ratio.half_width, ratio.std, ratio.n) == pytest.approx(
        (mean.mean, mean.half_width, mean.std, mean.n))


def test_ratio_interval_weighs_each_unit_by_its_count_with_the_delta_method():
    # Bummerl pairs of 4, 10 and 6 deals: per deal played (18 - 5 + 3) / 20 = 0.8, where the mean of the pairs' own
    # per-deal margins would be (4.5 - 0.5 + 0.5) / 3 = 1.5.
    totals, counts = np.array([18.0, -5.0, 3.0]), np.array([4.0, 10.0, 6.0])
    interval = stats.ratio_interval(totals, counts)
    assert interval.mean == pytest.approx(0.8)
    # The textbook variance of a ratio of means: sum((y - R x)^2) / (n (n - 1) mean(x)^2).
    residuals = totals - 0.8 * counts
    standard_error = math.sqrt((residuals ** 2).sum() / (3 * 2 * counts.mean() ** 2))
    assert interval.half_width == pytest.approx(stats.t_quantile(0.975, 2) * standard_error)


def test_ratio_interval_edge_cases():
    assert stats.ratio_interval([3.0], [2.0]).half_width == math.inf  # one unit: no spread to measure
    with pytest.raises(ValueError, match="at least one unit"):
        stats.ratio_interval([], [])
    with pytest.raises(ValueError, match="one count per total"):
        stats.ratio_interval([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="positive counts"):
        stats.ratio_interval([1.0, 2.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="confidence"):
        stats.ratio_interval([1.0, 2.0], [1.0, 1.0], confidence=1.0)


def test_summarise_pair_in_match_mode_gives_the_margin_per_deal_played():
    """Bummerl pairs of different lengths: every deal weighs the same (total margin over total deals), not every
    Bummerl pair."""
    short = [bummerl_entry(0, 0, [game_entry(0, 0, 3), game_entry(0, 0, 3), game_entry(0, 0, 1)]),
             bummerl_entry(1, 1, [game_entry(1, 1, 3), game_entry(1, 1, 2), game_entry(1, 1, 2)])]  # +14 over 6 deals
    long = [bummerl_entry(0, 1, [game_entry(0, 1, 1)] * 5 + [game_entry(0, 0, 1)] * 2),
            bummerl_entry(1, 0, [game_entry(1, 0, 1)] * 6 + [game_entry(1, 1, 1)] * 3)]  # -3 - 3 = -6 over 16 deals
    records = [{"pair": 0, "deal": 0, "bummerls": short}, {"pair": 0, "deal": 1, "bummerls": long}]
    summary = summarise_pair(records, match=True)
    assert summary["deals_played"] == 22
    assert summary["margin_per_deal"]["mean"] == pytest.approx((14 - 6) / 22)
    assert summary["margin_per_deal"]["n"] == 2


def test_unit_wilson_interval_counts_fewer_trials_only_where_units_vary_together():
    # Every unit splits its two games: less spread than independent games, so the plain Wilson interval.
    assert stats.unit_wilson_interval([1, 1, 1, 1], [2, 2, 2, 2]) == pytest.approx(stats.wilson_interval(4, 8))
    # All or nothing per unit: the ratio's variance over units is 0.06 against a binomial 0.6 * 0.4 / 10 = 0.024,
    # a design effect of 2.5, so the 10 games count as 4.
    assert stats.unit_wilson_interval([2, 0, 2, 0, 2], [2] * 5) == pytest.approx(stats.wilson_interval(2.4, 4))
    # Units not played yet are left out; all wins or none leave nothing to estimate a spread from.
    assert stats.unit_wilson_interval([1, 1, 0], [2, 2, 0]) == pytest.approx(stats.wilson_interval(2, 4))
    assert stats.unit_wilson_interval([2, 2], [2, 2]) == pytest.approx(stats.wilson_interval(4, 4))
    assert stats.unit_wilson_interval([], []) == (0.0, 1.0)
    with pytest.raises(ValueError, match="one trial count per unit"):
        stats.unit_wilson_interval([1, 2], [2])


# ------------------------------------------------------------------ found by a mutation review of eval/ (session 72)
def test_unit_wilson_interval_leaves_out_unplayed_units_and_measures_spread_from_two():
    """Two played units of all-or-nothing (2 of 2, 0 of 2) give a ratio variance of 0.25 against a binomial
    0.5 * 0.5 / 4: a design effect of 4, so the 4 games count as one. The third unit, not played yet, must not count
    as a unit (it would shrink the spread to a design effect of 3)."""
    assert stats.unit_wilson_interval([2, 0, 0], [2, 2, 0]) == pytest.approx(stats.wilson_interval(0.5, 1.0))
    assert stats.unit_wilson_interval([2, 0], [2, 2]) == pytest.approx(stats.wilson_interval(0.5, 1.0))


def test_time_figures_give_the_median_and_percentiles_of_the_times():
    figures = stats.time_figures([1.0, 2.0, 30.0])
    assert figures["median_ms"] == 2.0 and figures["mean_ms"] == pytest.approx(11.0) and figures["max_ms"] == 30.0
    assert figures["p95_ms"] == pytest.approx(np.percentile([1.0, 2.0, 30.0], 95)) and figures["decisions"] == 3


def _two_agent_units(first_wins: list[float]) -> np.ndarray:
    """(pairs=1, units, 2): the first agent's wins of 2 games per unit."""
    return np.array([[[wins, 2.0] for wins in first_wins]])


def test_two_agent_ratings_are_the_elo_of_the_win_odds_and_their_bootstrap_percentiles():
    """Bradley–Terry with two agents has a closed form: the strength ratio is the ratio of wins (the prior's drawn
    game adds half a win to each), so A's Elo over B is 400 log10(wins_A / wins_B). The bootstrap resamples the units
    with replacement; with the same generator the 2.5th and 97.5th percentiles of that closed form over the
    resamples are the interval (numpy's percentile, computed here independently of the fitter)."""
    first_wins = [2.0, 1.0, 1.0, 0.0, 2.0, 1.0, 2.0, 1.0]
    units = len(first_wins)
    ratings = stats.rate_agents(["a", "b"], _two_agent_units(first_wins), [(0, 1)], anchor="b", prior=1.0,
                                bootstrap=400, seed=7)
    wins_a = sum(first_wins) + 0.5
    wins_b = 2 * units - sum(first_wins) + 0.5
    assert ratings.elo[1] == 0.0  # the anchor
    assert ratings.elo[0] == pytest.approx(400.0 * math.log10(wins_a / wins_b), abs=1e-6)
    draws = np.random.default_rng(7).integers(0, units, size=(400, units))
    resampled = np.asarray(first_wins)[draws].sum(axis=1)
    elo = 400.0 * np.log10((resampled + 0.5) / (2 * units - resampled + 0.5))
    assert (ratings.low[0], ratings.high[0]) == pytest.approx(
        (np.percentile(elo, 2.5), np.percentile(elo, 97.5)), abs=1e-4)
    assert ratings.std_error[0] == pytest.approx(elo.std(ddof=1), abs=1e-4)
    wider = stats.rate_agents(["a", "b"], _two_agent_units(first_wins), [(0, 1)], anchor="b", bootstrap=400, seed=7,
                              confidence=0.5)
    assert (wider.low[0], wider.high[0]) == pytest.approx((np.percentile(elo, 25), np.percentile(elo, 75)), abs=1e-4)


def test_the_anchor_agent_is_rated_zero_wherever_it_stands_in_the_list():
    units = np.array([[[1.0, 2.0], [2.0, 2.0]], [[2.0, 2.0], [1.0, 2.0]], [[1.0, 2.0], [0.0, 2.0]]])
    pairs = [(0, 1), (0, 2), (1, 2)]
    by_mean = stats.rate_agents(["x", "y", "z"], units, pairs, bootstrap=0)
    by_z = stats.rate_agents(["x", "y", "z"], units, pairs, anchor="z", bootstrap=0)
    assert by_z.elo[2] == 0.0 and sum(by_mean.elo) == pytest.approx(0.0, abs=1e-9)
    # The anchor moves every rating by the same amount: the differences are the fit's.
    assert [a - by_z.elo[2] for a in by_z.elo] == pytest.approx([b - by_mean.elo[2] for b in by_mean.elo], abs=1e-6)


def test_a_rating_is_identified_only_where_both_directions_of_scoring_connect_it():
    """Zermelo's condition, directed: ``c`` lost every game to ``a`` (a scored against c, c never against anyone),
    so against the anchor ``a`` its rating is unbounded though ``a`` reaches it."""
    wins = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    assert stats.identified_ratings(wins, ["a", "b", "c"], "a").tolist() == [True, True, False]
    assert stats.identified_ratings(wins, ["a", "b", "c"], None).tolist() == [False, False, False]


def test_a_long_cycle_of_wins_identifies_every_rating():
    """Each of six agents beat only the next one round a cycle: everyone reaches everyone through five steps, so the
    transitive closure must follow chains longer than two."""
    size = 6
    wins = np.zeros((size, size))
    for agent in range(size):
        wins[agent, (agent + 1) % size] = 1.0
    names = [f"p{agent}" for agent in range(size)]
    assert stats.identified_ratings(wins, names, None).all()
    assert stats.identified_ratings(wins, names, "p3").all()


def test_wilson_intervals_of_all_or_nothing_reach_exactly_zero_and_one():
    """No success: the lower bound is exactly 0 (no failure: the upper is exactly 1), not a rounding error away."""
    for trials in range(1, 101):
        assert stats.wilson_interval(0, trials)[0] == 0.0 and stats.wilson_interval(trials, trials)[1] == 1.0


@pytest.mark.parametrize("call, message", [
    (lambda: stats.wilson_interval(5, 10, confidence=1.5), "confidence must be strictly between 0 and 1, got 1.5"),
    (lambda: stats.wilson_interval(5, 10, confidence=0), "confidence must be strictly between 0 and 1, got 0"),
    (lambda: stats.wilson_interval(math.nan, 10), "wilson_interval needs 0 <= successes <= trials"),
    (lambda: stats.unit_wilson_interval([1, 2], [2, 2], confidence=math.nan), "confidence must be strictly"),
    (lambda: stats.mean_interval(None), "one-dimensional sequence of values, got shape ()"),
    (lambda: stats.mean_interval([1.0, math.nan, 2.0]), "mean_interval needs finite values, got [nan]"),
    (lambda: stats.mean_interval([[1, 2], [3, 4]]), "one-dimensional sequence of values, got shape (2, 2)"),
    (lambda: stats.mean_interval(["a", "b"]), "mean_interval needs a sequence of numbers"),
    (lambda: stats.bradley_terry(np.array([[0, 3], [1, 0]]), max_iterations=0), "max_iterations must be a positive"),
    (lambda: stats.bradley_terry(np.array([[0, math.inf], [1, 0]])), "wins must be non-negative finite counts"),
    (lambda: stats.rate_agents(["a", "b"], np.array([[[-1, 2]]]), [(0, 1)]), "0 <= wins <= games"),
    (lambda: stats.rate_agents(["a", "b"], np.array([[[3, 2]]]), [(0, 1)]), "0 <= wins <= games"),
    (lambda: stats.rate_agents(["a", "b"], np.array([[[1, 2]]]), [(0, 2)]), "pairs must be (i, j) of two different"),
    (lambda: stats.rate_agents(["a", "b"], np.array([[[1, 2]]]), [(1, 1)]), "pairs must be (i, j) of two different"),
    (lambda: stats.rate_agents(["a", "b"], np.array([[[1, 2]]]), [(0, 1)], confidence=2), "confidence must be"),
])
def test_the_statistics_refuse_input_that_would_give_an_interval_that_only_looks_like_one(call, message):
    """Found by a review of the public API: these returned (0, 1), (0.5, 0.5), a NaN mean over one value, a table
    flattened into one sample, unfitted ratings or ratings of negative wins, or an IndexError or numpy's message."""
    with pytest.raises(ValueError, match=re.escape(message)):
        call()
