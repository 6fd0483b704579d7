"""Training environments: classic Wizard and Wizard Extreme as PettingZoo AEC games
(``pip install 'wizard-arena[train]'``; ``docs/training.md``)::

    from arena.envs import wizard_v0, wizard_extreme_v0
    env = wizard_v0.env(players=4, bidding="hidden")

Each steps the engine directly and observes a seat through
:mod:`arena.wire.encoding`, from the same observation the referee sends a bot. Nothing
in the arena imports this package, and ``import arena`` does not load it (nor
PettingZoo, Gymnasium or NumPy).
"""

from arena.envs import wizard_extreme_v0, wizard_v0

__all__ = ["wizard_v0", "wizard_extreme_v0"]
