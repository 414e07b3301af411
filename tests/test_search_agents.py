"""The search agents ``pimc`` and ``ismcts`` (agents/pimc.py, agents/ismcts.py): legal choices in every preset and
stage, determinism given a seed, and exact play once the talon is exhausted (R8). Budgets are counted in samples
and iterations (``seconds=None``) so the tests are fast and reproducible; strength is measured by scripts."""

from __future__ import annotations

import random

import pytest

from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import CLOSE, DECLARE, EXCHANGE
from sixtysix_env.game import FOLLOW, LEAD, PREDRAW, RESPOND_CLOSE

from agents import make_agent, parse_spec
from agents.ismcts import IsmctsAgent
from agents.pimc import PimcAgent, action_value, policy_action
from agents.solver import solve_all_actions
from play_helpers import play_checked_deal

RULE_SETS = {
    "standard": Rules.preset("standard"),
    "paderborn": Rules.preset("paderborn"),
    "scharf": Rules.preset("scharf"),
    "manual-declare": Rules.preset("standard", auto_declare=False),
    "false-declaration": Rules.preset("paderborn", allow_false_declaration=True),
}


def small_agents(seed: int):
    return (PimcAgent(seed=seed, samples=3, seconds=None), IsmctsAgent(seed=seed + 1, iterations=25, seconds=None))


def play_deal(agents, rules: Rules, seed: int, dealer: int, stages: set | None = None) -> Game:
    """One checked deal (tests/play_helpers.py); ``stages`` collects the stages decided in, and ``declare``."""
    def record(_agent, infoset, action):
        stages.add(infoset.stage)
        if action == DECLARE:
            stages.add("declare")

    return play_checked_deal(agents, rules, seed, dealer, on_decision=None if stages is None else record)


@pytest.mark.parametrize("rules_name", sorted(RULE_SETS))
def test_search_agents_choose_legal_actions_in_every_preset(rules_name):
    rules = RULE_SETS[rules_name]
    pimc, ismcts = small_agents(7)
    # The opponent model inside the tree (the heuristic's replies), on the core or in Python (manual declaring).
    modelled = IsmctsAgent(seed=9, iterations=25, seconds=None, opponent="heuristic")
    for deal in range(3):
        for seats in ((pimc, ismcts), (ismcts, pimc), (modelled, pimc), (ismcts, modelled)):
            game = play_deal(seats, rules, seed=1000 + deal, dealer=deal % 2)
            assert game.result is not None


def test_search_agents_handle_every_stage():
    """PREDRAW (R10 paderborn), RESPOND_CLOSE (R9 paderborn) and manual declarations (R13) all reach the agents
    when they are made to close often."""
    stages: set = set()
    rules = Rules.preset("paderborn", auto_declare=False)
    rng = random.Random(3)
    pimc, ismcts = small_agents(11)

    class Closer(PimcAgent):
        """Closes whenever it may (so the opponent meets RESPOND_CLOSE), otherwise plays PIMC."""

        def act(self, infoset):
            if CLOSE in infoset.legal_actions and rng.random() < 0.7:
                return CLOSE
            return super().act(infoset)

    closer = Closer(seed=5, samples=2, seconds=None)
    for deal in range(6):
        for seats in ((closer, pimc), (ismcts, closer), (pimc, ismcts)):
            play_deal(seats, rules, seed=2000 + deal, dealer=deal % 2, stages=stages)
    assert {LEAD, FOLLOW, PREDRAW, RESPOND_CLOSE, "declare"} <= stages


@pytest.mark.parametrize("make", [
    lambda seed: PimcAgent(seed=seed, samples=4, seconds=None),
    lambda seed: IsmctsAgent(seed=seed, iterations=40, seconds=None),
], ids=["pimc", "ismcts"])
def test_same_seed_same_choices(make):
    rules = Rules.preset("standard")
    histories = []
    for _ in range(2):
        agents = (make(21), make(22))
        game = play_deal(agents, rules, seed=77, dealer=0)
        histories.append(list(game.history))
    assert histories[0] == histories[1]
    # A different seed gives the agent other worlds to sample (the deal itself is the same).
    agents = (make(23), make(24))
    other = play_deal(agents, rules, seed=77, dealer=0)
    assert other.result is not None


def test_single_legal_action_returns_without_searching():
    """After a closing by the opponent, a player without the trump nine may only pass (R9): no sampling."""
    rules = Rules.preset("paderborn")
    for seed in range(50):
        game = Game.deal(rules, seed=seed)
        game.apply(CLOSE)
        if game.legal_actions() == [36]:
            break
    infoset = InformationSet(game, game.to_move)
    for agent in (PimcAgent(seed=1), IsmctsAgent(seed=1)):
        state = agent.rng.getstate()
        assert agent.act(infoset) == 36
        assert agent.rng.getstate() == state


