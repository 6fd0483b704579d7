"""Statistics: the arena's numbers as pure functions (math and numpy; no database, no I/O).

The room below the store: the store imports it to compute, inside the transaction that
saves a match, the rows that follow from the match; the results room above the store
imports it to rate and test what the store read. Everything here is tested without a
database.

``matches.py``      :class:`~arena.stats.matches.NewMatch`: a match being saved, as these
                    functions read it
``summaries.py``    what a saved match adds to the summary tables (seats' facts, outcome
                    counts, per-bot sums and think-time counts), outcome keys, exact bids
                    by hand size
``elo.py``          online Elo: the update after one match, and over a batch of new matches
``think_times.py``  log-spaced think-time histograms that merge by adding counts
``ratings.py``      the leaderboard's Bradley–Terry fit and its bootstrap interval
``sprt.py``         the duplicate A/B test's SPRT: units, bounds, the log-likelihood ratio,
                    the test over games as they end (``SprtMonitor``)
"""
