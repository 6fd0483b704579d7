"""The search bot (sample_bots/search_bot.py): legal in both variants, within its time budget.

* in-process on the engine: every decision kind of both variants, several table sizes and
  classic options, with a tiny budget (the engine refuses any illegal answer);
* the budget: decisions take about ``--budget-ms`` and no more, a smaller request deadline
  lowers it, and a larger budget searches more worlds;
* over loopback: full matches of both variants through the real referee, the bot a
  separate process started with ``--budget-ms``, without a fault.
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import threading
from typing import Any

import pytest
from factories import ROOT
from factories.bots import sample_bot_command as bot_command

from engine import GameConfig, new_game
from sample_bots.evaluate import bot_factory, play_game
from sample_bots.search_bot import SearchBot, bot_class


@pytest.mark.parametrize("variant,players,options", [
    ("classic", 3, {}), ("classic", 6, {}), ("classic", 4, {"bidding": "secret"}),
    ("classic", 4, {"plus_minus_one": True}), ("extreme", 3, {}), ("extreme", 5, {}),
])
def test_search_bot_plays_legally(variant: str, players: int, options: dict[str, Any]) -> None:
    bots = [bot_class(2.0)()] + [bot_factory("heuristic")() for _ in range(players - 1)]
    config = GameConfig(variant=variant, players=players, seed=11, rounds=4 if variant == "classic" else 1, **options)
    totals, places, _, counts = play_game(bots, config, list(range(players)))
    assert len(totals) == players and counts[0] > 0


def test_search_bot_makes_every_kind_of_decision() -> None:
    """Trump choices (a Wizard turned up), bids, plays, predictions and payments: random
    games until each kind comes up, then the search bot answers it legally."""
    from arena.sdk import ask

    seen: set[str] = set()
    for seed in range(200):
        variant = "classic" if seed % 2 else "extreme"
        game = new_game(GameConfig(variant=variant, players=3, seed=seed, rounds=6 if variant == "classic" else 1))
        rng = random.Random(seed)
        while not game.is_over:
            seat = game.to_act()[0]
            decision = game.decision(seat)
            if decision.kind not in seen:
                bot = bot_class(2.0)()
                options = None if decision.options is None else list(decision.options)
                game.apply(seat, ask(bot, decision.kind, game.observe(seat), options))  # refused if illegal
                seen.add(decision.kind)
            else:
                game.apply(seat, game.random_action(seat, rng))
        if len(seen) == 5:
            break
    assert seen == {"bid", "play", "predict", "pay", "trump"}


class TickClock:
    """A clock that advances a fixed tick each time it is read: time as counted work, so
    the search's bookkeeping of its budget is checked the same on a busy machine as on an
    idle one (each world reads the clock a few times: once, and once per candidate)."""

    def __init__(self, tick: float = 0.0001) -> None:
        self.now = 0.0
        self.tick = tick

    def perf_counter(self) -> float:
        self.now += self.tick
        return self.now


def ticks(ms: float) -> int:
    """How many readings of a :class:`TickClock` make ``ms`` milliseconds."""
    return round(ms / 1000 / TickClock().tick)


def play_ticked(bot: SearchBot, config: GameConfig, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One game, the search bot in seat 0, on a :class:`TickClock`: how many times each of
    its decisions read the clock (its length in ticks)."""
    from types import SimpleNamespace

    import sample_bots.search_bot as search_bot

    clock = TickClock()
    monkeypatch.setattr(search_bot, "time", SimpleNamespace(perf_counter=clock.perf_counter))
    from arena.sdk import ask

    game = new_game(config)
    others = [bot_factory("heuristic")() for _ in range(config.players - 1)]
    bot.rng = random.Random(config.seed)
    lengths = []
    while not game.is_over:
        for seat in game.to_act():
            decision = game.decision(seat)
            options = None if decision.options is None else list(decision.options)
            started = clock.now
            action = ask(bot if seat == 0 else others[seat - 1], decision.kind, game.observe(seat), options)
            if seat == 0:
                lengths.append(round((clock.now - started) / clock.tick))
            game.apply(seat, action)
    return lengths


