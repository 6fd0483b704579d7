"""The exceptions the store raises: :class:`StoreError` for anything it refuses or
cannot do, :class:`NotStored` (a kind of it) when what was asked for is not there, and
:class:`StoreUnavailable` (another kind) when the database could not be read or written.

No other room sees the database driver's own errors: :func:`driver_errors_translated`
turns them into :class:`StoreUnavailable` at the store's front.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import exc as sa_exc


class StoreError(Exception):
    """Anything the store refuses or cannot do, with a one-line message for the user."""


class NotStored(StoreError):
    """No tournament or match of that id in this database (the web answers it with a 404).

    ``what`` is the missing thing ("no match 'm-1'"), ``where`` the database as the user
    gave it; the message joins them, and a page shows ``what`` alone (a file's path or a
    server's address is not for visitors).

    >>> str(NotStored("no match 'm-1'", "arena.db"))
    "no match 'm-1' in arena.db"
    """

    def __init__(self, what: str, where: str) -> None:
        super().__init__(f"{what} in {where}")
        self.what = what
        self.where = where


class StoreUnavailable(StoreError):
    """The database could not be read or written: busy or locked past the wait, its server
    gone, or the file damaged. The message is the driver's first line ("database is
    locked"); the web answers it with a 503."""


T = TypeVar("T", bound=type)


def first_line(error: BaseException) -> str:
    """The driver's own message, first line only (SQLAlchemy adds the statement and a link)."""
    text = str(getattr(error, "orig", None) or error).strip()
    return (text.splitlines() or ["database error"])[0]


def _translating(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except sa_exc.IntegrityError:
            raise          # a bug of the store's own, not the database's state
        except sa_exc.DatabaseError as error:     # OperationalError among them
            raise StoreUnavailable(first_line(error)) from error
    return call


def driver_errors_translated(cls: T) -> T:
    """Class decorator: every public method of ``cls`` (and ``__init__``) raises
    :class:`StoreUnavailable` where the database driver raised its own error."""
    for name, value in list(vars(cls).items()):
        if inspect.isfunction(value) and (not name.startswith("_") or name == "__init__"):
            setattr(cls, name, _translating(value))
    return cls
