"""Details of bench.decision_regret, bench.closing_premium and bench.oracle_bounds that their figures rest on: which
positions and leads are counted, how each is scored, and the intervals over deals, each recomputed by hand from the
tools' raw rows (scripted agents stand in for searches where only the bookkeeping is under test)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats
from serial_pool import SerialPool
from reference_stats import t_interval

from bench import decision_regret
from sixtysix_env import Game, InformationSet, Rules
from fake_clock import FakeClock

TINY_REFERENCE = "expert_v3:samples=4,seconds=none,prune=none"


def _ratio_se(values: list[float], deals: list[int]) -> tuple[float, float, int]:
    """The mean of ``values`` as the ratio of the deals' sums over their counts, its delta-method standard error over
    deals and the number of deals, computed here from the definition."""
    keys = sorted(set(deals))
    totals = np.array([sum(v for v, d in zip(values, deals) if d == key) for key in keys])
    counts = np.array([sum(1 for d in deals if d == key) for key in keys], dtype=float)
    ratio = totals.sum() / counts.sum()
    linearised = (totals - ratio * counts) / counts.mean()
    return float(ratio), float(linearised.std(ddof=1) / np.sqrt(len(keys))), len(keys)


# ---------------------------------------------------------------------------------------------- decision_regret


def _qualifies(game: Game, low: int, high: int) -> bool:
    """A phase-1 decision with a choice (R7: talon open, not closed, R10) and a talon of ``low`` to ``high`` cards."""
    infoset = InformationSet(game, game.current_player)
    return (len(infoset.legal_actions) > 1 and game.closed_by is None and max(low, 1) <= game.talon_size <= high)


@pytest.mark.parametrize("low, high", [(0, 12), (4, 8), (12, 12)])  # the last: two positions a deal, seven deals
def test_regret_positions_are_every_phase1_choice_in_the_talon_range_in_deal_order(low, high):
    """R7/R10: each sampled position replays (deal seed, dealer, history) to a decision of the talon range with a
    choice and the talon open; the deals are seed, seed + 1, ... with dealer alternating, and between two positions
    of a deal (and before its first) no decision of the replayed history qualifies (none is skipped)."""
    seed = 9176  # its first deal reaches phase 2 (R8) at the 13th decision of the range 0-12 with a choice
    positions = decision_regret.sampled_positions(14, seed, low, high)
    assert len(positions) == 14 and decision_regret.sampled_positions(0, seed, low, high) == []
    previous: dict[int, int] = {}
    for deal_seed, dealer, history in positions:
        assert dealer == (deal_seed - seed) % 2
        assert deal_seed == seed or deal_seed - 1 in previous or deal_seed in previous  # no deal skipped
        assert len(history) > previous.get(deal_seed, -1) and deal_seed >= max(previous, default=seed)  # in order
        game = decision_regret.replay((deal_seed, dealer, history))
        assert game.history == history and game.dealer == dealer and _qualifies(game, low, high)
        assert game.talon_size >= 1  # never a decision after the talon ran out, whatever --min-talon
        walk = Game.deal(Rules(), seed=deal_seed, dealer=dealer)
        for step, action in enumerate(history):
            if step >= previous.get(deal_seed, -1) + 1:  # a decision after the deal's previous position
                assert not _qualifies(walk, low, high), (deal_seed, step)
            walk.apply(action)
        previous[deal_seed] = len(history)
    assert sorted(previous) == list(range(seed, seed + len(previous)))
    talons = {decision_regret.replay(position).talon_size for position in positions}
    assert talons <= set(decision_regret.TALON_SIZES)
    if (low, high) == (0, 12):  # every talon size of a position (R7: 12 after the deal, 2 fewer a trick) occurs
        assert talons == set(decision_regret.TALON_SIZES) == {2, 4, 6, 8, 10, 12}
    assert decision_regret.sampled_positions(1, seed, low, high) == positions[:1]


def test_a_reference_is_refused_when_resumed_with_another_talon_range_or_a_position_lacking_a_key(tmp_path):
    path = tmp_path / "reference.json"
    document = decision_regret.build_reference(path, 2, 9171, 2, TINY_REFERENCE, progress=False, max_talon=6)
    assert json.loads(path.read_text()) == document  # the file holds what was returned
    for entry in document["positions"]:
        game = decision_regret.replay((entry["deal_seed"], entry["dealer"], entry["history"]))
        assert entry["talon_size"] == game.talon_size and 2 <= game.talon_size <= 6
        assert sorted(map(int, entry["values"])) == sorted(game.legal_actions())  # no prune: every legal action
    with pytest.raises(ValueError, match="was made with"):  # the default range 8 to 12 is another reference
        decision_regret.build_reference(path, 2, 9171, 2, TINY_REFERENCE, progress=False)
    # The default range is not written, so references made before --max-talon existed still resume.
    default = decision_regret.build_reference(tmp_path / "default.json", 1, 9171, 8, TINY_REFERENCE, progress=False)
    assert "max_talon" not in default["settings"]
    assert decision_regret.build_reference(tmp_path / "default.json", 1, 9171, 8, TINY_REFERENCE, progress=False,
                                           max_talon=12) == default
    with pytest.raises(ValueError, match="'heuristic' has no action_values"):
        decision_regret.build_reference(tmp_path / "other.json", 1, 9171, 8, "heuristic", progress=False)
    (tmp_path / "unsettled.json").write_text(json.dumps({"format": decision_regret.FORMAT, "positions": []}))
    with pytest.raises(ValueError, match="lacks its settings or its list of positions"):
        decision_regret.load_reference(tmp_path / "unsettled.json")
    broken = dict(document, positions=[document["positions"][0], {"deal_seed": 1, "dealer": 0, "history": []}])
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    with pytest.raises(ValueError, match="position 1 lacks talon_size, values"):
        decision_regret.load_reference(tmp_path / "broken.json")


def test_the_reference_stores_its_searchers_values_asked_from_the_movers_seat(tmp_path, monkeypatch):
    """Each position's values are the reference search's ``action_values`` there, the search started from the
    mover's seat and seeded anew at every position."""
    asked = []

    class Searcher:
        def seed(self, value):
            asked.append(["seed", value])

        def start_deal(self, seat, rules):
            asked[-1].append(seat)

        def action_values(self, infoset, budget):
            asked[-1].append(infoset.player)
            return {action: action / 4 - 2 for action in infoset.legal_actions}

    real = decision_regret.make_agent  # the heuristic self-play that samples the positions stays as it is
    monkeypatch.setattr(decision_regret, "make_agent",
                        lambda spec, seed: Searcher() if spec == "scripted" else real(spec, seed=seed))
    document = decision_regret.build_reference(tmp_path / "r.json", 5, 9175, 8, "scripted", progress=False)
    assert len({seed for _, seed, _, _ in asked}) == len(asked) == 5
    for entry, (_, _, seat, player) in zip(document["positions"], asked):
        game = decision_regret.replay((entry["deal_seed"], entry["dealer"], entry["history"]))
        assert seat == player == game.current_player
        assert entry["values"] == {str(action): action / 4 - 2 for action in game.legal_actions()}


