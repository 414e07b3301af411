"""Details of bench.closings, bench.belief_placement and bench.inference_overlap that their own tests leave open:
each figure recomputed from the raw rows (the journal and results.csv of a match run, explicit decks, synthetic
worlds), not copied from the code under test."""

from __future__ import annotations

import json
import math
import re
import shutil

import numpy as np
import pytest
from scipy import stats
from serial_pool import SerialPool
from reference_stats import t_interval

from bench import belief_placement, closings, inference_overlap
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import CLOSE
from sixtysix_env.cards import NUM_CARDS
from sixtysix_env.core.engine import apply
from sixtysix_env.core.layout import HAND0, STATE_SIZE, TO_MOVE
from sixtysix_env.core.state import new_state


# ----------------------------------------------------------------------------------------------- bench.closings

@pytest.fixture(scope="module")
def both_close(play_match):
    """A heuristic self-play run: both seats close the talon (R10) in some of its games."""
    return play_match(("heuristic", "heuristic"), deals=10, seed=61)


def _raw_games(run):
    """[(deal, A's seat, who closed, A's game points)] from the raw journal (closer found on the compiled engine) and
    results.csv (the points)."""
    from eval.pool import game_margins

    _agents, margins = game_margins(run)
    deals = json.loads((run / "deals.json").read_text())["deals"]
    rows = []
    for line in (run / "journal.jsonl").read_text().splitlines()[1:]:
        record = json.loads(line)
        for game in record["games"]:
            state = new_state(Rules(), deck=deals[record["deal"]]["deck"], dealer=game["dealer"])
            closer = "nobody"
            for action in game["actions"]:
                if action == CLOSE:
                    closer = "A" if int(state[TO_MOVE]) == game["seat_a"] else "B"
                apply(state, action)
            rows.append((record["deal"], game["seat_a"], closer, margins[record["deal"], game["seat_a"]]))
    return rows


def test_r10_the_split_recomputed_from_the_journal_and_the_results(both_close):
    """R10, R16: each closer's games, A's mean game points in them, and its share of the margin per deal pair with
    a t interval over the pairs, all recomputed from results.csv and a replay on the compiled engine."""
    rows = _raw_games(both_close)
    split = closings.closer_split(both_close, progress=False)
    assert split["agents"] == ["heuristic", "heuristic"] and split["run"] == str(both_close)
    pairs = sorted({deal for deal, *_ in rows})
    assert split["pairs"] == len(pairs) == 10
    assert {closer for _, _, closer, _ in rows} == set(closings.CLOSERS)  # every branch is exercised
    for closer in closings.CLOSERS:
        points = [margin for _, _, who, margin in rows if who == closer]
        row = split["closers"][closer]
        assert row["games"] == len(points)
        assert row["mean_points"] == pytest.approx(np.mean(points))
        per_pair = [sum(margin / 2 for deal, _, who, margin in rows if deal == pair and who == closer)
                    for pair in pairs]
        assert row["share"] == pytest.approx(np.mean(per_pair))
        _mean, low, high = t_interval(per_pair)
        assert (row["low"], row["high"]) == (pytest.approx(low), pytest.approx(high))
    assert split["margin"] == pytest.approx(np.mean([margin for *_, margin in rows]))


def test_a_closer_with_no_games_has_no_mean_points(tmp_path, both_close):
    """A closer without games has no mean (None, printed blank), not a division by zero."""
    split = closings.closer_split(both_close, progress=False)
    split["closers"]["B"].update(games=0, mean_points=None)
    table = closings.split_table(split)
    assert "| B | 0 |  | " in table


def test_the_split_table_prints_each_row(both_close):
    split = closings.closer_split(both_close, progress=False)
    table = closings.split_table(split).splitlines()
    assert table[0] == f"`heuristic` (A) vs `heuristic` (B), 10 deal pairs, margin per deal {split['margin']:+.3f}"
    for closer in closings.CLOSERS:
        row = split["closers"][closer]
        line = next(text for text in table if text.startswith(f"| {closer} |"))
        assert line == (f"| {closer} | {row['games']} | {row['mean_points']:+.3f} | {row['share']:+.3f} "
                        f"[{row['low']:+.3f}, {row['high']:+.3f}] |")


