"""``arena play``: a person takes a seat against bots, in a browser.

seat (the person's seat: a real bot connection to the referee, its pending decision),
session (the lineup, the referee and its confined bots, the stored record), app (the
page and its JSON API, Starlette), server (the page's server and the matches on one
event loop, and the signals that stop them), templates/ and static/ (the card table
the person plays at: its page, script and style; the felt itself is arena web's
static/table.js). docs/play.md.
"""
