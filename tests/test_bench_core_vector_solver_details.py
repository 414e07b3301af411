"""Details of bench.inference_fallback, bench.solver_bench, bench.open_solve, bench.core_bench, bench.vector_bench
and bench.plot_networks: the figures they print are computed from what they claim to measure, their options'
defaults are the documented ones and their bounds hold at the edges (a mutation review's tests)."""

from __future__ import annotations

import inspect
import random
import sys

import numpy as np
import pytest
from fake_clock import FakeClock
from play_helpers import heuristic_self_play_to_lead
from refusals import refused_before

from sixtysix_env import Game, InformationSet, Rules


# --- bench.inference_fallback ---------------------------------------------------------------------------------------


def test_marginals_are_the_shares_of_expert_like_inferred_worlds_putting_each_unseen_card_in_his_hand():
    """Worlds drawn by rejection with expert's floors and the given tries, from ``random.Random(seed)``: the share
    of them whose opponent hand holds each unseen card (cards in ascending order), and how many the fallback kept."""
    from agents.inference import WORLD_FALLBACKS, ReplayedWorlds
    from agents.registry import make_agent
    from bench.inference_fallback import deviating_position, marginals

    floors = make_agent("expert", seed=0).floors
    for seed, tricks, fallback in ((11004, 2, WORLD_FALLBACKS[0]), (11015, 3, WORLD_FALLBACKS[1])):
        game, viewer = deviating_position(seed, tricks, 0.5)  # viewers 0 and 1
        infoset = InformationSet(game, viewer)
        unseen = [card for card in range(64) if infoset.unseen >> card & 1]
        drawn = ReplayedWorlds(infoset, *floors, max_tries=6, fallback=fallback)
        rng = random.Random(5)
        hands = [drawn.determinize(rng).hands[1 - viewer] for _ in range(96)]  # three whole batches of worlds
        expected = [sum(hand >> card & 1 for hand in hands) / 96 for card in unseen]
        shares, from_fallback = marginals(infoset, 96, 6, fallback, 5)
        assert viewer == seed % 2 and shares.tolist() == pytest.approx(expected, abs=1e-12)
        assert from_fallback == drawn.stats[2] > 0


def test_the_fallback_count_is_of_the_worlds_used_not_of_the_whole_last_batch():
    """Worlds come in batches of 32; the count of worlds from the fallback covered each whole batch, so two worlds
    were reported as "11 of 2". Now each world more adds 0 or 1 to the count, the shares are the same, and a full
    batch counts what ReplayedWorlds' own statistics count for it."""
    from agents.inference import ReplayedWorlds
    from agents.registry import make_agent
    from bench.inference_fallback import deviating_position, marginals

    infoset = InformationSet(*deviating_position(11004, 3, 0.5))
    assert ReplayedWorlds.BATCH == 32
    whole = ReplayedWorlds(infoset, *make_agent("expert", seed=0).floors, max_tries=2)
    rng = random.Random(3)
    hands = [whole.determinize(rng).hands[infoset.opponent] for _ in range(64)]  # two whole batches
    counts = [0] + [marginals(infoset, worlds, 2, "likeliest", 3)[1] for worlds in range(1, 34)]
    assert all(later - earlier in (0, 1) for earlier, later in zip(counts, counts[1:]))
    batch, rng = ReplayedWorlds(infoset, *make_agent("expert", seed=0).floors, max_tries=2), random.Random(3)
    for _ in range(32):
        batch.next_state(rng)
    assert counts[32] == batch.stats[2] and 0 < counts[32] < 32
    unseen = [card for card in range(64) if infoset.unseen >> card & 1]
    shares, _ = marginals(infoset, 33, 2, "likeliest", 3)  # the first 33 of those worlds
    assert shares.tolist() == pytest.approx([sum(hand >> card & 1 for hand in hands[:33]) / 33 for card in unseen])


def test_without_deviation_the_position_is_heuristic_self_play_with_seat_seeds_seed_and_seed_plus_one():
    """After five tricks the heuristic's sampled choices depend on its seed in these deals: the position is the
    self-play of the players seeded ``seed`` (seat 0) and ``seed + 1`` (seat 1), reproducibly."""
    from bench.inference_fallback import reached_position

    positions = 0
    for seed in (11004, 11005, 11007, 11010):
        reached, could, history = heuristic_self_play_to_lead(seed, 5)
        position = reached_position(seed, 5, 0.0)
        assert reached == (position is not None)
        if reached:
            positions += 1
            assert list(position[0].history) == history and position[1:] == (seed % 2, could)
    assert positions >= 2


def test_inference_fallback_says_why_a_seed_has_no_position(monkeypatch, capsys):
    """A seed whose viewer never leads after --tricks tricks (the opponent took that trick, or the deal ended) was
    reported as one where the opponent could not exchange or announce; each now gets its own reason."""
    from bench import inference_fallback

    monkeypatch.setattr(inference_fallback, "marginals", lambda infoset, worlds, *rest: (np.zeros(2), 0))
    seeds = range(11000, 11010)
    assert inference_fallback.main(["--seeds", ",".join(map(str, seeds)), "--tricks", "2", "--deviate", "0",
                                    "--worlds", "5"]) == 0
    printed = capsys.readouterr().out.splitlines()
    kinds = set()
    for seed in seeds:
        reached, could, _history = heuristic_self_play_to_lead(seed, 2)
        kinds.add((reached, could))
        rows = [line for line in printed if line.startswith(f"| {seed} |")]
        if not reached:
            assert rows == [f"| {seed} | (no position: the viewer does not lead after trick 2) | | | |"]
        elif not could:
            assert rows == [f"| {seed} | (no position: the opponent could not exchange or announce) | | | |"]
        else:
            assert [row.split(" | ")[1] for row in rows] == ["likeliest", "resample"]
    assert {reached for reached, _could in kinds} == {True, False} and (True, True) in kinds


def _fallback_main(monkeypatch, arguments, shares_by=None):
    """Run bench.inference_fallback's main with the position and the marginals faked: (what each was called with,
    the printed table)."""
    from bench import inference_fallback

    calls = {"positions": [], "marginals": []}
    position = (Game.deal(Rules(), seed=1, dealer=1), 1)

    def fake_position(seed, tricks, deviate):
        calls["positions"].append((seed, tricks, deviate))
        return position + (True,)

    def fake_marginals(infoset, worlds, tries, fallback, seed):
        calls["marginals"].append((worlds, tries, fallback, seed))
        shares = (shares_by or {}).get((tries, fallback), [0.5, 0.5])
        return np.array(shares), len(calls["marginals"])

    monkeypatch.setattr(inference_fallback, "reached_position", fake_position)
    monkeypatch.setattr(inference_fallback, "marginals", fake_marginals)
    if arguments is None:  # the command line itself
        monkeypatch.setattr(sys, "argv", ["inference_fallback"])
        assert inference_fallback.main() == 0
    else:
        assert inference_fallback.main(arguments) == 0
    return calls


def test_inference_fallback_defaults_are_the_documented_ones(monkeypatch, capsys):
    """Seeds 11004 and 11015, 3 tricks, deviate 0.5, 4000 worlds, expert's 64 tries (ReplayedWorlds' default) and
    a reference of 5000 tries drawn with the likeliest fallback, each position's worlds seeded by its deal seed."""
    from agents.inference import WORLD_FALLBACKS, ReplayedWorlds

    expert_tries = inspect.signature(ReplayedWorlds).parameters["max_tries"].default
    calls = _fallback_main(monkeypatch, None)
    assert calls["positions"] == [(11004, 3, 0.5), (11015, 3, 0.5)]
    assert calls["marginals"] == [call for seed in (11004, 11015) for call in
                                  [(4000, 5000, "likeliest", seed)] + [(4000, expert_tries, way, seed)
                                                                       for way in WORLD_FALLBACKS]]


