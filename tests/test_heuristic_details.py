"""Details of the ``heuristic`` agent (agents/rule_based.py) that the other tests leave open, each found by a mutant
of the module that they let pass: the card values (``card_keep_value``), the follow scores
(``follow_card_scores``), the phase predicates, the marriage bookkeeping, the closing filter and checks, and
decisions of the agent itself.

Positions are dealt from explicit decks in R4 order (``deck_from_hands``: forehand's and the dealer's six cards,
the trump card, then the talon top first); with ``dealer=0`` forehand is player 1.
"""

from __future__ import annotations

import pytest

from agents.rule_based import (
    DEFAULT_WEIGHTS, WIN_BONUS, GreedyAgent, HeuristicAgent, Weights, card_keep_value, follow_card_scores, is_phase2,
    marriage_total, pending_marriage_points,
)
from sixtysix_env import Game, InformationSet, Rules
from sixtysix_env.actions import CLOSE, DECLARE, DRAW, parse_action
from sixtysix_env.cards import CARD_NAMES, cards_of, parse_card
from sixtysix_env.record import deck_from_hands

FOREHAND, DEALER = 1, 0  # with dealer 0


def deal(forehand: str, dealer: str, trump: str, talon: str = "", preset: str = "standard") -> Game:
    rules = Rules.preset(preset)
    deck = deck_from_hands(forehand.split(), dealer.split(), trump, talon.split(), deck_size=rules.deck)
    return Game.deal(rules, deck=deck, dealer=0)


def keep_values(game: Game, player: int) -> dict[str, float]:
    """``card_keep_value`` of every card in ``player``'s hand, from his own view (the agent's context)."""
    agent = HeuristicAgent(seed=0)
    infoset = InformationSet(game, player)
    context = agent._context(infoset, infoset.hand, agent._my_others(infoset))
    return {CARD_NAMES[card]: card_keep_value(card, infoset.hand, context) for card in cards_of(infoset.hand)}


def play(game: Game, *actions: str) -> Game:
    for action in actions:
        game.apply(parse_action(action))
    return game


# ---------------------------------------------------------------------------------------------------- card values
def test_keep_values_of_a_phase1_hand_by_the_weights():
    """The Weights docstring: what each card is still worth to its holder, by rank and role, with hearts trump.
    R9: the trump nine may still be exchanged for the face-up KH, so it is worth 0.8 of the KH's 16 (12.8 > 11).
    R11: a held Queen-King pair keeps 0.6 of its 20 on each card while marriages may still be shown; a Queen whose
    King is still out and may be drawn keeps 0.1 of 20. A plain ten whose ace is out can be taken by it (7, not 11)."""
    game = deal("9H AH TS AS QD KD", "AC 9C JC TD 9D QS", trump="KH")
    assert keep_values(game, FOREHAND) == {"9H": 12.8, "AH": 32.0, "TS": 11.0, "AS": 13.0, "QD": 15.5, "KD": 16.5}
    assert keep_values(game, DEALER) == {"9C": 0.0, "JC": 2.0, "AC": 13.0, "TD": 7.0, "9D": 0.0, "QS": 5.5}


def test_keep_values_after_a_closing_by_the_marriage_switch():
    """R10, R11: once the talon is closed nothing is drawn, so no card is worth an exchange (R9) or a partner still
    to be drawn; a held pair keeps its marriage worth only where marriages may be shown in phase 2
    (``marriage_in_phase2``: on in ``standard``, off in ``paderborn``)."""
    for preset, pair in (("standard", {"QD": 15.5, "KD": 16.5}), ("paderborn", {"QD": 3.5, "KD": 4.5})):
        game = deal("9H AH TS AS QD KD", "AC 9C JC TD 9D QS", trump="KH", preset=preset)
        game.apply(CLOSE)
        assert keep_values(game, FOREHAND) == {"9H": 11.0, "AH": 32.0, "TS": 11.0, "AS": 13.0, **pair}, preset
        assert keep_values(game, DEALER)["QS"] == 3.5, preset


def test_r2_scharf_the_trump_jack_keeps_its_exchange_worth():
    """R2, R9: with 20 cards the trump jack exchanges, so it is the card worth 0.8 of the face-up KH (12.8 > 12)."""
    game = deal("JH AH TS AS QD KD", "AC TC JC TD AD QS", trump="KH", preset="scharf")
    assert keep_values(game, FOREHAND)["JH"] == 12.8


