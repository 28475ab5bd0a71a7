"""MindRecord files: MindSpore's ``mindspore.mindrecord`` API (FileWriter, FileReader, MindPage)."""
from .filewriter import FileWriter

__all__ = ["FileWriter"]
