"""Wizard Extreme: predict with coloured tokens, pay them back by winning tricks.

The rules are ``RULES.md`` section 2. A short tour::

    >>> import random
    >>> from engine.core import GameConfig
    >>> game = ExtremeGame(GameConfig(variant="extreme", players=4, seed=3, rounds=1))
    >>> game.to_act(), game.decision(1).kind       # seat 0 deals, seat 1 predicts first
    ((1,), 'predict')
    >>> game.apply(1, {"tokens": {"red": 2, "blue": 1}})
    >>> game.observe(2)["tokens"][1]["red"], game.observe(2)["supply"]["red"]
    (2, 3)
    >>> rng = random.Random(0)
    >>> while not game.is_over:
    ...     seat = game.to_act()[0]
    ...     game.apply(seat, game.random_action(seat, rng))
    >>> sum(game.result().totals) >= 0
    True

Representation, chosen for speed: a card is an int 0..74, ``colour * 15 + rank - 1``
with the colours in the order red, yellow, green, blue, purple; a hand is an int bit
mask of its cards; token holdings are lists of seven counts in :data:`TOKEN_COLOURS`
order. Names (``"r7"``, ``"blue"``) appear only at the edges: actions, observations,
events.
"""

from __future__ import annotations

import random
from typing import Any

from engine.core import (
    PAY,
    PLAY,
    PREDICT,
    Action,
    Decision,
    EngineError,
    GameConfig,
    GameResult,
    IllegalAction,
    Prediction,
    SeatRound,
    action_to_json,
    places_from_totals,
)

# ---------------------------------------------------------------------------
# Cards and tokens

COLOURS = ("red", "yellow", "green", "blue", "purple")
LETTERS = "rygbp"
RED = 0
RANKS = 15
HAND_SIZE = 15  # every player gets 15 cards, so every round has 15 tricks