@pytest.mark.parametrize("variant", ["classic", "extreme"])
def test_search_bot_respects_its_budget(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """One more world is started only when it is expected to fit, and a world cut short is
    dropped: a decision ends within its budget and one clock reading (on the tick clock)."""
    budget_ms = 15.0
    rounds = 6 if variant == "classic" else 1
    lengths = play_ticked(bot_class(budget_ms)(), GameConfig(variant=variant, players=4, seed=3, rounds=rounds),
                          monkeypatch)
    budget = ticks(budget_ms)
    assert lengths
    assert max(lengths) <= budget + 2, max(lengths)
    assert statistics.median(lengths) > budget / 2     # and it does search


def test_the_request_deadline_caps_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    bot = bot_class(1000.0)()
    bot.deadline_ms = 25  # the arena's limit for this decision: search 40 % of it
    lengths = play_ticked(bot, GameConfig(variant="classic", players=4, seed=5, rounds=4), monkeypatch)
    assert max(lengths) <= ticks(0.4 * 25) + 2, max(lengths)


def first_bid_of_round_6() -> tuple[dict[str, Any], list[Any]]:
    """A bid with 6 cards (random play before it): the observation and the options."""
    game = new_game(GameConfig(variant="classic", players=4, seed=8, rounds=6))
    rng = random.Random(0)
    while game.observe(0)["round"] < 6:
        seat = game.to_act()[0]
        game.apply(seat, game.random_action(seat, rng))
    seat = game.to_act()[0]
    return game.observe(seat), list(game.legal_actions(seat))


class ThreadClock(TickClock):
    """A :class:`TickClock` shared by threads: a lock around each reading, and each
    thread's first and last reading kept, the span of its search on the counted clock."""

    def __init__(self, tick: float = 0.0001) -> None:
        super().__init__(tick)
        self._lock = threading.Lock()
        self.spans: dict[int, list[float]] = {}

    def perf_counter(self) -> float:
        with self._lock:
            now = super().perf_counter()
            self.spans.setdefault(threading.get_ident(), [now, now])[1] = now
            return now


def test_searches_side_by_side_each_keep_their_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK asks each match on its own thread: four searches at once take turns at the
    CPU (search_bot.Turns), run side by side, and each ends near its own deadline (left to
    the GIL, one could wait 60 ms and more for the CPU). On a clock that ticks each time it
    is read, a search's span runs from its deadline's reading to its last reading; the
    spans overlap (side by side, not one after another), and each is its budget plus at
    most the three other searches' turns, however busy the machine."""
    from types import SimpleNamespace

    import sample_bots.search_bot as search_bot

    clock = ThreadClock()
    monkeypatch.setattr(search_bot, "time", SimpleNamespace(perf_counter=clock.perf_counter))
    obs, options = first_bid_of_round_6()
    budget_ms = 40.0
    together = threading.Barrier(4)

    def decide() -> None:
        bot = bot_class(budget_ms, max_worlds=10**6)()   # no cap: every search uses its whole budget
        together.wait()
        bot.bid(obs, options)

    threads = [threading.Thread(target=decide) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    spans = list(clock.spans.values())
    assert len(spans) == 4
    assert max(start for start, _ in spans) < min(end for _, end in spans), spans   # side by side
    assert max(end - start for start, end in spans) * 1000 < budget_ms + 25, spans


def test_max_worlds_caps_the_search() -> None:
    bot = bot_class(1000.0, max_worlds=3)()
    bot.bid(*first_bid_of_round_6())
    assert bot.last_worlds == 3


def test_more_time_means_more_worlds() -> None:
    obs, options = first_bid_of_round_6()
    worlds = []
    for budget in (3.0, 30.0):
        bot = bot_class(budget)()
        bot.bid(obs, options)
        worlds.append(bot.last_worlds)
    assert 0 < worlds[0] < worlds[1]


def test_search_bot_through_the_real_referee(arena_server: Any) -> None:
    """Full matches of both variants over loopback, the search bot a process with a small budget."""
    from arena.records import MatchSpec

    names = ["search", "heuristic", "cautious"]
    arena = arena_server(local_bots={name: f"token-{name}" for name in names})
    commands = {"search": [sys.executable, "-m", "sample_bots.search_bot", "--budget-ms", "5"],
                "heuristic": bot_command("heuristic"), "cautious": bot_command("cautious")}
    procs = [subprocess.Popen(commands[name] + ["--arena", arena.address, "--token", f"token-{name}", "--name", name],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for name in names]
    try:
        arena.call(arena.arena.host.wait_connected(names, timeout=30))
        configs = [{"variant": "classic", "players": 3, "seed": 5, "rounds": 5},
                   {"variant": "extreme", "players": 3, "seed": 6, "rounds": 1}]
        for i, config in enumerate(configs):
            spec = MatchSpec(config=config, bots=names, bot_seeds=[10 * i + s for s in range(3)])
            record = arena.call(arena.arena.host.run_match(spec), timeout=120)
            assert record.status == "completed"
            assert record.faults == [], [f"{f.bot}: {f.kind}: {f.message}" for f in record.faults]
            assert not any(record.forfeited)
    finally:
        for proc in procs:
            proc.terminate()
        for name, proc in zip(names, procs):
            code = proc.wait(10)
            stderr = proc.stderr.read() if proc.stderr else ""
            assert code == 0, f"{name} exited with {code}:\n{stderr[-2000:]}"
            assert "Traceback" not in stderr and "decision failed" not in stderr, f"{name} logged errors:\n{stderr}"
