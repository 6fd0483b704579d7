"""The referee: one match's run (``match``, with its ``limits``) and the gRPC server that
seats bots in matches (``server``): ``auth``, ``connections``, ``seating``, a thin
``servicer``, and the public calls (``spectators``, ``listing``) and ``ladder``."""