# ---------------------------------------------------------------------------------------------------- follow scores
def follow_scores(agent: HeuristicAgent, points=0, pending=0, has_trick=True, opponent_points=0,
                  opponent_pending=0, loser_bonus=0.0, opponent_has_trick=True) -> dict[str, float]:
    """The dealer's score for each reply to forehand's led TC (hearts trump), by card name."""
    game = play(deal("TC 9D JD QS 9S AS", "JH 9C AC KD QD TS", trump="KH"), "play TC")
    infoset = InformationSet(game, DEALER)
    context = agent._context(infoset, infoset.hand, agent._my_others(infoset))
    cards = [parse_card(name) for name in ("JH", "9C", "AC", "KD", "QD", "TS")]
    scores = follow_card_scores(cards, infoset.hand, parse_card("TC"), context, points, pending, has_trick,
                                opponent_points, opponent_pending, loser_bonus, opponent_has_trick)
    return {name: score for name, (score, _card) in zip(("JH", "9C", "AC", "KD", "QD", "TS"), scores)}


def test_follow_scores_are_the_trick_won_or_given_minus_the_card_spent():
    """R6, R7: taking the led TC wins its points plus the card played, giving it away loses them; either way the
    card spent is worth its keep value (JH 12, AC 13, 9C 0, the pair KD 16.5 and QD 15.5, TS 7 with its ace out).
    ``loser_bonus`` (the face-up card the loser of the talon's last trick takes) counts only for losing cards."""
    assert follow_scores(HeuristicAgent()) == {"JH": 0.0, "9C": -10.0, "AC": 8.0, "KD": -30.5, "QD": -28.5,
                                               "TS": -27.0}
    with_bonus = follow_scores(HeuristicAgent(), loser_bonus=5.0)
    assert with_bonus == {"JH": 0.0, "9C": -5.0, "AC": 8.0, "KD": -25.5, "QD": -23.5, "TS": -22.0}


def test_follow_scores_win_bonus_at_exactly_66_counting_pending_marriages():
    """R12, R13: a trick that brings the follower to 66, his pending marriage points counted (they count with his
    first trick), wins the deal; one that brings the opponent (the leader) to 66 loses it. Exactly 66 suffices."""
    plain = follow_scores(HeuristicAgent())
    assert follow_scores(HeuristicAgent(), points=45)["AC"] == plain["AC"] + WIN_BONUS  # 45 + 21 = 66
    assert follow_scores(HeuristicAgent(), points=44)["AC"] == plain["AC"]
    pending = follow_scores(HeuristicAgent(), points=25, pending=20, has_trick=False)
    assert pending["AC"] == plain["AC"] + WIN_BONUS and pending["JH"] == plain["JH"]  # 25 + 20 + 12 < 66
    assert follow_scores(HeuristicAgent(), opponent_points=56)["9C"] == plain["9C"] - WIN_BONUS  # 56 + 10 = 66
    assert follow_scores(HeuristicAgent(), opponent_points=55)["9C"] == plain["9C"]
    opponent_pending = follow_scores(HeuristicAgent(), opponent_points=36, opponent_pending=20)
    assert opponent_pending["9C"] == plain["9C"] - WIN_BONUS and opponent_pending["TS"] == plain["TS"] - WIN_BONUS


def test_follow_scores_first_trick_terms_of_the_weights():
    """R12, R16: ``first_trick_bonus`` and ``pending_share`` credit the follower's first trick (his pending
    marriages start to count, he escapes the 3-point loss); ``deny_first_trick`` charges a trick given to a
    trickless opponent. All three are 0 by default, so they only show with other weights."""
    weights = Weights(first_trick_bonus=5.0, pending_share=0.5, deny_first_trick=3.0)
    agent = HeuristicAgent(weights=weights)
    base = follow_scores(agent)
    first = follow_scores(agent, pending=20, has_trick=False)
    assert first["AC"] == base["AC"] + 5.0 + 10.0 and first["9C"] == base["9C"]
    denied = follow_scores(agent, opponent_has_trick=False)
    assert denied["9C"] == base["9C"] - 3.0 and denied["AC"] == base["AC"]


