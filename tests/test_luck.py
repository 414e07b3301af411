"""The luck of the talon's draws (R7) as a control variate (sixtysix_env/core/luck.py, eval/luck.py): a draw's term
has mean zero over the draws chance could make, is positive for the player a good card falls to, the two seats'
terms cancel, and a match run's luck-adjusted margins replay its journal, cancel between identical runs, are kept
and refused by name where they cannot be computed."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from agents.rollout import rollout_player_params
from eval.luck import LuckAdjustment, adjusted_game_margins, game_corrections
from eval.pool import game_margins, paired_pool, pool
from sixtysix_env.cards import parse_card
from sixtysix_env.core.engine import apply, seed_generator
from sixtysix_env.core.heuristic import shuffle_face_down
from sixtysix_env.core.layout import STOCK, STOCK_POS
from sixtysix_env.core.luck import draw_luck, draw_to_top, draws_by_chance
from sixtysix_env.core.solver import Table
from sixtysix_env.core.state import new_state
from sixtysix_env.rules import Rules

# R4 order (dealer 0, so player 1 is forehand): forehand 1-3 and 7-9 (all clubs), dealer 4-6 and 10-12 (all spades),
# trump card 13 (hearts), talon 14-24 with the trump ace on top.
LUCKY_DECK = [
    "AC", "TC", "KC", "AS", "TS", "KS", "QC", "JC", "9C", "QS", "JS", "9S", "9H",
    "AH", "9D", "TH", "KH", "QH", "JH", "AD", "TD", "KD", "QD", "JD",
]


def first_trick_follow():
    """The deal of LUCKY_DECK after forehand (player 1) led the club ace: player 0's follow completes trick 1, which
    player 1 wins with any spade played (R6), so he draws the trump ace and player 0 the diamond nine (R7)."""
    state = new_state(Rules(), deck=LUCKY_DECK, dealer=0)
    apply(state, parse_card("AC"))
    return state, parse_card("9S")


def face_down(state):
    return [int(card) for card in state[STOCK + state[STOCK_POS]:STOCK + 11]]


def test_r7_draws_by_chance_only_where_two_of_three_or_more_face_down_cards_are_drawn():
    state = new_state(Rules(), deck=LUCKY_DECK, dealer=0)
    assert not draws_by_chance(state, parse_card("AC"))  # a lead completes no trick
    state, follow = first_trick_follow()
    assert draws_by_chance(state, follow)
    after = state.copy()
    apply(after, follow)
    assert after[STOCK_POS] == 2 and face_down(after) == face_down(state)[2:]
    # Down to one face-down card: the winner takes it and the loser the bottom card, nothing left to chance.
    state[STOCK_POS] = 10
    assert not draws_by_chance(state, follow)


def test_shuffles_keep_the_talons_cards_and_the_cards_on_top():
    state, _ = first_trick_follow()
    seed_generator(7)
    cards = face_down(state)
    orders = set()
    for _ in range(200):
        world = state.copy()
        shuffle_face_down(world, 2)
        assert face_down(world)[:2] == cards[:2] and sorted(face_down(world)) == sorted(cards)
        assert np.array_equal(world[:STOCK], state[:STOCK])
        orders.add(tuple(face_down(world)))
    assert len(orders) > 150  # the other nine cards are really reordered


def test_draw_to_top_draws_every_ordered_pair_equally_often():
    """R4: the talon lies in a uniform order, so the two cards drawn are a uniform ordered pair of the face-down
    cards whatever order the talon had before (here always the same one)."""
    state, _ = first_trick_follow()
    cards = face_down(state)
    seed_generator(11)
    pairs = Counter()
    positions = Counter()
    draws = 22_000
    for _ in range(draws):
        world = state.copy()
        draw_to_top(world, 2)
        assert sorted(face_down(world)) == sorted(cards)
        pairs[tuple(face_down(world)[:2])] += 1
        positions[face_down(world).index(cards[0])] += 1
    assert len(pairs) == 11 * 10
    assert stats.chisquare(list(pairs.values())).pvalue > 1e-3
    assert positions[0] == pytest.approx(draws / 11, rel=0.1)  # the old top card is drawn first 1 time in 11


def luck_of(state, action, observer, orders, seed):
    table = Table(12)
    seed_generator(seed)
    return draw_luck(state, action, observer, rollout_player_params(), orders, table.entries, table.nodes,
                     table.claim_worlds(2 * orders))


def test_r7_the_trump_ace_drawn_is_good_luck_and_the_seats_terms_cancel():
    state, follow = first_trick_follow()
    winner_luck = luck_of(state, follow, 1, 64, seed=3)
    assert winner_luck > 0.1
    assert luck_of(state, follow, 0, 64, seed=3) == pytest.approx(-winner_luck)  # zero-sum game points (R16)
    lead = new_state(Rules(), deck=LUCKY_DECK, dealer=0)
    assert luck_of(lead, parse_card("AC"), 1, 8, seed=3) == 0.0  # no draw, no luck


def test_a_draws_term_has_mean_zero_over_the_draws_chance_can_make():
    """AIVAT's premise: with the talon in a uniform order, the value of the cards drawn minus its expectation over
    every draw averages to zero, so the adjusted margin keeps the raw one's expectation."""
    state, follow = first_trick_follow()
    seed_generator(5)
    terms = []
    for index in range(240):
        world = state.copy()
        shuffle_face_down(world, 0)
        terms.append(luck_of(world, follow, 1, 8, seed=1000 + index))
    terms = np.array(terms)
    assert np.std(terms) > 0.1  # draws do differ in value
    assert abs(terms.mean()) < 4 * terms.std(ddof=1) / np.sqrt(len(terms))


