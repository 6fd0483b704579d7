"""Self-contained replay pages for ``arena leaderboard --export DIR --replays ...``.

``DIR/matches/<match_id>.html`` is the match viewer of ``arena web`` in one file, from
its own template (``templates/match.html`` with ``standalone``): the style sheets,
``table.js`` and ``viewer.js`` inlined, the ``/api/matches/{id}`` data embedded as
``<script type="application/json" id="match-data">``. Opened from disk it makes no
request at all (no server, no CDN); its one link goes to the exported board beside it.
The board links back to each page in its "Replays" section: :func:`export_replays`
returns what that section lists.
"""

from __future__ import annotations

from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from arena.results.leaderboard import ReplayLink
from arena.store import Store, TournamentInfo
from arena.web import api, pages, viewer

MATCHES_DIR = "matches"
# What the viewer's page links (templates/match.html), in its order: inlined here.
STYLES = ["style.css", "table.css", "viewer.css"]
SCRIPTS = ["table.js", "viewer.js"]


def replay_page(store: Store, match_id: str) -> str:
    """The self-contained replay page of ``match_id`` (``api.NotFound`` when unknown)."""
    return _replay(store, match_id)[0]


def _replay(store: Store, match_id: str,
            tournaments: dict[str, TournamentInfo | None] | None = None) -> tuple[str, dict[str, Any]]:
    """The replay page of ``match_id`` and its stored record (as ``/api/matches`` gives it:
    the deal seed only where ``arena.web.disclosure`` allows it, the same rule as the
    server's, since an exported folder is meant to be published)."""
    static = resources.files("arena.web") / "static"
    css = "\n".join((static / name).read_text(encoding="utf-8") for name in STYLES)
    script = "\n".join((static / name).read_text(encoding="utf-8") for name in SCRIPTS)
    data = api.match(store, match_id, tournaments)
    page = pages.render("match.html", match_id=match_id, record=data["record"], live_events=None,
                        played=viewer.played_rounds(data), standalone={"css": css, "script": script, "data": data})
    return page, data["record"]


def replay_path(directory: Path, match_id: str) -> Path:
    """Where ``match_id``'s page goes; ValueError for an id that is no plain file name."""
    if not match_id or "/" in match_id or "\\" in match_id or match_id.startswith("."):
        raise ValueError(f"match id {match_id!r} cannot be a file name")
    return directory / MATCHES_DIR / f"{match_id}.html"


def write_replays(store: Store, directory: Path, match_ids: list[str]) -> list[Path]:
    """Write ``directory/matches/<match_id>.html`` for each of ``match_ids``; return the
    paths. Every page is built before the first is written, so an unknown id
    (``api.NotFound``) writes nothing."""
    return [path for path, _ in export_replays(store, directory, match_ids)]


def export_replays(store: Store, directory: Path, match_ids: list[str],
                   withheld: list[str] | None = None) -> list[tuple[Path, ReplayLink]]:
    """:func:`write_replays`, with what the exported board lists of each page written
    (``arena.results.leaderboard.export(replays=...)``): id, variant, date, bots, totals.
    A private match not to be shown yet (``api.Withheld``) raises, unless ``withheld`` is
    given: then it is left out and its id added there."""
    built = []
    tournaments: dict[str, TournamentInfo | None] = {}
    for match_id in match_ids:
        try:
            text, record = _replay(store, match_id, tournaments)
        except api.Withheld:
            if withheld is None:
                raise
            withheld.append(match_id)
            continue
        link = ReplayLink(match_id, record["variant"], datetime.fromisoformat(record["finished_at"]),
                          list(record["bots"]), list(record["totals"]))
        built.append((replay_path(directory, match_id), text, link))
    if built:
        (directory / MATCHES_DIR).mkdir(parents=True, exist_ok=True)
    for path, text, _ in built:
        path.write_text(text, encoding="utf-8")
    return [(path, link) for path, _, link in built]
