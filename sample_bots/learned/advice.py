"""The heuristic bot's answer as an input of the learned bot's network ("advice").

The learned bot's network reads, beside the observation, which action the heuristic bot
(``sample_bots/strategy.py``, a few integer operations a card) would take: it then learns
where the search bot answers otherwise, rather than the whole game from scratch. A
prediction's advice is the heuristic's step at each point of its own steps, none after
a step it would not take. The inference network, which scores rivals' decisions in
thousands of worlds a second, reads no advice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena.sdk import ask
from arena.wire.encoding import NO_PENDING, Pending, legal_indices
from engine import PREDICT, Prediction
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.learned.steps import prediction_steps

_HEURISTIC = HeuristicBot()   # deterministic: its strategy draws no random numbers


def advice(obs: Mapping[str, Any], options: Sequence[Any] | None) -> dict[Pending, int]:
    """The heuristic's action index for the decision of ``obs``, by prediction steps so far
    (a decision other than a prediction: one entry, for no steps).

    >>> from engine import GameConfig, new_game
    >>> game = new_game(GameConfig(players=4, seed=3, rounds=3))
    >>> seat = game.to_act()[0]
    >>> advice(game.observe(seat), game.legal_actions(seat))
    {(): 0}
    """
    answer = ask(_HEURISTIC, str(obs["decision"]), dict(obs), None if options is None else list(options))
    if obs["decision"] == PREDICT:
        return dict(prediction_steps(obs, Prediction.from_json(answer)))
    (index,) = legal_indices(obs, [answer])
    return {NO_PENDING: index}
