"""A checked play loop shared by the agent tests: every choice must be legal; an optional hook sees each decision."""

from __future__ import annotations

from sixtysix_env import Game, InformationSet, Rules


def play_checked_deal(agents, rules: Rules, seed: int, dealer: int, on_decision=None) -> Game:
    """One deal between ``agents`` (seat order); ``on_decision(agent, infoset, action)`` is called before each
    action is applied. Returns the finished game."""
    game = Game.deal(rules, seed=seed, dealer=dealer)
    for player, agent in enumerate(agents):
        agent.start_deal(player, rules)
    while not game.is_over:
        player = game.to_move
        infoset = InformationSet(game, player)
        action = agents[player].act(infoset)
        assert action in game.legal_actions(), (agents[player], game.render(), action)
        if on_decision is not None:
            on_decision(agents[player], infoset, action)
        game.apply(action)
    return game