def test_a_reference_position_of_the_wrong_shape_is_refused_by_file_and_position(tmp_path, capsys):
    """A hand-edited or damaged reference gave a traceback (values not a dict, a value not a number) or an error that
    named neither the file nor the position (no values, an action id that is not a number, a history that does not
    replay); each is now refused naming both."""
    path = tmp_path / "reference.json"
    document = decision_regret.build_reference(path, 1, 9174, 8, TINY_REFERENCE, progress=False)
    good = document["positions"][0]
    legal = sorted(map(int, good["values"]))
    changes = [{"values": {}}, {"values": [1, 2]}, {"values": {"x": 1.0}}, {"values": {str(legal[0]): "a"}},
               {"values": {"40": 0.5}}, {"history": "abc"}, {"history": [99]}, {"history": [True]},
               {"deal_seed": "a"}, {"dealer": 2}, {"talon_size": good["talon_size"] + 2}]
    for change in changes:
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(dict(document, positions=[good, dict(good, **change)])))
        with pytest.raises(ValueError, match=f"regret reference {str(bad)!r}: position 1: "):
            decision_regret.load_reference(bad)
        assert decision_regret.main(["--reference", str(bad), "--positions", "2", "--seed", "9174",
                                     "--reference-spec", TINY_REFERENCE, "--no-progress"]) == 2
        error = capsys.readouterr().err
        assert error.startswith("error: regret reference") and "position 1: " in error, (change, error)
    assert decision_regret.load_reference(path) == document


class _Scripted:
    """Picks the ``k``-th action of a script at its ``k``-th decision; records seeds and seats; each decision takes
    ``duration`` seconds of ``clock`` and reports ``k + 10`` worlds."""

    def __init__(self, script, clock, duration):
        self.script, self.clock, self.duration = script, clock, duration
        self.seeds, self.seats, self.asked, self.last_worlds = [], [], [], None

    def seed(self, value):
        self.seeds.append(value)

    def start_deal(self, seat, rules):
        self.seats.append(seat)

    def act(self, infoset):
        choice = self.script[len(self.asked) % len(self.script)](infoset)
        self.asked.append((infoset.player, list(infoset.legal_actions), choice))
        self.clock.now += self.duration
        self.last_worlds = len(self.asked) + 10
        return choice


def _document(count=7, seed=9172):
    """A hand-made reference: real positions (two deals or more), values chosen here with one legal action left
    unvalued (as a pruned reference leaves it); talons 12, 10 and 8 (R7) give at most three a deal."""
    positions = []
    for deal_seed, dealer, history in decision_regret.sampled_positions(count, seed, 8, 12):
        game = decision_regret.replay((deal_seed, dealer, history))
        legal = sorted(game.legal_actions())
        values = {str(action): round(0.25 * rank - 0.4, 3) for rank, action in enumerate(legal[:-1])}
        positions.append({"deal_seed": deal_seed, "dealer": dealer, "history": history,
                          "talon_size": game.talon_size, "values": values})
    assert len({entry["deal_seed"] for entry in positions}) > 1
    return {"format": decision_regret.FORMAT, "settings": {}, "positions": positions}


def test_no_two_decisions_of_a_regret_run_share_an_agent_seed():
    """Below 1,000 positions the seeds are (seed + repeat) * 1000 + index, as every figure quoted so far was
    played; from 1,000 positions on the stride widens, where repeat r at index i + 1000 had repeat r + 1's seed at
    index i."""
    assert [decision_regret.agent_seed(7, repeat, index, 300) for repeat, index in ((0, 0), (1, 5), (2, 299))] == [
        7000, 8005, 9299]
    for positions in (999, 1000, 1001, 2500):
        seeds = [decision_regret.agent_seed(7, repeat, index, positions)
                 for repeat in range(3) for index in range(positions)]
        assert len(set(seeds)) == len(seeds), positions


def test_agents_regret_scores_each_choice_against_the_reference_values_by_hand(monkeypatch):
    """R16 values: regret is the best value minus the chosen action's (an unvalued action counts as the worst
    valued), averaged over the repeats of a position; agreement the share of best choices; the agents decide in
    turn at each position, each repeat seeded differently, from the mover's seat; time and worlds per decision are
    medians; the standard error is over deals (recomputed here from the regrets and the deals)."""
    document = _document()
    clock = FakeClock()
    lowest, unvalued = (lambda s: min(s.legal_actions)), (lambda s: max(s.legal_actions))
    best = lambda s: sorted(s.legal_actions)[-2]  # noqa: E731 (the values rise with the action's rank)
    agents = {"a": _Scripted([lowest, unvalued, best], clock, 0.002),
              "b": _Scripted([unvalued, lowest], clock, 0.005)}
    monkeypatch.setattr(decision_regret, "make_agent", lambda spec, seed: agents[spec])
    monkeypatch.setattr(decision_regret, "time", clock)
    repeats = 2
    results = decision_regret.agents_regret(document, ["a", "b"], seed=3, progress=False, repeats=repeats)
    for name, result in zip("ab", results):
        agent = agents[name]
        assert len(agent.asked) == repeats * len(document["positions"]) == len(agent.seeds)
        count = len(document["positions"])
        assert agent.seeds == [decision_regret.agent_seed(3, repeat, index, count)
                               for index in range(count) for repeat in range(repeats)]
        regrets, agreements = [], []
        for index, entry in enumerate(document["positions"]):
            game = decision_regret.replay((entry["deal_seed"], entry["dealer"], entry["history"]))
            values = {int(key): value for key, value in entry["values"].items()}
            asked = agent.asked[index * repeats:(index + 1) * repeats]
            assert all(player == game.current_player and legal == game.legal_actions() for player, legal, _ in asked)
            assert agent.seats[index * repeats:(index + 1) * repeats] == [game.current_player] * repeats
            assert len(set(agent.seeds[index * repeats:(index + 1) * repeats])) == repeats
            scores = [max(values.values()) - values.get(choice, min(values.values())) for _, _, choice in asked]
            regrets.append(np.mean(scores))
            agreements.append(np.mean([score == 0 for score in scores]))
        deals = [entry["deal_seed"] for entry in document["positions"]]
        talons = [entry["talon_size"] for entry in document["positions"]]
        assert result["agent"] == name and result["positions"] == len(regrets)
        assert result["regrets"] == pytest.approx(regrets) and result["position_deals"] == deals
        assert result["mean_regret"] == pytest.approx(np.mean(regrets))
        assert result["agreement"] == pytest.approx(np.mean(agreements))
        mean, se, count = _ratio_se(regrets, deals)
        assert (result["deals"], result["regret_se"]) == (count, pytest.approx(se))
        assert result["regret_by_talon"] == pytest.approx(
            {talon: np.mean([r for r, t in zip(regrets, talons) if t == talon]) for talon in sorted(set(talons))})
        assert result["median_ms"] == pytest.approx(1000 * agent.duration)
        assert result["median_worlds"] == np.median(np.arange(len(agent.asked)) + 11)
    assert len(set(agents["a"].seeds)) == len(agents["a"].seeds)  # every position and repeat its own seed
    assert 0 < results[0]["agreement"] < 1 and results[1]["mean_regret"] > results[0]["mean_regret"] > 0
    lone = decision_regret.summarised("x", [0.1, 0.3], [1.0, 0.0], [0.01, 0.02], [], [8, 8], [5, 5])
    assert math.isnan(lone["regret_se"]) and lone["deals"] == 1 and lone["median_worlds"] is None


