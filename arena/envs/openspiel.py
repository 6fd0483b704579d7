"""Classic Wizard and Wizard Extreme as OpenSpiel games (``pip install 'wizard-arena[openspiel]'``).

Importing this module registers ``python_wizard`` and ``python_wizard_extreme`` with
``pyspiel``; their parameters are the PettingZoo environments' options (``GameConfig``'s
fields), and ``rounds=0`` means the variant's standard length::

    >>> import pyspiel
    >>> import arena.envs.openspiel
    >>> game = pyspiel.load_game("python_wizard(players=4,rounds=3,bidding=hidden)")
    >>> game.num_players(), game.num_distinct_actions(), game.information_state_tensor_shape()
    (4, 85, [465])

The game is sequential, general-sum and of imperfect information. Each state steps the
engine (:func:`engine.new_game`); the player to move is the engine's first seat in
``to_act()`` (with hidden or secret bids the bidders take turns clockwise, each seeing
only its own bid, as in :mod:`arena.envs.aec`), and a Wizard Extreme prediction takes
several moves of one player: a token at a time, then ``done`` (or ``destroyer``).

**The deal is explicit chance: the engine's deal seed, drawn as 8 chance moves of 256
equally likely outcomes each** (a uniform 64-bit seed), before the first decision. The
engine then deals every round from that seed, exactly as in the arena and the
PettingZoo environment (``reset(seed=...)``): the game has precisely the arena's deals,
and a history of actions replays to the same state, so OpenSpiel's serialisation and
its chance-sampling algorithms work unchanged. One chance move per dealt card would
need the engine to take its deals from outside mid-game, which Wizard Extreme's rules
do not offer; it would also add 60-odd chance moves to every round. Algorithms that
enumerate every chance outcome (exact CFR, best response) cannot do so here, and could
not with per-card chance either at Wizard's size.

Both tensors, the information state and the observation, are the shared encoding
(:func:`arena.wire.encoding.encode` of the player's ``observe(seat)``, with the
prediction in progress), the numbers a policy gets from the PettingZoo environment and
from the referee's observation in the arena. Actions are the encoding's fixed action
space, and ``legal_actions`` its mask. The information state *string* is the seat's
observation itself (round history and prediction in progress included, the timing
field ``to_act`` left out): within a round it determines everything the seat has seen;
of earlier rounds it keeps bids, tricks and scores. :meth:`WizardState.resample_world`
deals the unseen cards again consistently with it (:func:`engine.worlds.sample_world`),
for information-set search (``open_spiel.python.algorithms.ismcts``, through
``set_resampler``).

Rewards come at each round's end, that round's score (classic points; Wizard Extreme
penalties, negative), and ``returns()`` are the totals so far: at the end, each game's
own final score.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pyspiel

from arena.envs.aec import table_lines
from arena.wire.encoding import (
    NO_PENDING,
    Pending,
    action_layout,
    decode,
    decode_action,
    encode_sparse,
    legal_indices,
    observation_layout,
    score_scale,
)
from engine import PREDICT, Game, GameConfig, IllegalAction, Prediction, new_game, variant
from engine.extreme_cards import COLOURS, SUPPLY_START
from engine.observations import Observation
from engine.worlds import sample_world

__all__ = ["SEED_MOVES", "WizardGame", "WizardObserver", "WizardState", "game_config"]

SEED_MOVES = 8
"""Chance moves before the first decision, each one byte of the 64-bit deal seed."""
_SEED_OUTCOMES = [(byte, 1 / 256) for byte in range(256)]
# Where each variant's round_end event keeps the totals so far, and their sign as a return:
# classic (visible_to, "round_end", round, bids, tricks, points, totals),
# Wizard Extreme (visible_to, "round_end", round, penalties, totals, dealer_next).
_TOTALS = {"classic": (6, 1), "extreme": (4, -1)}
_PAY_COLOURS = (*COLOURS, "white")


def _game_type(variant_name: str, short_name: str, long_name: str,
               parameters: Mapping[str, Any]) -> pyspiel.GameType:
    record = variant(variant_name)
    return pyspiel.GameType(
        short_name=short_name,
        long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.REWARDS,
        max_num_players=record.max_players,
        min_num_players=record.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=dict(parameters),
    )


_CLASSIC_TYPE = _game_type("classic", "python_wizard", "Python Wizard", {
    "players": 4, "rounds": 0, "length": "standard", "bidding": "open", "plus_minus_one": False})
_EXTREME_TYPE = _game_type("extreme", "python_wizard_extreme", "Python Wizard Extreme", {
    "players": 4, "rounds": 0, "destroyer_penalty": 4})


def game_config(variant_name: str, params: Mapping[str, Any]) -> GameConfig:
    """The engine's validated config for OpenSpiel parameters (``rounds=0``: the
    variant's standard length); :class:`engine.ConfigError` names the allowed values.

    >>> game_config("classic", {"players": 3, "rounds": 0}).rounds is None
    True
    """
    options = dict(params)
    options["rounds"] = options.get("rounds") or None
    return GameConfig(variant=variant_name, **options).validate()


def _max_game_length(config: GameConfig) -> int:
    """An upper bound on the decisions of one game (OpenSpiel's ``max_game_length``)."""
    record = variant(config.variant)
    rounds = record.rounds(config)
    p = config.players
    if config.variant == "classic":
        return rounds * (p + 1 + len(record.cards))     # bids, a trump choice, at most every card
    # Per seat and round: a prediction of at most every coloured token plus its last
    # step, 15 cards, and a token returned after each trick at most.
    return rounds * p * (sum(SUPPLY_START[:5]) + 1 + 15 + 15)


class WizardGame(pyspiel.Game):
    """One variant's game at one table size and options (the OpenSpiel parameters)."""

    variant_name = "classic"
    game_type = _CLASSIC_TYPE

    def __init__(self, params: Mapping[str, Any] | None = None):
        defaults = dict(self.game_type.parameter_specification)
        given = {**defaults, **(params or {})}
        self.config = game_config(self.variant_name, given)
        record = variant(self.variant_name)
        rounds = record.rounds(self.config)
        scale = score_scale({"variant": self.variant_name, "players": self.config.players, "rounds": rounds,
                             "destroyer_penalty": self.config.destroyer_penalty})
        classic = self.variant_name == "classic"
        info = pyspiel.GameInfo(
            num_distinct_actions=action_layout(self.variant_name).size,
            max_chance_outcomes=len(_SEED_OUTCOMES),
            num_players=self.config.players,
            min_utility=-scale,
            max_utility=scale if classic else 0.0,
            utility_sum=None,
            max_game_length=_max_game_length(self.config),
        )
        super().__init__(self.game_type, info, params or {})
        self.layout = observation_layout(self.variant_name, self.config.players)

    def new_initial_state(self) -> WizardState:
        """The state before the deal: the first :data:`SEED_MOVES` moves are chance."""
        return WizardState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Mapping[str, Any] | None = None) -> WizardObserver:
        """The observer of both tensors (the shared encoding) and both strings."""
        if params:
            raise ValueError(f"observation parameters are not supported (got {dict(params)})")
        perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        return WizardObserver(self, perfect_recall)


