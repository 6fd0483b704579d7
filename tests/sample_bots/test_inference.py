"""Policy-based inference in the search bot (sample_bots/learned/inference.py).

* each rival decision's view, rebuilt from the observer's own observation (and, in Wizard
  Extreme, its views of earlier tricks), is exactly what the engine showed that rival, its
  hand aside; secret bids give none;
* worlds are weighed by the rivals' decisions (a bid of every trick is likelier with
  Wizards), each world a fresh one, and the search averages them by weight;
* the search bot plays with ``--inference policy`` and ``none``, and refuses another.
"""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from factories import ROOT

from arena.sdk import ask
from arena.wire.encoding import encode_sparse
from engine import GameConfig, new_game
from engine import classic_cards as cc
from engine import extreme_cards as xc
from sample_bots.evaluate import bot_factory, play_game
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.learned.inference import Evidence, classic_rival_decisions, extreme_rival_decisions
from sample_bots.learned.policy import RIVALS, Policy
from sample_bots.search_bot import bot_class, deal_sampler, inferred_sampler


@pytest.mark.parametrize("bidding,players,plus_minus_one", [("open", 4, False), ("open", 5, True),
                                                             ("hidden", 3, False), ("hidden", 6, False)])
def test_each_rival_decision_is_rebuilt_as_the_engine_showed_it(bidding: str, players: int,
                                                                plus_minus_one: bool) -> None:
    game = new_game(GameConfig(players=players, seed=players, bidding=bidding, plus_minus_one=plus_minus_one))
    bot = HeuristicBot()
    shown: dict[tuple[int, int, str, int], dict[str, Any]] = {}
    checked = 0
    while not game.is_over:
        for seat in game.to_act():
            obs = game.observe(seat)
            shown[(obs["round"], seat, obs["decision"], len(obs["played"]))] = obs
            if seat == 0:
                for d in classic_rival_decisions(obs):
                    true = shown[(obs["round"], d.seat, d.template["decision"], len(d.template["played"]))]
                    assert encode_sparse({**d.template, "hand": true["hand"]}) == encode_sparse(true)
                    held = sum(1 << cc.INDEX[c] for c in true["hand"])
                    mine = sum(1 << cc.INDEX[c] for c in game.observe(d.seat)["hand"])
                    assert held == mine | d.later        # then: its hand now and what it played since
                    checked += 1
            decision = game.decision(seat)
            game.apply(seat, ask(bot, decision.kind, obs, None if decision.options is None else list(decision.options)))
    assert checked > 300