# ---------------------------------------------------------------------------------------------------- bookkeeping
def test_marriage_totals_and_points_pending_until_the_first_trick():
    """R11, R12: forehand shows the 40 (hearts trump) with his first lead; its points are pending, for him only,
    until he wins a trick, and stay in his marriage total after that."""
    game = play(deal("QH KH AC 9D JD 9S", "9C JC QC TD KD AS", trump="9H"), "marry QH")
    infoset = InformationSet(game, DEALER)
    assert (marriage_total(infoset, FOREHAND), marriage_total(infoset, DEALER)) == (40, 0)
    assert (pending_marriage_points(infoset, FOREHAND), pending_marriage_points(infoset, DEALER)) == (40, 0)
    play(game, "play 9C")  # the dealer throws a club: forehand's QH takes the trick (R6)
    infoset = InformationSet(game, FOREHAND)
    assert infoset.tricks_won[FOREHAND] and marriage_total(infoset, FOREHAND) == 40
    assert pending_marriage_points(infoset, FOREHAND) == 0


def test_r11_heuristic_shows_the_clubs_marriage():
    """R11: the Queen of clubs' marriage (action ``marry QC``, the first marriage id) is shown like any other,
    leading the Queen."""
    game = deal("QC KC 9D JD 9S JS", "AC TC AD TD AS TS", trump="9H")
    agent = HeuristicAgent(seed=0)
    agent.start_deal(FOREHAND, game.rules)
    assert agent.act(InformationSet(game, FOREHAND)) == parse_action("marry QC")


def test_r8_r10_a_closing_starts_phase2_with_the_talon_still_there():
    """R8, R10: after a closing phase 2 applies although the talon still holds its cards."""
    game = deal("AH TH KH QH AC TC", "9C JC 9D JD QD 9S", trump="JH")
    assert not is_phase2(InformationSet(game, FOREHAND))
    game.apply(CLOSE)
    infoset = InformationSet(game, DEALER)
    assert infoset.talon_size > 0 and is_phase2(infoset)


# ---------------------------------------------------------------------------------------------------- closing (R10)
SURE_CLOSER = ("AH TH KH QH AC TC", "9C JC 9D JD QD 9S", "JH")  # R10: closing wins 3 in every world (R16)


def test_r10_closing_thresholds_are_inclusive_and_both_needed():
    """R10: a closing needs both the mean game points (``close_min_value``) and the share of won worlds
    (``close_min_win``), each reached or passed: the sure closer's worlds are worth 3 each, all won."""
    def closes(**thresholds) -> bool:
        game = deal(*SURE_CLOSER)
        agent = HeuristicAgent(seed=0, **thresholds)
        agent.start_deal(FOREHAND, game.rules)
        return agent.act(InformationSet(game, FOREHAND)) == CLOSE

    assert closes(close_min_value=3.0, close_min_win=1.0)
    assert not closes(close_min_value=3.5, close_min_win=0.0)


def test_r10_the_closing_filter_counts_top_cards_and_pairs():
    """R10 ``close_filter``: before any world is solved, my points, my top cards (a trump, ace or ten no card still
    out can beat: its points plus 4) and my pairs (20, 40 in trump) must reach the filter (56 by default).
    AH 15 + AC 15 + TC 14 (its ace is mine) + the spades pair 20 = 64; AH 15 + TH 14 + the spades pair 20 = 49."""
    def plausible(forehand: str, weights: Weights = DEFAULT_WEIGHTS) -> bool:
        game = deal(forehand, "9C JC QC 9S JS TS", trump="JH")
        return HeuristicAgent(weights=weights)._close_plausible(InformationSet(game, FOREHAND))

    assert plausible("AH TC AC QS KS 9D")
    assert plausible("AH TC AC QS KS 9D", Weights(close_filter=64.0))
    assert not plausible("AH TC AC QS KS 9D", Weights(close_filter=64.5))
    assert not plausible("AH TH KS QS 9D JD")
    assert plausible("AH TH KS QS 9D JD", Weights(close_filter=49.0))
    assert not plausible("AH TH KS QS 9D JD", Weights(close_filter=49.5))


