"""The learned policy (sample_bots/learned/) and the learned bot.

* the padded layout: every table size's vector fits the one network without collisions;
* the shipped weights: small, loaded once, answering only legal actions in both variants;
* the learned bot: legal full games at every table size (as a process through the real
  referee: tests/sample_bots/test_sample_bots.py), well above random;
* the training data: a Wizard Extreme prediction is rebuilt from its steps exactly, and
  renaming the suits moves the vector and the actions alike (the augmentation);
* the training command, end to end on a tiny run (the ``learn`` extra).
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from factories import ROOT

from arena.sdk import ask
from arena.wire.encoding import encode_sparse, observation_layout
from engine import PREDICT, GameConfig, Prediction, new_game, variant
from engine import classic_cards as cc
from engine import extreme_cards as xc
from sample_bots.evaluate import bot_factory, play_game
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.learned.policy import BOT, RIVALS, WEIGHTS, Policy, padded_index, padded_size, players_index
from sample_bots.learned.steps import prediction_steps
from sample_bots.learned_bot import LearnedBot
from sample_bots.training.data import decision_samples, self_play


@pytest.mark.parametrize("name", ["classic", "extreme"])
def test_every_table_size_fits_the_padded_vector_without_collisions(name: str) -> None:
    sizes = variant(name).players
    slots = {players_index(name, p) for p in sizes}
    for p in sizes:
        mapped = padded_index(name, p)
        assert len(set(mapped.tolist())) == observation_layout(name, p).size       # one slot each
        assert mapped.max() < padded_size(name) and not slots & set(mapped.tolist())
    assert len(slots) == len(sizes)


@pytest.mark.parametrize("name,network", [("classic", BOT), ("classic", RIVALS), ("extreme", BOT),
                                          ("extreme", RIVALS)])
def test_the_shipped_weights_are_small_and_answer_legally(name: str, network: str) -> None:
    assert (WEIGHTS / f"{name}{network}.npz").stat().st_size < 2_000_000
    policy = Policy.load(name, network)
    assert Policy.load(name, network) is policy and policy.advised == (network == BOT)   # loaded once
    game = new_game(GameConfig(variant=name, players=4, seed=5, rounds=2))
    while not game.is_over:
        seat = game.to_act()[0]
        obs = game.observe(seat)
        options = game.legal_actions(seat) if obs["decision"] != PREDICT else None
        action = policy.best(obs, options)
        if options is not None:
            assert action in options
            probabilities = policy.probabilities(obs, options)
            assert abs(sum(probabilities.values()) - 1) < 1e-5
        game.apply(seat, action)


@pytest.mark.parametrize("name,players", [("classic", 3), ("classic", 4), ("classic", 5), ("classic", 6),
                                          ("extreme", 3), ("extreme", 4), ("extreme", 5)])
def test_the_learned_bot_plays_full_games_legally(name: str, players: int) -> None:
    bots = [LearnedBot()] + [bot_factory("heuristic")() for _ in range(players - 1)]
    totals, _, _, counts = play_game(bots, GameConfig(variant=name, players=players, seed=players), range(players))
    assert len(totals) == players and counts[0] > 0


def test_the_learned_bot_beats_random_clearly() -> None:
    from sample_bots.evaluate import play_series

    series = play_series([LearnedBot, bot_factory("random"), bot_factory("random"), bot_factory("random")],
                         "classic", 8, seed=3, rounds=8)
    learned, *randoms = series.standings
    assert all(learned.average_place < r.average_place for r in randoms)


def test_a_prediction_is_rebuilt_exactly_from_its_steps() -> None:
    from arena.wire.encoding import prediction_of

    checked = 0
    for seed in range(4):
        game = new_game(GameConfig(variant="extreme", players=3 + seed % 3, seed=seed))
        bot = HeuristicBot()
        while not game.is_over:
            seat = game.to_act()[0]
            obs = game.observe(seat)
            decision = game.decision(seat)
            answer = ask(bot, decision.kind, obs, None if decision.options is None else list(decision.options))
            if decision.kind == PREDICT:
                prediction = Prediction.from_json(answer)
                samples = list(decision_samples(obs, None, answer))
                assert samples and all(s.action in s.legal for s in samples)
                if not prediction.destroyer:
                    steps = prediction_steps(obs, prediction)
                    rebuilt = prediction_of(steps[-1][0], seat, obs["players"])
                    assert {c: n for c, n in rebuilt.tokens.items() if n} == \
                        {c: n for c, n in prediction.tokens.items() if n}
                    checked += 1
            game.apply(seat, answer)
    assert checked > 20


def test_the_training_command_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    done = subprocess.run([sys.executable, "-m", "sample_bots.training.train", "classic", "--games", "1",
                           "--epochs", "1", "--worlds", "2", "--data", str(tmp_path / "data"), "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("held-out accuracy") == 2
    assert Policy.load("classic", BOT, tmp_path).advised and not Policy.load("classic", RIVALS, tmp_path).advised
    assert Policy.load("classic", RIVALS, tmp_path).w1.shape[0] == padded_size("classic")
    again = self_play("classic", 1, range(1), worlds=2)
    assert [s.action for s in again] == [s.action for s in __import__("pickle").loads(
        next((tmp_path / "data").glob("*.pkl")).read_bytes())]      # the data is the seed's


def _renamed(obs: dict[str, Any], perm: tuple[int, ...]) -> dict[str, Any]:
    """``obs`` with its suits renamed by ``perm`` (the card codes, trump, lead, tokens)."""
    classic = obs["variant"] == "classic"
    names = cc.SUITS if classic else xc.COLOURS
    codes = cc.CODES if classic else xc.CODES
    index = cc.INDEX if classic else xc.INDEX
    from sample_bots.training.augment import _card

    def card(code: str) -> str:
        return codes[_card(obs["variant"], perm, index[code])]

    def suit(name: str | None) -> str | None:
        return None if name is None else names[perm[names.index(name)]]

    out = {**obs, "hand": [card(c) for c in obs["hand"]], "played": [card(c) for c in obs["played"]],
           "trick": [{**e, "card": card(e["card"])} for e in obs["trick"]], "lead_suit": suit(obs["lead_suit"])}
    if classic:
        out["trump"] = suit(obs["trump"])
        out["trump_card"] = None if obs["trump_card"] is None else card(obs["trump_card"])
    else:
        def tokens(held: dict[str, int]) -> dict[str, int]:
            return {suit(k) if k in names else k: v for k, v in held.items()}
        out["tokens"] = [tokens(t) for t in obs["tokens"]]
        out["supply"] = tokens(obs["supply"])
    return out


@pytest.mark.parametrize("name", ["classic", "extreme"])
def test_renaming_the_suits_moves_the_vector_and_the_actions_alike(name: str) -> None:
    from arena.wire.encoding import legal_indices
    from sample_bots.training.augment import action_map, feature_map, renamings
    from sample_bots.training.data import Sample
    from sample_bots.training.train import matrix

    rng = random.Random(2)
    checked = 0
    kinds: set[str] = set()
    for players in variant(name).players:
        game = new_game(GameConfig(variant=name, players=players, seed=players, rounds=3))
        moves = random.Random(players)       # the engine's random actions: tokens taken, so tokens paid
        while not game.is_over:
            seat = game.to_act()[0]
            obs = game.observe(seat)
            decision = game.decision(seat)
            options = None if decision.options is None else list(decision.options)
            for perm in renamings(name, 3, rng)[1:]:
                moved = _renamed(obs, perm)
                colours = cc.SUITS if name == "classic" else xc.COLOURS
                renamed_options = None if options is None else (
                    [colours[perm[colours.index(o)]] if o in colours else o for o in options]
                    if decision.kind in ("trump", "pay")
                    else [_renamed({**obs, "hand": [o], "played": [], "trick": []}, perm)["hand"][0]
                          for o in options] if decision.kind == "play" else options)
                kinds.add(decision.kind)
                pending = ((perm[0], 0),) if decision.kind == PREDICT and obs["supply"]["red"] else ()
                rows = [matrix(name, [Sample(players, *map(tuple, encode_sparse(o, pending)), (), 0)])
                        for o in (obs, moved)]
                before, after = rows[0].indices, rows[1].indices
                assert sorted(feature_map(name, perm)[before].tolist()) == sorted(after.tolist())
                assert sorted(action_map(name, perm)[legal_indices(obs, options, pending)].tolist()) == \
                    legal_indices(moved, renamed_options, pending)
                checked += 1
            game.apply(seat, game.random_action(seat, moves))
    assert checked > 100 and kinds == set(variant(name).decision_kinds)
