"""The smallest sensible bot: a uniformly random legal answer to every decision."""

from typing import Any

from arena.sdk import Bot, ClassicObservation, ExtremeObservation, Observation, run


class RandomBot(Bot):
    name = "random"
    version = "1.0"

    def bid(self, obs: ClassicObservation, options: list[int]) -> int:  # ints 0..round
        return self.rng.choice(options)

    def play(self, obs: Observation, options: list[str]) -> str:  # card codes
        return self.rng.choice(options)

    trump = pay = play  # the same rule for suits (trump) and token colours (pay)

    def predict(self, obs: ExtremeObservation) -> dict[str, Any]:
        if obs["destroyer_free"] and self.rng.random() < 0.15:
            return {"destroyer": True}
        # Up to two different colours, one token each, straight from the supply: always legal.
        colours = [c for c in ("red", "yellow", "green", "blue", "purple") if obs["supply"][c] > 0]
        return {"tokens": {c: 1 for c in self.rng.sample(colours, min(len(colours), self.rng.randint(0, 2)))}}


if __name__ == "__main__":
    run(RandomBot)
