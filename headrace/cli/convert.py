"""``headrace convert``: common dataset formats to MindRecord, from the command line.

``main(argv)`` takes the arguments after ``convert``; it returns the process exit status (0 done,
1 the conversion failed, 2 bad usage). Examples::

    headrace convert cifar10 cifar-10-batches-py out/cifar10.mindrecord
    headrace convert mnist mnist/ out/mnist --partitions 4
    headrace convert imagenet labels.txt train/ out/imagenet.mindrecord
    headrace convert csv data.csv out/data.mindrecord --columns id score
    headrace convert tfrecord data.tfrecord out/data.mindrecord --feature image:string \\
        --feature label:int64 --feature box:float32:4 --bytes-field image
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="headrace convert", description="Convert a dataset to MindRecord files.")
    sub = p.add_subparsers(dest="kind", required=True)
    for kind, what in (("cifar10", "CIFAR-10 python batches (data_batch_*, test_batch)"),
                       ("cifar100", "CIFAR-100 python batches (train, test)")):
        c = sub.add_parser(kind, help=f"{what} -> DEST and DEST_test")
        c.add_argument("source", help="folder of the batch files")
        c.add_argument("destination", help="MindRecord file to write (DEST_test gets the test split)")
        c.add_argument("--fields", nargs="+", metavar="FIELD", help="fields to index")
    m = sub.add_parser("mnist", help="MNIST *-ubyte(.gz) files -> DEST_train.mindrecord, DEST_test.mindrecord")
    m.add_argument("source", help="folder of the MNIST files")
    m.add_argument("destination", help="path prefix of the MindRecord files")
    m.add_argument("--partitions", type=int, default=1, help="files per split (default 1)")
    i = sub.add_parser("imagenet", help="class folders of JPEG files listed in a map file -> DEST")
    i.add_argument("map_file", help="lines of '<class folder> <label>'")
    i.add_argument("image_dir", help="folder holding the class folders")
    i.add_argument("destination", help="MindRecord file to write")
    i.add_argument("--partitions", type=int, default=1, help="number of output files (default 1)")
    c = sub.add_parser("csv", help="a CSV file with a header line -> DEST")
    c.add_argument("source", help="the CSV file")
    c.add_argument("destination", help="MindRecord file to write")
    c.add_argument("--columns", nargs="+", metavar="COLUMN", help="columns to keep (default: all)")
    c.add_argument("--partitions", type=int, default=1, help="number of output files (default 1)")
    t = sub.add_parser("tfrecord", help="a TFRecord file of tf.train.Example records -> DEST")
    t.add_argument("source", help="the TFRecord file")
    t.add_argument("destination", help="MindRecord file to write")
    t.add_argument("--feature", action="append", required=True, metavar="NAME:DTYPE[:N]",
                   help="a feature to convert: dtype string/int64/float32/..., N values (default: a scalar)")
    t.add_argument("--bytes-field", action="append", default=None, metavar="NAME",
                   help="a string feature to store as raw bytes (e.g. encoded images)")
    return p


def _features(specs: Sequence[str]):
    from headrace.mindrecord import FixedLenFeature  # noqa: PLC0415 - keep `headrace --help` fast
    out = {}
    for spec in specs:
        parts = spec.split(":")
        if len(parts) not in (2, 3) or not parts[0] or not parts[1]:
            raise ValueError(f"--feature {spec!r} should be NAME:DTYPE or NAME:DTYPE:N.")
        shape = []
        if len(parts) == 3:
            try:
                shape = [int(parts[2])]
            except ValueError:
                raise ValueError(f"--feature {spec!r}: N must be an integer.") from None
        out[parts[0]] = FixedLenFeature(shape, parts[1])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``headrace convert <kind> ...``; see the module docstring."""
    try:
        args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    from headrace import mindrecord as mr  # noqa: PLC0415 - keep `headrace --help` fast
    try:
        if args.kind == "cifar10":
            mr.Cifar10ToMR(args.source, args.destination).transform(args.fields)
        elif args.kind == "cifar100":
            mr.Cifar100ToMR(args.source, args.destination).transform(args.fields)
        elif args.kind == "mnist":
            mr.MnistToMR(args.source, args.destination, args.partitions).transform()
        elif args.kind == "imagenet":
            mr.ImageNetToMR(args.map_file, args.image_dir, args.destination, args.partitions).transform()
        elif args.kind == "csv":
            mr.CsvToMR(args.source, args.destination, args.columns, args.partitions).transform()
        else:
            mr.TFRecordToMR(args.source, args.destination, _features(args.feature), args.bytes_field).transform()
    except Exception as e:  # noqa: BLE001 - any failure is reported, not dumped as a traceback
        print(f"headrace convert {args.kind}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"headrace convert {args.kind}: wrote {args.destination}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
