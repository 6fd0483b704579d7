"""CSV: a board as one row per bot, its metadata as ``meta_*`` columns repeated on every row;
and :func:`as_csv`, the CSV of ``arena tournaments`` and ``arena matches``.

(Not ``#`` comment lines: csv readers, spreadsheets and pandas would take them for rows.)
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from arena.results.leaderboard import BoardMetadata, LeaderboardRow, crashed, row_json
from arena.results.render.common import BoardView
from engine import variant as variant_of


def board(view: BoardView) -> str:
    """The board's rows as CSV with a header row; the score's column is named for its
    order in Wizard Extreme, and the crash columns come only when some bot crashed."""
    out = io.StringIO()
    fields = _fields(view.variant, crashed(view.rows))
    extra = _metadata(view.metadata) if view.metadata is not None else {}
    writer = csv.DictWriter(out, fieldnames=fields + list(extra), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in view.rows:
        data = row_json(row)
        data["avg_score_lower_is_better"] = data["avg_score"]
        writer.writerow({**data, **extra})
    return out.getvalue()


def _fields(variant: str, crashes: bool = False) -> list[str]:
    """The CSV columns of a variant's rows: LeaderboardRow's fields, with the score's
    order in its name for Wizard Extreme, and the crash fields only when some bot crashed."""
    record = variant_of(variant)
    fields = list(LeaderboardRow.__dataclass_fields__)
    if not record.bids:
        fields.remove("exact_bid_rate")
    if not crashes:
        fields.remove("crashes")
        fields.remove("last_crash")
    if not record.higher_is_better:
        fields[fields.index("avg_score")] = "avg_score_lower_is_better"
    return fields


def _metadata(metadata: BoardMetadata) -> dict[str, Any]:
    """The metadata as ``meta_*`` columns, the same on every row."""
    return {
        "meta_generated_at": metadata.generated_at, "meta_variant": metadata.variant,
        "meta_score_order": metadata.score_order, "meta_tournaments": " ".join(metadata.tournaments),
        "meta_games": metadata.games, "meta_games_outside_tournaments": metadata.games_outside_tournaments,
        "meta_option_sets": json.dumps([asdict(s) for s in metadata.option_sets], separators=(",", ":")),
        "meta_min_games": metadata.min_games, "meta_arena_version": metadata.arena_version,
        "meta_think_time_resolution": metadata.think_time_resolution,
        "meta_tests": json.dumps(metadata.tests, separators=(",", ":")),
    }


def as_csv(records: Sequence[Mapping[str, Any]], fieldnames: Sequence[str]) -> str:
    """Rows as CSV text with a header row; None is an empty cell, booleans are true/false.

    >>> print(as_csv([{"a": 1, "b": None, "c": True}], ["a", "b", "c"]), end="")
    a,b,c
    1,,true
    """
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(fieldnames), lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({k: ("true" if v else "false") if isinstance(v, bool) else v for k, v in record.items()})
    return out.getvalue()
