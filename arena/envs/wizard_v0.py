"""Classic Wizard as a PettingZoo AEC environment (``docs/training.md``).

    >>> from arena.envs import wizard_v0
    >>> env = wizard_v0.env(players=3, rounds=2, bidding="hidden")
    >>> env.reset(seed=1)
    >>> env.possible_agents, int(env.action_space("player_0").n)
    (['player_0', 'player_1', 'player_2'], 85)

Options are ``GameConfig``'s fields: ``players`` (3-6, default 4), ``rounds``,
``length`` (``"standard"``, ``"amigo"``), ``bidding`` (``"open"``, ``"hidden"``,
``"secret"``), ``plus_minus_one``; and ``render_mode`` (``"ansi"`` or ``None``).
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv

from arena.envs.aec import WizardEnv, wrap


class raw_env(WizardEnv):  # noqa: N801 - PettingZoo's name for the unwrapped environment
    """Classic Wizard without PettingZoo's wrappers: an illegal action raises
    :class:`engine.IllegalAction`."""

    variant = "classic"
    metadata = {"render_modes": ["ansi"], "name": "wizard_v0", "is_parallelizable": False}


def env(**options: Any) -> AECEnv:
    """Classic Wizard with PettingZoo's usual wrappers; ``env()`` is the 4-player game."""
    return wrap(raw_env(**options))
