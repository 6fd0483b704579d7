"""``arena play``: a person takes a seat against bots, in a browser.

seat (the person's seat: a real bot connection to the referee, its pending decision),
session (the lineup, the referee and its confined bots, the stored record), app (the
page and its JSON API, Starlette), server (the page's server and the match on one
event loop), templates/ and static/ (the page and its script). docs/play.md.
"""