def test_inference_fallback_rows_give_each_ways_summed_and_worst_distance_from_the_reference(monkeypatch, capsys):
    """Distances |share - reference share| card by card: summed, and the largest; the count is the fallback's."""
    shares = {(9, "likeliest"): [0.5, 0.5, 0.0], (3, "likeliest"): [0.9, 0.2, 0.1], (3, "resample"): [0.45, 0.5, 0.0]}
    calls = _fallback_main(monkeypatch, ["--seeds", "7", "--worlds", "10", "--tries", "3", "--reference-tries", "9"],
                           shares)
    assert calls["marginals"] == [(10, 9, "likeliest", 7), (10, 3, "likeliest", 7), (10, 3, "resample", 7)]
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["| seed | way | worlds from the fallback | the marginals' distances from the reference, "
                         "summed | worst card |", "|---:|---|---:|---:|---:|"]
    # likeliest: 0.4 + 0.3 + 0.1, worst 0.4; resample: 0.05 + 0 + 0, worst 0.05 (fake counts: the call's number)
    assert lines[2:] == ["| 7 | likeliest | 2 of 10 | 0.800 | 0.400 |", "| 7 | resample | 3 of 10 | 0.050 | 0.050 |"]


@pytest.mark.parametrize("arguments", [["--tricks", "1"], ["--tricks", "5"], ["--deviate", "0"], ["--deviate", "1"],
                                       ["--worlds", "1", "--tries", "1", "--reference-tries", "1"]])
def test_inference_fallback_accepts_the_edges_of_its_options(monkeypatch, capsys, arguments):
    calls = _fallback_main(monkeypatch, ["--seeds", "3"] + arguments)
    assert len(calls["positions"]) == 1


@pytest.mark.parametrize("arguments, message", [
    (["--tricks", "0"], "--tricks must lie in 1..5"), (["--tricks", "6"], "--tricks must lie in 1..5"),
    (["--deviate", "-0.01"], "--deviate in [0, 1]"), (["--deviate", "1.01"], "--deviate in [0, 1]"),
    (["--tries", "0"], "--tries and --reference-tries must be positive"),
    (["--reference-tries", "0"], "--tries and --reference-tries must be positive"),
])
def test_inference_fallback_refuses_options_just_outside_their_range(monkeypatch, capsys, arguments, message):
    from bench import inference_fallback

    assert message in refused_before(monkeypatch, capsys, inference_fallback.main, arguments, inference_fallback,
                                     "reached_position", "a position was played")


# --- bench.solver_bench ---------------------------------------------------------------------------------------------


def _deal_of(game: Game, first: int) -> int:
    """The deal number ``d`` (from ``first`` on) whose ``Game.deal(rules, seed=d, dealer=d & 1)`` is ``game``'s."""
    for deal in range(first, first + 200):
        if Game.deal(game.rules, seed=deal, dealer=deal & 1).deck == game.deck and game.dealer == deal & 1:
            return deal
    raise AssertionError("no deal found")


@pytest.mark.parametrize("preset, seed", [("standard", 2), ("paderborn", 0)])
def test_fresh_positions_are_six_card_leads_of_each_kind_in_turn_from_later_and_later_deals(preset, seed):
    """Closed at forehand's first turn, closed by the leader after 1 + deal % 4 policy-played tricks, or played by
    the policy to the talon's exhaustion (R7, R10); always at a lead with six cards in each hand, the deals of
    ``seed * 1_000_003 + 1`` on, each used once at most."""
    from agents.pimc import policy_action
    from bench.solver_bench import KINDS, fresh_positions
    from sixtysix_env.actions import CLOSE
    from sixtysix_env.game import LEAD

    rules = Rules.preset(preset)
    positions = fresh_positions(7, rules, seed)
    assert [kind for kind, _ in positions] == [KINDS[index % 3] for index in range(7)]
    previous, deals = seed * 1_000_003, []
    for kind, game in positions:
        deal = _deal_of(game, previous + 1)
        assert deal > previous and game.rules == rules
        previous = deal
        deals.append(deal)
        assert not game.is_over and game.stage == LEAD and game.phase2
        assert [game.hands[seat].bit_count() for seat in (0, 1)] == [6, 6]
        replay = Game.deal(rules, seed=deal, dealer=deal & 1)
        for action in game.history:  # every choice but the closing is the playout policy's
            if action != CLOSE:
                assert action == policy_action(replay)
            replay.apply(action)
        if kind == "exhausted":
            assert game.closed_by is None and CLOSE not in game.history
        else:
            closed_at = list(game.history).index(CLOSE)
            replay = Game.deal(rules, seed=deal, dealer=deal & 1)
            for action in game.history[:closed_at]:
                replay.apply(action)
            assert replay.stage == LEAD and len(replay.tricks) == (0 if kind == "closed" else 1 + deal % 4)
    assert deals == [seed * 1_000_003 + number for number in range(1, 8)]  # each of these deals made a position
    more = fresh_positions(12, Rules())  # seed 0 by default: the deals from 1 on
    assert all(not game.is_over and game.stage == LEAD and game.hands[0].bit_count() == game.hands[1].bit_count() == 6
               for _kind, game in more)
    # position 11 is to be an exhausted talon: deal 12 played by the policy ends before it, so deal 13 is taken
    twelfth = Game.deal(Rules(), seed=12, dealer=0)
    while not twelfth.is_over and not twelfth.phase2:
        twelfth.apply(policy_action(twelfth))
    assert twelfth.is_over
    previous, deals = 0, []
    for _kind, game in more:
        previous = _deal_of(game, previous + 1)
        deals.append(previous)
    assert deals == list(range(1, 12)) + [13]


class _Clocks:
    """Fake ``time`` for bench.solver_bench: the n-th solve (n = 0 the untimed first) lasts n ms of wall-clock
    and 3n ms of CPU time."""

    def __init__(self):
        self.wall, self.cpu, self.solves = FakeClock(), FakeClock(), 0
        self.perf_counter, self.process_time = self.wall.perf_counter, self.cpu.perf_counter

    def advance(self):
        self.wall.now += self.solves / 1000
        self.cpu.now += 3 * self.solves / 1000
        self.solves += 1


def test_solver_bench_rows_give_each_kinds_count_times_and_solved_values(monkeypatch, capsys):
    """Six standard positions: kinds in turn, so solves 1 and 4 are closed, 2 and 5 closed-late, 3 and 6
    exhausted; medians and linear 95th percentiles of those milliseconds, and the histogram of the solver's values,
    which are recomputed here (a cold table each time)."""
    from agents.solver import clear_cache, solve
    from bench import solver_bench

    values = []
    for _kind, game in solver_bench.fresh_positions(6, Rules(), 0):
        clear_cache()
        values.append(solve(game).value)
    clocks, cleared = _Clocks(), []

    def timed_solve(game):
        clocks.advance()
        return solve(game)

    monkeypatch.setattr(solver_bench, "time", clocks)
    monkeypatch.setattr(solver_bench, "solve", timed_solve)
    monkeypatch.setattr(solver_bench, "clear_cache", lambda: cleared.append(clocks.solves))
    solver_bench.main(["--positions", "6", "--preset", "standard"])
    lines = capsys.readouterr().out.splitlines()
    assert cleared == [1, 2, 3, 4, 5, 6]  # before each timed solve, none before the untimed one

    def row(label, times, kind_values):
        walls = [float(t) for t in times]
        wall_median, wall_p95 = float(np.median(walls)), float(np.percentile(walls, 95))
        histogram = " ".join(f"{value:+d}:{kind_values.count(value)}" for value in sorted(set(kind_values)))
        return (f"{'standard':10} {label:11} {len(times):4d} {wall_median:9.2f} ms {wall_p95:6.2f} ms"
                f" {3 * wall_median:8.2f} ms {3 * wall_p95:5.2f} ms  {histogram}")

    assert lines[1:] == [row("closed", [1, 4], values[0::3]), row("closed-late", [2, 5], values[1::3]),
                         row("exhausted", [3, 6], values[2::3]), row("all", range(1, 7), values)]


