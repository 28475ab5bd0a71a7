"""headrace on Ray: MindRecord files as a Ray Data source and sink, headrace op chains in
``map_batches`` with the random draws of a local pipeline, per-rank loaders inside Ray Train
(their state in its checkpoints), and Ray data back into headrace pipelines (``from_ray``).

An optional extra (``pip install headrace[ray]``); ``headrace.dataset`` never imports it.
"""
try:
    import ray.data  # noqa: F401 - the extra's one requirement, checked first for a clear message
except ImportError as _missing:
    raise ImportError("headrace.ray needs Ray Data: pip install 'headrace[ray]' (or 'ray[data]>=2.40').") from _missing

from headrace.ray._from import from_ray
from headrace.ray._map import HeadraceMap, check_compute, map_ops
from headrace.ray._read import MindRecordDatasource, read_mindrecord
from headrace.ray._source import SourceDatasource, read_dataset
from headrace.ray._train import RankLoader, restore_loader, save_loader, train_shard
from headrace.ray._write import MindRecordDatasink

__all__ = ["HeadraceMap", "MindRecordDatasink", "MindRecordDatasource", "RankLoader", "SourceDatasource",
           "check_compute", "from_ray", "map_ops", "read_dataset", "read_mindrecord", "restore_loader", "save_loader",
           "train_shard"]
