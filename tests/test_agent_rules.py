"""Every agent against every preset it may be given: it plays, or it refuses the rules by name when the deal starts
(``start_deal``), never later inside its search. Networks fitted for the standard rules refuse the variants (R19,
R20) and the three-player game (R21); searches that play two seats only refuse R21; a search that uses a network
(a prior, a continuation) refuses the rules the network was not fitted for. And the agents' numeric parameters
refuse NaN and infinity, which pass a one-sided range check."""

from __future__ import annotations

import pytest

from agents.ismcts import IsmctsAgent
from agents.pimc import PimcAgent
from agents.registry import ALIASES, _REGISTRY, _load_builtin_agents, make_agent, parse_spec
from agents.rule_based import HeuristicAgent
from sixtysix_env import Game, InformationSet, Rules


def _every_agent_spec() -> list[str]:
    """The shipped agents and aliases: not those another test module registers (tests/test_tournament.py's
    ``illegal``), which would be listed only when that module happened to be collected first."""
    _load_builtin_agents()
    shipped = {name for name, factory in _REGISTRY.items() if factory.__module__.startswith("agents.")}
    return sorted(shipped | set(ALIASES))


@pytest.mark.parametrize("preset", ["paderborn", "scharf", "three"])
@pytest.mark.parametrize("spec", _every_agent_spec())
def test_every_agent_plays_a_preset_or_refuses_its_rules_when_the_deal_starts(spec, preset):
    """Either a few legal moves, or a ValueError from start_deal that names the rules or the game; the shipped
    agents without networks play every preset. Before, rollout (expert) and blend failed inside their search on a
    three-player deal, and a search with a standard-rules prior failed at its first search on R19/R20 deals."""
    rules = Rules.preset(preset)
    game = Game.deal(rules, seed=4, dealer=1)
    try:
        agent = make_agent(spec, seed=0)
    except ValueError as error:  # an agent that needs parameters (suit:path=FILE) is refused by name when built
        assert spec == "suit" and "path=FILE" in str(error)
        return
    for _ in range(3):
        player = game.current_player
        try:
            agent.start_deal(player, rules)
        except ValueError as error:
            assert preset in str(error) or "three players (R21)" in str(error), error
            assert spec not in ("random", "greedy", "heuristic", "pimc")  # these play every preset
            return
        action = agent.act(InformationSet(game, player))  # no refusal after the deal started
        assert action in game.legal_actions()
        game.apply(action)


@pytest.mark.parametrize("spec", ["expert", "ppo", "suit_iterated", "ismcts:prior=suit_iterated,seconds=0.01"])
def test_networks_play_rules_that_differ_only_in_the_match_scoring(spec):
    """R17's Schneider and R18's Partie score Bummerls only: no deal is played otherwise and no network reads them,
    so a network fitted for the standard rules plays them (it was refused, with the CLI's own --rule example).
    A switch that changes the deals (R13 auto_declare) or the observed match score (bummerl_target) stays refused."""
    for switches in (dict(schneider_bummerl=False), dict(partie_bummerl=3)):
        rules = Rules.preset("standard", **switches)
        game = Game.deal(rules, seed=4, dealer=1)
        agent = make_agent(spec, seed=0)
        agent.start_deal(game.to_move, rules)
        assert agent.act(InformationSet(game, game.to_move)) in game.legal_actions()
    for switches, named in ((dict(auto_declare=False), "auto_declare"), (dict(bummerl_target=5), "bummerl_target")):
        with pytest.raises(ValueError, match=f"switches differ: {named}\\)"):
            make_agent(spec, seed=0).start_deal(0, Rules.preset("standard", **switches))
    with pytest.raises(ValueError, match="switches differ: auto_declare\\)"):  # the scoring switch is not listed
        make_agent(spec, seed=0).start_deal(0, Rules.preset("standard", auto_declare=False, schneider_bummerl=False))


def test_heuristic_parameters_it_would_ignore_with_three_players_are_refused():
    """R21: the three-player heuristic (agents/three_players.py) reads none of the two-player parameters; they were
    ignored silently (pimc refuses its own the same way)."""
    three = Rules.preset("three")
    game = Game.deal(three, seed=4, dealer=1)
    plain = make_agent("heuristic", seed=0)
    plain.start_deal(game.current_player, three)
    assert plain.act(InformationSet(game, game.current_player)) in game.legal_actions()
    with pytest.raises(ValueError, match="lead_samples, use_solver would be ignored: leave them out"):
        make_agent("heuristic:lead_samples=500,use_solver=false", seed=0).start_deal(0, three)
    make_agent("heuristic:lead_samples=500", seed=0).start_deal(0, Rules.preset("standard"))  # read there


NON_FINITE_SPECS = [  # (spec, the parameter its message names): each was accepted before (session 64)
    ("expert:seconds=nan", "seconds"), ("expert:seconds=inf", "seconds"), ("pimc:seconds=nan", "seconds"),
    ("ismcts:seconds=nan", "seconds"), ("expert:prior_weight=nan", "prior_weight"),
    ("expert:prior_weight=inf", "prior_weight"), ("ismcts:prior_weight=nan", "prior_weight"),
    ("ismcts:exploration=nan", "exploration"), ("expert:keep_prior=nan", "keep_prior"),
    ("pimc:close_min_value=nan", "close_min_value"), ("heuristic:close_min_value=nan", "close_min_value"),
    ("expert:prune=inf", "prune"),
]


@pytest.mark.parametrize("spec, parameter", NON_FINITE_SPECS)
def test_non_finite_numbers_are_refused_by_the_parameter(spec, parameter):
    """A spec's "nan" or "inf" is text, not a number, so the agent's own check names it; the same values given from
    Python are refused too. NaN made every comparison false (a time budget that never ends, a prior that poisons
    every value); "none" is how a spec says "no limit"."""
    with pytest.raises(ValueError, match=f"{parameter} must be"):
        make_agent(spec, seed=0)
    assert parse_spec("pimc:seconds=nan,samples=inf")[1] == {"seconds": "nan", "samples": "inf"}
    assert parse_spec("pimc:seconds=0.5,samples=30")[1] == {"seconds": 0.5, "samples": 30}


@pytest.mark.parametrize("build", [
    lambda: PimcAgent(seconds=float("nan")), lambda: PimcAgent(prune=float("inf")),
    lambda: PimcAgent(close_min_value=float("nan")), lambda: IsmctsAgent(exploration=float("nan")),
    lambda: IsmctsAgent(prior_weight=float("inf")), lambda: HeuristicAgent(close_min_value=float("nan")),
])
def test_non_finite_numbers_from_python_are_refused(build):
    with pytest.raises(ValueError, match="must be"):
        build()


def test_an_integer_beyond_any_float_is_not_a_finite_number():
    """``finite_number`` answers False for an int no float can hold (math.isfinite raised OverflowError), so a
    parameter given one is refused by name like NaN, and ordinary ints and floats still pass."""
    from sixtysix_env.schema import finite_number

    assert not finite_number(10**400) and not finite_number(-(10**400))
    assert finite_number(10**300) and finite_number(-3) and finite_number(0.5)
    assert not finite_number(True) and not finite_number("1") and not finite_number(float("nan"))
    with pytest.raises(ValueError, match="close_min_value must be"):
        HeuristicAgent(close_min_value=10**400)
