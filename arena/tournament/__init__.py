"""Tournaments: what ``arena tournament`` and ``arena bot check`` do.

- ``settings``: :class:`TournamentSettings`, every default and check of a tournament,
  stored with it for ``--resume``;
- ``schedule``: which bots sit where, with which deal, in every game;
- ``lineup``: the bots and their processes;
- ``runner``: playing the scheduled games on a local referee or a running server;
- ``lock``: one process per tournament, and the status ``arena tournaments`` shows;
- ``progress``: the progress line;
- ``command``: ``arena tournament`` from start to leaderboard;
- ``check``: ``arena bot check``.
"""
