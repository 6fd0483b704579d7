"""Transitional: the Bradley–Terry fit is ``arena.stats.ratings`` now.

``arena.web.pages`` (being re-layered by others) still imports ``MIN_UNITS`` from here;
drop this module once it imports ``arena.stats.ratings``.
"""

from __future__ import annotations

from arena.stats.ratings import MIN_UNITS

__all__ = ["MIN_UNITS"]