def test_r10_close_min_win_may_be_every_world():
    """``close_min_win`` is a share between 0 and 1, both ends included: 1 asks every sampled world to be won."""
    assert HeuristicAgent(close_min_win=1).close_min_win == 1.0
    assert HeuristicAgent(close_min_win=0).close_min_win == 0.0
    with pytest.raises(ValueError, match="close_min_win"):
        HeuristicAgent(close_min_win=1.01)


# ------------------------------------------------------------------------------------ the talon's last trick (R7)
def last_talon_trick() -> Game:
    """Forehand wins five tricks with his aces and tens (R6), so after them one face-down card (KS) is left above the
    face-up KH (hearts trump) and forehand leads TS to the talon's last trick (R7); the dealer still holds the trump
    nine (he never led, so he could not exchange it, R9) and QS, whose King is the last face-down card."""
    game = deal("AC TC AD TD AS TS", "9H QS 9C JC 9D JD", trump="KH", talon="KC 9S KD JS QC JH QD AH TH QH KS")
    play(game, "play AC", "play 9C", "play TC", "play JC", "play AD", "play 9D", "play TD", "play JD", "play AS",
         "play 9S")
    assert game.face_down_count == 1 and game.bottom_card == parse_card("KH")
    return play(game, "play TS")


def test_r7_last_talon_trick_keep_values_and_the_losers_face_up_card():
    """R7, R9: on the talon's last trick the talon is still open: the trump nine may still be exchanged (12.8),
    and QS's King may still be drawn (3.5 + 2). The loser of this trick takes the known KH, which completes the
    dealer's trump pair (16 + 0.6 * 40), against an unknown card worth ``average_draw`` (6): losing is worth 34."""
    game = last_talon_trick()
    assert keep_values(game, DEALER) == {"9H": 12.8, "JH": 12.0, "QH": 19.0, "AH": 32.0, "JS": 2.0, "QS": 5.5}
    agent = HeuristicAgent(seed=0)
    infoset = InformationSet(game, DEALER)
    context = agent._context(infoset, infoset.hand, agent._my_others(infoset))
    assert agent._bottom_bonus(infoset, infoset.hand, context) == 40.0 - 6.0


def test_r13_declares_at_exactly_66_when_declaring_is_manual():
    """R13 (``auto_declare`` off): with exactly 66 counted points (a shown 20 counted after a trick, R12) both rule
    players declare rather than play on."""
    rules = Rules.preset("standard", auto_declare=False)
    deck = ["KC", "9D", "JD", "TS", "JS", "TC", "QC", "JC", "9C", "TD", "AD", "QS", "KH", "AC", "AH", "JH", "QD", "9S",
            "TH", "AS", "QH", "KD", "KS", "9H"]
    game = Game.deal(rules, deck=deck, dealer=0)
    play(game, "marry QC", "play TC", "play AC", "play AH", "play KC", "play JS", "play JC", "play QD", "play AS",
         "play QH", "play AD", "play JH")
    player = game.current_player
    assert game.points(player) == 66 and len(game.legal_actions()) > 2
    for agent in (HeuristicAgent(seed=0), GreedyAgent(seed=0)):
        agent.start_deal(player, rules)
        assert agent.act(InformationSet(game, player)) == DECLARE, agent.name


def test_r8_without_the_solver_phase2_is_won_with_the_cheapest_winner():
    """R8, ``use_solver=false`` (the ablation): after forehand's closing (R10) the dealer must take the led JC with
    a higher club; playing by rules he takes it with the King (4 points) and keeps the Ace."""
    game = play(deal("AH TH KH QH JC TC", "AC KC 9D JD QD 9S", trump="9H"), "close", "play JC")
    agent = HeuristicAgent(seed=0, use_solver=False)
    agent.start_deal(DEALER, game.rules)
    assert game.legal_actions() == [parse_card("KC"), parse_card("AC")]
    assert agent.act(InformationSet(game, DEALER)) == parse_card("KC")


# ---------------------------------------------------------------------------------------------------- decisions
# Diamonds trump (9D turned up); the dealer (player 0) takes forehand's 9H with the AH and shows the 20 in hearts and
# in spades (R11), so he counts 11 + 20 + 3 + 20 = 54 points after the third trick (R12), which forehand wins.
RACE_DECK = ["AS", "QC", "9H", "QH", "TC", "KC", "TD", "JH", "QD", "AH", "QS", "JS", "9D", "KH", "9S", "KS", "JD", "9C",
             "KD", "TS", "TH", "JC", "AD", "AC"]
