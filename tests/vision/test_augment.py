"""AutoAugment, RandAugment, TrivialAugmentWide, UniformAugment and their sub-operations.

Every output of the automatic augmentations must be one of the finitely many images the policy
can produce (enumerated here from the kernels); the compat tests check MindSpore's outputs
against the same enumeration.
"""
from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from headrace._util import rng
from headrace.dataset.vision import _ops_augment as G
from headrace.dataset.vision import _ops_color as C
from headrace._image import augment as A
from headrace._image import color as K
from headrace._image import geometry
from headrace.dataset.vision.utils import AutoAugmentPolicy, Inter
from tests.helpers import assert_raises_exactly
from tests.vision.augment_space import auto_augment_space

IMG = np.random.default_rng(11).integers(0, 256, (12, 16, 3), dtype=np.uint8)
FILL = (10, 20, 30)


def keyed(op, img, key):
    with rng.sample_key(key):
        return op(img)


def stack(images):
    return np.stack(list(images))


def in_set(out, candidates):
    return bool((candidates == out).all(axis=(1, 2, 3)).any())


# ---------------------------------------------------------------- sub-operations

def test_magnitude_ramp_is_float32_steps():
    ramp = A.magnitude_ramp(0.0, 0.9, 5)
    assert ramp.dtype == np.float32
    assert ramp.tolist() == [0.0, float(np.float32(0.225)), float(np.float32(0.45)),
                             float(np.float32(np.float32(3) * np.float32(0.225))), float(np.float32(0.9))]
    assert A.magnitude_ramp(255, 0, 5).tolist() == [255.0, 191.25, 127.5, 63.75, 0.0]


def test_apply_augment_colour_ops_use_one_plus_magnitude():
    m = np.float32(-0.675)
    assert np.array_equal(A.apply_augment(IMG, "Brightness", m, 0, FILL),
                          K.adjust_brightness(IMG, np.float32(1) + m))
    assert np.array_equal(A.apply_augment(IMG, "Color", 0.3, 0, FILL), K.adjust_saturation(IMG, np.float32(1.3)))
    assert np.array_equal(A.apply_augment(IMG, "Solarize", 170.7, 0, FILL), K.solarize(IMG, (170.7, 170.7)))
    assert A.apply_augment(IMG, "Identity", 0, 0, FILL) is IMG


def test_apply_augment_translate_is_a_fraction_of_the_size():
    out = A.apply_augment(IMG, "TranslateX", 0.25, 0, FILL)       # 0.25 * 16 = 4 px
    assert np.array_equal(out[:, 4:], IMG[:, :-4]) and (out[:, :4] == FILL).all()
    assert (A.apply_augment(IMG, "TranslateY", 1.0, 0, FILL) == FILL).all()


def test_apply_augment_rotate_fill_channel_order():
    out = A.apply_augment(IMG, "Rotate", 45.0, 0, FILL)
    assert out[0, 0].tolist() == [20, 30, 10]
    shear = A.apply_augment(IMG, "ShearX", 0.9, 0, FILL)
    assert shear[0, 0].tolist() == [10, 20, 30]


def test_shear_uses_degrees_of_the_magnitude_about_the_centre():
    m = 0.3
    mat = geometry.affine_matrix(12, 16, 0, (0, 0), 1, (math.degrees(m), 0))
    assert np.array_equal(A.apply_augment(IMG, "ShearX", m, 2, FILL),
                          geometry.warp_affine(IMG, mat, 16, 12, cv2.INTER_LINEAR, FILL))
    # the centre row is a fixed point of a horizontal shear
    assert np.allclose(mat @ [3.0, 5.5, 1.0], [3.0, 5.5])


# ---------------------------------------------------------------- output spaces

def _signed(name, m):
    return [m, -m] if name in A._SIGNED else [m]


def rand_augment_space(img, magnitude, bins, interp):
    out = []
    for name, mags in A._rand_augment_space(bins, *img.shape[:2]):
        m = float(mags[magnitude]) if mags is not None else 0.0
        out.extend(A.apply_augment(img, name, s, interp, FILL) for s in _signed(name, m))
    return stack(out)


