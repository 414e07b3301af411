"""Agent specs that would be silently misread are refused by name, a re-seeded agent repeats itself, and an agent
asked out of turn says so (agents/registry.py specs; R8 turns, R21 presets)."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.suit import SuitNetwork
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.core import core_implements

SUIT_FILE = "models/suit_two_standard.npz"


@pytest.mark.parametrize("spec, message", [
    ("ppo:deterministic=no", "deterministic must be true or false, got 'no'"),
    ("ppo:deterministic=0", "deterministic must be true or false, got 0"),
    ("suit_iterated:deterministic=flase", "deterministic must be true or false"),
    ("expert:prior=false", "rollout's prior must be a network file or alias .*got False"),
    ("ppo:path=2024", "PPO model path must be a file path, got 2024"),
    ("ppo:path=models", "PPO model 'models' is a folder, not a model file"),
    ("heuristic:close_min_win=true", "close_min_win must be a share between 0 and 1, got True"),
    # A Weights object comes from Python only: the message says a spec cannot give one.
    ("heuristic:weights=tuned.json", r"weights must be a Weights object, given from Python \(an agent spec cannot "
                                     r"give one\), got str"),
    ("suit_iterated:late_min_talon=3", "late_min_talon and late_max_talon count only with late="),
    # The spec's own key, not match_equity's argument (it said "win_chance must be ...").
    ("rollout:bummerl_win_chance=2", "bummerl_win_chance must be a share of scored deals"),
    ("heuristic:close_samples=1000000000", r"close_samples must be an integer in 1\.\.100000"),
    ("expert:lead_samples=1000000", r"lead_samples must be an integer in 1\.\.100000"),
    ("expert:bummerl_win_chance=0", "bummerl_win_chance must be a share of scored deals"),
    # From a sweep of every parameter: 0, 1 and 2 were opened as stdin, stdout and stderr (a hang, a closed stdout)
    ("pimc:playout_weights=0", "playout_weights must be a file path, got 0"),
    ("pimc:playout_weights=1", "playout_weights must be a file path, got 1"),
    # the clock is read between worlds: depth 9 took 36 s on a 0.02 s budget, a huge one never ended
    ("pimc:depth=7", r"depth must be an integer in 0\.\.6 or None, got 7"),
    ("ismcts:expand_after=1000000000000000000000000000000", r"expand_after must be a number of visits in 1\.\.10\^9"),
    # every world's values are held per decision: these failed to allocate at the first one, clock or not
    ("expert:samples=1000000000000,seconds=0.02", r"samples must be an integer in 1\.\.100000"),
    ("blend:samples=1000000000000", r"samples must be an integer in 1\.\.100000"),
    # a missing file was a FileNotFoundError that named no spec
    ("ppo:path=/nonexistent/model.zip", r"bad parameters in agent spec 'ppo:path=/nonexistent/model.zip': PPO model "
                                        r"not found"),
])
def test_a_spec_that_would_be_misread_is_refused_by_name(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec, seed=0)


def test_the_specs_that_use_those_parameters_still_build():
    # expert:objective=deal keeps the alias's bummerl_win_chance, unused: a spec may switch the objective off
    for spec in ("ppo:deterministic=false", "expert:seconds=0.02", "expert:objective=deal",
                 "rollout:objective=bummerl,bummerl_win_chance=0.6", "heuristic:close_min_win=1"):
        make_agent(spec, seed=0)


def _network_file_with(tmp_path, change) -> str:
    with np.load(SUIT_FILE, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    change(arrays)
    path = tmp_path / "changed.npz"
    np.savez(path, **arrays)
    return str(path)


def test_a_suit_network_file_with_renamed_or_stray_layers_is_refused(tmp_path):
    """The number of exchange rounds is read from the layers' names: a renamed round would load as a network of
    fewer rounds, its weights ignored. Arrays no network of the counted rounds has are refused by name."""
    SuitNetwork.load(SUIT_FILE)

    def rename_round(arrays):
        for name in [name for name in arrays if name.startswith(("mix.", "recombine."))]:
            arrays[name.replace("mix.", "mix2.").replace("recombine.", "recombine2.")] = arrays.pop(name)

    for change in (rename_round, lambda arrays: arrays.update({"garbage.weight": np.zeros(3, np.float32)})):
        with pytest.raises(ValueError, match="holds arrays no suit network of 1 round|garbage.weight"):
            SuitNetwork.load(_network_file_with(tmp_path, change))


def test_ismcts_repeats_itself_after_a_reseed_under_rules_the_core_does_not_play():
    """Under such rules ismcts models the opponent with a Python heuristic agent whose generator it draws from its
    own: a re-seeded agent makes that model anew, so the same seed gives the same move every time."""
    rules = Rules.from_dict({**Rules.preset("standard").to_dict(), "auto_declare": False})
    assert not core_implements(rules)
    agent = make_agent("ismcts:iterations=60,seconds=none,leaf=policy,inference=none", seed=1)
    driver = make_agent("heuristic", seed=2)
    differing = decisions = 0
    for deal in range(3):
        game = Game.deal(rules, seed=300 + deal)
        agent.start_deal(0, rules)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            if len(infoset.legal_actions) > 1:
                agent.seed(7)
                first = agent.act(infoset)
                agent.seed(7)
                differing += agent.act(infoset) != first
                decisions += 1
            game.apply(driver.act(infoset))
    assert decisions > 20 and differing == 0


def test_ismcts_asked_out_of_turn_says_so_in_phase_2():
    """R8: once the talon is used up, ismcts:phase2=solve solves exactly; asked for the player not to move it gives
    the message every agent gives, not an error from inside the solve."""
    rules = Rules.preset("standard")
    game = Game.deal(rules, seed=3)
    heuristic = make_agent("heuristic", seed=0)
    while not game.is_over and not game.phase2:
        game.apply(heuristic.act(InformationSet(game, game.current_player)))
    assert game.phase2 and not game.is_over
    waiting = 1 - game.current_player
    agent = make_agent("ismcts:seconds=0.02,phase2=solve", seed=0)
    agent.start_deal(waiting, rules)
    with pytest.raises(ValueError, match="no legal action for player .*: the deal is over or it is not this player"):
        agent.act(InformationSet(game, waiting))


def test_pimc_without_a_prior_loads_its_solver_before_the_first_decision(monkeypatch):
    """The worlds of pimc:prior=none are solved: start_deal prepares the solver, so its loading is not timed inside
    the first decision's budget."""
    from agents import solver

    prepared = []
    monkeypatch.setattr(solver, "prepare", lambda rules: prepared.append(rules))
    agent = make_agent("pimc:seconds=0.02,prior=none", seed=0)
    agent.start_deal(0, Rules.preset("standard"))
    assert prepared == [Rules.preset("standard")]


