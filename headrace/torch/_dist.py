"""The rank and world size of a ``torch.distributed`` job (1 rank when none is initialised)."""
from __future__ import annotations

import torch.distributed as dist


def torch_shard() -> tuple[int, int]:
    """``(world_size, rank)`` of the default process group, or ``(1, 0)`` without one."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0
