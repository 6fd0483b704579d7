"""The checkout's own pytest settings for the packages' docstring examples
(``--doctest-modules`` over ``engine``, ``arena`` and ``sample_bots``; the tests' fixtures
are in ``tests/conftest.py``).

``arena.envs`` needs the ``train`` extra (PettingZoo, Gymnasium), and
``arena.envs.openspiel`` the ``openspiel`` extra too: without it, those modules are not
collected, unless ``CI`` is set, where a missing extra must fail.
"""

from __future__ import annotations

import importlib.util
import os

collect_ignore_glob: list[str] = []
if not os.environ.get("CI") and importlib.util.find_spec("pettingzoo") is None:
    collect_ignore_glob.append("arena/envs/*")
if not os.environ.get("CI") and importlib.util.find_spec("pyspiel") is None:
    collect_ignore_glob.append("arena/envs/openspiel.py")    # the openspiel extra