def exhausted_talon_positions(count: int):
    """Phase-2 decisions after the talon ran out: both hands are known to a card counter (R8)."""
    rng = random.Random(5)
    positions = []
    seed = 0
    while len(positions) < count:
        seed += 1
        game = Game.deal(Rules(), seed=seed)
        while not game.is_over and not game.phase2:
            game.apply(policy_action(game))
        for _ in range(rng.randrange(3)):
            if game.is_over:
                break
            game.apply(rng.choice(game.legal_actions()))
        if not game.is_over and game.closed_by is None and game.stage in (LEAD, FOLLOW):
            positions.append(game)
    return positions


def test_agents_play_exactly_once_the_talon_is_exhausted():
    """With the talon exhausted every sampled world is the true position, so PIMC's choice is solver-optimal."""
    for game in exhausted_talon_positions(12):
        infoset = InformationSet(game, game.to_move)
        values = solve_all_actions(game)
        action = PimcAgent(seed=3, samples=2, seconds=None).act(infoset)
        assert values[action] == max(values.values())


def test_policy_action_is_always_legal():
    rng = random.Random(9)
    for index in range(200):
        rules = list(RULE_SETS.values())[index % len(RULE_SETS)]
        game = Game.deal(rules, seed=index)
        while not game.is_over:
            assert policy_action(game) in game.legal_actions()
            game.apply(rng.choice(game.legal_actions()))


def test_pimc_values_close_exactly_in_sampled_worlds():
    """The value of ``close`` (R10) in a world is the exact solver value of the closed position."""
    game = Game.deal(Rules(), seed=4)
    infoset = InformationSet(game, game.to_move)
    agent = PimcAgent(seed=0, samples=5, seconds=None)
    values = agent.action_values(infoset)
    assert set(values) == set(game.legal_actions())
    assert all(-3 <= value <= 3 for value in values.values())
    replay = random.Random(0)
    expected = 0
    for _ in range(5):
        world = infoset.determinize(replay)
        world.apply(CLOSE)
        expected += max(solve_all_actions(world).values())
    assert values[CLOSE] == pytest.approx(expected / 5)


def test_registry_builds_search_agents_from_specs():
    pimc = make_agent("pimc:samples=5,seconds=none,depth=1", seed=1)
    assert isinstance(pimc, PimcAgent) and pimc.samples == 5 and pimc.seconds is None and pimc.depth == 1
    ismcts = make_agent("ismcts:iterations=50,seconds=0.05,exploration=1.0", seed=1)
    assert isinstance(ismcts, IsmctsAgent) and ismcts.iterations == 50 and ismcts.exploration == 1.0
    with pytest.raises(ValueError, match="samples"):
        make_agent("pimc:samples=0")
    with pytest.raises(ValueError, match="seconds"):
        make_agent("ismcts:seconds=-1")
    with pytest.raises(ValueError, match="unknown parameter"):
        make_agent("pimc:worlds=3")
    # a spec that says less or more than its writer meant is refused, not read as another one
    with pytest.raises(ValueError, match=r"no parameters after ':' \(write 'heuristic' alone"):
        make_agent("heuristic:")
    with pytest.raises(ValueError, match="parameter 'samples' is given twice"):
        make_agent("pimc:samples=5,samples=50")


def test_exchange_is_valued_by_the_best_follow_up():
    """After an exchange (R9) the same player leads again: in each world PIMC values the exchange by his best next
    action there, not by the playout policy's choice."""
    for seed in range(200):
        game = Game.deal(Rules(), seed=seed)
        if EXCHANGE in game.legal_actions():
            break
    else:
        pytest.skip("no deal with an exchange at the first lead")
    player = game.to_move
    infoset = InformationSet(game, player)
    rng = random.Random(2)
    for _ in range(3):
        world = infoset.determinize(rng)
        after = world.clone()
        after.apply(EXCHANGE)
        assert after.to_move == player and after.stage == LEAD
        follow_ups = [action_value(after, action, player, 0) for action in after.legal_actions()]
        assert action_value(world, EXCHANGE, player, 0) == max(follow_ups)


def test_pruning_drops_only_significantly_worse_actions():
    from agents.pimc import _surviving_actions

    scores = {
        1: [1, 1, 2, 1, 1, 2, 1, 1, 1, 2],  # the leader
        2: [-1, -1, 0, -1, -1, 0, -1, -1, -1, 0],  # two game points worse in every world
        3: [1, 2, 1, 1, 2, 1, 1, 1, 2, 1],  # as good on average
        4: [3, -3, 2, 1, -2, 3, 1, -1, 2, 1],  # noisy: not significantly worse
    }
    assert _surviving_actions([1, 2, 3, 4], scores, 2.5) == [1, 3, 4]


