"""The referee: one match's run (``match``, with its ``limits``), the match host that
seats bots in matches (``host``), and the gRPC server in front of it (``server``):
``auth``, ``connections``, ``seating``, a thin ``servicer``, the public calls
(``spectators``, ``listing``) and ``automatch``."""