def test_solver_bench_warm_keeps_the_tables_and_all_measures_every_two_player_preset(monkeypatch, capsys):
    from bench import solver_bench
    from sixtysix_env import PRESET_NAMES

    asked, cleared = [], []

    class Solved:
        value = 1

    def fake_positions(count, rules, seed):
        asked.append((count, rules.preset_name, seed))
        return [(solver_bench.KINDS[index % 3], None) for index in range(count)]

    monkeypatch.setattr(solver_bench, "fresh_positions", fake_positions)
    monkeypatch.setattr(solver_bench, "solve", lambda game: Solved())
    monkeypatch.setattr(solver_bench, "clear_cache", lambda: cleared.append(1))
    solver_bench.main(["--positions", "3", "--seed", "4", "--warm"])
    assert asked == [(3, name, 4) for name in PRESET_NAMES] and cleared == []
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:3] for line in lines[1:]] == [[name, label, n] for name in PRESET_NAMES
                                                         for label, n in (("closed", "1"), ("closed-late", "1"),
                                                                          ("exhausted", "1"), ("all", "3"))]
    assert all(line.endswith("  +1:1") or line.endswith("  +1:3") for line in lines[1:])
    asked.clear()
    monkeypatch.setattr(sys, "argv", ["solver_bench"])
    solver_bench.main()
    assert asked == [(200, name, 0) for name in PRESET_NAMES] and len(cleared) == 600  # the defaults: cold solves


@pytest.mark.parametrize("arguments, message", [
    (["--positions", "2"], "--positions must be at least 3, got 2"),
    (["--preset", "three"], "--preset must be one of standard, paderborn, scharf or all, got 'three'"),
])
def test_solver_bench_refuses_too_few_positions_and_other_presets(monkeypatch, capsys, arguments, message):
    from bench import solver_bench

    assert message in refused_before(monkeypatch, capsys, solver_bench.main, arguments, solver_bench,
                                     "fresh_positions", "positions were made")


# --- bench.open_solve -----------------------------------------------------------------------------------------------


def test_open_solve_times_each_deal_after_an_untimed_warm_up_and_counts_the_unsolved(monkeypatch, capsys):
    """A fake solver whose n-th solve lasts a given time on a fake clock (the third runs out of budget): the
    warm-up solves deal first_seed - 1 (dealer 0) untimed; each deal s is dealt by s % 2 and valued for player 1
    with the budget; the summary gives the median, the linear 90th percentile and the maximum of all four times."""
    from bench import open_solve
    from play.analysis import BudgetExceeded

    clock, solved = FakeClock(), []
    lasting = [7.0, 0.5, 2.0, 0.25, 1.0]  # the warm-up, then the four deals

    class FakeSolver:
        def __init__(self, player, seconds):
            self.player, self.seconds, self.nodes = player, seconds, 0

        def value(self, game):
            solved.append((self.player, self.seconds, game.deck, game.dealer))
            clock.now += lasting[len(solved) - 1]
            self.nodes = 10 * len(solved)
            if len(solved) == 4:
                raise BudgetExceeded()
            return len(solved) - 3

    monkeypatch.setattr(open_solve, "OpenSolver", FakeSolver)
    monkeypatch.setattr(open_solve.time, "perf_counter", clock.perf_counter)
    assert open_solve.main(["--deals", "4", "--first-seed", "100", "--budget", "5"]) == 0
    assert solved == [(1, 5.0, Game.deal(Rules(), seed=seed, dealer=dealer).deck, dealer)
                      for seed, dealer in ((99, 0), (100, 0), (101, 1), (102, 0), (103, 1))]
    output = capsys.readouterr()
    printed = (output.out + output.err).splitlines()
    for line in ("seed 100: value -1, 20 nodes, 0.50 s", "seed 101: value 0, 30 nodes, 2.00 s",
                 "seed 102: value None, 40 nodes, 0.25 s", "seed 103: value 2, 50 nodes, 1.00 s"):
        assert line in printed
    # sorted 0.25, 0.5, 1, 2: median 0.75; the 90th percentile at rank 2.7 is 1 + 0.7 * (2 - 1)
    import sixtysix_env

    assert (f"engine {sixtysix_env.ENGINE_BACKEND}: 4 deals, median 0.75 s, p90 1.70 s, max 2.00 s, "
            "1 not solved within 5 s") in printed


def test_open_solve_defaults_and_a_warm_up_out_of_budget(monkeypatch, capsys):
    """20 deals from seed 100 with 60 s each by default; a warm-up that runs out of budget is no failure."""
    from bench import open_solve
    from play.analysis import BudgetExceeded

    budgets, dealt = [], []

    class FakeSolver:
        nodes = 0

        def __init__(self, player, seconds):
            budgets.append(seconds)

        def value(self, game):
            dealt.append(game.deck)
            if len(dealt) == 1:
                raise BudgetExceeded()
            return 0

    monkeypatch.setattr(open_solve, "OpenSolver", FakeSolver)
    monkeypatch.setattr(sys, "argv", ["open_solve"])
    assert open_solve.main() == 0
    assert budgets == [60.0] * 21
    assert dealt[1:] == [Game.deal(Rules(), seed=seed, dealer=seed % 2).deck for seed in range(100, 120)]
    assert "20 deals, median" in capsys.readouterr().out
    budgets.clear()
    assert open_solve.main(["--deals", "1", "--budget", "0.5"]) == 0 and budgets == [0.5, 0.5]  # any positive budget


# --- bench.core_bench -----------------------------------------------------------------------------------------------


def _timed_with(monkeypatch, module, clock):
    import types

    monkeypatch.setattr(module, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))


def test_core_playouts_count_decisions_of_batches_until_the_seconds_are_up(monkeypatch):
    """An untimed warm-up of 100 playouts, then batches of 20 000 with the seed counting up, until ``seconds`` of
    the clock have passed: the decisions made over the time taken, under the rules' bits (standard by default)."""
    import types

    from bench import core_bench
    from sixtysix_env.core import new_state
    from sixtysix_env.core.layout import RULE_BITS

    clock, calls = FakeClock(), []

    def random_playouts(count, seed, bits):
        calls.append((count, seed, bits))
        if count == 100:
            return 999_999, None  # the warm-up: neither timed nor counted
        clock.now += 0.5
        return 1000 * len(calls), None

    monkeypatch.setattr(core_bench, "engine", types.SimpleNamespace(random_playouts=random_playouts))
    _timed_with(monkeypatch, core_bench, clock)
    scharf = int(new_state(Rules.preset("scharf"), seed=0)[RULE_BITS])
    standard = int(new_state(Rules(), seed=0)[RULE_BITS])
    assert scharf != standard
    rate = core_bench.core_playout_decisions_per_second(2.0, seed=7, rules=Rules.preset("scharf"))
    assert calls == [(100, 7, scharf)] + [(20_000, 7 + batch, scharf) for batch in range(4)]
    assert rate == (2000 + 3000 + 4000 + 5000) / 2.0
    calls.clear()
    core_bench.core_playout_decisions_per_second(0.5)
    assert calls == [(100, 0, standard), (20_000, 0, standard)]
    calls.clear()
    core_bench.core_playout_decisions_per_second()  # two seconds by default: four batches of the fake
    assert len(calls) == 1 + 4


