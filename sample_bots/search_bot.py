"""A search bot: determinized Monte Carlo (perfect-information Monte Carlo) for both games.

For every decision with more than one option it repeats, until its time budget is used:
sample a world consistent with what the seat has seen (the hidden hands, uniformly among
the deals that respect the voids players have shown: :func:`deal_sampler`, the same
distribution as :func:`engine.sample_deal`, faster), then for *each* option play the rest
of the round out in that world with a fast greedy policy, and score the result for its
own seat. The option with the best average over the worlds wins (every option is tried
in the same worlds, so the comparison is paired and less noisy).

* classic ``play``: each legal card, then the round to its end. The value is about
  places, since ratings come from places (:func:`classic_outcome`): per opponent, tanh
  of the game-total difference after the round over a scale that grows with the rounds
  still to come (nearly "am I above them" in the last round, nearly the point difference
  early on). A round's score is 20 + 10 x tricks for an exact bid, -10 per trick off, for
  every seat: setting an opponent counts as much as scoring.
* classic ``bid``: each bid, the whole round played out with the bot aiming at that bid
  (bidders after it bid what the heuristic bids with their sampled hands); valued the same.
* classic ``trump``: each suit with the three bids around the estimate; a suit is worth
  its best bid.
* extreme ``play``/``pay``: each card / token, then the round; the value is minus the
  seat's penalty.
* extreme ``predict``: the heuristic's tokens, every single-token change of them, no
  tokens, and the destroyer when free; later predictors predict as the heuristic does.

With ``--inference policy`` each world counts by how well it explains the rivals'
decisions of the round under the learned inference network (:func:`inferred_sampler`,
:mod:`sample_bots.learned.inference`); ``none``, the default, counts every world alike
(measured stronger so far: docs/bots.md, "Inference").

The playout policy is the heuristic bot's idea in a few integer operations: while a
seat still wants tricks (classic: tricks < bid; Extreme: it can pay a token for this
trick) it plays its surest winner (the cheapest one when it plays last), otherwise it
ducks with its most dangerous losing card; the Extreme destroyer always ducks.

Time: a decision takes at most ``--budget-ms`` (default 100) of wall-clock time from the
moment the SDK asks, and never more than about 40 % of the arena's per-decision limit
(``deadline_ms`` of the request) plus a sliver of the time bank. The SDK asks each match's
decisions on that match's own thread, so with several matches at once their searches run
side by side: they take turns at the CPU (:class:`Turns`) and each still stops at its own
deadline, searching fewer worlds rather than taking longer. Before searching it computes
the heuristic's answer, which it sends if no world could be searched in time (and
whenever there is only one option)::

    python -m sample_bots.search_bot --token T --budget-ms 50
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from arena.sdk import Bot, run
from engine import classic_cards as cc
from engine import extreme_cards as xc
from engine import worlds as _worlds
from engine.masks import cards_of
from sample_bots import strategy

DEFAULT_BUDGET_MS = 100.0
DEADLINE_SHARE = 0.4      # of the arena's per-decision limit: the rest is transport and load
BANK_SHARE = 1 / 200      # of the remaining time bank, added per decision
SAMPLE_TRIES = 12         # random deals tried per world before the exact sampler takes over
MAX_WORLDS = 400          # enough: past this the averages hardly move
INFERENCES = ("policy", "none")
WEIGH_FIRST = 16          # worlds weighed by inference at once, first (a decision short of time weighs no more)
WEIGH_BATCH = 32          # ... and then, at most (a batch is weighed whole: it may run past the deadline)
ESS_FLOOR = 0.5           # inference's weights are tempered to keep this share of the worlds effective
TURN_SECONDS = 0.002      # of searching before a search waiting beside it gets the CPU
PLACE_SCALE_LAST = 10.0   # classic points: how soft "finishing above" is after the last round
PLACE_SCALE_ROUND = 15.0  # ... growing with the square root of the rounds still to come

# ---------------------------------------------------------------- classic tables

_C_WIZ, _C_JES = cc.WIZARD, cc.JESTER
_C_SUIT = cc.SUIT_OF
_C_RANK = cc.RANK_OF
_C_SUIT_MASKS = cc.SUIT_MASKS
_C_SPECIAL = cc.SPECIAL_MASK


def _classic_danger(trump: int) -> tuple[int, ...]:
    """How likely each card is to win later: the order to keep or shed cards in."""
    out = []
    for c in range(cc.NUM_CARDS):
        suit = _C_SUIT[c]
        out.append(100 if suit == _C_WIZ else 0 if suit == _C_JES else (50 if suit == trump else 0) + _C_RANK[c])
    return tuple(out)


_C_DANGER = {t: _classic_danger(t) for t in range(-1, 4)}


_BIT = tuple(1 << c for c in range(128))


def classic_playout(hands: list[int], trump: int, bids: Sequence[int], tricks: Sequence[int], leader: int,
                    trick: Sequence[int], players: int) -> list[int]:
    """Play the round to its end with the greedy policy; returns the tricks won per seat.

    ``trick``: the cards of the trick in progress, led by ``leader``. ``hands`` is copied.

    >>> I = cc.INDEX
    >>> classic_playout([1 << I["W1"], 1 << I["b2"], 1 << I["b9"]], 2, [1, 0, 0], [0, 0, 0], 0, [], 3)
    [1, 0, 0]
    """
    hands = list(hands)
    tricks = list(tricks)
    danger = _C_DANGER[trump]
    cards = list(trick)
    # The trick in progress so far: lead suit (-1: none yet), freed by a Wizard, best strength.
    lead, freed, best, best_pos = -1, False, -1, 0
    for i, c in enumerate(cards):
        lead, freed, best, best_pos = _classic_step(c, i, lead, freed, best, best_pos, trump)
    seat = (leader + len(cards)) % players
    while hands[seat]:
        hand = hands[seat]
        follow = hand & _C_SUIT_MASKS[lead] if lead >= 0 else 0
        legal = follow | (hand & _C_SPECIAL) if follow else hand
        want = bids[seat] > tricks[seat]
        last = len(cards) == players - 1
        options = cards_of(legal)
        if len(options) == 1:
            pick = options[0]
        elif not cards:
            # Leading: the surest card while tricks are wanted, else the most harmless.
            pick = max(options, key=danger.__getitem__) if want else min(options, key=danger.__getitem__)
        else:
            win_best, win_c, lose_best, lose_c, low_c, low_d = -1, -1, -1, -1, -1, 1000
            for c in options:
                suit = _C_SUIT[c]
                if freed:
                    s = -1
                elif suit == _C_WIZ:
                    s = 300
                elif suit == _C_JES:
                    s = 0
                else:
                    lead_now = lead if lead >= 0 else suit
                    s = 200 + _C_RANK[c] if suit == trump else 100 + _C_RANK[c] if suit == lead_now else 0
                d = danger[c]
                if s > best:
                    # A winner: while wanting, the surest (last to play: the cheapest).
                    key = -d if last else d
                    if key > win_best:
                        win_best, win_c = key, c
                elif d > lose_best:
                    lose_best, lose_c = d, c
                if d < low_d:
                    low_d, low_c = d, c
            if want:
                pick = win_c if win_c >= 0 else low_c
            elif lose_c >= 0:
                pick = lose_c
            else:  # every card wins: the last player sheds its biggest, others their smallest
                pick = max(options, key=danger.__getitem__) if last else low_c
        hands[seat] = hand ^ (1 << pick)
        lead, freed, best, best_pos = _classic_step(pick, len(cards), lead, freed, best, best_pos, trump)
        cards.append(pick)
        if len(cards) == players:
            leader = (leader + best_pos) % players
            tricks[leader] += 1
            cards = []
            lead, freed, best, best_pos = -1, False, -1, 0
            seat = leader
        else:
            seat = (seat + 1) % players
    return tricks


def _classic_step(c: int, pos: int, lead: int, freed: bool, best: int, best_pos: int,
                  trump: int) -> tuple[int, bool, int, int]:
    """The trick state after card ``c`` is played at position ``pos``."""
    suit = _C_SUIT[c]
    if freed:
        return lead, freed, best, best_pos
    if suit == _C_WIZ:
        return lead, lead < 0, 300, pos  # a Wizard before any numbered card frees the trick
    if suit == _C_JES:
        s = 0
    else:
        if lead < 0:
            lead = suit
        s = 200 + _C_RANK[c] if suit == trump else 100 + _C_RANK[c] if suit == lead else 0
    if s > best:
        return lead, freed, s, pos
    return lead, freed, best, best_pos


def _classic_score(bid: int, tricks: int) -> int:
    return 20 + 10 * tricks if bid == tricks else -10 * abs(bid - tricks)


def classic_outcome(obs: dict[str, Any]) -> Callable[[Sequence[int], Sequence[int]], float]:
    """How good a round's end (every seat's bid and tricks) is for the observing seat.

    The ratings come from places, so: the sum over the others of a smooth "I finish above
    them", tanh of the game-total difference after this round over the spread the rounds
    still to come may add (nearly a step in the last round, nearly linear early on).
    """
    me, players = obs["seat"], obs["players"]
    others = [s for s in range(players) if s != me]
    totals = obs.get("scores") or [0] * players
    left = max(0, obs.get("rounds", obs["round"]) - obs["round"])
    scale = PLACE_SCALE_LAST + PLACE_SCALE_ROUND * left ** 0.5
    tanh = math.tanh

    def pairwise(bids: Sequence[int], won: Sequence[int]) -> float:
        mine = totals[me] + _classic_score(bids[me], won[me])
        out = 0.0
        for s in others:
            out += tanh((mine - totals[s] - _classic_score(bids[s], won[s])) / scale)
        return 10 * out + 0.01 * mine
    return pairwise


def _guess_classic_bid(hand: int, trump: int, players: int) -> int:
    """What a sensible opponent bids with this hand: the heuristic's bid (the best expected
    score under its per-card chances)."""
    trump_name = cc.SUITS[trump] if trump >= 0 else None
    codes = list(cc.codes_of(hand))
    return strategy.classic_bid({"hand": codes, "trump": trump_name, "players": players}, range(len(codes) + 1))


# ---------------------------------------------------------------- extreme

_X_COLOUR = xc.COLOUR_OF
_X_MASKS = xc.COLOUR_MASKS
_WHITE, _BLACK, _RED = xc.WHITE, xc.BLACK, xc.RED
_X_PENALTY = xc.TOKEN_PENALTY


def extreme_playout(hands: list[int], tokens: list[list[int]], supply: list[int], destroyer: int | None,
                    black_taken: int, leader: int, trick: Sequence[int], players: int, base: int,
                    me: int) -> int:
    """Play the round to its end with the greedy policy; returns ``me``'s penalty.

    ``trick``: the cards of the trick in progress, led by ``leader``. Nothing passed in is changed.

    >>> I = xc.INDEX
    >>> none = [0] * 7
    >>> extreme_playout([1 << I["r9"], 1 << I["b2"], 1 << I["b9"]], [[1, 0, 0, 0, 0, 0, 0], none[:], none[:]],
    ...                 [4, 3, 3, 3, 3, 4, 6], None, 0, 0, [], 3, 4, 0)
    0
    """
    hands = list(hands)
    tokens = [list(t) for t in tokens]
    supply = list(supply)
    cards = list(trick)
    seat = (leader + len(cards)) % players
    while hands[seat]:
        hand = hands[seat]
        lead = _X_COLOUR[cards[0]] if cards else -1
        legal = (hand & _X_MASKS[lead]) or hand if lead >= 0 else hand
        held = tokens[seat]
        if not cards:
            pick = _extreme_lead(legal, held, seat == destroyer)
        else:
            best_key = max(1000 + c if _X_COLOUR[c] == _RED else c if _X_COLOUR[c] == lead else -1 for c in cards)
            last = len(cards) == players - 1
            win_c, win_k, lose_c, lose_k, low_c, low_k = -1, -1, -1, -1, -1, 10_000
            for c in cards_of(legal):
                colour = _X_COLOUR[c]
                key = 1000 + c if colour == _RED else c if colour == lead else -1
                if key > best_key:
                    payable = seat != destroyer and (held[lead] or held[_WHITE] or (colour == _RED and held[_RED]))
                    if payable:
                        k = -key if last else key
                        if k > win_k:
                            win_k, win_c = k, c
                    if key < low_k:
                        low_k, low_c = key, c
                else:
                    # Shed high cards while ducking (reds last: they win later tricks).
                    k = c % 15 + (20 if colour == _RED else 0)
                    if k > lose_k:
                        lose_k, lose_c = k, c
            pick = win_c if win_c >= 0 else lose_c if lose_c >= 0 else low_c
        hands[seat] = hand ^ (1 << pick)
        cards.append(pick)
        if len(cards) < players:
            seat = (seat + 1) % players
            continue
        lead = _X_COLOUR[cards[0]]
        keys = [1000 + c if _X_COLOUR[c] == _RED else c if _X_COLOUR[c] == lead else -1 for c in cards]
        pos = keys.index(max(keys))
        winner = (leader + pos) % players
        if winner != destroyer:
            held = tokens[winner]
            won_red = _X_COLOUR[cards[pos]] == _RED
            if held[_WHITE]:  # a white one costs 4 when kept: return it first
                colour = _WHITE
            elif held[lead]:
                colour = lead
            elif won_red and held[_RED]:
                colour = _RED
            else:
                colour = -1
            if colour >= 0:
                held[colour] -= 1
                supply[colour] += 1
            elif supply[_BLACK]:
                supply[_BLACK] -= 1
                held[_BLACK] += 1
                black_taken += 1
        leader = seat = winner
        cards = []
    if me == destroyer:
        return max(0, base - black_taken)
    return sum(n * _X_PENALTY[c] for c, n in enumerate(tokens[me]))


def _extreme_lead(legal: int, held: list[int], is_destroyer: bool) -> int:
    """Lead the top card of a colour we hold tokens for; otherwise our lowest card."""
    best_c, best_k = -1, -1
    low_c, low_k = -1, 10_000
    for c in cards_of(legal):
        colour = _X_COLOUR[c]
        rank = c % 15
        if not is_destroyer and held[colour] and rank + 100 * held[colour] > best_k:
            best_c, best_k = c, rank + 100 * held[colour]
        k = rank + (20 if colour == _RED else 0)
        if k < low_k:
            low_c, low_k = c, k
    return best_c if best_c >= 0 else low_c


# ---------------------------------------------------------------- the search loop


class World:
    """One sampled world: every seat's hand (bit masks), its weight in the averages (1, or
    how well it explains the rivals' decisions under inference), and a memo for what
    several candidates evaluated in it share (the opponents' guessed bids, say)."""

    __slots__ = ("hands", "memo", "weight")

    def __init__(self, hands: Sequence[int], weight: float = 1.0) -> None:
        self.hands = hands
        self.weight = weight
        self.memo: dict[Any, Any] = {}


class Turns:
    """The CPU, shared in turns by the searches of the matches this process plays at once.

    The SDK runs each match's decisions on a thread of its own, and CPython lets one thread
    at a time run Python code (the GIL). Left to the GIL, four searches side by side got the
    CPU so unevenly that one could wait 60 ms and more for it, past its deadline (docs/bots.md
    has the figures). So a search runs only in its turn: first come, first served, at least
    ``length`` seconds of worlds each, while the others sleep without holding the GIL. A
    search alone never waits.

    >>> turns = Turns()
    >>> turns.take() > time.perf_counter()     # free: taken at once, until the turn ends
    True
    >>> turns.give()
    """

    def __init__(self, length: float = TURN_SECONDS) -> None:
        self.length = length
        self._lock = threading.Lock()
        self._waiting: deque[threading.Event] = deque()
        self._taken = False

    def take(self) -> float:
        """Wait for a turn; returns when it ends (a ``time.perf_counter()`` value)."""
        with self._lock:
            if self._taken:
                ready = threading.Event()
                self._waiting.append(ready)
            else:
                self._taken = True
                ready = None
        if ready is not None:
            ready.wait()    # give() hands the turn over: it stays taken
        return time.perf_counter() + self.length

    def give(self) -> None:
        """End the turn: the search that has waited longest gets it."""
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()
            else:
                self._taken = False


TURNS = Turns()   # one per process: every match's search takes its turns here


def search(candidates: Sequence[Any], sample: Callable[[], Any], value: Callable[[Any, Any], float],
           deadline: float, max_worlds: int = MAX_WORLDS, turns: Turns = TURNS) -> tuple[list[float], int]:
    """Average ``value(world, candidate)`` over worlds from ``sample()`` until ``deadline``
    (a ``time.perf_counter()`` value), in ``turns`` with the other searches running at the
    same time, each world counted by its ``weight`` (1 when it has none). Every candidate is
    tried in each world. Returns the averages and the number of worlds (0: no world fitted
    in the time; averages all 0).

    >>> means, n = search([1, 2], lambda: 10, lambda w, c: w * c, time.perf_counter() + 1, max_worlds=3)
    >>> means, n
    ([10.0, 20.0], 3)
    """
    totals = [0.0] * len(candidates)
    mass = 0.0
    worlds = 0
    started = time.perf_counter()
    turn_ends = turns.take()
    try:
        while worlds < max_worlds:
            now = time.perf_counter()
            if now > turn_ends:   # let a search waiting beside this one have the CPU
                turns.give()
                turn_ends = turns.take()
                now = time.perf_counter()
            # Stop when one more world would probably overrun the deadline.
            if worlds and now + (now - started) / worlds > deadline:
                break
            if now > deadline:
                break
            world = sample()
            values = []
            for candidate in candidates:
                values.append(value(world, candidate))
                if worlds and time.perf_counter() > deadline:
                    break  # out of time mid-world: this world is left out, the others stand
            else:
                weight = getattr(world, "weight", 1.0)
                for i, v in enumerate(values):
                    totals[i] += weight * v
                mass += weight
                worlds += 1
                continue
            break
    finally:
        turns.give()
    return [t / mass if mass > 0 else 0.0 for t in totals], worlds


def deal_sampler(obs: dict[str, Any], rng: random.Random) -> Callable[[], World]:
    """Worlds as :func:`engine.sample_deal` samples them (uniform among the deals consistent
    with the observation), faster: what the observation implies is worked out once per
    decision, and a plain shuffle that happens to respect the shown voids is taken as it is
    (uniform given that it fits); otherwise ``sample_deal``'s own sampler places the cards.

    >>> from engine import GameConfig, new_game
    >>> obs = new_game(GameConfig(variant="classic", players=4, seed=2, rounds=5)).observe(1)
    >>> world = deal_sampler(obs, random.Random(0))()
    >>> [h.bit_count() for h in world.hands]
    [1, 1, 1, 1]
    """
    unseen, bins, sizes, forbidden = _worlds._unseen_and_bins(obs)
    players, me = obs["players"], obs["seat"]
    classic = obs["variant"] == "classic"
    index, suit_masks = (cc.INDEX, cc.SUIT_MASKS) if classic else (xc.INDEX, xc.COLOUR_MASKS)
    mine = sum(1 << index[c] for c in obs["hand"])
    cards = cards_of(unseen)
    cuts = []
    start = 0
    for n in sizes:
        cuts.append((start, start + n))
        start += n
    void_masks = [sum(suit_masks[s] for s in f) for f in forbidden]
    checks = [(b, m) for b, m in enumerate(void_masks) if m]
    seats = bins
    bit = _BIT.__getitem__
    choose = rng.sample
    if seats[-1] < 0:  # classic's undealt pile: whatever the hands leave (no void applies to it)
        cuts.pop()
    dealt = cuts[-1][1] if cuts else 0
    # The exact sampler's groups: per suit somebody is void in, the bins that may get it.
    groups = [(unseen & suit_masks[s], tuple(b for b, f in enumerate(forbidden) if s not in f))
              for s in sorted({s for f in forbidden for s in f})]
    groups = [(m, allowed) for m, allowed in groups if m]
    tally = [0, 0]  # random deals tried, kept

    def sample() -> World:
        # A uniformly random ordered choice of the cards in other hands, cut into hands,
        # kept if it respects the voids (rejection sampling: uniform among those that do);
        # when few fit (under 1 in 10 so far), the exact sampler instead.
        tries = SAMPLE_TRIES if tally[0] < 2 * SAMPLE_TRIES or 10 * tally[1] >= tally[0] else 0
        for _ in range(tries):
            drawn = choose(cards, dealt)
            masks = [sum(map(bit, drawn[a:b])) for a, b in cuts]
            tally[0] += 1
            if not any(masks[b] & m for b, m in checks):
                tally[1] += 1
                break
        else:
            masks = _worlds._place_exact(unseen, sizes, groups, rng)
        hands = [0] * players
        hands[me] = mine
        for s, m in zip(seats, masks):
            if s >= 0:
                hands[s] = m
        return World(hands)

    return sample


def inferred_sampler(sample: Callable[[], World], evidence: Any) -> Callable[[], World]:
    """The worlds of ``sample`` (uniform), each weighted by how likely the rivals' decisions
    are with its hands (importance sampling): ``evidence.log_weights``
    (:class:`sample_bots.learned.inference.Evidence`) weighs them in batches, 16 first and
    then doubling up to :data:`WEIGH_BATCH`, as the search asks for more. Every world drawn
    is a new one, each counted by its weight.

    The weights are tempered, ``exp(λ log w)``, with the largest ``λ`` of at most 1 that
    keeps the first batch's effective sample size (``(Σw)² / Σw²``) at :data:`ESS_FLOOR` of
    its worlds: the network is sure of itself, and untempered a handful of worlds would
    carry the whole average, as a search of a handful of worlds (adaptive tempering, as in
    sequential Monte Carlo)."""
    import numpy as np

    ready: list[World] = []
    size = [WEIGH_FIRST]
    scale: list[float] = []     # the first batch's largest log weight and the decision's λ

    def draw() -> World:
        if not ready:
            batch = [sample() for _ in range(size[0])]
            logs = evidence.log_weights([w.hands for w in batch])
            if not scale:
                scale.extend([float(np.max(logs)), temper(logs - np.max(logs))])
            top, lam = scale
            for world, w in zip(batch, np.exp(np.clip(lam * (logs - top), -700.0, 700.0)).tolist()):
                world.weight = w
            ready.extend(reversed(batch))
            size[0] = min(2 * size[0], WEIGH_BATCH)
        return ready.pop()

    return draw


def temper(logs: Any) -> float:
    """The largest ``λ`` in [0, 1] whose weights ``exp(λ logs)`` keep an effective sample
    size of at least :data:`ESS_FLOOR` of the worlds (by bisection).

    >>> temper([0.0, 0.0, 0.0, 0.0])
    1.0
    >>> 0.0 < temper([0.0, -50.0, -50.0, -50.0]) < 0.1
    True
    """
    import numpy as np

    spread = np.asarray(logs, dtype=np.float64) - np.max(logs)

    def ess(lam: float) -> float:
        w = np.exp(lam * spread)
        return float(w.sum() ** 2 / (w * w).sum() / len(w))

    if ess(1.0) >= ESS_FLOOR:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(12):
        middle = (low + high) / 2
        low, high = (middle, high) if ess(middle) >= ESS_FLOOR else (low, middle)
    return low


def _argmax(candidates: Sequence[Any], means: list[float]) -> Any:
    return candidates[max(range(len(candidates)), key=means.__getitem__)]


# ---------------------------------------------------------------- the bot


class SearchBot(Bot):
    """Determinized Monte Carlo search over sampled worlds (see the module docstring)."""

    name = "search"
    version = "1.0"
    budget_ms: float = DEFAULT_BUDGET_MS
    max_worlds: int = MAX_WORLDS
    inference: str = "none"

    def __init__(self) -> None:
        super().__init__()
        self.last_worlds = 0  # worlds searched for the last decision (for tests and tuning)
        if self.inference != "none":   # the policy's weights, loaded once a process before any decision
            from sample_bots.learned.policy import RIVALS, Policy

            Policy.load("classic", RIVALS), Policy.load("extreme", RIVALS)
        # Wizard Extreme: this seat's observation of each trick it played in, by round and
        # trick (the tokens of the rivals' views then, for inference).
        self._views: dict[int, dict[int, dict[str, Any]]] = {}

    def _remember(self, obs: dict[str, Any]) -> None:
        if obs["variant"] == "extreme" and obs["phase"] == "play":
            if obs["round"] not in self._views:
                self._views = {obs["round"]: {}}
            self._views[obs["round"]][len(obs["played"]) // obs["players"]] = obs

    # -- time

    def _deadline(self) -> float:
        """When to stop searching: the budget from now, capped by the arena's deadline and
        time bank. Called first thing in every decision, so that everything the decision
        does counts. Matches played at once need no share of it: the SDK asks each on its
        own thread as its request arrives, and their searches take turns (:class:`Turns`)."""
        budget = self.budget_ms
        limit = self.deadline_ms or (self.match.move_time_ms if self.match else 0)
        if limit:
            bank = self.time_bank_ms or (self.match.time_bank_ms if self.match else 0)
            budget = min(budget, DEADLINE_SHARE * limit + BANK_SHARE * bank)
        return time.perf_counter() + max(0.0, budget) / 1000

    def _deal(self, obs: dict[str, Any]) -> Callable[[], World]:
        """The worlds to search: uniform (``--inference none``), or drawn in proportion to
        how well they explain the rivals' decisions (``policy``, :func:`inferred_sampler`)."""
        sample = deal_sampler(obs, self.rng)
        if self.inference == "none":
            return sample
        from sample_bots.learned.inference import Evidence
        from sample_bots.learned.policy import RIVALS, Policy

        evidence = Evidence(obs, Policy.load(obs["variant"], RIVALS), self._views.get(obs["round"], {}))
        if not evidence.decisions:
            return sample
        return inferred_sampler(sample, evidence)

    # -- classic

    def bid(self, obs: dict[str, Any], options: list[int]) -> int:
        deadline = self._deadline()
        fallback = strategy.classic_bid(obs, options)
        if len(options) == 1:
            return fallback
        trump = cc.SUITS.index(obs["trump"]) if obs["trump"] else -1
        means, self.last_worlds = search(options, self._deal(obs), self._bid_value(obs, trump), deadline,
                                          self.max_worlds)
        return _argmax(options, means) if self.last_worlds else fallback

    def _bid_value(self, obs: dict[str, Any], trump: int) -> Callable[[Any, Any], float]:
        """The value of bidding ``bid`` in a world: the round played out aiming at it."""
        me, players = obs["seat"], obs["players"]
        leader = (obs["dealer"] + 1) % players
        known = obs["bids"]
        zeros = [0] * players
        outcome = classic_outcome(obs)

        def value(world: World, bid: int) -> float:
            hands = world.hands
            guessed = world.memo.get(trump)
            if guessed is None:  # the other bids depend on the world only
                guessed = world.memo[trump] = [
                    known[s] if known[s] is not None else _guess_classic_bid(hands[s], trump, players)
                    for s in range(players)]
            bids = list(guessed)
            bids[me] = bid
            tricks = classic_playout(list(hands), trump, bids, zeros, leader, [], players)
            return outcome(bids, tricks)

        return value

    def trump(self, obs: dict[str, Any], options: list[str]) -> str:
        deadline = self._deadline()
        fallback = strategy.classic_trump(obs, options)
        players = obs["players"]
        hand = sum(1 << cc.INDEX[c] for c in obs["hand"])
        candidates = []
        for suit in options:
            t = cc.SUITS.index(suit)
            guess = _guess_classic_bid(hand, t, players)
            candidates += [(t, b) for b in range(max(0, guess - 1), min(obs["hand_size"], guess + 1) + 1)]
        values: dict[int, Callable[[Any, Any], float]] = {}
        for t in {t for t, _ in candidates}:
            values[t] = self._bid_value({**obs, "bids": [None] * players}, t)
        means, self.last_worlds = search(candidates, self._deal(obs), lambda w, c: values[c[0]](w, c[1]),
                                          deadline, self.max_worlds)
        if not self.last_worlds:
            return fallback
        best: dict[int, float] = {}
        for (t, _), m in zip(candidates, means):
            best[t] = max(best.get(t, -1e9), m)
        return cc.SUITS[max(best, key=best.__getitem__)]

    def play(self, obs: dict[str, Any], options: list[str]) -> str:
        deadline = self._deadline()
        self._remember(obs)
        if obs["variant"] == "classic":
            fallback = strategy.classic_play(obs, options)
        else:
            fallback = strategy.extreme_play(obs, options)
        if len(options) == 1:
            return fallback
        value = self._classic_play_value(obs) if obs["variant"] == "classic" else self._extreme_play_value(obs)
        means, self.last_worlds = search(options, self._deal(obs), value, deadline, self.max_worlds)
        return _argmax(options, means) if self.last_worlds else fallback

    def _classic_play_value(self, obs: dict[str, Any]) -> Callable[[Any, Any], float]:
        me, players = obs["seat"], obs["players"]
        trump = cc.SUITS.index(obs["trump"]) if obs["trump"] else -1
        leader = obs["leader"]
        trick = [cc.INDEX[e["card"]] for e in obs["trick"]]
        tricks = obs["tricks_won"]
        known = obs["bids"]
        outcome = classic_outcome(obs)

        def value(world: World, code: str) -> float:
            hands = world.hands
            bids = world.memo.get("bids")
            if bids is None:
                # Unseen (secret) bids: what the seat has won plus what its hand still promises.
                bids = world.memo["bids"] = [
                    known[s] if known[s] is not None
                    else tricks[s] + _guess_classic_bid(hands[s], trump, players)
                    for s in range(players)]
            card = cc.INDEX[code]
            hs = list(hands)
            hs[me] ^= 1 << card
            won = classic_playout(hs, trump, bids, tricks, leader, trick + [card], players)
            return outcome(bids, won)

        return value

    # -- extreme

    def _extreme_state(self, obs: dict[str, Any]) -> tuple[list[list[int]], list[int]]:
        tokens = [[held[c] for c in xc.TOKEN_COLOURS] for held in obs["tokens"]]
        supply = [obs["supply"][c] for c in xc.TOKEN_COLOURS]
        return tokens, supply

    def _extreme_play_value(self, obs: dict[str, Any]) -> Callable[[Any, Any], float]:
        me, players = obs["seat"], obs["players"]
        tokens, supply = self._extreme_state(obs)
        trick = [xc.INDEX[e["card"]] for e in obs["trick"]]
        base = obs.get("destroyer_penalty", 4)

        def value(world: World, code: str) -> float:
            card = xc.INDEX[code]
            hs = list(world.hands)
            hs[me] ^= 1 << card
            return -extreme_playout(hs, tokens, supply, obs["destroyer"], obs["black_taken"], obs["leader"],
                                    trick + [card], players, base, me)

        return value

    def pay(self, obs: dict[str, Any], options: list[str]) -> str:
        deadline = self._deadline()
        fallback = strategy.extreme_pay(obs, options)
        if len(options) == 1:
            return fallback
        me, players = obs["seat"], obs["players"]
        tokens, supply = self._extreme_state(obs)
        base = obs.get("destroyer_penalty", 4)

        def value(world: World, colour: str) -> float:
            hands = world.hands
            c = xc.TOKEN_INDEX[colour]
            held = [list(t) for t in tokens]
            held[me][c] -= 1
            sup = list(supply)
            sup[c] += 1
            return -extreme_playout(list(hands), held, sup, obs["destroyer"], obs["black_taken"], me, [],
                                    players, base, me)

        means, self.last_worlds = search(options, self._deal(obs), value, deadline, self.max_worlds)
        return _argmax(options, means) if self.last_worlds else fallback

    def predict(self, obs: dict[str, Any]) -> dict[str, Any]:
        deadline = self._deadline()
        fallback = strategy.extreme_predict(obs)
        candidates = _prediction_candidates(obs)
        me, players = obs["seat"], obs["players"]
        tokens, supply = self._extreme_state(obs)
        base = obs.get("destroyer_penalty", 4)
        dealer = obs["dealer"]
        # Everybody yet to predict comes after us, clockwise, up to the dealer.
        later = [(me + k) % players for k in range(1, players) if not obs["predicted"][(me + k) % players]]

        def value(world: World, prediction: dict[str, Any]) -> float:
            hands = world.hands
            held = [list(t) for t in tokens]
            sup = list(supply)
            destroyer = obs["destroyer"]
            if prediction.get("destroyer"):
                destroyer = me
            else:
                for colour, n in prediction.get("tokens", {}).items():
                    c = xc.TOKEN_INDEX[colour]
                    held[me][c] += n
                    sup[c] -= n
            for s in later:  # the later predictors, as the heuristic would predict
                key = (s, destroyer is None, tuple(sup))
                guess = world.memo.get(key)
                if guess is None:
                    guess = world.memo[key] = strategy.extreme_predict({
                        "hand": list(xc.codes_of(hands[s])), "players": players, "seat": s,
                        "supply": dict(zip(xc.TOKEN_COLOURS, sup)), "destroyer_free": destroyer is None,
                        "destroyer_penalty": base,
                    })
                if guess.get("destroyer"):
                    destroyer = s
                else:
                    for colour, n in guess["tokens"].items():
                        c = xc.TOKEN_INDEX[colour]
                        held[s][c] += n
                        sup[c] -= n
            leader = (dealer + 1) % players
            return -extreme_playout(list(hands), held, sup, destroyer, 0, leader, [], players, base, me)

        means, self.last_worlds = search(candidates, self._deal(obs), value, deadline, self.max_worlds)
        return _argmax(candidates, means) if self.last_worlds else fallback


def _prediction_candidates(obs: dict[str, Any]) -> list[dict[str, Any]]:
    """The heuristic's tokens, each one-token change of them, no tokens, and the destroyer
    when free; tokens only from the supply, so every candidate is legal.

    >>> obs = {"hand": ["r9", "r8", "b1"], "players": 3, "supply": dict(zip(xc.TOKEN_COLOURS, [5, 3, 3, 3, 3, 4, 6])),
    ...        "destroyer_free": True, "destroyer_penalty": 4}
    >>> cands = _prediction_candidates(obs)
    >>> {"destroyer": True} in cands, {"tokens": {}} in cands
    (True, True)
    """
    plan = strategy.plan_tokens(obs).tokens
    supply = obs["supply"]
    seen: list[dict[str, Any]] = []

    def add(tokens: dict[str, int]) -> None:
        candidate = {"tokens": {c: n for c, n in tokens.items() if n}}
        if candidate not in seen:
            seen.append(candidate)

    add(plan)
    add({})
    for colour in xc.COLOURS:
        for delta in (-1, 1):
            n = plan.get(colour, 0) + delta
            if 0 <= n <= supply.get(colour, 0):
                add({**plan, colour: n})
    if obs.get("destroyer_free"):
        seen.append({"destroyer": True})
    return seen


def bot_class(budget_ms: float, name: str = "search", max_worlds: int = MAX_WORLDS,
              inference: str = "none") -> type[SearchBot]:
    """A :class:`SearchBot` subclass with its own budget, world cap and inference (``policy``
    or ``none``); each seat gets a fresh instance."""
    return type("SearchBot", (SearchBot,), {"budget_ms": budget_ms, "name": name, "max_worlds": max(1, max_worlds),
                                            "inference": inference})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--budget-ms", type=float, default=DEFAULT_BUDGET_MS,
                        help=f"search time per decision in ms (default {DEFAULT_BUDGET_MS:g}; "
                             "the arena's deadline may lower it)")
    parser.add_argument("--max-worlds", type=int, default=MAX_WORLDS,
                        help=f"worlds searched per decision at most (default {MAX_WORLDS}; "
                             "a few make a weaker, quicker bot)")
    parser.add_argument("--inference", choices=INFERENCES, default="none",
                        help="none (default): sample the worlds uniformly; policy: weigh them by how well they "
                             "explain the rivals' bids and cards, under the learned policy (weaker so far: "
                             "docs/bots.md)")
    args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if "-h" in rest or "--help" in rest:
        parser.print_help()
    if args.max_worlds < 1:
        parser.exit(2, f"{parser.prog}: error: --max-worlds must be at least 1\n")
    if args.inference != "none":   # numpy and the policy's weights before the first request, not in its time
        from sample_bots.learned.policy import RIVALS, Policy

        Policy.load("classic", RIVALS), Policy.load("extreme", RIVALS)
    run(bot_class(args.budget_ms, max_worlds=args.max_worlds, inference=args.inference), rest)


if __name__ == "__main__":
    main()
