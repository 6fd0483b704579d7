"""The referee: one match's run (``match``) and the gRPC server that seats bots in
matches (``server``): connections, seating, auth and a thin servicer."""
