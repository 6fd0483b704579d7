"""A bot that plays the learned policy: a small network trained to answer as the search
bot does (``sample_bots/learned/``), one pass of it a decision, no search.

Each decision encodes the seat's observation as the training environments do
(:mod:`arena.wire.encoding`) and takes the legal action the network rates highest; a
Wizard Extreme prediction is built a token at a time the same way. Numpy only, so it
needs nothing beyond the arena's own install. docs/bots.md, "The learned policy"::

    python -m sample_bots.learned_bot --token T
"""

from __future__ import annotations

from typing import Any

from arena.sdk import Bot, ClassicObservation, ExtremeObservation, Observation, run
from engine import Prediction
from sample_bots.learned.policy import Policy


class LearnedBot(Bot):
    name = "learned"
    version = "1.0"

    def _best(self, obs: Observation, options: list[Any] | None) -> Any:
        return Policy.load(obs["variant"]).best(obs, options)

    def bid(self, obs: ClassicObservation, options: list[int]) -> int:
        return int(self._best(obs, options))

    def trump(self, obs: ClassicObservation, options: list[str]) -> str:
        return str(self._best(obs, options))

    def play(self, obs: Observation, options: list[str]) -> str:
        return str(self._best(obs, options))

    def predict(self, obs: ExtremeObservation) -> dict[str, Any]:
        prediction = self._best(obs, None)
        assert isinstance(prediction, Prediction)
        return prediction.to_json()

    def pay(self, obs: ExtremeObservation, options: list[str]) -> str:
        return str(self._best(obs, options))


if __name__ == "__main__":
    Policy.load("classic"), Policy.load("extreme")   # before the first request, not in its time
    run(LearnedBot)
