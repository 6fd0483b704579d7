"""JSON: a board (``"metadata"`` beside ``"rows"``) or a crosstable, indented, from their
JSON-ready data (``arena.results.leaderboard.to_json``, ``arena.results.crosstable.to_json``)."""

from __future__ import annotations

import json

from arena.results import crosstable as ct_data
from arena.results import leaderboard
from arena.results.crosstable import Crosstable
from arena.results.render.common import BoardView


def board(view: BoardView) -> str:
    return json.dumps(leaderboard.to_json(view.rows, view.variant, view.title, view.metadata), indent=2)


def crosstable(ct: Crosstable) -> str:
    return json.dumps(ct_data.to_json(ct), indent=2)
