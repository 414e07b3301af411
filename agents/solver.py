"""Exact solver for perfect-information phase-2 positions of Sixty-six (RULES R6, R8, R11–R16).

Once the talon is exhausted or closed nobody draws any more, and a player who counts the cards knows both hands
(after a closing: in each world PIMC samples), so the rest of the deal is a two-player zero-sum game of perfect
information. :func:`solve` returns its game-point value for the player to move (``game.result.returns()[player]``
under optimal play by both) and a best action; :func:`solve_all_actions` the exact value of every legal action
(what PIMC averages over sampled worlds); :func:`solve_value` only the value; :func:`solve_value_within` the
value searched within an alpha-beta window (for searches built on top of the solver).

The search does not clone :class:`~sixtysix_env.game.Game` objects: it runs over plain integers (hand masks,
trick and marriage points, trick flags) and replicates the engine's phase-2 transitions exactly:

* R8 follow rules (win in suit, else follow suit, else trump, else anything) and R6 trick winners;
* R11 marriages as lead actions (``marriage_in_phase2``, ``marriage_needs_trick``; without
  ``marriage_in_phase2`` the closer's marriage on his closing turn is taken from the engine's legal actions),
  with the instant declaration when the announcement reaches 66 (R12 counting);
* R13 declarations: automatic at 66 with ``auto_declare``, otherwise a ``declare`` action, and false
  declarations with ``allow_false_declaration``;
* R14/R15 last trick (+10, not after a closing; 65:65 not scored) and R16 game points, including a failed
  closer (2, or 3 if the opponent was trickless at the closing).

Where the rules allow (``auto_declare`` on, no false declarations: every preset), the searches run on the compiled
core's solver (:mod:`sixtysix_env.core.solver`, about 3x faster cold and much faster on large positions); the
pure-Python search below serves the manual-declaring switches the core does not implement, and is the reference
the core's solver is tested against.

The Python search is fail-soft alpha-beta over whole tricks (the leader's choice and the follower's reply in one frame) with a
transposition table of value bounds, static bounds from R16 (a side whose opponent has won a trick can no longer
score 3, and at most 1 once the opponent counts 33 points) and cheap move ordering (most card points first, the
table's best move before all). Values are small integers (-3..3), so the bounds prune most of the tree. A table
is kept per context (trump suit, closing, rule switches) across calls, since its keys hold the whole position.
``tests/test_solver.py`` checks the solver against exhaustive minimax over the engine itself on random positions
of every preset; ``python -m bench.solver_bench`` times it.
"""

from __future__ import annotations

from typing import NamedTuple

from sixtysix_env.actions import CLOSE, DECLARE, EXCHANGE, MARRY_BASE, PASS
from sixtysix_env.cards import CARD_POINTS, HIGHER_IN_SUIT, SUIT_MASKS
from sixtysix_env.game import FOLLOW, LEAD, RESPOND_CLOSE, Game

GOAL = 66  # R13
LAST_TRICK_BONUS = 10  # R14
SCHNEIDER_LIMIT = 32  # R16

# Internal lead-move codes: a card id (plain lead), MARRIAGE_FLAG + card (announce and lead, R11), or DECLARE_MOVE.
MARRIAGE_FLAG = 32
DECLARE_MOVE = 64

_LOW_HALF = tuple(tuple(c for c in range(12) if half >> c & 1) for half in range(1 << 12))
_HIGH_HALF = tuple(tuple(c + 12 for c in range(12) if half >> c & 1) for half in range(1 << 12))


# Card points in each half of a mask (R1).
_LOW_POINTS = tuple(sum(CARD_POINTS[c] for c in cards) for cards in _LOW_HALF)
_HIGH_POINTS = tuple(sum(CARD_POINTS[c] for c in cards) for cards in _HIGH_HALF)


def _cards(mask: int) -> tuple[int, ...]:
    """Card ids in a mask, ascending."""
    return _LOW_HALF[mask & 0xFFF] + _HIGH_HALF[mask >> 12]


class SolveResult(NamedTuple):
    """``value``: game points for the player to move under optimal play (-3..3); ``best_action``: an action id
    that achieves it."""

    value: int
    best_action: int


