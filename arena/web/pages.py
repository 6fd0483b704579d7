"""The HTML pages: Jinja2 templates in ``templates/`` (each extends ``layout.html``),
rendered with autoescape, so every value is escaped unless it is marked safe here. Only
four things are: the Elo plot's SVG (``arena.results.elo_plot`` escapes its names), the
JSON of an exported page's ``<script type="application/json">`` (:func:`embedded_json`),
this package's own style sheet and viewer.js inlined into an exported page, and the
rows :func:`oneline` joins (already escaped). The only scripts are ``static/viewer.js``
and, on a tournament's page, ``static/tournament.js``.

``templates`` is the app's ``Jinja2Templates`` (``templates.TemplateResponse``);
:func:`render` is a page as a string, for what is written without a request
(``arena.web.export``'s replay pages). The functions below are the templates' filters
and globals.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape
from starlette.templating import Jinja2Templates

from arena.results import elo_history
from arena.results import leaderboard as lb
from arena.results.elo_history import EloLine
from arena.results.elo_plot import elo_svg
from arena.results.game_options import GameOptions
from arena.stats.ratings import MIN_UNITS
from engine import VARIANTS
from engine import variant as variant_of

# A line break, with the indentation around it, between two tags of a template (:func:`oneline`).
_TEMPLATE_BREAK = re.compile(r">[ \t]*\n\s*<")
# What a private match (its deal is played again, arena.web.disclosure) shows in place of a link.
PRIVATE_NOTE = "private until every game of its deal is played"
# The seed setting of a tournament that has not finished (``arena.web.disclosure``).
SEED_HIDDEN = "hidden until the tournament finishes"
def token_supply(variant: str) -> str:
    """The tokens each deal starts with, for the viewer to follow (``colour:count,...``;
    "" for a variant without tokens).

    >>> token_supply("classic"), token_supply("extreme").split(",")[0]
    ('', 'red:5')
    """
    return ",".join(f"{colour}:{count}" for colour, count in variant_of(variant).token_supply)


def url(*parts: str) -> str:
    """A path from parts, each one quoted (ids and names may hold any character).

    >>> url("bots", "a b/c")
    '/bots/a%20b%2Fc'
    """
    return "/" + "/".join(quote(part, safe="") for part in parts)


def query_value(value: str) -> str:
    """``value`` quoted for a query string (``?tournament=...``)."""
    return quote(value, safe="")


def interval(half: float | None) -> str:
    """A ± cell: ``±23``, or ``?`` when the interval is not known (too few deals).

    >>> interval(23.4), interval(None)
    ('±23', '?')
    """
    return lb.UNKNOWN_INTERVAL if half is None else f"±{half:.0f}"


def number(value: float | None, digits: int) -> str:
    """``value`` with ``digits`` decimals, or "–" when it is not known."""
    return "–" if value is None else f"{value:.{digits}f}"


def percent(share: float | None) -> str:
    """A share as a percentage with one decimal, or "–".

    >>> percent(0.1234), percent(None)
    ('12.3%', '–')
    """
    return "–" if share is None else f"{100 * share:.1f}%"


def game_options(options: dict[str, Any] | None) -> str:
    """A game's options as `arena tournaments` words them (only those of its variant)."""
    readable = GameOptions.of(options) if options else None
    return readable.compact() if readable is not None else "not known"


def json_text(data: Any) -> str:
    """``data`` as JSON text (for an attribute, where autoescape escapes it)."""
    return json.dumps(data)


