"""The one exception the store raises (every module of the store raises it)."""


class StoreError(Exception):
    """Anything the store refuses or cannot do, with a one-line message for the user."""
