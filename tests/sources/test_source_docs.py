"""headrace/dataset/_sources/_docs.py: the shared Args lines of the sources, put in place of their
marker line when a class is defined."""
import inspect

import pytest

import headrace.dataset as ds
from headrace.dataset._sources._docs import SAMPLING_ARGS, with_args, with_sampling_args

DECORATED = ["CMUArcticDataset", "FakeImageDataset", "GTZANDataset", "LJSpeechDataset", "LibriTTSDataset",
             "SpeechCommandsDataset", "TedliumDataset", "YesNoDataset"]
# the sources whose module shares lines of its own (``{read_args}``)
READ_ARGS = {"VOCDataset": "num_samples", "CocoDataset": "num_samples", "MnistDataset": "usage",
             "Cifar10Dataset": "usage", "TextFileDataset": "num_samples", "CSVDataset": "num_samples"}


def documented(doc: str) -> list[str]:
    """The argument names of a docstring's Args section, in order."""
    lines = doc.split("\n")
    args = lines[lines.index("    Args:") + 1:]
    return [line.split()[0] for line in args[:args.index("")] if line.startswith("        ") and
            not line.startswith("         ")]


@pytest.mark.parametrize("name", DECORATED)
def test_help_shows_every_argument_of_the_signature(name):
    cls = getattr(ds, name)
    doc = cls.__doc__
    assert "{sampling_args}" not in doc
    lines = doc.split("\n")
    at = lines.index("        " + SAMPLING_ARGS[0])
    assert lines[at:at + len(SAMPLING_ARGS)] == ["        " + a for a in SAMPLING_ARGS]
    assert documented(doc) == list(inspect.signature(cls).parameters)


@pytest.mark.parametrize("name", sorted(READ_ARGS))
def test_help_shows_every_argument_of_the_signature_with_a_modules_own_lines(name):
    cls = getattr(ds, name)
    doc = cls.__doc__
    assert "{read_args}" not in doc
    assert documented(doc) == list(inspect.signature(cls).parameters)
    first = READ_ARGS[name]
    assert f"\n        {first} (" in doc and "\n        cache (DatasetCache, optional): cache the rows" in doc


def test_the_lines_take_the_markers_indent():
    @with_sampling_args
    class Source:
        """Rows.

        Args:
            path (str): where.
            {sampling_args}

        Examples:
            >>> 1
        """

    lines = Source.__doc__.split("\n")
    assert lines[:5] == ["Rows.", "", "        Args:", "            path (str): where.",
                         "            num_samples (int, optional): Rows to read. Default: None, all."]
    assert lines[4:11] == ["            " + a for a in SAMPLING_ARGS]
    assert lines[11:] == ["", "        Examples:", "            >>> 1", "        "]


def test_a_docstring_without_its_marker_is_refused():
    class NoMarker:
        """Rows.

        Args:
            path (str): where.
        """

    with pytest.raises(ValueError, match=r"the docstring of NoMarker needs one line \{sampling_args\}, it has 0"):
        with_sampling_args(NoMarker)


def test_a_class_without_a_docstring_stays_without_one():
    class Bare:
        pass

    assert with_sampling_args(Bare) is Bare and Bare.__doc__ is None


def test_with_args_puts_its_own_lines_at_its_own_marker():
    put = with_args("extra", ("a (int): one.", "    continued.", "b (str): two."))

    @put
    class Source:
        """Rows.

        Args:
            {extra}
            c (bool): three.
        """

    assert Source.__doc__.split("\n") == ["Rows.", "", "        Args:", "            a (int): one.",
                                            "                continued.", "            b (str): two.",
                                            "            c (bool): three.", "        "]

    class Twice:
        """{extra}

        {extra}
        """

    with pytest.raises(ValueError, match=r"the docstring of Twice needs one line \{extra\}, it has 2"):
        put(Twice)

    class OtherMarker:
        """Args:
            {sampling_args}
        """

    with pytest.raises(ValueError, match=r"the docstring of OtherMarker needs one line \{extra\}, it has 0"):
        put(OtherMarker)
