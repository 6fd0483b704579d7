"""Commands that read the database: ``arena leaderboard``, ``crosstable``, ``tournaments``, ``matches``,
``show``, ``replay`` and ``export`` (rendering in arena.results)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from arena.cli.common import DbOption, check_choice, console, db_location, err_console, fail, open_store
from engine import VARIANTS

if TYPE_CHECKING:    # only for the type: the results room brings the store and SQLAlchemy
    from arena.records import MatchRecord
    from arena.results.listings import Listing
    from arena.store import BoardSnapshot, Store

MatchArgument = typer.Argument(..., metavar="MATCH", help="A match id, as `arena matches` lists them.")
ListFormatOption = typer.Option("table", "--format", help="table, json or csv (json and csv: every field, "
                                "full ids, ISO dates)")


def print_listing(listing: Listing) -> None:
    """Print a listings.Listing: a table on the console (and, on stderr, which columns a
    narrow terminal left out), or JSON/CSV text as it is."""
    if listing.table is None:
        print(listing.text)     # plain print: rich would wrap and colour it
        return
    console.print(listing.table)
    if listing.left_out:
        err_console.print(f"left out to fit {console.width} columns: {', '.join(listing.left_out)} "
                          "(a wider terminal, or --format json or csv, shows every column)", highlight=False)


def tournaments(format: str = ListFormatOption, db: str | None = DbOption) -> None:
    """List stored tournaments with every game option; a run whose process died shows as interrupted."""
    from arena.results import listings, sprt
    from arena.tournament.lock import shown_status

    check_choice(format, listings.LIST_FORMATS, "--format")
    store = open_store(db, must_exist=True)
    location = db_location(db)
    lines = listings.tournament_lines(store, status_of=lambda info: shown_status(info, location),
                                      test_of=lambda info: sprt.summary(store, info.id, info.typed_settings))
    print_listing(listings.tournaments_listing(lines, format, console.width))
    if not lines:
        err_console.print("no tournaments stored yet")


VariantOption = typer.Option(None, help="classic or extreme [default: the tournament's, else every variant with "
                             "completed matches, one board each]", show_default=False)
# The formats that hold several boards one after the other; json, csv and html are one document of one board.
SEVERAL_BOARDS = ("table", "md")
MAX_LISTED = 10_000_000    # arena matches --limit: more than any database holds, within SQLite's integers


def shown_variants(store: Store, variant: str | None, fmt: str) -> list[str]:
    """The variants to show a board of: ``--variant``; else every variant with completed
    matches, in the engine's order, and [] when there are none. (A tournament's board is
    of its variant: ``Store.board_snapshot`` finds it.)

    Why not classic alone: a database of Extreme games only would show an empty classic
    board and say nothing of the games it holds. A format of one board (json, csv, html)
    cannot hold several, so then ``--variant`` must choose (a one-line error)."""
    if variant is not None:
        return [variant]
    found = [v for v in VARIANTS if v in store.variants()]
    if len(found) > 1 and fmt not in SEVERAL_BOARDS:
        fail(f"{store.name} holds completed matches of {' and '.join(found)}: pass --variant "
             f"(--format {fmt} is one board)")
    return found


def boards_to_print(store: Store, variant: str | None, fmt: str) -> tuple[list[str], bool]:
    """The variants to print a board of (:func:`shown_variants`), and whether any has
    completed matches. With none at all: one line on stderr, then no board for the
    table and the first variant's for the other formats, which still print a
    well-formed empty board for scripts."""
    variants = shown_variants(store, variant, fmt)
    if variants:
        return variants, True
    err_console.print(f"no completed matches in {store.name}")
    return ([] if fmt == "table" else [VARIANTS[0]]), False


def tournament_board(store: Store, variant: str | None, tournament: str, elo_limit: int | None = None) -> BoardSnapshot:
    """The snapshot of a tournament's board (of its variant unless ``--variant`` says one),
    and one line on stderr, exit 2, when ``--variant`` is not the variant it was played in."""
    snapshot = store.board_snapshot(variant, tournament, elo_limit)
    assert snapshot.tournament is not None
    played = snapshot.tournament.typed_settings.named_variant
    if variant is not None and played not in (None, variant):
        fail(f"tournament {tournament} is {played}, not {variant}")
    return snapshot


def leaderboard(
    variant: str | None = VariantOption,
    tournament: str | None = typer.Option(None, help="Only this tournament's games."),
    min_games: int = typer.Option(0, help="Leave out bots with fewer games."),
    format: str = typer.Option("table", "--format", help="table, md, csv, json or html"),
    export: Path | None = typer.Option(None, help="Write Markdown, HTML, JSON and CSV files here: one set per variant "
                                       "(or just --variant), for --tournament and --min-games as given, "
                                       "with the crosstable beside them."),
    replays: str = typer.Option("none", help="With --export: also write self-contained replay pages "
                                "(DIR/matches/ID.html, open from disk): none, all, N (the newest N completed "
                                "matches of each exported board) or MATCH_ID[,MATCH_ID...]."),
    db: str | None = DbOption,
) -> None:
    """Show the leaderboard, sorted by the maximum-likelihood rating."""
    from arena.results import elo_history
    from arena.results import export as board_export
    from arena.results import leaderboard as lb
    from arena.results.render import render_board

    check_choice(variant, VARIANTS, "--variant")
    check_choice(format, lb.FORMATS, "--format")
    if min_games < 0:
        raise typer.BadParameter("must not be negative", param_hint="--min-games")
    if export is not None and format != "table":
        raise typer.BadParameter("--export always writes md, html, json and csv; drop --format", param_hint="--format")
    if export is not None and export.exists() and not export.is_dir():
        raise typer.BadParameter(f"{export} exists and is not a directory", param_hint="--export")
    replay_spec = parse_replays(replays)
    if replay_spec != "none" and export is None:
        raise typer.BadParameter("replay pages are written with --export DIR", param_hint="--replays")
    store = open_store(db, must_exist=True)
    snapshot = None
    if tournament is not None:
        snapshot = tournament_board(store, variant, tournament, elo_history.LIMIT if export is not None else None)
        assert snapshot.tournament is not None
        variant = variant or snapshot.tournament.typed_settings.named_variant
    if export is not None:
        from arena.web import export as web_export
        from arena.web.api import NotFound, Withheld

        match_ids = replay_ids(store, replay_spec, [variant] if variant else store.variants(), tournament)
        # Named matches must all be shown; of "all" or N, the private ones not played out are left out.
        withheld: list[str] | None = None if isinstance(replay_spec, list) else []
        try:
            replay_pages = web_export.export_replays(store, export, match_ids, withheld)
        except (NotFound, Withheld, ValueError) as error:
            fail(f"--replays: {error}")
        except OSError as error:
            fail(f"cannot write to {export}: {error.strerror or error}")
        # The tournament's board is read already when its variant is known.
        exported = (iter([snapshot]) if snapshot is not None and variant is not None else
                    (store.board_snapshot(shown, tournament, elo_history.LIMIT)
                     for shown in ([variant] if variant else store.variants())))
        try:
            written = board_export.export(exported, export, min_games=min_games,
                                          replays=[link for _, link in replay_pages]
                                          ) + [path for path, _ in replay_pages]
        except OSError as error:
            fail(f"cannot write to {export}: {error.strerror or error}")
        for path in written:
            console.print(f"wrote {path}")
        if withheld:
            err_console.print(f"left out the replays of {len(withheld)} private matches whose deals are still "
                              "being played (duplicate rotations): export again once they are")
        if not written:
            err_console.print("nothing to export: no completed matches" + (f" in {tournament}" if tournament else ""))
        return
    snapshots, any_games = (iter([snapshot]), True) if snapshot is not None else boards_of(store, variant, format)
    for number, shown in enumerate(snapshots):
        if number:
            print()
        board = lb.board(shown, min_games=min_games)
        if not board.rows and any_games:
            err_console.print(f"no completed {shown.variant} matches"
                              + (f" in tournament {tournament}" if tournament else "")
                              + (f" by bots with {min_games}+ games" if min_games else ""))
        if format == "table":
            render_board(board, "table", console=console)   # one-line headers when the terminal is wide enough
        else:
            # md, html, json and csv carry the board's metadata (date, tournaments, options, games, version).
            text = render_board(board, format)
            assert isinstance(text, str)    # only the console table is rich
            print(text.rstrip("\n"))


def boards_of(store: Store, variant: str | None, fmt: str) -> tuple[Iterator[BoardSnapshot], bool]:
    """The snapshots of the boards to print (:func:`boards_to_print`), each read when its
    turn comes, and whether any variant has completed matches."""
    variants, any_games = boards_to_print(store, variant, fmt)
    return (store.board_snapshot(shown) for shown in variants), any_games


def parse_replays(value: str) -> str | int | list[str]:
    """``--replays``: "none", "all", a count N >= 1, or a list of match ids."""
    value = value.strip()
    if value in ("none", "all"):
        return value
    if value.isdigit():
        if int(value) < 1:
            raise typer.BadParameter("a count must be at least 1 (or none)", param_hint="--replays")
        return int(value)
    ids = [part.strip() for part in value.split(",")]
    if not all(ids):
        raise typer.BadParameter("none, all, N or MATCH_ID[,MATCH_ID...]", param_hint="--replays")
    return list(dict.fromkeys(ids))


def replay_ids(store: Store, spec: str | int | list[str], variants: list[str], tournament: str | None) -> list[str]:
    """The match ids ``--replays`` chose: listed ones as given; for "all" or N, the completed
    matches (all, or the newest N) of each exported variant, in --tournament if given."""
    if isinstance(spec, list):
        return spec
    if spec == "none":
        return []
    chosen: list[str] = []
    for variant in variants:
        wanted = None if spec == "all" else int(spec)
        limit = store.match_count(variant, status=None) if wanted is None else wanted
        while True:
            found = store.list_matches(variant=variant, tournament_id=tournament, limit=max(limit, 1))
            completed = [m.match_id for m in found if m.status == "completed"]
            if wanted is None or len(completed) >= wanted or len(found) < limit:
                break
            limit *= 4      # other statuses were in the way: look further back
        chosen += completed[:wanted] if wanted is not None else completed
    return chosen


def crosstable(
    variant: str | None = VariantOption,
    tournament: str | None = typer.Option(None, help="Only this tournament's games."),
    format: str = typer.Option("table", "--format", help="table, md, json or html"),
    db: str | None = DbOption,
) -> None:
    """Show every pair of bots head to head: games together, ahead-behind-level, average place difference."""
    from arena.results import crosstable as ct
    from arena.results.render import render_crosstable

    check_choice(variant, VARIANTS, "--variant")
    check_choice(format, ct.FORMATS, "--format")
    store = open_store(db, must_exist=True)
    if tournament is not None:
        snapshots, any_games = iter([tournament_board(store, variant, tournament)]), True
    else:
        snapshots, any_games = boards_of(store, variant, format)
    for number, snapshot in enumerate(snapshots):
        if number:
            print()
        table = ct.crosstable_of(snapshot)
        if not table.bots and any_games:
            err_console.print(f"no completed {snapshot.variant} matches"
                              + (f" in tournament {tournament}" if tournament else ""))
            if format == "table":
                continue
        text = render_crosstable(table, format)
        if isinstance(text, str):
            print(text.rstrip("\n"))
        else:
            console.print(text)


def matches(
    variant: str | None = typer.Option(None, help="classic or extreme"),
    tournament: str | None = typer.Option(None, help="Only this tournament."),
    bot: str | None = typer.Option(None, help="Only matches this bot played."),
    limit: int = typer.Option(50, help="At most this many, newest first."),
    format: str = ListFormatOption,
    db: str | None = DbOption,
) -> None:
    """List stored matches (Wizard Extreme totals are penalty points: lower is better)."""
    from arena.results import listings

    check_choice(variant, VARIANTS, "--variant")
    check_choice(format, listings.LIST_FORMATS, "--format")
    if not 1 <= limit <= MAX_LISTED:      # the database's integers are 64-bit
        raise typer.BadParameter(f"must be from 1 to {MAX_LISTED:,}", param_hint="--limit")
    store = open_store(db, must_exist=True)
    if tournament is not None:
        store.get_tournament(tournament)
    # One more than asked tells whether --limit cut the list.
    found = store.list_matches(variant=variant, tournament_id=tournament, bot=bot, limit=limit + 1)
    if not found:
        err_console.print("no stored matches" + (" match these filters" if variant or tournament or bot else ""))
        if format != "table":   # scripts still get a well-formed empty list
            print_listing(listings.matches_listing([], format, console.width))
        return
    print_listing(listings.matches_listing(found[:limit], format, console.width))
    if len(found) > limit:
        err_console.print(f"the newest {limit} shown; --limit N shows more")


def shown_match(store: Store, match_id: str) -> tuple[MatchRecord, bool]:
    """A stored match as ``arena show`` and ``arena export`` may print it, and whether its
    deal seed may be shown, by the rule that keeps a tournament's secrets from spectators
    until it has finished (arena.web.disclosure): a console's output ends up in files
    (``| tee``) as easily as a page. A private match whose deal is still being played is
    refused in one line: its cards are the hands of the deal's other games."""
    from arena.store import StoreError
    from arena.web import disclosure

    record = store.load_match(match_id)
    info = None
    if record.tournament_id is not None:
        try:
            info = store.get_tournament(record.tournament_id)
        except StoreError:      # not in this database: its seeds stay hidden
            info = None
    if record.private:
        progress = (store.deal_progress(record.tournament_id, record.game_index)
                    if record.tournament_id is not None and record.game_index is not None else None)
        if not disclosure.cards_shown(True, info, progress):
            fail(disclosure.withheld_message(match_id, progress))
    return record, disclosure.match_seed_shown(record.tournament_id, info)


