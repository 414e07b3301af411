"""The rule configuration: every switch named in docs/rules.md, with its presets (R2, R9–R13, R17–R20)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from .integers import plain_int

PRESET_NAMES = ("standard", "paderborn", "scharf")  # the two-player presets
THREE_PLAYER_PRESET_NAMES = ("three",)  # R21 (sixtysix_env/three.py)
ALL_PRESET_NAMES = PRESET_NAMES + THREE_PLAYER_PRESET_NAMES
# Switches the three-player game (R21) does not read; with players=3 they must keep their defaults.
TWO_PLAYER_SWITCHES = ("exchange_needs_trick", "exchange_after_opponent_closes", "close_draw_option",
                       "marriage_needs_trick", "marriage_in_phase2", "auto_declare", "allow_false_declaration",
                       "schneider_bummerl", "partie_bummerl")


@dataclass(frozen=True)
class Rules:
    """One immutable set of rule switches. Field names are the switch names of docs/rules.md."""

    deck: int = 24
    """R2: 24 cards, or 20 for "Scharfes 66" (no nines; the trump jack exchanges)."""
    exchange_needs_trick: bool = False
    """R9: the trump nine may only be exchanged by a player who has won a trick."""
    exchange_after_opponent_closes: bool = False
    """R9: when the opponent closes, the other player may still exchange once, before the first lead after it."""
    close_draw_option: bool = False
    """R10: a trick winner may close before drawing (both keep five cards) instead of drawing first."""
    marriage_needs_trick: bool = False
    """R11: a marriage may only be announced by a player who has won a trick."""
    marriage_in_phase2: bool = True
    """R11: marriages may be announced after the talon is exhausted or closed."""
    auto_declare: bool = True
    """R13: a player reaching 66 counted points declares automatically (no ``declare`` action needed)."""
    allow_false_declaration: bool = False
    """R13: a player may declare below 66; the opponent then scores 2 (3 if he had no trick)."""
    schneider_bummerl: bool = True
    """R17: a Bummerl lost with 0 game points counts double (casual play; false in tournament play)."""
    partie_bummerl: int = 2
    """R18: Bummerl needed to win a Partie (2 or 3)."""
    bummerl_target: int = 7
    """R17: game points that win a Bummerl."""
    players: int = 2
    """R21: 2, or 3 for three-player Sixty-six "echt zu dritt" (8 cards each, no talon; ``sixtysix_env.three``)."""
    three_player_early_marriage: bool = False
    """R21: with three players, marriages may be announced before the first lead, without a trick (they still
    count only once the player wins a trick). Only meaningful with ``players=3``."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.type in ("bool", bool):
                if not isinstance(value, bool):
                    raise ValueError(f"Rules.{field.name} must be true or false, got {value!r}")
            elif type(value) is not int:  # a numpy integer is kept as a Python int (rules are hashed, compared)
                object.__setattr__(self, field.name, plain_int(value, f"Rules.{field.name}"))
        if self.deck not in (20, 24):
            raise ValueError(f"Rules.deck must be 24 or 20, got {self.deck!r}")
        if self.partie_bummerl not in (2, 3):
            raise ValueError(f"Rules.partie_bummerl must be 2 or 3, got {self.partie_bummerl!r}")
        if self.players not in (2, 3):
            raise ValueError(f"Rules.players must be 2 or 3, got {self.players!r}")
        if self.players == 3 and self.deck != 24:
            raise ValueError("Rules.deck must be 24 with players=3 (R21: the three-player game uses all 24 cards)")
        if self.three_player_early_marriage and self.players != 3:
            raise ValueError("Rules.three_player_early_marriage applies only with players=3 (R21)")
        if self.players == 3:
            for field in dataclasses.fields(self):
                if field.name in TWO_PLAYER_SWITCHES and getattr(self, field.name) != field.default:
                    raise ValueError(f"Rules.{field.name} applies only to the two-player game: the three-player game "
                                     "(players=3, R21) has no talon, no declaring and a single Bummerl, so leave it at "
                                     f"its default {field.default!r}")
        if self.bummerl_target < 1:
            raise ValueError(f"Rules.bummerl_target must be at least 1, got {self.bummerl_target!r}")

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> "Rules":
        """``standard`` (seed 000), ``paderborn`` (R19, seed 001), ``scharf`` (R20) or ``three`` (R21, three
        players with the agreed early marriages), with optional overrides."""
        presets: dict[str, dict[str, Any]] = {
            "standard": {},
            "paderborn": dict(
                exchange_needs_trick=True,
                exchange_after_opponent_closes=True,
                close_draw_option=True,
                marriage_needs_trick=True,
                marriage_in_phase2=False,
            ),
            "scharf": dict(deck=20),
            "three": dict(players=3, three_player_early_marriage=True),
        }
        if not isinstance(name, str) or name not in presets:  # a list failed "unhashable"
            raise ValueError(f"unknown rules preset {name!r}; choose one of {', '.join(ALL_PRESET_NAMES)}")
        return cls.from_dict({**presets[name], **overrides})

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "Rules":
        if not isinstance(values, Mapping):
            raise ValueError(f"rules must be a mapping of switch names to values, got {type(values).__name__}")
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(map(repr, set(values) - known))  # repr: keys of mixed types sort too (1 and 'a')
        if unknown:
            raise ValueError(f"unknown rules switch {unknown[0]}; known switches: {', '.join(sorted(known))}")
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def preset_name(self) -> str | None:
        """The preset these rules equal, or ``None`` for a custom mix."""
        for name in ALL_PRESET_NAMES:
            if Rules.preset(name) == self:
                return name
        return None

    @property
    def hand_size(self) -> int:
        return 8 if self.players == 3 else 6

    @property
    def exchange_rank(self) -> int:
        """R9/R2: the trump nine exchanges; with 20 cards the trump jack does."""
        return 1 if self.deck == 20 else 0
