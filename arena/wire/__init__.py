"""The wire: the generated gRPC code (``pb``) and every conversion between engine
values and protocol messages, used by the referee, the SDK, spectators and organiser
calls. Imports the engine and protobuf, nothing else of the arena."""
