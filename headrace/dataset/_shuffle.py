"""MindSpore's ``Shuffle`` modes, and the one place the dataset layer recognises them."""
from __future__ import annotations
import enum
from typing import Any


__all__ = ["Shuffle", "is_shuffle", "shuffle_mode"]


class Shuffle(str, enum.Enum):
    """Shuffle modes.

    ``FALSE``: no shuffle. ``ADAPTIVE``: global up to 100 million rows, partial above. ``GLOBAL``:
    shuffle all rows (and files). ``PARTIAL``: shuffle every million rows. ``FILES``: shuffle the
    file order only. ``INFILE``: keep the file order, shuffle within each file. Samplers over
    random-access sources support ``GLOBAL`` (and ``FALSE`` for ``DistributedSampler``).

    Examples:
        >>> Shuffle("global") is Shuffle.GLOBAL, str(Shuffle.FILES)
        (True, 'Shuffle.FILES')
    """

    FALSE = "false"
    ADAPTIVE = "adaptive"
    GLOBAL = "global"
    PARTIAL = "partial"
    FILES = "files"
    INFILE = "infile"

    def __str__(self) -> str:
        return f"Shuffle.{self.name}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def is_shuffle(value: Any, *names: str) -> bool:
    """True when ``value`` is a ``Shuffle`` member (and, when ``names`` are given, one of them by name).

    The one place the dataset layer recognises the enum.
    """
    return isinstance(value, Shuffle) and (not names or value.name in names)


def shuffle_mode(shuffle: Any) -> str:
    """'global', 'files' or 'false' for a file-based source's ``shuffle`` argument (bool or Shuffle).

    Raises:
        TypeError: If ``shuffle`` is neither.
    """
    if shuffle is None or shuffle is True:
        return "global"
    if shuffle is False:
        return "false"
    if is_shuffle(shuffle):
        return shuffle.value if shuffle.value in ("global", "files") else "false"
    raise TypeError("shuffle must be of boolean or enum of 'Shuffle' values like 'Shuffle.ADAPTIVE' or "
                    "'Shuffle.GLOBAL' or 'Shuffle.PARTIAL' or 'Shuffle.FILES' or 'Shuffle.INFILE'.")


def _as_shuffle(value: Any) -> Shuffle | None:
    """The Shuffle member equal to ``value`` (a member or its string), else None."""
    if isinstance(value, Shuffle):
        return value
    if isinstance(value, str):
        try:
            return Shuffle(value)
        except ValueError:
            return None
    return None
