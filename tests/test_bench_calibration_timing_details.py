"""Details of bench.inference_calibration, bench.leaf_calibration, bench.decision_time and bench.inference_fallback
that a mutation review found untested: the figures are recomputed here from the raw rows, never copied from the tools.
"""

from __future__ import annotations

import math
import random

import pytest

import agents.inference as inference
from bench import inference_calibration
from fake_clock import FakeClock
from play_helpers import heuristic_self_play_to_lead


class ScriptedAgent:
    """An agent whose choice depends only on its seed and the position: the first or the second legal action."""

    def __init__(self, spec, seed):
        self.spec, self.seed, self.started = spec, seed, None

    def start_deal(self, player, rules):
        self.started = (player, rules)

    def act(self, infoset):
        assert self.started == (infoset.player, infoset.rules)  # told of the seat before asked
        count = self.seed % 1000
        if self.spec == "expert":
            pick = 0 if self.seed < 2000 else count % 2  # reseeded: differs at odd counts
        else:
            pick = 1 if count % 3 == 0 else 0  # the variant: differs from the first expert where count % 3 == 0
        return infoset.legal_actions[pick]


def test_agreement_counts_the_decisions_with_evidence_and_a_choice_and_the_shares_that_differ(monkeypatch):
    found = inference_calibration.positions("heuristic", 2, 620)
    made = []

    def make(spec, seed):
        made.append((spec, seed))
        return ScriptedAgent(spec, seed)

    monkeypatch.setattr(inference_calibration, "make_agent", make)
    count, reseeded, variant = inference_calibration.agreement(found, "variant")
    # expert, expert reseeded and the variant under the reseeded expert's seed, a new seed at each decision
    assert made == [agent for c in range(count) for agent in (("expert", 1000 + c), ("expert", 2000 + c),
                                                               ("variant", 2000 + c))]
    # Only decisions with two legal actions or more at which the rules model has evidence count.
    expected = sum(1 for infoset, _hand in found
                   if len(infoset.legal_actions) >= 2 and inference.OpponentModel(infoset, "rules").informative)
    assert count == expected > 3
    assert count < len(found)  # some decisions were left out (a single legal action, or no evidence)
    assert reseeded == pytest.approx(sum(c % 2 == 1 for c in range(count)) / count)
    assert variant == pytest.approx(sum(c % 3 == 0 for c in range(count)) / count)
    # No decision at all: shares of zero, not a ZeroDivisionError.
    assert inference_calibration.agreement([], "variant") == (0, 0.0, 0.0)



def test_positions_tell_each_seat_of_the_deal_and_pair_each_decision_with_the_opponents_hand(monkeypatch):
    """Self-play agents are told their seat before they act; each position holds the opponent's hand at that
    moment, checked against a replay of the same deals (seed + d, dealer d % 2) with the same scripted choices."""
    from sixtysix_env import Game, Rules

    seeds = []

    def make(spec, seed):
        seeds.append(seed)
        return ScriptedAgent("expert", seed)

    monkeypatch.setattr(inference_calibration, "make_agent", make)
    found = inference_calibration.positions("scripted", 3, 631)
    assert seeds == [2 * (631 + deal) + seat for deal in range(3) for seat in range(2)]  # each seat its own seed
    replayed = []
    for deal in range(3):
        game = Game.deal(Rules.preset("standard"), seed=631 + deal, dealer=deal % 2)
        while not game.is_over:
            player = game.current_player
            replayed.append((player, game.hands[1 - player]))
            game.apply(game.legal_actions()[0])  # the scripted experts (seed < 2000) play the first legal action
    assert [(infoset.player, hand) for infoset, hand in found] == replayed


def test_main_reports_the_agreement_shares(monkeypatch, capsys):
    from agents.registry import make_agent

    def make(spec, seed):
        return make_agent(spec, seed=seed) if spec == "heuristic" else ScriptedAgent(spec, seed)

    monkeypatch.setattr(inference_calibration, "make_agent", make)
    assert inference_calibration.main(["--deals", "1", "--seed", "640", "--worlds", "1", "--scales", "1",
                                       "--mixes", "0.5", "--agreement", "random"]) == 0
    found = inference_calibration.positions("heuristic", 1, 640)
    count = sum(1 for infoset, _hand in found
                if len(infoset.legal_actions) >= 2 and inference.OpponentModel(infoset, "rules").informative)
    reseeded = sum(c % 2 == 1 for c in range(count)) / count
    variant = sum(c % 3 == 0 for c in range(count)) / count
    assert (f"{count} decisions with evidence and a choice: expert vs expert reseeded differ in {reseeded:.1%}, "
            f"expert vs random in {variant:.1%}") in capsys.readouterr().out