def _with_deal(run, tmp_path, deal):
    broken = tmp_path / f"deal{deal}"
    shutil.copytree(run, broken)
    lines = (broken / "journal.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record["deal"] = deal
    lines[1] = json.dumps(record)
    (broken / "journal.jsonl").write_text("\n".join(lines) + "\n")
    return broken


@pytest.mark.parametrize("deal", [-1, 10])
def test_a_journal_naming_a_deal_the_deal_file_lacks_is_refused_by_name(both_close, tmp_path, capsys, deal):
    """A deal index outside deals.json (10 deals: 0-9) is refused by name, by the split, the rates and the command
    (a usage error, not a traceback)."""
    broken = _with_deal(both_close, tmp_path, deal)
    with pytest.raises(ValueError, match=f"names deal {deal}, which its deals.json does not hold"):
        closings.closer_split(broken, progress=False)
    with pytest.raises(ValueError, match=f"names deal {deal}, which its deals.json does not hold"):
        closings.closing_rates(broken, progress=False)
    with pytest.raises(SystemExit):
        closings.main([str(broken)])
    assert f"names deal {deal}" in capsys.readouterr().err


def test_closing_rates_names_the_run_and_deal_of_an_illegal_action(both_close, tmp_path):
    """Called directly (the command checks the journal through closer_split first), the rates name the run and
    the game whose action the engine refuses, not the engine's message alone."""
    broken = tmp_path / "illegal"
    shutil.copytree(both_close, broken)
    lines = (broken / "journal.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record["games"][0]["actions"][0] = 999  # no action id of the game's layout
    lines[1] = json.dumps(record)
    (broken / "journal.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=rf"the journal of '{broken}', deal {record['deal']} "
                                         rf"\(dealer {record['games'][0]['dealer']}\): .*999"):
        closings.closing_rates(broken, progress=False)


def test_r10_closing_rates_recomputed_seat_by_seat(both_close, capsys):
    """R10: each seat's rows count its own leads where closing was legal (seat found on the compiled engine), in
    the order (plausible, wins) = (yes, yes), (yes, no), (no, yes), (no, no); a row's rate is closed / leads with
    a Wilson interval (recomputed here), an empty row has none; the table prints every row."""
    from agents.rule_based import HeuristicAgent
    from agents.solver import closing_wins
    from eval.deals import load_deals
    from sixtysix_env.core import state_from_game
    from sixtysix_env.core.heuristic import close_plausible
    from sixtysix_env.game import LEAD

    params = HeuristicAgent().core_params()
    deals_raw = json.loads((both_close / "deals.json").read_text())["deals"]
    deals, rules = load_deals(both_close / "deals.json")
    expected = {(seat, p, w): [0, 0] for seat in "AB" for p in (True, False) for w in (True, False)}
    for line in (both_close / "journal.jsonl").read_text().splitlines()[1:]:
        record = json.loads(line)
        for game_record in record["games"]:
            state = new_state(Rules(), deck=deals_raw[record["deal"]]["deck"], dealer=game_record["dealer"])
            game = Game.deal(rules, deck=list(deals[record["deal"]].deck), dealer=game_record["dealer"])
            for action in game_record["actions"]:
                if game.stage == LEAD and CLOSE in game.legal_actions():
                    seat = "A" if int(state[TO_MOVE]) == game_record["seat_a"] else "B"
                    key = (seat, bool(close_plausible(state_from_game(game), params)), bool(closing_wins(game)))
                    expected[key][0] += action == CLOSE
                    expected[key][1] += 1
                apply(state, action)
                game.apply(action)
    rates = closings.closing_rates(both_close, progress=False)
    assert rates["agents"] == ["heuristic", "heuristic"] and rates["run"] == str(both_close)
    z = stats.norm.ppf(0.975)
    for seat in "AB":
        assert [(row["plausible"], row["wins"]) for row in rates["rates"][seat]] == [
            (True, True), (True, False), (False, True), (False, False)]
        for row in rates["rates"][seat]:
            closed, leads = expected[seat, row["plausible"], row["wins"]]
            assert (row["closed"], row["leads"]) == (closed, leads)
            if not leads:
                assert row["rate"] is None and row["low"] is None and row["high"] is None
                continue
            p = closed / leads
            centre = (p + z * z / (2 * leads)) / (1 + z * z / leads)
            half = z * math.sqrt(p * (1 - p) / leads + z * z / (4 * leads * leads)) / (1 + z * z / leads)
            assert row["rate"] == pytest.approx(p)
            assert row["low"] == pytest.approx(max(0.0, centre - half), abs=1e-9)
            assert row["high"] == pytest.approx(min(1.0, centre + half), abs=1e-9)
    assert sum(row["leads"] for seat in "AB" for row in rates["rates"][seat] if row["plausible"]) > 0
    assert sum(row["closed"] for row in rates["rates"]["B"]) > 0
    table = closings.rates_table(rates).splitlines()
    assert table[0] == "closing rates at the leads where closing was legal: `heuristic` (A) vs `heuristic` (B)"
    for seat in "AB":
        for row in rates["rates"][seat]:
            cells = (f"| {seat} | {'yes' if row['plausible'] else 'no'} | {'yes' if row['wins'] else 'no'} | "
                     f"{row['closed']} / {row['leads']} | ")
            rate = "" if row["rate"] is None else f"{row['rate']:.3f} [{row['low']:.3f}, {row['high']:.3f}]"
            assert cells + rate + " |" in table
    assert len(table) == 4 + 8


# ------------------------------------------------------------------------------------- bench.inference_overlap

def _heuristic_decisions(deals, first_seed):
    """(game, infoset) at every decision of heuristic self-play dealt as the benches deal (seed first_seed + d,
    dealer d % 2), played on independently of the benches' own loop; the game is a copy taken at the decision."""
    from agents.rule_based import HeuristicAgent

    rules = Rules()
    for deal in range(deals):
        game = Game.deal(rules, seed=first_seed + deal, dealer=deal % 2)
        players = [HeuristicAgent(seed=deal * 2 + seat) for seat in range(2)]
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            yield game.clone(), infoset
            game.apply(players[infoset.player].act(infoset))


def _phase1_decision():
    """The first decision after the first trick (R7: the talon still open) of heuristic self-play from seed 40."""
    for game, infoset in _heuristic_decisions(1, 40):
        if game.tricks and not game.phase2:
            return game, infoset
    raise AssertionError("no phase-1 decision after the first trick")


def test_placed_share_counts_his_unknown_cards_in_each_worlds_hand():
    """Three synthetic worlds put 2, 1 and 0 of the opponent's (player 0's) three unknown cards in his hand."""
    unknown = 0b111 << 5
    worlds = np.zeros((3, STATE_SIZE), dtype=np.int64)
    worlds[:, HAND0 + 1] = unknown  # the other hand is not his
    worlds[0, HAND0] = (0b011 << 5) | 1
    worlds[1, HAND0] = 0b100 << 5
    worlds[2, HAND0] = 0b1000 << 5
    assert inference_overlap.placed_share(worlds, 0, unknown) == pytest.approx((2 + 1 + 0) / 3 / 3)


def test_uniform_and_unweighted_inferred_worlds_place_each_unknown_card_with_his_share_of_the_unseen_cards():
    """R7: in phase 1 nothing bars a card from his hand, so a uniform world puts each of the cards the player has
    not seen in it with probability (his unknown cards) / (unseen cards); with every floor 1 the replay inference
    weighs each world alike and places them as often (a binomial tolerance of 5 standard deviations)."""
    from agents.rule_based import HeuristicAgent
    from agents.solver import core_table
    from sixtysix_env.core.search import seed_kernels

    game, infoset = _phase1_decision()
    unknown = game.hands[1 - infoset.player] & ~infoset.opponent_known
    k, n = unknown.bit_count(), infoset.unseen.bit_count()
    assert 0 < k < n
    worlds = np.empty((3000, STATE_SIZE), dtype=np.int64)
    tolerance = 5 * math.sqrt((k / n) * (1 - k / n) / (k * len(worlds)))
    seed_kernels(11)
    assert inference_overlap.uniform_placement(infoset, unknown, worlds) == pytest.approx(k / n, abs=tolerance)
    held = worlds[:, HAND0 + 1 - infoset.player]
    assert np.all((held & infoset.opponent_known) == infoset.opponent_known)  # his known cards stay his
    assert np.all(np.bitwise_and(held, ~(infoset.unseen | infoset.opponent_known)) == 0)
    uniform_worlds = worlds.copy()
    share = inference_overlap.inferred_placement(infoset, unknown, worlds, HeuristicAgent().core_params(),
                                                 core_table(), (1.0,) * 6)
    assert share == pytest.approx(k / n, abs=tolerance)
    assert not np.array_equal(worlds, uniform_worlds)  # the inference drew worlds of its own into the array


def _counts(output, pattern):
    return [tuple(match) for match in re.findall(pattern, output)]


@pytest.mark.parametrize("where", ["phase1", "closed"])
def test_the_command_measures_the_decisions_its_where_names(where, capsys):
    """R7, R10: phase 1 measures the decisions after the first trick with the talon open, --where closed those of a
    phase 2 after a closing; each only where the opponent holds a card the player does not know. The decisions
    are counted overall and by tricks played (recounted on an independent replay), and the overall figures are the
    per-trick ones weighted by their decisions."""
    counts: dict[int, int] = {}
    for game, infoset in _heuristic_decisions(6, 70):
        unknown = game.hands[1 - infoset.player] & ~infoset.opponent_known
        wanted = game.closed_by is not None if where == "closed" else bool(game.tricks) and not game.phase2
        if wanted and unknown:
            counts[len(game.tricks)] = counts.get(len(game.tricks), 0) + 1
    assert counts
    assert inference_overlap.main(["--deals", "6", "--seed", "70", "--worlds", "6", "--where", where,
                                   "--lead-floor", "0.5", "--closed-floor", "0.25", "--closing-floor", "0.75",
                                   "--played-on-floor", "0.125"]) == 0
    output = capsys.readouterr().out
    head = re.search(r"(\d+) decisions of heuristic: unknown cards placed right by uniform worlds ([0-9.]+), by "
                     r"inferred worlds ([0-9.]+) \(floors 0.1, lead floor 0.5, closed floor 0.25, closing floor "
                     r"0.75, played-on floor 0.125; (\w+)\)", output)
    assert head is not None and head.group(4) == where
    rows = _counts(output, r"after (\d+) tricks: (\d+) decisions, uniform ([0-9.]+), inferred ([0-9.]+)")
    assert {int(t): int(c) for t, c, _, _ in rows} == counts and int(head.group(1)) == sum(counts.values())
    assert [int(t) for t, *_ in rows] == sorted(counts)
    for column, group in ((2, 2), (3, 3)):
        weighted = sum(int(c) * float(row[column]) for row in rows for c in [row[1]]) / sum(counts.values())
        assert float(head.group(group)) == pytest.approx(weighted, abs=2e-3)
        assert all(0 < float(row[column]) <= 1 for row in rows)


def test_no_deals_are_refused_by_name(capsys):
    with pytest.raises(SystemExit):
        inference_overlap.main(["--deals", "0"])
    assert "--deals must be positive, got 0" in capsys.readouterr().err


# ------------------------------------------------------------------------------------- bench.belief_placement

def test_card_bits_and_the_measured_decisions():
    """card_bits lists a mask's cards by id; measured() is the opponent's hand less what the player knows of it at
    a phase-1 decision after the first trick (R7), and 0 before the first trick and in phase 2 (R10, R7)."""
    assert belief_placement.card_bits(0).tolist() == [0] * NUM_CARDS
    bits = belief_placement.card_bits((1 << 0) | (1 << 5) | (1 << 23))
    assert bits.dtype == np.int8 and np.flatnonzero(bits).tolist() == [0, 5, 23]
    seen = {"first": 0, "phase1": 0, "phase2": 0}
    for game, infoset in _heuristic_decisions(4, 80):
        unknown = belief_placement.measured(game, infoset)
        if not game.tricks:
            seen["first"] += 1
            assert unknown == 0
        elif game.phase2:
            seen["phase2"] += 1
            assert unknown == 0
        else:
            seen["phase1"] += 1
            hand = game.hands[1 - infoset.player]
            assert unknown == hand & ~infoset.opponent_known and unknown & infoset.opponent_known == 0
    assert all(seen.values())


def test_self_play_positions_are_the_measured_decisions_of_the_seeded_deals():
    """Each deal d is dealt from seed first_seed + d with dealer d % 2 and played by the heuristic with 5 % random
    decisions (rng seeded by the deal's seed); a row per measured decision: the observation, the bits of his unknown
    cards and of the cards the player has not seen."""
    from agents.rule_based import HeuristicAgent
    from sixtysix_env.observation import ObservationEncoder

    rules = Rules()
    encoder = ObservationEncoder(rules)
    expected_obs, expected_held, expected_unseen = [], [], []
    for deal in range(3):
        game = Game.deal(rules, seed=90 + deal, dealer=deal % 2)
        players = [HeuristicAgent(seed=(90 + deal) * 2 + seat) for seat in range(2)]
        rng = np.random.default_rng(90 + deal)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            if game.tricks and not game.phase2:
                unknown = game.hands[1 - infoset.player] & ~infoset.opponent_known
                if unknown:
                    expected_obs.append(encoder.encode(game, infoset.player))
                    expected_held.append([(unknown >> card) & 1 for card in range(NUM_CARDS)])
                    expected_unseen.append([(infoset.unseen >> card) & 1 for card in range(NUM_CARDS)])
            if rng.random() < 0.05:
                action = int(rng.choice(infoset.legal_actions))
            else:
                action = players[infoset.player].act(infoset)
            game.apply(action)
    observations, held, unseen = belief_placement.self_play_positions(90, 3)
    assert held.tolist() == expected_held and unseen.tolist() == expected_unseen
    assert observations.dtype == np.float32 and np.array_equal(observations, np.array(expected_obs, np.float32))


def test_placements_of_a_flat_belief_give_his_share_of_the_unseen_cards(monkeypatch):
    """A network with the same logit for every card spreads his unknown cards evenly over the cards the player
    has not seen: its placement is (unknown cards) / (unseen cards) exactly, the uniform worlds' in expectation;
    the decisions are keyed by the tricks played, as an independent replay of the deals finds them."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(belief_placement, "WORLDS", 200)
    expected: dict[int, list[float]] = {}
    for game, infoset in _heuristic_decisions(2, 3100):
        unknown = game.hands[1 - infoset.player] & ~infoset.opponent_known
        if game.tricks and not game.phase2 and unknown:
            expected.setdefault(len(game.tricks), []).append(unknown.bit_count() / infoset.unseen.bit_count())

    def flat(inputs):
        return torch.full((len(inputs), NUM_CARDS), 0.7)

    by_trick = belief_placement.placements(flat, 2, 3100, progress=False)
    assert sorted(by_trick) == sorted(expected)
    for tricks, shares in expected.items():
        rows = np.array(by_trick[tricks])
        assert rows[:, 2] == pytest.approx(shares, abs=1e-9)
        assert np.all((rows[:, :2] >= 0) & (rows[:, :2] <= 1))
    uniform = np.array([row[0] for rows in by_trick.values() for row in rows])
    flat_shares = np.array([share for shares in expected.values() for share in shares])
    assert uniform.mean() == pytest.approx(flat_shares.mean(), abs=0.05)


def test_fit_belief_reports_the_masked_held_out_loss_of_each_epoch():
    """The held-out loss is the binary cross-entropy over the unseen cards only: with targets that differ on the
    seen cards alone the losses are the same; it falls over the epochs on a learnable target."""
    pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    observations = rng.normal(size=(400, 6)).astype(np.float32)
    unseen = np.zeros((400, NUM_CARDS), dtype=np.int8)
    unseen[:, :12] = 1
    held = np.zeros((400, NUM_CARDS), dtype=np.int8)
    held[:, :12] = (observations[:, :1] > 0).astype(np.int8)  # a card's holder follows the first input
    _network, losses = belief_placement.fit_belief(observations, held, unseen, 4, seed=5, progress=False)
    noisy = held.copy()
    noisy[:, 12:] = rng.integers(0, 2, size=(400, NUM_CARDS - 12))
    _network, same = belief_placement.fit_belief(observations, noisy, unseen, 4, seed=5, progress=False)
    assert len(losses) == 4 and losses == pytest.approx(same, rel=1e-5)
    assert losses[-1] < losses[0] < math.log(2) + 0.1


@pytest.mark.parametrize("argv, message", [
    (["--deals", "0"], "must be positive"), (["--bench-deals", "0"], "must be positive"),
    (["--epochs", "0"], "must be positive"), (["--workers", "0"], "must be positive"),
    (["--seed", "3102", "--bench-seed", "3100", "--bench-deals", "3"], "overlap"),  # the last measured deal
    (["--seed", "3090", "--deals", "11", "--bench-seed", "3100"], "overlap"),  # the first measured deal
])
def test_belief_options_refused_by_name(argv, message, capsys):
    with pytest.raises(SystemExit):
        belief_placement.main(argv)
    assert message in capsys.readouterr().err


class _Reached(Exception):
    pass


@pytest.mark.parametrize("argv", [["--seed", "3103", "--bench-seed", "3100", "--bench-deals", "3"],
                                  ["--seed", "3090", "--deals", "10", "--bench-seed", "3100"]])
def test_adjacent_fitted_and_measured_deals_do_not_overlap(argv, monkeypatch):
    def pool(*_args, **_kwargs):
        raise _Reached

    monkeypatch.setattr(belief_placement, "ProcessPoolExecutor", pool)
    with pytest.raises(_Reached):
        belief_placement.main(argv)


def test_too_few_decisions_to_hold_out_or_to_measure_are_refused_by_name(monkeypatch, capsys):
    """One self-play deal gives fewer than 20 decisions (seed 9000: 10), so 5 % of them is no held-out decision
    and the held-out loss read 0.0000: --deals is named. Measured deals without a measured decision gave NaN
    means: --bench-deals is named."""
    pytest.importorskip("torch")
    SerialPool.made = []
    monkeypatch.setattr(belief_placement, "ProcessPoolExecutor", SerialPool)
    assert len(belief_placement.self_play_positions(9000, 1)[0]) < 20
    with pytest.raises(SystemExit):
        belief_placement.main(["--deals", "1", "--seed", "9000", "--bench-deals", "1", "--workers", "1"])
    assert "--deals 1 gave" in capsys.readouterr().err
    monkeypatch.setattr(belief_placement, "placements", lambda *args, **kwargs: {})
    with pytest.raises(SystemExit):
        belief_placement.main(["--deals", "3", "--seed", "9000", "--bench-deals", "2", "--epochs", "1",
                               "--workers", "1"])
    assert "--bench-deals 2 gave no measured decision" in capsys.readouterr().err
    assert SerialPool.made == [1, 1]


def test_the_self_play_deals_are_cut_into_chunks_that_cover_them_once(monkeypatch, capsys):
    """With chunks of 3 deals, 7 deals are played as 3 + 3 + 1 from their seeds on: the fitted decisions are those
    of the 7 deals played in one piece; the measured ones are split by tricks played."""
    pytest.importorskip("torch")
    monkeypatch.setattr(belief_placement, "CHUNK_DEALS", 3)
    monkeypatch.setattr(belief_placement, "WORLDS", 20)
    tasks = []

    class Pool(SerialPool):
        def map(self, function, items):
            tasks.extend(items)
            return map(function, items)

    monkeypatch.setattr(belief_placement, "ProcessPoolExecutor", Pool)
    assert belief_placement.main(["--deals", "7", "--seed", "500", "--bench-deals", "2", "--bench-seed", "3100",
                                  "--epochs", "1", "--workers", "1"]) == 0
    assert tasks == [(500, 3), (503, 3), (506, 1)]
    output = capsys.readouterr().out
    fitted = len(belief_placement.self_play_positions(500, 7)[0])
    assert f"fitted on {fitted} decisions of 7 deals; held-out loss by epoch " in output
    measured: dict[int, int] = {}
    for game, infoset in _heuristic_decisions(2, 3100):
        if game.tricks and not game.phase2 and game.hands[1 - infoset.player] & ~infoset.opponent_known:
            measured[len(game.tricks)] = measured.get(len(game.tricks), 0) + 1
    assert f"\n{sum(measured.values())} decisions: unknown cards placed right" in "\n" + output
    rows = re.findall(r"after (\d+) tricks: (\d+) decisions, ([0-9.]+) / ([0-9.]+) / ([0-9.]+)", output)
    assert [(int(t), int(c)) for t, c, *_ in rows] == sorted(measured.items())


def test_a_chunk_without_a_measured_decision_gives_empty_positions_that_join_the_others():
    """Seed 85's deal reaches no phase-1 decision after the first trick (R7), so a one-deal chunk of it (the last
    chunk of a run of 500 n + 1 deals) holds no position: it is three empty arrays of the right widths, which join
    the other chunks' rows; it was a reshape error that stopped the run."""
    from sixtysix_env.observation import OBSERVATION_SIZE

    empty = belief_placement.self_play_positions(85, 1)
    assert [part.shape for part in empty] == [(0, OBSERVATION_SIZE), (0, NUM_CARDS), (0, NUM_CARDS)]
    assert [part.dtype for part in empty] == [np.float32, np.int8, np.int8]
    other = belief_placement.self_play_positions(86, 1)
    joined = [np.concatenate([a, b]) for a, b in zip(empty, other)]
    assert all(np.array_equal(a, b) for a, b in zip(joined, other))


def test_each_agent_is_told_its_seat_and_the_rules_before_the_deal(monkeypatch):
    """self_play_decisions starts each seat's agent on the deal (its seat, the rules) before it acts, as a match
    does: an agent that keeps state per deal needs it."""
    from agents.registry import make_agent

    calls = []

    def spying(spec, seed):
        agent = make_agent(spec, seed=seed)
        start = agent.start_deal

        def start_deal(seat, rules):
            calls.append((seed, seat, rules))
            return start(seat, rules)

        agent.start_deal = start_deal
        return agent

    monkeypatch.setattr(inference_overlap, "make_agent", spying)
    rules = Rules()
    decisions = inference_overlap.self_play_decisions(range(2), 40, rules)
    next(decisions)
    assert calls == [(0, 0, rules), (1, 1, rules)]
    for _ in decisions:
        pass
    assert calls[2:] == [(2, 0, rules), (3, 1, rules)]


@pytest.mark.parametrize("module, argv, message", [
    (inference_overlap, ["--deals", "0"], "--deals must be positive, got 0"),
    (belief_placement, ["--epochs", "0"], "must be positive"),
    (closings, ["no-run", "--plot", "chart.xyz"], "--plot 'chart.xyz': matplotlib writes no 'xyz' images"),
])
def test_the_commands_read_the_command_line_when_given_no_arguments(module, argv, message, monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["prog", *argv])
    with pytest.raises(SystemExit):
        module.main()
    assert message in capsys.readouterr().err


def test_the_command_writes_each_runs_split_and_rates_only_when_asked(both_close, tmp_path, capsys):
    """The JSON holds format, version 1 and each run's split as closer_split gives it (in the order of the runs),
    closing rates only with --rates; the output prints each run's table."""
    split = closings.closer_split(both_close, progress=False)
    out = tmp_path / "closings.json"
    assert closings.main([str(both_close), str(both_close), "--out", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document == json.loads(json.dumps({"format": "sixtysix-closings", "version": 1, "splits": [split, split]}))
    assert capsys.readouterr().out == (closings.split_table(split) + "\n\n") * 2


def test_a_run_without_a_finished_game_is_refused_by_name(both_close, tmp_path, capsys):
    """A journal with its header alone (a run stopped before its first deal pair) has no margin to split: the
    command names the run; it was 'mean_interval needs at least one value'."""
    empty = tmp_path / "empty"
    shutil.copytree(both_close, empty)
    header = (empty / "journal.jsonl").read_text().splitlines()[0]
    (empty / "journal.jsonl").write_text(header + "\n")
    with pytest.raises(ValueError, match="holds no finished game"):
        closings.closer_split(empty, progress=False)
    with pytest.raises(SystemExit):
        closings.main([str(empty)])
    assert f"{str(empty)!r} holds no finished game" in capsys.readouterr().err
