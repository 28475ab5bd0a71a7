"""DatasetCache's argument checks and the cache rules against MindSpore 2.10 (no server needed:
MindSpore checks these before it connects)."""
from tests.oracles.oracle import run_headrace, run_ms

CASES = [
    "dict(session_id=0)", "dict(session_id=2**32)", "dict(session_id=1.5)", "dict(session_id=True)",
    "dict(session_id=1, size=-1)", "dict(session_id=1, size=1.0)", "dict(session_id=1, size=2**64)",
    "dict(session_id=1, size=True)", "dict(session_id=1, spilling=1)", "dict(session_id=1, hostname=1)",
    "dict(session_id=1, port=80)", "dict(session_id=1, port='1')", "dict(session_id=1, num_connections=0)",
    "dict(session_id=1, prefetch_size=0)", "dict(session_id=1, prefetch_size=2**31)",
]

# Run as written under both libraries (``ds`` bound to each; the module path in an error is MOD).
PROGRAM = """
out = []
for case in INPUTS:
    try:
        ds.DatasetCache(**eval(case))
        out.append(["ok", ""])
    except Exception as e:
        out.append([type(e).__name__, str(e)])
def refused(build):
    try:
        next(build().create_tuple_iterator())
    except Exception as e:
        s = str(e)
        return [type(e).__name__, s[s.find("[ERROR]") + 8:].split(chr(10))[0] if "[ERROR]" in s else s]
    return ["ok", ""]
vision = ds.vision
c = ds.DatasetCache(session_id=1)
out.append(refused(lambda: ds.ImageFolderDataset(INPUTS_DIR).map(vision.RandomHorizontalFlip(), input_columns="image", cache=c)))
out.append(refused(lambda: ds.ImageFolderDataset(INPUTS_DIR).batch(1).map(lambda x: x, input_columns="image", cache=c)))
out.append(refused(lambda: ds.ImageFolderDataset(INPUTS_DIR).repeat(2).map(vision.Decode(), input_columns="image", cache=c)))
out.append(refused(lambda: ds.ImageFolderDataset(INPUTS_DIR, cache=c).map(vision.Decode(), input_columns="image", cache=c)))
try:
    ds.ImageFolderDataset(INPUTS_DIR, cache=1)
except Exception as e:
    out.append([type(e).__name__, str(e).replace("mindspore.dataset.engine.cache_client", "MOD")
                .replace("headrace.dataset.cache", "MOD")])
RESULT = out
"""


def test_checks_and_refusals_match_mindspore(tmp_path, monkeypatch):
    import cv2
    import numpy as np

    monkeypatch.setenv("HEADRACE_CACHE_SHM", str(tmp_path / "shm"))
    monkeypatch.setenv("HEADRACE_CACHE_SPILL", str(tmp_path / "spill"))
    (tmp_path / "img" / "a").mkdir(parents=True)
    cv2.imwrite(str(tmp_path / "img" / "a" / "0.jpg"), np.zeros((8, 8, 3), np.uint8))
    program = PROGRAM.replace("INPUTS_DIR", repr(str(tmp_path / "img")))
    ms = run_ms(program, CASES)
    hr = run_headrace(program, CASES)
    n = len(CASES)
    assert hr[:n] == ms[:n]
    for mine, theirs in zip(hr[n:n + 4], ms[n:n + 4]):  # same type; MindSpore's sentence starts ours
        assert mine[0] == theirs[0] == "RuntimeError"
        assert theirs[1].rstrip(".") in mine[1], (mine, theirs)
    assert hr[-1] == ms[-1]