@pytest.mark.parametrize("preset", ["standard", "paderborn"])
def test_phase2_positions_close_after_one_to_five_random_tricks_or_play_on_to_the_exhausted_talon(preset):
    """Position i is closed by the first leader who may (R10) once (i % 6) + 1 tricks are played, or (i % 6 of 5)
    played on to the exhausted talon (R7); the play is random.Random(deal) over the actions other than closing,
    deals counting up from seed * 1_000_003 + 1. Under the standard rules closing after trick 5 is illegal, so i % 6
    of 4 plays on too (paderborn's closing with a draw, R19, allows it)."""
    from bench.core_bench import phase2_positions
    from sixtysix_env.actions import CLOSE
    from sixtysix_env.game import FOLLOW, LEAD

    rules = Rules.preset(preset)
    positions = phase2_positions(12, seed=1, rules=rules)
    assert len(positions) == 12
    previous = 1_000_003
    for index, game in enumerate(positions):
        deal = _deal_of(game, previous + 1)
        previous = deal
        assert game.rules == rules and not game.is_over and game.phase2 and game.stage in (LEAD, FOLLOW)
        close_after = index % 6 + 1
        rng, replay = random.Random(deal), Game.deal(rules, seed=deal, dealer=deal & 1)
        for action in game.history:
            legal = replay.legal_actions()
            if replay.closed_by is not None:  # after the closing: the first legal action until a lead or follow
                assert action == legal[0]
            elif action == CLOSE:
                assert close_after < 6 and len(replay.tricks) >= close_after
            else:
                assert not (close_after < 6 and len(replay.tricks) >= close_after and CLOSE in legal)
                assert action == rng.choice([other for other in legal if other != CLOSE])
            replay.apply(action)
        assert (game.closed_by is not None) == (close_after < (5 if preset == "standard" else 6))
    first = phase2_positions(1)[0]  # by default: seed 0, the standard rules
    assert first.rules == Rules() and _deal_of(first, 1) == 1


def test_phase2_solve_ms_times_the_kernel_and_the_python_search_on_the_same_positions(monkeypatch):
    """Each position's compiled solve (a full window, -4..4, the talon order unknown) and pure-Python search, on
    positions made by phase2_positions(count, seed); the n-th kernel solve lasts n ms (the 0th, untimed, loads
    it), each Python search 50 ms more than the one before."""
    import agents.solver
    from bench import core_bench
    from sixtysix_env.core import state_from_game
    from sixtysix_env.game import LEAD

    clock, kernel, searched = FakeClock(), [], []

    def solve_value(state, low, high, entries, full, nodes):
        kernel.append((state.tolist(), low, high, full))
        clock.now += (len(kernel) - 1) / 1000
        return 0

    class Search:
        def lead_action_values(self, game, exact):
            searched.append((game, "lead", exact))
            clock.now += len(searched) / 20

        def follow_action_values(self, game, exact):
            searched.append((game, "follow", exact))
            clock.now += len(searched) / 20

    monkeypatch.setattr(core_bench, "_solve_value", solve_value)
    monkeypatch.setattr(agents.solver, "_search_for", lambda game: Search())
    _timed_with(monkeypatch, core_bench, clock)
    positions = core_bench.phase2_positions(6, 3)
    figures = core_bench.phase2_solve_ms(6, 3)
    states = [state_from_game(game).tolist() for game in positions]
    assert kernel == [(states[0], -4, 4, 0)] + [(state, -4, 4, 0) for state in states]
    assert [(stage, exact) for _game, stage, exact in searched] == [
        ("lead" if game.stage == LEAD else "follow", False) for game in positions]
    times, python = [1.0, 2, 3, 4, 5, 6], [50.0, 100, 150, 200, 250, 300]
    expected = {"median": 3.5, "p99": float(np.percentile(times, 99)), "max": 6.0, "python_median": 175.0,
                "python_p99": float(np.percentile(python, 99)), "positions": 6}
    assert figures == pytest.approx(expected)


def test_full_solve_ms_times_whole_deal_solves_from_the_asked_trick(monkeypatch):
    """The talon order known (the kernel's flag 1), each from the lead after ``from_trick`` random tricks of a deal
    of its own; the reported from_trick counts tricks from 1."""
    from bench import core_bench
    from sixtysix_env.actions import CLOSE
    from sixtysix_env.game import LEAD

    clock, flags, solved = FakeClock(), [], []
    real_state = core_bench.state_from_game

    def state_from_game(game):
        solved.append(game.clone() if hasattr(game, "clone") else game)
        return real_state(game)

    def solve_value(state, low, high, entries, full, nodes):
        flags.append((low, high, full))
        clock.now += len(flags) / 1000
        return 0

    monkeypatch.setattr(core_bench, "_solve_value", solve_value)
    monkeypatch.setattr(core_bench, "state_from_game", state_from_game)
    _timed_with(monkeypatch, core_bench, clock)
    figures = core_bench.full_solve_ms(4, seed=2, from_trick=3)
    assert flags == [(-4, 4, 1)] * 5
    timed = solved[1:]
    assert all(len(game.tricks) == 3 and game.stage == LEAD and not game.is_over and CLOSE not in game.history
               for game in timed)
    deals = [_deal_of(game, 2_000_007) for game in timed]
    assert deals == sorted(set(deals)) and deals[0] == 2_000_007  # from seed * 1_000_003 + 1 on
    times = [2.0, 3, 4, 5]
    assert figures == pytest.approx({"median": 3.5, "p95": float(np.percentile(times, 95)), "max": 5.0, "deals": 4,
                                     "from_trick": 4})
    solved.clear()
    core_bench.full_solve_ms(1)
    assert len(solved[1].tricks) == 0 and _deal_of(solved[1], 1) == 1


def test_the_rollout_cost_is_per_legal_action_of_each_open_talon_decision(monkeypatch):
    """Every phase-1 decision of heuristic self-play (one player, seed 0, deals 0.. dealt by deal % 2) with the
    talon open with six or more cards and a choice is rolled out once per legal action in each pass, seeded
    pass seed + its index; a fake rollout lasting 2 microseconds and 5 solver nodes per action gives exactly
    those figures, the untimed first pass (seed 0) left out."""
    import sixtysix_env.core.heuristic
    from agents.rule_based import HeuristicAgent
    from bench import core_bench
    from sixtysix_env.core import state_from_game

    clock, rolled = FakeClock(), []

    def rollout_values(worlds, count, mask, mover, params, other, entries, nodes, seeds, claimed, values):
        rolled.append((worlds[0].tolist(), count, mask, mover, int(seeds[0])))
        nodes[0] += 5 * bin(mask).count("1")
        clock.now += 2e-6 * bin(mask).count("1")

    monkeypatch.setattr(sixtysix_env.core.heuristic, "rollout_values", rollout_values)
    _timed_with(monkeypatch, core_bench, clock)
    figure = core_bench.expert_rollout_cost(deals=2, repeats=3)
    player, decisions = HeuristicAgent(seed=0), []
    for deal in range(2):  # the same player plays both deals
        game = Game.deal(Rules(), seed=deal, dealer=deal % 2)
        while not game.is_over:
            infoset = InformationSet(game, game.to_move)
            if infoset.closed_by is None and infoset.talon_size >= 6 and len(infoset.legal_actions) > 1:
                decisions.append((state_from_game(game).tolist(), 1, sum(1 << a for a in infoset.legal_actions),
                                  game.to_move))
            game.apply(player.act(infoset))
    assert len(decisions) > 10
    assert rolled == [decision + (start + index,) for start in (0, 1000, 2000, 3000)
                      for index, decision in enumerate(decisions)]
    assert figure["positions"] == len(decisions) and figure["nodes_per_rollout"] == 5
    assert figure["us_runs"] == pytest.approx([2.0] * 3) and figure["us_median"] == pytest.approx(2.0)


