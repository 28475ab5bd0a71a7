"""Audio filters and effects: the biquad family, LFilter / Filtfilt and the sox-style effects."""
from __future__ import annotations

__all__: list[str] = []
