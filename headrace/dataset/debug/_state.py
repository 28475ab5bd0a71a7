"""Debug mode's state (``ds.config.set_debug_mode``): whether it is on, the hooks, and a
generation number that changes with every call, so that datasets rebuild their plans (a map
in debug mode runs its operations with hooks between them)."""
from __future__ import annotations

from typing import Any

enabled = False
hooks: list[Any] = []      # the hook list of the last set_debug_mode call (the default hook when None)
generation = 0             # bumped by every set_debug_mode call


def configure(flag: bool, hook_list: list[Any]) -> None:
    global enabled, hooks, generation
    enabled, hooks = flag, list(hook_list)
    generation += 1


def reset() -> None:
    """Back to the defaults (tests, ``config._reset``)."""
    global enabled, hooks, generation
    enabled, hooks = False, []
    generation += 1