class WizardExtremeGame(WizardGame):
    """Wizard Extreme (``destroyer_penalty`` besides ``players`` and ``rounds``)."""

    variant_name = "extreme"
    game_type = _EXTREME_TYPE


class WizardState(pyspiel.State):
    """One game in progress: the seed's chance moves, then the engine's game."""

    def __init__(self, game: WizardGame):
        super().__init__(game)
        self._config = game.config
        self._variant = game.variant_name
        self._seed_bytes: list[int] = []
        self._game: Game | None = None
        self._pending: Pending = NO_PENDING
        self._log_at = 0
        self._returns = [0.0] * game.config.players
        self._rewards = [0.0] * game.config.players

    # ------------------------------------------------------------------ OpenSpiel's State API

    def current_player(self) -> int:
        game = self._game
        if game is None:
            return int(pyspiel.PlayerId.CHANCE)
        if game.is_over:
            return int(pyspiel.PlayerId.TERMINAL)
        return game.to_act()[0]

    def is_terminal(self) -> bool:
        return self._game is not None and self._game.is_over

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The next byte of the deal seed, each value equally likely."""
        assert self._game is None
        return _SEED_OUTCOMES

    def _legal_actions(self, player: int) -> list[int]:
        game = self._game
        assert game is not None
        kind = game.decision(player).kind
        if kind == PREDICT:
            return legal_indices(game.observe(player, round_history=False), None, self._pending)
        return legal_indices({"variant": self._variant, "decision": kind}, game.legal_actions(player))

    def _apply_action(self, action: int) -> None:
        game = self._game
        self._rewards = [0.0] * len(self._rewards)
        if game is None:
            self._seed_bytes.append(action)
            if len(self._seed_bytes) == SEED_MOVES:
                seed = int.from_bytes(bytes(self._seed_bytes), "big")
                self._game = new_game(replace(self._config, seed=seed))
                self._log_at = self._game.logged_events(0)[1]
            return
        seat = game.to_act()[0]
        kind = game.decision(seat).kind
        if kind == PREDICT:
            obs = game.observe(seat, round_history=False)
            if action not in legal_indices(obs, None, self._pending):
                raise IllegalAction(f"action {action} is not a legal prediction step now", seat=seat, kind=PREDICT)
            step = decode(obs, action, self._pending)
            if not isinstance(step, Prediction):      # a token taken: the same player goes on
                assert isinstance(step, tuple)
                self._pending = step
                return
            engine_action: Any = step
        else:
            try:
                engine_action = decode_action(self._variant, kind, action, seat, game.players)
            except ValueError as error:
                raise IllegalAction(str(error), seat=seat, kind=kind) from None
        game.apply(seat, engine_action)
        self._pending = NO_PENDING
        self._score_new_rounds(game)

    def _score_new_rounds(self, game: Game) -> None:
        events, self._log_at = game.logged_events(self._log_at)
        at, sign = _TOTALS[self._variant]
        for event in events:
            if event[1] == "round_end":
                totals = [float(sign * t) for t in event[at]]
                self._rewards = [t - r + reward for t, r, reward in zip(totals, self._returns, self._rewards)]
                self._returns = totals

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"seed byte {action}"
        return action_text(self._variant, action)

    def rewards(self) -> list[float]:
        """The scores of the round that the last move ended (0 for every other move)."""
        return list(self._rewards)

    def returns(self) -> list[float]:
        """The totals so far: classic points, Wizard Extreme penalties as negative numbers."""
        return list(self._returns)

    def __str__(self) -> str:
        if self._game is None:
            return f"dealing: seed bytes {self._seed_bytes}"
        return "\n".join(table_lines(self._game))

    # ------------------------------------------------------------------ for the observer and for search

    @property
    def engine_game(self) -> Game | None:
        """The engine's game (``None`` while the seed is being drawn)."""
        return self._game

    @property
    def pending(self) -> Pending:
        """The Wizard Extreme prediction in progress (:data:`arena.wire.encoding.Pending`)."""
        return self._pending

    def observation(self, player: int) -> Observation | None:
        """``observe(player)`` of the engine's game (``None`` before the deal)."""
        return None if self._game is None else self._game.observe(player)

    def resample_world(self, player: int, rng: random.Random) -> WizardState:
        """A state the player cannot tell from this one: its observation and prediction in
        progress the same, the cards it cannot see dealt again at random
        (:func:`engine.worlds.sample_world`). For ``ISMCTSBot.set_resampler``."""
        game = self._game
        assert game is not None and not game.is_over
        world = self.get_game().new_initial_state()
        world._seed_bytes = list(self._seed_bytes)
        world._game = sample_world(game.observe(player), rng)
        world._log_at = world._game.logged_events(0)[1]
        world._pending = self._pending
        world._returns = list(self._returns)
        return world


