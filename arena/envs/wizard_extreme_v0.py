"""Wizard Extreme as a PettingZoo AEC environment (``docs/training.md``).

    >>> from arena.envs import wizard_extreme_v0
    >>> env = wizard_extreme_v0.env(players=5, rounds=1, destroyer_penalty=6)
    >>> env.reset(seed=1)
    >>> env.agent_selection, int(env.action_space("player_0").n)
    ('player_1', 108)

Options are ``GameConfig``'s fields: ``players`` (3-5, default 4), ``rounds``,
``destroyer_penalty``; and ``render_mode`` (``"ansi"`` or ``None``). A prediction is
several steps of the agent: a token at a time, then ``done``, or ``destroyer``.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv

from arena.envs.aec import WizardEnv, wrap


class raw_env(WizardEnv):  # noqa: N801 - PettingZoo's name for the unwrapped environment
    """Wizard Extreme without PettingZoo's wrappers: an illegal action raises
    :class:`engine.IllegalAction`."""

    variant = "extreme"
    metadata = {"render_modes": ["ansi"], "name": "wizard_extreme_v0", "is_parallelizable": False}


def env(**options: Any) -> AECEnv:
    """Wizard Extreme with PettingZoo's usual wrappers; ``env()`` is the 4-player game."""
    return wrap(raw_env(**options))
