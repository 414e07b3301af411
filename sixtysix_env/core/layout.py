"""The compiled core's state: one deal as a fixed-size ``int64`` array, its slots named here.

Everything the rules (R4–R16) and the observation need is a small integer or a 24-bit card mask, so one deal is
:data:`STATE_SIZE` integers: copying it is one ``memcpy`` and a batch of deals is a 2-D array. Slots that come in
pairs (one per player) are ``NAME0`` and ``NAME0 + 1``. ``-1`` stands for "none" (no lead card, nobody closed, the
bottom card taken). This module is plain Python (no numba) so tools can read a state without compiling anything.
"""

from __future__ import annotations

from ..game import FOLLOW, LEAD, OVER, PREDRAW, RESPOND_CLOSE, RESULT_REASONS  # stage ids shared with game.py

# --- per-player pairs (player 0 at the slot, player 1 at slot + 1) -------------------------------------------
HAND0 = 0  # cards in hand (mask)
TRICK_POINTS0 = 2  # card points in won tricks (R1), the last-trick bonus included (R14)
MARRIAGE_POINTS0 = 4  # announced marriages (R11), counted only with a trick (R12)
TRICKS_WON0 = 6
WON_CARDS0 = 8  # cards in won tricks (mask)
PLAYED0 = 10  # cards the player played in completed tricks (mask)
SHOWN0 = 12  # cards the player has shown to hold: marriage pairs (R11), exchange (R9), bottom card taken (R7)
CANNOT_HOLD0 = 14  # cards the player's OPPONENT showed he cannot hold when following the player's leads (R8)
MARRIED_SUITS0 = 16  # suits of the player's announced marriages (4 bits)
# --- the deal ----------------------------------------------------------------------------------------------
STAGE = 18  # LEAD / FOLLOW / PREDRAW / RESPOND_CLOSE / OVER (the ids of game.py)
TO_MOVE = 19  # the player to decide, -1 once over
LEADER = 20
LEAD_CARD = 21  # the card on the table, -1 at a lead
LEAD_WAS_MARRIAGE = 22
TURN_STEP = 23  # 0 nothing yet this turn, 1 exchanged, 2 closed (R9 -> R10 -> R11 order)
PHASE2 = 24  # R8 follow rules in force (talon exhausted or closed)
TRUMP_SUIT = 25
TRUMP_CARD = 26  # the card turned up (R4)
EXCHANGE_CARD = 27  # the trump nine, or the trump jack with 20 cards (R9, R2)
STOCK_POS = 28  # face-down talon cards drawn so far
STOCK_LEN = 29  # face-down talon cards at the deal: 11, or 7 with 20 cards (R4)
BOTTOM_CARD = 30  # the card under the talon (trump card or exchanged nine), -1 once taken (R7)
BOTTOM_TAKER = 31  # who took it with the talon's last trick, -1 before
CLOSED_BY = 32  # -1 unless closed (R10)
OPPONENT_TRICKLESS_AT_CLOSE = 33  # R16: the closer's opponent had no trick when the talon was closed
CLOSED_AT_TRICK = 34  # -1 unless closed
TRICK_COUNT = 35  # completed tricks
DEALER = 36
RULE_BITS = 37  # the rule switches, bit i = observation.RULE_FLAGS[i]
WINNER = 38  # -1 until over, and when the deal is not scored (R15)
GAME_POINTS = 39  # R16
REASON = 40  # index into game.RESULT_REASONS
STOCK = 41  # 11 slots: the face-down talon, top first (R4); unused slots -1
STOCK_SLOTS = 11
LED0 = STOCK + STOCK_SLOTS  # cards the player led in completed tricks (mask; a pair, player 0 at 52)
STATE_SIZE = LED0 + 2  # 54

# The rule bits (same order as observation.RULE_FLAGS; a test checks it).
RULE_DECK_20 = 1 << 0
RULE_EXCHANGE_NEEDS_TRICK = 1 << 1
RULE_EXCHANGE_AFTER_OPPONENT_CLOSES = 1 << 2
RULE_CLOSE_DRAW_OPTION = 1 << 3
RULE_MARRIAGE_NEEDS_TRICK = 1 << 4
RULE_MARRIAGE_IN_PHASE2 = 1 << 5
RULE_AUTO_DECLARE = 1 << 6
RULE_ALLOW_FALSE_DECLARATION = 1 << 7

# Result reasons, as indices of game.RESULT_REASONS.
REASON_DECLARED, REASON_CLOSER_FAILED, REASON_LAST_TRICK, REASON_RENONCE, REASON_FALSE_DECLARATION, \
    REASON_NOT_SCORED = range(len(RESULT_REASONS))

__all__ = [name for name in dir() if name.isupper()] + ["FOLLOW", "LEAD", "OVER", "PREDRAW", "RESPOND_CLOSE"]