def test_the_fit_scores_each_play_against_the_cards_won_so_far(monkeypatch, capsys):
    """The play model of a phase-1 lead or follow (R7) is asked with the cards gone in finished tricks: every card
    played before (a marriage's card too, R11) except the card led to the current trick."""
    from sixtysix_env.actions import EXCHANGE, MARRY_BASE, marry_card

    found = inference_calibration.positions("heuristic", 2, 650)
    shipped = inference.play_scores
    asked = []

    def recording(following, hand, lead, won, trump):
        asked.append((following, hand, lead, won, trump))
        return shipped(following, hand, lead, won, trump)

    monkeypatch.setattr(inference, "play_scores", recording)
    inference_calibration.fit_single_plays(found, [1.0], [0.5])
    out = capsys.readouterr().out
    by_state = {}
    for infoset, _hand in found:
        played = 0
        for action in infoset.history:
            if action < MARRY_BASE:
                played |= 1 << action
            elif action < EXCHANGE:
                played |= 1 << marry_card(action)
        if infoset.lead_card >= 0:
            played &= ~(1 << infoset.lead_card)
        by_state[(infoset.lead_card >= 0, infoset.hand, infoset.lead_card, infoset.trump_suit)] = played
    assert asked and any(won for *_rest, won, _trump in asked)
    for following, hand, lead, won, trump in asked:
        assert won == by_state[(following, hand, lead, trump)]
    leads = sum(1 for call in asked if not call[0])
    assert f"{leads} leads;" in out and f"{len(asked) - leads} follows;" in out


def test_the_fit_of_no_plays_says_so(capsys):
    inference_calibration.fit_single_plays([], [1.0], [0.5])
    assert capsys.readouterr().out == "no leads to fit\nno follows to fit\n"


class TimedAgent:
    """Acts in ``step(calls)`` seconds of the fake clock; records its seeds, deal starts and the positions asked."""

    def __init__(self, spec, seed, clock, log):
        self.spec, self.initial_seed, self.clock, self.log = spec, seed, clock, log
        self.calls = 0

    def seed(self, value):
        self.log.append((self.spec, "seed", value))

    def start_deal(self, player, rules):
        self.log.append((self.spec, "start", player))

    def act(self, infoset):
        self.calls += 1
        self.clock.now += (1 if self.spec == "a" else 2) * 1e-3 * self.calls  # a's n-th call lasts n ms, b's 2n
        self.log.append((self.spec, "act", infoset.player, len(infoset.history)))
        return infoset.legal_actions[-1]


