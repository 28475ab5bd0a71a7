"""The exact fusions of W2's chain (issue 42 item 1): a flip before Normalize + HWC2CHW runs as one
op that flips on the way, and the uint8 path goes through a table of normalized values. The fused
ops must give the unfused chain's output bit for bit, draw the same random numbers, and fail as the
unfused ops fail."""
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
import headrace.dataset.vision as v
from headrace._image import convert as cv
from headrace._util import rng
from headrace.dataset.transforms import fuse_ops
from headrace.dataset.vision._ops_convert import NormalizeHWC2CHW

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
FLIPS = [v.RandomHorizontalFlip, v.RandomVerticalFlip, v.HorizontalFlip, v.VerticalFlip]


def run(ops, img, key):
    with rng.sample_key(key):
        for op in ops:
            img = op(img)
        return img, rng.sample_rng().random()  # the next draw: the ops drew as many numbers


def chain(flip):
    return [flip, v.Normalize(MEAN, STD), v.HWC2CHW()]


@pytest.mark.parametrize("flip", FLIPS)
def test_flip_normalize_hwc2chw_fuse_into_one_op(flip):
    op = flip() if flip in (v.HorizontalFlip, v.VerticalFlip) else flip(0.5)
    fused = fuse_ops(chain(op))
    assert len(fused) == 1 and type(fused[0]) is NormalizeHWC2CHW
    assert fused[0].op_name == f"{flip.__name__}+Normalize+HWC2CHW"
    assert fused[0].source_ops[0] is op


def test_w2_chain_fuses_into_two_ops():
    ops = [v.Decode(), v.RandomResizedCrop(224), v.RandomHorizontalFlip(), v.Normalize(MEAN, STD), v.HWC2CHW()]
    assert [o.op_name for o in fuse_ops(ops, reduced_decode=False)] == [
        "Decode+RandomResizedCrop", "RandomHorizontalFlip+Normalize+HWC2CHW"]


def test_flip_on_the_gpu_does_not_fuse():
    ops = [v.RandomHorizontalFlip().device("GPU"), v.Normalize(MEAN, STD), v.HWC2CHW()]
    assert [type(o).__name__ for o in fuse_ops(ops)] == ["RandomHorizontalFlip", "NormalizeHWC2CHW"]


images = st.tuples(st.integers(1, 40), st.integers(1, 40), st.sampled_from([1, 3, 4]),
                   st.sampled_from(["uint8", "int16", "float32", "float64"]), st.integers(0, 2 ** 32 - 1))


@settings(max_examples=150, deadline=None)
@given(images, st.sampled_from(FLIPS), st.sampled_from([0.0, 0.5, 1.0]), st.integers(0, 1000))
def test_fused_chain_equals_unfused_chain(image, flip, prob, sample):
    h, w, c, dtype, seed = image
    gen = np.random.default_rng(seed)
    if dtype == "uint8":
        img = gen.integers(0, 256, (h, w, c), dtype=np.uint8)
    else:
        img = (gen.standard_normal((h, w, c)) * 300).astype(dtype)
    mean, std = (MEAN + [20.0])[:c] if c > 1 else [MEAN[1]], (STD + [30.0])[:c] if c > 1 else [STD[1]]
    ops = [flip() if flip in (v.HorizontalFlip, v.VerticalFlip) else flip(prob), v.Normalize(mean, std), v.HWC2CHW()]
    fused = fuse_ops(ops)
    assert len(fused) == 1
    key = (7, 3, 0, sample)
    want, next_want = run(ops, img, key)
    got, next_got = run(fused, img, key)
    assert got.dtype == want.dtype == np.float32 and got.shape == want.shape == (c, h, w)
    assert got.tobytes() == want.tobytes()
    assert next_got == next_want


@pytest.mark.parametrize("img, message", [
    (np.zeros((4, 4, 3), np.int64), "RandomHorizontalFlip: the data type of image tensor does not match"),
    (np.zeros((4, 4, 2), np.uint8), "Normalize: number of channels does not match the size of mean and std"),
    (np.zeros((4,), np.uint8), "RandomHorizontalFlip: the image tensor should have at least two dimensions."),
])
def test_fused_op_fails_as_the_unfused_ops(img, message):
    ops = chain(v.RandomHorizontalFlip(1.0))
    fused = fuse_ops(ops)
    for run_ops in (ops, fused):
        with pytest.raises(RuntimeError, match=f"^{message}"):
            run(run_ops, img, (1, 2, 3, 4))