@pytest.mark.parametrize("players", [3, 4, 5])
def test_each_extreme_rival_decision_is_rebuilt_as_the_engine_showed_it(players: int) -> None:
    game = new_game(GameConfig(variant="extreme", players=players, seed=players))
    bot = HeuristicBot()
    shown: dict[tuple[int, int, str, int], dict[str, Any]] = {}
    views: dict[int, dict[str, Any]] = {}
    kinds: dict[str, int] = {"predict": 0, "play": 0}
    while not game.is_over:
        seat = game.to_act()[0]
        obs = game.observe(seat)
        shown[(obs["round"], seat, obs["decision"], len(obs["played"]))] = obs
        if seat == 0:
            if obs["phase"] == "predict":
                views = {}
            if obs["phase"] == "play":
                views[len(obs["played"]) // players] = obs
            for d in extreme_rival_decisions(obs, views):
                kind = d.template["decision"]
                true = shown[(obs["round"], d.seat, kind, len(d.template["played"]))]
                assert encode_sparse({**d.template, "hand": true["hand"]}, d.pending) == encode_sparse(true, d.pending)
                held = sum(1 << xc.INDEX[c] for c in true["hand"])
                assert held == sum(1 << xc.INDEX[c] for c in game.observe(d.seat)["hand"]) | d.later
                kinds[kind] += 1
        decision = game.decision(seat)
        game.apply(seat, ask(bot, decision.kind, obs, None if decision.options is None else list(decision.options)))
    assert kinds["predict"] > 10 and kinds["play"] > 200


def test_secret_bids_give_no_evidence() -> None:
    game = new_game(GameConfig(players=4, seed=1, bidding="secret", rounds=3))
    while not game.is_over:
        seat = game.to_act()[0]
        assert classic_rival_decisions(game.observe(seat)) == []
        game.apply(seat, game.legal_actions(seat)[0])


def test_worlds_are_weighed_by_the_rivals_decisions() -> None:
    """A bid of every trick is likelier with Wizards: the worlds that give the bidder
    Wizards weigh more on average than those that give it none."""
    rng = random.Random(1)
    heavier = lighter = 0
    for seed in range(40):
        game = new_game(GameConfig(players=4, seed=seed, rounds=4))
        while True:   # to round 4's last bid, the dealer's, every rival having bid all four tricks
            seat = game.to_act()[0]
            obs = game.observe(seat)
            if obs["round"] == 4 and obs["decision"] == "bid" and seat == obs["dealer"]:
                break
            game.apply(seat, game.legal_actions(seat)[-1] if obs["decision"] == "bid"
                       else game.legal_actions(seat)[0])
        evidence = Evidence(obs, Policy.load("classic", RIVALS))
        sample = deal_sampler(obs, rng)
        hands = [sample().hands for _ in range(200)]
        weights = evidence.log_weights(hands)
        assert weights.shape == (200,) and np.isfinite(weights).all()
        rival = evidence.decisions[0].seat
        wizards = np.asarray([bool(h[rival] & cc.WIZARD_MASK) for h in hands])
        if wizards.all() or not wizards.any():
            continue
        if weights[wizards].mean() > weights[~wizards].mean():
            heavier += 1
        else:
            lighter += 1
    assert heavier > 2 * lighter


def test_inferred_worlds_are_fresh_uniform_worlds_with_weights() -> None:
    game = new_game(GameConfig(players=4, seed=2, rounds=5))
    while game.observe(0)["decision"] is None:
        seat = game.to_act()[0]
        game.apply(seat, game.legal_actions(seat)[0])
    obs = game.observe(0)
    rng = random.Random(3)
    draw = inferred_sampler(deal_sampler(obs, rng), Evidence(obs, Policy.load("classic", RIVALS)))
    worlds = [draw() for _ in range(100)]
    assert len({id(w) for w in worlds}) == 100                    # every world a new one
    assert len({w.weight for w in worlds}) > 10 and all(w.weight > 0 for w in worlds)
    me = sum(1 << cc.INDEX[c] for c in obs["hand"])
    assert all(w.hands[0] == me for w in worlds)


def test_the_search_averages_worlds_by_weight() -> None:
    import time

    from sample_bots.search_bot import World, search

    weights = iter([1.0, 3.0] * 10)
    values = iter([0.0, 4.0] * 10)

    def sample() -> World:
        world = World([next(values)], next(weights))
        return world

    means, worlds = search([0], sample, lambda w, c: w.hands[0], time.perf_counter() + 5, max_worlds=20)
    assert worlds == 20 and means == [3.0]        # (1 * 0 + 3 * 4) / 4


@pytest.mark.parametrize("inference", ["policy", "none"])
def test_the_search_bot_plays_with_and_without_inference(inference: str) -> None:
    bots = [bot_class(3.0, inference=inference)()] + [bot_factory("heuristic")() for _ in range(3)]
    totals, _, _, counts = play_game(bots, GameConfig(players=4, seed=7, rounds=6), range(4))
    assert counts[0] > 0


def test_an_unknown_inference_is_refused() -> None:
    done = subprocess.run([sys.executable, "-m", "sample_bots.search_bot", "--inference", "magic", "--token", "t"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "invalid choice: 'magic'" in done.stderr and "Traceback" not in done.stderr
