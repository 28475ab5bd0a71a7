"""Argument checks of the MindRecord surface, with MindSpore's exception types and texts."""
from __future__ import annotations

import os
from typing import Any

from ._format.errors import ParamValueError

_FORBIDDEN = set('\\/:*?"<>|`&\';')
MIN_CONSUMER_COUNT = 1


def check_filename(path: Any, arg_name: str = "") -> str:
    """MindSpore's file-name check (``ParamValueError`` with its texts); returns the path."""
    label = "File path" if not arg_name else f"'{arg_name}'"
    if not path:
        raise ParamValueError(f"{label} is not allowed None or empty!")
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise ParamValueError(f"File path: {path} is not string.")
    if path.endswith("/"):
        raise ParamValueError("File path can not end with '/'")
    name = os.path.basename(path)
    if set(name) & _FORBIDDEN:
        raise ParamValueError("File name should not contains \\/:*?\\\"<>|`&;\\'")
    if name.startswith(" ") or name.endswith(" "):
        raise ParamValueError("File name should not start/end with space.")
    return path


def max_consumer_count() -> int:
    return os.cpu_count() or 1


def check_num_consumer(value: Any) -> int:
    """MindSpore's num_consumer check. Like MindSpore, the default (4) is accepted on any machine."""
    if type(value) is int and value == 4:
        return value
    if value is None:
        raise ParamValueError("Parameter num_consumer is None.")
    if not isinstance(value, int):
        raise ParamValueError("Parameter num_consumer is not int.")
    hi = max_consumer_count()
    if value < MIN_CONSUMER_COUNT or value > hi:
        raise ParamValueError(f"Parameter num_consumer: {value} should between {MIN_CONSUMER_COUNT} and {hi}.")
    return value


def check_file_names(file_name: Any) -> list[str] | str:
    """A path or a list of paths, each checked with ``check_filename``."""
    if isinstance(file_name, (list, tuple)):
        if not file_name:
            raise ParamValueError("File path is not allowed None or empty!")
        return [check_filename(f) for f in file_name]
    return check_filename(file_name)


def check_exists(path: str) -> None:
    """MindSpore's existence checks for a data file and its index (``RuntimeError``)."""
    for p in (path, path + ".db"):
        if not os.path.exists(p):
            raise RuntimeError(f"The input: {p} is not exists.")
        if not os.path.isfile(p):
            raise RuntimeError(f"The input: {p} should be a regular file.")
    for p in (path, path + ".db"):  # MindSpore checks both, with the same words
        size = os.path.getsize(p)
        if size < 8:
            raise RuntimeError(f"Invalid file, the size of mindrecord file: {size} is smaller than the lower limit: "
                               f"8.\n Please check file path: {p} and use 'FileWriter' to generate valid mindrecord "
                               "files.")
