"""Runner for the speech workload in torchaudio 2.11 + torch's DataLoader, in its own venv
(``.cache/bench/torchaudio-venv``: torchaudio's wheel is built against torch 2.11, older than the
benchmark venv's torch). The clips are read with the standard library's ``wave`` (torchaudio.load
now needs TorchCodec); the transforms are torchaudio's, run in the DataLoader's worker processes.

    .cache/bench/torchaudio-venv/bin/python -m benchmarks.peers.tadl --workload speech \
        --variant DataLoader --workers 2 --data benchmarks/_data
"""
from __future__ import annotations

import numpy as np

from .. import wspeech
from ..harness import import_or_unavailable, runner_main, time_epochs


class Clips:
    """Map-style dataset over the clip files: read, then the torchaudio chain."""

    def __init__(self, files, chain, torch):
        self.files, self.chain, self.torch = files, chain, torch

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        path, _word = self.files[i]
        return self.chain(self.torch.from_numpy(wspeech.read_clip(path)))


def run(a) -> dict:
    torch = import_or_unavailable("torch")
    torchaudio = import_or_unavailable("torchaudio")
    if a.workload != "speech":
        raise ValueError(f"torchaudio runs the speech workload, not {a.workload}")
    t = torchaudio.transforms
    chain = torch.nn.Sequential(
        t.MelSpectrogram(sample_rate=wspeech.RATE, n_fft=wspeech.N_FFT, hop_length=wspeech.HOP,
                         n_mels=wspeech.N_MELS),
        t.AmplitudeToDB(), t.TimeMasking(wspeech.TIME_MASK), t.FrequencyMasking(wspeech.FREQ_MASK))
    n = a.items or wspeech.N
    wspeech.generate(a.data, n)
    dataset = Clips(wspeech.files(a.data, n), chain, torch)

    def make_iter():
        return iter(torch.utils.data.DataLoader(dataset, batch_size=wspeech.BATCH, shuffle=True,
                                                num_workers=a.workers, drop_last=True))

    with torch.no_grad():
        res = time_epochs(make_iter, lambda b: (len(b), 0), a.epochs, a.warmup, lambda b: wspeech.check_batch(b.numpy()))
    res["versions"] = {"torch": torch.__version__, "torchaudio": torchaudio.__version__, "numpy": np.__version__}
    return res


if __name__ == "__main__":
    runner_main(run, __doc__)
