"""The browser tests' site: ``Site``, a running `arena web` over a database filled by one
tournament of each kind, and ``Match``, one of its stored matches."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factories.commands import arena_json


@dataclass(frozen=True)
class Match:
    """One stored match, as the CLI reports it (`arena matches`, `arena export`)."""

    match_id: str
    decisions: int
    totals: str  # "t0,t1,..." by seat: the format of the viewer's data-totals


@dataclass
class Site:
    """A running `arena web` over a database filled by one tournament of each kind."""

    url: str
    db: Path
    folder: Path
    # kind ("classic-hidden", "classic-secret", "extreme") -> its tournament's id, and one
    # of its matches: id, decisions, stored totals as the viewer's #totals carries them.
    tournaments: dict[str, str] = field(default_factory=dict)
    matches: dict[str, Match] = field(default_factory=dict)

    def cli_json(self, *args: str) -> Any:
        """`arena ARGS --format json --db DB` against this site's database, parsed."""
        return arena_json(*args, "--db", str(self.db), cwd=self.folder)
