"""Wizard Extreme: predict with coloured tokens, pay them back by winning tricks.

The rules are ``docs/rules.md`` section 2; the observation and event fields are in
``docs/engine-extreme.md``. A short tour::

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
    >>> len(game.result().totals)
    4

Representation, chosen for speed: a card is an ``int`` 0..74 and a hand an ``int`` bit
mask (see :mod:`engine.extreme_cards`, which also holds the tokens); token holdings are
lists of seven counts in ``TOKEN_COLOURS`` order; the event log (:mod:`engine.events`)
holds tuples. Names (``"r7"``, ``"blue"``) appear only at the edges: actions,
observations and events, made in :mod:`engine.extreme_json`. The rules a playout needs
are plain functions on those ints (:func:`legal_plays`, :func:`trick_winner`,
:func:`round_penalties` here; what a prediction may take, in :mod:`engine.extreme_tokens`),
and the game calls them.
"""

from __future__ import annotations

import random
from typing import Any

from engine import extreme_tokens
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
    SeatAction,
    SeatRound,
    action_to_json,
    places_from_totals,
)
from engine.events import PUBLIC, Event, EventLog, check_viewer
from engine.extreme_cards import (
    BLACK,
    CODES,
    COLOUR_MASKS,
    COLOUR_OF,
    COLOURS,
    INDEX,
    RED,
    SUPPLY_START,
    TOKEN_COLOURS,
    TOKEN_INDEX,
    TOKEN_PENALTY,
    WHITE,
    codes_of,
    deck_for,
)
from engine.extreme_json import (
    cards_json,
    event_dict,
    last_trick_json,
    pay_json,
    round_history_json,
    tokens_json,
)
from engine.game import Game
from engine.masks import pick
from engine.observations import ExtremeObservation

HAND_SIZE = 15  # every player gets 15 cards, so every round has 15 tricks
# Default length: one round per player, doubled for three players.
DEFAULT_ROUNDS = {3: 6, 4: 4, 5: 5}
# The rules let the game choose any number of rounds and any destroyer penalty; the arena
# caps both (docs/rules.md, "Choices where the rules are silent"): a mistyped number must
# not make a match that never ends, nor totals beyond the record's 64-bit fields.
MAX_ROUNDS = 100
MAX_DESTROYER_PENALTY = 1000

OVER = "over"
HIGHER_IS_BETTER = False  # totals are penalty points: the fewest win


def legal_plays(hand: int, lead_cards: int) -> int:
    """The mask of the cards in ``hand`` that may be played to a trick. ``lead_cards`` is
    the mask of the lead colour, ``COLOUR_MASKS[colour]``, or 0 for the trick's first card.
    You must follow the lead colour if you can; otherwise any card (red too).

    >>> from engine.masks import mask_of
    >>> hand = mask_of([INDEX["r3"], INDEX["b5"], INDEX["b9"]])
    >>> codes_of(legal_plays(hand, COLOUR_MASKS[3])), codes_of(legal_plays(hand, COLOUR_MASKS[2]))
    (('b5', 'b9'), ('r3', 'b5', 'b9'))
    """
    return hand & lead_cards or hand


def trick_winner(cards: list[tuple[int, int]] | tuple[tuple[int, int], ...]) -> int:
    """Index into ``cards`` (``(seat, card)`` in play order) of the winning card.

    The highest red wins if any red was played, else the highest card of the lead colour.

    >>> trick_winner([(0, INDEX["b3"]), (1, INDEX["b9"]), (2, INDEX["r1"])])
    2
    >>> trick_winner([(0, INDEX["b3"]), (1, INDEX["b9"]), (2, INDEX["g15"])])
    1
    """
    lead = COLOUR_OF[cards[0][1]]
    best = 0
    best_key = -1
    for i, (_, card) in enumerate(cards):
        colour = COLOUR_OF[card]
        # Reds outrank everything; within one colour the card index orders by rank.
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