RACE = ("play 9H", "play AH", "marry QH", "play 9S", "marry QS", "play AS")


def choices(game: Game, seeds=range(3), **parameters) -> set[int]:
    """The heuristic's actions for the player to move, over several agent seeds (its sampled hands differ)."""
    found = set()
    for seed in seeds:
        agent = HeuristicAgent(seed=seed, **parameters)
        agent.start_deal(game.current_player, game.rules)
        found.add(agent.act(InformationSet(game, game.current_player)))
    return found


def test_r9_r10_in_the_predraw_stage_the_heuristic_exchanges_first():
    """Paderborn: the trick winner holding the trump nine exchanges it before he chooses to close or draw (R9 comes
    before R10 in a turn, as at a lead: the face-up trump beats the nine); then he chooses between the two."""
    from sixtysix_env.actions import EXCHANGE
    from sixtysix_env.game import PREDRAW

    game = play(deal("9C JC QC KC 9D JD", "9H AC TC AD TD AS", "JH", preset="paderborn"), "play 9C", "play AC")
    assert game.stage == PREDRAW and EXCHANGE in game.legal_actions()
    assert choices(game) == {EXCHANGE}
    game.apply(EXCHANGE)
    assert choices(game) <= {CLOSE, DRAW}


def test_r13_the_follower_takes_a_trick_that_would_bring_the_leader_to_66():
    """R13: the dealer has 64 points and leads JS; whatever card forehand gives up would bring him to 66, so
    forehand takes the trick with his cheapest trump, JD (R6), rather than throw a card."""
    game = play(Game.deal(Rules(), deck=RACE_DECK, dealer=0), *RACE, "play 9C", "play TC", "play JS")
    assert game.points(DEALER) == 64 and game.current_player == FOREHAND
    assert choices(game, seeds=[0]) == {parse_card("JD")}


def test_r13_the_leader_avoids_a_lead_that_lets_the_opponent_reach_66():
    """R13: the dealer has 54 points; forehand leads the 9C, which no reply can turn into the dealer's 66
    (54 + 0 + at most 11), not the JH, which the dealer's AH could take for 67; over every sampled opponent hand."""
    game = play(Game.deal(Rules(), deck=RACE_DECK, dealer=0), *RACE)
    assert game.points(DEALER) == 54 and game.current_player == FOREHAND
    assert choices(game) == {parse_card("9C")}


# Hearts trump; forehand (player 0, dealer 1) exchanged the trump nine at once (R9), so the 9H lies under the talon.
# After five tricks one face-down card is left and player 1 leads to the talon's last trick (R7).
LAST_TRICK_DECK = ["QS", "9H", "QD", "QC", "KH", "TC", "AH", "JD", "9S", "TS", "9D", "AD", "QH", "JH", "TH", "KC", "TD",
                   "AS", "JS", "JC", "9C", "KS", "AC", "KD"]
LAST_TRICK = ("exchange", "play 9S", "play TS", "play 9D", "play JD", "play QS", "play JH", "play TD", "play TH",
              "play JS", "play AS")


def test_r7_r8_the_talons_last_trick_is_searched_into_phase2():
    """R7, R8: on the talon's last trick the heuristic plays each lead, lets the opponent find his best reply in
    every layout of the hidden cards, and solves the phase-2 position exactly: it leads the KH. Without
    ``endgame_lookahead`` the phase-1 lead rules choose the 9C. Answering the KH, the opponent's search takes it with
    the AH (the rules would throw the JC)."""
    game = play(Game.deal(Rules(), deck=LAST_TRICK_DECK, dealer=1), *LAST_TRICK)
    assert game.face_down_count == 1 and game.current_player == 1
    assert choices(game) == {parse_card("KH")}
    assert choices(game, endgame_lookahead=False) == {parse_card("9C")}
    play(game, "play KH")
    assert choices(game) == {parse_card("AH")}
    assert choices(game, endgame_lookahead=False) == {parse_card("JC")}


def test_r10_paderborn_closes_before_drawing_when_the_solved_worlds_say_so():
    """R10 (paderborn ``close_draw_option``): after winning a trick the winner may close before drawing; holding
    the four top hearts (trump) and the TC he closes rather than draw."""
    game = play(deal(*SURE_CLOSER, preset="paderborn"), "play AC", "play 9C")
    assert game.legal_actions() == [CLOSE, DRAW]
    assert choices(game) == {CLOSE}


