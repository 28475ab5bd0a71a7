"""The status codes MindSpore's MindRecord API returns (``SUCCESS`` / ``FAILED``)."""
from enum import Enum, IntEnum

__all__ = ["FAILED", "MSRStatus", "SUCCESS"]


class MSRStatus(IntEnum):
    """Status codes MindSpore's MindRecord API exposes as ``SUCCESS`` and ``FAILED``."""

    SUCCESS = 0
    FAILED = 1

    __str__ = Enum.__str__


SUCCESS = MSRStatus.SUCCESS
FAILED = MSRStatus.FAILED