def test_the_paired_difference_is_a_ratio_over_deals_recomputed_by_hand():
    rng = np.random.default_rng(11)
    deals = [1, 1, 1, 2, 3, 3, 4, 5, 5, 5, 5, 6]
    first, second = rng.uniform(0, 1, len(deals)).tolist(), rng.uniform(0, 1, len(deals)).tolist()

    def row(regrets):
        return decision_regret.summarised("r", regrets, [1.0] * len(deals), [0.01] * len(deals), [], [8] * len(deals),
                                          deals)

    interval = decision_regret.paired_difference(row(first), row(second))
    mean, se, count = _ratio_se([a - b for a, b in zip(first, second)], deals)
    assert (interval.mean, interval.n) == (pytest.approx(mean), count)
    assert interval.half_width == pytest.approx(stats.t.ppf(0.975, count - 1) * se)
    assert interval.mean == pytest.approx(np.mean(first) - np.mean(second))


def test_a_label_is_scored_by_its_best_action_with_its_worlds_and_hidden_cards(monkeypatch):
    """The label's best valued action is scored like an agent's choice (an unvalued one as the worst valued);
    ``worlds`` and ``hidden`` reach the labeller, each position its own seed."""
    import sixtysix_env.core.labels as labels_module
    import sixtysix_env.core.search as search_module

    document = _document()
    calls, seeds = [], []
    plans = [lambda legal: min(legal), lambda legal: max(legal), lambda legal: sorted(legal)[1]]

    def fake_value_actions(state, mover, params, worlds, resample_hands, entries, nodes, first_world, values):
        entry = document["positions"][len(calls)]
        game = decision_regret.replay((entry["deal_seed"], entry["dealer"], entry["history"]))
        legal = game.legal_actions()
        choice = plans[len(calls) % len(plans)](legal)
        values[:] = np.nan
        values[legal] = -1.0
        values[choice] = 1.0
        calls.append((mover, worlds, resample_hands, choice))

    clock = FakeClock()

    def timed_value_actions(*arguments):
        fake_value_actions(*arguments)
        clock.now += 0.004 * len(calls)  # the n-th label takes 4 n ms

    monkeypatch.setattr(labels_module, "value_actions", timed_value_actions)
    monkeypatch.setattr(decision_regret, "time", clock)
    monkeypatch.setattr(search_module, "seed_kernels", seeds.append)
    for worlds, hidden in ((5, "view"), (3, "true_deal")):
        calls.clear()
        seeds.clear()
        result = decision_regret.labels_regret(document, worlds, hidden, seed=2)
        regrets, agreements = [], []
        for entry, (mover, used_worlds, view, choice) in zip(document["positions"], calls):
            values = {int(key): value for key, value in entry["values"].items()}
            assert (used_worlds, view) == (worlds, hidden == "view")
            regrets.append(max(values.values()) - values.get(choice, min(values.values())))
            agreements.append(regrets[-1] == 0)
        assert len(calls) == len(document["positions"]) == len(set(seeds))
        assert result["agent"] == f"labels:worlds={worlds},hidden={hidden}"
        assert result["regrets"] == pytest.approx(regrets) and result["agreement"] == pytest.approx(np.mean(agreements))
        assert result["mean_regret"] == pytest.approx(np.mean(regrets)) and result["mean_regret"] > 0
        talons = [entry["talon_size"] for entry in document["positions"]]
        assert result["regret_by_talon"] == pytest.approx(
            {talon: np.mean([r for r, t in zip(regrets, talons) if t == talon]) for talon in sorted(set(talons))})
        assert result["median_ms"] == pytest.approx(4 * np.median(np.arange(1, len(calls) + 1)))
        assert result["median_worlds"] is None


@pytest.mark.parametrize("text, parsed", [("1:view", (1, "view")), ("12:true_deal", (12, "true_deal")),
                                          ("0:view", None), ("x:view", None), ("4:", None), ("-2:view", None)])
def test_labels_argument_is_parsed_or_refused_by_name(text, parsed):
    if parsed is None:
        with pytest.raises(ValueError, match="--labels must be WORLDS:HIDDEN"):
            decision_regret.parse_labels(text)
    else:
        assert decision_regret.parse_labels(text) == parsed


@pytest.mark.parametrize("arguments, named", [("--repeats 0", "--repeats"), ("--min-talon -1", "--min-talon"),
                                              ("--max-talon 14", "--max-talon"), ("--positions -1", "--positions")])
