"""One benchmark configuration: a (workload, system, variant) and the worker counts it runs at.

Its own module so that the workload modules (which declare their configs) and the suite (which
collects them) do not import each other."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    workload: str
    system: str
    variant: str
    workers: tuple[int, ...] = (1, 2)   # (0,) = not applicable / in-process
    items: int = 0                      # W1 rows or W3 records per epoch; 0 = the spec's size
    compare: str | None = None          # headrace variant this row's ratio is taken against
    note: str = ""
