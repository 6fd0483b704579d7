"""The message makers: random and long text, options that must be refused (near misses
of a legal one among them), legal and illegal predictions, odd Hellos, and a request's
observation and hand. Each draws only from the ``random.Random`` it is given, so a seed
repeats what it makes.

    >>> request = pb.DecisionRequest(kind=pb.BID, options=["0", "1", "2"])
    >>> bad_option(random.Random(7), request, [], "classic", deque()) in request.options
    False
    >>> hand_of(pb.DecisionRequest(observation_json='{"seat": 1, "hand": ["b7", 3]}'))
    ({'seat': 1, 'hand': ['b7', 3]}, ['b7'])
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Callable
from typing import Any

from arena.wire.pb.wizard_arena.v1 import arena_pb2 as pb
from engine import variant as variant_of
from fuzz.settings import COLOURS, FIXED_BAD_OPTIONS, MESSAGE_LIMIT, U32


def random_text(rng: random.Random, length: int) -> str:
    """Random text mixing ASCII, control characters, Latin-1/CJK and emoji (never a lone
    surrogate: protobuf strings must be valid UTF-8)."""
    ranges = ((0x20, 0x7E), (0x00, 0x1F), (0xA0, 0x2FF), (0x4E00, 0x4F00), (0x1F300, 0x1F64F))
    out = []
    for _ in range(length):
        low, high = rng.choice(ranges)
        out.append(chr(rng.randint(low, high)))
    return "".join(out)


def long_text(rng: random.Random) -> str:
    """A long string of 1 KB to 900 KB of UTF-8 (under the 1 MiB message limit)."""
    size = rng.choice((1_000, 10_000, 100_000, 900_000))
    unit = rng.choice(("9", "b7", "x", "é", "\U0001F0A1"))
    return unit * (size // len(unit.encode()))


def near_miss(rng: random.Random, request: pb.DecisionRequest, hand: list[str], variant: str) -> str:
    """An option shaped almost like a right one for this kind of decision: a legal one
    written differently, a neighbour out of range, a card or colour of the other variant."""
    options = list(request.options) or ["0"]
    legal = rng.choice(options)
    record = variant_of(variant)
    if request.kind == pb.BID:
        return rng.choice(("0" + legal, "+" + legal, " " + legal, legal + " ", legal + ".0", "-0", "00", "01",
                           str(len(options)), "-1", "١", legal + "\x00"))
    if request.kind == pb.PLAY:
        # A card of the other variant: Extreme's purple, or classic's Wizard or Jester.
        other = "p3" if "p3" not in record.cards else rng.choice(("W1", "J1"))
        return rng.choice((legal.upper(), legal[0] + "0" + legal[1:], other, "x7", "b14", "W5", "b0",
                           rng.choice([c for c in hand if c not in options] or ["W5"])))
    return rng.choice((legal.upper(), legal.capitalize(), legal + " ", "pink",
                       "purple" if "purple" not in record.action_colours else "white", legal[:3],
                       "blue" if legal != "blue" else "red"))


def bad_option(rng: random.Random, request: pb.DecisionRequest, hand: list[str], variant: str,
               seen: deque[str]) -> str:
    """An option string that is not among ``request.options``."""
    options = set(request.options)
    deck = variant_of(variant).cards
    makers: list[Callable[[], str]] = [
        lambda: near_miss(rng, request, hand, variant),
        lambda: near_miss(rng, request, hand, variant),
        lambda: near_miss(rng, request, hand, variant),
        lambda: rng.choice(FIXED_BAD_OPTIONS),
        lambda: random_text(rng, rng.randint(1, 24)),
        lambda: rng.choice([c for c in deck if c not in hand] or ["b14"]),   # a real card not held
        lambda: rng.choice(hand) if hand else "b14",   # held but maybe not playable now (not a lead colour)
        lambda: str(len(options) + rng.choice((0, 1, 5, 999))),               # a bid out of range
        lambda: rng.choice(list(seen)) if seen else "r1",                      # another request's option
        lambda: rng.choice(variant_of("extreme").action_colours),     # every token colour
        lambda: rng.choice(list(options) or ["0"]) + rng.choice((" ", "\n", "0", "x")),
        lambda: long_text(rng) if rng.random() < 0.3 else "b" + "1" * rng.randint(2, 50),
    ]
    for _ in range(20):
        option = rng.choice(makers)()
        if option not in options:
            return option
    return "\x00not-an-option"


def exchange(observation: dict[str, Any]) -> tuple[str, int, int] | None:
    """A colour the supply lacks one more token of that another seat holds, while a
    white token is left: (colour, supply count, holder); None if there is none."""
    supply = observation.get("supply") or {}
    holdings = observation.get("tokens") or []
    me = observation.get("seat")
    if not isinstance(supply, dict) or supply.get("white", 0) < 1:
        return None
    for colour in COLOURS:
        for holder, held in enumerate(holdings):
            if holder != me and isinstance(held, dict) and held.get(colour, 0) > 0:
                return colour, int(supply.get(colour, 0)), holder
    return None


def honest_prediction(rng: random.Random, observation: dict[str, Any]) -> pb.Prediction:
    """A prediction that is always legal: the destroyer while free, a token taken from
    another seat in exchange for a white one (naming it in take_from, or by default), or
    up to two tokens of colours the supply has (the sample random bot's rule)."""
    if observation.get("destroyer_free") and rng.random() < 0.1:
        return pb.Prediction(destroyer=True)
    found = exchange(observation)
    if found is not None and rng.random() < 0.3:
        colour, in_supply, holder = found
        named = [pb.TakeFrom(colour=colour, seat=holder)] if rng.random() < 0.5 else []
        return pb.Prediction(tokens={colour: in_supply + 1}, take_from=named)
    supply = observation.get("supply") or {}
    colours = [c for c in COLOURS if supply.get(c, 0) > 0]
    chosen = rng.sample(colours, min(len(colours), rng.randint(0, 2)))
    return pb.Prediction(tokens={c: 1 for c in chosen})


def bad_take_from(rng: random.Random, observation: dict[str, Any]) -> pb.Prediction | None:
    """Tokens beyond the supply with a take_from the engine must refuse: our own seat, a
    seat out of range, one pair too many or too few, or a colour the supply has."""
    supply = observation.get("supply") or {}
    if not isinstance(supply, dict):
        return None
    players = len(observation.get("scores") or [0, 0, 0])
    me = observation.get("seat", 0)
    colour = rng.choice(COLOURS)
    short = rng.randint(1, 2)
    wanted = int(supply.get(colour, 0)) + short
    others = [s for s in range(players) if s != me]
    case = rng.randrange(4)
    if case == 0:
        pairs = [(colour, rng.choice((me, players, 99, U32)))] * short
    elif case == 1:
        pairs = [(colour, rng.choice(others))] * (short + 1)
    elif case == 2 and short > 1:
        pairs = [(colour, rng.choice(others))]
    else:   # the supply has what is asked: take_from may not name it
        wanted = max(1, int(supply.get(colour, 0)))
        pairs = [(colour, rng.choice(others))]
        if not supply.get(colour):
            return None
    return pb.Prediction(tokens={colour: wanted}, take_from=[pb.TakeFrom(colour=c, seat=s) for c, s in pairs])


def bad_prediction(rng: random.Random, observation: dict[str, Any]) -> tuple[pb.Prediction, bool]:
    """A prediction that breaks the rules; returns it and whether it is surely refused
    (some shapes, such as a destroyer taken when it may be free, can be legal)."""
    players = len(observation.get("scores") or [0, 0, 0])
    if rng.random() < 0.3:
        prediction = bad_take_from(rng, observation)
        if prediction is not None:
            return prediction, True
    case = rng.randrange(8)
    if case == 0:   # no colour at all
        return pb.Prediction(tokens={rng.choice(("pink", "", "RED", "白", "red ", random_text(rng, 5))): 1}), True
    if case == 1:   # white and black are token colours, never to be predicted
        return pb.Prediction(tokens={rng.choice(("white", "black")): rng.randint(1, 3)}), True
    if case == 2:   # more than exist
        return pb.Prediction(tokens={rng.choice(COLOURS): rng.choice((16, 99, U32))}), True
    if case == 3:   # destroyer and tokens together
        return pb.Prediction(destroyer=True, tokens={rng.choice(COLOURS): 1}), True
    if case == 4:   # take_from a seat that does not exist
        colour = rng.choice(COLOURS)
        return pb.Prediction(tokens={colour: rng.randint(1, 3)}, take_from=[
            pb.TakeFrom(colour=colour, seat=rng.choice((players, 99, U32)))]), False
    if case == 5:   # take_from naming no colour
        return pb.Prediction(take_from=[pb.TakeFrom(colour=rng.choice(("pink", "", "white")), seat=0)]), True
    if case == 6:   # a long take_from list (tens of KB)
        colour = rng.choice(COLOURS)
        pairs = [pb.TakeFrom(colour=colour, seat=rng.randrange(players)) for _ in range(rng.choice((50, 5000)))]
        return pb.Prediction(tokens={colour: 1}, take_from=pairs), False
    return pb.Prediction(destroyer=True), False


def odd_hello(rng: random.Random, name: str, other_names: list[str]) -> tuple[pb.Hello, str]:
    """A Hello with odd fields, and what is odd about it."""
    case = rng.randrange(9)
    if case == 0:
        return pb.Hello(name=rng.choice(other_names), version="x"), "hello_other_name"
    if case == 1:   # just under, or just over, the 1 MiB message limit
        size = rng.choice((1_000, 100_000, MESSAGE_LIMIT - 64, MESSAGE_LIMIT + 16))
        return pb.Hello(name=name[0] * size), "hello_huge_name"
    if case == 2:
        return pb.Hello(name=random_text(rng, rng.randint(0, 40))), "hello_random_name"
    if case == 3:
        variants = rng.choice((["bogus"], ["CLASSIC"], [""], ["classic"] * 1000, [random_text(rng, 8)],
                               ["classic", "extreme", "bogus"]))
        return pb.Hello(name=name, variants=variants), "hello_odd_variants"
    if case == 4:
        return pb.Hello(name=name, version=long_text(rng)), "hello_huge_version"
    if case == 5:
        return pb.Hello(name=name, max_matches=U32), "hello_max_matches_huge"
    if case == 6:
        return pb.Hello(name=name, max_matches=0, variants=["extreme"]), "hello_max_matches_0"
    if case == 7:
        return pb.Hello(name=name, version=random_text(rng, 30), max_matches=rng.randint(1, 50)), "hello_random"
    return pb.Hello(), "hello_empty"


def hand_of(request: pb.DecisionRequest) -> tuple[dict[str, Any], list[str]]:
    """The request's observation and the seat's hand (empty if unreadable)."""
    try:
        observation = json.loads(request.observation_json)
    except ValueError:
        return {}, []
    hand = observation.get("hand") if isinstance(observation, dict) else None
    return (observation if isinstance(observation, dict) else {}), [c for c in hand or [] if isinstance(c, str)]