def test_decision_time_books_each_agents_own_clock_time_per_repeat(monkeypatch):
    """With a clock that advances only inside ``act``, each agent's figures are exactly its own steps: the warm-up
    pass over the first deal is not timed, every repeat is, and each repeat has its own p95."""
    import types

    import numpy as np

    from bench import decision_time

    clock = FakeClock()
    log = []
    agents = {}

    def make(spec, seed=None):
        agents.setdefault(spec, []).append(TimedAgent(spec, seed, clock, log))
        return agents[spec][-1]

    monkeypatch.setattr(decision_time, "make_agent", make)
    monkeypatch.setattr(decision_time, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    positions = decision_time.self_play_positions(2, seed=51)
    sizes = [len(deal) for deal in positions]
    per_repeat = sum(sizes)
    result = decision_time.time_decisions(["a", "b"], positions, repeats=2, seed=70, progress=False)
    assert [agent.initial_seed for agent in agents["a"]] == [70, 71]  # one player per seat, seeded seed + seat
    for spec, factor in (("a", 1), ("b", 2)):
        # The n-th call of a seat's player lasts factor * n ms; the warm-up made the first calls of deal 0.
        seat_calls = [0, 0]
        for infoset in positions[0]:
            seat_calls[infoset.player] += 1
        expected = []
        for repeat in range(2):
            run = []
            for deal in positions:
                for infoset in deal:
                    seat_calls[infoset.player] += 1
                    run.append(factor * seat_calls[infoset.player])
            expected.append(run)
        figures = result[spec]
        every = np.array(expected[0] + expected[1], dtype=float)
        assert figures["decisions"] == 2 * per_repeat
        assert figures["mean_ms"] == pytest.approx(every.mean())
        assert figures["median_ms"] == pytest.approx(np.median(every))
        assert figures["p95_ms"] == pytest.approx(np.percentile(every, 95))
        assert figures["max_ms"] == pytest.approx(every.max())
        assert figures["repeat_p95_ms"] == pytest.approx([np.percentile(run, 95) for run in expected])
    # Every deal of every repeat starts with both seats re-seeded (seed + 2 * deal + seat) and told, and the warm-up
    # pass starts deal 0 as well.
    seeds = [value for spec, what, *value in log if spec == "a" and what == "seed"]
    assert seeds == [[70], [71]] + [[70 + 2 * deal + seat] for _ in range(2) for deal in range(2) for seat in range(2)]
    starts = [value for spec, what, *value in log if spec == "b" and what == "start"]
    assert starts == [[0], [1]] * (1 + 2 * 2)
    acts = [entry for entry in log if entry[1] == "act"]
    assert len(acts) == 2 * (sizes[0] + 2 * per_repeat)


def _leaf_rows(deals, seed):
    """Every phase-1 decision with a choice (R7) of heuristic self-play, replayed here: (mover, his hand's card
    count plus the tricks played, the hand as a number, the finished game)."""
    from agents.registry import make_agent
    from sixtysix_env import Game, InformationSet, Rules

    rules, rows = Rules.preset("standard"), []
    for deal in range(deals):
        game = Game.deal(rules, seed=seed + deal, dealer=deal % 2)
        players = [make_agent("heuristic", seed=deal * 2 + seat) for seat in range(2)]
        for seat, player in enumerate(players):
            player.start_deal(seat, rules)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            if not game.phase2 and len(infoset.legal_actions) > 1:
                rows.append((infoset.player, len(infoset.history) % 7, infoset.hand % 11, game))
            game.apply(players[infoset.player].act(infoset))
    return rows


LEAF_ESTIMATORS = {"history": lambda game, infoset: float(len(infoset.history) % 7),
                   "hand": lambda game, infoset: float(infoset.hand % 11)}


def _fit(values, outcomes):
    import numpy as np

    slope, intercept = np.polyfit(values, outcomes, 1)
    return float(np.corrcoef(values, outcomes)[0, 1]), float(slope), float(intercept)


def test_leaf_calibration_fits_each_estimator_on_the_movers_game_points(tmp_path, capsys, monkeypatch):
    """The figures of each estimator are the least-squares fit of the game points (R16) the player to move at a
    phase-1 choice (R7) scores in the end, on the estimator's value there; recomputed from a replay of the deals."""
    import json

    from bench import leaf_calibration

    rows = _leaf_rows(3, 9100)
    outcomes = [game.returns()[player] for player, _h, _c, game in rows]
    assert len(set(outcomes)) > 2 and any(value < 0 for value in outcomes)  # both players' sides: losses too
    result = leaf_calibration.calibration_of(LEAF_ESTIMATORS, 3, 9100, leaf_calibration.Rules.preset("standard"),
                                             progress=False)
    assert result["deals"] == 3 and result["seed"] == 9100 and result["decisions"] == len(rows)
    for label, column in (("history", 1), ("hand", 2)):
        r, slope, intercept = _fit([row[column] for row in rows], outcomes)
        fit = result["estimators"][label]
        assert (fit["r"], fit["slope"], fit["intercept"]) == pytest.approx((r, slope, intercept))
    # main prints the same figures and writes them (JSON) where --out says.
    monkeypatch.setattr(leaf_calibration, "estimators", lambda priors, critics, rules: LEAF_ESTIMATORS)
    out = tmp_path / "leaf.json"
    assert leaf_calibration.main(["--deals", "3", "--seed", "9100", "--critic", "unused", "--out", str(out),
                                  "--no-progress"]) == 0
    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    printed = capsys.readouterr().out
    assert f"{len(rows)} phase-1 decisions of 3 heuristic self-play deals (seed 9100)" in printed
    r, slope, intercept = _fit([row[1] for row in rows], outcomes)
    assert f"| history | {r:.3f} | {slope:.3f} | {intercept:+.3f} |" in printed


def test_deviating_position_without_deviation_is_the_heuristic_deal_at_the_viewers_lead():
    from bench.inference_fallback import deviating_position
    from sixtysix_env.game import LEAD

    kinds = set()
    for seed in (11000, 11001, 11002, 11008):
        for tricks in (1, 2):
            reached, could, history = heuristic_self_play_to_lead(seed, tricks)
            position = deviating_position(seed, tricks, 0.0)
            kinds.add(position is None)
            if not (reached and could):
                assert position is None
                continue
            game, viewer = position
            assert viewer == seed % 2 and game.to_move == viewer and game.stage == LEAD
            assert len(game.tricks) == tricks and list(game.history) == history
    assert kinds == {True, False}


def test_deviating_position_plays_other_cards_for_the_opponent_only():
    """At deviate 1 the opponent's choices leave the heuristic's somewhere, the viewer's never do (R9, R11)."""
    from bench.inference_fallback import deviating_position

    game, viewer = deviating_position(11007, 3, 1.0)
    _reached, _could, history = heuristic_self_play_to_lead(11007, 3)
    assert list(game.history) != history[:len(game.history)]
    # Replaying the same actions, the viewer's are his heuristic's choices at each of his turns.
    from agents.registry import make_agent
    from sixtysix_env import Game, InformationSet, Rules

    replay = Game.deal(Rules(), seed=11007, dealer=1)
    mine = make_agent("heuristic", seed=11007 + viewer)
    mine.start_deal(viewer, replay.rules)
    for action in game.history:
        if replay.to_move == viewer:
            assert action == mine.act(InformationSet(replay, viewer))
        replay.apply(action)


def test_marginals_put_the_opponents_unseen_cards_in_his_hand_on_average():
    """Each world gives the opponent exactly his unseen cards' count, so the shares sum to it, card by card in
    the order of the unseen cards; more tries leave fewer worlds to the fallback."""
    import numpy as np

    from bench.inference_fallback import deviating_position, marginals
    from sixtysix_env import InformationSet

    game, viewer = deviating_position(11004, 2, 0.5)
    infoset = InformationSet(game, viewer)
    hidden = game.hands[1 - viewer] & infoset.unseen
    shares, from_fallback = marginals(infoset, 300, 8, "likeliest", 1)
    assert len(shares) == infoset.unseen.bit_count() and np.all((shares >= 0) & (shares <= 1))
    assert shares.sum() == pytest.approx(hidden.bit_count())
    assert 0 < from_fallback <= 300
    _, fewer = marginals(infoset, 300, 2000, "likeliest", 1)
    assert fewer < from_fallback


def test_inference_fallback_main_prints_each_ways_distance_from_the_reference(capsys):
    import numpy as np

    from bench.inference_fallback import deviating_position, main, marginals
    from sixtysix_env import InformationSet

    assert main(["--seeds", "11002,11004", "--tricks", "2", "--worlds", "60", "--tries", "4",
                 "--reference-tries", "300"]) == 0
    out = capsys.readouterr().out
    assert "| 11002 | (no position: the opponent could not exchange or announce) | | | |" in out
    infoset = InformationSet(*deviating_position(11004, 2, 0.5))
    reference, _ = marginals(infoset, 60, 300, "likeliest", 11004)
    for way in ("likeliest", "resample"):
        shares, count = marginals(infoset, 60, 4, way, 11004)
        distance = np.abs(shares - reference)
        assert f"| 11004 | {way} | {count} of 60 | {distance.sum():.3f} | {distance.max():.3f} |" in out


def test_decision_time_main_writes_what_it_timed(monkeypatch, tmp_path, capsys):
    """With every decision lasting 2 ms of a fake clock, the table and the JSON hold exactly that, for the deals,
    seed, repeats and core asked."""
    import json
    import os
    import types

    from bench import decision_time

    clock = FakeClock()

    class Constant:
        def act(self, infoset):
            clock.now += 0.002
            return infoset.legal_actions[0]

    monkeypatch.setattr(decision_time, "make_agent", lambda spec, seed=None: Constant())
    monkeypatch.setattr(decision_time, "check_agent_specs", lambda parser, specs, rules=None: None)  # "c" is no spec
    monkeypatch.setattr(decision_time, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    allowed = sorted(os.sched_getaffinity(0))
    out = tmp_path / "times.json"
    try:
        assert decision_time.main(["--agent", "c", "--deals", "2", "--seed", "77", "--repeats", "3",
                                   "--core", str(allowed[-1]), "--no-progress", "--json", str(out)]) == 0
    finally:
        os.sched_setaffinity(0, set(allowed))
    positions = decision_time.self_play_positions(2, seed=77)
    count = sum(len(deal) for deal in positions)
    document = json.loads(out.read_text())
    assert {key: document[key] for key in ("format", "deals", "seed", "repeats", "core")} == {
        "format": "sixtysix-decision-time", "deals": 2, "seed": 77, "repeats": 3, "core": allowed[-1]}
    figures = document["agents"]["c"]
    assert figures["decisions"] == 3 * count
    for key in ("median_ms", "p95_ms", "p99_ms", "mean_ms", "max_ms"):
        assert figures[key] == pytest.approx(2.0)
    assert figures["repeat_p95_ms"] == pytest.approx([2.0] * 3)
    printed = capsys.readouterr().out
    assert f"{count} positions of 2 deals (seed 77), 3 repeats, core {allowed[-1]}" in printed
    assert f"| `c` | {3 * count} | 2.000 | 2.000 | 2.000 | 2.000 | 2.000 | 2.000, 2.000, 2.000 |" in printed


def test_leaf_calibration_refuses_a_critic_fitted_for_other_rules(monkeypatch):
    """A critic of Paderborn rules (R19) does not value standard positions: refused by name, before any deal."""
    from bench import leaf_calibration
    from sixtysix_env import Rules

    monkeypatch.setattr(leaf_calibration, "load_critic", lambda path: (object(), Rules.preset("paderborn")))
    with pytest.raises(ValueError, match=r"--critic 'other' was fitted for the rules 'paderborn', not 'standard'"):
        leaf_calibration.estimators([], ["other"], Rules.preset("standard"))


def test_a_model_that_gives_every_world_no_likelihood_is_a_figure_not_a_crash(monkeypatch):
    """At a tiny temperature without a uniform mix (--scales 0.001 --mixes 0, both accepted) the play model's
    likelihood of every sampled world underflows to 0: the ratio is still a figure (both sides floored alike)."""
    found = inference_calibration.positions("heuristic", 2, 611)
    rng = random.Random(611)
    worlds = [[infoset.determinize(rng).hands[1 - infoset.player] for _ in range(3)] for infoset, _hand in found]
    monkeypatch.setattr(inference, "LEAD_TEMPERATURE", inference.LEAD_TEMPERATURE * 0.001)
    monkeypatch.setattr(inference, "FOLLOW_TEMPERATURE", inference.FOLLOW_TEMPERATURE * 0.001)
    monkeypatch.setattr(inference, "PLAY_MIX", 0.0)
    ratio, count = inference_calibration.geometric_ratio("policy", found, worlds, rng)
    assert count > 0 and 0 < ratio < math.inf


def test_the_fit_of_a_model_that_never_makes_the_agents_play_is_minus_infinity(capsys):
    """Without a mix and at a tiny temperature the model plays only its best card: a kind of play where the agent
    sometimes chose another card has log-likelihood -inf (not a math domain error), one where it never did, 0."""
    import re

    assert inference_calibration.main(["--fit", "--deals", "2", "--seed", "611", "--scales", "0.001",
                                       "--mixes", "0"]) == 0  # a mix of 0 is accepted: [0, 1]
    out = capsys.readouterr().out
    rows = re.findall(r"\d+ (\w+)s; the model's best is the agent's in (\d+)%.*\n.*mix 0.0: (\S+) nats", out)
    assert [name for name, _share, _figure in rows] == ["lead", "follow"]
    assert any(share != "100" for _name, share, _figure in rows)
    for _name, share, figure in rows:
        assert (float(figure) == -math.inf) == (share != "100")
    # The temperature is printed in three significant figures: two decimals read "0.00" at this scale.
    temperatures = [float(value) for value in re.findall(r"temperature (\S+) card points", out)]
    assert temperatures == pytest.approx([inference.LEAD_TEMPERATURE * 0.001, inference.FOLLOW_TEMPERATURE * 0.001],
                                         rel=5e-3)


def test_the_ratio_counts_only_decisions_where_the_model_has_evidence():
    """Decisions without evidence (the opponent has shown nothing yet) give every world the same likelihood and are
    left out of the geometric mean: the count is that of the informative models, and the mean of the logs is over
    those alone."""
    found = inference_calibration.positions("heuristic", 2, 612)
    rng = random.Random(5)
    worlds = [[infoset.determinize(rng).hands[1 - infoset.player] for _ in range(4)] for infoset, _hand in found]
    informative = [inference.OpponentModel(infoset, "rules").informative for infoset, _hand in found]
    assert 0 < sum(informative) < len(found)
    ratio, count = inference_calibration.geometric_ratio("rules", found, worlds, random.Random(0))
    assert count == sum(informative)
    logs = []
    for (infoset, hand), sampled, used in zip(found, worlds, informative):
        if used:
            model = inference.OpponentModel(infoset, "rules")
            mean = sum(model.likelihood(world, rng) for world in sampled) / len(sampled)
            logs.append(math.log(model.likelihood(hand, rng) / mean))
    assert ratio == pytest.approx(math.exp(sum(logs) / len(logs)))


def test_main_without_arguments_reads_the_command_line(monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["inference_calibration", "--deals", "0"])
    with pytest.raises(SystemExit):
        inference_calibration.main()
    assert "--deals and --worlds must be positive" in capsys.readouterr().err


def test_main_with_fit_fits_instead_of_measuring_the_worlds(capsys):
    assert inference_calibration.main(["--fit", "--deals", "1", "--seed", "611", "--scales", "1",
                                       "--mixes", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "leads;" in out and "follows;" in out and "geometric mean ratio" not in out



def test_main_prints_the_ratio_of_each_floor_and_temperature_it_sets(monkeypatch, capsys):
    """Each line of main is geometric_ratio at the floor, temperatures and mix it names, over the same worlds
    (drawn in order from Random(seed)); recomputed here by setting the model's constants directly."""
    import re

    assert inference_calibration.main(["--deals", "1", "--seed", "613", "--worlds", "3", "--scales", "0.5",
                                       "--mixes", "0.2", "--floors", "0.3,0.6"]) == 0
    printed = re.findall(r"geometric mean ratio (\S+) over", capsys.readouterr().out)
    rng = random.Random(613)
    found = inference_calibration.positions("heuristic", 1, 613)
    worlds = [[infoset.determinize(rng).hands[1 - infoset.player] for _ in range(3)] for infoset, _hand in found]
    expected = [inference_calibration.geometric_ratio("rules", found, worlds, rng)[0]]
    shipped = inference.RULE_FLOOR
    for floor in (0.3, 0.6):
        monkeypatch.setattr(inference, "RULE_FLOOR", floor)
        expected.append(inference_calibration.geometric_ratio("rules", found, worlds, rng)[0])
    monkeypatch.setattr(inference, "RULE_FLOOR", shipped)  # the play model is measured at the shipped floor
    monkeypatch.setattr(inference, "LEAD_TEMPERATURE", inference.LEAD_TEMPERATURE * 0.5)
    monkeypatch.setattr(inference, "FOLLOW_TEMPERATURE", inference.FOLLOW_TEMPERATURE * 0.5)
    monkeypatch.setattr(inference, "PLAY_MIX", 0.2)
    expected.append(inference_calibration.geometric_ratio("policy", found, worlds, rng)[0])
    assert printed == [f"{value:.3f}" for value in expected]
    assert len(set(printed)) == 4  # the floors and the play model each change the figure


def test_the_fit_counts_the_plain_plays_and_the_models_best(monkeypatch, capsys):
    """The fit takes each phase-1 card played (R7), not on the talon's last trick, that is not a marriage,
    exchange or closing (R9-R11) nor a lead right after one; recounted here from the deals' histories."""
    import re

    from agents.rule_based import is_phase2, on_last_talon_trick
    from sixtysix_env.actions import MARRY_BASE

    found = inference_calibration.positions("heuristic", 12, 660)
    counts, best, nats = {False: 0, True: 0}, {False: 0, True: 0}, {False: 0.0, True: 0.0}
    announced = False
    for (infoset, _hand), (after, _next) in zip(found, found[1:]):
        if len(after.history) != len(infoset.history) + 1:
            continue  # the last decision of a deal
        played = after.history[-1]
        lead = infoset.lead_card >= 0
        after_announcement = not lead and bool(infoset.history) and infoset.history[-1] >= MARRY_BASE
        announced |= played >= MARRY_BASE and not is_phase2(infoset)
        if is_phase2(infoset) or on_last_talon_trick(infoset) or played >= MARRY_BASE or after_announcement:
            continue
        won = 0
        for trick in infoset.tricks:
            won |= (1 << trick[1]) | (1 << trick[2])
        scores = inference.play_scores(lead, infoset.hand, infoset.lead_card, won, infoset.trump_suit)
        counts[lead] += 1
        best[lead] += max(scores, key=scores.get) == played
        temperature = 0.5 * (inference.FOLLOW_TEMPERATURE if lead else inference.LEAD_TEMPERATURE)
        weights = {card: math.exp(score / temperature) for card, score in scores.items()}
        nats[lead] += math.log(0.3 / len(scores) + 0.7 * weights[played] / sum(weights.values()))
    assert announced  # these deals hold marriages, exchanges or closings to leave out
    inference_calibration.fit_single_plays(found, [0.5], [0.3])
    out = capsys.readouterr().out
    figures = re.findall(r"mix 0.3: (\S+) nats", out)
    assert figures == [f"{nats[following] / counts[following]:.3f}" for following in (False, True)]
    for following, name in ((False, "lead"), (True, "follow")):
        share = re.search(rf"(\d+) {name}s; the model's best is the agent's in (\d+)%", out)
        assert int(share[1]) == counts[following]
        assert share[2] == f"{best[following] / counts[following]:.0%}"[:-1]


def test_leaf_calibration_loads_and_fits_in_one_call():
    """``calibration`` is ``calibration_of`` on the standard rules with the estimators named (here none: the
    decisions are still counted)."""
    from bench import leaf_calibration

    result = leaf_calibration.calibration(2, 9200, [], [], progress=False)
    assert result == {"deals": 2, "seed": 9200, "decisions": len(_leaf_rows(2, 9200)), "estimators": {}}


def test_leaf_calibration_values_a_critic_alone():
    """A critic named without any prior is loaded with its own encoder and gives a finite value at a position."""
    pytest.importorskip("torch")
    from bench import leaf_calibration
    from sixtysix_env import Game, InformationSet, Rules

    rules = Rules.preset("standard")
    found = leaf_calibration.estimators([], ["ppo_true_world"], rules)
    assert list(found) == ["critic ppo_true_world"]
    game = Game.deal(rules, seed=3, dealer=0)
    value = found["critic ppo_true_world"](game, InformationSet(game, game.current_player))
    assert isinstance(value, float) and math.isfinite(value)


def test_inference_calibration_defaults_are_the_documented_run(monkeypatch):
    """Without options: 40 deals of heuristic self-play from seed 500 (the module's first example)."""
    asked = []

    def stop(agent, deals, seed):
        asked.append((agent, deals, seed))
        raise SystemExit(0)

    monkeypatch.setattr(inference_calibration, "positions", stop)
    with pytest.raises(SystemExit):
        inference_calibration.main([])
    assert asked == [("heuristic", 40, 500)]


def test_leaf_calibration_names_a_folder_given_as_a_critic_and_its_default_deals(tmp_path, monkeypatch):
    from bench import leaf_calibration
    from sixtysix_env import Rules

    with pytest.raises(ValueError, match=rf"--critic '{tmp_path}' is a folder, not a network file"):
        leaf_calibration.estimators([], [str(tmp_path)], Rules.preset("standard"))
    asked = []
    monkeypatch.setattr(leaf_calibration, "estimators", lambda priors, critics, rules: {})
    monkeypatch.setattr(leaf_calibration, "calibration_of",
                        lambda found, deals, seed, rules, progress: asked.append((deals, seed)) or {
                            "decisions": 0, "estimators": {}})
    assert leaf_calibration.main(["--critic", "unused", "--no-progress"]) == 0
    assert asked == [(120, 9000)]  # the defaults its help names