def test_regret_command_refuses_bad_counts_by_name(arguments, named, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        decision_regret.main(["--reference", str(tmp_path / "r.json"), *arguments.split()])
    assert exit_info.value.code == 2 and named in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_regret_command_writes_each_agent_and_its_paired_difference_from_the_first(tmp_path, capsys):
    """The table's last column is each later agent's regret minus the first agent's, a t interval over deals
    recomputed here from the written rows (four positions of talons 12 to 8, R7: two deals or more)."""
    reference, out = tmp_path / "r.json", tmp_path / "figures.json"
    assert decision_regret.main(["--reference", str(reference), "--positions", "4", "--seed", "9173",
                                 "--min-talon", "8", "--reference-spec", TINY_REFERENCE, "--agent", "random",
                                 "--agent", "heuristic", "--repeats", "2", "--json", str(out), "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    written = json.loads(out.read_text())
    assert written["reference"] == str(reference)
    first, second = written["results"]
    assert (first["agent"], second["agent"]) == ("random", "heuristic") and first["positions"] == 4
    assert lines[0].startswith(f"reference: {TINY_REFERENCE} at 4 positions (seed 9173, talon 8-12)")
    differences = [a - b for a, b in zip(second["regrets"], first["regrets"])]
    mean, se, count = _ratio_se(differences, second["position_deals"])
    rows = [line for line in lines if line.startswith("| `")]
    assert rows[0].endswith("|  |") and len(rows) == 2
    assert count > 1 and f"{mean:+.4f} ± {stats.t.ppf(0.975, count - 1) * se:.4f} |" in rows[1]
    for result in (first, second):
        assert result["regret_se"] == pytest.approx(_ratio_se(result["regrets"], result["position_deals"])[1])
        assert f"| `{result['agent']}` | {result['mean_regret']:.4f} | {result['regret_se']:.4f} |" in lines[3 + (
            result is second)]


# ---------------------------------------------------------------------------------------------- closing_premium


def test_the_searcher_deals_and_leads_equally_often_seat_by_seat():
    """Deal d: dealer d % 2, the searcher in seat d % 2 when d // 2 is even, else in the other seat."""
    from bench.closing_premium import searcher_seat

    assert [searcher_seat(deal) for deal in range(8)] == [0, 1, 1, 0, 0, 1, 1, 0]


class _Policy:
    """A stateless scripted player: the searcher closes (R10) at leads with at most ``close_at`` talon cards, else
    plays its lowest action; the opponent plays its highest card."""

    def __init__(self, role, close_at=6):
        self.role, self.close_at, self.seats = role, close_at, []

    def start_deal(self, seat, rules):
        self.seats.append(seat)

    def act(self, infoset):
        from sixtysix_env.actions import CLOSE

        legal = list(infoset.legal_actions)
        if self.role == "searcher":
            return CLOSE if CLOSE in legal and infoset.talon_size <= self.close_at else min(legal)
        cards = [action for action in legal if action < 24]
        return max(cards) if cards else min(legal)


class _Twin(_Policy):
    """The twin search: scripted action values, and per-world values of closing that differ from call to call."""

    def __init__(self):
        super().__init__("twin")
        self.calls = 0

    def action_values(self, infoset, budget):
        self.calls += 1
        return {action: (action % 7) / 3 - 1 for action in infoset.legal_actions}

    @property
    def world_values(self):
        from sixtysix_env.actions import CLOSE, NUM_ACTIONS

        values = np.zeros((5, NUM_ACTIONS))
        values[:, CLOSE] = np.array([-1.0, 0.5, 2.0, 1.0, 0.25 * self.calls]) * self.calls / 2
        return values


def test_r10_premium_rows_are_every_legal_closing_lead_of_the_searcher_replayed_by_hand(monkeypatch):
    """With scripted players the rows of a deal are recomputed here: one per lead of the searcher where closing is
    legal with more than two talon cards (R10), the closing's world mean and spread, the best other action, the
    closed deal solved with every card seen and played on by the same players (R16), and whether the searcher
    closed there."""
    from agents.solver import solve_value
    from bench import closing_premium
    from sixtysix_env.actions import CLOSE

    made = {}

    def factory(spec, seed):
        role = "twin" if "prune=none" in spec else spec
        made.setdefault((role, seed), []).append(_Twin() if role == "twin" else _Policy(role))
        return made[(role, seed)][-1]

    monkeypatch.setattr(closing_premium, "make_agent", factory)
    seed, deals = 300, range(2, 8)
    rows = closing_premium.premium_rows(deals, seed, "searcher", "opponent", progress=False)
    expected = []
    for deal in deals:
        seat = closing_premium.searcher_seat(deal)
        players = {seat: _Policy("searcher"), 1 - seat: _Policy("opponent")}
        game = Game.deal(Rules.preset("standard"), seed=seed + deal, dealer=deal % 2)
        calls = 0
        while not game.is_over:
            legal = game.legal_actions()
            action = players[game.current_player].act(InformationSet(game, game.current_player))
            if game.current_player == seat and CLOSE in legal and len(legal) > 1 and game.talon_size > 2:
                calls += 1
                worlds = np.array([-1.0, 0.5, 2.0, 1.0, 0.25 * calls]) * calls / 2
                fork = game.clone()
                fork.apply(CLOSE)
                solved = fork.returns()[seat] if fork.is_over else solve_value(fork)
                while not fork.is_over:
                    fork.apply(players[fork.current_player].act(InformationSet(fork, fork.current_player)))
                expected.append({"deal": deal, "history": list(game.history), "talon": game.talon_size,
                                 "close_mean": pytest.approx(worlds.mean()), "close_std": pytest.approx(worlds.std()),
                                 "best_other": max((a % 7) / 3 - 1 for a in legal if a != CLOSE),
                                 "solved_true": solved, "honest_true": fork.returns()[seat], "worlds": 5,
                                 "closed": action == CLOSE})
            game.apply(action)
        assert [(role, agent.seats) for (role, s), agents in made.items() for agent in agents if s // 4 == deal] == [
            ("searcher", [seat]), ("twin", [seat]), ("opponent", [1 - seat])]
    assert rows == expected
    assert {row["closed"] for row in rows} == {True, False} and len({row["deal"] for row in rows}) > 3


def _premium_row(deal, premium, spread, mean=0.0, best_other=0.0, closed=True, solved=1):
    return {"deal": deal, "close_mean": mean, "best_other": best_other, "close_std": spread, "solved_true": solved,
            "honest_true": solved - premium, "closed": closed}


def _cluster_slope(spread, premium, deals):
    """Least squares of the premium on the spread with the CR1 cluster-robust variance (clusters: the deals) and a t
    quantile on clusters - 1 degrees of freedom, written out from the textbook definition."""
    spread, premium, deals = np.asarray(spread, float), np.asarray(premium, float), np.asarray(deals)
    design = np.column_stack([np.ones_like(spread), spread])
    beta, *_ = np.linalg.lstsq(design, premium, rcond=None)
    residual = premium - design @ beta
    inverse = np.linalg.inv(design.T @ design)
    keys = sorted(set(deals.tolist()))
    scores = [design[deals == key].T @ residual[deals == key] for key in keys]
    meat = sum(np.outer(score, score) for score in scores)
    n, g = len(premium), len(keys)
    variance = g / (g - 1) * (n - 1) / (n - 2) * inverse @ meat @ inverse
    return beta[0], beta[1], stats.t.ppf(0.975, g - 1) * math.sqrt(variance[1, 1])


def test_premium_and_slope_intervals_over_deals_recomputed_by_hand():
    """The premium's mean is the ratio of the deals' sums over their leads with a delta-method t interval; the
    slope's the cluster sandwich (CR1); both over deals with unequal numbers of leads, recomputed here."""
    from bench import closing_premium

    rng = np.random.default_rng(17)
    deals = [0, 0, 0, 1, 2, 2, 3, 4, 4, 4, 5, 6, 6, 7]
    rows = [_premium_row(deal, int(rng.integers(-3, 5)), float(rng.uniform(0, 2)), closed=bool(index % 3))
            for index, deal in enumerate(deals)]
    for name, chosen in (("every_lead", rows), ("closed", [row for row in rows if row["closed"]])):
        figures = closing_premium.summary(rows)[name]
        premium = [row["solved_true"] - row["honest_true"] for row in chosen]
        spread, where = [row["close_std"] for row in chosen], [row["deal"] for row in chosen]
        mean, se, count = _ratio_se(premium, where)
        half = stats.t.ppf(0.975, count - 1) * se
        assert (figures["leads"], figures["deals"]) == (len(chosen), count)
        assert (figures["premium"], figures["premium_low"], figures["premium_high"]) == pytest.approx(
            (mean, mean - half, mean + half))
        intercept, slope, slope_half = _cluster_slope(spread, premium, where)
        assert (figures["intercept"], figures["slope"], figures["slope_low"], figures["slope_high"]) == pytest.approx(
            (intercept, slope, slope - slope_half, slope + slope_half))
        assert (figures["mean_spread"], figures["max_spread"]) == pytest.approx((np.mean(spread), np.max(spread)))


def test_premium_figures_are_left_out_or_null_where_undefined():
    """Fewer than three leads, or leads of one deal: counts only; every spread the same: no slope (None, not NaN);
    a premium that never varies: a mean without a spread of its interval."""
    from bench import closing_premium

    figures = closing_premium._premium_figures
    assert figures([_premium_row(0, 1, 0.2), _premium_row(1, 2, 0.4)]) == {"leads": 2, "deals": 2}
    assert figures([_premium_row(0, 1, 0.2), _premium_row(0, 2, 0.4), _premium_row(0, 0, 0.3)]) == {
        "leads": 3, "deals": 1}
    two = figures([_premium_row(0, 1, 0.2), _premium_row(0, 3, 0.4), _premium_row(1, 0, 0.3), _premium_row(1, 2, 0.9)])
    assert two["deals"] == 2 and two["premium"] == pytest.approx(1.5)  # two deals and three leads are enough
    assert two["premium_high"] - two["premium"] == pytest.approx(stats.t.ppf(0.975, 1) * _ratio_se([1, 3, 0, 2],
                                                                                                  [0, 0, 1, 1])[1])
    flat = figures([_premium_row(deal, deal, 0.5) for deal in range(4)])
    assert flat["slope"] is None and flat["slope_low"] is None and flat["intercept"] is None
    assert flat["premium"] == pytest.approx(1.5) and flat["mean_spread"] == pytest.approx(0.5)
    same = figures([_premium_row(deal, 2, 0.1 * deal) for deal in range(4)])
    assert (same["premium"], same["premium_low"], same["premium_high"]) == pytest.approx((2, 2, 2))
    assert same["slope"] == pytest.approx(0) and same["max_spread"] == pytest.approx(0.3)


def test_near_leads_bins_and_world_calibration_follow_their_definitions():
    """'near': closing strictly within ``within`` of the best other action; the bins hold spreads from their low
    edge (included) to their high edge (excluded); the worlds' calibration is the true deal's solve minus the
    worlds' mean over the near leads, None with near leads of one deal."""
    from bench import closing_premium

    rows = [_premium_row(0, 1, 0.0, mean=0.5, best_other=0.0), _premium_row(0, 2, 0.01, mean=-0.2, solved=2),
            _premium_row(1, -1, 0.5, mean=1.0, best_other=0.0), _premium_row(2, 3, 0.5, mean=0.0, best_other=0.9),
            _premium_row(3, 0, 1.0, mean=2.0, best_other=1.25, solved=-2), _premium_row(4, 2, 1.5, mean=0.1),
            _premium_row(5, 1, 9.0, mean=0.0, best_other=-0.5)]
    result = closing_premium.summary(rows, within=1.0)
    near = [row for row in rows if abs(row["close_mean"] - row["best_other"]) < 1.0]
    assert len(near) == 6 and result["near"]["leads"] == 6 and result["within"] == 1.0
    edges = [(0.0, 0.01), (0.01, 0.5), (0.5, 1.0), (1.0, 1.5), (1.5, None)]
    assert [(bin_["low"], bin_["high"]) for bin_ in result["near_by_spread"]] == edges
    assert [bin_["leads"] for bin_ in result["near_by_spread"]] == [1, 1, 1, 1, 2]
    assert result["near_by_spread"][4]["premium"] == pytest.approx(1.5)
    assert result["near_by_spread"][2]["premium"] == pytest.approx(3)
    calibration = [row["solved_true"] - row["close_mean"] for row in near]
    mean, se, count = _ratio_se(calibration, [row["deal"] for row in near])
    assert result["world_calibration"]["mean"] == pytest.approx(mean)
    assert result["world_calibration"]["high"] == pytest.approx(mean + stats.t.ppf(0.975, count - 1) * se)
    assert closing_premium.summary(rows[:2])["world_calibration"] is None
    assert closing_premium.summary(rows) == result  # --within's default: one game point
    assert closing_premium.summary(rows, within=2.5)["near"]["leads"] == 7


# ---------------------------------------------------------------------------------------------- oracle_bounds


def _decisions_by_kind(deals=range(12), seed=7):
    """Decisions (games cloned at them) of ``heuristic`` self-play deals, by the kind read here from the game:
    after a closing (R10) whose, else talon used up (R8), else whether closing is legal (R10), else phase 1 (R7);
    decisions with one legal action apart ("forced")."""
    from agents import make_agent
    from bench.quick_strength import derived_seed
    from sixtysix_env.actions import CLOSE

    found: dict[str, list[Game]] = {}
    for index in deals:
        game = Game.deal(Rules.preset("standard"), seed=derived_seed("deck", seed, index), dealer=index % 2)
        players = [make_agent("heuristic", seed=index * 2 + seat) for seat in (0, 1)]
        while not game.is_over:
            mover = game.current_player
            if game.closed_by is not None:
                kind = "closed_mine" if game.closed_by == mover else "closed_theirs"
            elif game.talon_size == 0:
                kind = "exhausted"
            else:
                kind = "close_option" if CLOSE in game.legal_actions() else "phase1"
            found.setdefault(kind if len(game.legal_actions()) > 1 else "forced", []).append(game.clone())
            game.apply(players[mover].act(InformationSet(game, mover)))
    return found


def test_r10_decision_kinds_are_read_from_the_talon_and_the_closer():
    from bench.oracle_bounds import _with_closed_kinds, decision_kind

    found = _decisions_by_kind()
    assert set(found) == {"phase1", "close_option", "closed_mine", "closed_theirs", "exhausted", "forced"}
    for kind, games in found.items():
        if kind == "forced":
            continue
        assert {decision_kind(game) for game in games} == {kind}
    assert _with_closed_kinds({"closed", "phase1"}) == {"closed", "phase1", "closed_mine", "closed_theirs"}
    assert _with_closed_kinds({"closed_mine"}) == {"closed_mine"}


def test_the_revealed_information_set_adds_the_opponents_hand_and_nothing_else():
    """R7: the opponent's hand is handed over, the talon's cards stay unseen."""
    from bench.oracle_bounds import hand_revealed

    game = _decisions_by_kind(range(2))["phase1"][0]
    player = game.current_player
    honest, revealed = InformationSet(game, player), hand_revealed(game, player)
    hand = game.hands[1 - player]
    assert revealed.opponent_known == hand and revealed.unseen & hand == 0
    assert revealed.unseen | hand == honest.unseen | honest.opponent_known and revealed.unseen != 0
    assert (revealed.hand, revealed.legal_actions, revealed.talon_size) == (honest.hand, honest.legal_actions,
                                                                           honest.talon_size)
    # The worlds drawn from it, by determinize or by the compiled searches from its template
    # (sixtysix_env.core.search.information_template), give the opponent that hand.
    import random

    assert revealed.determinize(random.Random(3)).hands[1 - player] == hand
    assert revealed._template.hands[1 - player] == hand


class _Asked:
    """An agent that answers ``choice(legal actions)`` and counts the questions."""

    def __init__(self, choice):
        self.choice, self.questions = choice, 0

    def act(self, infoset):
        self.questions += 1
        return self.choice(list(infoset.legal_actions))


def test_the_oracle_takes_the_solvers_best_action_only_at_its_kinds(monkeypatch):
    """The solver's best action (the lowest of equal ones) at the kinds given (``closed`` both kinds after a
    closing, R10); the base agent's elsewhere and where one action is legal; the base agent is asked every time;
    ``close_only``: close exactly when closing is worth at least every other action, else the base's card, or the
    solver's best card where the base would close; the clairvoyant solver plays the best action everywhere."""
    from bench import oracle_bounds
    from sixtysix_env.actions import CLOSE

    found = _decisions_by_kind()
    scripted: dict[int, int] = {}
    monkeypatch.setattr(oracle_bounds, "solver_values", lambda game, table: dict(scripted))
    for kind in ("phase1", "close_option", "closed_mine", "closed_theirs"):
        game = found[kind][0]
        legal = sorted(game.legal_actions())
        scripted.clear()
        scripted.update({action: 0 for action in legal})
        scripted.update({legal[-1]: 2, legal[1]: 2})  # a tie: the lower action wins
        others = {"phase1": "close_option", "close_option": "phase1,closed", "closed_mine": "closed_theirs,phase1",
                  "closed_theirs": "closed_mine,close_option"}[kind]
        for kinds, decides in ((kind, True), ("closed", kind.startswith("closed")), (others, False)):
            agent = _Asked(min)
            chosen = oracle_bounds.informed_action("oracle", kinds, game, agent, None)
            assert agent.questions == 1 and chosen == (legal[1] if decides else legal[0]), (kind, kinds)
        assert oracle_bounds.informed_action("honest", "", game, _Asked(max), None) == legal[-1]
        assert oracle_bounds.clairvoyant_action(game, None) == legal[1]
        assert oracle_bounds.informed_action("clairvoyant", "", game, None, None) == legal[1]  # no agent at all
    game = found["close_option"][0]
    cards = sorted(action for action in game.legal_actions() if action != CLOSE)
    for close_value, base, expected in ((3, min, CLOSE), (2, min, CLOSE), (1, min, cards[0]),
                                        (1, lambda legal: CLOSE, cards[-1]), (3, lambda legal: CLOSE, CLOSE)):
        scripted.clear()
        scripted.update({action: 0 for action in cards})
        scripted.update({cards[-1]: 2, CLOSE: close_value})
        agent = _Asked(base)
        assert oracle_bounds.informed_action("oracle", "close_option,close_only", game, agent, None) == expected
        assert agent.questions == 1
    scripted.clear()
    scripted.update({action: 0 for action in cards})
    scripted.update({cards[0]: 2, CLOSE: 1})  # the base would close: the solver's best card, not the highest one
    assert oracle_bounds.informed_action("oracle", "close_option,close_only", game, _Asked(lambda legal: CLOSE),
                                         None) == cards[0]
    for forced in found["forced"][:5]:  # one legal action: the solver is not asked
        scripted.clear()
        assert oracle_bounds.clairvoyant_action(forced, None) == forced.legal_actions()[0]
        assert oracle_bounds.informed_action("oracle", "phase1,close_option,closed", forced, _Asked(min), None) == \
            forced.legal_actions()[0]


def test_a_deal_pair_scores_the_mean_of_both_seats_for_the_informed_side_and_its_honest_peer():
    """Each deal is played twice with the seats swapped; the pair's figure is the informed side's mean game points
    (R16) over the two, and with ``paired`` the honest peer's over the same two deals."""
    from bench.oracle_bounds import play_game, play_pairs
    from sixtysix_env.core.solver import Table

    table = Table(16)
    margins = play_pairs(("oracle", "phase1", "heuristic", "heuristic", 11, [0, 1], True, None))
    for index, (informed, honest) in zip([0, 1], margins):
        games = [play_game("oracle", "phase1", "heuristic", "heuristic", 11, index, seat, table) for seat in (0, 1)]
        peers = [play_game("honest", "", "heuristic", "heuristic", 11, index, seat, table) for seat in (0, 1)]
        assert informed == (games[0][0] + games[1][0]) / 2 and honest == (peers[0][0] + peers[1][0]) / 2
        for points, actions, mine in games:
            replayed = Game.deal(Rules.preset("standard"), seed=derived_seed_deck(11, index), dealer=index % 2)
            for action, informed_move in zip(actions, mine):
                assert informed_move == (replayed.current_player == games.index((points, actions, mine)))
                replayed.apply(action)
            assert replayed.is_over and replayed.returns()[games.index((points, actions, mine))] == points
    assert [honest for _, honest in play_pairs(("sees-hand", "heuristic", "", "heuristic", 11, [0], False,
                                                None))] == [None]


def test_every_agent_of_a_game_starts_the_deal_in_its_seat_and_the_informed_side_plays_its_seat(monkeypatch):
    """The opponent, the informed agent and (``close_only``) the agent asked on the revealed hand each start the
    deal in their own seat, each seeded on its own; the informed side makes exactly the decisions of its seat."""
    from bench import oracle_bounds

    made = []

    class Recording:
        def __init__(self, spec, seed):
            self.spec, self.seed, self.seats = spec, seed, []
            made.append(self)

        def start_deal(self, seat, rules):
            self.seats.append(seat)

        def act(self, infoset):
            return min(infoset.legal_actions)

    monkeypatch.setattr(oracle_bounds, "make_agent", Recording)
    for seat in (0, 1):
        made.clear()
        points, actions, mine = oracle_bounds.play_game("sees-hand", "me", "", "them", 4, 2, seat, None,
                                                        frozenset({"close_only"}))
        assert [(agent.spec, agent.seats) for agent in made] == [("them", [1 - seat]), ("me", [seat]),
                                                                 ("me", [seat])]
        assert len({agent.seed for agent in made}) == 3
        game = Game.deal(Rules.preset("standard"), seed=derived_seed_deck(4, 2), dealer=0)
        for action, informed_move in zip(actions, mine):
            assert informed_move == (game.current_player == seat)
            assert action == min(game.legal_actions())
            game.apply(action)
        assert game.is_over and game.returns()[seat] == points


def derived_seed_deck(seed, index):
    from bench.quick_strength import derived_seed

    return derived_seed("deck", seed, index)


def test_the_reported_figure_is_the_mean_with_a_t_interval_over_deal_pairs():
    from bench.oracle_bounds import _figure

    margins = [1.5, -0.5, 2.0, 0.0, 3.0, -1.0]
    text = _figure("oracle closed", "heuristic", margins, 5)
    mean, low, high = t_interval(margins)
    assert text == (f"oracle closed vs heuristic: {mean:+.3f} game points per deal, 95% CI "
                    f"[{low:+.3f}, {high:+.3f}] over 6 deal pairs (seed 5)")


@pytest.mark.parametrize("arguments, named", [
    ("oracle phase1 --deals 1", "--deals"), ("oracle phase1 --workers 0", "--workers"), ("sees-hand", "sees-hand"),
    ("oracle", "oracle needs kinds"), ("oracle phase1,bogus", "'phase1,bogus'"),
    ("clairvoyant --sees-at phase1", "--sees-at"), ("sees-hand heuristic --sees-at phase1,bogus", "--sees-at"),
    # close_only alone left every decision to the base: a report of the base agent under the oracle's name
    ("oracle close_only", "close_only goes with close_option"), ("oracle phase1,close_only", "'phase1,close_only'"),
    # with both, close_only took every close_option lead and close_option was silently ignored
    ("sees-hand heuristic --sees-at close_option,close_only", "close_only (the hand decides only whether to close")])
def test_oracle_bounds_refuses_bad_arguments_by_name_before_playing(arguments, named, capsys):
    from bench.oracle_bounds import main

    with pytest.raises(SystemExit) as exit_info:
        main(arguments.split() + ["--deals", "2"] * ("--deals" not in arguments))
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and "error:" in error and named in error, error


def test_premium_table_prints_the_intervals_recomputed_by_hand(tmp_path, capsys):
    """``--from``: the table's rows give each group's leads, premium and slope with their 95 % intervals over deals
    and the mean spread; a slope without an interval reads n/a, a group too small for figures only its count."""
    from bench import closing_premium

    rng = np.random.default_rng(23)
    deals = [0, 0, 1, 2, 2, 2, 3, 4, 5, 5]
    rows = [_premium_row(deal, int(rng.integers(-3, 5)), float(rng.uniform(0, 2)), mean=float(rng.uniform(-2, 2)),
                         closed=index in (2, 7)) for index, deal in enumerate(deals)]
    rows[-1]["close_std"] = rows[-2]["close_std"]
    source = tmp_path / "rows.json"
    source.write_text(json.dumps({"deals": 6, "seed": 1, "first": 0, "agent": "a", "opponent": "b", "rows": rows}))
    assert closing_premium.main(["--from", str(source), "--within", "1.5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    premium = [row["solved_true"] - row["honest_true"] for row in rows]
    mean, se, count = _ratio_se(premium, deals)
    half = stats.t.ppf(0.975, count - 1) * se
    intercept, slope, slope_half = _cluster_slope([row["close_std"] for row in rows], premium, deals)
    assert lines[0] == "10 leads where closing was legal in 6 deals (seed 1)"
    assert f"| every lead | 10 | {mean:+.3f} [{mean - half:+.3f}, {mean + half:+.3f}] | {slope:+.3f} " \
           f"[{slope - slope_half:+.3f}, {slope + slope_half:+.3f}] | " \
           f"{np.mean([row['close_std'] for row in rows]):.2f} |" in lines
    assert "| the agent closed | 2 | | | |" in lines
    near = [line for line in lines if line.startswith("| closing within 1.5 of the best other action |")]
    assert len(near) == 1
    flat = tmp_path / "flat.json"  # every spread the same: no slope
    flat.write_text(json.dumps({"deals": 3, "seed": 1, "first": 0, "agent": "a", "opponent": "b",
                                "rows": [_premium_row(deal, deal, 0.5) for deal in range(3)]}))
    assert closing_premium.main(["--from", str(flat)]) == 0
    _mean, low, high = t_interval([0, 1, 2])
    assert f"| every lead | 3 | +1.000 [{low:+.3f}, {high:+.3f}] | n/a [n/a, n/a] | 0.50 |" in capsys.readouterr().out


@pytest.mark.parametrize("module, arguments", [("closing_premium", "--within 0"), ("oracle_bounds", "oracle bogus")])
def test_the_tools_run_as_modules_and_exit_with_mains_code(module, arguments, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([sys.executable, "-m", f"bench.{module}", *arguments.split()], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 2 and "error:" in done.stderr and "Traceback" not in done.stderr


# --- main() of decision_regret, closing_premium, oracle_bounds (second review)

def _regret_result(agent, regrets, deals, se, worlds):
    return {"agent": agent, "mean_regret": float(np.mean(regrets)), "regret_se": se, "agreement": 0.5,
            "median_ms": 1.25, "median_worlds": worlds, "regrets": regrets, "position_deals": deals}


def test_regret_command_hands_its_options_to_the_reference_agents_and_labels(tmp_path, monkeypatch, capsys):
    """main passes every option to the work it starts (positions 1, --min-talon 0 and --max-talon 12 are accepted),
    lists the agents then the labels, prints a label's median worlds and writes a NaN SE as null."""
    calls = {}
    document = {"positions": [None] * 3}
    first = _regret_result("random", [1.0, 2.0, 0.0], [0, 1, 1], 0.5, None)
    label = _regret_result("label 4:view", [0.0, 1.0, 0.5], [0, 1, 1], math.nan, 16.0)

    def build(*args, **kwargs):
        calls["build"] = (args, kwargs)
        return document

    def agents(*args, **kwargs):
        calls["agents"] = (args, kwargs)
        return [first]

    def labels(*args):
        calls.setdefault("labels", []).append(args)
        return label

    monkeypatch.setattr(decision_regret, "build_reference", build)
    monkeypatch.setattr(decision_regret, "agents_regret", agents)
    monkeypatch.setattr(decision_regret, "labels_regret", labels)
    reference, out = tmp_path / "r.json", tmp_path / "f.json"
    assert decision_regret.main(["--reference", str(reference), "--positions", "1", "--seed", "5", "--min-talon", "0",
                                 "--max-talon", "12", "--agent", "random", "--agent-seed", "7", "--labels", "4:view",
                                 "--json", str(out)]) == 0
    assert calls["build"] == ((reference, 1, 5, 0, decision_regret.REFERENCE_SPEC),
                              {"progress": True, "max_talon": 12})
    assert calls["agents"] == ((document, ["random"], 7), {"progress": True, "repeats": 1})
    assert calls["labels"] == [(document, 4, "view", 7)]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"reference: {decision_regret.REFERENCE_SPEC} at 3 positions (seed 5, talon 0-12)"
    assert lines[3] == "| `random` | 1.0000 | 0.5000 | 0.500 | 1.2 | — |  |"
    assert lines[4].startswith("| `label 4:view` | 0.5000 | nan | 0.500 | 1.2 | 16 | ") and len(lines) == 5
    written = json.loads(out.read_text())
    assert written["reference"] == str(reference) and written["results"][1]["regret_se"] is None
    assert written["results"][0]["regret_se"] == 0.5
    monkeypatch.setattr(decision_regret, "labels_regret", lambda *args: pytest.fail("no labels asked"))
    assert decision_regret.main(["--reference", str(reference), "--agent", "random", "--no-progress",
                                 "--repeats", "3"]) == 0
    assert calls["build"][1]["progress"] is False and calls["agents"][1] == {"progress": False, "repeats": 3}
    assert not list(tmp_path.glob("*.tmp*")) and out.exists()


def test_regret_command_reports_a_value_error_of_its_work_as_an_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(decision_regret, "build_reference", lambda *a, **k: (_ for _ in ()).throw(ValueError("bad")))
    assert decision_regret.main(["--reference", str(tmp_path / "r.json"), "--no-progress"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "error: bad\n" and captured.out == ""


def test_premium_command_hands_its_options_to_the_deals_and_writes_what_it_played(tmp_path, monkeypatch, capsys):
    """main plays deals first .. first + deals - 1 with the seed, agents, workers and progress asked, summarises
    with --within, draws and writes the rows it played (one deal, --first 0 and one worker are accepted)."""
    from bench import closing_premium

    rows = [_premium_row(0, 1, 0.5, mean=0.0, best_other=0.4), _premium_row(1, 2, 0.5, mean=0.0, best_other=0.6),
            _premium_row(1, 3, 1.5, mean=1.0, best_other=0.0, closed=False)]
    calls = []
    monkeypatch.setattr(closing_premium, "premium_rows", lambda *args, **kwargs: calls.append((args, kwargs)) or rows)
    plots = []
    monkeypatch.setattr(closing_premium, "plot_premium", lambda result, path: plots.append((result, path)))
    out, plot = tmp_path / "out.json", tmp_path / "p.png"
    assert closing_premium.main(["--deals", "3", "--seed", "40", "--first", "5", "--opponent", "random",
                                 "--workers", "2", "--within", "0.5", "--out", str(out), "--plot", str(plot)]) == 0
    assert calls == [((range(5, 8), 40, closing_premium.CLOCK_FREE_EXPERT, "random", 2), {"progress": True})]
    written = json.loads(out.read_text())
    assert {key: written[key] for key in ("deals", "seed", "first", "agent", "opponent")} == {
        "deals": 3, "seed": 40, "first": 5, "agent": closing_premium.CLOCK_FREE_EXPERT, "opponent": "random"}
    assert written["rows"] == rows and written["summary"]["within"] == 0.5
    assert written["summary"]["near"]["leads"] == 1 and written["summary"]["closed"]["leads"] == 2  # |0 - 0.4| < 0.5
    assert len(plots) == 1 and plots[0][1] == str(plot) and plots[0][0]["near"]["leads"] == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "3 leads where closing was legal in 3 deals (seed 40)"
    assert lines[-2].startswith("| closing within 0.5 of the best other action | 1 |")
    assert lines[-1].startswith("| the agent closed | 2 |")
    calls.clear()
    assert closing_premium.main(["--deals", "1", "--first", "0", "--no-progress"]) == 0
    assert calls == [((range(0, 1), 200, closing_premium.CLOCK_FREE_EXPERT, "heuristic", 1), {"progress": False})]
    assert len(plots) == 1


def _oracle_main(monkeypatch, arguments):
    from bench import oracle_bounds

    tasks = []

    def pairs(task):
        tasks.append(task)
        index, paired = task[5][0], task[6]
        return [(float(index % 3) - 0.5, index * 0.25 if paired else None)]

    SerialPool.made = []
    monkeypatch.setattr(oracle_bounds, "Pool", SerialPool)
    monkeypatch.setattr(oracle_bounds, "play_pairs", pairs)
    assert oracle_bounds.main(arguments) == 0
    return tasks


def _oracle_figure(label, opponent, margins, seed):
    mean, low, high = t_interval(margins)
    return (f"{label} vs {opponent}: {mean:+.3f} game points per deal, 95% CI [{low:+.3f}, {high:+.3f}] over "
            f"{len(margins)} deal pairs (seed {seed})")


def test_oracle_command_plays_one_task_per_deal_pair_and_prints_the_paired_difference(monkeypatch, capsys):
    kinds = "closed_mine,close_option"
    tasks = _oracle_main(monkeypatch, ["sees-hand", "heuristic", "--sees-at", kinds, "--paired", "--deals", "4",
                                       "--seed", "11", "--workers", "3", "--opponent", "random"])
    assert tasks == [("sees-hand", "heuristic", "heuristic", "random", 11, [index], True,
                      frozenset({"closed_mine", "close_option"})) for index in range(4)]
    assert SerialPool.made == [3]
    informed, honest = [-0.5, 0.5, 1.5, -0.5], [0.0, 0.25, 0.5, 0.75]
    label = f"sees-hand heuristic at {kinds}"
    assert capsys.readouterr().out.splitlines() == [
        _oracle_figure(label, "random", informed, 11), _oracle_figure("honest heuristic", "random", honest, 11),
        _oracle_figure(f"{label} minus honest heuristic, paired", "random",
                       [a - b for a, b in zip(informed, honest)], 11)]


def test_oracle_command_labels_the_oracle_by_its_base_and_the_clairvoyant_by_none(monkeypatch, capsys):
    """Two deal pairs and one worker are accepted; close_only goes with close_option; unpaired, one line."""
    tasks = _oracle_main(monkeypatch, ["oracle", "close_option,close_only", "--base", "random", "--deals", "2"])
    assert tasks == [("oracle", "close_option,close_only", "random", "heuristic", 777, [index], False, None)
                     for index in range(2)]
    assert SerialPool.made == [1]
    assert capsys.readouterr().out.splitlines() == [
        _oracle_figure("oracle close_option,close_only (base random)", "heuristic", [-0.5, 0.5], 777)]
    _oracle_main(monkeypatch, ["clairvoyant", "--base", "random", "--paired", "--deals", "3", "--seed", "2"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == _oracle_figure("clairvoyant", "heuristic", [-0.5, 0.5, 1.5], 2)
    assert lines[1] == _oracle_figure("honest random", "heuristic", [0.0, 0.25, 0.5], 2)
    assert lines[2].startswith("clairvoyant minus honest random, paired vs heuristic: ") and len(lines) == 3
    tasks = _oracle_main(monkeypatch, ["sees-hand", "heuristic", "--sees-at", "close_only", "--deals", "2"])
    assert tasks[0][7] == frozenset({"close_only"})


def test_sees_at_every_kind_is_refused_for_close_only_with_close_option_not_as_unknown(capsys):
    """Every kind of SEES_AT_KINDS is a known kind: the refusal names the close_only/close_option clash."""
    from bench.oracle_bounds import SEES_AT_KINDS, main

    with pytest.raises(SystemExit) as exit_info:
        main(["sees-hand", "heuristic", "--sees-at", ",".join(SEES_AT_KINDS), "--deals", "2"])
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and "or close_option (it decides the whole lead there), not both" in error
    assert "--sees-at goes with sees-hand" not in error


def test_sees_hand_without_an_agent_spec_is_refused_for_lacking_it(capsys):
    from bench.oracle_bounds import main

    with pytest.raises(SystemExit) as exit_info:
        main(["sees-hand", "--deals", "2"])
    assert exit_info.value.code == 2 and "sees-hand needs an agent spec, e.g. heuristic" in capsys.readouterr().err


def test_regret_command_takes_a_talon_range_of_one_size(tmp_path, monkeypatch, capsys):
    sizes = []
    monkeypatch.setattr(decision_regret, "build_reference",
                        lambda *args, **kwargs: sizes.append((args[3], kwargs["max_talon"])) or {"positions": []})
    assert decision_regret.main(["--reference", str(tmp_path / "r.json"), "--min-talon", "8", "--max-talon", "8",
                                 "--no-progress"]) == 0
    assert sizes == [(8, 8)] and "talon 8-8" in capsys.readouterr().out