def show(match: str = MatchArgument, db: str | None = DbOption) -> None:
    """Show a match: its game options, then round by round and trick by trick (its deal seed once its
    tournament has finished)."""
    from rich.text import Text

    from arena.results import browse

    record, seed_shown = shown_match(open_store(db, must_exist=True), match)
    console.print(Text(browse.describe_match(record, seed_shown)))


def replay(match: str = MatchArgument,
           verify: bool = typer.Option(False, "--verify", hidden=True,
                                       help="Changes nothing: replay always verifies (accepted for old scripts)."),
           db: str | None = DbOption) -> None:
    """Re-run a stored match log through the engine and confirm the stored totals and places (always: the
    old --verify flag is still accepted and changes nothing)."""
    from arena.results import browse

    ok, message = browse.verify_match(open_store(db, must_exist=True), match)
    if ok:
        console.print(f"[green]ok[/] {message}")
        return
    err_console.print(f"[red]MISMATCH[/] {message}")
    raise typer.Exit(1)


def export(match: str = MatchArgument, db: str | None = DbOption) -> None:
    """Print a stored match as JSON (its deal seed once its tournament has finished)."""
    from arena.web.disclosure import public_record

    record, seed_shown = shown_match(open_store(db, must_exist=True), match)
    print(json.dumps(public_record(record.to_json(), seed_shown), indent=1))
