"""The benchmark data generators are deterministic and follow the spec's shapes."""
import hashlib
import os
import random

import numpy as np
import pytest

from benchmarks import w1, w2, w3


def synthetic_photos():
    rng = np.random.default_rng(0)
    sizes = [(512, 512), (300, 451), (400, 600), (427, 640), (500, 741), (872, 1000), (600, 600),
             (512, 512)]
    return [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in sizes]


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_w1_is_the_spec_arrays_and_reproducible(tmp_path):
    for d in ("a", "b"):
        w1.generate(str(tmp_path / d))
    for name in ("data.npy", "labels.npy"):
        assert _digest(tmp_path / "a" / "w1" / name) == _digest(tmp_path / "b" / "w1" / name)
    src = w1.load_source(str(tmp_path / "a"), 0)
    assert len(src) == w1.N
    x, y = src[1001]
    assert x.dtype == np.float32 and x.shape == (16,)
    assert y.shape == () and y.dtype == np.int32 and int(y) == 1
    first = np.random.default_rng(1).standard_normal((2, 16), dtype=np.float32)
    np.testing.assert_array_equal(src[1][0], first[1])


def test_w2_image_bytes_depend_only_on_index_and_photo():
    photo = synthetic_photos()[1]   # smaller than 500x375: the upscaling branch
    a, wa, ha = w2.make_jpeg(photo, 7)
    b, wb, hb = w2.make_jpeg(photo, 7)
    assert a == b and (wa, ha) == (wb, hb) and (wa, ha) in ((500, 375), (375, 500))
    assert w2.make_jpeg(photo, 15)[0] != a
    assert a[:2] == b"\xff\xd8"


def test_w2_generate_is_reproducible_with_manifest(tmp_path):
    photos = synthetic_photos()
    d1 = w2.generate(str(tmp_path / "a"), 10, photos)
    d2 = w2.generate(str(tmp_path / "b"), 10, photos)
    assert _digest(os.path.join(d1, "all_sha256.txt")) == _digest(os.path.join(d2, "all_sha256.txt"))
    files = w2.manifest(d1)
    assert [lab for _, lab in files] == [i % 8 for i in range(10)]
    assert files[9][0].endswith(os.path.join("jpeg", "c1", "000009.jpg"))
    sha = hashlib.sha256()
    for p, _ in files:
        with open(p, "rb") as f:
            sha.update(f.read())
    with open(os.path.join(d1, "all_sha256.txt")) as f:
        assert f.read().strip() == sha.hexdigest()


def test_w3_payloads_are_the_rng_stream():
    a, b = w3.payloads(3), w3.payloads(5)
    assert a == b[:3] and all(len(p) == w3.RECORD for p in b)
    assert a[1] == (lambda r: (r.bytes(w3.RECORD), r.bytes(w3.RECORD))[1])(np.random.default_rng(3))


@pytest.mark.parametrize("h,w", [(375, 500), (500, 375), (100, 1000), (1000, 100), (224, 224)])
def test_rrc_box_is_inside_the_image(h, w):
    rng = random.Random(0)
    for _ in range(200):
        y, x, ch, cw = w2.rrc_params(h, w, rng)
        assert 0 <= y and 0 <= x and 0 < ch and 0 < cw and y + ch <= h and x + cw <= w


def test_chains_give_normalized_chw(tmp_path):
    buf, _, _ = w2.make_jpeg(synthetic_photos()[0], 0)
    for chain in (w2.chain_cv2, w2.chain_pil):
        out = chain(buf, random.Random(1))
        assert out.shape == (3, 224, 224) and out.dtype == np.float32
        w2.check_batch(out[None], np.zeros(1))
