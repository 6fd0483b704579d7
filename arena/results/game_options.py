"""A game's options and score order as the lists and ``arena show`` state them.

:class:`GameOptions` reads a stored game config (a tournament's ``game`` settings or a
match's config) into every option of its variant, the other variant's None: one short
cell for a list's ``options`` column, separate fields for JSON and CSV, or words for
``arena show``. Wizard Extreme totals are penalty points, so there lower is better
(:func:`score_order`, :func:`lower_is_better`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine import VARIANT_RECORDS, VARIANTS, EngineError, GameConfig


def score_order(variant: str) -> str:
    """How a variant's totals rank (its record's ``score_order``): classic scores points,
    extreme counts penalties; a name the engine does not know ranks as points.

    >>> score_order("classic"), score_order("extreme")
    ('higher_is_better', 'lower_is_better')
    """
    record = VARIANT_RECORDS.get(variant)
    return record.score_order if record is not None else "higher_is_better"


def lower_is_better(variant: str) -> bool:
    """Whether the lowest total of ``variant`` wins (Wizard Extreme's penalty points)."""
    return score_order(variant) == "lower_is_better"


@dataclass(frozen=True)
class GameOptions:
    """Every option of a game. The other variant's options are None: they do not apply.

    ``rounds`` is the number of rounds actually played: the standard length of the table
    size (or the amigo length) unless ``--rounds`` set it.
    """

    variant: str
    players: int
    rounds: int | None
    length: str | None = None            # classic: standard or amigo
    bidding: str | None = None           # classic: open, hidden or secret
    plus_minus_one: bool | None = None   # classic
    destroyer_penalty: int | None = None  # extreme

    @classmethod
    def of(cls, game: Mapping[str, Any]) -> GameOptions | None:
        """The options of a stored game config (a tournament's ``game`` settings or a
        match's config): those of its variant's record, the others None; None when they
        cannot be read.

        >>> GameOptions.of({"variant": "extreme", "players": 3, "rounds": 2}).fields()
        {'players': 3, 'rounds': 2, 'length': None, 'bidding': None, 'plus_minus_one': None, 'destroyer_penalty': 4}
        >>> GameOptions.of({"variant": "classic", "players": 5}).rounds     # the standard length
        12
        """
        try:
            config = GameConfig.from_options(game)   # the seed is no option
        except (EngineError, TypeError):
            return None
        if config.variant not in VARIANTS:      # a variant this engine does not have
            return None
        record = VARIANT_RECORDS[config.variant]
        try:
            rounds: int | None = record.rounds(config)
        except KeyError:          # a table size the rules do not have: say nothing rather than guess
            rounds = None
        return cls(config.variant, config.players, rounds,
                   **{name: getattr(config, name) for name in record.options if name not in ("players", "rounds")})

    def compact(self) -> str:
        """Every option in one short cell, for a table's ``options`` column: one column
        that wraps keeps them all on screen in a narrow terminal.

        >>> GameOptions("classic", 4, 15, "standard", "open", False).compact()
        '4 players, 15 rounds, open, standard, ±1 off'
        >>> GameOptions("extreme", 3, 1, destroyer_penalty=4).compact()
        '3 players, 1 round, destroyer 4'
        """
        words = {"bidding": f"{self.bidding}", "length": f"{self.length}",
                 "plus_minus_one": f"±1 {'on' if self.plus_minus_one else 'off'}",
                 "destroyer_penalty": f"destroyer {self.destroyer_penalty}"}
        return ", ".join([self._table(), *self._set(words)])

    def _table(self) -> str:
        rounds = "" if self.rounds is None else f", {self.rounds} round{'' if self.rounds == 1 else 's'}"
        return f"{self.players} players{rounds}"

    def _set(self, words: dict[str, str]) -> list[str]:
        """The words of the options that apply (not None), in the order of ``words``."""
        return [text for name, text in words.items() if getattr(self, name) is not None]

    def in_words(self) -> str:
        """Every option, for ``arena show``.

        >>> GameOptions("classic", 4, 3, "standard", "hidden", False).in_words()
        '4 players, 3 rounds, standard length, hidden bidding, ±1 rule off'
        >>> GameOptions("extreme", 3, 1, destroyer_penalty=4).in_words()
        '3 players, 1 round, destroyer penalty 4, totals are penalty points: lower is better'
        """
        words = {"length": f"{self.length} length", "bidding": f"{self.bidding} bidding",
                 "plus_minus_one": f"±1 rule {'on' if self.plus_minus_one else 'off'}",
                 "destroyer_penalty": f"destroyer penalty {self.destroyer_penalty}"}
        order = ["totals are penalty points: lower is better"] if lower_is_better(self.variant) else []
        return ", ".join([self._table(), *self._set(words), *order])

    def fields(self) -> dict[str, Any]:
        """The options as separate JSON/CSV fields (without the variant)."""
        return {"players": self.players, "rounds": self.rounds, "length": self.length, "bidding": self.bidding,
                "plus_minus_one": self.plus_minus_one, "destroyer_penalty": self.destroyer_penalty}


NO_OPTIONS = {"players": None, "rounds": None, "length": None, "bidding": None, "plus_minus_one": None,
              "destroyer_penalty": None}
