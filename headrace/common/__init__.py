"""MindSpore-compatible common definitions (data types)."""
from headrace.common import dtype

__all__ = ["dtype"]
