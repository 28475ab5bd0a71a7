"""How messages name the settings a user changes.

The engine (and ``_util``) knows its settings by their ``Options`` field names and no surface's
vocabulary; the surface users call registers how they change each setting (``headrace.dataset``
registers ``ds.config.set_worker_timeout({})`` for ``worker_timeout``), and messages that tell the
user what to change format with it (:func:`setting`). Unregistered, a message names the engine
setting itself.
"""
from __future__ import annotations

from typing import Mapping

_CALLS: dict[str, str] = {}


def name_settings(calls: Mapping[str, str]) -> None:
    """Registers, per engine setting, the call that changes it: a format string with ``{}`` where
    the value goes. Registering again replaces a setting's call."""
    _CALLS.update(calls)


def setting(name: str, value: str) -> str:
    """How a user sets the engine setting ``name`` to ``value`` (text for a message)."""
    call = _CALLS.get(name)
    return call.format(value) if call is not None else f"the setting {name} = {value}"