def embedded_json(data: Any) -> Markup:
    """``data`` as JSON safe inside ``<script type="application/json">``: no ``</`` (so no
    ``</script>``) and no ``<!--`` can end or confuse the element.

    >>> str(embedded_json({"a": "</script><!--"}))
    '{"a":"<\\\\/script><\\\\u0021--"}'
    """
    return Markup(json.dumps(data, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\u0021--"))


def inline_text(text: str) -> Markup:
    """A file of this package (the style sheet, viewer.js) put inside ``<style>`` or
    ``<script>`` of an exported page as it is."""
    return Markup(text)


def elo_plot(elo: dict[str, Any]) -> Markup:
    """``/api/elo``'s answer as the plot's ``<svg>`` (``arena.results.elo_plot``, which
    escapes every name), or "" when no game is rated."""
    return Markup(elo_svg(elo_history.from_json(elo)))


def bot_elo_plot(bot: dict[str, Any]) -> Markup:
    """A bot's online Elo over its games (``/api/bots``' ``elo``: its line of each variant's
    board plot) as one ``<svg>``, a line per variant named by it; "" when it has no rated game."""
    lines = [EloLine(line["variant"], int(line["games"]), [(int(x), float(y)) for x, y in line["points"]])
             for line in bot["elo"]]
    return Markup(elo_svg(lines, label=f"Online Elo of {bot['bot']} over its games, per variant"))


def ordinal(n: int) -> str:
    """``n`` as a place or a rank in words: 1st, 2nd, 3rd, 4th, 11th, 22nd.

    >>> [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 22, 101, 111)]
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '22nd', '101st', '111th']
    """
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def opponents(match: dict[str, Any]) -> str:
    """A bot's listed match (``/api/bots``' ``recent``): the other seats' "bot total", in seat order."""
    mine = set(match["seats"])
    return ", ".join(f"{b} {t}" for i, (b, t) in enumerate(zip(match["bots"], match["totals"])) if i not in mine)


def board_scale(rows: list[dict[str, Any]]) -> tuple[float, float]:
    """(low, span) of the board's interval bars: every row's interval fits in low..low+span."""
    low = min((r["rating"] - (r["interval"] or 0.0) for r in rows), default=0.0)
    high = max((r["rating"] + (r["interval"] or 0.0) for r in rows), default=1.0)
    return low, (high - low) or 1.0


def crashed_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The board's rows of bots that crashed (its Crashes column and lines show only then)."""
    return [r for r in rows if r.get("crashes")]


def board_headers(variant: str, crashed: bool) -> list[tuple[str, str]]:
    """The board's (header, sort kind), in the order of its cells: exact bids where
    players bid, the score's order where the lowest total wins."""
    record = variant_of(variant)
    return ([("#", "num"), ("Bot", "text"), ("Rating", "num"), ("95% interval", "num"), ("Elo", "num"),
             ("Games", "num"), ("Avg score" + ("" if record.higher_is_better else " (lower is better)"), "num"),
             ("Avg place", "num")]
            + ([("Exact bids", "num")] if record.bids else [])
            + [("Think p50 ms", "num"), ("Think p99 ms", "num"), ("Faults", "num"), ("Timeouts", "num")]
            + ([("Crashes", "num")] if crashed else []))


def pair_index(pairs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """The crosstable's pairs by (bot, opponent)."""
    return {(p["bot"], p["opponent"]): p for p in pairs}


def board_metadata(meta: dict[str, Any]) -> list[tuple[str, str]]:
    """The board's ``#metadata``: (label, text) of when and how it was made, over what."""
    order = "lower" if meta["score_order"] == "lower_is_better" else "higher"
    tournaments = ", ".join(meta["tournaments"]) or "none"
    if meta["games_outside_tournaments"]:
        tournaments += f" (and {meta['games_outside_tournaments']} games outside tournaments)"
    sets = meta["option_sets"]
    options = "; ".join(f"{', '.join(s['tournaments'])}: {game_options(s['options'])}" for s in sets) or "–"
    return [("Generated", f"{meta['generated_at']} by arena {meta['arena_version']}"),
            ("Variant", f"{meta['variant']} ({order} scores are better)"),
            ("Tournaments", tournaments), ("Game options", options), ("Games", str(meta["games"]))]


# Each public setting of a tournament (``arena.web.disclosure.PUBLIC_SETTINGS``) in words,
# and the unit its value is stored in; a setting not named here shows its key. ``seed`` and
# ``bot_env`` keep their keys: the spectator-secrets suite reads them by those names.
SETTING_WORDS: dict[str, tuple[str, str]] = {
    "games": ("Games", ""), "seed": ("Master seed", ""), "deals": ("Deals", ""), "format": ("Format", ""),
    "move_time": ("Time per decision", " s"), "time_bank": ("Time bank per match", " s"),
    "max_faults": ("Faults before a forfeit", ""), "concurrency": ("Matches at once", ""),
    "server": ("Played on the server", ""), "tls": ("TLS to the server", ""), "sprt": ("A/B test (SPRT)", ""),
    "gauntlet": ("Gauntlet bot", ""), "sandbox": ("Sandbox", ""),
    "fresh_per_match": ("A fresh bot process each match", ""),
    "seed_given": ("Seed chosen by the organiser", ""),
    "shared_processes": ("One bot process for every rotation of a deal", ""),
    "memory_limit_mb": ("Memory limit per bot", " MB"), "process_limit": ("Processes per bot", ""),
    "file_size_limit_mb": ("File size limit", " MB"), "open_files_limit": ("Open files per bot", ""),
    "organised_elsewhere": ("Organised elsewhere", ""), "bot_env": ("Variables passed to the bots", ""),
}


def setting_text(value: Any, unit: str = "") -> str:
    """A setting's value in words: yes/no, "none", a nested setting as "key value, ...".

    >>> setting_text(True), setting_text(None), setting_text(1.5, " s"), setting_text({"elo_1": 5})
    ('yes', 'none', '1.5 s', 'elo 1 5')
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "none"
    if isinstance(value, dict):
        return ", ".join(f"{key.replace('_', ' ')} {setting_text(item)}" for key, item in value.items()) or "none"
    if isinstance(value, list):
        return ", ".join(setting_text(item) for item in value) or "none"
    return f"{value}{unit}"


def tournament_settings(settings: dict[str, Any], bots: list[str]) -> list[tuple[str, str]]:
    """Every public setting (``/api/tournaments/{id}``'s ``settings``, as
    ``arena.web.disclosure.public_settings`` shows the stored ones) as (label, words): the
    game first, its options as the match pages word them, the master seed once the
    tournament has finished, the names of the variables passed to the bots, the bots' names.

    >>> rows = tournament_settings({"games": 4, "game": {"variant": "classic", "players": 3}, "seed": None}, ["a"])
    >>> rows[0], rows[-1]
    (('Game', 'classic: 3 players, 20 rounds, open, standard, ±1 off'), ('Bots', 'a'))
    """
    game: dict[str, Any] = {}
    items: list[tuple[str, str]] = []
    for key, value in settings.items():
        label, unit = SETTING_WORDS.get(key, (key, ""))
        if key == "game":
            game = value or {}
        elif key == "seed" and value is None:
            items.append((label, SEED_HIDDEN))
        else:
            items.append((label, setting_text(value, unit)))
    return [("Game", f"{game.get('variant', 'not known')}: {game_options(game)}"), *items,
            ("Bots", ", ".join(bots) or "not known")]


def rating_text(row: dict[str, Any]) -> str:
    """A board row's rating (``/api/leaderboard``'s) as the CLI and the export write it:
    ``≤757`` when it is only a bound, `` [B]`` after it in comparison group B.

    >>> rating_text({"rating": 757.2, "bound": "upper", "group": None}), rating_text({"rating": 1500.4})
    ('≤757', '1500')
    """
    text = lb.BOUND_SIGNS.get(row.get("bound") or "", "") + f"{row['rating']:.0f}"
    group = row.get("group")
    return text + (f" [{lb.group_name(group)}]" if group is not None else "")


def lower_is_better(variant: str | None) -> bool:
    """Whether the lowest total wins in ``variant`` (the engine's record says; False when unknown)."""
    return variant in VARIANTS and not variant_of(variant).higher_is_better


def winners(match: dict[str, Any]) -> str:
    """The bots in first place of a listed match ("" when its places are not known)."""
    places = match.get("places") or []
    return ", ".join(bot for bot, place in zip(match["bots"], places) if place == 1)


def ago(iso: str, now: datetime | None = None) -> str:
    """How long ago an ISO date was, in words ("3 hours ago"), for people; the date
    itself goes in the element's title.

    >>> now = datetime(2026, 1, 2, 12, 0, tzinfo=UTC)
    >>> [ago(t, now) for t in ("2026-01-02T11:59:30+00:00", "2026-01-02T09:00:00+00:00", "2025-12-01T12:00:00")]
    ['just now', '3 hours ago', '32 days ago']
    """
    when = datetime.fromisoformat(iso)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)      # stored dates are UTC
    seconds = ((now or datetime.now(UTC)) - when).total_seconds()
    if seconds < 60:
        return "just now"
    for size, unit in ((86_400 * 365, "year"), (86_400, "day"), (3_600, "hour"), (60, "minute")):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'' if count == 1 else 's'} ago"
    return "just now"


def seat_places(players: int) -> list[str]:
    """Where each seat sits around the viewer's card table, as the CSS of its box
    (``--x``/``--y``: percent of the table's width and height): seat 0 at the bottom, the
    others clockwise, as play goes round: the page's seats before its script runs.
    table.js (``WizardTable.places``) places them by the same rule when it draws the table.

    >>> seat_places(4)
    ['--x:50.0%;--y:88.0%', '--x:11.0%;--y:50.0%', '--x:50.0%;--y:12.0%', '--x:89.0%;--y:50.0%']
    """
    places = []
    for seat in range(players):
        angle = math.pi / 2 + 2 * math.pi * seat / players     # y grows downwards: clockwise on screen
        x, y = 50 + 39 * math.cos(angle), 50 + 38 * math.sin(angle)
        places.append(f"--x:{x + 0.0:.1f}%;--y:{y + 0.0:.1f}%")
    return places


def oneline(markup: str) -> Markup:
    """``markup`` without the line breaks (and indentation) the template put between two
    tags, so a row written over several template lines is one line of the page, as
    before; a space between tags stays, and so does every value (escaped: no ``<``/``>``).

    >>> str(oneline(Markup("<tr>\\n  <td>a b</td> <td>c</td>\\n</tr>")))
    '<tr><td>a b</td> <td>c</td></tr>'
    """
    return Markup(_TEMPLATE_BREAK.sub("><", escape(markup)))


def seats_and_totals(match: dict[str, Any]) -> str:
    """A match line's "bot total, bot total"."""
    return ", ".join(f"{b} {t}" for b, t in zip(match["bots"], match["totals"]))


def code_text(stamp: dict[str, Any]) -> str:
    """A bot's code stamp (``arena.web.disclosure.code_stamps``) in words.

    >>> code_text({"sha256": "0123456789abcdef" * 4, "files": 3, "bytes": 2048})
    'sha256 0123456789ab…, 3 files, 2.0 KiB'
    """
    size = stamp.get("bytes") or 0
    files = stamp.get("files") or 0
    amount = f"{size / (1 << 20):.1f} MiB" if size >= 1 << 20 else f"{size / 1024:.1f} KiB"
    return f"sha256 {str(stamp['sha256'])[:12]}…, {files} file{'s' if files != 1 else ''}, {amount}"


def _environment() -> Environment:
    """Templates from this package, autoescaped; an undefined name fails instead of
    printing nothing; a block tag's own line leaves no blank line."""
    env = Environment(loader=PackageLoader("arena.web", "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(fmt=format, interval=interval, number=number, percent=percent, game_options=game_options,
                       json_text=json_text, embedded_json=embedded_json, inline_text=inline_text,
                       query_value=query_value, oneline=oneline, seats_and_totals=seats_and_totals, ago=ago,
                       rating_text=rating_text, winners=winners, ordinal=ordinal, opponents=opponents,
                       code_text=code_text)
    env.globals.update(url=url, elo_plot=elo_plot, board_scale=board_scale, board_headers=board_headers,
                       crashed_rows=crashed_rows, board_metadata=board_metadata, crash_line=lb.crash_line,
                       pair_index=pair_index, tournament_settings=tournament_settings, seat_places=seat_places,
                       VARIANTS=VARIANTS, PRIVATE_NOTE=PRIVATE_NOTE, UNKNOWN_INTERVAL=lb.UNKNOWN_INTERVAL,
                       MIN_UNITS=MIN_UNITS, ELO_LIMIT=elo_history.LIMIT, token_supply=token_supply,
                       variant_of=variant_of, lower_is_better=lower_is_better, ago=ago,
                       bot_elo_plot=bot_elo_plot)
    return env


templates = Jinja2Templates(env=_environment())


def render(name: str, **context: Any) -> str:
    """The template ``name`` rendered with ``context``: a page without a request."""
    return templates.get_template(name).render(context)


def bot(data: dict[str, Any]) -> str:
    """The bot page of ``data`` (``/api/bots/{name}``'s answer), as ``/bots/{name}`` shows
    it: for a caller with the data and no request (tests/results/test_hand_size_stats.py)."""
    return render("bot.html", bot=data)
