"""``python -m arena.cli``: the same as the installed ``arena`` command."""

from arena.cli.app import main

main()