@pytest.fixture(scope="module")
def match_run(play_match):
    return play_match(("heuristic", "random"), deals=8, seed=8)


QUICK = LuckAdjustment(orders=4, seed=2, progress=False)


def test_adjusted_margins_replay_the_journal_and_are_kept(match_run, monkeypatch):
    _, margins = game_margins(match_run)
    corrections = game_corrections(match_run, QUICK)
    assert corrections.keys() == margins.keys()
    assert all(replayed == margins[key] for key, (_, _, replayed) in corrections.items())
    assert sum(draws for _, draws, _ in corrections.values()) > 0
    adjusted = adjusted_game_margins(match_run, margins, QUICK)
    assert any(adjusted[key] != margins[key] for key in margins)
    kept = json.loads((match_run / "luck.json").read_text())
    assert "orders=4,seed=2" in kept["runs"]

    def no_replay(*args, **kwargs):
        raise AssertionError("the kept corrections should have been read")

    monkeypatch.setattr("sixtysix_env.core.luck.game_luck", no_replay)
    assert game_corrections(match_run, QUICK) == corrections
    (_, raw), (_, luck_adjusted) = pool([match_run]), pool([match_run], QUICK)
    assert raw.n == luck_adjusted.n == 8 and raw.mean != luck_adjusted.mean


def test_identical_runs_differ_by_exactly_zero_after_the_adjustment(match_run, tmp_path):
    """Two runs of the same deals get the same generator seed per deal and seat, so draws of the same positions
    get the same terms: here every game is the same, and so is every corrected margin."""
    twin = tmp_path / "twin"
    shutil.copytree(match_run, twin)
    (twin / "luck.json").unlink(missing_ok=True)
    *_, interval = paired_pool([match_run], [twin], QUICK)
    assert interval.n == 8 and interval.mean == 0.0


