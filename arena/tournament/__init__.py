"""Tournaments: the schedule, the lineup of bot processes, the runner (local or on a
server), the ``arena tournament`` command's orchestration and ``arena bot check``."""