def action_text(variant_name: str, action: int) -> str:
    """An action index in words (the same for every state: the action space is fixed).

    >>> action_text("classic", 3), action_text("classic", 22), action_text("extreme", 81)
    ('bid 3', 'trump green', 'take yellow from seat +1')
    """
    for name, part in action_layout(variant_name).slices.items():
        if part.start <= action < part.stop:
            offset = action - part.start
            if name == "card":
                return f"play {variant(variant_name).cards[offset]}"
            if name == "bid":
                return f"bid {offset}"
            if name == "trump":
                return f"trump {decode_action(variant_name, 'trump', action, 0, 3)}"
            if name == "supply":
                return f"take {COLOURS[offset]}"
            if name == "rival":
                return f"take {COLOURS[offset % 5]} from seat +{offset // 5 + 1}"
            if name == "pay":
                return f"return {_PAY_COLOURS[offset]}"
            return name                                  # done, destroyer
    raise ValueError(f"{action} is no action of {variant_name}")


class WizardObserver:
    """OpenSpiel's Python observer: ``tensor`` (with named views in ``dict``, one per
    segment of :func:`arena.wire.encoding.observation_layout`) and ``string_from``.
    The tensor is the shared encoding for the information state and the observation
    alike; the information state's string has the round history, the observation's not."""

    def __init__(self, game: WizardGame, perfect_recall: bool):
        layout = game.layout
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(layout.size, np.float32)
        self.dict = {name: self.tensor[part] for name, part in layout.slices.items()}

    def set_from(self, state: WizardState, player: int) -> None:
        """The tensor of ``state`` as ``player`` sees it (all 0 before the deal)."""
        self.tensor.fill(0)
        game = state.engine_game
        if game is None:
            return
        pending = state.pending if player in game.to_act()[:1] else NO_PENDING
        indices, values = encode_sparse(game.observe(player, round_history=False), pending)
        self.tensor[indices] = values

    def string_from(self, state: WizardState, player: int) -> str:
        """The player's observation as JSON (``to_act``, timing rather than knowledge, left
        out), with the prediction in progress; ``"dealing"`` before the deal."""
        game = state.engine_game
        if game is None:
            return "dealing"
        obs: dict[str, Any] = {**game.observe(player, round_history=self.perfect_recall)}
        obs.pop("to_act")
        if not self.perfect_recall:
            obs.pop("round_history")
        pending: Sequence[Any] = state.pending if player in game.to_act()[:1] else NO_PENDING
        return json.dumps({**obs, "pending": [list(step) for step in pending]}, separators=(",", ":"))


pyspiel.register_game(_CLASSIC_TYPE, WizardGame)
pyspiel.register_game(_EXTREME_TYPE, WizardExtremeGame)