def test_what_cannot_be_adjusted_is_refused_by_name(match_run, tmp_path):
    with pytest.raises(ValueError, match="orders"):
        LuckAdjustment(orders=0)
    with pytest.raises(ValueError, match="workers"):
        LuckAdjustment(workers=True)
    _, margins = game_margins(match_run)
    key = next(iter(margins))
    with pytest.raises(ValueError, match="results.csv says"):
        adjusted_game_margins(match_run, {**margins, key: margins[key] + 1}, QUICK)
    broken = tmp_path / "broken"
    shutil.copytree(match_run, broken)
    lines = (broken / "journal.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    actions = list(record["games"][0]["actions"])
    record["games"][0]["actions"][0] = 99
    (broken / "journal.jsonl").write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    with pytest.raises(ValueError, match="outside 0..36"):
        game_corrections(broken, QUICK)
    record["games"][0]["actions"] = actions[:3]
    (broken / "journal.jsonl").write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    with pytest.raises(ValueError, match="does not replay"):
        game_corrections(broken, QUICK)
    header = json.loads(lines[0])
    for rules, said in ((None, "got NoneType"), ("standard", "got str")):  # not a bare key, nor an unnamed journal
        header["settings"]["rules"] = rules
        (broken / "journal.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
        with pytest.raises(ValueError, match=f"the journal of '{broken}' names no valid rules "
                                             rf"\(rules must be a mapping of switch names to values, {said}\)"):
            game_corrections(broken, QUICK)
    header = json.loads(lines[0])
    header["settings"]["mode"] = "match"
    (broken / "journal.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(ValueError, match="Bummerls"):
        game_corrections(broken, QUICK)
    (broken / "journal.jsonl").unlink()
    with pytest.raises(ValueError, match="cannot read the match journal"):
        game_corrections(broken, QUICK)


def test_the_intervals_bench_prints_both_figures_and_draws_them(match_run, tmp_path, capsys):
    from bench.luck_intervals import main as intervals_main

    twin = tmp_path / "twin"
    shutil.copytree(match_run, twin)
    out_json, out_png = tmp_path / "rows.json", tmp_path / "rows.png"
    assert intervals_main(["--entry", f"run={match_run}", "--entry", f"twins={match_run},{twin}", "--orders", "4",
                           "--json", str(out_json), "--plot", str(out_png)]) == 0
    rows = json.loads(out_json.read_text())["rows"]
    (_, raw), (_, adjusted) = pool([match_run]), pool([match_run], LuckAdjustment(orders=4, progress=False))
    assert rows[0]["raw"]["mean"] == pytest.approx(raw.mean)
    assert rows[0]["adjusted"]["mean"] == pytest.approx(adjusted.mean)
    assert rows[1]["raw"]["mean"] == rows[1]["adjusted"]["mean"] == 0.0
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| run | 8 |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        intervals_main(["--entry", "no-equals-sign"])


def test_the_intervals_bench_writes_a_run_of_one_deal_pair_with_null_bounds(tmp_path, capsys):
    """One deal pair has no interval ([-inf, +inf] printed): the JSON writer refused the infinities and neither
    file was written."""
    import sixtysix_cli
    from bench.luck_intervals import main as intervals_main
    from sixtysix_env.fileio import nonfinite_as_null

    assert nonfinite_as_null({"a": [1.0, float("nan")], "b": (float("-inf"), 2)}) == {"a": [1.0, None], "b": [None, 2]}
    run = tmp_path / "one"
    assert sixtysix_cli.main(["match", "random", "greedy", "--deals", "1", "--out", str(run), "--quiet",
                              "--no-progress", "--bootstrap", "0"]) == 0
    out_json, out_png = tmp_path / "one.json", tmp_path / "one.png"
    assert intervals_main(["--entry", f"one={run}", "--orders", "4", "--json", str(out_json),
                           "--plot", str(out_png)]) == 0
    (row,) = json.loads(out_json.read_text())["rows"]
    assert row["raw"]["n"] == 1 and row["raw"]["low"] is None and row["raw"]["high"] is None
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "[-inf, +inf]" in capsys.readouterr().out


def test_a_damaged_luck_file_is_computed_again(match_run, tmp_path):
    run = tmp_path / "damaged"
    shutil.copytree(match_run, run)
    expected = game_corrections(run, QUICK)
    kept = json.loads((run / "luck.json").read_text())
    kept["runs"]["orders=4,seed=2"]["games"][0] = ["not", "a", "row"]
    (run / "luck.json").write_text(json.dumps(kept))
    assert game_corrections(run, QUICK) == expected
    (run / "luck.json").write_text("{not json")
    assert game_corrections(run, QUICK) == expected
    (run / "luck.json").write_text("[" * 100_000 + "]" * 100_000)  # was a RecursionError, not a damaged file
    assert game_corrections(run, QUICK) == expected
    (run / "luck.json").write_bytes(b"\xff\xfe")  # not UTF-8
    assert game_corrections(run, QUICK) == expected


def test_kept_corrections_of_other_rollout_values_are_computed_again(match_run, tmp_path, monkeypatch):
    """luck.json records the digest of the rollout player's numbers that valued the draws: corrections kept from
    other numbers are not read back but replayed with today's."""
    import eval.luck as luck_module

    run = tmp_path / "other_values"
    shutil.copytree(match_run, run)
    expected = game_corrections(run, QUICK)
    kept = json.loads((run / "luck.json").read_text())
    assert kept["runs"]["orders=4,seed=2"]["values_sha256"] == luck_module.values_digest()
    entry = kept["runs"]["orders=4,seed=2"]
    entry["games"] = [[deal, seat, 99.0, draws, margin] for deal, seat, _, draws, margin in entry["games"]]
    (run / "luck.json").write_text(json.dumps(kept))
    assert all(value == 99.0 for value, _, _ in game_corrections(run, QUICK).values())  # same numbers: read back
    monkeypatch.setattr(luck_module, "values_digest", lambda: "0" * 64)  # as if the rollout player had changed
    assert game_corrections(run, QUICK) == expected
    assert json.loads((run / "luck.json").read_text())["runs"]["orders=4,seed=2"]["values_sha256"] == "0" * 64


# ------------------------------------------------------------------ found by a mutation review of eval/ (session 72)
def test_a_games_luck_is_taken_off_its_margin_with_a_seed_of_its_own(match_run, tmp_path, monkeypatch):
    """The adjusted margin is the margin minus A's luck (luck in A's favour lowers it). Each game's generator is
    seeded from the run's seed, the deal and A's seat, so no two games of a run share the draws' random orders."""
    import sixtysix_env.core.engine as engine
    from eval.luck import game_seed

    _, margins = game_margins(match_run)
    corrections = game_corrections(match_run, QUICK)
    adjusted = adjusted_game_margins(match_run, margins, QUICK)
    assert adjusted == {key: margins[key] - correction for key, (correction, _, _) in corrections.items()}
    seeds = {game_seed(QUICK.seed, deal, seat) for deal in range(40) for seat in (0, 1)}
    assert len(seeds) == 80
    fresh = tmp_path / "fresh"
    shutil.copytree(match_run, fresh)
    (fresh / "luck.json").unlink(missing_ok=True)
    used = []
    original = engine.seed_generator
    monkeypatch.setattr(engine, "seed_generator", lambda seed: (used.append(seed), original(seed))[1])
    assert game_corrections(fresh, QUICK) == corrections
    assert sorted(used) == sorted(game_seed(QUICK.seed, deal, seat) for deal, seat in margins)


def test_only_a_match_of_two_agents_with_every_game_listed_is_adjusted(match_run, tmp_path):
    """A tournament of three agents is refused by name (its units are not one pair's), and so are results that
    list other games than the journal replays."""
    from eval.tournament import JOURNAL_FORMAT

    _, margins = game_margins(match_run)
    fewer = dict(list(margins.items())[1:])
    with pytest.raises(ValueError, match="hold different games"):
        adjusted_game_margins(match_run, fewer, QUICK)
    three = tmp_path / "three"
    three.mkdir()
    header = {"journal": JOURNAL_FORMAT, "version": 1, "settings": {"mode": "deal", "agents": ["a", "b", "c"]}}
    (three / "journal.jsonl").write_text(json.dumps(header) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="a tournament of 3 agents, not a match"):
        game_corrections(three, QUICK)


def test_the_pool_tool_says_how_the_adjusted_interval_compares_with_the_raw_one(match_run, capsys):
    """The correction is subtracted whole, so it narrows the interval only as far as the heuristic's rollouts model
    the agents' play (random's they do not): the adjusted line gives its width as a share of the raw one's."""
    from eval.pool import main as pool_main

    assert pool_main([str(match_run), "--luck", "--luck-orders", "4", "--luck-seed", "2"]) == 0
    raw_line, adjusted_line = capsys.readouterr().out.strip().splitlines()
    raw, adjusted = pool([match_run]), pool([match_run], QUICK)
    assert raw_line.endswith(f"95% CI [{raw[1].low:+.3f}, {raw[1].high:+.3f}]")
    share = (adjusted[1].high - adjusted[1].low) / (raw[1].high - raw[1].low)
    assert adjusted_line.startswith("luck-adjusted (4 talon orders per draw): ")
    assert adjusted_line.endswith(f"95% CI [{adjusted[1].low:+.3f}, {adjusted[1].high:+.3f}] (width {share:.2f} "
                                  "of the raw interval's)")