def test_rand_augment_outputs_are_in_the_space():
    op = G.RandAugment(num_ops=1, magnitude=3, num_magnitude_bins=5, interpolation=Inter.BILINEAR, fill_value=FILL)
    space = rand_augment_space(IMG, 3, 5, 2)
    outs = [keyed(op, IMG, (1, k)) for k in range(60)]
    assert all(in_set(o, space) for o in outs)
    assert len({o.tobytes() for o in outs}) > 8


def test_rand_augment_zero_ops_is_identity():
    assert np.array_equal(G.RandAugment(num_ops=0)(IMG), IMG)


def test_trivial_augment_outputs_are_in_the_space():
    space = []
    for name, mags in A._trivial_augment_space(4):
        for m in (mags if mags is not None else [0.0]):
            space.extend(A.apply_augment(IMG, name, s, 0, FILL) for s in _signed(name, float(m)))
    space = stack(space)
    op = G.TrivialAugmentWide(4, Inter.NEAREST, FILL)
    outs = [keyed(op, IMG, (2, k)) for k in range(60)]
    assert all(in_set(o, space) for o in outs)
    assert len({o.tobytes() for o in outs}) > 8


@pytest.mark.parametrize("policy", list(AutoAugmentPolicy))
def test_auto_augment_outputs_are_in_the_policy_space(policy):
    space = stack(auto_augment_space(IMG, policy.value, 0, FILL))
    op = G.AutoAugment(policy, Inter.NEAREST, FILL)
    outs = [keyed(op, IMG, (3, k)) for k in range(40)]
    assert all(in_set(o, space) for o in outs)


def test_auto_augment_tables():
    for subs in A.AUTO_AUGMENT_POLICIES.values():
        assert len(subs) == 25 and all(len(s) == 2 for s in subs)
    assert A._auto_augment_magnitude("Solarize", 3, 8, 8) == float(A.magnitude_ramp(256, 0, 10)[3])
    assert A._auto_augment_magnitude("Posterize", 9, 8, 8) == 4.0


# ---------------------------------------------------------------- op checks

@pytest.mark.parametrize("make,exc,msg", [
    (lambda: G.AutoAugment(policy="imagenet"), TypeError,
     "Argument policy with value imagenet is not of type [<enum 'AutoAugmentPolicy'>], but got <class 'str'>."),
    (lambda: G.AutoAugment(fill_value=(1, 2)), TypeError, "fill_value should be a single integer or a 3-tuple."),
    (lambda: G.AutoAugment(fill_value=256), ValueError, "Input fill_value is not within the required interval of [0, 255]."),
    (lambda: G.AutoAugment(interpolation=2), TypeError,
     "Argument interpolation with value 2 is not of type [<enum 'Inter'>], but got <class 'int'>."),
    (lambda: G.RandAugment(magnitude=31), ValueError, "Input magnitude is not within the required interval of [0, 31)."),
    (lambda: G.RandAugment(num_magnitude_bins=1), ValueError,
     "Input num_magnitude_bins is not within the required interval of [2, 16777216]."),
    (lambda: G.RandAugment(num_ops=-1), ValueError, "Input num_ops is not within the required interval of [0, 16777216]."),
    (lambda: G.RandAugment(fill_value=(1, 2, 300)), ValueError,
     "Input fill_value[2] is not within the required interval of [0, 255]."),
    (lambda: G.RandAugment(fill_value=1.5), TypeError, "fill_value should be a single integer or a 3-tuple."),
    (lambda: G.TrivialAugmentWide(num_magnitude_bins=1), ValueError,
     "Input num_magnitude_bins is not within the required interval of [2, 16777216]."),
    (lambda: G.UniformAugment([C.Invert()], 2), ValueError, "num_ops is greater than transforms list size."),
    (lambda: G.UniformAugment([C.Invert()], 0), ValueError, "Input num_ops must be greater than 0."),
    (lambda: G.UniformAugment([C.Invert], 1), ValueError,
     "op_list[0] should be a dataset processing operation instance, but got: "
     "<class 'headrace.dataset.vision._ops_color.Invert'>. It may be missing parentheses for instantiation."),
    (lambda: G.UniformAugment([1], 1), TypeError,
     "transforms[0] is neither a transforms op (TensorOperation) nor a callable pyfunc."),
])
def test_argument_checks(make, exc, msg):
    assert_raises_exactly(make, exc, msg)