def test_the_whole_deal_solves_default_to_thirty_deals(monkeypatch):
    from bench import core_bench

    monkeypatch.setattr(core_bench, "_solve_value", lambda *args: 0)
    assert core_bench.full_solve_ms()["deals"] == 30


def test_ismcts_figure_is_ismcts_v1s_iterations_and_seconds_on_first_decisions(monkeypatch):
    from bench import core_bench

    clock, made, seen = FakeClock(), [], []

    class Agent:
        last_iterations = 0

        def act(self, infoset):
            seen.append((infoset.player, infoset.legal_actions))
            clock.now += [4.0, 3.0, 1.0, 2.0][len(seen) - 1]  # the slowest after the first is the second
            self.last_iterations = [40, 10, 30, 20][len(seen) - 1]
            return infoset.legal_actions[0]

    def make_agent(spec, seed):
        made.append((spec, seed))
        return Agent()

    import agents.registry

    monkeypatch.setattr(agents.registry, "make_agent", make_agent)
    _timed_with(monkeypatch, core_bench, clock)
    figures = core_bench.ismcts_first_decision_iterations(4, seed=2)
    assert made == [("ismcts_v1", 2)]
    firsts = [Game.deal(Rules(), seed=2_000_006 + deal) for deal in range(4)]
    assert seen == [(game.to_move, InformationSet(game, game.to_move).legal_actions) for game in firsts]
    # the first decision's time (a warm-up) is left out of the maximum, not of the median
    assert figures == {"median": 25.0, "min": 10, "seconds_median": 2.5, "seconds_max": 3.0}
    seen.clear()
    assert core_bench.ismcts_first_decision_iterations(1)["seconds_max"] == 4.0  # one decision: its own time
    first = Game.deal(Rules(), seed=0)  # seed 0 by default
    assert made[-1] == ("ismcts_v1", 0)
    assert seen == [(first.to_move, InformationSet(first, first.to_move).legal_actions)]


def test_jit_warmup_compiles_into_a_fresh_cache_then_loads_from_it(monkeypatch):
    import os
    import sys
    import types

    from bench import core_bench

    clock, runs = FakeClock(), []

    def run(command, capture_output, text, check, env):
        cache = env["NUMBA_CACHE_DIR"]
        runs.append((command, capture_output, text, check, cache, os.path.isdir(cache)))
        clock.now += 12.5
        return types.SimpleNamespace(stdout="a warning\n0.75\n")

    monkeypatch.setattr(core_bench.subprocess, "run", run)
    _timed_with(monkeypatch, core_bench, clock)
    assert core_bench.jit_warmup_seconds() == {"compile": 12.5, "cached": 0.75}
    assert [command for command, *_ in runs] == [[sys.executable, "-m", "sixtysix_env.core"],
                                                  [sys.executable, "-c", core_bench.WARMUP_CODE]]
    assert all(flags == [True, True, True] for _, *flags, _, _ in runs)
    assert runs[0][4] == runs[1][4] and runs[0][5] and runs[1][5] and not os.path.exists(runs[0][4])


def test_the_named_figures_call_their_measures_with_the_positions_and_the_documented_sizes(monkeypatch):
    from bench import core_bench

    called = []
    for name in ("phase2_solve_ms", "full_solve_ms", "expert_rollout_cost", "ismcts_first_decision_iterations",
                 "jit_warmup_seconds"):
        monkeypatch.setattr(core_bench, name, lambda *args, name=name, **kwargs: called.append((name, args, kwargs)))
    figures = core_bench.solve_and_search_figures(17)
    assert list(figures) == ["phase2_solve_ms", "full_solve_ms", "full_solve_ms_from_trick_4", "expert_rollout_us",
                             "ismcts_first_decision_iterations", "jit_warmup_s"]
    for measure in figures.values():
        measure()
    assert called == [("phase2_solve_ms", (17,), {}), ("full_solve_ms", (20,), {}),
                      ("full_solve_ms", (60,), {"from_trick": 3}), ("expert_rollout_cost", (), {}),
                      ("ismcts_first_decision_iterations", (), {}), ("jit_warmup_seconds", (), {})]
    called.clear()
    core_bench.solve_and_search_figures()["phase2_solve_ms"]()
    assert called == [("phase2_solve_ms", (300,), {})]


def test_measure_all_takes_the_median_playout_rate_and_every_other_figure(monkeypatch):
    from bench import core_bench

    rates, asked = iter([5.0, 1.0, 3.0, 8.0]), []

    def playouts(seconds):
        asked.append(seconds)
        return next(rates)

    monkeypatch.setattr(core_bench, "core_playout_decisions_per_second", playouts)
    monkeypatch.setattr(core_bench, "solve_and_search_figures",
                        lambda positions: {"a": lambda: positions, "b": lambda: "b's figure"})
    assert core_bench.measure_all(9, seconds=0.5) == {"core_playout_decisions_per_s": 3.0,
                                                      "core_playout_runs": [5.0, 1.0, 3.0], "a": 9, "b": "b's figure"}
    assert asked == [0.5] * 3
    rates = iter([4.0, 2.0, 6.0, 1.0, 1.0])
    figures = core_bench.measure_all()  # 300 positions, 2 s, 3 repeats by default
    assert figures["core_playout_decisions_per_s"] == 4.0 and asked[3:] == [2.0] * 3 and figures["a"] == 300


def test_core_bench_prints_and_writes_the_figures_it_measured(monkeypatch, tmp_path, capsys):
    """--only measures the named figures in the order given (with --positions); without it every figure is measured;
    --json writes what was printed; --positions 1 is the least allowed."""
    import json

    from bench import core_bench

    asked = []
    monkeypatch.setattr(core_bench, "solve_and_search_figures", lambda positions=300: {
        "full_solve_ms": lambda: asked.append(("full", positions)) or {"median": 1.5},
        "jit_warmup_s": lambda: asked.append(("jit", positions)) or {"compile": 2.0},
        "phase2_solve_ms": lambda: pytest.fail("not asked for")})
    monkeypatch.setattr(core_bench, "measure_all", lambda positions: asked.append(("all", positions)) or {"x": 1})
    out = tmp_path / "figures.json"
    assert core_bench.main(["--only", "jit_warmup_s", "--only", "full_solve_ms", "--positions", "1",
                            "--json", str(out)]) == 0
    assert asked == [("jit", 1), ("full", 1)]
    assert capsys.readouterr().out.splitlines() == ["jit_warmup_s: {'compile': 2.0}", "full_solve_ms: {'median': 1.5}"]
    assert json.loads(out.read_text()) == {"jit_warmup_s": {"compile": 2.0}, "full_solve_ms": {"median": 1.5}}
    assert [entry.name for entry in tmp_path.iterdir()] == ["figures.json"]
    asked.clear()
    assert core_bench.main([]) == 0
    assert asked == [("all", 300)] and capsys.readouterr().out == "x: 1\n"


