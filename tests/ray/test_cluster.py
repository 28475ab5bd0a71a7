"""headrace.ray on a Ray cluster of small nodes (``ray.cluster_utils.Cluster``, one machine): a head
without CPUs and two 1-CPU worker nodes, so every read, map and write task runs on a worker node."""
import glob
import os

import numpy as np
import pytest

ray = pytest.importorskip("ray")

import headrace.dataset as ds
from headrace.dataset import vision
from headrace.ray import MindRecordDatasink, map_ops, read_mindrecord


def test_rows_orders_and_draws_on_two_nodes(cluster, mr_set, tmp_path):
    assert ray.cluster_resources()["CPU"] == 2
    ops = [vision.RandomHorizontalFlip(0.5), vision.RandomVerticalFlip(0.5)]
    data = map_ops(read_mindrecord(mr_set, ["label", "vec", "data"], seed=9, rows_per_task=6), ops, "vec",
                   batch_size=5)
    ours = [data.take_all() for _ in range(2)]
    ds.config.set_seed(9)
    it = ds.MindDataset(mr_set, ["label", "vec", "data"]).map(ops, "vec").create_dict_iterator(
        output_numpy=True, num_epochs=2)
    for epoch in range(2):
        theirs = list(it)
        assert [r["label"] for r in ours[epoch]] == [int(r["label"]) for r in theirs]
        assert all(np.array_equal(a["vec"], b["vec"]) and a["data"] == b["data"].tobytes()
                   for a, b in zip(ours[epoch], theirs))
    # the datasink's parts, written on the worker nodes, hold the rows once
    read_mindrecord(mr_set, ["label", "name"], shuffle=False, rows_per_task=6).write_datasink(
        MindRecordDatasink(str(tmp_path), "c", header_size=1 << 14, page_size=1 << 15))
    files = sorted(glob.glob(os.path.join(tmp_path, "c-*.mindrecord")))
    labels = [int(r["label"]) for r in ds.MindDataset(files, shuffle=False).create_dict_iterator(output_numpy=True)]
    assert labels == list(range(50))


def test_the_pre_flight_counts_the_clusters_cpus(cluster, mr_set):
    with pytest.raises(ValueError, match="the actor pool would hold 2 of the cluster's 2 CPUs"):
        map_ops(read_mindrecord(mr_set), [vision.HWC2CHW()], "vec", compute=ray.data.ActorPoolStrategy(size=2))
