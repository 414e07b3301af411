"""Duplicate-deal tournaments for Sixty-six agents: deals, play loops, statistics, round robins and reports.

``sixtysix tournament`` / ``sixtysix match`` (see :mod:`eval.cli`) run them from the command line; in Python::

    from eval import TournamentSettings, generate_deals, run_tournament
    from sixtysix_env import Rules

    rules = Rules.preset("standard")
    settings = TournamentSettings(agents=("random", "greedy"), rules=rules, deals=tuple(generate_deals(0, 100, rules)))
    results = run_tournament(settings, out_dir="results/quick", workers=2)
"""

from .deals import Deal, generate_deals, load_deals, save_deals
from .play import BummerlOutcome, DealOutcome, IllegalActionError, play_bummerl, play_deal
from .tournament import TournamentSettings, run_tournament

__all__ = [
    "BummerlOutcome", "Deal", "DealOutcome", "IllegalActionError", "TournamentSettings", "generate_deals",
    "load_deals", "play_bummerl", "play_deal", "run_tournament", "save_deals",
]