def test_fused_op_in_a_map_flips_some_rows_exactly():
    gen = np.random.default_rng(5)
    imgs = gen.integers(0, 256, (12, 6, 5, 3), dtype=np.uint8)
    ds.config.set_seed(11)  # the autouse fixture restores the config
    data = ds.NumpySlicesDataset({"image": imgs}, shuffle=False)
    data = data.map(chain(v.RandomHorizontalFlip()), input_columns="image")
    got = [r[0] for r in data.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    mean, std = np.float32(MEAN), np.float32(STD)
    flipped = [bool(np.array_equal(g, ((i[:, ::-1] - mean) / std).transpose(2, 0, 1))) for g, i in zip(got, imgs)]
    plain = [bool(np.array_equal(g, ((i - mean) / std).transpose(2, 0, 1))) for g, i in zip(got, imgs)]
    assert all(g.shape == (3, 6, 5) and g.dtype == np.float32 for g in got)
    assert [a != b for a, b in zip(flipped, plain)] == [True] * 12  # each row exactly flipped or not
    assert 0 < sum(flipped) < 12


def test_normalize_lut_is_the_loop_over_all_256_values():
    mean, std = np.float32(MEAN), np.float32(STD)
    lut = cv.normalize_lut(mean, std, 3)
    assert lut.shape == (3, 256) and lut.dtype == np.float32
    ramp = np.arange(256, dtype=np.float32)
    for i in range(3):
        assert lut[i].tobytes() == ((ramp - mean[i]) / std[i]).astype(np.float32).tobytes()


def test_normalize_hwc_to_chw_checks_flip():
    with pytest.raises(ValueError, match=r"^flip must be one of \(None, 0, 1\), but got 2\.$"):
        cv.normalize_hwc_to_chw(np.zeros((2, 2, 3), np.uint8), np.float32(MEAN), np.float32(STD), 2)


@settings(max_examples=100, deadline=None)
@given(images, st.sampled_from(FLIPS + [None]), st.integers(0, 1000))
def test_write_into_writes_what_the_call_returns(image, flip, sample):
    # the engine's direct write into a batch row: the same bytes and draws as a call, into `out`
    h, w, c, dtype, seed = image
    gen = np.random.default_rng(seed)
    img = (gen.integers(0, 256, (h, w, c)) if dtype == "uint8" else gen.standard_normal((h, w, c)) * 300).astype(dtype)
    mean, std = (MEAN + [20.0])[:c] if c > 1 else [MEAN[1]], (STD + [30.0])[:c] if c > 1 else [STD[1]]
    ops = ([] if flip is None else [flip() if flip in (v.HorizontalFlip, v.VerticalFlip) else flip(0.5)])
    (op,) = fuse_ops(ops + [v.Normalize(mean, std), v.HWC2CHW()])
    want, next_want = run([op], img, (7, 3, 0, sample))
    out = np.full((c, h, w), np.nan, np.float32)
    with rng.sample_key((7, 3, 0, sample)):
        got = op.write_into(img, out=out)
        next_got = rng.sample_rng().random()
    assert got.tobytes() == want.tobytes() and next_got == next_want
    assert (got is out) == (flip is None or dtype == "uint8")  # the kernel's cases: written in place


def test_write_into_a_wrong_array_returns_a_new_one():
    (op,) = fuse_ops([v.Normalize(MEAN, STD), v.HWC2CHW()])
    img = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    for out in (np.empty((3, 3, 2), np.float32), np.empty((3, 2, 3), np.float64), np.empty((3, 3, 2), np.float32).T.copy().T):
        got = op.write_into(img, out=out)
        assert got is not out and got.tobytes() == op(img).tobytes()


def test_normalize_hwc_to_chw_checks_out():
    img, mean, std = np.zeros((2, 3, 3), np.uint8), np.float32(MEAN), np.float32(STD)
    with pytest.raises(ValueError, match=r"^out must be a C-contiguous float32 array of shape \(3, 2, 3\), but got "
                                         r"float64 \(3, 2, 3\)\.$"):
        cv.normalize_hwc_to_chw(img, mean, std, None, np.zeros((3, 2, 3)))
    out = np.full((3, 2, 3), 5, np.float32)
    assert cv.normalize_hwc_to_chw(img, mean, std, 1, out) is out
    assert out.tobytes() == cv.normalize_hwc_to_chw(img, mean, std, 1).tobytes()


needs_pixels = pytest.mark.skipif(cv._pixels is None, reason="headrace._native._pixels is not built")


def test_the_kernel_is_built_where_the_test_command_requires_it():
    # scripts/test.sh sets HEADRACE_REQUIRE_NATIVE=1 where a compiler built the region decoder: the
    # one-pass kernel (no library of its own) is then built too, so the tests below do not skip
    if os.environ.get("HEADRACE_REQUIRE_NATIVE") != "1":
        pytest.skip("HEADRACE_REQUIRE_NATIVE is not set")
    assert cv._pixels is not None


@needs_pixels
@settings(max_examples=150, deadline=None)
@given(st.integers(1, 9), st.integers(1, 9), st.integers(1, 4), st.sampled_from([None, 0, 1]), st.integers(0, 2**32 - 1),
       st.booleans())
def test_one_pass_kernel_equals_opencvs_passes(h, w, c, flip, seed, strided):
    # the _pixels kernel and the split / flip / LUT path write the same bytes, for every channel
    # count the table takes and every flip; an input that is not C-contiguous takes OpenCV's path
    gen = np.random.default_rng(seed)
    img = gen.integers(0, 256, (h, w * (2 if strided else 1), c)).astype(np.uint8)[:, ::2 if strided else 1]
    mean, std = gen.uniform(0, 255, c).astype(np.float32), gen.uniform(1, 80, c).astype(np.float32)
    got = cv.normalize_hwc_to_chw(img, mean, std, flip)
    kernel, cv._pixels = cv._pixels, None
    try:
        want = cv.normalize_hwc_to_chw(img, mean, std, flip)
    finally:
        cv._pixels = kernel
    assert got.shape == (c, h, img.shape[1]) and got.dtype == np.float32
    assert got.tobytes() == want.tobytes()
    flipped = img if flip is None else (img[:, ::-1] if flip == 1 else img[::-1])
    lut = cv.normalize_lut(mean, std, c)
    assert got.tobytes() == np.stack([lut[k][flipped[:, :, k]] for k in range(c)]).tobytes()


@needs_pixels
def test_one_pass_kernel_checks_its_arguments():
    img, lut, out = np.zeros((2, 3, 3), np.uint8), np.zeros((3, 256), np.float32), np.zeros((3, 2, 3), np.float32)
    k = cv._pixels.normalize_chw
    k(img, lut, out, 1)
    assert not out.any()
    for args, msg in [((img, lut, out, 2), "flip must be -1 (none), 0 (vertical) or 1 (horizontal)"),
                      ((img.astype(np.int16), lut, out, -1), "src must be a C-contiguous uint8 array of shape (h, w, c)"),
                      ((img[0], lut, out, -1), "src must be a C-contiguous uint8 array of shape (h, w, c)"),
                      ((img, lut[:2], out, -1), "lut must be a C-contiguous float32 array of c * 256 values"),
                      ((img, lut.astype(np.float64), out, -1), "lut must be a C-contiguous float32 array of c * 256 values"),
                      ((img, lut, out[:2], -1), "out must be a C-contiguous float32 array of c * h * w values"),
                      ((img, lut, out.astype(np.float64), -1), "out must be a C-contiguous float32 array of c * h * w values")]:
        with pytest.raises(ValueError) as e:
            k(*args)
        assert str(e.value) == msg
    shared = np.zeros(72, np.uint8)  # out's first 18 bytes are src
    with pytest.raises(ValueError, match="^out must not overlap src$"):
        k(shared[:18].reshape(2, 3, 3), lut, shared.view(np.float32).reshape(3, 2, 3), -1)
    with pytest.raises(ValueError, match="^ndarray is not C-contiguous$"):
        k(img[:, ::2], lut, np.zeros((3, 2, 2), np.float32), -1)
    with pytest.raises(TypeError):
        k(img, lut, out, "1")
    out.flags.writeable = False
    with pytest.raises(ValueError, match="^buffer source array is read-only$"):
        k(img, lut, out, -1)
