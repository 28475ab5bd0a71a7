"""MindSpore's single-node cache tutorial, in our own words, run with ``import headrace.dataset``.

The script below follows the tutorial's steps as a user runs them: start the cache with
``cache_admin --start``, take a session id from ``cache_admin -g``, cache a CIFAR-10 source, look
at ``cache_admin --list_sessions``, cache the output of a ``Resize`` map and read it for two
epochs, read the statistics, then destroy the session and stop the cache. Only its first import
names the package (``{module}``); ``cache_admin`` on PATH is headrace's alias.
"""
import os
import stat
import subprocess
import sys
import textwrap

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = textwrap.dedent("""
    import {module}.dataset as ds
    import {module}.dataset.vision as vision
    import subprocess, sys

    def admin(*args):
        return subprocess.getoutput("cache_admin " + " ".join(args))

    print(admin("--start").splitlines()[0])
    session_id = int(admin("-g").split()[-1])
    dataset_dir = sys.argv[1]

    # 1. cache the rows a source reads
    leaf_cache = ds.DatasetCache(session_id=session_id, size=0, spilling=False)
    data = ds.Cifar10Dataset(dataset_dir=dataset_dir, num_samples=4, shuffle=False, num_parallel_workers=1,
                             cache=leaf_cache)
    for i, row in enumerate(data.create_dict_iterator(num_epochs=1, output_numpy=True)):
        print("leaf", i, row["image"].shape, int(row["label"]))
    print(admin("--list_sessions"))

    # 2. cache what a map made
    map_cache = ds.DatasetCache(session_id=session_id, size=0, spilling=False)
    data = ds.Cifar10Dataset(dataset_dir=dataset_dir, num_samples=5, shuffle=False, num_parallel_workers=1)
    data = data.map(operations=vision.Resize((224, 224)), input_columns=["image"], cache=map_cache)
    for epoch in range(2):
        for i, row in enumerate(data.create_dict_iterator(num_epochs=1, output_numpy=True)):
            print("map", epoch, i, row["image"].shape, row["image"].dtype, int(row["label"]))
    stat = map_cache.get_stat()
    print("stat", stat.num_mem_cached, stat.num_disk_cached, stat.avg_cache_sz)

    print(admin("--destroy_session", str(session_id)))
    print(admin("--stop"))
""")


def _cifar(folder, n=6):
    folder.mkdir()
    rng = np.random.default_rng(0)
    with open(folder / "data_batch_1.bin", "wb") as f:
        for i in range(n):
            f.write(bytes([i % 10]) + rng.integers(0, 256, 3072, dtype=np.uint8).tobytes())
    return folder


def test_tutorial_runs_with_only_the_import_changed(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "cache_admin"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m headrace.cli.cache \"$@\"\n")
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, PYTHONPATH=ROOT, PATH=f"{bin_dir}:{os.environ['PATH']}",
               HEADRACE_CACHE_SHM=str(tmp_path / "shm"), HEADRACE_CACHE_SPILL=str(tmp_path / "spill"))
    data = _cifar(tmp_path / "cifar")
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(module="headrace"), str(data)], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Cache ready on this host")
    assert [ln for ln in lines if ln.startswith("leaf")] == [f"leaf {i} (32, 32, 3) {i}" for i in range(4)]
    listing = lines[lines.index("Listing sessions for the cache on port 50052") + 3].split()
    assert listing[2:4] == ["4", "0"] and 3072 < int(listing[4]) < 3072 + 200  # rows, disk rows, bytes a row
    maps = [ln for ln in lines if ln.startswith("map")]
    assert maps == [f"map {e} {i} (224, 224, 3) uint8 {i}" for e in range(2) for i in range(5)]
    stat_line = next(ln for ln in lines if ln.startswith("stat")).split()
    assert stat_line[1:3] == ["5", "0"] and int(stat_line[3]) >= 224 * 224 * 3
    assert "Drop session successfully for server on port 50052" in lines
    assert lines[-1] == "Cache on this host stopped: 0 session(s) and their rows removed."
    assert not (tmp_path / "shm").exists()