@pytest.mark.parametrize("arguments, message", [
    (["--positions", "0"], "--positions must be at least 1, got 0"), (["--json", "{tmp}"], "--json"),
])
def test_core_bench_refuses_no_positions_and_a_folder_as_its_json_before_measuring(monkeypatch, tmp_path, capsys,
                                                                                 arguments, message):
    from bench import core_bench

    monkeypatch.setattr(core_bench, "measure_all", lambda positions: pytest.fail("measured"))
    with pytest.raises(SystemExit) as stop:
        core_bench.main([argument.format(tmp=tmp_path) for argument in arguments])
    assert stop.value.code == 2 and message in capsys.readouterr().err


# --- bench.vector_bench ---------------------------------------------------------------------------------------------


def test_the_random_legal_policy_plays_legal_actions_uniformly_from_64_priority_tables_in_turn():
    from bench.vector_bench import _random_legal_policy
    from sixtysix_env.actions import NUM_ACTIONS

    masks = np.zeros((50, NUM_ACTIONS), dtype=np.int8)
    masks[:, [2, 7, 30]] = 1
    masks[0] = 0
    masks[0, 11] = 1  # one legal action only
    policy = _random_legal_policy(50, seed=3)
    played = np.array([policy(masks) for _ in range(128)])
    assert np.all(played[:, 0] == 11) and np.isin(played[:, 1:], [2, 7, 30]).all()
    assert np.array_equal(played[:64], played[64:]) and not np.array_equal(played[0], played[1])
    assert not any(np.array_equal(played[0], played[step]) for step in range(1, 64))  # all 64 tables in turn
    shares = [np.mean(played[:64, 1:] == action) for action in (2, 7, 30)]
    assert shares == pytest.approx([1 / 3] * 3, abs=0.03)
    again = _random_legal_policy(50, seed=3)
    assert np.array_equal(again(masks), played[0]) and not np.array_equal(_random_legal_policy(50, 4)(masks),
                                                                          played[0])


class _FakeVectorEnv:
    """Four envs; each step lasts 10 ms of wall-clock and 4 ms of CPU; after every third step env 0 needs a reset
    (its next step deals, which is no decision)."""

    num_envs = 4

    def __init__(self, clocks):
        self.clocks, self.steps, self.resets = clocks, 0, []
        self._needs_reset = np.zeros(4, dtype=np.int8)
        self.masks = np.zeros((4, 37), dtype=np.int8)
        self.masks[:, 5] = 1

    def reset(self, seed):
        self.resets.append(seed)
        return None, {"action_mask": self.masks}

    def step(self, actions):
        assert np.all(actions == 5)  # the only legal action: the policy reads the masks handed out
        self.steps += 1
        self.clocks.wall.now += 0.01
        self.clocks.cpu.now += 0.004
        self._needs_reset[0] = self.steps % 3 == 0
        return None, None, None, None, {"action_mask": self.masks}


def test_a_timed_vector_run_counts_decisions_in_blocks_of_16_steps_until_the_deadline():
    """0.2 s at 10 ms a step: 20 steps are due, whole blocks of 16 make it 32; every third step leaves env 0 to be
    dealt at the next, so 10 of those 32 steps act with three envs: 32 * 4 - 10 decisions."""
    from bench import vector_bench

    clocks = _Clocks()
    envs = _FakeVectorEnv(clocks)
    original = vector_bench.time
    vector_bench.time = clocks
    try:
        wall, cpu = vector_bench._timed_vector_run(envs, 0.2, seed=9)
    finally:
        vector_bench.time = original
    assert envs.resets == [9] and envs.steps == 32
    assert wall == pytest.approx(118 / 0.32) and cpu == pytest.approx(118 / 0.128)


def test_vector_env_rates_are_medians_of_seeded_runs_after_a_short_warm_up(monkeypatch):
    import sixtysix_env
    from bench import vector_bench

    made, runs = [], []
    monkeypatch.setattr(sixtysix_env, "vector_env", lambda *args, **kwargs: made.append((args, kwargs)) or "envs")

    def timed(envs, seconds, seed):
        runs.append((envs, seconds, seed))
        return (999.0, 999.0) if seconds == 0.2 else (float(seed), 100.0 - seed)  # the warm-up's figures are off

    monkeypatch.setattr(vector_bench, "_timed_vector_run", timed)
    assert vector_bench.vector_env_rates(8, 0.5, 3, self_play=False, rules="scharf", copy=True, seed=4) == (5.0, 95.0)
    assert made == [((8,), {"rules": "scharf", "self_play": False, "copy": True})]
    assert runs == [("envs", 0.2, 4), ("envs", 0.5, 4), ("envs", 0.5, 5), ("envs", 0.5, 6)]
    made.clear(), runs.clear()
    assert vector_bench.vector_env_steps_per_s() == 2.0
    assert made == [((1024,), {"rules": "standard", "self_play": True, "copy": False})]
    assert runs == [("envs", 0.2, 0)] + [("envs", 2.0, run) for run in range(5)]


def test_aec_figures_are_medians_of_alternating_runs_and_their_per_pair_ratio(monkeypatch):
    from bench import vector_bench

    runs = []
    figures = {True: iter([0.0, 10.0, 40.0, 30.0]), False: iter([0.0, 5.0, 10.0, 30.0])}

    def timed(seconds, seed, rules, core=True):
        runs.append((seconds, seed, rules, core))
        return next(figures[core])

    monkeypatch.setattr(vector_bench, "_timed_aec_run", timed)
    assert vector_bench.aec_speedup(1.5, 3, "paderborn", seed=2) == {
        "aec_steps_per_s": 30.0, "aec_python_observation_steps_per_s": 10.0, "aec_speedup": 2.0}  # 2, 4, 1
    assert runs == [(0.2, 2, "paderborn", True), (0.2, 2, "paderborn", False)] + [
        (1.5, 2 + run, "paderborn", core) for run in range(3) for core in (False, True)]
    runs.clear()
    figures[True] = iter([0.0, 3.0, 1.0, 2.0])
    assert vector_bench.aec_steps_per_s(0.5, 3, "scharf", seed=1, core=True) == 2.0
    assert runs == [(0.2, 1, "scharf", True)] + [(0.5, 1 + run, "scharf", True) for run in range(3)]


def test_a_timed_aec_run_is_bench_runs_loop_with_the_asked_observations(monkeypatch):
    import bench.run
    from bench import vector_bench

    asked = []
    monkeypatch.setattr(bench.run, "aec_steps_per_second",
                        lambda seconds, seed, rules, observe_with_core: asked.append((seconds, seed, rules,
                                                                                      observe_with_core)) or 42.0)
    assert vector_bench._timed_aec_run(0.3, 5, "scharf", core=False) == 42.0
    assert vector_bench._timed_aec_run(0.3, 5, "scharf") == 42.0
    assert asked == [(0.3, 5, "scharf", False), (0.3, 5, "scharf", True)]


