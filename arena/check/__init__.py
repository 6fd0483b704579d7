"""``arena bot check COMMAND``: a bot's validation run, before it enters a tournament.

Kaggle plays every submission in a validation episode before it may compete; this is
that episode for the arena. The bot is started exactly as ``arena tournament --bot``
starts it (its command from :func:`arena.tournament.lineup.parse_bot_option`, then
``--arena HOST:PORT --token T`` and the ``ARENA_*`` environment), against a referee in
this process on a free loopback port, and plays the short but demanding matches of
:data:`PLAN` against the Python sample bots:

* classic at every table size (3-6 players), each game full length, so it meets the
  biggest hands (20 cards) and the last round where every card is dealt and there is
  no trump; hidden and secret bidding, the ±1 rule and the amigo length once each;
  every classic deal is chosen so that the bot deals a turned-up Wizard (it must
  choose trump) at least once;
* extreme at every table size (3-5), full length;
* up to :data:`CONCURRENCY` matches at once on its connection, as a tournament does.

Only the variants its Hello names are played (none named: both), or the one
``--variant`` asks for. The report gives, per variant, every match with the referee's
faults (kind and message), the decisions it answered, and its time per decision
(median, p99, max, as the referee measured the round trip) next to the limits.

The sample bots play in this process through the SDK (:class:`arena.sdk.BotClient`):
on a small machine four more Python processes would cost more than the check. Nothing
is stored (``ArenaServer(store=None)``); the bot's output, and the referee's and the
opponents' logs, go to a temporary folder that is kept, and named, when something
went wrong, and removed when the bot passed.

A decision slower than half the limit earns a note, and the note says why when the
timing shows it (:func:`queueing`, over decisions of one kind: plays with plays):
decisions that overlapped one of the bot's own decisions in its other match were much
slower than the rest of their kind, so its answers queued behind each other (a bot
answering one decision at a time, or Python threads sharing one core); as long either
way, the time is the bot's own; too few of the kind to compare, no cause is named.

The room, one concern a module: ``plan`` (what is played, the settings, the schedule),
``run`` (one run: the referee, the opponents, the bot, the matches) and ``report``
(what the check found, the timing analysis, and the report's words).
"""

from arena.check.plan import (
    CONCURRENCY,
    CONNECT_TIMEOUT,
    OPPONENTS,
    PLAN,
    CheckSettings,
    PlannedMatch,
    ScheduledMatch,
    default_name,
    schedule,
    settings_from_args,
)
from arena.check.report import BotHello, CheckReport, MatchOutcome, queueing, slow_note
from arena.check.run import CheckStartError, check_bot

__all__ = ["CONCURRENCY", "CONNECT_TIMEOUT", "OPPONENTS", "PLAN", "BotHello", "CheckReport", "CheckSettings",
           "CheckStartError", "MatchOutcome", "PlannedMatch", "ScheduledMatch", "check_bot", "default_name",
           "queueing", "schedule", "settings_from_args", "slow_note"]
