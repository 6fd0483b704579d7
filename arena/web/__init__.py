"""``arena web``: a read-only web view of the arena's database.

``app.create_app(db)`` builds the Starlette app: server-rendered pages (``pages``),
a JSON API (``api``) and the match viewer's steps (``viewer``), with the viewer's
script and the style sheet shipped in ``static/`` (no CDN, no external request).
"""
