"""The HTML pages, server-rendered with f-strings; every value from the database goes
through :func:`esc` (``html.escape``). The only script is ``static/viewer.js``."""

from __future__ import annotations

import json
from html import escape
from typing import Any
from urllib.parse import quote

from arena.results import elo_history
from arena.results import leaderboard as lb
from arena.results.browse import GameOptions
from arena.results.elo_plot import elo_svg
from arena.results.ratings import MIN_UNITS
from engine import VARIANTS
from engine.extreme_cards import SUPPLY_START, TOKEN_COLOURS


def esc(value: Any) -> str:
    return escape(str(value), quote=True)


def url(*parts: str) -> str:
    """A path from parts, each one quoted (ids and names may hold any character)."""
    return "/" + "/".join(quote(part, safe="") for part in parts)


def layout(title: str, body: str, scripts: tuple[str, ...] = (), *, nav: str | None = None,
           inline: tuple[str, str] | None = None, refresh: int | None = None) -> str:
    """A whole page: the title, the navigation, ``body``; the script for sorting and the
    viewer, then ``scripts`` (names under /static/). ``nav`` replaces the server's
    navigation; ``inline`` (the CSS and viewer.js texts) puts both in the page instead
    of linking /static/ (an exported page, read from disk); ``refresh`` reloads the page
    every that many seconds."""
    if nav is None:
        nav = " · ".join(['<a href="/">Home</a>'] + [f'<a href="{url("leaderboard", v)}">{esc(v)} board</a>'
                                                      for v in VARIANTS] + ['<a href="/live">Live</a>'])
    style = f"<style>\n{inline[0]}</style>" if inline else '<link rel="stylesheet" href="/static/style.css">'
    script = f"<script>\n{inline[1]}</script>" if inline else '<script src="/static/viewer.js"></script>'
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)} · Wizard Arena</title>
<link rel="icon" href="data:,">
{f'<meta http-equiv="refresh" content="{refresh}">' if refresh else ""}
{style}
</head>
<body>
<nav>{nav}</nav>
<main>
<h1>{esc(title)}</h1>
{body}
</main>
{script}
{"".join(f'<script src="/static/{esc(name)}"></script>' for name in scripts)}
</body>
</html>
"""


def bot_link(name: str) -> str:
    """A bot's name linking to its page."""
    return f'<a class="bot-link" href="{url("bots", name)}">{esc(name)}</a>'


def error_page(status: int, message: str) -> str:
    heading = {404: "Not found", 503: "The database is busy"}.get(status, "Error")
    hint = "<p>Try again in a moment.</p>" if status == 503 else ""
    return layout(heading, f'<p class="error" id="error">{esc(message)}</p>{hint}')


# -- index and tournaments ------------------------------------------------------------


def _matches_table(matches: list[dict[str, Any]]) -> str:
    if not matches:
        return "<p>No stored matches.</p>"
    rows = "\n".join(
        f'<tr><td><a href="{url("matches", m["match_id"])}">{esc(m["match_id"])}</a></td>'
        f'<td>{esc(m["variant"])}</td><td>{esc(m["status"])}</td><td>{esc(m["finished_at"][:19])}</td>'
        f'<td>{esc(", ".join(f"{b} {t}" for b, t in zip(m["bots"], m["totals"])))}</td></tr>'
        for m in matches)
    return ('<table class="list"><thead><tr><th>Match</th><th>Variant</th><th>Status</th><th>Finished (UTC)</th>'
            f'<th>Bots and totals</th></tr></thead><tbody>\n{rows}\n</tbody></table>')


def _tournaments_table(tournaments: list[dict[str, Any]]) -> str:
    if not tournaments:
        return "<p>No tournaments stored yet.</p>"
    rows = "\n".join(
        f'<tr><td><a href="{url("tournaments", t["id"])}">{esc(t["id"])}</a></td><td>{esc(t["variant"] or "")}</td>'
        f'<td>{esc(t["created_at"][:19])}</td><td>{esc(t["status"])}</td><td>{esc(t["matches"])}</td></tr>'
        for t in tournaments)
    return ('<table class="list" id="tournaments"><thead><tr><th>Tournament</th><th>Variant</th><th>Created (UTC)</th>'
            f'<th>Status</th><th>Matches</th></tr></thead><tbody>\n{rows}\n</tbody></table>')


