"""``arena play``: a person takes a seat against bots, in a browser (arena.human)."""

from __future__ import annotations

import typer

from arena.cli.common import DbOption, check_choice, db_location, fail


def play(
    variant: str = typer.Option("classic", help="classic or extreme"),
    players: int = typer.Option(4, help="Table size, you included: 3-6 classic, 3-5 extreme"),
    rounds: int | None = typer.Option(None, help="Rounds to play [default: the variant's standard length]",
                                      show_default=False),
    bots: str | None = typer.Option(
        None, metavar="NAME=CMD,...",
        help="The bots in the other seats, any bot command each (your own too); seats they leave free go to the "
             "sample bots [default: the sample bots: heuristic, greedy, cautious, random]", show_default=False),
    name: str = typer.Option("you", help="Your name at the table and in the database"),
    port: int = typer.Option(0, help="The page's port on 127.0.0.1; 0 picks a free one"),
    seed: int | None = typer.Option(None, help="Seed of the deal, your seat and the bots' seeds [default: random]",
                                    show_default=False),
    sandbox: str = typer.Option("auto", help="How the bots run, as in arena tournament: auto, bwrap or none"),
    db: str | None = DbOption,
) -> None:
    """Play a match yourself in a browser, against bots, with the arena's rules and referee.

    Prints the page's URL (http://127.0.0.1:PORT/) and serves it until Ctrl-C. Your seat is
    a real bot connection to a local referee; the bots run as in arena tournament (confined
    where bubblewrap works). Limits for every seat: 10 minutes per decision plus a
    10-minute time bank per match; 3 faults (e.g. timeouts) forfeit, as for any bot. The
    match is stored in --db like any other; the page links to its replay, and `arena web
    --db F` shows it later.
    """
    import sys

    from arena.human.server import HOST, serve
    from arena.human.session import choose_bots, new_settings, parse_bots
    from arena.tournament.sandbox import SandboxMode
    from arena.web.app import listening_socket
    from engine import VARIANTS, GameConfig

    check_choice(variant, VARIANTS, "--variant")
    check_choice(sandbox, tuple(mode.value for mode in SandboxMode), "--sandbox")
    if not 0 <= port <= 65535:
        raise typer.BadParameter("must be 0..65535", param_hint="--port")
    if seed is not None and not 0 <= seed < 2**63:
        raise typer.BadParameter("must be between 0 and 2**63 - 1", param_hint="--seed")
    config = GameConfig(variant=variant, players=players, rounds=rounds).validate()
    location = db_location(db)
    lineup = choose_bots(parse_bots(bots), players, name, lambda line: print(f"note: {line}", flush=True))
    settings = new_settings(config, name, lineup, location, sandbox, seed)
    try:
        sock = listening_socket(HOST, port)
    except (OSError, OverflowError) as error:
        fail(f"cannot listen on 127.0.0.1:{port}: {getattr(error, 'strerror', None) or error}")
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    print(f"play at {url}", flush=True)
    you = "you" if name == "you" else f"you ({name})"
    print(f"{variant}, {players} players: {you} in seat {settings.seat} against "
          f"{', '.join(bot.name for bot in lineup)}", flush=True)
    code = serve(settings, sock, lambda line: print(line, flush=True),
                 lambda line: print(f"arena: {line}", file=sys.stderr, flush=True))
    raise typer.Exit(code)