def test_r12_pending_share_credits_the_first_trick_with_the_shown_marriage():
    """R12 ``pending_share``: forehand showed the 40 and lost the trick, so his 40 count only once he wins one.
    By default he throws the 9S on the dealer's worthless 9D; when a first trick is credited with all pending
    points (``pending_share=1``) he takes it with the KH."""
    game = play(deal("QH KH 9C JC 9S JS", "AH TC AC TD AS 9D", trump="JH"), "marry QH", "play AH", "play 9D")
    assert choices(game) == {parse_card("9S")}
    assert choices(game, weights=Weights(pending_share=1.0)) == {parse_card("KH")}


def test_r16_deny_first_trick_charges_only_a_trick_given_to_a_trickless_opponent():
    """R16 ``deny_first_trick``: the dealer, still trickless, follows forehand's 9D; forehand has a trick already,
    so giving him this one denies nothing and the dealer throws the 9C even when denying is worth much."""
    game = play(deal("AC TC 9D JD 9S JS", "JH 9C JC QD KD TS", trump="9H", talon="KC QS"), "play AC", "play JC",
                "play 9D")
    assert game.tricks_won[FOREHAND] and not game.tricks_won[DEALER]
    assert choices(game, weights=Weights(deny_first_trick=30.0)) == {parse_card("9C")}


def test_r9_the_exchanged_nine_under_the_talon_has_no_exchange_worth():
    """R7, R9: the nine laid under the talon by an exchange is the card the loser of the talon's last trick takes;
    it can no longer be exchanged, so it is worth a plain trump nine (11) even with weights that make an
    exchangeable nine worth more (``exchange_nine`` 2: 2 * 11 = 22)."""
    game = play(Game.deal(Rules(), deck=LAST_TRICK_DECK, dealer=1), *LAST_TRICK)
    assert game.bottom_card == parse_card("9H")
    agent = HeuristicAgent(seed=0, weights=Weights(exchange_nine=2.0))
    infoset = InformationSet(game, game.current_player)
    context = agent._context(infoset, infoset.hand, agent._my_others(infoset))
    assert agent._bottom_bonus(infoset, infoset.hand, context) == 11.0 - 6.0


def test_r7_equal_leads_go_to_the_lower_card():
    """R7: on the talon's last trick (clubs trump) the TH and the TS are alike for player 1: each is the top card of
    a plain suit whose ace is played. The phase-1 lead model ties them and takes the lower card (hearts before
    spades, as the compiled twin's ``best_lead`` does), and the search of the trick keeps that choice on a tie."""
    deck = ["TS", "JC", "TH", "AH", "KH", "AD", "QH", "9S", "AS", "QD", "TC", "JD", "AC", "9H", "9C", "9D", "TD", "JS",
            "KD", "KS", "KC", "JH", "QC", "QS"]
    game = play(Game.deal(Rules(), deck=deck, dealer=0), "play 9S", "play JD", "play 9H", "play TC", "play AH",
                "play AS", "exchange", "play 9D", "play KD", "play TD", "play KH")
    assert game.face_down_count == 1 and game.current_player == FOREHAND
    assert choices(game) == {parse_card("TH")}


# Hearts trump; forehand shows the 20 in clubs at once and the dealer takes it with the AC.
CLUBS_DECK = ["QC", "9D", "KD", "TH", "KH", "QD", "KC", "9C", "JH", "AC", "JS", "JD", "QH", "KS", "AS", "QS", "TD",
              "9H", "JC", "9S", "TS", "AD", "TC", "AH"]


def test_r7_the_lead_model_values_the_cards_the_opponent_still_may_meet():
    """R7: the modelled reply values the opponent's cards from his view: the cards still out are the talon and
    forehand's hand, never a card already played (here the AC, which took the shown QC). Forehand leads the 9C,
    not the 9D."""
    game = play(Game.deal(Rules(), deck=CLUBS_DECK, dealer=0), "marry QC", "play AC", "play JD", "play KD")
    assert game.current_player == FOREHAND
    assert choices(game) == {parse_card("9C")}


