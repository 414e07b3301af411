"""Sixty-six (Sechsundsechzig): a rules-exact engine (RULES.md R1–R20) and PettingZoo / Gymnasium environments."""

from .actions import ACTION_NAMES, NUM_ACTIONS, action_name, parse_action
from .cards import CARD_NAMES, card_name, parse_card
from .game import DealResult, Game, shuffled_deck
from .infoset import InformationSet, determinize, information_set
from .rules import PRESET_NAMES, Rules

__version__ = "0.1.0"

__all__ = [
    "ACTION_NAMES", "CARD_NAMES", "DealResult", "Game", "InformationSet", "NUM_ACTIONS", "PRESET_NAMES", "Rules",
    "action_name", "card_name", "determinize", "information_set", "parse_action", "parse_card", "shuffled_deck",
]
from .observation import (
    OBSERVATION_LAYOUT, OBSERVATION_SIZE, OBSERVATION_SLICES, action_mask, describe_observation, encode_infoset,
    encode_observation,
)
from .env import env, raw_env
from .gym_env import SixtySixGymEnv

__all__ += [
    "OBSERVATION_LAYOUT", "OBSERVATION_SIZE", "OBSERVATION_SLICES", "SixtySixGymEnv", "action_mask",
    "describe_observation", "encode_infoset", "encode_observation", "env", "raw_env",
]
