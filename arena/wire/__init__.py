"""The wire: the generated gRPC code (``pb``) and every conversion between engine
values and protocol messages, used by the referee, the SDK, spectators and organiser
calls: the Play stream both ways (``protocol``), the organiser's and public calls
(``calls``), and the one JSON codec (``jsonc``). Imports the engine, protobuf and
orjson, nothing else of the arena."""