def test_numpy_integer_seeds_seed_an_agent_as_the_same_int_does():
    """``rng.integers(...)`` gives numpy integers, which random.Random refuses: the error blamed the spec."""
    from sixtysix_env import Game, InformationSet, Rules

    game = Game.deal(Rules.preset("standard"), seed=2)
    for spec in ("heuristic", "pimc:samples=10,seconds=none", "ismcts:iterations=30,seconds=none"):
        from_numpy, from_int = make_agent(spec, seed=np.int64(41)), make_agent(spec, seed=41)
        choices = []
        for agent in (from_numpy, from_int):
            agent.start_deal(game.to_move, game.rules)
            agent.seed(np.int32(7))
            choices.append(agent.act(InformationSet(game, game.to_move)))
        assert choices[0] == choices[1] and choices[0] in game.legal_actions()
    for bad in (1.5, "7"):
        with pytest.raises(ValueError, match="seed must be an integer or None"):
            make_agent("heuristic", seed=bad)


def test_spec_numbers_are_ascii_digits_only():
    """int() reads Arabic-Indic digits and underscores ('٣' is 3, '1_000' is 1000): a spec value is a number only
    when written plainly, else it stays text and the parameter's check names it."""
    from agents.registry import parse_spec

    assert parse_spec("pimc:samples=30,seconds=0.5") == ("pimc", {"samples": 30, "seconds": 0.5})
    for value in ("٣", "1_000"):
        assert parse_spec(f"pimc:samples={value}")[1] == {"samples": value}
        with pytest.raises(ValueError, match=f"samples must be a positive integer, got '{value}'"):
            make_agent(f"pimc:samples={value}", seed=0)


def test_a_network_file_given_to_ppo_points_to_the_suit_agent():
    """``ppo:path=X.npz`` said only "neither a sixtysix model nor a loadable MaskablePPO zip"."""
    with pytest.raises(ValueError, match=f"suit:path={SUIT_FILE}"):
        make_agent(f"ppo:path={SUIT_FILE}", seed=0)


