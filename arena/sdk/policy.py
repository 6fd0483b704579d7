"""A policy is a bot: :class:`PolicyBot` plays a function from (observation vector,
action mask) to an action index in the arena, through the encoding the training
environments use (:mod:`arena.wire.encoding`)::

    from arena.sdk import PolicyBot, run

    def first_legal(vector, mask):
        return mask.index(1)

    if __name__ == "__main__":
        run(PolicyBot(first_legal, name="first-legal"))

At each request the bot encodes the observation the referee sent (and the request's
options) exactly as ``arena.envs`` encodes ``game.observe(seat)``, so the policy gets the
vector and mask it would get in the environment at the same point of the same game,
and turns the index it returns into the answer: a bid, the trump suit, a card, a
token to return, or a Wizard Extreme prediction. A prediction takes several policy
calls, as in the environment: one per token taken, then ``done`` (or ``destroyer`` as
the first step), each with the vector of the steps so far.

The policy gets plain lists (``list[float]``, ``list[int]``); a NumPy policy trained in
the environment may wrap them in arrays itself. Its answer may be any integer-like
value (``numpy.int64`` too). An index that is not legal at that point is the policy's
mistake, and the SDK's rule for a bot's mistake applies: the arena is sent the first
legal option (or, mid-prediction, no prediction) and the answer's ``bot_error`` says
which index the policy chose, so the match goes on and the fault is recorded.

One :class:`PolicyBot` instance answers every seat (it keeps no state between
decisions; a prediction's steps live only within one decision), so ``run`` gets the
instance, not the class.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from arena.sdk.bot import BadAnswer, Bot
from arena.wire.encoding import NO_PENDING, Pending, action_layout, decode, encode, legal_indices
from engine import BID, PAY, PLAY, PREDICT, TRUMP, Prediction
from engine.observations import ClassicObservation, ExtremeObservation, Observation

Policy = Callable[[list[float], list[int]], Any]
"""A policy: (observation vector, action mask) to the index of an action in the
variant's action space (:func:`arena.wire.encoding.action_layout`)."""

# The most steps a prediction can take: a token of every colour from the supply and
# every rival, and "done"; a policy that never says "done" is stopped there.
_MOST_PREDICTION_STEPS = 128


class PolicyBot(Bot):
    """A bot that plays ``policy`` (see the module's docstring); ``name`` is the bot's
    name for its logs and Hello (default ``"policy"``)."""

    name = "policy"

    def __init__(self, policy: Policy, name: str | None = None) -> None:
        super().__init__()
        self.policy = policy
        if name is not None:
            self.name = name

    def bid(self, obs: ClassicObservation, options: list[int]) -> int:
        return self._choose(obs, BID, options)

    def trump(self, obs: ClassicObservation, options: list[str]) -> str:
        return self._choose(obs, TRUMP, options)

    def play(self, obs: Observation, options: list[str]) -> str:
        return self._choose(obs, PLAY, options)

    def pay(self, obs: ExtremeObservation, options: list[str]) -> str:
        return self._choose(obs, PAY, options)

    def predict(self, obs: ExtremeObservation) -> Prediction:
        pending: Pending = NO_PENDING
        for _ in range(_MOST_PREDICTION_STEPS):
            step = decode(obs, self._index(obs, PREDICT, None, pending), pending)
            if isinstance(step, Prediction):
                return step
            assert isinstance(step, tuple)
            pending = step
        raise BadAnswer(f"the policy took {_MOST_PREDICTION_STEPS} prediction steps without 'done'")

    def _choose(self, obs: Observation, kind: str, options: Sequence[Any]) -> Any:
        return decode(obs, self._index(obs, kind, options, NO_PENDING))

    def _index(self, obs: Observation, kind: str, options: Sequence[Any] | None, pending: Pending) -> int:
        """The policy's index for this decision (``BadAnswer``, so the SDK falls back,
        when it is no legal action now)."""
        if obs.get("decision") != kind:
            raise BadAnswer(f"the observation is not at a {kind} decision (an events-only arena sends none)")
        legal = legal_indices(obs, options, pending)
        mask = [0] * action_layout(obs["variant"]).size
        for i in legal:
            mask[i] = 1
        chosen = self.policy(encode(obs, pending), mask)
        try:
            index = operator.index(chosen)
        except TypeError:
            raise BadAnswer(f"the policy returned {chosen!r}, which is no action index") from None
        if index not in legal:
            raise BadAnswer(f"the policy chose action {index}, which is not legal at this {kind} "
                            f"(legal: {', '.join(map(str, legal[:12]))}{', ...' if len(legal) > 12 else ''})")
        return index

