"""Rebuilding ``.db`` index files from the data files (``headrace mindrecord reindex``)."""
from __future__ import annotations

import os
import stat

from ._checks import check_filename
from ._format.header import check_same_dataset, read_header, read_header_path, shard_paths
from ._format.index import scan_shard, write_index
from ._format.store import _make_temp

__all__ = ["reindex"]


def reindex(file_name, all_shards=True):
    """Rebuilds the ``.db`` index of a MindRecord data file by walking its pages.

    Use it when a ``.db`` is missing, damaged or belongs to another file. The data file is only
    read; each new index is written under a temporary name and then renamed over the old one.

    Args:
        file_name (str): A data file.
        all_shards (bool, optional): Rebuild the index of every shard of the dataset (found through
            the header), not only of ``file_name``. Default: ``True``.

    Returns:
        list[tuple[str, int]], each rebuilt ``.db`` path with its number of rows.

    Raises:
        ParamValueError: ``file_name`` is invalid.
        RuntimeError: a data file is missing, truncated or damaged (the message names file and row).

    Examples:
        >>> import os, tempfile
        >>> from headrace.mindrecord import FileWriter, FileReader, reindex
        >>> path = os.path.join(tempfile.mkdtemp(), "lost_index.mindrecord")
        >>> w = FileWriter(path); w.add_schema({"x": {"type": "int32"}}); w.write_raw_data([{"x": 7}]); w.commit()
        WriteReport(written=1, dropped=0)
        WriteReport(written=1, dropped=0)
        >>> os.remove(path + ".db")
        >>> [(os.path.basename(p), n) for p, n in reindex(path)]
        [('lost_index.mindrecord.db', 1)]
        >>> [r["x"] for r in FileReader(path).get_next()]
        [7]
    """
    file_name = check_filename(file_name)
    if not isinstance(all_shards, bool):
        raise TypeError(f"Argument all_shards with value {all_shards!r} is not of type [bool], "
                        f"but got {type(all_shards)}.")
    first = read_header_path(file_name)
    paths = shard_paths(file_name, first) if all_shards else [file_name]
    headers = [read_header_path(p) for p in paths]
    check_same_dataset(headers, paths)
    done = []
    for path, header in zip(paths, headers):
        fd = os.open(path, os.O_RDONLY)
        try:
            header = read_header(fd, path)
            index = scan_shard(fd, header, path, header.index_fields)
        finally:
            os.close(fd)
        tfd, tmp = _make_temp(path + ".db")
        os.close(tfd)
        os.unlink(tmp)
        try:
            write_index(tmp, header, os.path.basename(path), index)
            os.chmod(tmp, stat.S_IRUSR | stat.S_IWUSR)
            os.replace(tmp, path + ".db")
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        done.append((path + ".db", len(index)))
    return done
