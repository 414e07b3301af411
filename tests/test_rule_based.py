"""The rule-based agents (issue 3): ``greedy`` and ``heuristic``.

Situations are dealt from explicit decks in R4 order (cards 1–3 and 7–9 to forehand, 4–6 and 10–12 to the dealer,
card 13 the trump card, then the talon top first); with ``dealer=0`` forehand is player 1.
"""

from __future__ import annotations

import pytest

from agents import make_agent
from agents.rule_based import GreedyAgent, HeuristicAgent, beats
from agents.solver import solve_all_actions
from sixtysix_env import Game, InformationSet, Rules, parse_action
from sixtysix_env.actions import CLOSE, DECLARE, DRAW, EXCHANGE, PASS
from sixtysix_env.cards import deck_cards, parse_card
from sixtysix_env.game import FOLLOW, LEAD, PREDRAW, RESPOND_CLOSE

FOREHAND = 1  # with dealer 0


def explicit_deal(forehand: str, dealer: str, trump: str, talon_top: str = "", rules: Rules | None = None) -> Game:
    """Deal with the given forehand and dealer hands (6 cards each), trump card and first talon cards; the other
    cards follow in the talon in ascending id order."""
    rules = Rules() if rules is None else rules
    fore = [parse_card(c) for c in forehand.split()]
    deal = [parse_card(c) for c in dealer.split()]
    top = [parse_card(c) for c in talon_top.split()]
    named = fore + deal + [parse_card(trump)] + top
    rest = [c for c in deck_cards(rules.deck) if c not in named]
    deck = fore[:3] + deal[:3] + fore[3:] + deal[3:] + [parse_card(trump)] + top + rest
    return Game.deal(rules, deck=deck, dealer=0)


def decide(agent, game: Game) -> int:
    player = game.current_player
    agent.start_deal(player, game.rules)
    return agent.act(InformationSet(game, player))


def play_checked(rules: Rules, agents: list, seed: int) -> Game:
    """Play one deal, asserting every chosen action is legal."""
    game = Game.deal(rules, seed=seed, dealer=seed % 2)
    for seat, agent in enumerate(agents):
        agent.start_deal(seat, rules)
    while not game.is_over:
        player = game.current_player
        legal = game.legal_actions()
        action = agents[player].act(InformationSet(game, player))
        assert action in legal, f"{agents[player].name} chose {action} not in {legal} (seed {seed})"
        game.apply(action)
    return game


RULE_VARIANTS = [
    Rules.preset("standard"),
    Rules.preset("paderborn"),
    Rules.preset("scharf"),
    Rules.preset("standard", auto_declare=False),
    Rules.preset("paderborn", auto_declare=False, allow_false_declaration=True),
    Rules.preset("scharf", auto_declare=False),
]


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=lambda r: f"{r.preset_name or 'custom'}-{r.auto_declare}")
def test_agents_choose_legal_actions_in_every_preset(rules):
    """R7–R13 and every switch: over random deals the agents only ever pick legal actions (R8 follow rules,
    PREDRAW, RESPOND_CLOSE, manual declare) and the deals end."""
    heuristic = HeuristicAgent(seed=1)
    greedy = GreedyAgent(seed=2)
    random_agent = make_agent("random", seed=3)
    for seed in range(10):
        game = play_checked(rules, [heuristic, greedy] if seed % 2 else [greedy, heuristic], seed)
        assert game.is_over
    for seed in range(10, 14):
        assert play_checked(rules, [heuristic, random_agent], seed).is_over


def test_heuristic_never_declares_falsely():
    """R13 allow_false_declaration: declaring is offered below 66, but the agents declare only with 66."""
    rules = Rules.preset("standard", allow_false_declaration=True)
    agents = [HeuristicAgent(seed=4), GreedyAgent(seed=5)]
    for seed in range(12):
        game = play_checked(rules, agents if seed % 2 else agents[::-1], seed)
        assert game.result.reason != "false declaration"


# ---------------------------------------------------------------------------------------------------- heuristic
def test_r9_heuristic_exchanges_the_trump_nine_at_once():
    game = explicit_deal("9H JC QD JS 9S TD", "AC TC KC AD KD AS", trump="AH")
    assert decide(HeuristicAgent(seed=0), game) == EXCHANGE


def test_r9_scharf_heuristic_exchanges_the_trump_jack():
    rules = Rules.preset("scharf")
    game = explicit_deal("JH QC QD JS KS TD", "AC TC KC AD KD AS", trump="AH", rules=rules)
    assert decide(HeuristicAgent(seed=0), game) == EXCHANGE


def test_r11_heuristic_announces_the_forty_leading_the_queen():
    game = explicit_deal("KH QH 9C JD 9S JS", "AC TC KC AD TD AS", trump="9H")
    assert decide(HeuristicAgent(seed=0), game) == parse_action("marry QH")


