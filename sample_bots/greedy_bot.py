"""An aggressive bot: it bids high and grabs tricks with its surest cards.

Same card estimates as the heuristic bot (sample_bots/strategy.py) with the dial turned
to "optimistic": every card's chance of winning is raised before bidding, so it bids
more; while it still needs tricks it plays its surest winner rather than the cheapest
one, and it goes for a trick even on a modest chance. Once its bid is made it ducks
like the others. In Wizard Extreme it takes generous token predictions, never takes the
destroyer, and plays to win every trick it could pay for.
"""

from __future__ import annotations

from typing import Any

from arena.sdk import Bot, ClassicObservation, ExtremeObservation, Observation, run
from sample_bots import strategy

OPTIMISM = 0.15       # added to every card's win chance when bidding/predicting
WIN_THRESHOLD = 0.35  # a card this likely to hold is worth playing for the trick


class GreedyBot(Bot):
    name = "greedy"
    version = "1.0"

    def bid(self, obs: ClassicObservation, options: list[int]) -> int:
        return strategy.classic_bid(obs, options, shift=OPTIMISM)

    def play(self, obs: Observation, options: list[str]) -> str:
        if obs["variant"] == "classic":
            return strategy.classic_play(obs, options, eager=True, threshold=WIN_THRESHOLD)
        return strategy.extreme_play(obs, options, eager=True)

    def trump(self, obs: ClassicObservation, options: list[str]) -> str:
        return strategy.classic_trump(obs, options)

    def predict(self, obs: ExtremeObservation) -> dict[str, Any]:
        return strategy.extreme_predict(obs, shift=OPTIMISM, destroyer_margin=None)

    def pay(self, obs: ExtremeObservation, options: list[str]) -> str:
        return strategy.extreme_pay(obs, options)


if __name__ == "__main__":
    run(GreedyBot)
