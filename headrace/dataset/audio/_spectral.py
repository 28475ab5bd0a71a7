"""STFT- and mel-based audio transforms, masking, and the elementwise transforms."""
from __future__ import annotations

__all__: list[str] = []
