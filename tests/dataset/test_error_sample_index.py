"""A failing map names the sample the user can look up: the index the source was read at (and its
file), not the row's position in a shuffled epoch (issue 38, item 4)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import headrace.dataset as ds
from headrace._util.errors import PipelineError


class Numbers:
    def __getitem__(self, i):
        return (np.array(i),)

    def __len__(self):
        return 100


def fail_on_37(x):  # module level: worker processes find it by name
    if int(x) == 37:
        raise ValueError("bad item 37")
    return x


def _failed_at(d) -> str:
    with pytest.raises(PipelineError) as info:
        for _ in d.create_tuple_iterator(output_numpy=True):
            pass
    return str(info.value)


@pytest.mark.parametrize("workers,processes", [(1, False), (2, False), (2, True)],
                         ids=["inline", "2 threads", "2 processes"])
@pytest.mark.parametrize("source_workers", [1, 2])
def test_a_map_failing_under_a_shuffle_names_the_source_index(workers, processes, source_workers):
    ds.config.set_seed(3)  # item 37 is not at pass position 37 under this seed
    d = ds.GeneratorDataset(Numbers(), ["a"], shuffle=True, num_parallel_workers=source_workers)
    order = [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)]
    assert order.index(37) != 37
    text = _failed_at(d.map(fail_on_37, ["a"], num_parallel_workers=workers, python_multiprocessing=processes))
    assert re.search(r"map operation: \[PyFunc\] failed at column: \['a'\], sample index: 37\. ", text), text
    assert "ValueError: bad item 37" in text


def test_a_map_over_a_second_map_names_the_source_index():
    ds.config.set_seed(5)
    d = ds.GeneratorDataset(Numbers(), ["a"], shuffle=True).map(lambda x: x, ["a"], num_parallel_workers=2)
    text = _failed_at(d.map(fail_on_37, ["a"], num_parallel_workers=2))
    assert "sample index: 37. " in text, text


def test_a_map_failing_on_an_image_folder_names_the_file(tmp_path):
    for k, name in enumerate(["cat", "dog"]):
        (tmp_path / name).mkdir()
        for j in range(3):
            (tmp_path / name / f"{j}.jpg").write_bytes(bytes([k, j]))  # not decoded here

    def fail_on_dog_1(img):
        if bytes(img) == b"\x01\x01":
            raise ValueError("this one")
        return img

    d = ds.ImageFolderDataset(str(tmp_path), shuffle=True).map(fail_on_dog_1, ["image"], num_parallel_workers=2)
    text = _failed_at(d)
    files = sorted(str(p) for p in tmp_path.rglob("*.jpg"))
    index = files.index(str(tmp_path / "dog" / "1.jpg"))
    assert (f"map operation: [PyFunc] failed. The corresponding data file is: {tmp_path / 'dog' / '1.jpg'}. "
            f"Column: ['image'], sample index: {index}. Error description:") in text, text