def test_the_gym_env_rate_counts_steps_of_random_legal_actions_over_the_runs_seconds(monkeypatch):
    """A fake env whose deals last three steps and whose steps last 10 ms: 0.05 s runs make five steps each."""
    import types

    import sixtysix_env
    from bench import vector_bench

    clock, made, resets, played, ended = FakeClock(), [], [], [], []

    class Env:
        def __init__(self, rules):
            made.append(rules)
            self.steps = 0

        def reset(self, seed=None):
            resets.append(seed)
            mask = np.zeros(37, dtype=np.int8)
            mask[[4, 9]] = 1
            return None, {"action_mask": mask}

        def step(self, action):
            assert action in (4, 9)
            played.append(action)
            clock.now += 0.01
            self.steps += 1
            ended.append(self.steps % 3 == 0)
            return None, 0.0, ended[-1], False, self.reset(seed="auto")[1]

    monkeypatch.setattr(sixtysix_env, "SixtySixGymEnv", Env)
    monkeypatch.setattr(vector_bench, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    clock.now = 0.0
    rate = vector_bench.gym_env_steps_per_s(0.05, 3, "scharf", seed=6)
    assert made == ["scharf"] * 4
    # the warm-up's run, then one per repeat
    assert [seed for seed in resets if seed not in ("auto", None)] == [6, 6, 7, 8]
    assert rate == pytest.approx(100.0, rel=1e-6)
    assert {4, 9} == set(played) and 0.3 < played.count(4) / len(played) < 0.7
    assert resets.count(None) == sum(ended) > 0  # a new deal after each one that ended


def test_the_plot_draws_only_the_rates_and_takes_its_format_from_the_suffix(monkeypatch, tmp_path):
    from matplotlib.axes import Axes

    from bench import vector_bench

    drawn = []
    monkeypatch.setattr(Axes, "barh", lambda self, names, values, color: drawn.append((list(names), values, color)))
    vector_bench.plot_figures({"a_steps_per_s": 10.0, "b_steps_per_cpu_s": 20.0, "ratio": 2.0}, str(tmp_path / "c.SVG"))
    assert drawn == [(["a_steps_per_s", "b_steps_per_cpu_s"], [10.0, 20.0], ["tab:blue", "tab:orange"])]
    assert (tmp_path / "c.SVG").read_bytes().startswith(b"<?xml")
    from eval.report import image_format

    assert image_format("a/b.PDF") == "pdf" and image_format("chart") == "png"


def test_vector_bench_rounds_writes_and_plots_what_it_measured(monkeypatch, tmp_path, capsys):
    import json

    from bench import vector_bench

    calls = []

    def rates(num_envs, seconds, repeats, rules, self_play, copy=False):
        calls.append(("vector", num_envs, seconds, repeats, rules, self_play, copy))
        return 1000.123456, 2000.98765

    monkeypatch.setattr(vector_bench, "vector_env_rates", rates)
    monkeypatch.setattr(vector_bench, "aec_speedup", lambda seconds, repeats, rules: calls.append(
        ("aec", seconds, repeats, rules)) or {"aec_steps_per_s": 1.23456, "aec_speedup": 2.5})
    monkeypatch.setattr(vector_bench, "gym_env_steps_per_s", lambda seconds, repeats, rules: calls.append(
        ("gym", seconds, repeats, rules)) or 333.3333)
    plotted = []
    monkeypatch.setattr(vector_bench, "plot_figures", lambda figures, path: plotted.append((dict(figures), path)))
    out, chart = tmp_path / "v.json", tmp_path / "v.svg"
    figures = vector_bench.main(["--num-envs", "1", "--seconds", "0.5", "--repeats", "1", "--rules", "scharf",
                                 "--json", str(out), "--plot", str(chart)])
    assert calls == [("vector", 1, 0.5, 1, "scharf", True, False), ("vector", 1, 0.5, 1, "scharf", False, False),
                     ("vector", 1, 0.5, 1, "scharf", True, True), ("aec", 0.5, 1, "scharf"),
                     ("gym", 0.5, 1, "scharf")]
    expected = {}
    for name in ("vector_env", "vector_env_random_opponent", "vector_env_copy"):
        expected.update({f"{name}_steps_per_s": 1000.123, f"{name}_steps_per_cpu_s": 2000.988})
    expected.update({"aec_steps_per_s": 1.235, "aec_speedup": 2.5, "gym_env_steps_per_s": 333.3})
    assert figures == expected and plotted == [(expected, str(chart))]
    assert json.loads(out.read_text()) == {**expected, "num_envs": 1, "rules": "scharf", "seconds": 0.5, "repeats": 1}
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"{'vector_env_steps_per_s':42s} {1000.123:14,.2f}" and len(printed) == len(expected)
    calls.clear()
    vector_bench.main([])
    assert calls[0] == ("vector", 1024, 2.0, 5, "standard", True, False) and calls[3] == ("aec", 2.0, 5, "standard")


@pytest.mark.parametrize("arguments, message", [
    (["--num-envs", "0"], "--num-envs must be at least 1, got 0"), (["--repeats", "0"], "--repeats must be at least 1"),
    (["--seconds", "0"], "--seconds must be positive, got 0"), (["--rules", "three"], "--rules must be a two-player"),
    (["--plot", "{tmp}/chart.xyz"], "matplotlib writes no 'xyz' images"), (["--json", "{tmp}"], "--json"),
])
def test_vector_bench_refuses_bad_options_before_measuring(monkeypatch, tmp_path, capsys, arguments, message):
    from bench import vector_bench

    arguments = [argument.format(tmp=tmp_path) for argument in arguments]
    assert message in refused_before(monkeypatch, capsys, vector_bench.main, arguments, vector_bench,
                                     "vector_env_rates", "measured")


# --- bench.plot_networks --------------------------------------------------------------------------------------------


def _record(epoch=1, opponent="heuristic", margin=0.25, low=0.125, high=0.5, **changes):
    return {"epoch": epoch, "opponent": opponent, "margin": margin, "margin_ci_low": low, "margin_ci_high": high,
            **changes}


def _results(folder, document):
    import json

    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(document))
    return folder


def test_a_labelled_path_splits_at_its_last_equals_sign_and_needs_both_halves():
    import argparse
    from pathlib import Path

    from bench.plot_networks import labelled_path

    assert labelled_path("a=b=c/d.jsonl") == ("a=b", Path("c/d.jsonl"))
    for text in ("no-sign", "=path", "label="):
        with pytest.raises(argparse.ArgumentTypeError, match=f"expected LABEL=PATH, got {text!r}"):
            labelled_path(text)


@pytest.mark.parametrize("line, problem", [
    ("[1, 2]", "is not an evaluation record"),
    ("not json", "is not an evaluation record"),
    ('{"epoch": 1, "opponent": "x", "margin": 0.1}', "is not an evaluation record: it lacks margin_ci_low, "
                                                      "margin_ci_high"),
    (_record(epoch="3"), "is not an evaluation record: epoch of the wrong type"),
    (_record(margin=True, high=None), "is not an evaluation record: margin, margin_ci_high of the wrong type"),
    (_record(opponent=7), "is not an evaluation record: opponent of the wrong type"),
])
def test_read_curve_names_the_line_and_what_is_wrong_with_it(tmp_path, line, problem):
    import json

    from bench.plot_networks import read_curve

    path = tmp_path / "eval.jsonl"
    path.write_text(json.dumps(_record()) + "\n" + (line if isinstance(line, str) else json.dumps(line)) + "\n")
    with pytest.raises(ValueError) as error:
        read_curve(path)
    assert str(error.value) == f"learning curve {str(path)!r} line 2 {problem}"


def test_read_curve_refuses_a_missing_or_binary_file_by_name(tmp_path):
    from bench.plot_networks import read_curve

    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    for path in (tmp_path / "missing.jsonl", binary):
        with pytest.raises(ValueError, match=f"^learning curve {str(path)!r} is unreadable: "):
            read_curve(path)