# What a private match (its deal is played again, arena.web.disclosure) shows in place of a link.
PRIVATE_NOTE = "private until every game of its deal is played"


def live_table(matches: list[dict[str, Any]]) -> str:
    """Running matches (``arena.web.live.LiveMatch`` as JSON), each linking to its live page
    unless it is private."""
    if not matches:
        return '<p class="note">No match is being played right now.</p>'
    rows = "\n".join(
        (f'<tr><td>{esc(m["match_id"])} <span class="note">{PRIVATE_NOTE}</span></td>' if m.get("private") else
         f'<tr><td><a class="live-link" href="{url("live", m["match_id"])}">{esc(m["match_id"])}</a></td>')
        + f'<td>{esc(m["variant"])}</td>'
        f'<td>{esc(", ".join(f"{b} {t}" for b, t in zip(m["bots"], m["totals"])))}</td></tr>'
        for m in matches)
    return ('<table class="list live"><thead><tr><th>Match</th><th>Variant</th><th>Bots and totals so far</th>'
            f'</tr></thead><tbody>\n{rows}\n</tbody></table>')


def _live_problems(problems: list[str]) -> str:
    return "".join(f'<p class="error">{esc(problem)}</p>' for problem in problems)


def live(data: dict[str, Any]) -> str:
    """``/live``: the running matches of every referee ``arena web`` knows of (reloaded every 5 s)."""
    if not data["referees"]:
        body = ('<p class="note">No referee to ask: no tournament in this database is running, and no '
                '<code>--referee HOST:PORT</code> was given to <code>arena web</code>.</p>')
    else:
        asked = ", ".join(data["referees"])
        body = (f'<p class="meta">Asked: {esc(asked)} · this page reloads itself every 5 s.</p>'
                f'{_live_problems(data["problems"])}{live_table(data["matches"])}')
    return layout("Live matches", body, refresh=5)


def index(variants: list[str], tournaments: list[dict[str, Any]], matches: list[dict[str, Any]],
          live_now: list[dict[str, Any]] | None = None) -> str:
    """The home page; ``live_now`` (None: no referee known) lists the running matches."""
    boards = "".join(f'<li><a href="{url("leaderboard", v)}">{esc(v)} leaderboard</a></li>' for v in variants)
    playing = "" if live_now is None else f'<h2>Playing now</h2><div id="live-now">{live_table(live_now)}</div>'
    body = (f'{playing}<h2>Leaderboards</h2><ul id="boards">{boards or "<li>No completed matches yet.</li>"}</ul>'
            f"<h2>Tournaments</h2>{_tournaments_table(tournaments)}"
            f"<h2>Latest matches</h2>{_matches_table(matches)}")
    return layout("Wizard Arena", body)


def _games(data: dict[str, Any]) -> str:
    scheduled = data["games_scheduled"]
    return f'{data["games_stored"]} / {scheduled}' if scheduled else str(data["games_stored"])


def _interval(half: float | None) -> str:
    """A ± cell: ``±23``, or ``?`` when the interval is not known (too few deals).

    >>> _interval(23.4), _interval(None)
    ('±23', '?')
    """
    return lb.UNKNOWN_INTERVAL if half is None else f"±{half:.0f}"


def tournament_board_rows(board: list[dict[str, Any]]) -> str:
    """The body rows of ``#tournament-board`` (``tournament.js`` redraws them the same way)."""
    return "\n".join(
        f'<tr data-bot="{esc(r["bot"])}"><td>{r["rank"]}</td><td class="bot">{bot_link(r["bot"])}</td>'
        f'<td>{r["rating"]:.0f}</td><td>{_interval(r["interval"])}</td><td>{r["games"]}</td>'
        f'<td>{r["avg_score"]:.1f}</td><td>{r["avg_place"]:.2f}</td><td>{r["faults"]}</td></tr>' for r in board)


# The seed setting of a tournament that has not finished (``arena.web.disclosure``).
SEED_HIDDEN = "hidden until the tournament finishes"


