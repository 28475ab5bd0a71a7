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


FRAMEWORKS = ("torch", "jax")
_ARRAYS = {"torch": "torch tensors", "jax": "JAX arrays on the CPU device"}


def adapter_configs(workload: str, base: str) -> list[Config]:
    """headrace's adapter rows over its variant ``base`` of ``workload`` (issue 15), each compared
    with ``base``: the framework arrays through each loader, one iterator or loader read every
    epoch (kept), and loader epochs paired with NumPy ones."""
    def row(variant: str, note: str, workers: tuple[int, ...] = (2,)) -> Config:
        return Config(workload, "headrace", variant, workers, compare=base, note=note)

    return [
        *[row(f"{base} + headrace.{fw}", f"{_ARRAYS[fw]} through headrace.{fw}.Loader (issue 15: adapter overhead)",
              (1, 2) if fw == "torch" else (2,)) for fw in FRAMEWORKS],
        row(f"{base}, kept", "one iterator (num_epochs=-1) read every epoch, as a training loop does"),
        *[row(f"{base} + headrace.{fw}, kept", f"one headrace.{fw}.Loader read every epoch, as a training loop "
              "does (issue 15)") for fw in FRAMEWORKS],
        *paired_configs(workload, base),
    ]


def paired_configs(workload: str, base: str) -> list[Config]:
    """The rows whose epochs go through each loader and through a NumPy iterator in turns."""
    return [Config(workload, "headrace", f"{base} + headrace.{fw}, paired", (2,), compare=base,
                   note=f"epochs through headrace.{fw}.Loader and through a NumPy iterator, in turns in one "
                        "process (issue 15: the adapter's cost as a paired ratio)") for fw in FRAMEWORKS]