def test_pimc_with_pruning_stays_legal_and_reproducible():
    """With enough worlds PIMC drops clearly worse actions (and may stop early); its choices stay legal and
    depend only on the seed."""
    rules = Rules.preset("standard")

    class Recording(PimcAgent):
        pruned = 0

        def act(self, infoset):
            action = super().act(infoset)
            if len(infoset.legal_actions) > 1:
                assert action in self.last_active and set(self.last_active) <= set(infoset.legal_actions)
                Recording.pruned += len(self.last_active) < len(infoset.legal_actions)
            return action

    histories = []
    for _ in range(2):
        agents = (Recording(seed=5, samples=24, seconds=None), Recording(seed=6, samples=24, seconds=None))
        game = play_deal(agents, rules, seed=31, dealer=1)
        histories.append(list(game.history))
    assert histories[0] == histories[1]
    assert Recording.pruned > 0


def test_expert_expert_v1_and_pimc_v1_are_aliases_with_overridable_parameters():
    from agents.registry import ALIASES, registered_names

    expert = make_agent("expert", seed=1)
    base_name, base_params = parse_spec(ALIASES["expert"])
    assert type(expert).__name__ == type(make_agent(base_name, seed=1)).__name__
    for key, value in base_params.items():
        assert getattr(expert, key) == value
    assert make_agent("expert:seconds=0.3", seed=1).seconds == 0.3
    assert make_agent("pimc_v1", seed=1).samples == 200
    assert make_agent("expert_v1", seed=1).override_margin == 0.25
    # The expert of sessions 4-8: the same rollouts valued in game points, with the large table (session 9).
    expert_v2 = make_agent("expert_v2", seed=1)
    assert (expert_v2.table_bits, expert_v2.objective, expert.table_bits, expert.objective) == (18, "deal", 14, "bummerl")
    # Session 21: two threads and the network prior; the expert of sessions 9-20 stays reachable as expert_v3.
    expert_v3 = make_agent("expert_v3", seed=1)
    assert (expert.threads, expert_v3.threads, expert_v3.prior) == (2, 1, None)
    assert expert_v3.objective == expert.objective == "bummerl"
    # Session 28: the prior weighs 512 worlds; the expert of sessions 21-27 stays reachable as expert_v4.
    expert_v4 = make_agent("expert_v4", seed=1)
    expert_v5 = make_agent("expert_v5", seed=1)
    assert (expert_v5.prior_weight, expert_v4.prior_weight) == (512, 128)
    assert (expert_v4.threads, expert_v4.prior) == (expert_v5.threads, expert_v5.prior) == (2, "suit_pair")
    # Session 39: the prior is the policy-iteration network; the expert of sessions 28-38 stays reachable as expert_v5.
    assert (expert.prior, expert.prior_weight) == ("suit_iterated", expert_v5.prior_weight)
    # Session 51: in a Bummerl the scores are valued as by a player who wins 60 % of the deals; the expert of
    # sessions 39-50 (the equal players' table) stays reachable as expert_v6, otherwise the same search.
    expert_v6 = make_agent("expert_v6", seed=1)
    assert (expert.bummerl_win_chance, expert_v6.bummerl_win_chance) == (0.6, 0.5)
    assert (expert_v6.prior, expert_v6.prior_weight, expert_v6.threads) == (expert.prior, expert.prior_weight, 2)
    names = {"expert", "expert_v1", "expert_v2", "expert_v3", "expert_v4", "expert_v5", "expert_v6", "pimc_v1"}
    assert names <= set(registered_names())


@pytest.mark.parametrize("spec", ["random", "greedy", "heuristic", "pimc:samples=20", "ismcts:iterations=50",
                                  "rollout:samples=10,seconds=none", "expert:samples=10,seconds=none",
                                  "blend:seconds=none", "ppo", "suit_iterated"])
def test_an_agent_asked_to_act_without_a_legal_action_says_so(spec):
    """Every agent refuses ``act`` with the same ValueError when its player has nothing to choose: the deal is over,
    or it is another player's turn (before, some returned an action of the player to move, others raised
    IndexError or numpy's "argmax of an empty sequence")."""
    agent = make_agent(spec, seed=0)
    game = Game.deal(Rules(), seed=1)
    cases = [InformationSet(game, 1 - game.to_move)]
    rng = random.Random(1)
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    cases.append(InformationSet(game, 0))
    three = Game.deal(Rules.preset("three"), seed=1)  # R21: forehand names trump, the others wait
    if spec.split(":")[0] in ("random", "greedy", "heuristic", "pimc"):
        cases.append(InformationSet(three, (three.current_player + 1) % 3))
    for infoset in cases:
        with pytest.raises(ValueError, match=rf"no legal action for player {infoset.player}: the deal is over or "
                                             "it is not this player's turn"):
            agent.act(infoset)
