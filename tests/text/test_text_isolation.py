"""headrace.dataset.text without its optional libraries, and tokenizers in process workers.

Both run in a subprocess with a hard timeout: the first hides the libraries from the import system,
the second must never hang on a tokenizer's thread pool after a fork."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPTIONAL = ("icu", "regex", "tokenizers", "sentencepiece")


def _run(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def test_import_needs_no_optional_library_and_ops_name_the_extra():
    proc = _run(f"""
        import sys
        for name in {OPTIONAL!r}:
            sys.modules[name] = None  # makes 'import name' fail
        import headrace.dataset as ds
        from headrace.dataset import text
        assert ds.text is text
        import numpy as np
        # ops with no optional dependency work
        assert text.WhitespaceTokenizer(True)("a b")[0].tolist() == ["a", "b"]
        assert text.Vocab.from_list(["a"]).vocab() == {{"a": 0}}
        assert text.NormalizeUTF8()("\\uff21").item() == "A"
        for make in (text.CaseFold, lambda: text.RegexReplace("a", "b"), lambda: text.BasicTokenizer(),
                     lambda: text.UnicodeScriptTokenizer(),
                     lambda: text.SentencePieceTokenizer("m.model", text.SPieceTokenizerOutType.INT)):
            try:
                make()
            except ImportError as e:
                assert "pip install headrace[text]" in str(e), str(e)
            else:
                raise AssertionError("no ImportError")
        print("OK")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "OK"


def test_importing_headrace_loads_no_optional_library():
    proc = _run(f"""
        import sys
        import headrace.dataset
        from headrace.dataset import text
        print(sorted(m for m in {OPTIONAL!r} if m in sys.modules))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_bert_in_process_workers_after_eager_use():
    pytest.importorskip("tokenizers")
    pytest.importorskip("regex")
    proc = _run("""
        import numpy as np
        import headrace.dataset as ds
        from headrace.dataset import text
        vocab = text.Vocab.from_list(["[UNK]", "hello", "world", "##s", "!"])
        bert = text.BertTokenizer(vocab, lower_case=True)
        assert bert("Hello worlds!").tolist() == ["hello", "world", "##s", "!"]   # eager: HF loaded
        rows = ["Hello world %d!" % i for i in range(64)]
        d = ds.GeneratorDataset([(np.array(r),) for r in rows], ["t"], shuffle=False)
        d = d.map([bert, text.Lookup(vocab, "[UNK]")], "t", num_parallel_workers=2,
                  python_multiprocessing=True)
        out = [r["t"].tolist() for r in d.create_dict_iterator(output_numpy=True, num_epochs=1)]
        assert len(out) == 64 and out[0] == [1, 2, 0, 4], out[:2]
        print("OK")
    """, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "OK"
    assert "TOKENIZERS_PARALLELISM" not in proc.stderr and "forked" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("preset", [None, "true"])
def test_a_fork_after_bert_used_hf_prints_no_tokenizers_warning_and_keeps_the_users_setting(preset):
    # HF's encode_batch (run without the GIL) marks HF's thread pool as used; a plain fork
    # (torch's DataLoader workers, say) then made tokenizers print its "just got forked" warning.
    pytest.importorskip("tokenizers")
    pytest.importorskip("regex")
    env_line = "" if preset is None else f"os.environ['TOKENIZERS_PARALLELISM'] = {preset!r}"
    proc = _run(f"""
        import os, sys
        {env_line}
        from headrace.dataset import text
        vocab = text.Vocab.from_list(["[UNK]", "hello", "world", "##s", "!"])
        bert = text.BertTokenizer(vocab, lower_case=True)
        assert bert("Hello worlds!").tolist() == ["hello", "world", "##s", "!"]
        fused = text.Lookup(vocab, "[UNK]")(bert("Hello worlds!")).tolist()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            seen = os.environ.get("TOKENIZERS_PARALLELISM")
            ok = bert("Hello world").tolist() == ["hello", "world"]
            os.write(w, f"{{seen}} {{ok}}".encode())
            os._exit(0)
        os.close(w)
        child = os.read(r, 100).decode()
        os.waitpid(pid, 0)
        print(child, os.environ.get("TOKENIZERS_PARALLELISM"), fused)
    """, timeout=120)
    assert proc.returncode == 0, proc.stderr
    expected = "false True None" if preset is None else "true True true"
    assert proc.stdout.strip() == expected + " [1, 2, 3, 4]"
    assert "forked" not in proc.stderr and "TOKENIZERS_PARALLELISM" not in proc.stderr, proc.stderr
