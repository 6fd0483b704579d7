"""The PettingZoo AEC environment both games share: :class:`WizardEnv`, driven by the
engine and observed through :mod:`arena.wire.encoding`.

Each seat is an agent, ``player_0`` .. ``player_{P-1}`` (seat numbers as in the engine).
The agent to act is the engine's first seat in ``to_act()``: with hidden or secret bids
the bidders take their turns one after another, each seeing only its own bid
(``observe`` never shows a bid the seat may not know yet). A Wizard Extreme prediction
takes several steps of one agent: a token at a time, then ``done`` (or ``destroyer``);
the engine applies it on the last step (see :mod:`arena.wire.encoding`).

Observations are ``{"observation": float32 vector, "action_mask": int8 vector}``: the
vector is :func:`arena.wire.encoding.encode_sparse` of ``game.observe(seat)``, the data
the referee sends that seat; the mask is 1 for the legal actions of the agent to act
and 0 everywhere for the others. Rewards come at each round's end, the round's own
score (classic points; Wizard Extreme penalties, negative), so an agent's rewards over
a game add up to its final total; at the end every agent is terminated and its info
holds ``total`` and ``place``.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

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
from engine import PREDICT, Action, Game, GameConfig, IllegalAction, Prediction, new_game, variant

# Where each variant's round_end event keeps the round's scores: classic
# (visible_to, "round_end", round, bids, tricks, points, totals), Wizard Extreme
# (visible_to, "round_end", round, penalties, totals, dealer_next).
_ROUND_SCORES = {"classic": (5, 1), "extreme": (3, -1)}     # position, sign


class WizardEnv(AECEnv, EzPickle):
    """One variant's game as an AEC environment; ``options`` are ``GameConfig`` fields
    (``players``, ``rounds`` and the variant's own), validated by the engine
    (:class:`engine.ConfigError` names the allowed values)."""

    variant: ClassVar[str]
    metadata: ClassVar[dict[str, Any]]

    def __init__(self, render_mode: str | None = None, **options: Any):
        EzPickle.__init__(self, render_mode=render_mode, **options)
        super().__init__()
        if "variant" in options or "seed" in options:
            raise TypeError("the options are the game's (players, rounds, ...): "
                            "the variant is the environment's, and the deal seed comes from reset(seed=...)")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {', '.join(self.metadata['render_modes'])} or None")
        self.render_mode = render_mode
        self.config = GameConfig(variant=self.variant, **options).validate()
        players = self.config.players
        self.possible_agents = [f"player_{seat}" for seat in range(players)]
        self.agents = self.possible_agents[:]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        layout = observation_layout(self.variant, players)
        self._size = layout.size
        self._actions = action_layout(self.variant).size
        low = np.array(layout.low, dtype=np.float32)
        high = np.array(layout.high, dtype=np.float32)
        self.observation_spaces = {agent: spaces.Dict({
            "observation": spaces.Box(low=low, high=high, dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(self._actions,), dtype=np.int8),
        }) for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(self._actions) for agent in self.possible_agents}
        record = variant(self.variant)
        self.illegal_reward = -score_scale({"variant": self.variant, "players": players,
                                            "rounds": record.rounds(self.config),
                                            "destroyer_penalty": self.config.destroyer_penalty})
        self._seeds = random.Random()
        self.game: Game = new_game(self.config)
        self._pending: Pending = NO_PENDING
        self._log_at = 0
        self._reset_state()

    # ------------------------------------------------------------------ the AEC interface

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game. ``seed`` is the engine's deal seed (the same seed, the same deals);
        without one, the next seed of a generator seeded by the last ``seed`` given."""
        if seed is not None:
            self._seeds = random.Random(seed)
            deal = seed
        else:
            deal = self._seeds.getrandbits(63)
        self.game = new_game(replace(self.config, seed=deal))
        self._reset_state()

    def _reset_state(self) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._pending = NO_PENDING
        self._log_at = self.game.logged_events(0)[1]
        self.agent_selection = self.possible_agents[self.game.to_act()[0]]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's vector and action mask (all 0 unless it is the agent to act)."""
        seat = self._seat[agent]
        obs = self.game.observe(seat, round_history=False)
        acting = agent == self.agent_selection
        pending = self._pending if acting else NO_PENDING
        indices, values = encode_sparse(obs, pending)
        vector = np.zeros(self._size, dtype=np.float32)
        vector[indices] = values
        mask = np.zeros(self._actions, dtype=np.int8)
        if acting and not self.terminations.get(agent, True):
            mask[legal_indices(obs, self.game.legal_actions(seat), pending)] = 1
        return {"observation": vector, "action_mask": mask}

    def step(self, action: int | None) -> None:
        """Play action ``action`` (an index of the action space) for the agent to act.
        :class:`engine.IllegalAction` for an illegal one, and nothing changes (``env()``'s
        wrapper ends the game with :attr:`illegal_reward` for that agent instead)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        assert action is not None
        index = int(action)
        seat = self._seat[agent]
        game = self.game
        kind = game.decision(seat).kind
        engine_action: Action
        if kind == PREDICT:
            step = self._prediction_step(seat, index)
            if not isinstance(step, Prediction):      # a token taken: the same agent goes on
                self._pending = step
                self._new_step(agent)
                self._accumulate_rewards()
                return
            engine_action = step
        else:
            try:
                decoded = decode_action(self.variant, kind, index, seat, game.players)
            except ValueError as error:
                raise IllegalAction(str(error), seat=seat, kind=kind) from None
            assert not isinstance(decoded, tuple)     # only a prediction's steps are tuples
            engine_action = decoded
        game.apply(seat, engine_action)               # IllegalAction: nothing has changed
        self._pending = NO_PENDING
        self._new_step(agent)
        self._score_new_rounds()
        if game.is_over:
            result = game.result()
            self.terminations = dict.fromkeys(self.agents, True)
            for a in self.agents:
                s = self._seat[a]
                self.infos[a] = {"total": result.totals[s], "place": result.places[s]}
        else:
            self.agent_selection = self.possible_agents[game.to_act()[0]]
        self._accumulate_rewards()

    def _new_step(self, agent: str) -> None:
        """The acting agent's reward so far has been read (``last()``); this step's rewards start at 0."""
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)

    def _prediction_step(self, seat: int, index: int) -> Pending | Prediction:
        obs = self.game.observe(seat, round_history=False)
        if index not in legal_indices(obs, None, self._pending):
            raise IllegalAction(f"action {index} is not a legal prediction step now", seat=seat, kind=PREDICT)
        step = decode(obs, index, self._pending)
        assert isinstance(step, (tuple, Prediction))
        return step

    def _score_new_rounds(self) -> None:
        events, self._log_at = self.game.logged_events(self._log_at)
        at, sign = _ROUND_SCORES[self.variant]
        for event in events:
            if event[1] == "round_end":
                for agent, score in zip(self.possible_agents, event[at]):
                    self.rewards[agent] += sign * score

    # ------------------------------------------------------------------ rendering

    def render(self) -> str | None:
        """``render_mode="ansi"``: the table as text (every hand shown: this is the
        environment's own view, not a seat's)."""
        if self.render_mode is None:
            return None
        return "\n".join(table_lines(self.game))

    def close(self) -> None:
        pass


def table_lines(game: Game) -> list[str]:
    """The game as a readable table: a header line, then one line per seat.

    >>> from engine import GameConfig, new_game
    >>> print("\\n".join(table_lines(new_game(GameConfig(players=3, seed=5, rounds=1)))))
    classic, round 1 of 1, dealer seat 0, trump blue (b3 turned up); bid: seat 1 to act
      seat 0  hand J4  bid  -  tricks 0  total 0
      seat 1  hand y3  bid  -  tricks 0  total 0
      seat 2  hand b5  bid  -  tricks 0  total 0
    """
    public = game.observe(None, round_history=False)
    to_act = ", ".join(f"seat {s}" for s in public["to_act"]) or "nobody"
    if public["variant"] == "classic":
        turned = f" ({public['trump_card']} turned up)" if public["trump_card"] else ""
        header = (f"classic, round {public['round']} of {public['rounds']}, dealer seat {public['dealer']}, "
                  f"trump {public['trump'] or 'none'}{turned}; {public['phase']}: {to_act} to act")
    else:
        header = (f"extreme, round {public['round']} of {public['rounds']}, dealer seat {public['dealer']}, "
                  f"supply {_tokens(public['supply'])}; {public['phase']}: {to_act} to act")
    lines = [header]
    hands = [" ".join(game.observe(seat, round_history=False)["hand"]) or "-" for seat in range(game.players)]
    width = max(map(len, hands))
    for seat, hand in enumerate(hands):
        if public["variant"] == "classic":
            bid = public["bids"][seat]
            said = f"bid {'-' if bid is None else bid:>2}"
        else:
            said = "destroyer" if public["destroyer"] == seat else f"tokens {_tokens(public['tokens'][seat])}"
        lines.append(f"  seat {seat}  hand {hand:<{width}}  {said}  tricks {public['tricks_won'][seat]}  "
                     f"total {public['scores'][seat]}")
    if public["trick"]:
        lines.append("  trick: " + ", ".join(f"seat {e['seat']} {e['card']}" for e in public["trick"]))
    return lines


def _tokens(counts: dict[str, int]) -> str:
    return " ".join(f"{colour} {n}" for colour, n in counts.items() if n) or "none"


def wrap(raw: WizardEnv) -> AECEnv:
    """The wrappers PettingZoo's classic games put around their raw environment: an
    illegal action ends the game (the agent that took it gets ``raw.illegal_reward``,
    minus the largest total a game of this length can reach), an action outside the
    space fails an assertion, and calls out of order (``step`` before ``reset``) are refused."""
    env: AECEnv = wrappers.TerminateIllegalWrapper(raw, illegal_reward=raw.illegal_reward)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)
