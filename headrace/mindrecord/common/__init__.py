"""Shared pieces of the MindRecord surface (``mindspore.mindrecord.common``)."""
from . import exceptions

__all__ = ["exceptions"]
