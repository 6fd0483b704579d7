"""A bot that counts its winners and plays to make exactly its bid.

Classic: every card gets a chance of winning a trick (Wizards, high trumps, side-suit
aces and kings, less with more players and longer rounds); the bid is the one with the
best expected score under that distribution. In play it wins cheaply while it still
needs tricks and ducks (its most dangerous losing card, Jesters last) once it has them.
A turned-up Wizard makes it choose its longest/strongest suit as trump.

Extreme: tokens per colour from the same kind of estimate (a spare token costs 2, a
trick without one 3), the destroyer when the hand is hard to predict, wins only the
tricks it can pay for and returns the token it is least likely to need.

The card logic lives in sample_bots/strategy.py.
"""

from __future__ import annotations

from typing import Any

from arena.sdk import Bot, ClassicObservation, ExtremeObservation, Observation, run
from sample_bots import strategy


class HeuristicBot(Bot):
    name = "heuristic"
    version = "1.0"

    def bid(self, obs: ClassicObservation, options: list[int]) -> int:
        return strategy.classic_bid(obs, options)

    def play(self, obs: Observation, options: list[str]) -> str:
        if obs["variant"] == "classic":
            return strategy.classic_play(obs, options)
        return strategy.extreme_play(obs, options)

    def trump(self, obs: ClassicObservation, options: list[str]) -> str:
        return strategy.classic_trump(obs, options)

    def predict(self, obs: ExtremeObservation) -> dict[str, Any]:
        return strategy.extreme_predict(obs)

    def pay(self, obs: ExtremeObservation, options: list[str]) -> str:
        return strategy.extreme_pay(obs, options)


if __name__ == "__main__":
    run(HeuristicBot)