def test_r7_the_lead_model_counts_the_face_up_card_the_opponent_takes_when_he_loses():
    """R7, R9: on the talon's last trick the loser takes the face-up card (here the exchanged 9H): a lead the
    opponent lets pass is worth that much less. Forehand's phase-1 choice and his searched lead are the QS."""
    game = play(Game.deal(Rules(), deck=CLUBS_DECK, dealer=0), "marry QC", "play AC", "play JD", "play KD",
                "play 9C", "play JS", "exchange", "play 9D", "play TD", "play 9S", "play TS")
    assert game.face_down_count == 1 and game.bottom_card == parse_card("9H")
    for seed in range(3):
        assert HeuristicAgent(seed=seed)._phase1_lead_by_rules(InformationSet(game, FOREHAND)) == parse_card("QS")
    assert choices(game) == {parse_card("QS")}


def test_r11_r13_the_search_of_the_last_trick_shows_the_forty_that_wins():
    """R7, R11, R13: on the talon's last trick (hearts trump) forehand holds the 40 and 23 points; showing it
    (leading the QH) brings him to 63, and the search of the trick into phase 2, which values the deals it sees
    end for him from his seat, shows it rather than lead the QH without showing."""
    deck = ["9C", "AD", "TH", "QD", "9D", "AH", "TS", "KS", "AC", "KD", "QS", "TC", "9H", "JC", "JD", "KC", "TD", "KH",
            "AS", "JS", "QC", "QH", "JH", "9S"]
    game = play(Game.deal(Rules(), deck=deck, dealer=0), "play 9C", "play TC", "marry QD", "play AD", "play KC",
                "play 9D", "play JD", "play KD", "play JC", "play QC")
    assert game.face_down_count == 1 and game.points(FOREHAND) == 23
    assert choices(game) == {parse_action("marry QH")}


def test_r11_the_search_of_the_last_trick_tries_every_marriage_lead():
    """R7, R11: the search of the talon's last trick tries every action, a marriage led with its King among them,
    not only the phase-1 choice (the Queen). Diamonds trump; with every layout of the hidden cards searched
    (``endgame_worlds=8``) forehand's best is to show the 20 in clubs leading the KC."""
    deck = ["QD", "KH", "9S", "9D", "KC", "QC", "KD", "JH", "AC", "KS", "AS", "9C", "AD", "QS", "JS", "AH", "JC", "TS",
            "9H", "JD", "QH", "TC", "TD", "TH"]
    game = play(Game.deal(Rules(), deck=deck, dealer=1), "play 9S", "play AS", "play KS", "play JH", "play 9C",
                "play QD", "play JS", "play QS", "play 9D", "play KH")
    assert game.face_down_count == 1 and game.current_player == 1
    infoset = InformationSet(game, 1)
    assert infoset.unseen.bit_count() <= 8  # every layout: one unseen card face down, the others his
    assert choices(game, endgame_worlds=8) == {parse_action("marry KC")}


def test_r11_r13_a_marriage_that_reaches_exactly_66_is_shown_at_once():
    """R11, R12, R13: forehand (dealer 1) shows the 20 in clubs and wins the trick (26 points counted); holding the
    trump (diamonds) pair, showing the 40 brings him to exactly 66 and ends the deal: he shows it rather than
    close the talon (R10), which his hand would also justify."""
    deck = ["QD", "AC", "QC", "KH", "TS", "9D", "AS", "KD", "KC", "QS", "9C", "JS", "JD", "JH", "TC", "JC", "AD", "TD",
            "AH", "QH", "9H", "KS", "TH", "9S"]
    game = play(Game.deal(Rules(), deck=deck, dealer=1), "marry QC", "play QS")
    assert game.current_player == 0 and game.points(0) == 26 and CLOSE in game.legal_actions()
    assert choices(game) == {parse_action("marry QD")}


def test_r7_equal_follows_go_to_the_higher_card():
    """R7: on forehand's worthless 9D the dealer's 9C and 9S score alike (nothing won or given, nothing spent);
    the tie goes to the higher card, the 9S (as the compiled twin's follow rule does)."""
    game = play(deal("9D JD QS KS AS TD", "JH 9C 9S KC QD TS", trump="AH"), "play 9D")
    assert choices(game, seeds=[0]) == {parse_card("9S")}