CARD_CODES: tuple[str, ...] = tuple(f"{LETTERS[c]}{r}" for c in range(5) for r in range(1, RANKS + 1))
CARD_INDEX: dict[str, int] = {code: i for i, code in enumerate(CARD_CODES)}
CARD_COLOUR: tuple[int, ...] = tuple(i // RANKS for i in range(len(CARD_CODES)))
# All cards of one colour, as a hand mask; a hand "has the colour" when hand & mask.
COLOUR_MASK: tuple[int, ...] = tuple(((1 << RANKS) - 1) << (RANKS * c) for c in range(5))

# Which ranks are in the deck depends on the number of players (45 / 60 / 75 cards).
MAX_RANK = {3: 9, 4: 12, 5: 15}
# Default length: one round per player, doubled for three players.
DEFAULT_ROUNDS = {3: 6, 4: 4, 5: 5}

TOKEN_COLOURS = COLOURS + ("white", "black")
WHITE, BLACK = 5, 6
TOKEN_INDEX = {name: i for i, name in enumerate(TOKEN_COLOURS)}
SUPPLY_START = (5, 3, 3, 3, 3, 4, 6)  # 27 tokens
TOKEN_PENALTY = (2, 2, 2, 2, 2, 4, 3)

PHASE_PREDICT, PHASE_PLAY, PHASE_PAY, PHASE_OVER = "predict", "play", "pay", "over"

# Event visibility: PUBLIC, or the one seat that may see a private event.
PUBLIC = -1


def deck_for(players: int) -> list[int]:
    """The cards used with ``players`` players, in index order.

    >>> [len(deck_for(p)) for p in (3, 4, 5)]
    [45, 60, 75]
    >>> CARD_CODES[max(deck_for(3))]
    'p9'
    """
    top = MAX_RANK[players]
    return [c * RANKS + r for c in range(5) for r in range(top)]


def mask_cards(mask: int) -> list[int]:
    """The cards of a hand mask, lowest index first (= sorted by colour, then rank)."""
    cards = []
    while mask:
        low = mask & -mask
        cards.append(low.bit_length() - 1)
        mask ^= low
    return cards


def mask_codes(mask: int) -> list[str]:
    """The card codes of a hand mask, sorted.

    >>> mask_codes((1 << 0) | (1 << 16))
    ['r1', 'y2']
    """
    return [CARD_CODES[c] for c in mask_cards(mask)]


def trick_winner(cards: list[tuple[int, int]]) -> int:
    """Index into ``cards`` (``(seat, card)`` in play order) of the winning card.

    The highest red wins if any red was played, else the highest card of the lead colour.

    >>> trick_winner([(0, CARD_INDEX["b3"]), (1, CARD_INDEX["b9"]), (2, CARD_INDEX["r1"])])
    2
    >>> trick_winner([(0, CARD_INDEX["b3"]), (1, CARD_INDEX["b9"]), (2, CARD_INDEX["g15"])])
    1
    """
    lead = CARD_COLOUR[cards[0][1]]
    best = 0
    best_key = -1
    for i, (_, card) in enumerate(cards):
        colour = CARD_COLOUR[card]
        # Reds outrank everything; among equal colours the index orders by rank.
        if colour == RED:
            key = 1000 + card
        elif colour == lead:
            key = card
        else:
            continue
        if key > best_key:
            best, best_key = i, key
    return best


def round_penalties(tokens: list[list[int]], destroyer: int | None, black_taken: int, base: int) -> list[int]:
    """Each seat's penalty at the end of a round.

    Held tokens cost 2 (coloured), 4 (white), 3 (black); the destroyer scores
    ``max(0, base - black_taken)``, where ``black_taken`` counts the black tokens the
    other players took this round.

    >>> round_penalties([[1, 0, 0, 0, 0, 1, 1], [0] * 7, [0] * 7], destroyer=2, black_taken=1, base=4)
    [9, 0, 3]
    >>> round_penalties([[0] * 7, [0] * 7, [0] * 7], destroyer=0, black_taken=6, base=4)
    [0, 0, 0]
    """
    return [
        max(0, base - black_taken) if seat == destroyer
        else sum(n * TOKEN_PENALTY[c] for c, n in enumerate(held))
        for seat, held in enumerate(tokens)
    ]


def next_dealer(penalties: list[int], dealer: int) -> int:
    """The next dealer: the round's winner (lowest penalty). A tie goes to the tied seat
    met first going clockwise from the left of the current dealer.

    >>> next_dealer([3, 0, 5, 0], dealer=1)   # seats 1 and 3 tie; from seat 2: 2, 3, ...
    3
    >>> next_dealer([0, 4, 0], dealer=2)      # from seat 0
    0
    """
    players = len(penalties)
    best = min(penalties)
    return next(s % players for s in range(dealer + 1, dealer + 1 + players) if penalties[s % players] == best)


def _tokens_json(counts: list[int] | tuple[int, ...]) -> dict[str, int]:
    return {TOKEN_COLOURS[i]: n for i, n in enumerate(counts)}


# ---------------------------------------------------------------------------
# The game


class ExtremeGame:
    """One game of Wizard Extreme; see :mod:`engine` for the interface it shares with classic."""

    def __init__(self, config: GameConfig):
        if config.variant != "extreme":
            raise EngineError(f"ExtremeGame plays variant 'extreme', not {config.variant!r}")
        self.config: GameConfig = config.validate()
        self.players: int = config.players
        self.rounds: int = config.rounds if config.rounds is not None else DEFAULT_ROUNDS[config.players]
        self._rng = random.Random(config.seed)
        self._deck = deck_for(config.players)
        self.actions: list[list[Any]] = []
        # Events are compact tuples (visible_to, type, *payload); dicts are built on request.
        self._events: list[tuple] = []
        self.totals: list[int] = [0] * self.players
        self.history: list[tuple[SeatRound, ...]] = []
        self.round = 0  # 0-based index of the current round
        self.last_trick: tuple[tuple[tuple[int, int], ...], int] | None = None
        self._start_round(dealer=0, hands=None)

    # -- setting up a round -------------------------------------------------

    def _start_round(self, dealer: int, hands: list[int] | None) -> None:
        players = self.players
        self.dealer = dealer
        if hands is None:
            deck = list(self._deck)
            self._rng.shuffle(deck)
            hands = [0] * players
            # Deal 15 at a time, starting left of the dealer; the order only matters for determinism.
            for k in range(players):
                seat = (dealer + 1 + k) % players
                for card in deck[k * HAND_SIZE:(k + 1) * HAND_SIZE]:
                    hands[seat] |= 1 << card
        self.hands: list[int] = hands
        self.supply: list[int] = list(SUPPLY_START)
        self.tokens: list[list[int]] = [[0] * 7 for _ in range(players)]
        self.destroyer: int | None = None
        self.predicted: list[bool] = [False] * players
        self.phase = PHASE_PREDICT
        self.current = (dealer + 1) % players
        self.leader = self.current
        self.lead: int | None = None
        self.trick: list[tuple[int, int]] = []
        self.played: list[int] = []
        self.tricks_won: list[int] = [0] * players
        self.tricks_done = 0
        self.black_taken = 0
        self.pay_options: tuple[str, ...] = ()
        self.last_trick = None
        self._log(PUBLIC, "round_start", self.round + 1, dealer)
        for seat in range(players):
            self._log(seat, "hand", seat, tuple(mask_cards(hands[seat])))

    @classmethod
    def from_deal(cls, config: GameConfig, hands: list[list[str]], dealer: int = 0) -> "ExtremeGame":
        """A game whose first round uses the given hands (card codes) and dealer.

        Meant for tests and puzzles: later rounds are shuffled from the seed as usual.
        Such a game cannot be rebuilt by :func:`engine.replay` from its actions alone.

        >>> cfg = GameConfig(variant="extreme", players=3)
        >>> codes = [CARD_CODES[c] for c in deck_for(3)]
        >>> game = ExtremeGame.from_deal(cfg, [codes[0:15], codes[15:30], codes[30:45]], dealer=2)
        >>> game.observe(0)["hand"][:3], game.to_act()
        (['r1', 'r2', 'r3'], (0,))
        """
        game = cls(config)
        players = game.players
        if len(hands) != players or not 0 <= dealer < players:
            raise EngineError(f"from_deal needs {players} hands and a dealer seat 0..{players - 1}")
        masks = []
        seen: set[str] = set()
        allowed = {CARD_CODES[c] for c in game._deck}
        for hand in hands:
            if len(hand) != HAND_SIZE or set(hand) - allowed or seen & set(hand) or len(set(hand)) != HAND_SIZE:
                raise EngineError("from_deal: every hand must be 15 distinct cards of this deck, no card twice")
            seen |= set(hand)
            masks.append(sum(1 << CARD_INDEX[c] for c in hand))
        game._events.clear()
        game._start_round(dealer=dealer, hands=masks)
        return game

    # -- the interface --------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.phase == PHASE_OVER

    def to_act(self) -> tuple[int, ...]:
        """The seat that must decide now; Wizard Extreme has one at a time (empty when over)."""
        return () if self.phase == PHASE_OVER else (self.current,)

    def decision(self, seat: int) -> Decision:
        """What ``seat`` must decide now; :class:`IllegalAction` (kind None) if nothing."""
        if self.phase == PHASE_OVER or seat != self.current:
            raise IllegalAction(self._not_your_turn(seat), seat=seat, kind=None)
        if self.phase == PHASE_PREDICT:
            return Decision(seat, PREDICT, None)
        if self.phase == PHASE_PAY:
            return Decision(seat, PAY, self.pay_options)
        return Decision(seat, PLAY, self._legal_cards(seat))

    def legal_actions(self, seat: int) -> tuple:
        """The legal options of ``seat`` now: card codes, token colours, or ``()`` to predict."""
        decision = self.decision(seat)
        return () if decision.options is None else decision.options

    def random_action(self, seat: int, rng: random.Random) -> Action:
        """A random legal action: uniform over cards or tokens; for a prediction, sometimes the
        destroyer (when free), otherwise a random feasible handful of tokens, sometimes taken
        from other players with an explicit ``take_from``."""
        decision = self.decision(seat)
        if decision.options is not None:
            return rng.choice(decision.options)
        if self.destroyer is None and rng.random() < 0.2:
            return Prediction(destroyer=True)
        supply = list(self.supply)
        held = [list(t) for t in self.tokens]
        counts = [0] * 5
        pairs: list[tuple[str, int]] = []
        for _ in range(rng.randint(0, 5)):
            choices = [c for c in range(5)
                       if supply[c] or (supply[WHITE] and any(held[s][c] for s in range(self.players) if s != seat))]
            if not choices:
                break
            colour = rng.choice(choices)
            counts[colour] += 1
            if supply[colour]:
                supply[colour] -= 1
            else:
                holder = rng.choice([s for s in range(self.players) if s != seat and held[s][colour]])
                held[holder][colour] -= 1
                supply[WHITE] -= 1
                pairs.append((COLOURS[colour], holder))
        # Half the time leave take_from empty and let the documented default choose.
        take_from = tuple(pairs) if rng.random() < 0.5 else ()
        return Prediction(tokens={COLOURS[c]: n for c, n in enumerate(counts) if n}, take_from=take_from)

    def apply(self, seat: int, action: Action | Any) -> None:
        """Play ``action`` for ``seat``. Raises :class:`IllegalAction` (state unchanged) if not legal."""
        if self.phase == PHASE_OVER or seat != self.current:
            raise IllegalAction(self._not_your_turn(seat), seat=seat, kind=None)
        if self.phase == PHASE_PLAY:
            self._play(seat, action)
        elif self.phase == PHASE_PREDICT:
            self._predict(seat, action)
        else:
            self._pay(seat, action)

    def result(self) -> GameResult:
        """Penalty totals and shared places; :class:`EngineError` until the game is over."""
        if self.phase != PHASE_OVER:
            raise EngineError("the game is not over yet")
        totals = tuple(self.totals)
        return GameResult(
            variant="extreme",
            totals=totals,
            places=places_from_totals(totals, higher_is_better=False),
            rounds=tuple(self.history),
            higher_is_better=False,
        )

    # -- prediction -------------------------------------------------------------

    def can_take(self, seat: int) -> dict[str, int]:
        """How many tokens of each colour ``seat`` could take now, each colour on its own.

        The supply's tokens plus those other players hold, as far as the supply has white
        tokens to give in exchange. White tokens are shared between colours: taking from
        others in two colours needs a white token per token taken.
        """
        white = self.supply[WHITE]
        result = {}
        for c in range(5):
            others = sum(self.tokens[s][c] for s in range(self.players) if s != seat)
            result[COLOURS[c]] = self.supply[c] + min(others, white)
        return result

    def _predict(self, seat: int, action: Any) -> None:
        try:
            prediction = Prediction.from_json(action)
        except ValueError as exc:
            raise IllegalAction(str(exc), seat=seat, kind=PREDICT) from None
        counts, exchanges = self._plan_prediction(seat, prediction)
        # Legal: from here on nothing can fail.
        self.actions.append([seat, action_to_json(prediction)])
        self.predicted[seat] = True
        if prediction.destroyer:
            self.destroyer = seat
            self._log(PUBLIC, "destroyer", seat)
        else:
            self._log(PUBLIC, "prediction", seat, tuple(counts), tuple(exchanges))
            mine = self.tokens[seat]
            taken_from_others = [0] * 5
            for colour, _ in exchanges:
                taken_from_others[colour] += 1
            for c in range(5):
                mine[c] += counts[c]
                self.supply[c] -= counts[c] - taken_from_others[c]
            for colour, holder in exchanges:
                self.tokens[holder][colour] -= 1
                self.tokens[holder][WHITE] += 1
                self.supply[WHITE] -= 1
                self._log(PUBLIC, "token_exchange", holder, seat, colour)
        if all(self.predicted):
            self.phase = PHASE_PLAY
            self.current = self.leader = (self.dealer + 1) % self.players
        else:
            self.current = (seat + 1) % self.players

    def _plan_prediction(self, seat: int, p: Prediction) -> tuple[list[int], list[tuple[int, int]]]:
        """Check a prediction; return the token counts and the ``(colour, holder)`` exchanges."""

        def illegal(message: str) -> IllegalAction:
            return IllegalAction(message, seat=seat, kind=PREDICT)

        if p.destroyer:
            if any(p.tokens.values()) or p.take_from:
                raise illegal("the destroyer predicts nothing: take the destroyer or tokens, not both")
            if self.destroyer is not None:
                raise illegal(f"the destroyer is taken this round (seat {self.destroyer}); predict tokens")
            return [0] * 5, []
        counts = [0] * 5
        for name, n in p.tokens.items():
            if name not in COLOURS:
                raise illegal(f"only coloured tokens can be predicted ({', '.join(COLOURS)}), not {name!r}")
            if n < 0:
                raise illegal(f"token counts must be 0 or more (got {name} {n})")
            counts[COLOURS.index(name)] = n
        short = [max(0, counts[c] - self.supply[c]) for c in range(5)]
        exchanges: list[tuple[int, int]] = []
        named = [0] * 5
        available = [list(t) for t in self.tokens]  # what is left to take, per holder
        for name, holder in p.take_from:
            if name not in COLOURS:
                raise illegal(f"take_from names coloured tokens only, not {name!r}")
            c = COLOURS.index(name)
            if short[c] == 0:
                raise illegal(f"take_from names {name}, but the supply has the {name} tokens you asked for")
            if not 0 <= holder < self.players or holder == seat:
                raise illegal(f"take_from must name another player's seat (got {holder})")
            if available[holder][c] == 0:
                raise illegal(f"seat {holder} holds no more {name} tokens to take")
            available[holder][c] -= 1
            named[c] += 1
            exchanges.append((c, holder))
        for c in range(5):
            if named[c] and named[c] != short[c]:
                raise illegal(
                    f"the supply lacks {short[c]} {COLOURS[c]} token(s) but take_from names {named[c]}; "
                    "name one seat per missing token, or leave that colour out to use the default")
            if named[c] == 0 and short[c]:
                # Documented default: holders clockwise from the predictor's left, each emptied in turn.
                need = short[c]
                for k in range(1, self.players):
                    holder = (seat + k) % self.players
                    while need and available[holder][c]:
                        available[holder][c] -= 1
                        need -= 1
                        exchanges.append((c, holder))
                if need:
                    raise illegal(self._cannot_have(seat, counts))
        if len(exchanges) > self.supply[WHITE]:
            raise illegal(self._cannot_have(seat, counts))
        return counts, exchanges

    def _cannot_have(self, seat: int, counts: list[int]) -> str:
        wanted = ", ".join(f"{COLOURS[c]} {n}" for c, n in enumerate(counts) if n)
        can = self.can_take(seat)
        return (f"cannot have {wanted}: can be had red {can['red']}, yellow {can['yellow']}, "
                f"green {can['green']}, blue {can['blue']}, purple {can['purple']} "
                f"(supply plus other players' tokens, one white exchange each; "
                f"{self.supply[WHITE]} white token(s) left for all exchanges together)")

    # -- play ---------------------------------------------------------------------

    def _legal_cards(self, seat: int) -> tuple[str, ...]:
        hand = self.hands[seat]
        if self.lead is not None and hand & COLOUR_MASK[self.lead]:
            hand &= COLOUR_MASK[self.lead]
        return tuple(mask_codes(hand))

    def _play(self, seat: int, action: Any) -> None:
        card = CARD_INDEX.get(action, -1) if isinstance(action, str) else -1
        hand = self.hands[seat]
        legal = card >= 0 and hand >> card & 1 and (
            self.lead is None or CARD_COLOUR[card] == self.lead or not hand & COLOUR_MASK[self.lead])
        if not legal:
            options = self._legal_cards(seat)
            why = "you must follow the lead colour" if card >= 0 and hand >> card & 1 else "not a card in your hand"
            raise IllegalAction(f"cannot play {action!r}: {why}; legal: {', '.join(options)}",
                                seat=seat, kind=PLAY, legal=options)
        self.actions.append([seat, action])
        self.hands[seat] = hand ^ (1 << card)
        if self.lead is None:
            self.lead = CARD_COLOUR[card]
        self.trick.append((seat, card))
        self.played.append(card)
        self._log(PUBLIC, "play", seat, card)
        if len(self.trick) < self.players:
            self.current = (seat + 1) % self.players
            return
        self._finish_trick()

    def _finish_trick(self) -> None:
        cards = tuple(self.trick)
        winner_seat, winning_card = cards[trick_winner(self.trick)]
        lead = self.lead
        assert lead is not None
        destroyer_won = winner_seat == self.destroyer
        self._log(PUBLIC, "trick", winner_seat, cards, lead, destroyer_won)
        self.last_trick = (cards, winner_seat)
        self.tricks_won[winner_seat] += 1
        self.tricks_done += 1
        self.trick = []
        self.lead = None
        self.leader = self.current = winner_seat
        if destroyer_won:
            self._next_trick()
            return
        held = self.tokens[winner_seat]
        allowed = [lead]
        if CARD_COLOUR[winning_card] == RED and lead != RED:
            allowed.append(RED)
        options = [TOKEN_COLOURS[c] for c in allowed if held[c]]
        if held[WHITE]:
            options.append("white")
        if len(options) >= 2:
            self.phase = PHASE_PAY
            self.pay_options = tuple(options)
            return
        if options:
            self._return_token(winner_seat, TOKEN_INDEX[options[0]])
        elif self.supply[BLACK]:
            self.supply[BLACK] -= 1
            held[BLACK] += 1
            self.black_taken += 1  # only non-destroyers ever pay
            self._log(PUBLIC, "black_taken", winner_seat)
        else:
            self._log(PUBLIC, "black_exhausted", winner_seat)
        self._next_trick()

    def _pay(self, seat: int, action: Any) -> None:
        if action not in self.pay_options:
            raise IllegalAction(f"cannot return {action!r}; choose one of {', '.join(self.pay_options)}",
                                seat=seat, kind=PAY, legal=self.pay_options)
        self.actions.append([seat, action])
        self.pay_options = ()
        self._return_token(seat, TOKEN_INDEX[action])
        self._next_trick()

    def _return_token(self, seat: int, colour: int) -> None:
        self.tokens[seat][colour] -= 1
        self.supply[colour] += 1
        self._log(PUBLIC, "token_returned", seat, colour)

    def _next_trick(self) -> None:
        if self.tricks_done < HAND_SIZE:
            self.phase = PHASE_PLAY
            return
        self._end_round()

    # -- scoring ------------------------------------------------------------------

    def _end_round(self) -> None:
        penalties = round_penalties(self.tokens, self.destroyer, self.black_taken, self.config.destroyer_penalty)
        self.history.append(tuple(
            SeatRound(score=score, destroyer=seat == self.destroyer,
                      tokens={TOKEN_COLOURS[c]: n for c, n in enumerate(self.tokens[seat]) if n})
            for seat, score in enumerate(penalties)
        ))
        for seat, score in enumerate(penalties):
            self.totals[seat] += score
        dealer_next = next_dealer(penalties, self.dealer)
        self._log(PUBLIC, "round_end", self.round + 1, tuple(penalties), tuple(self.totals), dealer_next)
        if self.round + 1 >= self.rounds:
            self.phase = PHASE_OVER
            self.pay_options = ()
            totals = tuple(self.totals)
            self._log(PUBLIC, "game_over", totals, places_from_totals(totals, higher_is_better=False))
            return
        self.round += 1
        self._start_round(dealer=dealer_next, hands=None)

    # -- observation and events ------------------------------------------------------

    def observe(self, seat: int | None) -> dict[str, Any]:
        """Everything ``seat`` may know now, as plain JSON data (``None``: a spectator).

        Fields are documented in ``docs/engine-extreme.md``.
        """
        players = self.players
        if seat is not None and not (isinstance(seat, int) and 0 <= seat < players):
            raise EngineError(f"no seat {seat!r} in a {players}-player game")
        over = self.phase == PHASE_OVER
        decision = None
        if seat is not None and not over and seat == self.current:
            d = self.decision(seat)
            decision = {"kind": d.kind, "options": None if d.options is None else list(d.options)}
        last = None
        if self.last_trick is not None:
            cards, winner = self.last_trick
            last = {"cards": [{"seat": s, "card": CARD_CODES[c]} for s, c in cards], "winner": winner}
        obs: dict[str, Any] = {
            "variant": "extreme",
            "players": players,
            "seat": seat,
            "round": self.round + 1,
            "rounds": self.rounds,
            "dealer": self.dealer,
            "phase": self.phase,
            "to_act": list(self.to_act()),
            "decision": decision,
            "hand": [] if seat is None else mask_codes(self.hands[seat]),
            "hand_sizes": [self.hands[s].bit_count() for s in range(players)],
            "trump": "red",
            "tricks_won": list(self.tricks_won),
            "leader": self.leader,
            "lead_suit": None if self.lead is None else COLOURS[self.lead],
            "trick": [{"seat": s, "card": CARD_CODES[c]} for s, c in self.trick],
            "last_trick": last,
            "played": [CARD_CODES[c] for c in self.played],
            "scores": list(self.totals),
            "round_history": [
                [{"score": r.score, "destroyer": r.destroyer, "tokens": dict(r.tokens or {})} for r in rnd]
                for rnd in self.history
            ],
            "tokens": [_tokens_json(t) for t in self.tokens],
            "supply": _tokens_json(self.supply),
            "destroyer": self.destroyer,
            "destroyer_free": self.destroyer is None and self.phase == PHASE_PREDICT,
            "predicted": list(self.predicted),
            "destroyer_penalty": self.config.destroyer_penalty,
            "black_taken": self.black_taken,
            "can_take": self.can_take(self.current) if self.phase == PHASE_PREDICT else None,
            "pay": None,
        }
        if self.phase == PHASE_PAY and self.last_trick is not None:
            cards, winner = self.last_trick
            winning = next(c for s, c in cards if s == winner)
            obs["pay"] = {
                "seat": winner,
                "lead_suit": COLOURS[CARD_COLOUR[cards[0][1]]],
                "winning_card": CARD_CODES[winning],
                "cards": [{"seat": s, "card": CARD_CODES[c]} for s, c in cards],
                "options": list(self.pay_options),
            }
        return obs

    def events_for(self, seat: int | None, start: int = 0) -> tuple[list[dict[str, Any]], int]:
        """The events ``seat`` may see from log position ``start`` on, and the next position.

        >>> game = ExtremeGame(GameConfig(variant="extreme", players=3, seed=1))
        >>> events, nxt = game.events_for(None, 0)
        >>> [e["type"] for e in events], nxt
        (['round_start'], 4)
        """
        log = self._events
        view = PUBLIC if seat is None else seat
        out = [_event_dict(e) for e in log[start:] if e[0] == PUBLIC or e[0] == view]
        return out, len(log)

    def snapshot(self) -> dict[str, Any]:
        """The full state, hidden hands included; equal snapshots mean equal games."""
        return {
            "config": self.config.to_dict(),
            "round": self.round,
            "rounds": self.rounds,
            "dealer": self.dealer,
            "phase": self.phase,
            "current": self.current,
            "leader": self.leader,
            "lead": self.lead,
            "hands": [mask_codes(h) for h in self.hands],
            "tokens": [list(t) for t in self.tokens],
            "supply": list(self.supply),
            "destroyer": self.destroyer,
            "predicted": list(self.predicted),
            "trick": [list(t) for t in self.trick],
            "played": list(self.played),
            "tricks_won": list(self.tricks_won),
            "tricks_done": self.tricks_done,
            "black_taken": self.black_taken,
            "pay_options": list(self.pay_options),
            "totals": list(self.totals),
            "history": [[(r.score, r.destroyer, dict(r.tokens or {})) for r in rnd] for rnd in self.history],
            "actions": [list(a) for a in self.actions],
            "events": [{"visible_to": e[0], **_event_dict(e)} for e in self._events],
        }

    # -- helpers ------------------------------------------------------------------

    def _log(self, visible_to: int, kind: str, *payload: Any) -> None:
        self._events.append((visible_to, kind) + payload)

    def _not_your_turn(self, seat: int) -> str:
        if self.phase == PHASE_OVER:
            return "the game is over"
        return f"seat {seat} has nothing to decide now; waiting for seat {self.current} ({self.phase})"


def _event_dict(event: tuple) -> dict[str, Any]:
    """Turn a stored event tuple into the dict bots see (see ``docs/engine-extreme.md``)."""
    kind = event[1]
    p = event[2:]
    if kind == "play":
        return {"type": "play", "seat": p[0], "card": CARD_CODES[p[1]]}
    if kind == "trick":
        return {"type": "trick", "winner": p[0],
                "cards": [{"seat": s, "card": CARD_CODES[c]} for s, c in p[1]],
                "lead_suit": COLOURS[p[2]], "destroyer_won": p[3]}
    if kind == "token_returned":
        return {"type": kind, "seat": p[0], "colour": TOKEN_COLOURS[p[1]]}
    if kind in ("black_taken", "black_exhausted", "destroyer"):
        return {"type": kind, "seat": p[0]}
    if kind == "prediction":
        return {"type": kind, "seat": p[0],
                "tokens": {COLOURS[c]: n for c, n in enumerate(p[1]) if n},
                "take_from": [[COLOURS[c], s] for c, s in p[2]]}
    if kind == "token_exchange":
        return {"type": kind, "from_seat": p[0], "to_seat": p[1], "colour": COLOURS[p[2]]}
    if kind == "round_start":
        return {"type": kind, "round": p[0], "dealer": p[1]}
    if kind == "hand":
        return {"type": kind, "seat": p[0], "cards": [CARD_CODES[c] for c in p[1]]}
    if kind == "round_end":
        return {"type": kind, "round": p[0], "penalties": list(p[1]), "totals": list(p[2]), "dealer_next": p[3]}
    if kind == "game_over":
        return {"type": kind, "totals": list(p[0]), "places": list(p[1])}
    raise AssertionError(f"unknown event {kind}")
