"""python_multiprocessing picks worker processes for sources, maps and per_batch_map (as in MindSpore)."""
import os

import numpy as np

import headrace.dataset as ds


class Pids:
    def __getitem__(self, i):
        return np.array(os.getpid()), np.array(i)

    def __len__(self):
        return 20


def pids_and_order(d):
    rows = list(d.create_tuple_iterator(output_numpy=True))
    return {int(r[0]) for r in rows}, [int(r[1]) for r in rows]


def test_generator_source_reads_in_processes_by_default_with_workers():
    pids, order = pids_and_order(ds.GeneratorDataset(Pids(), ["pid", "i"], shuffle=False, num_parallel_workers=2))
    assert os.getpid() not in pids and len(pids) == 2
    assert order == list(range(20))


def test_generator_source_threads_when_multiprocessing_is_off_and_inline_with_one_worker():
    pids, order = pids_and_order(ds.GeneratorDataset(Pids(), ["pid", "i"], shuffle=False, num_parallel_workers=2,
                                                     python_multiprocessing=False))
    assert pids == {os.getpid()} and order == list(range(20))
    pids, _ = pids_and_order(ds.GeneratorDataset(Pids(), ["pid", "i"], shuffle=False))
    assert pids == {os.getpid()}


def test_per_batch_map_in_processes():
    d = ds.NumpySlicesDataset(list(range(8)), shuffle=False).batch(
        2, per_batch_map=lambda x, info: ([np.array(os.getpid())] * len(x),), num_parallel_workers=2,
        python_multiprocessing=True)
    pids = {int(v) for r in d.create_tuple_iterator(output_numpy=True) for v in r[0]}
    assert os.getpid() not in pids
