"""Classic Wizard: bid the number of tricks you will win, then win exactly that many.

The rules are ``docs/rules.md`` section 1; the observation and event fields are in
``docs/engine.md``. A short tour::

    >>> import random
    >>> from engine.core import GameConfig
    >>> game = ClassicGame(GameConfig(players=3, seed=5, rounds=2))
    >>> game.to_act(), game.decision(1).kind, game.decision(1).options   # seat 0 deals
    ((1,), 'bid', (0, 1))
    >>> game.apply(1, 1)
    >>> game.observe(2)["bids"]
    [None, 1, None]
    >>> rng = random.Random(0)
    >>> while not game.is_over:
    ...     for seat in game.to_act():
    ...         game.apply(seat, game.random_action(seat, rng))
    >>> len(game.result().rounds)
    2

Representation, chosen for speed (random playouts are the engine's hot path;
``arena/bench/engine.py`` measures them): a card is an ``int`` 0..59 and a hand an ``int``
bit mask (see :mod:`engine.classic_cards`); the event log (:mod:`engine.events`) holds
tuples that are turned into dicts only when someone asks (:meth:`ClassicGame.events_for`).
The rules a playout needs are plain functions on those ints: :func:`legal_plays`,
:func:`trick_winner`, :func:`score`; the game calls them, and so does the bare
playout of ``arena/bench/engine.py``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from engine.classic_cards import (
    CODES,
    INDEX,
    JESTER,
    NO_SUIT,
    NUM_CARDS,
    RANK_OF,
    SPECIAL_MASK,
    SUIT_MASKS,
    SUIT_OF,
    SUITS,
    WIZARD,
    codes_of,
    parse_card,
    suit_name,
)
from engine.core import (
    BID,
    PLAY,
    TRUMP,
    Action,
    Decision,
    EngineError,
    GameConfig,
    GameResult,
    IllegalAction,
    SeatAction,
    SeatRound,
    places_from_totals,
)
from engine.events import PUBLIC, Event, EventLog, check_viewer
from engine.game import Game
from engine.masks import mask_of, pick
from engine.observations import ClassicObservation, TrickCard

OVER = "over"  # the phase after the last round; the other phases are the decision kinds
HIGHER_IS_BETTER = True  # totals are points: the most wins

AMIGO_HAND_SIZES: dict[int, tuple[int, ...]] = {
    3: (2, 4, 6, 8, 10, 12, 14, 16, 18, 20),
    4: (1, 3, 5, 7, 9, 11, 12, 13, 14, 15),
    5: (2, 4, 5, 6, 7, 8, 9, 10, 11, 12),
    6: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
}

class _Nobody:
    """The "no seat" sentinel: equal to no seat, and still itself after copy or pickle."""

    def __copy__(self) -> _Nobody:
        return self

    def __deepcopy__(self, memo: dict) -> _Nobody:
        return self

    def __reduce__(self) -> str:
        return "_NOBODY"  # pickled by reference to the module-level instance

    def __repr__(self) -> str:
        return "nobody"


_NOBODY = _Nobody()
_BID_OPTIONS: tuple[tuple[int, ...], ...] = tuple(tuple(range(h + 1)) for h in range(NUM_CARDS + 1))
_BIT: tuple[int, ...] = tuple(1 << c for c in range(NUM_CARDS))
_ALONE: tuple[tuple[int], ...] = tuple((s,) for s in range(6))  # to_act for one seat, without allocating
_NEXT: dict[int, tuple[int, ...]] = {p: tuple((s + 1) % p for s in range(p)) for p in range(3, 7)}  # left neighbour


def hand_sizes(config: GameConfig) -> tuple[int, ...]:
    """The hand size of every round, in order.

    >>> hand_sizes(GameConfig(players=5))
    (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
    >>> hand_sizes(GameConfig(players=4, rounds=3))
    (1, 2, 3)
    >>> hand_sizes(GameConfig(players=4, length="amigo"))
    (1, 3, 5, 7, 9, 11, 12, 13, 14, 15)
    """
    if config.length == "amigo":
        return AMIGO_HAND_SIZES[config.players]
    last = config.rounds if config.rounds is not None else NUM_CARDS // config.players
    return tuple(range(1, last + 1))


def _strengths(trump: int, lead: int) -> tuple[int, ...]:
    """How strongly every card competes for a trick with this trump and lead suit.
    The first of the strongest cards in a trick wins it."""

    def strength(card: int) -> int:
        suit = SUIT_OF[card]
        if suit == WIZARD:
            return 300  # all equal, so the first Wizard played wins
        if suit == trump:
            return 200 + RANK_OF[card]
        if suit == lead:
            return 100 + RANK_OF[card]
        # Jesters and other suits never beat a card of the lead suit, which must be
        # in the trick if they are; with only Jesters the first one wins.
        return 0

    return tuple(strength(c) for c in range(NUM_CARDS))


# _STRENGTHS[trump + 1][lead + 1], for trump and lead NO_SUIT or 0..3.
_STRENGTHS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(_strengths(trump, lead) for lead in range(NO_SUIT, 4)) for trump in range(NO_SUIT, 4)
)


def lead_suit(cards: Sequence[int]) -> int:
    """The lead suit of a (partial) trick: the suit of its first numbered card, or
    :data:`NO_SUIT` if there is none or a Wizard came first.

    >>> from engine.classic_cards import INDEX as I
    >>> lead_suit([I["J1"], I["J2"], I["r4"]]), lead_suit([I["J1"], I["W1"], I["r4"]])
    (2, -1)
    """
    for card in cards:
        suit = SUIT_OF[card]
        if suit < 4:
            return suit
        if suit == WIZARD:
            return NO_SUIT
    return NO_SUIT


def trick_winner(cards: Sequence[int], trump: int) -> int:
    """The index (play order) of the card that wins a complete trick.

    ``trump`` is a suit number 0..3 or :data:`NO_SUIT`. The first Wizard wins;
    else the highest trump; else the highest card of the lead suit (the suit of
    the first numbered card); else, with only Jesters, the first Jester.

    >>> from engine.classic_cards import INDEX as I
    >>> trick_winner([I["J1"], I["W2"], I["W1"], I["r13"]], trump=2)
    1
    >>> trick_winner([I["J1"], I["J2"], I["b3"], I["b9"]], trump=NO_SUIT)
    3
    >>> trick_winner([I["b3"], I["g2"], I["b9"]], trump=1)   # green is trump
    1
    >>> trick_winner([I["J3"], I["J1"], I["J2"]], trump=0)
    0
    """
    strengths = _STRENGTHS[trump + 1][lead_suit(cards) + 1]
    keys = list(map(strengths.__getitem__, cards))
    return keys.index(max(keys))


def legal_plays(hand: int, lead_cards: int) -> int:
    """The mask of the cards in ``hand`` that may be played to a trick. ``lead_cards`` is
    the mask of the lead suit, ``SUIT_MASKS[suit]``, or 0 while the trick has no lead
    suit. Holding the lead suit you must play it, a Wizard or a Jester; otherwise anything.

    >>> from engine.classic_cards import codes_of, INDEX as I
    >>> hand = mask_of([I["b2"], I["r5"], I["W1"], I["J3"]])
    >>> codes_of(legal_plays(hand, SUIT_MASKS[2]))  # red led: red, Wizard, Jester
    ('r5', 'W1', 'J3')
    >>> codes_of(legal_plays(hand, SUIT_MASKS[1]))  # void in green: anything
    ('b2', 'r5', 'W1', 'J3')
    >>> codes_of(legal_plays(hand, 0))              # no lead suit (yet): anything
    ('b2', 'r5', 'W1', 'J3')
    """
    follow = hand & lead_cards
    return follow | (hand & SPECIAL_MASK) if follow else hand


class ClassicGame(Game):
    """One game of classic Wizard, from the first deal to the final scores.

    ``decks`` (for tests and puzzles) stacks the deck of some rounds: it maps a
    round number (1-based) to card codes in deal order. The seat left of the
    dealer gets the first ``r`` cards, the next seat clockwise the next ``r``, and
    so on; the card after the last hand is turned up for trump. Cards not listed
    follow in card order. Other rounds are shuffled from ``config.seed``.

    >>> g = ClassicGame(GameConfig(players=3, rounds=1), decks={1: ["b2", "W1", "J1", "g5"]})
    >>> g.observe(1)["hand"], g.observe(None)["trump"]
    (['b2'], 'green')
    """

    def __init__(self, config: GameConfig, *, decks: Mapping[int, Sequence[str]] | None = None):
        self.config: GameConfig = config.validate()
        if config.variant != "classic":
            raise EngineError(f"ClassicGame plays the classic variant, not {config.variant!r}")
        self.players: int = config.players
        self._next_seat = _NEXT[config.players]
        self.hand_sizes: tuple[int, ...] = hand_sizes(config)
        self.actions: list[SeatAction] = []
        self.is_over: bool = False
        self._decks: dict[int, list[int]] = {r: _stacked_deck(codes) for r, codes in (decks or {}).items()}
        # One generator per game, seeded from a string (stable on every machine and
        # Python version). A round draws as many values as it deals cards, whatever
        # the players do, so the deal of round r depends on the seed alone.
        self._rng = random.Random(f"wizard-classic/{config.seed}")

        p = self.players
        self._log = EventLog()
        self._totals: list[int] = [0] * p
        self._history: list[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = []  # bids, tricks, points
        self._round = 0  # 0-based index into hand_sizes
        # Per-round state, filled in by _start_round.
        self._phase: str = BID
        self._to_act: tuple[int, ...] = ()
        self._dealer = 0
        self._hand_size = 0
        self._hands: list[int] = [0] * p
        self._undealt = 0  # mask of the cards left after the deal, the turned-up card included
        self._trump_card = -1
        self._trump = NO_SUIT
        self._bids: list[int | None] = [None] * p
        self._bids_public = True
        self._tricks: list[int] = [0] * p
        self._leader = 0
        # The seat to play a card, _NOBODY outside the play phase (a sentinel no seat
        # argument can equal, so `seat == self._current` alone selects the hot path).
        self._current: int | _Nobody = _NOBODY
        # legal_plays() of the seat to play, worked out once as the turn passes to it:
        # random_action() and apply() both need it.
        self._legal = 0
        self._lead = NO_SUIT  # the lead suit of the trick in progress (lead_suit()), NO_SUIT for none
        self._follow = 0  # the lead suit's mask, 0 when there is no lead suit
        self._trick: list[int] = []  # cards in play order, the first one played by _leader
        self._last_trick: tuple[int, tuple[int, ...], int] | None = None  # leader, cards, winner
        self._played: list[str] = []  # this round's cards in play order, as codes (observe's "played")
        self._tricks_done = 0
        self._start_round()

    @classmethod
    def from_deal(cls, config: GameConfig, hands: Sequence[Sequence[str]], *, round: int = 1,
                  trump_card: str | None = None, undealt: Sequence[str] = (),
                  totals: Sequence[int] | None = None,
                  history: Sequence[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = ()) -> ClassicGame:
        """A game that starts at round ``round`` (1-based) with the given hands (card codes, by
        seat, as dealt) and turned-up card; the rounds before it are skipped, their ``totals``
        and ``history`` (``(bids, tricks, points)`` per round) taken as given. ``undealt``
        orders the rest of the deck (unlisted cards follow in card order). Later rounds
        are shuffled from the seed. Meant for tests, puzzles and search
        (:func:`engine.worlds.sample_world`); :func:`engine.replay` cannot rebuild such a game.

        >>> cfg = GameConfig(players=3, rounds=2)
        >>> game = ClassicGame.from_deal(cfg, [["b1", "b2"], ["W1", "J1"], ["r5", "g7"]], round=2,
        ...                              trump_card="y9", totals=[20, -10, 30])
        >>> game.observe(0)["hand"], game.observe(0)["trump"], game.to_act(), game.observe(0)["scores"]
        (['b1', 'b2'], 'yellow', (2,), [20, -10, 30])
        """
        game = cls(config)
        p = game.players
        if not 1 <= round <= len(game.hand_sizes):
            raise EngineError(f"from_deal: round must be 1..{len(game.hand_sizes)} (got {round})")
        size = game.hand_sizes[round - 1]
        if len(hands) != p or any(len(h) != size for h in hands):
            raise EngineError(f"from_deal needs {p} hands of {size} cards for round {round}")
        dealer = (round - 1) % p
        if (trump_card is None) != (p * size == NUM_CARDS):
            raise EngineError("from_deal: a trump card is turned up exactly when cards are left after the deal")
        order = [code for k in range(p) for code in hands[(dealer + 1 + k) % p]]
        order += ([trump_card] if trump_card is not None else []) + list(undealt)
        game._log.clear()
        game._totals = list(totals) if totals is not None else [0] * p
        game._history = [tuple(tuple(x) for x in h) for h in history]  # type: ignore[misc]
        game._round = round - 1
        game._decks[round] = _stacked_deck(order)
        game._start_round()
        return game

    # ------------------------------------------------------------------
    # The interface (engine.game.Game)

    def to_act(self) -> tuple[int, ...]:
        """The seats that must decide now: one seat, or with hidden/secret bidding every
        seat that has not yet bid (clockwise from the dealer's left). Empty when over."""
        return self._to_act

    def decision(self, seat: int) -> Decision:
        """What ``seat`` must decide now; :class:`IllegalAction` (kind ``None``) if nothing."""
        if seat not in self._to_act:
            raise self._nothing_to_decide(seat)
        return Decision(seat, self._phase, self.legal_actions(seat))

    def legal_actions(self, seat: int) -> tuple[Action, ...]:
        """The legal actions of ``seat`` in a fixed order: bids ascending, cards in card
        order, suits blue, green, red, yellow. ``()`` when the seat has nothing to decide."""
        phase = self._phase
        if phase == PLAY:
            if seat != self._current:
                return ()
            return codes_of(self._legal)
        if seat not in self._to_act:
            return ()
        if phase == BID:
            return self._bid_options(seat)
        return SUITS  # the dealer's trump choice

    def random_action(self, seat: int, rng: random.Random) -> Action:
        """A uniformly random legal action of ``seat`` (``IllegalAction`` if it has none)."""
        if seat == self._current:
            # The hot path of every random playout: a card straight from the bit mask
            # (the same order and distribution as legal_actions()).
            return CODES[pick(self._legal, rng)]
        options = self.legal_actions(seat)
        if not options:
            raise self._nothing_to_decide(seat)
        # random() rather than choice(): faster, and its sequence is the one part of
        # the random module guaranteed stable across Python versions.
        return options[int(rng.random() * len(options))]

    def apply(self, seat: int, action: Any) -> None:
        """Play ``action`` for ``seat``. An illegal action raises :class:`IllegalAction`
        naming the decision kind and the legal options, and changes nothing."""
        if seat == self._current:
            # Playing a card: the hot path, written out flat for speed.
            try:
                card = INDEX.get(action)  # None for anything that is not a card code
            except TypeError:  # unhashable, e.g. a list
                card = None
            if card is None or not self._legal >> card & 1:
                raise self._illegal(seat, action)
            self._hands[seat] ^= _BIT[card]
            trick = self._trick
            trick.append(card)
            self._played.append(CODES[card])
            self._log.append((PUBLIC, "play", seat, card))
            self.actions.append((seat, action))
            if not self._follow:  # no lead suit yet: this card may decide it
                lead = lead_suit(trick)
                if lead != NO_SUIT:
                    self._lead, self._follow = lead, SUIT_MASKS[lead]
            if len(trick) == self.players:
                self._end_trick()
            else:
                self._current = nxt = self._next_seat[seat]
                self._to_act = _ALONE[nxt]
                self._legal = legal_plays(self._hands[nxt], self._follow)
            return
        phase = self._phase
        if seat not in self._to_act or phase == PLAY or phase == OVER:
            raise self._nothing_to_decide(seat)
        if phase == BID:
            if type(action) is not int or action not in self._bid_options(seat):
                raise self._illegal(seat, action)
            self._bid(seat, action)
        else:  # TRUMP
            if type(action) is not str or action not in SUITS:
                raise self._illegal(seat, action)
            self._choose_trump(seat, action)
        self.actions.append((seat, action))

    def observe(self, seat: int | None, *, round_history: bool = True) -> ClassicObservation:
        """What ``seat`` may know now (``None``: a spectator), as a JSON-serialisable dict.
        Every field is described in :class:`~engine.observations.ClassicObservation`; ``round_history=False`` leaves
        that field ``None`` (see :meth:`engine.game.Game.observe`)."""
        check_viewer(seat, self.players)
        phase = self._phase
        bids = list(self._bids) if self._bids_public else [
            b if s == seat else None for s, b in enumerate(self._bids)
        ]
        return {
            "variant": "classic",
            "players": self.players,
            "seat": seat,
            "round": self._round + 1,
            "rounds": len(self.hand_sizes),
            "hand_size": self._hand_size,
            "dealer": self._dealer,
            "phase": phase,
            "to_act": list(self._to_act),
            "decision": phase if seat is not None and seat in self._to_act else None,
            "hand": list(codes_of(self._hands[seat])) if seat is not None else [],
            "hand_sizes": [h.bit_count() for h in self._hands],
            "trump_card": CODES[self._trump_card] if self._trump_card >= 0 else None,
            "trump": suit_name(self._trump),
            "bidding": self.config.bidding,
            "plus_minus_one": self.config.plus_minus_one,
            "bids": bids,
            "tricks_won": list(self._tricks),
            "leader": self._leader,
            "lead_suit": suit_name(self._lead),
            "trick": self._trick_json(self._leader, self._trick),
            "last_trick": None if self._last_trick is None else {
                "cards": self._trick_json(*self._last_trick[:2]),
                "winner": self._last_trick[2],
            },
            "played": list(self._played),
            "scores": list(self._totals),
            "round_history": [
                {"round": i + 1, "bids": list(b), "tricks": list(t), "scores": list(pts)}
                for i, (b, t, pts) in enumerate(self._history)
            ] if round_history else None,
        }

    def events_for(self, seat: int | None, start: int = 0) -> tuple[list[dict[str, Any]], int]:
        """The events ``seat`` may see from log position ``start`` on (public ones and its
        own private ones; ``None``: public only), and the position to ask from next time."""
        check_viewer(seat, self.players)
        return self._log.visible_to(seat, start, self._event_dict)

    def logged_events(self, start: int = 0) -> tuple[list[Event], int]:
        """Every event logged from position ``start`` on, private ones too, as stored
        (see :meth:`engine.game.Game.logged_events`), and the position to ask from next time."""
        return self._log.since(start)

    def event_dict(self, event: Event) -> dict[str, Any]:
        """The dict form of one of :meth:`logged_events` (as :meth:`events_for` gives it)."""
        return self._event_dict(event)

    def result(self) -> GameResult:
        """The final result; :class:`EngineError` while the game is still running."""
        if self._phase != OVER:
            raise EngineError("the game is not over yet")
        totals = tuple(self._totals)
        return GameResult(
            variant="classic",
            totals=totals,
            places=places_from_totals(totals, higher_is_better=HIGHER_IS_BETTER),
            rounds=tuple(
                tuple(SeatRound(score=pts[s], bid=bids[s], tricks=tricks[s]) for s in range(self.players))
                for bids, tricks, pts in self._history
            ),
            higher_is_better=HIGHER_IS_BETTER,
        )

    def snapshot(self) -> dict[str, Any]:
        """The full state, hidden parts included, for equality checks (e.g. after replay)."""
        return {
            "config": self.config.to_dict(),
            "round": self._round,
            "phase": self._phase,
            "to_act": list(self._to_act),
            "dealer": self._dealer,
            "hands": [list(codes_of(h)) for h in self._hands],
            "undealt": list(codes_of(self._undealt)),
            "trump_card": self._trump_card,
            "trump": self._trump,
            "bids": list(self._bids),
            "bids_public": self._bids_public,
            "tricks": list(self._tricks),
            "leader": self._leader,
            "current": self._current if self._current is not _NOBODY else None,
            "lead": self._lead,
            "trick": list(self._trick),
            "last_trick": self._last_trick and list(self._last_trick),
            "totals": list(self._totals),
            "history": [[list(x) for x in h] for h in self._history],
            "log": self._log.snapshot(),
            "actions": [list(a) for a in self.actions],   # no prediction: each action is its JSON form
        }

    # ------------------------------------------------------------------
    # Rules

    def _start_round(self) -> None:
        p, r = self.players, self._round
        self._hand_size = h = self.hand_sizes[r]
        self._dealer = dealer = r % p
        dealt = p * h
        # The deck holds every card as its one-bit mask, so a hand is just a sum.
        deck = self._decks.get(r + 1) or self._shuffled_deck(min(dealt + 1, NUM_CARDS))
        hands = [0] * p
        for i in range(p):
            hands[(dealer + 1 + i) % p] = sum(deck[i * h:(i + 1) * h])
        self._hands = hands
        self._undealt = sum(deck[dealt:])
        self._bids = [None] * p
        self._bids_public = self.config.bidding == "open"
        self._tricks = [0] * p
        self._leader = (dealer + 1) % p
        self._current = _NOBODY
        self._lead, self._follow = NO_SUIT, 0
        self._trick = []
        self._last_trick = None
        self._tricks_done = 0

        self._played = []
        log = self._log
        log.append((PUBLIC, "round_start", r + 1, dealer, h))
        for seat in range(p):
            log.append((seat, "hand", hands[seat]))
        turned = self._trump_card = deck[dealt].bit_length() - 1 if dealt < NUM_CARDS else -1
        suit = SUIT_OF[turned] if turned >= 0 else JESTER  # nothing turned: as a Jester, no trump
        self._trump = suit if suit < 4 else NO_SUIT
        log.append((PUBLIC, "trump", turned, self._trump))
        if suit == WIZARD:
            self._phase, self._to_act = TRUMP, (dealer,)
        else:
            self._start_bidding()

    def _shuffled_deck(self, needed: int) -> list[int]:
        """A deck (cards as one-bit masks) whose first ``needed`` cards are drawn uniformly
        at random one by one; the order of the rest, which nobody ever sees, is left as it is."""
        pool = list(_BIT)
        rnd = self._rng.random
        drawn = [pool.pop(int(rnd() * n)) for n in range(NUM_CARDS, NUM_CARDS - needed, -1)]
        return drawn + pool

    def _start_bidding(self) -> None:
        self._phase = BID
        first = (self._dealer + 1) % self.players
        if self.config.bidding == "open":
            self._to_act = (first,)
        else:  # hidden / secret: everybody bids at once
            self._to_act = tuple((first + i) % self.players for i in range(self.players))

    def _bid_options(self, seat: int) -> tuple[int, ...]:
        options = _BID_OPTIONS[self._hand_size]
        if self.config.plus_minus_one and self._bids.count(None) == 1:
            # The last bidder may not make the bids add up to the number of tricks.
            forbidden = self._hand_size - sum(b for b in self._bids if b is not None)
            if 0 <= forbidden <= self._hand_size:
                options = tuple(b for b in options if b != forbidden)
        return options

    def _choose_trump(self, seat: int, suit: str) -> None:
        self._trump = SUITS.index(suit)
        self._log.append((PUBLIC, "trump_chosen", seat, self._trump))
        self._start_bidding()

    def _bid(self, seat: int, bid: int) -> None:
        self._bids[seat] = bid
        p = self.players
        if self.config.bidding == "open":
            self._log.append((PUBLIC, "bid", seat, bid))
            done = self._bids.count(None) == 0
            self._to_act = () if done else ((seat + 1) % p,)
        else:
            self._log.append((PUBLIC, "bid_made", seat))
            self._log.append((seat, "bid", seat, bid))
            self._to_act = tuple(s for s in self._to_act if s != seat)
            done = not self._to_act
            if done and self.config.bidding == "hidden":
                self._bids_public = True
                self._log.append((PUBLIC, "bids_revealed", tuple(self._bids)))
        if done:
            self._phase = PLAY
            self._current = self._leader
            self._legal = legal_plays(self._hands[self._leader], 0)
            self._to_act = _ALONE[self._leader]

    def winning_seat(self) -> int | None:
        """The seat taking the trick in progress so far; ``None`` between tricks.

        >>> game = ClassicGame(GameConfig(players=3, seed=1, rounds=3))
        >>> game.winning_seat() is None
        True
        """
        if not self._trick:
            return None
        return (self._leader + trick_winner(self._trick, self._trump)) % self.players

    def _end_trick(self) -> None:
        trick = tuple(self._trick)
        leader = self._leader
        winner = self._leader = self._current = (leader + trick_winner(trick, self._trump)) % self.players
        self._tricks[winner] += 1
        self._log.append((PUBLIC, "trick", winner, leader, trick, self._lead))
        self._last_trick = (leader, trick, winner)
        self._trick = []
        self._lead = NO_SUIT
        self._follow = 0
        self._to_act = _ALONE[winner]
        self._legal = legal_plays(self._hands[winner], 0)
        self._tricks_done += 1
        if self._tricks_done == self._hand_size:
            self._end_round()

    def _end_round(self) -> None:
        bids = tuple(b for b in self._bids if b is not None)
        assert len(bids) == self.players  # every seat bids before the first card
        tricks = tuple(self._tricks)
        points = tuple(score(b, t) for b, t in zip(bids, tricks))
        for s, pts in enumerate(points):
            self._totals[s] += pts
        self._history.append((bids, tricks, points))
        if not self._bids_public:  # secret bids come out at the round's scoring
            self._bids_public = True
            self._log.append((PUBLIC, "bids_revealed", bids))
        self._log.append((PUBLIC, "round_end", self._round + 1, bids, tricks, points, tuple(self._totals)))
        if self._round + 1 == len(self.hand_sizes):
            self._phase, self._to_act, self._current = OVER, (), _NOBODY
            self.is_over = True
            totals = tuple(self._totals)
            self._log.append((PUBLIC, "game_over", totals, places_from_totals(totals, HIGHER_IS_BETTER)))
        else:
            self._round += 1
            self._start_round()

    def _trick_json(self, leader: int, cards: Sequence[int]) -> list[TrickCard]:
        return [{"seat": (leader + i) % self.players, "card": CODES[c]} for i, c in enumerate(cards)]

    def _event_dict(self, event: Event) -> dict[str, Any]:
        """The dict form of one logged event tuple ``(visible_to, type, *data)``."""
        kind = event[1]
        d = event[2:]
        if kind == "play":
            return {"type": "play", "seat": d[0], "card": CODES[d[1]]}
        if kind == "trick":
            winner, leader, cards, lead = d
            return {"type": "trick", "winner": winner, "leader": leader, "cards": self._trick_json(leader, cards),
                    "lead_suit": suit_name(lead)}
        if kind in ("bid", "bid_made"):
            return {"type": kind, "seat": d[0], **({"bid": d[1]} if kind == "bid" else {})}
        if kind == "hand":
            return {"type": "hand", "cards": list(codes_of(d[0]))}
        if kind == "round_start":
            return {"type": "round_start", "round": d[0], "dealer": d[1], "hand_size": d[2]}
        if kind == "trump":
            return {"type": "trump", "card": CODES[d[0]] if d[0] >= 0 else None, "suit": suit_name(d[1])}
        if kind == "trump_chosen":
            return {"type": "trump_chosen", "seat": d[0], "suit": SUITS[d[1]]}
        if kind == "bids_revealed":
            return {"type": "bids_revealed", "bids": list(d[0])}
        if kind == "round_end":
            return {"type": "round_end", "round": d[0], "bids": list(d[1]), "tricks": list(d[2]),
                    "scores": list(d[3]), "totals": list(d[4])}
        if kind == "game_over":
            return {"type": "game_over", "totals": list(d[0]), "places": list(d[1])}
        raise AssertionError(f"unknown event {kind!r}")

    # ------------------------------------------------------------------
    # Errors

    def _nothing_to_decide(self, seat: Any) -> IllegalAction:
        if self._phase == OVER:
            why = "the game is over"
        elif self._to_act:
            verb = {BID: "bid", PLAY: "play", TRUMP: "choose trump"}[self._phase]
            why = f"waiting for seat{'s' if len(self._to_act) > 1 else ''} " \
                  f"{', '.join(map(str, self._to_act))} to {verb}"
        else:
            why = "nobody is to act"
        return IllegalAction(f"seat {seat!r} has nothing to decide now ({why})", seat=seat, kind=None)

    def _illegal(self, seat: int, action: Any) -> IllegalAction:
        kind = self._phase
        legal = self.legal_actions(seat)
        what = {BID: "bid", PLAY: "play", TRUMP: "choose trump"}[kind]
        return IllegalAction(
            f"seat {seat} cannot {what} {action!r}: legal options are {', '.join(map(str, legal))}",
            seat=seat, kind=kind, legal=legal,
        )


def score(bid: int, tricks: int) -> int:
    """The points of one round: 20 + 10 per trick for an exact bid, else -10 per trick off.

    >>> score(2, 2), score(0, 0), score(3, 1), score(0, 2)
    (40, 20, -20, -20)
    """
    return 20 + 10 * tricks if bid == tricks else -10 * abs(bid - tricks)


def _stacked_deck(codes: Sequence[str]) -> list[int]:
    """A stacked deck, cards as one-bit masks: the given codes, then every other card in card order."""
    cards = [parse_card(code) for code in codes]
    if len(set(cards)) != len(cards):
        raise ValueError("a stacked deck lists a card twice")
    given = mask_of(cards)
    return [_BIT[c] for c in cards] + [_BIT[c] for c in range(NUM_CARDS) if not given >> c & 1]
