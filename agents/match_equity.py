"""Bummerl equity (R17): the chance of winning the Bummerl from a score, and what each result of a deal is worth.

A search that maximises game points per deal (R16) plays each deal as if the Bummerl did not exist. Needing one
game point, a win by one wins the Bummerl as surely as a win by three, while a loss by three can lose it where a
loss by one would not; at 0:0 the three sizes of win count nearly in proportion to their points. This module gives
the chance of winning the Bummerl from every score for two players of equal strength (a match equity table, as
backgammon players use), computed from how often a deal ends with one, two or three game points, and the chance
after each possible result of the deal being played, which a search can average instead of game points
(``rollout:objective=bummerl``).

The deal results are taken as independent of the score and of who deals (R3); an unscored deal (R15) leaves the
score as it is. Schneider-Bummerl (R17: two Bummerl points when the loser has none) is not valued: the objective is
winning the Bummerl, not its points.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from sixtysix_env import Rules

# Shares of the scored deals won with 1, 2 and 3 game points (R16): counted over the 2,000 deals of `sixtysix match
# expert heuristic --deals 1000 --seed 91` (837, 848 and 312 scored deals, 3 unscored; docs/strength.md, session 9).
# An unscored deal (R15) only repeats the score, so its share does not change the equity.
DEAL_RESULT_SHARES = (837 / 1997, 848 / 1997, 312 / 1997)
MAX_GAME_POINTS = 3  # R16


def checked_win_chance(win_chance: float, name: str = "win_chance") -> float:
    """``win_chance`` as a float if it is a share of deals strictly between 0 and 1; else an error naming it as
    ``name`` (the caller's parameter)."""
    if isinstance(win_chance, bool) or not isinstance(win_chance, (int, float)) or not 0 < win_chance < 1:
        raise ValueError(f"{name} must be a share of scored deals strictly between 0 and 1, got {win_chance!r}")
    return float(win_chance)


@lru_cache(maxsize=16)
def bummerl_equity(target: int = 7, shares: tuple[float, float, float] = DEAL_RESULT_SHARES,
                   win_chance: float = 0.5) -> np.ndarray:
    """``E[a, b]``: the chance that a player who needs ``a`` more game points wins the Bummerl against one who needs
    ``b`` (0 <= a, b <= ``target``), the first winning each scored deal with probability ``win_chance`` (one half
    between equal players), either's wins split by ``shares`` into 1, 2 and 3 game points; ``E[0, b] = 1``
    (``b > 0``), ``E[a, 0] = 0``."""
    if len(shares) != MAX_GAME_POINTS or any(share < 0 for share in shares) or not np.isclose(sum(shares), 1.0):
        raise ValueError(f"shares must be three non-negative shares of 1, 2 and 3 game points summing to 1, "
                         f"got {shares!r}")
    if isinstance(target, bool) or not isinstance(target, int) or target < 1:
        raise ValueError(f"target must be a positive number of game points, got {target!r}")
    win_chance = checked_win_chance(win_chance)
    equity = np.zeros((target + 1, target + 1))
    equity[0, 1:] = 1.0
    for total in range(2, 2 * target + 1):  # fill by a + b, so every score a deal leads to is known
        for a in range(max(1, total - target), min(target, total - 1) + 1):
            b = total - a
            value = 0.0
            for points, share in enumerate(shares, start=1):
                value += share * (win_chance * equity[max(a - points, 0), b]
                                  + (1 - win_chance) * equity[a, max(b - points, 0)])
            equity[a, b] = value
    equity.setflags(write=False)
    return equity


def deal_utilities(rules: Rules, match_score: tuple[int, int], player: int, win_chance: float = 0.5) -> np.ndarray:
    """``u[v + 3]``: the chance that ``player`` wins the Bummerl once this deal ends with ``v`` game points for him
    (``v`` from -3 to 3: a loss by ``-v`` for ``v < 0``; 0 for an unscored deal, R15), at ``match_score`` (the game
    points of players 0 and 1 before the deal, R17), if he wins ``win_chance`` of the scored deals to come."""
    target = rules.bummerl_target
    mine, theirs = match_score[player], match_score[1 - player]
    if not (0 <= mine < target and 0 <= theirs < target):
        raise ValueError(f"match_score {match_score!r} is not a Bummerl in progress (R17: both below {target})")
    equity = bummerl_equity(target, win_chance=checked_win_chance(win_chance))
    needed, opponent_needed = target - mine, target - theirs
    utilities = np.empty(2 * MAX_GAME_POINTS + 1)
    for value in range(-MAX_GAME_POINTS, MAX_GAME_POINTS + 1):
        if value >= 0:
            utilities[value + MAX_GAME_POINTS] = equity[max(needed - value, 0), opponent_needed]
        else:
            utilities[value + MAX_GAME_POINTS] = equity[needed, max(opponent_needed + value, 0)]
    return utilities


__all__ = ["DEAL_RESULT_SHARES", "bummerl_equity", "checked_win_chance", "deal_utilities"]
