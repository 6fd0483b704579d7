"""The wire: the generated gRPC code (``pb``) and every conversion between engine
values and protocol messages, used by the referee, the SDK, spectators and organiser
calls: the Play stream both ways (``protocol``), the organiser's and public calls
(``calls``, on the arena's records), a match's action log (``action_log``), the one JSON
codec (``json_codec``), and which of gRPC's I/O paths a process
takes (``grpc_io``). Imports the engine, protobuf, orjson and ``arena.records``, nothing else of the arena."""