def _move_to_action(move: int) -> int:
    if move == DECLARE_MOVE:
        return DECLARE
    if move >= MARRIAGE_FLAG:
        card = move - MARRIAGE_FLAG
        return MARRY_BASE + 2 * (card // 6) + (card % 6 == 3)  # 0 Queen, 1 King (actions.marry_action)
    return move


def _check_position(game: Game) -> None:
    if not isinstance(game, Game):
        raise ValueError(f"solve needs a Game, got {type(game).__name__}")
    if game.is_over:
        raise ValueError("solve needs a deal in progress; this deal is over")
    if not game.phase2:
        raise ValueError("solve needs a phase-2 position (talon exhausted or closed, R8); the talon is still open")
    if game.stage not in (LEAD, FOLLOW):
        raise ValueError(
            f"solve needs a lead or follow decision; the player to move faces stage {game.stage} "
            "(e.g. the exchange offered after a closing, R9): apply that action first"
        )


class _Search:
    """The search for one fixed context: trump suit, who closed (and whether his opponent was trickless then) and
    the rule switches. Positions are plain integers, so the transposition table stays valid across every
    position of the same context and is kept between calls (:func:`_search_for`).

    ``node`` and ``last`` are closures over the context so the hot loop reads only local and cell variables."""

    def __init__(self, trump_suit: int, closed_by: int, trickless_at_close: bool, auto_declare: bool,
                 allow_false: bool, declare_offered: bool, marriage_in_phase2: bool, marriage_needs_trick: bool):
        trump_mask = SUIT_MASKS[trump_suit]
        points = CARD_POINTS
        higher_in_suit = HIGHER_IN_SUIT
        suit_masks = SUIT_MASKS
        cards = _cards
        # beats[c]: follow cards that win against lead c (R6): higher in suit, or any trump on a non-trump lead.
        beats = tuple(higher_in_suit[c] | (0 if trump_mask >> c & 1 else trump_mask) for c in range(24))
        # hand -> its cards in lead_rank order (memo), as bytes. The tables hold only ints and bytes, which the
        # cyclic garbage collector does not track: a dict of them stays untracked too, so large tables add nothing
        # to collection pauses (tuples would, costing 100 ms pauses in long PIMC runs).
        lead_order: dict[int, bytes] = {}
        self.lead_order = lead_order
        low_half = _LOW_HALF
        high_half = _HIGH_HALF
        lead_rank = tuple(-points[c] * 4 - (trump_mask >> c & 1) for c in range(24))  # most points first
        marriage_gain = tuple(40 if suit == trump_suit else 20 for suit in range(4))  # R11
        queens = sum(1 << (suit * 6 + 2) for suit in range(4))
        may_marry_base = marriage_in_phase2
        table: dict[int, int] = {}
        closer_must_fail = closed_by >= 0 and not allow_false
        closer_failed = 3 if trickless_at_close else 2  # what the closer's opponent scores then (R16)
        low_points = _LOW_POINTS
        high_points = _HIGH_POINTS
        self.table = table
        self.trump_mask = trump_mask

        def declare_value(player: int, mine: int, theirs: int, they_have_trick: int) -> int:
            """Game points for ``player`` declaring with counted points ``mine`` against ``theirs`` (R13, R16)."""
            if mine < GOAL:  # R13 allow_false_declaration
                return -2 if they_have_trick else -3
            if closed_by == 1 - player:  # R16: the closer's opponent declared first
                return 3 if trickless_at_close else 2
            if not they_have_trick:
                return 3
            return 2 if theirs <= SCHNEIDER_LIMIT else 1

        def finish_value(winner: int, tp_w: int, mp_w: int, tp_o: int, mp_o: int, tw_o: int) -> int:
            """Game points for ``winner`` of the last trick (he has a trick now), all cards played (R14–R16)."""
            mine = tp_w + mp_w
            theirs = tp_o + mp_o if tw_o else tp_o
            if closed_by >= 0:
                if closed_by == winner:
                    if mine >= GOAL:
                        return 3 if not tw_o else (2 if theirs <= SCHNEIDER_LIMIT else 1)
                    return -3 if trickless_at_close else -2
                # The closer lost the last trick: below 66 he failed; at 66 or more he let his turns to declare pass
                # (manual declaring; with auto_declare he would have declared) and has none left: failed (R10, R16).
                return 3 if trickless_at_close else 2
            mine += LAST_TRICK_BONUS  # R14
            if mine == theirs:
                return 0  # R15: 65:65 is not scored
            if mine > theirs:
                return 3 if not tw_o else (2 if theirs <= SCHNEIDER_LIMIT else 1)
            return -2 if mine <= SCHNEIDER_LIMIT else -1

        def upper_bound(leader: int, tw_l: int, tw_f: int, follower_low: int) -> int:
            """The most game points any continuation can give ``leader`` (R13, R16): the first line against the
            follower (3 while he is trickless, 2 while he counts at most 32: ``follower_low``), a failed closing
            by the follower, or a false declaration by him."""
            if closed_by == 1 - leader:
                best = 3 if trickless_at_close else 2
            elif not tw_f:
                return 3
            else:
                best = 2 if follower_low else 1
            if allow_false and best < 3:
                false_declared = 2 if tw_l else 3
                if false_declared > best:
                    best = false_declared
            return best

        # The bound as a table: index leader * 8 + tw_l * 4 + tw_f * 2 + follower_low.
        bounds = tuple(upper_bound(i >> 3, i >> 2 & 1, i >> 1 & 1, i & 1) for i in range(16))

        def last(hl, hf, tpl, tpf, mpl, mpf, twl, twf, leader):
            """Value for ``leader`` with one card each: the follow is forced (R14, R15); without
            ``auto_declare`` he may declare first (R13)."""
            c = hl.bit_length() - 1
            f = hf.bit_length() - 1
            gained = points[c] + points[f]
            if beats[c] >> f & 1:
                value = -finish_value(1 - leader, tpf + gained, mpf, tpl, mpl, twl)
            else:
                value = finish_value(leader, tpl + gained, mpl, tpf, mpf, twf)
            if declare_offered and twl:  # R13: on a turn after winning a trick (Game._may_declare)
                counted_l = tpl + mpl
                if allow_false or counted_l >= GOAL:
                    declared = declare_value(leader, counted_l, tpf + mpf if twf else tpf, twf)
                    if declared > value:
                        value = declared
            return value

        def node(hl, hf, tpl, tpf, mpl, mpf, twl, twf, leader, alpha, beta, first):
            """Value for ``leader`` (about to lead, at least two cards each) within the window (alpha, beta),
            fail-soft. ``first``: marriages are allowed here although ``marriage_in_phase2`` is off (the closer's
            own closing turn, R11)."""
            if closer_must_fail:
                # R16: a closer who cannot reach 66 even with every card left and every marriage he holds has
                # failed, whatever is played (without false declarations, R13).
                both = hl | hf
                if closed_by == leader:
                    hand, reach = hl, tpl + mpl
                else:
                    hand, reach = hf, tpf + mpf
                reach += low_points[both & 0xFFF] + high_points[both >> 12]
                pairs = hand & (hand >> 1) & queens
                while pairs:
                    q = pairs & -pairs
                    reach += marriage_gain[q.bit_length() // 6]
                    pairs ^= q
                if reach < GOAL:
                    return -closer_failed if closed_by == leader else closer_failed
            counted_l = tpl + mpl if twl else tpl
            counted_f = tpf + mpf if twf else tpf
            # R16 bounds for both sides.
            upper = bounds[leader << 3 | twl << 2 | twf << 1 | (counted_f <= SCHNEIDER_LIMIT)]
            lower = -bounds[(1 - leader) << 3 | twf << 2 | twl << 1 | (counted_l <= SCHNEIDER_LIMIT)]
            if upper <= alpha:
                return upper
            if lower >= beta:
                return lower
            if upper < beta:
                beta = upper
            if lower > alpha:
                alpha = lower
            key = (hl | hf << 24 | leader << 48 | twl << 49 | twf << 50 | first << 51 | tpl << 52 | tpf << 60
                   | mpl << 68 | mpf << 76)
            entry = table.get(key)
            hint = -1
            if entry is not None:
                # Packed entry: (lower bound + 4) | (upper bound + 4) << 3 | best move << 6.
                low = (entry & 7) - 4
                high = (entry >> 3 & 7) - 4
                hint = entry >> 6
                if low >= beta:
                    return low
                if high <= alpha:
                    return high
                if low > alpha:
                    alpha = low
                if high < beta:
                    beta = high
            alpha0 = alpha
            beta0 = beta

            # Lead moves: the table's best move, a declaration (R13), marriages (R11), then the cards, most points
            # first (the follower's replies in card order: ordering them measured no gain).
            moves = []
            if declare_offered and twl and (allow_false or counted_l >= GOAL):  # R13, as Game._may_declare
                moves.append(DECLARE_MOVE)
            pairs = hl & (hl >> 1) & queens
            if pairs and (twl or not marriage_needs_trick) and (may_marry_base or first):
                for q in cards(pairs):
                    moves.append(MARRIAGE_FLAG + q + 1)
                    moves.append(MARRIAGE_FLAG + q)
            ordered = lead_order.get(hl)
            if ordered is None:
                ordered = lead_order[hl] = bytes(sorted(cards(hl), key=lead_rank.__getitem__))
            moves += ordered
            if hint >= 0 and moves[0] != hint:
                moves.remove(hint)
                moves.insert(0, hint)
            rest = hl & (hl - 1)
            to_last = not rest & (rest - 1)  # two cards each: the reply ends in the last trick

            best = -4
            best_move = moves[0]
            for move in moves:
                if move == DECLARE_MOVE:
                    value = declare_value(leader, counted_l, counted_f, twf)
                else:
                    c = move
                    mpl2 = mpl
                    if move >= MARRIAGE_FLAG:
                        c = move - MARRIAGE_FLAG
                        mpl2 = mpl + marriage_gain[c // 6]
                        if twl and tpl + mpl2 >= GOAL:  # R11: the announcement reaches 66, the deal ends
                            value = declare_value(leader, tpl + mpl2, counted_f, twf)
                            if value > best:
                                best = value
                                best_move = move
                                if value > alpha:
                                    alpha = value
                                    if alpha >= beta:
                                        break
                            continue
                    hl2 = hl ^ (1 << c)
                    # R8 follow options.
                    options = hf & higher_in_suit[c]
                    if not options:
                        options = hf & suit_masks[c // 6]
                        if not options:
                            options = hf & trump_mask
                            if not options:
                                options = hf
                    beat = beats[c]
                    value = 4  # the follower minimises the leader's value
                    for f in low_half[options & 0xFFF] + high_half[options >> 12]:
                        gained = points[c] + points[f]
                        hf2 = hf ^ (1 << f)
                        if beat >> f & 1:
                            tpf2 = tpf + gained
                            if auto_declare and tpf2 + mpf >= GOAL:  # R13 auto_declare (R12: he has a trick now)
                                reply = -declare_value(1 - leader, tpf2 + mpf, tpl + mpl2 if twl else tpl, twl)
                            elif to_last:
                                reply = -last(hf2, hl2, tpf2, tpl, mpf, mpl2, 1, twl, 1 - leader)
                            else:
                                reply = -node(hf2, hl2, tpf2, tpl, mpf, mpl2, 1, twl, 1 - leader,
                                              -(beta if beta < value else value), -alpha, 0)
                        else:
                            tpl2 = tpl + gained
                            if auto_declare and tpl2 + mpl2 >= GOAL:
                                reply = declare_value(leader, tpl2 + mpl2, counted_f, twf)
                            elif to_last:
                                reply = last(hl2, hf2, tpl2, tpf, mpl2, mpf, 1, twf, leader)
                            else:
                                reply = node(hl2, hf2, tpl2, tpf, mpl2, mpf, 1, twf, leader, alpha,
                                             beta if beta < value else value, 0)
                        if reply < value:
                            value = reply
                            if value <= alpha:
                                break
                if value > best:
                    best = value
                    best_move = move
                    if value > alpha:
                        alpha = value
                        if alpha >= beta:
                            break
            # Store bounds (fail-soft): exact when inside the window.
            if best <= alpha0:
                low, high = lower, best
            elif best >= beta0:
                low, high = best, upper
            else:
                low = high = best
            if entry is not None:
                if (entry & 7) - 4 > low:
                    low = (entry & 7) - 4
                if (entry >> 3 & 7) - 4 < high:
                    high = (entry >> 3 & 7) - 4
            table[key] = (low + 4) | (high + 4) << 3 | best_move << 6
            return best

        def trick(c, f, hl2, hf2, tpl, tpf, mpl, mpf, twl, twf, leader, alpha, beta):
            """Leader's value after lead ``c`` (its marriage already counted in ``mpl``) and follow ``f``, the
            rest searched within (alpha, beta). ``hl2``/``hf2`` are the hands without the two cards."""
            gained = points[c] + points[f]
            if beats[c] >> f & 1:
                tpf2 = tpf + gained
                if not hf2:
                    return -finish_value(1 - leader, tpf2, mpf, tpl, mpl, twl)
                if auto_declare and tpf2 + mpf >= GOAL:
                    return -declare_value(1 - leader, tpf2 + mpf, tpl + mpl if twl else tpl, twl)
                return -position(hf2, hl2, tpf2, tpl, mpf, mpl, 1, twl, 1 - leader, -beta, -alpha, 0)
            tpl2 = tpl + gained
            if not hl2:
                return finish_value(leader, tpl2, mpl, tpf, mpf, twf)
            if auto_declare and tpl2 + mpl >= GOAL:
                return declare_value(leader, tpl2 + mpl, tpf + mpf if twf else tpf, twf)
            return position(hl2, hf2, tpl2, tpf, mpl, mpf, 1, twf, leader, alpha, beta, 0)

        def position(hl, hf, tpl, tpf, mpl, mpf, twl, twf, leader, alpha, beta, first):
            """Value for ``leader`` about to lead, any hand size."""
            if hl & (hl - 1):
                return node(hl, hf, tpl, tpf, mpl, mpf, twl, twf, leader, alpha, beta, first)
            if hl:
                return last(hl, hf, tpl, tpf, mpl, mpf, twl, twf, leader)
            # No card left: the closer's one turn to declare after winning the last trick (R10, manual declaring).
            return declare_value(leader, tpl + mpl if twl else tpl, tpf + mpf if twf else tpf, twf)

        self.position = position
        self.trick = trick
        self.declare_value = declare_value
        self.marriage_gain = marriage_gain

    # ------------------------------------------------------------------ roots
    @staticmethod
    def lead_state(game: Game) -> tuple[int, ...]:
        leader = game.to_move
        other = 1 - leader
        # Without ``marriage_in_phase2`` only the closer may still announce, on his closing turn (R11, R10): take
        # that permission from the engine's own legal actions rather than restating its conditions.
        first = int(not game.rules.marriage_in_phase2
                    and any(MARRY_BASE <= action < MARRY_BASE + 8 for action in game.legal_actions()))
        return (game.hands[leader], game.hands[other], game.trick_points[leader], game.trick_points[other],
                game.marriage_points[leader], game.marriage_points[other], int(bool(game.tricks_won[leader])),
                int(bool(game.tricks_won[other])), leader, first)

    def lead_action_values(self, game: Game, exact: bool) -> tuple[int, int, dict[int, int]]:
        """At a LEAD decision: (value, best action, {action: value}). With ``exact`` every action's value is
        exact; otherwise only the best one is, the others being bounds no better than it."""
        state = self.lead_state(game)
        hl, hf, tpl, tpf, mpl, mpf, twl, twf, leader, first = state
        values: dict[int, int] = {}
        legal = game.legal_actions()
        # Search the position first: the table then names the preferred move and bounds the others tightly.
        self.position(*state[:9], -4, 4, first)
        hint = legal[0]
        if hl & (hl - 1):
            key = (hl | hf << 24 | leader << 48 | twl << 49 | twf << 50 | first << 51 | tpl << 52 | tpf << 60
                   | mpl << 68 | mpf << 76)
            entry = self.table.get(key)
            if entry is not None and _move_to_action(entry >> 6) in legal:
                hint = _move_to_action(entry >> 6)
        best = -4
        best_action = hint
        for action in [hint] + [a for a in legal if a != hint]:
            value = self.lead_action_value(action, state, -4 if exact else best, 4)
            values[action] = value
            if value > best:
                best = value
                best_action = action
        return best, best_action, values

    def lead_action_value(self, action: int, state: tuple[int, ...], alpha: int, beta: int) -> int:
        hl, hf, tpl, tpf, mpl, mpf, twl, twf, leader, _first = state
        counted_f = tpf + mpf if twf else tpf
        if action == DECLARE:
            return self.declare_value(leader, tpl + mpl if twl else tpl, counted_f, twf)
        if action >= MARRY_BASE:
            offset = action - MARRY_BASE
            c = (offset // 2) * 6 + (3 if offset % 2 else 2)
            mpl = mpl + self.marriage_gain[c // 6]
            if twl and tpl + mpl >= GOAL:  # R11
                return self.declare_value(leader, tpl + mpl, counted_f, twf)
        else:
            c = action
        hl2 = hl ^ (1 << c)
        options = hf & HIGHER_IN_SUIT[c] or hf & SUIT_MASKS[c // 6] or hf & self.trump_mask or hf  # R8
        value = 4
        for f in _cards(options):
            reply = self.trick(c, f, hl2, hf ^ (1 << f), tpl, tpf, mpl, mpf, twl, twf, leader, alpha,
                               beta if beta < value else value)
            if reply < value:
                value = reply
                if value <= alpha:
                    break
        return value

    def follow_action_values(self, game: Game, exact: bool) -> tuple[int, int, dict[int, int]]:
        """At a FOLLOW decision: (value for the follower, best action, {action: value})."""
        follower = game.to_move
        leader = 1 - follower
        c = game.lead_card
        hl, hf = game.hands[leader], game.hands[follower]
        tpl, tpf = game.trick_points[leader], game.trick_points[follower]
        mpl, mpf = game.marriage_points[leader], game.marriage_points[follower]
        twl, twf = int(bool(game.tricks_won[leader])), int(bool(game.tricks_won[follower]))
        values: dict[int, int] = {}
        best = -4
        best_action = -1
        for f in game.legal_actions():
            # The follower maximises minus the leader's value; the window in his terms is (best, 4).
            value = -self.trick(c, f, hl, hf ^ (1 << f), tpl, tpf, mpl, mpf, twl, twf, leader, -4,
                                4 if exact else -best)
            values[f] = value
            if value > best:
                best = value
                best_action = f
        return best, best_action, values

    def follow_value_within(self, game: Game, alpha: int, beta: int) -> int:
        """At a FOLLOW decision: the follower's value within (alpha, beta), fail-soft."""
        follower = game.to_move
        leader = 1 - follower
        c = game.lead_card
        hl, hf = game.hands[leader], game.hands[follower]
        tpl, tpf = game.trick_points[leader], game.trick_points[follower]
        mpl, mpf = game.marriage_points[leader], game.marriage_points[follower]
        twl, twf = int(bool(game.tricks_won[leader])), int(bool(game.tricks_won[follower]))
        best = -4
        for f in game.legal_actions():
            value = -self.trick(c, f, hl, hf ^ (1 << f), tpl, tpf, mpl, mpf, twl, twf, leader, -beta,
                                -(alpha if alpha > best else best))
            if value > best:
                best = value
                if best >= beta:
                    break
        return best


# Searches (with their transposition tables) by context; bounded so long runs keep a steady memory footprint.
_SEARCHES: dict[tuple, _Search] = {}
MAX_CONTEXTS = 8
MAX_TABLE_ENTRIES = 50_000  # per context: at most ~50 MB in all


def _search_for(game: Game) -> _Search:
    rules = game.rules
    context = (
        game.trump_suit, -1 if game.closed_by is None else game.closed_by, bool(game.opponent_trickless_at_close),
        bool(game.auto_declare), bool(rules.allow_false_declaration), bool(game.declare_offered),
        bool(rules.marriage_in_phase2), bool(rules.marriage_needs_trick),
    )
    search = _SEARCHES.get(context)
    if search is None:
        if len(_SEARCHES) >= MAX_CONTEXTS:
            _SEARCHES.pop(next(iter(_SEARCHES)))  # the oldest context
        search = _SEARCHES[context] = _Search(*context)
    elif len(search.table) > MAX_TABLE_ENTRIES:
        search.table.clear()
        search.lead_order.clear()
    return search


_CORE_TABLE = None  # the core solver's transposition table, made on first use (phase-2 entries stay valid)
_SMALL_TABLES: dict = {}  # tables of other sizes, by bits
_THREAD_TABLES: dict = {}  # the tables of a search's further threads, by (bits, thread number)
CORE_TABLE_BITS = 18  # whole-deal solves from early positions visit up to millions of nodes: they want a large table
# Rollouts solve many small positions (closed phase 2, the talon's last trick) whose transpositions lie within one
# search: a table that stays in the processor's cache is faster there (2**14 entries of 32 bytes, 512 KB: the rollouts
# of early decisions took about 20% less time than with 2**18, for 0.9% more nodes; docs/strength.md, session 9).
ROLLOUT_TABLE_BITS = 14


def checked_table_bits(bits) -> int:
    """``bits`` if it is a table size the core accepts (2**10 to 2**28 entries), else ``ValueError`` naming it."""
    if isinstance(bits, bool) or not isinstance(bits, int) or not 10 <= bits <= 28:
        raise ValueError(f"table_bits must be an integer in 10..28, got {bits!r}")
    return bits


def core_table(bits: int = CORE_TABLE_BITS):
    """The core solver's transposition table of this process with ``2**bits`` entries (one per size; phase-2
    entries stay valid across calls)."""
    global _CORE_TABLE
    from sixtysix_env.core.solver import Table

    if bits != CORE_TABLE_BITS:
        if bits not in _SMALL_TABLES:
            _SMALL_TABLES[bits] = Table(bits)
        return _SMALL_TABLES[bits]
    if _CORE_TABLE is None:
        _CORE_TABLE = Table(CORE_TABLE_BITS)
    return _CORE_TABLE


def core_tables(bits: int, count: int) -> list:
    """``count`` transposition tables of ``2**bits`` entries for a search whose worlds run on ``count`` threads at
    once (a table is written while it is searched, so no two threads share one); the first is :func:`core_table`'s."""
    from sixtysix_env.core.solver import Table

    tables = [core_table(bits)]
    for thread in range(1, count):
        if (bits, thread) not in _THREAD_TABLES:
            _THREAD_TABLES[bits, thread] = Table(bits)
        tables.append(_THREAD_TABLES[bits, thread])
    return tables


def prepare(rules) -> None:
    """Where the core implements ``rules``: load its solver and make this process's table now (about 0.7 s, once
    per process), so that an agent calling this before a deal does not pay for them inside its first timed
    decision."""
    from sixtysix_env.core import core_implements

    if core_implements(rules):
        core_table()


def _core_state(game: Game):
    """The core state of ``game`` when the core implements its rules, else ``None``."""
    from sixtysix_env.core import core_implements, state_from_game

    if not core_implements(game.rules):
        return None
    core_table()
    return state_from_game(game, hidden_ok=True)  # phase 2: the talon is never drawn, its order may be unknown


def _core_value_within(state, mover: int, alpha: int, beta: int) -> int:
    """The mover's value from the core solver, searched within the mover's window (alpha, beta)."""
    from sixtysix_env.core.solver import _solve_value

    if mover == 0:
        return int(_solve_value(state, alpha, beta, _CORE_TABLE.entries, 0, _CORE_TABLE.nodes))
    return -int(_solve_value(state, -beta, -alpha, _CORE_TABLE.entries, 0, _CORE_TABLE.nodes))


def _core_action_values(state) -> dict[int, int]:
    from sixtysix_env.core.solver import action_values

    return action_values(state, _CORE_TABLE)


def clear_cache() -> None:
    """Forget all transposition tables (e.g. to time cold solves)."""
    _SEARCHES.clear()
    if _CORE_TABLE is not None:
        _CORE_TABLE.clear()


def solve(game: Game) -> SolveResult:
    """Exact value and a best action for the player to move in a phase-2 LEAD or FOLLOW position.

    The value is the deal's ``result.returns()[player]`` under optimal play by both players; raises
    ``ValueError`` for anything but a phase-2 lead or follow decision of a deal in progress.
    """
    _check_position(game)
    state = _core_state(game)
    if state is not None:
        values = _core_action_values(state)
        best = max(values.values())
        return SolveResult(best, next(action for action in sorted(values) if values[action] == best))
    search = _search_for(game)
    if game.stage == LEAD:
        value, action, _ = search.lead_action_values(game, exact=False)
    else:
        value, action, _ = search.follow_action_values(game, exact=False)
    return SolveResult(value, action)


def solve_value(game: Game) -> int:
    """Only the exact value of :func:`solve` (a little cheaper: no best action is certified)."""
    _check_position(game)
    state = _core_state(game)
    if state is not None:
        return _core_value_within(state, game.to_move, -4, 4)
    search = _search_for(game)
    if game.stage == LEAD:
        state = search.lead_state(game)
        return search.position(*state[:9], -4, 4, state[9])
    return search.follow_action_values(game, exact=False)[0]


def closing_value(game: Game) -> int:
    """The game points (R16) the player to move gets if he closes the talon now (R10) and both then see every card:
    the closed deal solved exactly, after a paderborn exchange on the closing (R9), which the opponent takes when he
    holds the nine since the face-up trump beats it. ``game`` is left as it is; closing must be legal in it."""
    closer = game.current_player
    closed = game.clone()
    closed.apply(CLOSE)
    if closed.stage == RESPOND_CLOSE:
        closed.apply(EXCHANGE if EXCHANGE in closed.legal_actions() else PASS)
    if closed.is_over:
        return closed.returns()[closer]
    value = solve_value(closed)  # for the player to move
    return value if closed.current_player == closer else -value


def closing_wins(game: Game) -> bool:
    """Whether closing the talon now (R10) wins the deal for the player to move with every card seen
    (:func:`closing_value` positive)."""
    return closing_value(game) > 0


def solve_value_within(game: Game, alpha: int, beta: int) -> int:
    """:func:`solve_value` searched within the window (alpha, beta), fail-soft: a result at or below ``alpha`` is
    an upper bound of the value, one at or above ``beta`` a lower bound, anything between is exact. Lets a
    search above the solver (PIMC's phase-1 minimax) prune."""
    _check_position(game)
    state = _core_state(game)
    if state is not None:
        return _core_value_within(state, game.to_move, alpha, beta)
    search = _search_for(game)
    if game.stage == LEAD:
        state = search.lead_state(game)
        return search.position(*state[:9], alpha, beta, state[9])
    return search.follow_value_within(game, alpha, beta)


def solve_all_actions(game: Game) -> dict[int, int]:
    """Exact value (game points for the player to move) of every legal action in a phase-2 LEAD or FOLLOW
    position; raises ``ValueError`` otherwise."""
    _check_position(game)
    state = _core_state(game)
    if state is not None:
        return _core_action_values(state)
    return python_solve_all_actions(game)


def python_solve_all_actions(game: Game) -> dict[int, int]:
    """:func:`solve_all_actions` by the pure-Python search, whatever the rules (the reference for the core)."""
    _check_position(game)
    search = _search_for(game)
    if game.stage == LEAD:
        return search.lead_action_values(game, exact=True)[2]
    return search.follow_action_values(game, exact=True)[2]


__all__ = ["SolveResult", "clear_cache", "core_table", "core_tables", "prepare", "python_solve_all_actions", "solve",
           "solve_all_actions", "solve_value", "solve_value_within"]