def _settings(settings: dict[str, Any], bots: list[str]) -> str:
    """Every public setting (``arena.web.disclosure.public_settings``): the game's options
    as ``game: KEY``, the master seed once the tournament has finished, the names of the
    variables passed to the bots, the bots' names."""
    game = settings.get("game") or {}
    items: list[tuple[str, Any]] = [(f"game: {key}", value) for key, value in game.items()]
    for key, value in settings.items():
        if key == "seed" and value is None:
            items.append((key, SEED_HIDDEN))
        elif key == "bot_env":
            items.append((key, ", ".join(value) or "none"))
        elif key != "game":
            items.append((key, value))
    items.append(("bots", ", ".join(bots) or "not known"))
    return '<dl class="metadata" id="settings">' + "".join(
        f"<dt>{esc(key)}</dt><dd>{esc('–' if value is None else value)}</dd>" for key, value in items) + "</dl>"


def tournament(data: dict[str, Any]) -> str:
    """A tournament: status and progress (redrawn by ``tournament.js`` while it runs), the
    resume command when interrupted, dates, every setting, its board and its matches."""
    variant = data["variant"]
    board = url("leaderboard", variant) + "?tournament=" + quote(data["id"], safe="")
    status = data["status"]
    scheduled = data["games_scheduled"]
    percent = min(100.0, 100 * data["games_stored"] / scheduled) if scheduled else 0.0
    resume = (f'<p class="error" id="interrupted">This tournament was interrupted before it finished. '
              f'To finish it: <code id="resume">{esc(data["resume_command"])}</code></p>'
              if data["resume_command"] else "")
    head = "".join(f"<th>{name}</th>" for name in
                   ("#", "Bot", "Rating", "95% interval", "Games", "Avg score", "Avg place", "Faults"))
    poll = url("api", "tournaments", data["id"]) + "?matches=0"
    body = (f'<div id="tournament" data-api="{poll}" data-status="{esc(status)}">'
            f'<dl class="metadata"><dt>Status</dt><dd id="status">{esc(status)}</dd>'
            f'<dt>Games stored</dt><dd><span id="progress">{esc(_games(data))}</span> '
            f'<progress id="progress-bar" max="100" value="{percent:.1f}"></progress> '
            f'<span id="games-stored" hidden>{data["games_stored"]}</span></dd>'
            f'<dt>Variant</dt><dd>{esc(variant)}</dd>'
            f'<dt>Created (UTC)</dt><dd>{esc(data["created_at"][:19])}</dd>'
            f'<dt>First game finished</dt><dd id="first-game">{esc((data["first_game_at"] or "–")[:19])}</dd>'
            f'<dt>Last game finished</dt><dd id="last-game">{esc((data["last_game_at"] or "–")[:19])}</dd></dl>'
            f"{resume}"
            + (f'<h2>Playing now</h2><div id="tournament-live">{live_table(data["live"])}</div>'
               if status == "running" else "") +
            f'<h2>Board</h2><table id="tournament-board" class="list"><thead><tr>{head}</tr></thead>'
            f'<tbody>\n{tournament_board_rows(data["board"])}\n</tbody></table>'
            f'<p><a href="{board}">Leaderboard of this tournament</a> · '
            f'<a href="{url("crosstable", variant)}?tournament={quote(data["id"], safe="")}">crosstable</a> · '
            f'<a href="{url("api", "tournaments", data["id"])}">JSON</a></p>'
            f"<h2>Settings</h2>{_settings(data['settings'], data['bots'])}"
            f'<h2>Matches</h2><div id="tournament-matches">{_matches_table(data["matches"])}</div></div>')
    return layout(f"Tournament {data['id']}", body, scripts=("tournament.js",))


def _options(options: dict[str, Any] | None) -> str:
    """A game's options as `arena tournaments` words them (only those of its variant)."""
    readable = GameOptions.of(options) if options else None
    return readable.compact() if readable is not None else "not known"


# -- leaderboard ------------------------------------------------------------------------


