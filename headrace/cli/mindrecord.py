"""``headrace mindrecord``: maintenance of MindRecord files (``reindex``, ``info``, ``verify``,
``checksum``).

``main(argv)`` takes the arguments after ``mindrecord``; it returns the process exit status.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

__all__ = ["main"]


def _dataset_command(sub: argparse._SubParsersAction, name: str, summary: str, description: str, files_help: str,
                     only_help: str) -> None:
    """A command over datasets named by one data file each (FILE...), all their shards unless ``--only``."""
    c = sub.add_parser(name, help=summary, description=description)
    c.add_argument("files", nargs="+", metavar="FILE", help=files_help)
    c.add_argument("--only", action="store_true", help=only_help)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="headrace mindrecord", description="Maintain MindRecord files.")
    sub = p.add_subparsers(dest="command", required=True)
    _dataset_command(sub, "reindex", "rebuild the .db index of MindRecord data files from their pages",
                     "Rebuild the .db index files of MindRecord datasets by walking the data files. "
                     "The data files are only read; each index is replaced atomically.",
                     "a data file of each dataset to reindex",
                     "rebuild only the named files' indexes, not those of their sibling shards")
    i = sub.add_parser("info", help="print the header of MindRecord data files as JSON")
    i.add_argument("files", nargs="+", metavar="FILE")
    _dataset_command(sub, "verify", "check MindRecord data files and their .db indexes in full",
                     "Check every byte the format allows: header sizes, SQLite's integrity check of "
                     "each .db, the .db's row table against the data file's pages, every record "
                     "decoded and checked, indexed values in the .db against the records. The format "
                     "has no checksum: a changed byte inside a bytes field or a float array cannot be "
                     "seen, unless the file has headrace's CRC sidecar (FILE.crc, written by "
                     "FileWriter(..., checksum=True) or `headrace mindrecord checksum`), which is "
                     "checked first and names damaged pages and their rows. Exit status 0 when every "
                     "file passes, 1 otherwise.",
                     "a data file of each dataset to verify", "verify only the named files, not their sibling shards")
    _dataset_command(sub, "checksum", "write CRC sidecars (FILE.crc) for existing MindRecord files",
                     "Verify MindRecord files in full, then record the CRC-32C of their header, "
                     "pages and .db in a sidecar FILE.crc that `verify` checks from then on. A data "
                     "file that has a sidecar already must still match it (only its .db may differ: "
                     "one rebuilt by `reindex` is recorded). The data files are not changed, so "
                     "MindSpore reads them as before. Exit status 0 when every file got its sidecar.",
                     "a data file of each dataset", "only the named files, not their sibling shards")
    return p


def _checksum(path: str, all_shards: bool) -> list[str]:
    """``headrace mindrecord checksum`` on one dataset; the sidecars written."""
    from headrace.mindrecord._format import integrity  # noqa: PLC0415
    from headrace.mindrecord._format.header import read_header_path, shard_paths  # noqa: PLC0415
    from headrace.mindrecord._format.verify import verify_dataset  # noqa: PLC0415
    files = shard_paths(path, read_header_path(path)) if all_shards else [path]
    for f in files:
        if integrity.has_sidecar(f):
            integrity.check_sidecar(f, db=False)
    verify_dataset(files, load_dataset=False, sidecar=False)
    return [integrity.write_sidecar(f) for f in files]


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``headrace mindrecord <command> ...``; returns 0 on success, 1 if a file failed, 2 on usage errors."""
    from headrace.mindrecord import reindex, verify  # noqa: PLC0415 - keep `headrace --help` fast
    from headrace.mindrecord._format.header import read_header_path  # noqa: PLC0415
    try:
        args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    status = 0
    for f in args.files:
        try:
            if args.command == "reindex":
                for db, rows in reindex(f, all_shards=not args.only):
                    print(f"{db}: {rows} rows")
            elif args.command == "verify":
                for r in verify(f, all_shards=not args.only):
                    crc = "; CRC sidecar matches" if r.checksum else ""
                    print(f"{r.file}: OK ({r.rows} rows, {r.pages} pages, {r.bytes} bytes checked{crc})")
            elif args.command == "checksum":
                for side in _checksum(f, not args.only):
                    print(f"{side}: written")
            else:
                h = read_header_path(f)
                info = {"file": os.path.abspath(f), "version": h.version, "rows": h.num_rows,
                        "header_size": h.header_size, "page_size": h.page_size, "pages": len(h.pages),
                        "shard_id": h.shard_id, "shard_addresses": h.shard_addresses,
                        "schema": h.schema.content(), "desc": h.schema.desc, "index_fields": h.index_fields}
                print(json.dumps(info, ensure_ascii=False))
        except (OSError, RuntimeError, ValueError, TypeError) as exc:
            detail = getattr(exc, "detail", None) or str(exc)   # MindRecord errors: the line without the banner
            print(f"headrace mindrecord {args.command}: {f}: {detail}", file=sys.stderr)
            for note in getattr(exc, "__notes__", ()):
                print(f"  {note}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
