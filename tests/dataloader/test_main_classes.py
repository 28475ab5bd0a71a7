"""DataLoader workers returning instances of classes defined in the user's main script: workers
run another ``__main__`` (fork server, spawn), so these come back by name, looked up in the main
process's ``__main__`` (NOTE [ classes of the main script ] in ``_engine/exec/shm.py``). Each test
runs a script as ``__main__`` in a fresh interpreter, as a user would."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

RESULTS = """
import collections, dataclasses, sys
import numpy as np
from headrace.dataset.dataloader import DataLoader, Dataset

P = collections.namedtuple("P", "x name")


@dataclasses.dataclass
class Rec:
    x: int
    tag: str


class Points(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return P(np.int64(i), f"n{i}")


class Records(Dataset):
    def __len__(self):
        return 3

    def __getitem__(self, i):
        return Rec(i, f"r{i}")


if __name__ == "__main__":
    workers = int(sys.argv[1])
    kw = {"num_workers": workers, "multiprocessing_context": sys.argv[2] or None} if workers else {}
    for b in DataLoader(Points(), batch_size=2, **kw):
        print(type(b).__module__, type(b) is P, type(b.x).__name__, b.x.dtype, b.x.tolist(), b.name)
    for r in DataLoader(Records(), batch_size=None, **kw):
        print(type(r).__module__, type(r) is Rec, r)
"""

# what the DataLoader gives without workers: a namedtuple of batched columns (strings as a list),
# as torch's default_collate does, and the dataclass as it is (batch_size=None)
EXPECTED = """\
__main__ True Tensor Int64 [0, 1] ['n0', 'n1']
__main__ True Tensor Int64 [2, 3] ['n2', 'n3']
__main__ True Rec(x=0, tag='r0')
__main__ True Rec(x=1, tag='r1')
__main__ True Rec(x=2, tag='r2')
"""

UNKNOWN = """
import collections, sys
from headrace.dataset.dataloader import DataLoader, Dataset


class Boxes(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        class Box:
            pass
        return Box()


class Made(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return collections.namedtuple("Q", "a")(i)  # a class of "__main__" that only the worker has


if __name__ == "__main__":
    for data in (Boxes(), Made()):
        try:
            print(list(DataLoader(data, batch_size=None, num_workers=1)))
        except Exception as e:
            print(type(e).__name__, str(e).strip().splitlines()[-1])
"""


def run_script(tmp_path, code: str, *args: str) -> str:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, str(script), *args], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("workers, context", [(0, ""), (2, ""), (2, "spawn")])
def test_main_script_namedtuples_and_dataclasses_come_back_as_its_own_classes(tmp_path, workers, context):
    assert run_script(tmp_path, RESULTS, str(workers), context) == EXPECTED


def test_classes_the_main_process_does_not_have_are_named_in_the_error(tmp_path):
    local, made = run_script(tmp_path, UNKNOWN).splitlines()
    assert local == ("PipelineError [ERROR] DataLoader worker 0: a result could not be sent back from the "
                     "worker process: PicklingError: <class '__main__.Boxes.__getitem__.<locals>.Box'> is "
                     "defined inside a function, so its instances cannot be sent between processes: define "
                     "it at the module level of the main script")
    assert made == ("AttributeError a worker process returned an instance of the class __main__.Q, but this "
                    "process's __main__ module has no attribute 'Q': define the class at the module level "
                    "of the main script")