# ---------------------------------------------------------------------------
# The game


def _as_logged(prediction: Prediction) -> Prediction:
    """The prediction as the log keeps it: as its JSON form reads back
    (``Prediction.from_json(prediction.to_json())``: zero counts dropped, ``take_from``
    as tuple pairs), in a dict of its own, so that a caller who changes the dict of the
    prediction it applied leaves the log as it was. Built directly, since the round trip
    takes three times as long."""
    tokens = {colour: n for colour, n in prediction.tokens.items() if n}
    return Prediction(prediction.destroyer, tokens, tuple((colour, seat) for colour, seat in prediction.take_from))


class ExtremeGame(Game):
    """One game of Wizard Extreme; its interface is :class:`engine.game.Game`, as classic's is.

    The state is private; read it through :meth:`observe` (what a seat may know) or
    :meth:`snapshot` (everything).
    """

    def __init__(self, config: GameConfig):
        self.config: GameConfig = config.validate()
        if config.variant != "extreme":
            raise EngineError(f"ExtremeGame plays the extreme variant, not {config.variant!r}")
        self.players: int = config.players
        self.rounds: int = config.rounds if config.rounds is not None else DEFAULT_ROUNDS[config.players]
        self.actions: list[SeatAction] = []
        self.is_over: bool = False
        p = self.players
        self._next_seat = tuple((s + 1) % p for s in range(p))
        # Seeded from a string: the same deals on every machine and Python version.
        # Every round draws the same amount of randomness, so a round's deal depends on
        # the seed alone, never on what the players did.
        self._rng = random.Random(f"wizard-extreme/{config.seed}")
        self._deck = deck_for(p)
        self._log = EventLog()
        self._totals: list[int] = [0] * p
        self._history: list[tuple[SeatRound, ...]] = []
        self._round = 0  # 0-based index of the current round
        self._start_round(dealer=0, hands=None)

    @classmethod
    def from_deal(cls, config: GameConfig, hands: list[list[str]], dealer: int = 0) -> ExtremeGame:
        """A game whose first round uses the given hands (card codes) and dealer.

        Meant for tests and puzzles: later rounds are shuffled from the seed as usual.
        Such a game cannot be rebuilt by :func:`engine.replay` from its actions alone.

        >>> cfg = GameConfig(variant="extreme", players=3)
        >>> codes = [CODES[c] for c in deck_for(3)]
        >>> game = ExtremeGame.from_deal(cfg, [codes[0:15], codes[15:30], codes[30:45]], dealer=2)
        >>> game.observe(0)["hand"][:3], game.to_act()
        (['r1', 'r2', 'r3'], (0,))
        """
        game = cls(config)
        players = game.players
        if len(hands) != players or not 0 <= dealer < players:
            raise EngineError(f"from_deal needs {players} hands and a dealer seat 0..{players - 1}")
        allowed = {CODES[c] for c in game._deck}
        seen: set[str] = set()
        masks = []
        for hand in hands:
            cards = set(hand)
            if len(hand) != HAND_SIZE or len(cards) != HAND_SIZE or cards - allowed or cards & seen:
                raise EngineError("from_deal: every hand must be 15 distinct cards of this deck, no card twice")
            seen |= cards
            masks.append(sum(1 << INDEX[c] for c in hand))
        game._log.clear()
        game._rng = random.Random(f"wizard-extreme/{config.seed}")  # redraw round 1 as if fresh
        game._start_round(dealer=dealer, hands=masks)
        return game

    @classmethod
    def from_observation(cls, config: GameConfig, obs: ExtremeObservation, hands: list[int]) -> ExtremeGame:
        """The game at the decision point a seat's observation ``obs`` describes, with every
        seat's current hand given as a bit mask (``hands``; the observer's must match its
        observation). Tokens, supply, destroyer, tricks, the trick in progress and the
        scores are taken from ``obs``. For search (:func:`engine.worlds.sample_world`):
        the event log and ``actions`` begin here, and later rounds are shuffled from the seed.

        >>> game = ExtremeGame(GameConfig(variant="extreme", players=3, seed=1, rounds=1))
        >>> game.apply(1, {"tokens": {"red": 1}})
        >>> obs = game.observe(2)
        >>> copy = ExtremeGame.from_observation(game.config, obs, [sum(1 << INDEX[c] for c in h)
        ...     for h in game.snapshot()["hands"]])
        >>> copy.observe(2) == obs
        True
        """
        game = cls(config)
        p = game.players
        if len(hands) != p or [h.bit_count() for h in hands] != list(obs["hand_sizes"]):
            raise EngineError("from_observation: the hands must have the observed sizes")
        if obs["phase"] == OVER:
            raise EngineError("from_observation: the game is over")
        if obs["round_history"] is None:
            raise EngineError("from_observation: the observation needs its round_history")
        game._round = obs["round"] - 1
        game._totals = list(obs["scores"])
        game._history = [
            tuple(SeatRound(score=score, destroyer=seat == r["destroyer"], tokens=dict(r["tokens"][seat]))
                  for seat, score in enumerate(r["scores"]))
            for r in obs["round_history"]
        ]
        game._log.clear()
        game._start_round(dealer=obs["dealer"], hands=list(hands))
        game._supply = [obs["supply"][c] for c in TOKEN_COLOURS]
        game._tokens = [[held[c] for c in TOKEN_COLOURS] for held in obs["tokens"]]
        game._destroyer = obs["destroyer"]
        game._predicted = list(obs["predicted"])
        game._black_taken = obs["black_taken"]
        game._tricks_won = list(obs["tricks_won"])
        game._played = [INDEX[c] for c in obs["played"]]
        game._tricks_done = (len(game._played) - len(obs["trick"])) // p
        game._trick = [(e["seat"], INDEX[e["card"]]) for e in obs["trick"]]
        if obs["last_trick"] is not None:
            last = obs["last_trick"]
            game._last_trick = (tuple((e["seat"], INDEX[e["card"]]) for e in last["cards"]), last["winner"])
        game._leader = obs["leader"]
        game._lead = None if obs["lead_suit"] is None else COLOURS.index(obs["lead_suit"])
        game._follow = 0 if game._lead is None else COLOUR_MASKS[game._lead]
        game._phase = obs["phase"]
        game._current = current = obs["to_act"][0]
        if game._phase == PAY:
            pay = obs["pay"]
            assert pay is not None   # present while the phase is pay
            game._pay_options = tuple(pay["options"])
            game._legal = legal_plays(game._hands[current], 0)
        elif game._phase == PLAY:
            game._legal = legal_plays(game._hands[current], game._follow)
        return game

    def _start_round(self, dealer: int, hands: list[int] | None) -> None:
        p = self.players
        deck = list(self._deck)
        # Fisher-Yates with random(): its sequence is the part of `random` that is
        # guaranteed stable across Python versions. Shuffled even when hands are given,
        # so that later rounds get the same deals as without from_deal.
        rnd = self._rng.random
        for i in range(len(deck) - 1):
            j = i + int(rnd() * (len(deck) - i))
            deck[i], deck[j] = deck[j], deck[i]
        if hands is None:
            hands = [0] * p
            # 15 cards at a time, from the dealer's left.
            for k in range(p):
                seat = (dealer + 1 + k) % p
                for card in deck[k * HAND_SIZE:(k + 1) * HAND_SIZE]:
                    hands[seat] |= 1 << card
        self._dealer = dealer
        self._hands: list[int] = hands
        self._supply: list[int] = list(SUPPLY_START)
        self._tokens: list[list[int]] = [[0] * 7 for _ in range(p)]
        self._destroyer: int | None = None
        self._predicted: list[bool] = [False] * p
        self._phase = PREDICT
        self._current = self._next_seat[dealer]
        self._leader = self._current
        self._lead: int | None = None  # lead colour of the trick in progress
        self._follow = 0  # the lead colour's card mask, 0 before the lead
        # legal_plays() of the seat to play, worked out once as the turn passes to it:
        # random_action() and apply() both need it.
        self._legal = 0
        self._trick: list[tuple[int, int]] = []  # (seat, card) in play order
        self._last_trick: tuple[tuple[tuple[int, int], ...], int] | None = None  # cards, winner
        self._played: list[int] = []
        self._tricks_won: list[int] = [0] * p
        self._tricks_done = 0
        self._black_taken = 0
        self._pay_options: tuple[str, ...] = ()
        self._log.append((PUBLIC, "round_start", self._round + 1, dealer))
        for seat in range(p):
            self._log.append((seat, "hand", seat, hands[seat]))

    # -- the interface (engine.game.Game) -------------------------------------

    def to_act(self) -> tuple[int, ...]:
        """The seat that must decide now: Wizard Extreme has one at a time (empty when over)."""
        return () if self._phase == OVER else (self._current,)

    def decision(self, seat: int) -> Decision:
        """What ``seat`` must decide now; :class:`IllegalAction` (kind ``None``) if nothing."""
        if self._phase == OVER or seat != self._current:
            raise self._nothing_to_decide(seat)
        if self._phase == PREDICT:
            return Decision(seat, PREDICT, None)
        if self._phase == PAY:
            return Decision(seat, PAY, self._pay_options)
        return Decision(seat, PLAY, codes_of(self._legal))

    def legal_actions(self, seat: int) -> tuple[Action, ...]:
        """The legal options of ``seat`` in a fixed order: cards in card order, token colours
        as in the pay decision. ``()`` to predict, or when the seat has nothing to decide."""
        if self._phase == OVER or seat != self._current or self._phase == PREDICT:
            return ()
        if self._phase == PAY:
            return self._pay_options
        return codes_of(self._legal)

    def random_action(self, seat: int, rng: random.Random) -> Action:
        """A random legal action of ``seat``: uniform over cards or token colours.

        A random prediction takes the destroyer (when free) one time in five; otherwise
        0 to 5 tokens of random colours that can be had, sometimes from other players,
        naming them in ``take_from`` half of the time (else the default applies).
        """
        phase = self._phase
        if phase == PLAY and seat == self._current:
            return CODES[pick(self._legal, rng)]
        if phase == PAY and seat == self._current:
            options = self._pay_options
            return options[int(rng.random() * len(options))]
        if phase != PREDICT or seat != self._current:
            raise self._nothing_to_decide(seat)
        return extreme_tokens.random_prediction(seat, self._supply, self._tokens, self._destroyer is None, rng)

    def apply(self, seat: int, action: Any) -> None:
        """Play ``action`` for ``seat``. An illegal action raises :class:`IllegalAction`
        naming the decision kind and the legal options, and changes nothing."""
        if seat != self._current or self._phase == OVER:
            raise self._nothing_to_decide(seat)
        if self._phase == PLAY:
            self._play(seat, action)
        elif self._phase == PREDICT:
            self._predict(seat, action)
        else:
            self._pay(seat, action)

    def result(self) -> GameResult:
        """Penalty totals and shared places; :class:`EngineError` until the game is over."""
        if self._phase != OVER:
            raise EngineError("the game is not over yet")
        totals = tuple(self._totals)
        return GameResult(
            variant="extreme",
            totals=totals,
            places=places_from_totals(totals, higher_is_better=HIGHER_IS_BETTER),
            rounds=tuple(self._history),
            higher_is_better=HIGHER_IS_BETTER,
        )

    # -- prediction -------------------------------------------------------------

    def can_take(self, seat: int) -> dict[str, int]:
        """How many tokens of each colour ``seat`` could take now, each colour on its own
        (:func:`engine.extreme_tokens.can_take`)."""
        return extreme_tokens.can_take(self._supply, self._tokens, seat)

    def _predict(self, seat: int, action: Any) -> None:
        try:
            prediction = Prediction.from_json(action)
        except ValueError as exc:
            raise IllegalAction(str(exc), seat=seat, kind=PREDICT) from None
        counts, exchanges = extreme_tokens.plan_prediction(prediction, seat, self._supply, self._tokens,
                                                           self._destroyer)
        # Legal: from here on nothing can fail.
        self.actions.append((seat, _as_logged(prediction)))
        self._predicted[seat] = True
        if prediction.destroyer:
            self._destroyer = seat
            self._log.append((PUBLIC, "destroyer", seat))
        else:
            self._log.append((PUBLIC, "prediction", seat, tuple(counts), tuple(exchanges)))
            mine, supply = self._tokens[seat], self._supply
            for c in range(5):
                mine[c] += counts[c]
                supply[c] -= counts[c]
            for colour, holder in exchanges:
                # The token comes from the holder instead of the supply; the holder gets a white one.
                supply[colour] += 1
                self._tokens[holder][colour] -= 1
                self._tokens[holder][WHITE] += 1
                supply[WHITE] -= 1
                self._log.append((PUBLIC, "token_exchange", holder, seat, colour))
        if all(self._predicted):
            self._phase = PLAY
            self._current = self._leader = leader = self._next_seat[self._dealer]
            self._legal = legal_plays(self._hands[leader], 0)
        else:
            self._current = self._next_seat[seat]

    # -- play ---------------------------------------------------------------------

    def _play(self, seat: int, action: Any) -> None:
        # The hot path of every game (15 x players calls a round): kept flat.
        try:
            card = INDEX.get(action)  # None for anything that is not a card code
        except TypeError:  # unhashable, e.g. a list
            card = None
        if card is None or not self._legal >> card & 1:
            options = codes_of(self._legal)
            held = card is not None and self._hands[seat] >> card & 1
            why = "you must follow the lead colour" if held else "not a card in your hand"
            raise IllegalAction(f"cannot play {action!r}: {why}; legal: {', '.join(options)}",
                                seat=seat, kind=PLAY, legal=options)
        self.actions.append((seat, action))
        self._hands[seat] ^= 1 << card
        self._log.append((PUBLIC, "play", seat, card))
        self._played.append(card)
        trick = self._trick
        trick.append((seat, card))
        if len(trick) == 1:
            self._lead = colour = COLOUR_OF[card]
            self._follow = COLOUR_MASKS[colour]
        if len(trick) < self.players:
            self._current = nxt = self._next_seat[seat]
            self._legal = legal_plays(self._hands[nxt], self._follow)
        else:
            self._end_trick()

    def winning_seat(self) -> int | None:
        """The seat taking the trick in progress so far; ``None`` between tricks."""
        if not self._trick:
            return None
        return self._trick[trick_winner(self._trick)][0]

    def _end_trick(self) -> None:
        cards = tuple(self._trick)
        winner, card = cards[trick_winner(cards)]
        lead = self._lead
        assert lead is not None
        destroyer_won = winner == self._destroyer
        self._log.append((PUBLIC, "trick", winner, cards, lead, destroyer_won))
        self._last_trick = (cards, winner)
        self._tricks_won[winner] += 1
        self._tricks_done += 1
        self._trick = []
        self._lead = None
        self._follow = 0
        self._leader = self._current = winner
        self._legal = legal_plays(self._hands[winner], 0)  # also after paying: the hand stays
        if destroyer_won:  # the cards are discarded, no token moves
            self._next_trick()
            return
        held = self._tokens[winner]
        if not (held[lead] or held[WHITE] or held[RED]):  # the common case: nothing to return
            self._take_black(winner)
            self._next_trick()
            return
        options = [TOKEN_COLOURS[lead]] if held[lead] else []
        if lead != RED and COLOUR_OF[card] == RED and held[RED]:  # won with a red card on another lead
            options.append("red")
        if held[WHITE]:
            options.append("white")
        if len(options) >= 2:  # a real choice: the winner decides
            self._phase = PAY
            self._pay_options = tuple(options)
            return
        if options:
            self._return_token(winner, TOKEN_INDEX[options[0]], chosen=False)
        else:
            self._take_black(winner)
        self._next_trick()

    def _take_black(self, seat: int) -> None:
        """A winner with nothing to return takes a black token, while any are left."""
        if self._supply[BLACK]:
            self._supply[BLACK] -= 1
            self._tokens[seat][BLACK] += 1
            self._black_taken += 1  # the destroyer never pays, so every black counts
            self._log.append((PUBLIC, "black_taken", seat))
        else:
            self._log.append((PUBLIC, "black_exhausted", seat))

    def _pay(self, seat: int, action: Any) -> None:
        if type(action) is not str or action not in self._pay_options:
            raise IllegalAction(f"cannot return {action!r}; choose one of {', '.join(self._pay_options)}",
                                seat=seat, kind=PAY, legal=self._pay_options)
        self.actions.append((seat, action))
        self._pay_options = ()
        self._return_token(seat, TOKEN_INDEX[action], chosen=True)
        self._next_trick()

    def _return_token(self, seat: int, colour: int, chosen: bool) -> None:
        # ``chosen``: the winner's decision (a spectator counting decisions needs to know).
        self._tokens[seat][colour] -= 1
        self._supply[colour] += 1
        self._log.append((PUBLIC, "token_returned", seat, colour, chosen))

    def _next_trick(self) -> None:
        if self._tricks_done < HAND_SIZE:
            self._phase = PLAY
        else:
            self._end_round()

    # -- scoring ------------------------------------------------------------------

    def _end_round(self) -> None:
        penalties = round_penalties(self._tokens, self._destroyer, self._black_taken, self.config.destroyer_penalty)
        self._history.append(tuple(
            SeatRound(score=score, destroyer=seat == self._destroyer,
                      tokens={TOKEN_COLOURS[c]: n for c, n in enumerate(self._tokens[seat]) if n})
            for seat, score in enumerate(penalties)
        ))
        for seat, score in enumerate(penalties):
            self._totals[seat] += score
        dealer_next = next_dealer(penalties, self._dealer)
        self._log.append((PUBLIC, "round_end", self._round + 1, tuple(penalties), tuple(self._totals), dealer_next))
        if self._round + 1 < self.rounds:
            self._round += 1
            self._start_round(dealer=dealer_next, hands=None)
            return
        # The last round: the final holdings stay on view; nobody is to act any more.
        self._phase = OVER
        self.is_over = True
        self._pay_options = ()
        totals = tuple(self._totals)
        self._log.append((PUBLIC, "game_over", totals, places_from_totals(totals, higher_is_better=HIGHER_IS_BETTER)))

    # -- observation and events ------------------------------------------------------

    def observe(self, seat: int | None, *, round_history: bool = True) -> ExtremeObservation:
        """Everything ``seat`` may know now, as plain JSON data (``None``: a spectator).

        Fields are documented in :class:`~engine.observations.ExtremeObservation`; ``round_history=False``
        leaves that field ``None`` (see :meth:`engine.game.Game.observe`).

        >>> game = ExtremeGame(GameConfig(variant="extreme", players=3, seed=1))
        >>> obs = game.observe(1)
        >>> obs["phase"], obs["decision"], len(obs["hand"]), obs["can_take"]["red"]
        ('predict', 'predict', 15, 5)
        """
        check_viewer(seat, self.players)
        phase = self._phase
        pay = None
        if phase == PAY and self._last_trick is not None:
            pay = pay_json(self._last_trick, self._pay_options)
        return {
            "variant": "extreme",
            "players": self.players,
            "seat": seat,
            "round": self._round + 1,
            "rounds": self.rounds,
            "dealer": self._dealer,
            "phase": phase,
            "to_act": list(self.to_act()),
            "decision": phase if seat is not None and phase != OVER and seat == self._current else None,
            "hand": [] if seat is None else list(codes_of(self._hands[seat])),
            "hand_sizes": [h.bit_count() for h in self._hands],
            "trump": "red",
            "tricks_won": list(self._tricks_won),
            "leader": self._leader,
            "lead_suit": None if self._lead is None else COLOURS[self._lead],
            "trick": cards_json(self._trick),
            "last_trick": last_trick_json(self._last_trick),
            "played": [CODES[c] for c in self._played],
            "scores": list(self._totals),
            "round_history": round_history_json(self._history) if round_history else None,
            "tokens": [tokens_json(t) for t in self._tokens],
            "supply": tokens_json(self._supply),
            "destroyer": self._destroyer,
            "destroyer_free": phase == PREDICT and self._destroyer is None,
            "predicted": list(self._predicted),
            "destroyer_penalty": self.config.destroyer_penalty,
            "black_taken": self._black_taken,
            "can_take": self.can_take(self._current) if phase == PREDICT else None,
            "pay": pay,
        }

    def events_for(self, seat: int | None, start: int = 0) -> tuple[list[dict[str, Any]], int]:
        """The events ``seat`` may see from log position ``start`` on (public ones and its
        own private ones; ``None``: public only), and the position to ask from next time.

        >>> game = ExtremeGame(GameConfig(variant="extreme", players=3, seed=1))
        >>> events, position = game.events_for(None, 0)
        >>> [e["type"] for e in events], position
        (['round_start'], 4)
        """
        check_viewer(seat, self.players)
        return self._log.visible_to(seat, start, event_dict)

    def logged_events(self, start: int = 0) -> tuple[list[Event], int]:
        """Every event logged from position ``start`` on, private ones too, as stored
        (see :meth:`engine.game.Game.logged_events`), and the position to ask from next time."""
        return self._log.since(start)

    def event_dict(self, event: Event) -> dict[str, Any]:
        """The dict form of one of :meth:`logged_events` (as :meth:`events_for` gives it)."""
        return event_dict(event)

    def snapshot(self) -> dict[str, Any]:
        """The full state, hidden hands included; equal snapshots mean equal games."""
        return {
            "config": self.config.to_dict(),
            "round": self._round,
            "rounds": self.rounds,
            "dealer": self._dealer,
            "phase": self._phase,
            "current": self._current,
            "leader": self._leader,
            "lead": self._lead,
            "hands": [list(codes_of(h)) for h in self._hands],
            "tokens": [list(t) for t in self._tokens],
            "supply": list(self._supply),
            "destroyer": self._destroyer,
            "predicted": list(self._predicted),
            "trick": [list(t) for t in self._trick],
            "last_trick": None if self._last_trick is None else [[list(t) for t in self._last_trick[0]],
                                                                  self._last_trick[1]],
            "played": list(self._played),
            "tricks_won": list(self._tricks_won),
            "tricks_done": self._tricks_done,
            "black_taken": self._black_taken,
            "pay_options": list(self._pay_options),
            "totals": list(self._totals),
            "history": [[[r.score, r.destroyer, dict(r.tokens or {})] for r in rnd] for rnd in self._history],
            "actions": [[seat, action_to_json(action)] for seat, action in self.actions],
            "log": self._log.snapshot(),
        }

    # -- helpers ------------------------------------------------------------------

    def _nothing_to_decide(self, seat: int) -> IllegalAction:
        if self._phase == OVER:
            message = "the game is over"
        else:
            message = f"seat {seat} has nothing to decide now; waiting for seat {self._current} ({self._phase})"
        return IllegalAction(message, seat=seat, kind=None)