# A parameter its agent would not read as configured (agents.base.Agent.inert_parameters): each is refused by name,
# with the setting under which it counts, rather than accepted and silently ignored.
@pytest.mark.parametrize("spec, inert, counts_with", [
    ("rollout:follow_floor=0.2", "follow_floor", "inference=heuristic"),
    ("expert:inference=none,played_on_floor=0.5", "played_on_floor", "inference=heuristic"),
    ("rollout:inference_fallback=resample", "inference_fallback", "inference=heuristic"),
    ("rollout:prior_weight=64", "prior_weight", "a prior network"),
    ("expert:prior=none,prior_talon=6", "prior_talon", "a prior network"),
    ("rollout:prune=none,prune_on=posterior", "prune_on", "a prune threshold"),
    ("rollout:prune_on=posterior", "prune_on", "a prior network"),
    ("rollout:continuation_talon=6", "continuation_talon", "a continuation network"),
    ("expert:closed_iterations=500", "closed_iterations", "closed_search=ismcts"),
    ("expert:presumed_worlds=4", "presumed_worlds", "closed_opponent=presumed"),
    ("expert:objective=deal,bummerl_win_chance=0.6", "bummerl_win_chance", "objective=bummerl"),
    ("rollout:solve_talon=2", "solve_talon", "endgame=last_trick"),
    ("expert:unsearched=prior", "unsearched", "search_at, search_min_talon or search_max_talon"),
    ("pimc:prior=none,override_margin=0.2", "override_margin", "a prior player"),
    ("pimc:inference_in_prior=true", "inference_in_prior", "inference"),
    ("pimc:close_min_value=none,close_min_win=0.5", "close_min_win", "close_min_value=none turns off"),
    ("ismcts:inference=none,follow_floor=0.2", "follow_floor", "inference=heuristic"),
    ("ismcts:prior_weight=64", "prior_weight", "a prior network"),
    ("heuristic:use_solver=false,phase2_samples=4", "phase2_samples", "use_solver=true"),
    ("heuristic:endgame_lookahead=false,endgame_worlds=2", "endgame_worlds", "endgame_lookahead=true"),
    ("blend:seconds=none,rollout_share=0.3", "rollout_share", "seconds="),
    ("blend:tree_mix=0,iterations=500", "iterations", "tree_mix=0"),
    ("blend:prior=none,prior_weight=64", "prior_weight", "a prior network"),
])
def test_a_parameter_its_agent_would_not_read_is_refused_by_name(spec, inert, counts_with):
    with pytest.raises(ValueError, match=rf"agent spec '{spec}': {inert} would be ignored, since .*{counts_with}"):
        make_agent(spec)


@pytest.mark.parametrize("spec", [
    # the same parameters where they count
    "rollout:inference=heuristic,follow_floor=0.2", "expert:played_on_floor=0.5", "expert:prior_talon=6",
    "expert:prune_on=posterior", "expert:closed_search=ismcts,closed_iterations=500",
    "expert:closed_lookahead=50,closed_opponent=presumed,presumed_worlds=4", "expert:solve_talon=2",
    "expert:search_at=lead,unsearched=prior", "pimc:override_margin=0.2",
    "pimc:inference=rules,inference_in_prior=true", "pimc:close_min_win=0.5", "ismcts:follow_floor=0.2",
    "heuristic:phase2_samples=4", "heuristic:endgame_worlds=2", "blend:rollout_share=0.3",
    # an alias's own parameter made inert by one the spec gives is not the user's mistake: expert sets
    # bummerl_win_chance, prior_weight and the inference the floors belong to
    "expert:objective=deal", "expert:prior=none", "expert:inference=none",
])
def test_the_same_parameters_build_where_they_count(spec):
    make_agent(spec)


def test_a_parameter_called_inert_changes_nothing_in_play():
    """What inert_parameters claims, checked in play from Python (where the constructor takes them): the rollout
    search with and without each inert parameter, on the same seed, values the same decisions alike."""
    from agents.rollout import RolloutAgent

    base = {"samples": 12, "seconds": None, "endgame": "phase2", "threads": 1}
    inert = {"follow_floor": 0.3, "inference_fallback": "resample", "prior_weight": 7.0, "prior_talon": 5,
             "prune_on": "posterior", "continuation_talon": 3, "closed_iterations": 9, "presumed_worlds": 3,
             "bummerl_win_chance": 0.7, "solve_talon": 3, "unsearched": "heuristic"}
    plain, changed = RolloutAgent(seed=3, **base), RolloutAgent(seed=3, **base, **inert)
    assert set(inert) <= set(changed.inert_parameters())
    searched = 0
    for deal in range(3):
        game = Game.deal(Rules.preset("standard"), seed=470 + deal)
        for agent in (plain, changed):
            agent.start_deal(0, game.rules)
            agent.start_deal(1, game.rules)
        while not game.is_over:
            infoset = InformationSet(game, game.current_player)
            choices = [agent.act(infoset) for agent in (plain, changed)]
            assert choices[0] == choices[1] and plain.last_values == changed.last_values
            searched += bool(plain.last_values)
            game.apply(choices[0])
    assert searched > 10


def test_blend_names_its_own_parameter_not_the_expert_spec_inside():
    with pytest.raises(ValueError, match=r"^bad parameters in agent spec 'blend:samples=0': samples must be an "
                                         r"integer in 1\.\.100000, got 0$"):
        make_agent("blend:samples=0")


@pytest.mark.parametrize("spec, message", [
    ("rollout:leaf_tricks=1,leaf_value=1", "leaf_value must be a critic file or the alias of a model"),
    ("rollout:switch=1", "switch must be 'heuristic' or the path of a weights JSON file, got 1"),
    ("rollout:opponent_weights=2", "opponent_weights must be 'heuristic' or the path of a weights JSON file, got 2"),
    ("pimc:prior=network,prior_model=1", "prior_model must be a model zip or the alias of one, got 1"),
])
def test_a_path_parameter_given_a_number_is_named(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec)


def test_pimc_prior_model_takes_the_alias_of_a_ppo_model():
    agent = make_agent("pimc:prior=network,prior_model=distilled", seed=0)
    assert agent._prior_agent.path.name == "distilled_standard.zip"
