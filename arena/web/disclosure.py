"""What of a tournament's secrets a spectator may see, and when: one rule for every page,
every ``/api/`` answer and every exported file of ``arena web``.

A tournament's **master seed** gives all of it away: the schedule derives every deal
seed and every bot seed from it (``arena.tournament.schedule``), and the engine makes
every hand of a deal from its **deal seed**. A deal seed alone gives away every game
played on that deal: in the duplicate format all the rotations of a table (a later
rotation's hands, before it is played), in an A/B test both sides of a set. So:

- a tournament whose stored status is ``finished``: its master seed and the deal seed of
  each of its matches are shown, so that anyone can reproduce it;
- any other tournament (``running``, ``interrupted``, which will be resumed, or
  ``remote``, organised elsewhere, whose end this database never learns): neither. Its
  settings carry ``seed: null``, each of its matches ``seed: null`` and a ``config``
  without ``seed``;
- a match of no tournament (``arena serve --auto-match``, a ``RunMatch`` without a
  tournament): its deal seed is shown. It is its own deal, and it is stored only once it
  has ended;
- bot seeds (``MatchStarted.seed``) are never shown: a match record does not carry them,
  and the stored schedule that does is never read here. Once the master seed is shown
  they follow from it.

Seeds are not all. Once a game is played its cards are public (its replay shows every
hand), but in the duplicate format they are also the hands of the table's other
rotations, perhaps not played yet. Such a match is stored **private**
(``MatchRecord.private``), and its cards (its page, ``/api/matches/ID``, its exported
replay, its live view) are withheld until its tournament has finished or every game of
its deal is stored (:func:`cards_shown`); the referee's ``Spectate`` never shows it.

The stored status is what counts, not the shown one (``shown_status``): both ``running``
and ``interrupted`` hide, so no run lock needs to be read, and an exported file
(``arena leaderboard --export``) follows the same rule as a page.

Besides the seeds, a tournament's settings hold what only the organiser may see: the
bots' commands, working folders and variables (``bots``), and the variables passed to
every bot (``bot_env``, perhaps keys). :func:`public_settings` keeps the settings it
knows to be public, the names of ``bot_env``'s variables, and nothing else: a setting
added later stays out until it is named in :data:`PUBLIC_SETTINGS`.

Nor is the database's address public: a PostgreSQL URL holds a user, a password and a
host, a SQLite path the organiser's folders. Where a page names the database (the
command that resumes an interrupted tournament) it shows :func:`public_database`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from arena.store import DealProgress, TournamentInfo
from engine import options_of

# The stored status after which a tournament's seeds are shown.
FINISHED = "finished"

# The settings shown as stored ("seed" only once the tournament has finished).
PUBLIC_SETTINGS = frozenset({
    "game", "games", "seed", "move_time", "time_bank", "max_faults", "concurrency", "server", "deals", "format",
    "sprt", "gauntlet", "sandbox", "fresh_per_match", "shared_processes", "memory_limit_mb", "process_limit",
    "file_size_limit_mb", "open_files_limit", "organised_elsewhere", "tls", "seed_given",
})
# Settings never shown as stored: the bots' commands, folders and variables (their names
# are shown apart), the values of the variables passed to every bot (their names are
# shown), and where the organiser keeps its TLS files.
PRIVATE_SETTINGS = frozenset({"bots", "bot_env", "tls_ca", "tls_cert", "tls_key"})


def seeds_shown(info: TournamentInfo | None) -> bool:
    """Whether the seeds of the tournament ``info`` (None: one this database does not
    hold) may be shown: only once it has finished.

    >>> from datetime import UTC, datetime
    >>> [seeds_shown(TournamentInfo("t", datetime.now(UTC), {}, 7, status))
    ...  for status in ("running", "interrupted", "remote", "finished")]
    [False, False, False, True]
    """
    return info is not None and info.status == FINISHED


def public_settings(info: TournamentInfo) -> dict[str, Any]:
    """The settings of ``info`` a spectator may see: those of :data:`PUBLIC_SETTINGS`, with
    ``seed`` null until the tournament has finished and ``game`` without a seed; the
    names of ``bot_env``'s variables (never their values); no ``bots`` (their commands).

    >>> from datetime import UTC, datetime
    >>> settings = {"games": 4, "seed": 7, "bot_env": {"KEY": "s3cret"}, "bots": [{"name": "a", "command": ["x"]}],
    ...             "game": {"variant": "classic", "seed": 7}, "new_secret": 1}
    >>> public_settings(TournamentInfo("t", datetime.now(UTC), settings, 7, "running"))
    {'games': 4, 'seed': None, 'bot_env': ['KEY'], 'game': {'variant': 'classic'}}
    >>> public_settings(TournamentInfo("t", datetime.now(UTC), settings, 7, "finished"))["seed"]
    7
    """
    shown: dict[str, Any] = {}
    for key, value in info.settings.items():
        if key == "bot_env" and isinstance(value, Mapping):
            shown[key] = sorted(str(name) for name in value)
        elif key == "game" and isinstance(value, Mapping):
            shown[key] = options_of(value)
        elif key in PUBLIC_SETTINGS:
            shown[key] = value
    if "seed" in shown:
        # The stored settings' seed is the master seed; the stored column is the one the run uses.
        shown["seed"] = info.master_seed if seeds_shown(info) else None
    return shown


def code_stamps(info: TournamentInfo) -> dict[str, dict[str, Any]]:
    """Which code each bot the arena started ran in the tournament ``info``, by name: the
    stamp of its own files (``sha256``, ``files``, ``bytes``) taken when the tournament
    was made. Public from the start: a hash says which code played and nothing of it.

    >>> from datetime import UTC, datetime
    >>> stamp = {"sha256": "ab" * 32, "files": 2, "bytes": 10}
    >>> settings = {"bots": [{"name": "a", "command": ["x"], "stamp": stamp}, {"name": "b", "command": ["y"]}]}
    >>> code_stamps(TournamentInfo("t", datetime.now(UTC), settings, 7, "running")) == {"a": stamp}
    True
    """
    return {name: stamp.to_json() for name, stamp in info.typed_settings.stamps().items()}


def public_database(db: str) -> str:
    """The database ``db`` (as ``arena web --db`` was given it) as a spectator may read it:
    a SQLite file by its name alone, a URL by its scheme and database name, with ``…`` for
    its user, password, host and port.

    >>> public_database("/srv/runs/arena.db"), public_database("arena.db")
    ('arena.db', 'arena.db')
    >>> public_database("postgresql://arena:s3cret@10.0.0.5:5432/arena?sslmode=require")
    'postgresql://…/arena'
    """
    if "://" not in db:
        return os.path.basename(db)
    scheme, rest = db.split("://", 1)
    name = rest.split("?", 1)[0].rsplit("/", 1)[-1] if "/" in rest else ""
    return f"{scheme}://…/{name}"


def public_record(record: dict[str, Any], shown: bool) -> dict[str, Any]:
    """A match record as JSON (``MatchRecord.to_json()``) as a spectator may see it: as it
    is when ``shown`` (see :func:`match_seed_shown`), else with ``seed`` null and its
    ``config`` without ``seed``.

    >>> public_record({"seed": 9, "config": {"variant": "classic", "seed": 9}}, shown=False)
    {'seed': None, 'config': {'variant': 'classic'}}
    """
    if shown:
        return record
    config = record.get("config")
    return {**record, "seed": None,
            "config": options_of(config) if isinstance(config, Mapping) else config}


def match_seed_shown(tournament_id: str | None, info: TournamentInfo | None) -> bool:
    """Whether a stored match's deal seed may be shown: a match of no tournament, yes; of
    a tournament (``info``, None when this database does not hold it), once that has finished."""
    return tournament_id is None or seeds_shown(info)


def cards_shown(private: bool, info: TournamentInfo | None, progress: DealProgress | None) -> bool:
    """Whether a stored match's cards may be shown: a match that is not private, yes; a
    private one (its deal is played again) once its tournament (``info``) has finished
    or every game of its deal is stored (``progress``, None when the schedule is unknown).

    >>> from datetime import UTC, datetime
    >>> running = TournamentInfo("t", datetime.now(UTC), {}, 7, "running")
    >>> [cards_shown(False, running, None), cards_shown(True, running, DealProgress(3, 4)),
    ...  cards_shown(True, running, DealProgress(4, 4)), cards_shown(True, running, None)]
    [True, False, True, False]
    """
    return not private or seeds_shown(info) or (progress is not None and progress.done)


def withheld_message(match_id: str, progress: DealProgress | None) -> str:
    """Why a private match's cards are not shown yet, in one line.

    >>> withheld_message("t-00001", DealProgress(1, 4))[:70]
    'match t-00001 is private until every game of its deal has been played '
    """
    played = "" if progress is None else f" ({progress.played} of {progress.games} are)"
    return (f"match {match_id} is private until every game of its deal has been played{played}: "
            "its cards are the hands of the others")