def test_read_curve_keeps_integer_and_float_fields_and_sorts_each_opponent_by_epoch(tmp_path):
    import json

    from bench.plot_networks import read_curve

    path = tmp_path / "eval.jsonl"
    records = [_record(epoch=3, margin=1), _record(epoch=1.5, opponent="expert"), _record(epoch=2, low=-1)]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    assert read_curve(path) == {"heuristic": [records[2], records[0]], "expert": [records[1]]}


@pytest.mark.parametrize("document, problem", [
    ({"summary": {"pairs": []}}, "hold no pair's margin"),
    ({"summary": {}}, "hold no pair's margin"),
    ({"summary": {"pairs": [{"margin_per_deal": 0.5}]}}, "the first pair's margin lacks a number among mean, low, "
                                                          "high"),
    ({"summary": {"pairs": [{"margin_per_deal": {"mean": 0.5, "low": 0.1}}]}}, "lacks a number among mean, low, high"),
    ({"summary": {"pairs": [{"margin_per_deal": {"mean": True, "low": 0, "high": 1}}]}}, "lacks a number among"),
    (["summary"], "hold no pair's margin"),
])
def test_read_match_names_the_results_file_and_what_it_lacks(tmp_path, document, problem):
    from bench.plot_networks import read_match

    folder = _results(tmp_path / "match", document)
    with pytest.raises(ValueError) as error:
        read_match(folder)
    assert str(error.value).startswith(f"match results {str(folder / 'results.json')!r}")
    assert problem in str(error.value)


def test_read_match_takes_the_first_pairs_margin(tmp_path):
    from bench.plot_networks import read_match

    first, second = {"mean": 1, "low": 0.5, "high": 1.5}, {"mean": 9, "low": 8, "high": 10}
    folder = _results(tmp_path / "match", {"summary": {"pairs": [{"margin_per_deal": first},
                                                                 {"margin_per_deal": second}]}})
    assert read_match(folder) == first


@pytest.mark.filterwarnings("ignore:No artists with labels")  # errorbar is faked: the legend finds no lines
def test_the_panels_draw_each_runs_margins_with_their_intervals(monkeypatch, tmp_path):
    """Curves: a line per run and opponent, the errors margin - low below and high - margin above, the run's colour
    and the opponent's line style; matches: one point each, at its index, labelled on the x axis."""
    import json

    from matplotlib.axes import Axes

    from bench import plot_networks

    drawn, ticks, titles = [], [], []
    monkeypatch.setattr(Axes, "errorbar", lambda self, x, y, yerr, **style: drawn.append((x, y, yerr, style)))
    monkeypatch.setattr(Axes, "set_xticks", lambda self, positions, labels, **kwargs: ticks.append(
        (list(positions), labels)))
    monkeypatch.setattr(Axes, "set_title", lambda self, title: titles.append(title))
    curve = tmp_path / "eval.jsonl"
    curve.write_text("".join(json.dumps(record) + "\n" for record in [
        _record(epoch=2, margin=0.5, low=0.25, high=1.0), _record(epoch=1, margin=0.0, low=-0.5, high=0.25),
        _record(opponent="greedy", margin=-1.0, low=-1.5, high=-0.75)]))
    matches = [("A", _results(tmp_path / "a", {"summary": {"pairs": [{"margin_per_deal": {
        "mean": 0.5, "low": 0.25, "high": 1.0}}]}})), ("B", _results(tmp_path / "b", {"summary": {"pairs": [{
            "margin_per_deal": {"mean": -0.5, "low": -1.0, "high": 0.0}}]}}))]
    plot_networks.plot([("first", curve), ("second", curve)], matches, "my title", tmp_path / "p.png")
    common = {"fmt": "o", "capsize": 4}
    assert drawn[:4] == [
        ([1, 2], [0.0, 0.5], [[0.5, 0.25], [0.25, 0.5]], {**common, "linestyle": "-", "color": "C0",
                                                          "label": "first vs heuristic"}),
        ([1], [-1.0], [[0.5], [0.25]], {**common, "linestyle": ":", "color": "C0", "label": "first vs greedy"}),
        ([1, 2], [0.0, 0.5], [[0.5, 0.25], [0.25, 0.5]], {**common, "linestyle": "-", "color": "C1",
                                                          "label": "second vs heuristic"}),
        ([1], [-1.0], [[0.5], [0.25]], {**common, "linestyle": ":", "color": "C1", "label": "second vs greedy"})]
    assert drawn[4:] == [([0], [0.5], [[0.25], [0.5]], {"fmt": "o", "capsize": 6, "color": "C0"}),
                         ([1], [-0.5], [[0.5], [0.5]], {"fmt": "o", "capsize": 6, "color": "C1"})]
    assert ticks == [([0, 1], ["A", "B"])] and titles[-1] == "my title"
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_plot_networks_main_reports_a_bad_input_and_writes_nothing(tmp_path, capsys):
    from bench import plot_networks

    folder = _results(tmp_path / "match", {"summary": {}})
    out = tmp_path / "p.png"
    assert plot_networks.main(["--match", f"m={folder}", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: match results ") and "hold no pair's margin" in error and not out.exists()
    with pytest.raises(SystemExit) as stop:
        plot_networks.main(["--out", str(out)])
    assert stop.value.code == 2 and "nothing to plot: give --curve or --match" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        plot_networks.main(["--match", f"m={folder}"])
    assert stop.value.code == 2 and "the following arguments are required: --out" in capsys.readouterr().err


def test_plot_networks_main_writes_a_curves_only_figure_and_says_so(tmp_path, capsys):
    import json

    from bench import plot_networks

    curve = tmp_path / "eval.jsonl"
    curve.write_text(json.dumps(_record()) + "\n")
    out = tmp_path / "curve.png"
    assert plot_networks.main(["--curve", f"c={curve}", "--out", str(out), "--title", "unused"]) == 0
    assert capsys.readouterr().out == f"wrote {out}\n" and out.read_bytes()[:4] == b"\x89PNG"
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["curve.png", "eval.jsonl"]  # no temporary left


def test_the_vector_and_aec_measures_default_to_two_seconds_five_repeats_standard_rules_and_seed_0(monkeypatch):
    import sixtysix_env
    from bench import vector_bench

    made, runs = [], []
    monkeypatch.setattr(sixtysix_env, "vector_env", lambda *args, **kwargs: made.append((args, kwargs)) or "envs")
    monkeypatch.setattr(vector_bench, "_timed_vector_run", lambda envs, seconds, seed: runs.append((seconds, seed))
                        or (1.0, 1.0))
    vector_bench.vector_env_rates()
    assert made == [((1024,), {"rules": "standard", "self_play": True, "copy": False})]
    assert runs == [(0.2, 0)] + [(2.0, run) for run in range(5)]
    runs.clear()
    monkeypatch.setattr(vector_bench, "_timed_aec_run", lambda seconds, seed, rules, core=True: runs.append(
        (seconds, seed, rules, core)) or 1.0)
    vector_bench.aec_steps_per_s()
    assert runs == [(0.2, 0, "standard", True)] + [(2.0, run, "standard", True) for run in range(5)]
    runs.clear()
    vector_bench.aec_speedup()
    assert runs[2:] == [(2.0, run, "standard", core) for run in range(5) for core in (False, True)]


def test_solver_positions_refuse_three_player_rules_by_name():
    """R21: three players have no closing and no phase-2 position of six cards each, so the search for them would
    never end; the function refuses such rules (the command refuses the preset before)."""
    from bench.solver_bench import fresh_positions

    with pytest.raises(ValueError, match=r"solver positions need two-player rules, got players=3 \(R21\)"):
        fresh_positions(1, Rules.preset("three"))