def test_r11_heuristic_prefers_the_forty_to_a_twenty():
    game = explicit_deal("KC QC KH QH 9S JS", "AC TC AD TD AS TS", trump="9H")
    assert decide(HeuristicAgent(seed=0), game) == parse_action("marry QH")


def test_r6_r7_heuristic_takes_a_led_ten_with_a_low_trump_in_phase1():
    # Forehand leads the ten of clubs; the dealer holds no higher club, only a low trump worth spending.
    game = explicit_deal("TC 9D JD QS 9S AS", "JH 9C JC KD QD TS", trump="AH")
    game.apply(parse_action("play TC"))
    assert game.stage == FOLLOW and game.current_player == 0
    assert decide(HeuristicAgent(seed=0), game) == parse_action("play JH")


def test_r6_heuristic_takes_a_led_ten_with_its_ace_rather_than_a_trump():
    game = explicit_deal("TC 9D JD QS 9S AS", "JH AC JC KD QD TS", trump="AH")
    game.apply(parse_action("play TC"))
    assert decide(HeuristicAgent(seed=0), game) == parse_action("play AC")


def test_r7_heuristic_throws_a_cheap_card_on_a_worthless_lead():
    # A led nine of diamonds is not worth a trump or a ten: throw the cheapest card (the nine of spades).
    game = explicit_deal("9D JD QS KS AS TD", "JH TH 9S AC TC KC", trump="AH")
    game.apply(parse_action("play 9D"))
    assert decide(HeuristicAgent(seed=0), game) == parse_action("play 9S")


def test_r10_heuristic_closes_an_obviously_winning_hand():
    # Forehand holds the four highest hearts (trump) and the ace and ten of clubs: closing at once and playing
    # the 40 and the top trumps reaches 66 before the opponent takes a trick (3 game points, R16).
    game = explicit_deal("AH TH KH QH AC TC", "9C JC 9D JD QD 9S", trump="JH")
    assert decide(HeuristicAgent(seed=0), game) == CLOSE


def test_r10_heuristic_does_not_close_a_weak_hand():
    game = explicit_deal("9C JC 9D JD 9S JS", "AH TH KH QH AC TC", trump="QS")
    assert decide(HeuristicAgent(seed=0), game) != CLOSE


def test_r9_paderborn_heuristic_exchanges_after_the_opponent_closes():
    rules = Rules.preset("paderborn")
    game = explicit_deal("AH TH KH QH AC TC", "9H JC 9D JD QD 9S", trump="JH", rules=rules)
    game.apply(CLOSE)
    assert game.stage == RESPOND_CLOSE and game.current_player == 0
    assert decide(HeuristicAgent(seed=0), game) == EXCHANGE


def phase2_positions(count: int, rules: Rules, seed: int = 0):
    """Positions right after the talon ran out (R8, no closing), reached by greedy play from seeded deals."""
    greedy = GreedyAgent(seed=seed)
    found = 0
    deal_seed = seed
    while found < count:
        deal_seed += 1
        game = Game.deal(rules, seed=deal_seed)
        steps = 0
        while not game.is_over:
            if game.phase2 and game.closed_by is None and game.stage in (LEAD, FOLLOW):
                steps += 1
                if steps % 2 == deal_seed % 2:  # some lead, some follow positions
                    found += 1
                    yield game.clone()
                    break
            game.apply(decide(greedy, game))


@pytest.mark.parametrize("preset", ["standard", "scharf"])
def test_r8_heuristic_plays_the_exhausted_talon_phase_exactly(preset):
    """Once the talon is exhausted a card-counting player knows both hands: the heuristic's action must reach the
    exact game-point value of the position (and be a legal R8 follow)."""
    heuristic = HeuristicAgent(seed=0)
    for game in phase2_positions(25, Rules.preset(preset)):
        action = decide(heuristic, game)
        values = solve_all_actions(game)
        assert action in game.legal_actions()
        assert values[action] == max(values.values()), game.render()


def test_r13_manual_declare_both_agents_declare_at_66():
    rules = Rules.preset("standard", auto_declare=False)
    found = 0
    greedy = GreedyAgent(seed=0)
    for seed in range(200):
        game = Game.deal(rules, seed=seed)
        while not game.is_over:
            player = game.current_player
            if DECLARE in game.legal_actions():
                assert game.points(player) >= 66
                assert decide(HeuristicAgent(seed=1), game) == DECLARE
                assert decide(GreedyAgent(seed=1), game) == DECLARE
                found += 1
                break
            game.apply(decide(greedy, game))
        if found >= 5:
            break
    assert found >= 5


