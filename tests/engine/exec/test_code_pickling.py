"""Worker processes report a user function's own file and line (issue 38, item 2).

cloudpickle 3.1.3 sends code with ``co_filename = "<dynamic-code>"``; headrace's pickler sends code
objects itself (NOTE [ code objects keep their file and lines ] in ``_util/pickling.py``), so the
result does not depend on the cloudpickle version installed.
"""
from __future__ import annotations

import linecache
import os
import pickle
import subprocess
import sys
import textwrap

import pytest

from headrace._engine.exec.launch import dumps_program
from headrace._util.pickling import rebuild_code, reduce_code

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

CELL = "def cell_fn(x):\n    y = x + 1\n    raise ValueError('bad row in cell %d' % y)\n"


def _cell_function(filename: str):
    linecache.cache[filename] = (len(CELL), None, CELL.splitlines(True), filename)
    ns: dict = {}
    exec(compile(CELL, filename, "exec"), ns)
    return ns["cell_fn"]


def test_a_code_object_keeps_its_filename_line_table_and_nested_code():
    def outer(a):
        def inner(b):
            return b * 2
        return inner(a) + 1

    code = pickle.loads(pickle.dumps(reduce_code(outer.__code__)[1]))
    rebuilt = rebuild_code(*code)
    assert rebuilt == outer.__code__
    assert rebuilt.co_filename == __file__
    assert list(rebuilt.co_lines()) == list(outer.__code__.co_lines())


def test_code_of_a_file_that_is_not_on_disk_brings_its_lines_into_the_receivers_linecache():
    name = "<ipython-input-3-test-code-pickling>"
    fn = _cell_function(name)
    _, (data, lines) = reduce_code(fn.__code__)
    assert lines == CELL.splitlines(True)
    del linecache.cache[name]
    rebuild_code(data, lines)
    assert linecache.getline(name, 3) == "    raise ValueError('bad row in cell %d' % y)\n"
    # a file on disk is read there: no lines travel
    assert reduce_code(test_a_code_object_keeps_its_filename_line_table_and_nested_code.__code__)[1][1] is None


def test_the_program_pickler_sends_a_by_value_function_with_its_own_filename():
    fn = _cell_function("<ipython-input-4-test-code-pickling>")
    stream, bufs = dumps_program({"f": fn}, "test")
    got = pickle.loads(stream, buffers=bufs)["f"]
    assert got.__code__.co_filename == "<ipython-input-4-test-code-pickling>"
    with pytest.raises(ValueError, match="bad row in cell 2"):
        got(1)


SCRIPT = textwrap.dedent('''
    import linecache, sys
    import numpy as np
    import headrace.dataset as ds
    CELL = {cell!r}
    linecache.cache["<ipython-input-7-x>"] = (len(CELL), None, CELL.splitlines(True), "<ipython-input-7-x>")
    ns = {{}}
    exec(compile(CELL, "<ipython-input-7-x>", "exec"), ns)
    def script_fn(x):
        if int(x) == 3:
            raise KeyError("boom in script")
        return x
    fn = script_fn if sys.argv[1] == "script" else ns["cell_fn"]
    d = ds.GeneratorDataset([(np.array(i),) for i in range(6)], ["a"], shuffle=False).map(
        fn, ["a"], num_parallel_workers=2, python_multiprocessing=True)
    try:
        list(d.create_tuple_iterator(output_numpy=True))
    except Exception as e:
        print(str(e))
''')


@pytest.mark.parametrize("kind", ["script", "cell"])
def test_a_map_that_raises_in_a_worker_process_names_the_users_file_and_line(tmp_path, kind):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(cell=CELL))
    res = subprocess.run([sys.executable, str(script), kind], capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    if kind == "script":
        assert f'File "{script}", line 11, in script_fn\n    raise KeyError("boom in script")' in res.stdout, res.stdout
    else:
        assert ('File "<ipython-input-7-x>", line 3, in cell_fn\n'
                "    raise ValueError('bad row in cell %d' % y)") in res.stdout, res.stdout
    assert "<dynamic-code>" not in res.stdout
