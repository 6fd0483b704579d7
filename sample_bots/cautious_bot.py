"""A careful bot: it bids low and ducks whenever it can.

Same card estimates as the heuristic bot (sample_bots/strategy.py) with the dial turned
to "pessimistic": every card's chance of winning is lowered before bidding, so it bids
only on near-certain winners; in play it goes for a trick only with a card that is very
likely to hold, and otherwise gets rid of its most dangerous card. In Wizard Extreme it
predicts few tokens and takes the destroyer whenever it is free.
"""

from __future__ import annotations

from typing import Any

from arena.sdk import Bot, ClassicObservation, ExtremeObservation, Observation, run
from sample_bots import strategy

PESSIMISM = -0.12       # added to every card's win chance when bidding/predicting
WIN_THRESHOLD = 0.75    # only a card this likely to hold is played for a trick
DESTROYER_MARGIN = -100.0  # so low that the destroyer is taken whenever it is free


class CautiousBot(Bot):
    name = "cautious"
    version = "1.0"

    def bid(self, obs: ClassicObservation, options: list[int]) -> int:
        return strategy.classic_bid(obs, options, shift=PESSIMISM)

    def play(self, obs: Observation, options: list[str]) -> str:
        if obs["variant"] == "classic":
            return strategy.classic_play(obs, options, threshold=WIN_THRESHOLD)
        return strategy.extreme_play(obs, options)

    def trump(self, obs: ClassicObservation, options: list[str]) -> str:
        return strategy.classic_trump(obs, options)

    def predict(self, obs: ExtremeObservation) -> dict[str, Any]:
        return strategy.extreme_predict(obs, shift=PESSIMISM, destroyer_margin=DESTROYER_MARGIN)

    def pay(self, obs: ExtremeObservation, options: list[str]) -> str:
        return strategy.extreme_pay(obs, options)


if __name__ == "__main__":
    run(CautiousBot)