def test_heuristic_is_deterministic_given_a_seed():
    def histories(seed: int) -> list[list[int]]:
        agents = [HeuristicAgent(seed=seed), HeuristicAgent(seed=seed + 1)]
        return [play_checked(Rules(), agents, deal).history for deal in range(6)]

    assert histories(7) == histories(7)


def test_heuristic_rejects_bad_parameters():
    with pytest.raises(ValueError, match="lead_samples"):
        HeuristicAgent(lead_samples=0)
    with pytest.raises(ValueError, match="close_min_win"):
        HeuristicAgent(close_min_win=2)
    with pytest.raises(ValueError, match="unknown parameter 'samples'"):
        make_agent("heuristic:samples=3")
    agent = make_agent("heuristic:close_samples=4,endgame_lookahead=false", seed=1)
    assert isinstance(agent, HeuristicAgent) and agent.close_samples == 4 and not agent.endgame_lookahead
    # Without the solver it never closes (R10) and plays phase 2 by rules: the closing check's samples are unread.
    with pytest.raises(ValueError, match="close_samples would be ignored, since it counts only with use_solver=true"):
        make_agent("heuristic:close_samples=4,use_solver=false", seed=1)
    with pytest.raises(ValueError, match="endgame_worlds would be ignored, since it counts only with endgame_look"):
        make_agent("heuristic:endgame_lookahead=false,endgame_worlds=2", seed=1)


# ---------------------------------------------------------------------------------------------------- greedy
def test_greedy_exchanges_announces_and_leads_high():
    game = explicit_deal("9H KC QC JD 9S AS", "AC TC 9C AD KD TS", trump="TH")
    greedy = GreedyAgent(seed=0)
    assert decide(greedy, game) == EXCHANGE  # R9
    game.apply(EXCHANGE)
    assert decide(greedy, game) == parse_action("marry QC")  # R11 at once, leading the Queen
    game = explicit_deal("9C JD 9S AS TD KC", "AC TC 9H AD KD TS", trump="TH")
    assert decide(greedy, game) == parse_action("play AS")  # its highest card, a non-trump


def test_greedy_takes_a_ten_cheaply_and_throws_on_a_cheap_lead():
    game = explicit_deal("TC 9D JD QS 9S AS", "JH AH 9C KD QD TS", trump="9H")
    game.apply(parse_action("play TC"))
    assert decide(GreedyAgent(), game) == parse_action("play JH")  # the cheapest winner is the trump jack
    game = explicit_deal("JD 9D TD QS 9S AS", "JH AH 9C KD QC TS", trump="9H")
    game.apply(parse_action("play JD"))
    assert decide(GreedyAgent(), game) == parse_action("play KD")  # a winner in suit costs no trump
    game = explicit_deal("JC 9D TD QS 9S AS", "JH AH 9C KD QD TS", trump="9H")
    game.apply(parse_action("play JC"))
    assert decide(GreedyAgent(), game) == parse_action("play 9C")  # only trumps win: throw the cheapest card


def test_greedy_never_closes_and_draws_in_predraw():
    rules = Rules.preset("paderborn")
    game = explicit_deal("AH TH KH QH AC TC", "9C JC 9D JD QD 9S", trump="JH", rules=rules)
    assert decide(GreedyAgent(), game) != CLOSE
    greedy = GreedyAgent(seed=0)
    seen_predraw = 0
    for seed in range(5):
        game = Game.deal(rules, seed=seed)
        while not game.is_over:
            action = decide(greedy, game)
            if game.stage == PREDRAW:
                assert action == DRAW
                seen_predraw += 1
            assert action != CLOSE
            game.apply(action)
    assert seen_predraw > 0


def test_r9_paderborn_greedy_passes_without_the_nine():
    rules = Rules.preset("paderborn")
    game = explicit_deal("AH TH KH QH AC TC", "9C JC 9D JD QD 9S", trump="JH", rules=rules)
    game.apply(CLOSE)
    assert game.legal_actions() == [PASS]
    assert decide(GreedyAgent(), game) == PASS


def test_r6_beats():
    trump = 2  # hearts
    assert beats(parse_card("TC"), parse_card("AC"), trump)
    assert not beats(parse_card("AC"), parse_card("TC"), trump)
    assert beats(parse_card("AC"), parse_card("9H"), trump)
    assert not beats(parse_card("9C"), parse_card("AD"), trump)
    assert not beats(parse_card("9H"), parse_card("AC"), trump)


def test_agents_are_registered():
    assert isinstance(make_agent("greedy", seed=1), GreedyAgent)
    assert isinstance(make_agent("heuristic", seed=1), HeuristicAgent)
    with pytest.raises(ValueError, match="unknown parameter"):
        make_agent("greedy:depth=2")
