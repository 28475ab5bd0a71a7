"""Debug mode and dataset callbacks against MindSpore 2.10: the same program, its printed hook
output and its callback events, on both sides (issue 16)."""
from __future__ import annotations

import textwrap


from tests.oracles.oracle import run_ms

# The program: ``ds`` and ``debug`` / ``callback`` are the module under test; RESULT is compared.
DEBUG_PROGRAM = textwrap.dedent('''
    import contextlib, io
    import numpy as np
    out = io.StringIO()
    class Rec(debug.DebugHook):
        def compute(self, *args):
            print("rec", self.prev_op_name, self.is_first_op, len(args), len(args[0]), flush=True)
            return args
    def plus1(x):
        return x + 1
    results = []
    with contextlib.redirect_stdout(out):
        ds.config.set_seed(3)
        for hooks in (None, [debug.PrintDataHook()], [Rec(), debug.PrintMetaDataHook()]):
            ds.config.set_debug_mode(True, hooks)
            d = ds.NumpySlicesDataset({"a": [[1, 2, 3], [4, 5, 6]], "b": [7, 8]}, shuffle=False)
            d = d.map([plus1, ds.transforms.TypeCast(np.float32)], input_columns=["a"])
            d = d.map([lambda x, y: (x + 1, y), lambda x, y: (x * 2, y, x)],
                      input_columns=["a", "b"], output_columns=["p", "q", "r"])
            d = d.map(Rec(), input_columns=["q"])
            results.append([[c.tolist() for c in r] for r in d.create_tuple_iterator(output_numpy=True)])
        ds.config.set_debug_mode(False)
    RESULT = (out.getvalue().splitlines(), results)
''')

CALLBACK_PROGRAM = textwrap.dedent('''
    events = []
    class Cb(callback.DSCallback):
        def __init__(self, name, step_size=1):
            super().__init__(step_size)
            self.name = name
        def rec(self, what, c):
            events.append((self.name, what, c.cur_epoch_num, c.cur_step_num_in_epoch, c.cur_step_num))
        def ds_begin(self, c): self.rec("begin", c)
        def ds_epoch_begin(self, c): self.rec("epoch_begin", c)
        def ds_epoch_end(self, c): self.rec("epoch_end", c)
        def ds_step_begin(self, c): self.rec("step_begin", c)
        def ds_step_end(self, c): self.rec("step_end", c)
    d = ds.NumpySlicesDataset([1, 2, 3], shuffle=False)
    d = d.map(lambda x: x, callbacks=[Cb("a"), Cb("b", 2)], num_parallel_workers=1)
    d = d.repeat(2)
    d = d.map(lambda x: x, callbacks=Cb("c", 4), num_parallel_workers=1)
    it = d.create_tuple_iterator(num_epochs=2, output_numpy=True)
    rows = [[int(r[0]) for r in it] for _ in range(2)]
    RESULT = (sorted(events), rows)
''')


def run_headrace(program: str, imports: str):
    scope: dict = {}
    exec(imports + program, scope)  # noqa: S102 - the test's own program
    return scope["RESULT"]


def normalise(value):
    return [list(x) if isinstance(x, tuple) else x for x in value] if isinstance(value, list) else value


def test_debug_hooks_print_and_see_what_mindspore_does():
    ms = run_ms("import mindspore.dataset.debug as debug\n" + DEBUG_PROGRAM)
    hr = run_headrace(DEBUG_PROGRAM, "import headrace.dataset as ds\nimport headrace.dataset.debug as debug\n")
    assert hr[0] == ms[0]
    assert hr[1] == ms[1]
    assert len(hr[0]) > 40


def test_callback_events_are_mindspores():
    ms = run_ms("import mindspore.dataset.callback as callback\n" + CALLBACK_PROGRAM)
    hr = run_headrace(CALLBACK_PROGRAM, "import headrace.dataset as ds\nimport headrace.dataset.callback as callback\n")
    assert [list(e) for e in hr[0]] == [list(e) for e in ms[0]]
    assert hr[1] == ms[1] == [[1, 2, 3, 1, 2, 3]] * 2
    assert len(hr[0]) == 59
    # (the interleaving differs: MindSpore's map threads run ahead of the reader)
