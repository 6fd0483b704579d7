"""The exceptions the store raises: :class:`StoreError` for anything it refuses or
cannot do, and :class:`NotStored` (a kind of it) when what was asked for is not there."""


class StoreError(Exception):
    """Anything the store refuses or cannot do, with a one-line message for the user."""


class NotStored(StoreError):
    """No tournament or match of that id in this database (the web answers it with a 404)."""
