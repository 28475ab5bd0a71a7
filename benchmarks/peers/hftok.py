"""Runner for HF tokenizers' own batch encode on the text workload (the reference a user would
write by hand): read the reviews, ``encode_batch`` 32 at a time with truncation and padding to 128.

    python -m benchmarks.peers.hftok --workload text --variant encode_batch --workers 2 --data benchmarks/_data
"""
from __future__ import annotations

import os

import numpy as np

from .. import wtext
from ..harness import import_or_unavailable, runner_main, time_epochs


def run(a) -> dict:
    os.environ["RAYON_NUM_THREADS"] = str(max(1, a.workers))
    tokenizers = import_or_unavailable("tokenizers")
    reviews, vocab = wtext.generate(a.data, a.items or wtext.N)
    tok = tokenizers.BertWordPieceTokenizer(vocab, lowercase=True)
    tok.enable_truncation(wtext.MAXLEN)
    tok.enable_padding(length=wtext.MAXLEN, pad_id=0)

    def batches():
        with open(reviews, encoding="utf-8") as f:
            lines = [ln.rstrip("\n") for ln in f]
        for s in range(0, len(lines), wtext.BATCH):
            encs = tok.encode_batch(lines[s:s + wtext.BATCH], add_special_tokens=False)
            yield np.array([e.ids for e in encs], dtype=np.int32)

    res = time_epochs(batches, lambda b: (len(b), 0), a.epochs, a.warmup, wtext.check_batch)
    res["versions"] = {"tokenizers": tokenizers.__version__, "numpy": np.__version__}
    return res


if __name__ == "__main__":
    runner_main(run, __doc__)