def _number(value: Any, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _metadata(meta: dict[str, Any]) -> str:
    order = "lower" if meta["score_order"] == "lower_is_better" else "higher"
    tournaments = ", ".join(meta["tournaments"]) or "none"
    if meta["games_outside_tournaments"]:
        tournaments += f" (and {meta['games_outside_tournaments']} games outside tournaments)"
    sets = meta["option_sets"]
    options = "; ".join(f"{', '.join(s['tournaments'])}: {_options(s['options'])}" for s in sets) or "–"
    items = [("Generated", f"{meta['generated_at']} by arena {meta['arena_version']}"),
             ("Variant", f"{meta['variant']} ({order} scores are better)"),
             ("Tournaments", tournaments), ("Game options", options), ("Games", str(meta["games"]))]
    return '<dl class="metadata" id="metadata">' + "".join(
        f"<dt>{esc(label)}</dt><dd>{esc(text)}</dd>" for label, text in items) + "</dl>"


def leaderboard(data: dict[str, Any], tournament_id: str | None, elo: dict[str, Any] | None = None) -> str:
    """The board as ``/api/leaderboard`` gives it: a sortable table, each rating's interval as a bar;
    with ``elo`` (``/api/elo``'s answer) the bots' online Elo over their games, plotted below.
    When some bot of the board crashed, a Crashes column and a line per crashed bot (the
    board's ``crash_line``); otherwise neither."""
    rows = data["rows"]
    classic = data["variant"] == "classic"
    crashed = [r for r in rows if r.get("crashes")]
    low = min((r["rating"] - (r["interval"] or 0.0) for r in rows), default=0.0)
    high = max((r["rating"] + (r["interval"] or 0.0) for r in rows), default=1.0)
    span = (high - low) or 1.0
    # (header, sort kind) in the order of the cells below.
    headers = [("#", "num"), ("Bot", "text"), ("Rating", "num"), ("95% interval", "num"), ("Elo", "num"),
               ("Games", "num"), ("Avg score" + ("" if classic else " (lower is better)"), "num"),
               ("Avg place", "num")] + ([("Exact bids", "num")] if classic else []) + [
               ("Think p50 ms", "num"), ("Think p99 ms", "num"), ("Faults", "num"), ("Timeouts", "num")] + (
               [("Crashes", "num")] if crashed else [])
    head = "".join(f'<th data-sort="{kind}" tabindex="0">{esc(name)}</th>' for name, kind in headers)
    body = []
    for r in rows:
        half = r["interval"]
        mark = 100 * (r["rating"] - low) / span
        # Not known (too few deals): the mark alone, no range, and "?" in the cell.
        bar = (f'<div class="bar" title="{r["rating"]:.0f} ± {"not known" if half is None else format(half, ".0f")}">'
               + ("" if half is None else
                  f'<span class="range" style="left:{100 * (r["rating"] - half - low) / span:.2f}%;'
                  f'width:{max(100 * 2 * half / span, 0.5):.2f}%"></span>')
               + f'<span class="mark" style="left:{mark:.2f}%"></span></div>')
        rate = r.get("exact_bid_rate")
        exact = [f'<td data-value="{"" if rate is None else rate}">'
                 f'{"–" if rate is None else format(100 * rate, ".1f") + "%"}</td>'] if classic else []
        cells = [f'<td>{r["rank"]}</td>', f'<td class="bot">{bot_link(r["bot"])}</td>',
                 f'<td>{r["rating"]:.0f}</td>',
                 f'<td data-value="{"" if half is None else half}">{_interval(half)} {bar}</td>',
                 f'<td data-value="{r["elo"] if r["elo"] is not None else ""}">{_number(r["elo"], 0)}</td>',
                 f'<td>{r["games"]}</td>', f'<td>{r["avg_score"]:.1f}</td>', f'<td>{r["avg_place"]:.2f}</td>',
                 *exact,
                 f'<td data-value="{r["think_p50_ms"] if r["think_p50_ms"] is not None else ""}">'
                 f'{_number(r["think_p50_ms"], 2)}</td>',
                 f'<td data-value="{r["think_p99_ms"] if r["think_p99_ms"] is not None else ""}">'
                 f'{_number(r["think_p99_ms"], 2)}</td>',
                 f'<td>{r["faults"]}</td>', f'<td>{r["timeouts"]}</td>',
                 *([f'<td>{r.get("crashes", 0)}</td>'] if crashed else [])]
        body.append(f'<tr data-bot="{esc(r["bot"])}" data-rating="{r["rating"]}">{"".join(cells)}</tr>')
    empty = "" if rows else "<p>No completed matches for this board yet.</p>"
    text = (_metadata(data["metadata"]) + empty
            + f'<table id="board" class="sortable"><thead><tr>{head}</tr></thead><tbody>\n'
            + "\n".join(body) + "\n</tbody></table>"
            + "".join(f'<p class="crash">{esc(lb.crash_line(r["bot"], r["crashes"], r.get("last_crash")))}</p>'
                      for r in crashed)
            + '<p class="note">Click a column header to sort. Rating: maximum-likelihood (Bradley–Terry) rating '
              f"with its 95% bootstrap interval drawn as a bar; {lb.UNKNOWN_INTERVAL}: not known (the bot played "
              f"fewer than {MIN_UNITS} deals).</p>"
            + f'<p><a href="{url("api", "leaderboard", data["variant"])}'
            + (f"?tournament={quote(tournament_id, safe='')}" if tournament_id else "") + '">JSON</a></p>'
            + (_elo_section(elo, tournament_id) if elo is not None else ""))
    return layout(data["title"], text)


def _elo_section(elo: dict[str, Any], tournament_id: str | None) -> str:
    """``<section id="elo">``: the Elo plot (``arena.results.elo_plot``), or a note when no game is rated."""
    svg = elo_svg(elo_history.from_json(elo))
    query = f"?tournament={quote(tournament_id, safe='')}" if tournament_id else ""
    if not svg:
        return '<section id="elo"><h2>Online Elo</h2><p class="note" id="elo-empty">No rated games yet.</p></section>'
    return ('<section id="elo"><h2>Online Elo</h2>' + svg
            + '<p class="note">Each bot\'s online Elo after each of its games on this board'
            + (" (this tournament's games; the Elo is the arena's online Elo at that game)" if tournament_id else "")
            + f'; long lines are thinned to at most {elo_history.LIMIT} points. '
            + f'<a href="{url("api", "elo", elo["variant"])}{query}">JSON</a></p></section>')


# -- crosstable -------------------------------------------------------------------------


def crosstable(data: dict[str, Any]) -> str:
    """The crosstable as ``arena.results.crosstable.to_json`` gives it: row bot against column bot."""
    bots = data["bots"]
    pairs = {(p["bot"], p["opponent"]): p for p in data["pairs"]}
    head = "<th>Bot</th>" + "".join(f"<th>{esc(b)}</th>" for b in bots)
    rows = []
    for bot in bots:
        cells = []
        for other in bots:
            pair = pairs.get((bot, other))
            if bot == other or pair is None or not pair["games"]:
                cells.append("<td>–</td>")
            else:
                cells.append(f'<td title="{pair["games"]} games; average place difference '
                             f'{pair["avg_place_diff"]:+.2f}">{pair["ahead"]}-{pair["behind"]}-{pair["level"]}</td>')
        rows.append(f'<tr data-bot="{esc(bot)}"><th>{bot_link(bot)}</th>{"".join(cells)}</tr>')
    title = f"Wizard {data['variant']} crosstable" + (f", tournament {data['tournament_id']}"
                                                        if data.get("tournament_id") else "")
    body = (f'<table id="crosstable"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            '<p class="note">Each cell: how often the row bot finished ahead of, behind and level with the column '
            "bot in the games they played together.</p>")
    return layout(title, body)


# -- the match viewer -------------------------------------------------------------------


def embedded_json(data: Any) -> str:
    """``data`` as JSON safe inside ``<script type="application/json">``: no ``</`` (so no
    ``</script>``) and no ``<!--`` can end or confuse the element."""
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\u0021--")


def match(match_id: str, record: dict[str, Any], *, standalone: tuple[str, str, dict[str, Any]] | None = None,
          live: str | None = None) -> str:
    """The viewer's frame; ``viewer.js`` loads ``/api/matches/{id}`` and draws each step.

    ``live`` (the URL of a running match's event stream, ``arena.web.live``) makes the live
    viewer instead: ``record`` then holds only public facts (``bots``, ``variant``, the
    ``config`` without its seed, ``tournament_id``), and the page follows the stream.

    ``standalone`` (the CSS, viewer.js and the ``/api/matches/{id}`` data) makes the
    self-contained replay page of ``arena leaderboard --export``: both files inlined, the
    data embedded as ``<script type="application/json" id="match-data">``, no link to a
    server route (the navigation points at the exported board beside it, ``../VARIANT.html``)."""
    seats = "".join(f"<li>seat {i}: {esc(b)}</li>" for i, b in enumerate(record["bots"]))
    order = "penalty points, lower is better" if record["variant"] == "extreme" else "points, higher is better"
    tournament = ""
    if record.get("tournament_id"):
        name = f'tournament {esc(record["tournament_id"])}'
        link = url("tournaments", record["tournament_id"])
        tournament = f" · {name}" if standalone else f' · <a href="{link}">{name}</a>'
    meta = f'{esc(record["variant"])} · {esc(_options(record["config"]))} · {esc(order)}{tournament}'
    # The viewer follows Extreme's tokens from the supply each deal starts with (the engine's).
    supply = (' data-supply="' + ",".join(f"{c}:{n}" for c, n in zip(TOKEN_COLOURS, SUPPLY_START, strict=True)) + '"'
              if record["variant"] == "extreme" else "")
    if standalone:
        embedded = f'<script type="application/json" id="match-data">{embedded_json(standalone[2])}</script>'
        opening = f'<div id="viewer" data-match="{esc(match_id)}"{supply}>\n{embedded}'
    elif live:
        opening = ('<p id="live-status" class="meta">Live: the referee’s public events as they happen. The hands '
                   'stay face down until the match is over; then its replay shows them.</p>'
                   f'<div id="viewer" data-match="{esc(match_id)}"{supply} data-live="{esc(live)}" '
                   f'data-bots="{esc(json.dumps(record["bots"]))}" data-variant="{esc(record["variant"])}">')
    else:
        opening = f'<div id="viewer" data-match="{esc(match_id)}"{supply} data-api="{url("api", "matches", match_id)}">'
    body = f"""<p class="meta">{meta}</p>
<ol class="seats-list" start="0">{seats}</ol>
{opening}
<div class="controls">
<button id="first" type="button" title="First (Home)">« First</button>
<button id="prev" type="button" title="Previous (←)">‹ Prev</button>
<button id="play" type="button" title="Play / pause">Play</button>
<button id="next" type="button" title="Next (→)">Next ›</button>
<button id="last" type="button" title="Last (End)">Last »</button>
<span id="step">0 / 0</span>
<span id="decision"></span>
</div>
<div id="table"></div>
<div id="totals" data-totals=""></div>
<h2>This step</h2>
<ul id="events"></ul>
<h2>Rounds</h2>
<div id="rounds"></div>
</div>"""
    if standalone:
        nav = f'<a href="../{quote(record["variant"], safe="")}.html">{esc(record["variant"])} board</a>'
        return layout(f"Match {match_id}", body, nav=nav, inline=(standalone[0], standalone[1]))
    return layout(f"{'Live: match' if live else 'Match'} {match_id}", body)


# -- bot page ------------------------------------------------------------------------------


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def bot(data: dict[str, Any]) -> str:
    """A bot: versions, games per variant, think times and time-bank use, exact bids (and
    classic's by hand size), places by seat, faults, crashes per variant."""
    versions = "".join(f"<li>{esc(v['version'] or '(none)')}: {v['games']} games</li>" for v in data["versions"])
    variant_rows = "".join(
        f'<tr data-variant="{esc(v["variant"])}"><td><a href="{url("leaderboard", v["variant"])}">'
        f'{esc(v["variant"])}</a></td><td>{v["games"]}</td><td>{v["completed"]}</td>'
        f'<td>{_ms(v["think_p50_ms"])}</td><td>{_ms(v["think_p99_ms"])}</td><td>{_ms(v["think_max_ms"])}</td>'
        f"{_bot_time_bank_cells(v)}"
        f'<td>{"–" if v["exact_bid_rate"] is None else format(100 * v["exact_bid_rate"], ".1f") + "%"}</td></tr>'
        for v in data["variants"])
    seat_rows = "".join(
        f'<tr><td>{esc(v["variant"])}</td><td>{s["players"]}</td><td>{s["seat"]}</td><td>{s["games"]}</td>'
        f'<td>{s["avg_place"]:.2f}</td></tr>' for v in data["variants"] for s in v["by_seat"])
    fault_rows = "".join(
        f'<tr data-kind="{esc(f["kind"])}"><td>{esc(f["kind"])}</td><td>{f["count"]}</td><td>'
        + " ".join(f'<a href="{url("matches", m)}">{esc(m)}</a>' for m in f["matches"]) + "</td></tr>"
        for f in data["faults"])
    faults = (f'<table id="bot-faults" class="list"><thead><tr><th>Kind</th><th>Faults</th><th>Matches</th></tr>'
              f"</thead><tbody>{fault_rows}</tbody></table>" if data["faults"] else '<p id="bot-faults">No faults.</p>')
    crash_rows = "".join(
        f'<tr data-variant="{esc(c["variant"] or "")}"><td>{esc(c["variant"] or "not known")}</td>'
        f'<td>{c["count"]}</td><td>{esc(c["last_reason"])}</td><td>{esc(c["last_at"][:19].replace("T", " "))}</td>'
        "</tr>" for c in data["crashes"])
    crashes = ('<table id="bot-crashes" class="list"><thead><tr><th>Variant</th><th>Crashes</th>'
               "<th>Last reason</th><th>Last crash (UTC)</th></tr></thead>"
               f"<tbody>{crash_rows}</tbody></table>"
               '<p class="note">A crash: the bot\'s process, started by the arena, exited or was killed (for a '
               "limit) while it should have been playing.</p>"
               if data["crashes"] else '<p id="bot-crashes">No crashes.</p>')
    body = (f'<p>{data["games"]} stored games · <a href="{url("api", "bots", data["bot"])}">JSON</a></p>'
            f'<h2>Versions</h2><ul id="bot-versions">{versions}</ul>'
            '<h2>Games and think time</h2><table id="bot-variants" class="list"><thead><tr><th>Variant</th>'
            "<th>Games</th><th>Completed</th><th>Think p50 ms</th><th>Think p99 ms</th>"
            "<th>Think max ms</th><th>Time bank used ms: avg / max per match</th>"
            "<th>Matches that emptied the bank</th><th>Exact bids</th></tr></thead>"
            f"<tbody>{variant_rows}</tbody></table>"
            '<p class="note">Completed matches only. p50 and p99 come from the leaderboard\'s think-time '
            "histograms (within ±2%); max is the bot's own slowest decision. The time bank is what a seat may "
            "spend past the per-decision limit in the whole match; an emptied bank makes the next late "
            "answer a timeout. Bank use is known for matches stored from schema 3 on (older ones only for "
            "tournaments whose time limits were stored), and counted over those.</p>"
            f"{_hand_size_section(data)}"
            '<h2>Results by seat</h2><table id="bot-seats" class="list"><thead><tr><th>Variant</th>'
            "<th>Players</th><th>Seat</th><th>Games</th><th>Avg place</th></tr></thead>"
            f"<tbody>{seat_rows}</tbody></table>"
            f"<h2>Faults</h2>{faults}"
            f"<h2>Crashes</h2>{crashes}")
    return layout(f"Bot {data['bot']}", body)


def _percent(share: float | None) -> str:
    return "–" if share is None else f"{100 * share:.1f}%"


def _hand_size_section(data: dict[str, Any]) -> str:
    """The bot page's classic exact bids by hand size (``by_hand_size``, see
    ``arena.results.browse.hand_size_bids``), saying which matches they count; nothing
    when the bot played no classic match."""
    classic = next((v for v in data["variants"] if v["variant"] == "classic" and v.get("by_hand_size")), None)
    if classic is None:
        return ""
    figures = classic["by_hand_size"]
    rows = "".join(
        f'<tr data-cards="{esc(b["cards"])}"><td>{esc(b["cards"])}</td><td>{b["rounds"]}</td>'
        f'<td>{b["exact_bids"]}</td><td>{_percent(b["exact_bid_rate"])}</td></tr>' for b in figures["bands"])
    counted = (f"its {figures['matches']} most recent completed classic matches (the page reads no more)"
               if figures["capped"] else f"all its {figures['matches']} completed classic matches")
    return ('<h2>Exact bids by hand size (classic)</h2><table id="bot-hand-sizes" class="list"><thead><tr>'
            "<th>Cards per hand</th><th>Rounds</th><th>Exact bids</th><th>Rate</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
            f'<p class="note" id="bot-hand-sizes-note">Over {esc(counted)}, every seat the bot held. Exact bids '
            "get rarer as hands grow, so the overall rate depends on how long the games were: compare bots "
            "band by band.</p>")


def _bot_time_bank_cells(variant: dict[str, Any]) -> str:
    """The bot page's two time-bank cells of one variant: "avg / max" ms, and "emptied of known"
    (the count alone would hide that older matches' bank use may be unknown)."""
    known = variant["time_bank_matches"]
    if not known:
        return '<td class="time-bank-used">–</td><td class="time-bank-emptied">–</td>'
    return (f'<td class="time-bank-used">{_ms(variant["time_bank_used_avg_ms"])} / '
            f'{_ms(variant["time_bank_used_max_ms"])}</td>'
            f'<td class="time-bank-emptied">{variant["time_bank_emptied"]} of {known}</td>')
