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

The worlds are sampled in :mod:`sample_bots.search_worlds` and played out in
:mod:`sample_bots.playouts`; this module holds the search over them and the bot.

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
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from arena.sdk import Bot, ClassicObservation, ExtremeObservation, Observation, run
from engine import classic_cards as cc
from engine import extreme_cards as xc
from sample_bots import strategy
from sample_bots.playouts import classic_outcome, classic_playout, extreme_playout, guess_classic_bid
from sample_bots.search_worlds import World, deal_sampler, inferred_sampler

DEFAULT_BUDGET_MS = 100.0
DEADLINE_SHARE = 0.4      # of the arena's per-decision limit: the rest is transport and load
BANK_SHARE = 1 / 200      # of the remaining time bank, added per decision
MAX_WORLDS = 400          # enough: past this the averages hardly move
INFERENCES = ("policy", "none")
TURN_SECONDS = 0.002      # of searching before a search waiting beside it gets the CPU

# ---------------------------------------------------------------- the search loop



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
        self._views: dict[int, dict[int, ExtremeObservation]] = {}

    def _remember(self, obs: Observation) -> None:
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

    def _deal(self, obs: Observation) -> Callable[[], World]:
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

    def bid(self, obs: ClassicObservation, options: list[int]) -> int:
        deadline = self._deadline()
        fallback = strategy.classic_bid(obs, options)
        if len(options) == 1:
            return fallback
        trump = cc.SUITS.index(obs["trump"]) if obs["trump"] else -1
        means, self.last_worlds = search(options, self._deal(obs), self._bid_value(obs, trump), deadline,
                                          self.max_worlds)
        return _argmax(options, means) if self.last_worlds else fallback

    def _bid_value(self, obs: Mapping[str, Any], trump: int) -> Callable[[Any, Any], float]:
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
                    known[s] if known[s] is not None else guess_classic_bid(hands[s], trump, players)
                    for s in range(players)]
            bids = list(guessed)
            bids[me] = bid
            tricks = classic_playout(list(hands), trump, bids, zeros, leader, [], players)
            return outcome(bids, tricks)

        return value

    def trump(self, obs: ClassicObservation, options: list[str]) -> str:
        deadline = self._deadline()
        fallback = strategy.classic_trump(obs, options)
        players = obs["players"]
        hand = sum(1 << cc.INDEX[c] for c in obs["hand"])
        candidates = []
        for suit in options:
            t = cc.SUITS.index(suit)
            guess = guess_classic_bid(hand, t, players)
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

    def play(self, obs: Observation, options: list[str]) -> str:
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

    def _classic_play_value(self, obs: ClassicObservation) -> Callable[[Any, Any], float]:
        me, players = _own_seat(obs), obs["players"]
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
                    else tricks[s] + guess_classic_bid(hands[s], trump, players)
                    for s in range(players)]
            card = cc.INDEX[code]
            hs = list(hands)
            hs[me] ^= 1 << card
            won = classic_playout(hs, trump, bids, tricks, leader, trick + [card], players)
            return outcome(bids, won)

        return value

    # -- extreme

    def _extreme_state(self, obs: ExtremeObservation) -> tuple[list[list[int]], list[int]]:
        tokens = [[held[c] for c in xc.TOKEN_COLOURS] for held in obs["tokens"]]
        supply = [obs["supply"][c] for c in xc.TOKEN_COLOURS]
        return tokens, supply

    def _extreme_play_value(self, obs: ExtremeObservation) -> Callable[[Any, Any], float]:
        me, players = _own_seat(obs), obs["players"]
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

    def pay(self, obs: ExtremeObservation, options: list[str]) -> str:
        deadline = self._deadline()
        fallback = strategy.extreme_pay(obs, options)
        if len(options) == 1:
            return fallback
        me, players = _own_seat(obs), obs["players"]
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

    def predict(self, obs: ExtremeObservation) -> dict[str, Any]:
        deadline = self._deadline()
        fallback = strategy.extreme_predict(obs)
        candidates = _prediction_candidates(obs)
        me, players = _own_seat(obs), obs["players"]
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


def _own_seat(obs: Observation) -> int:
    """The deciding seat: a seat's own observation names it (only a spectator's has none)."""
    seat = obs["seat"]
    assert seat is not None
    return seat


def _prediction_candidates(obs: Mapping[str, Any]) -> list[dict[str, Any]]:
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