def test_defaults():
    op = G.AutoAugment()
    assert op.policy == AutoAugmentPolicy.IMAGENET and op.interpolation == Inter.NEAREST and op.fill_value == (0, 0, 0)
    op = G.RandAugment()
    assert (op.num_ops, op.magnitude, op.num_magnitude_bins) == (2, 9, 31)
    assert G.TrivialAugmentWide().num_magnitude_bins == 31


def test_auto_augment_bad_images_use_mindspore_texts():
    with pytest.raises(RuntimeError, match=r"AutoAugment: input tensor is not in shape of <H,W,C>, but got rank: 2"):
        G.AutoAugment()(IMG[..., 0])
    with pytest.raises(RuntimeError, match="AutoAugment: channel of input image should be 3, but got: 1"):
        G.AutoAugment()(IMG[..., :1])


@pytest.mark.parametrize("op", [G.RandAugment(), G.TrivialAugmentWide()])
def test_bad_images(op):
    name = type(op).__name__
    with pytest.raises(RuntimeError, match=f"{name}: the dimension of image tensor does not match"):
        op(IMG[..., 0])
    with pytest.raises(RuntimeError, match=f"{name}: the channel of image tensor does not match.*But got channel 4"):
        op(np.zeros((4, 4, 4), np.uint8))
    with pytest.raises(RuntimeError, match=f"{name}: the data type of image tensor.*But got type float32"):
        op(IMG.astype(np.float32))


@pytest.mark.parametrize("interp", [Inter.ANTIALIAS, Inter.PILCUBIC])
def test_unsupported_interpolation_fails_at_call(interp):
    op = G.TrivialAugmentWide(interpolation=interp)
    with pytest.raises(RuntimeError, match=f"TrivialAugmentWide: interpolation {interp.name} is not supported"):
        op(IMG)


@pytest.mark.parametrize("op", [G.AutoAugment(), G.RandAugment(), G.TrivialAugmentWide()])
def test_keyed_determinism(op):
    assert np.array_equal(keyed(op, IMG, (4, 4)), keyed(op, IMG, (4, 4)))


# ---------------------------------------------------------------- UniformAugment

def test_uniform_augment_picks_distinct_ops_in_list_order():
    calls = []

    def tag(name):
        def fn(x):
            calls.append(name)
            return x
        return fn

    op = G.UniformAugment([tag("a"), tag("b"), tag("c")], num_ops=2)
    counts = {0: 0, 1: 0, 2: 0}
    for k in range(200):
        calls.clear()
        keyed(op, IMG, (5, k))
        assert len(calls) == len(set(calls)) <= 2
        assert calls == sorted(calls)
        counts[len(calls)] += 1
    # each picked op runs with probability 1/2: 0, 1, 2 ops run in about 1:2:1
    assert 25 < counts[0] < 80 and 70 < counts[1] < 130 and 25 < counts[2] < 80


def test_uniform_augment_runs_ops_on_their_input_kind():
    from PIL import Image
    op = G.UniformAugment([C.Invert(), C.AdjustBrightness(2.0)], num_ops=2)
    out = keyed(op, Image.fromarray(IMG), (6, 1))
    assert isinstance(out, Image.Image)
    outs = {keyed(op, IMG, (6, k)).tobytes() for k in range(40)}
    want = {IMG.tobytes(), K.invert(IMG).tobytes(), K.adjust_brightness(IMG, 2.0).tobytes(),
            K.adjust_brightness(K.invert(IMG), 2.0).tobytes()}
    assert outs == want
    with pytest.raises(TypeError, match="Input should be NumPy or PIL image"):
        op([1, 2])


