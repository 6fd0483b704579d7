"""The wire: the generated gRPC code (``pb``) and every conversion between engine
values and protocol messages, used by the referee, the SDK, spectators and organiser
calls: the Play stream both ways (``protocol``), the organiser's and public calls
(``calls``), the one JSON codec (``jsonc``), and which of gRPC's I/O paths a process
takes (``grpc_io``). Imports the engine, protobuf and orjson, nothing else of the arena."""
