"""Build configuration for the optional C extension; everything else is in pyproject.toml.

``headrace._native._jpegregion`` decodes one rectangle of a JPEG with the system libjpeg-turbo
(``jpeglib.h``, ``-ljpeg``; Debian/Ubuntu: ``libjpeg62-turbo-dev`` or ``libjpeg-turbo8-dev``). It is
optional: without a compiler or the headers the build skips it and headrace decodes whole images.
``headrace._native._audiofilter`` runs the audio filters' recurrence in the signal's precision; without
it they run in float64 (within ~1e-4 of MindSpore's float32 output instead of equal to it).
``headrace._native._pixels`` writes Normalize + HWC2CHW (after a flip) of a uint8 image in one pass;
without it OpenCV's split, flip and LUT do the same in three. ``headrace._native._rows`` is the per-row
loop of a stage that reads a source and maps a column; without it the same loop runs in Python.
"""
import os

from setuptools import Extension, setup

# HEADRACE_NO_NATIVE=1 builds without it: a pure-Python wheel (py3-none-any) that any index takes.
native = os.environ.get("HEADRACE_NO_NATIVE", "") in ("", "0")
setup(ext_modules=[
    Extension("headrace._native._jpegregion", ["headrace/_native/_jpegregion.c"],
              libraries=["jpeg"], optional=True),
    # the float32 / float64 IIR recurrence of the audio filters, in MindSpore's order of operations
    Extension("headrace._native._audiofilter", ["headrace/_native/_audiofilter.c"],
              extra_compile_args=["-ffp-contract=off"], optional=True),
    Extension("headrace._native._pixels", ["headrace/_native/_pixels.c"], optional=True),
    Extension("headrace._native._rows", ["headrace/_native/_rows.c"], optional=True),
] if native else [])