# ---------------------------------------------------------------- RandomSelectSubpolicy

def test_random_select_subpolicy_runs_one_subpolicy():
    x = np.arange(18, dtype=np.uint8).reshape(2, 3, 3)
    op = G.RandomSelectSubpolicy([[(C.Invert(), 1.0), (C.Posterize(2), 1.0)], [(lambda im: im + 1, 1.0)],
                                  [(C.Invert(), 0.0)]])
    outs = {keyed(op, x, (7, k)).tobytes() for k in range(60)}
    assert outs == {K.posterize(K.invert(x), 2).tobytes(), (x + 1).tobytes(), x.tobytes()}


def test_random_select_subpolicy_step_probability():
    x = np.zeros((1, 1, 3), np.uint8)
    op = G.RandomSelectSubpolicy([[(C.Invert(), 0.25)]])
    hits = sum(int(keyed(op, x, (8, k))[0, 0, 0]) == 255 for k in range(400))
    assert 60 < hits < 140


@pytest.mark.parametrize("make,exc,msg", [
    (lambda: G.RandomSelectSubpolicy([]), ValueError, "policy can not be empty."),
    (lambda: G.RandomSelectSubpolicy([[]]), ValueError, "policy[0] can not be empty."),
    (lambda: G.RandomSelectSubpolicy("a"), TypeError,
     "Argument policy with value a is not of type [<class 'list'>], but got <class 'str'>."),
    (lambda: G.RandomSelectSubpolicy([[(C.Invert(), 1.5)]]), ValueError,
     "Input prob of (op, prob) policy[0][0] is not within the required interval of [0, 1]."),
    (lambda: G.RandomSelectSubpolicy([[C.Invert()]]), ValueError, "Value policy[0][0] needs to be a 2-tuple."),
    (lambda: G.RandomSelectSubpolicy([[(1, 0.5)]]), TypeError,
     "op of (op, prob) in policy[0][0] is neither a transforms op (TensorOperation) nor a callable pyfunc."),
])
def test_random_select_subpolicy_checks(make, exc, msg):
    with pytest.raises(exc) as info:
        make()
    assert str(info.value) == msg


@pytest.mark.parametrize("space, tops", [
    # RandAugment on a 331 x 662 image: translation 150/331 of each side, shear 0.3, rotation 30,
    # enhancements 0.9, posterize down to 4 bits
    (lambda: A._rand_augment_space(5, 331, 662), {"ShearX": 0.3, "ShearY": 0.3, "TranslateX": 300.0, "TranslateY": 150.0,
                                                   "Rotate": 30.0, "Brightness": 0.9, "Color": 0.9, "Contrast": 0.9,
                                                   "Sharpness": 0.9, "Posterize": [8, 7, 6, 5, 4]}),
    # TrivialAugmentWide: shear and enhancements 0.99, translation 32 pixels, rotation 135, 2 bits
    (lambda: A._trivial_augment_space(5), {"ShearX": 0.99, "ShearY": 0.99, "TranslateX": 32.0, "TranslateY": 32.0,
                                           "Rotate": 135.0, "Brightness": 0.99, "Color": 0.99, "Contrast": 0.99,
                                           "Sharpness": 0.99, "Posterize": [8, 6, 5, 4, 2]}),
])
def test_augment_spaces_pin_their_magnitudes(space, tops):
    got = space()
    assert [name for name, _ in got] == ["Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate",
                                         "Brightness", "Color", "Contrast", "Sharpness", "Posterize", "Solarize",
                                         "AutoContrast", "Equalize"]
    for name, mags in got:
        if name in ("Identity", "AutoContrast", "Equalize"):
            assert mags is None
        elif name == "Solarize":
            assert mags.tolist() == [255.0, 191.25, 127.5, 63.75, 0.0]
        elif name == "Posterize":
            assert mags.dtype == np.float32 and mags.tolist() == tops[name]
        else:
            assert mags.dtype == np.float32 and mags.tolist() == A.magnitude_ramp(0.0, tops[name], 5).tolist(), name
            assert mags[-1] == np.float32(tops[name]), name
