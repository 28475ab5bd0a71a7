"""Bounding-box ops: pinned values, image/box agreement, keyed randomness, pipelines and errors."""
import doctest
import tempfile

import cv2

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
import headrace.dataset.vision as v
from headrace._util import rng
from headrace.dataset.vision import _ops_bbox
from headrace._image import bbox as kb
from headrace.dataset.vision import Border, Inter

_yy, _xx = np.mgrid[0:6, 0:8]
CODED = np.stack([_yy, _xx, _yy * 8 + _xx], 2).astype(np.uint8)  # pixel (y, x) holds y, x, 8y + x
BOXES = np.array([[1, 1, 3, 2, 7], [0, 0, 8, 6, 9]], np.float32)


def _keyed(op, key, *args):
    with rng.sample_key(key):
        return op(*args)


def test_docstring_examples_run(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the examples' tempfile.mkdtemp()
    result = doctest.testmod(_ops_bbox, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 7 and result.failed == 0


def test_flips_move_boxes_and_pixels_together():
    img, box = v.RandomHorizontalFlipWithBBox(1.0)(CODED, BOXES)
    np.testing.assert_array_equal(img, CODED[:, ::-1])
    assert box.dtype == np.float32 and box.tolist() == [[4, 1, 3, 2, 7], [0, 0, 8, 6, 9]]
    img, box = v.RandomVerticalFlipWithBBox(1.0)(CODED, BOXES)
    np.testing.assert_array_equal(img, CODED[::-1])
    assert box.tolist() == [[1, 3, 3, 2, 7], [0, 0, 8, 6, 9]]
    img, box = v.RandomVerticalFlipWithBBox(0.0)(CODED, BOXES)
    np.testing.assert_array_equal(img, CODED)
    assert box.tolist() == BOXES.tolist()


def test_flip_rounding_is_mindsporess():
    # MindSpore subtracts twice for x and adds first for y; both pinned against its output.
    b = np.array([[1.5, 0.7, 3.2, 2.9], [0.1, 0.3, 7.9, 5.7]], np.float32)
    assert kb.hflip(b, 8)[:, 0].tolist() == [3.299999952316284, 0.0]
    assert kb.vflip(b, 6)[:, 1].tolist() == [2.3999998569488525, 0.0]


def test_inputs_are_not_changed():
    img, boxes = CODED.copy(), BOXES.copy()
    for op in (v.RandomHorizontalFlipWithBBox(1.0), v.ResizeWithBBox(3), v.RandomCropWithBBox(3),
               v.BoundingBoxAugment(v.Invert(), 1.0), v.RandomResizedCropWithBBox(4)):
        out_img, out_box = op(img, boxes)
        assert out_img is not img and out_box is not boxes
    np.testing.assert_array_equal(img, CODED)
    np.testing.assert_array_equal(boxes, BOXES)


def test_resize_scales_boxes_in_float32():
    img, box = v.ResizeWithBBox((7, 9), Inter.NEAREST)(CODED, BOXES)
    assert img.shape == (7, 9, 3)
    assert box.tolist() == [[1.125, 1.1666666269302368, 3.375, 2.3333332538604736, 7.0], [0, 0, 9, 7, 9]]
    img, box = v.ResizeWithBBox(3)(CODED, BOXES)
    assert img.shape == (3, 4, 3) and box[1].tolist() == [0, 0, 4, 3, 9]


def test_random_resize_draws_one_of_four_interpolations():
    shapes = {_keyed(v.RandomResizeWithBBox((5, 4)), (1, 2, 0, i), CODED, BOXES)[0].shape for i in range(8)}
    assert shapes == {(5, 4, 3)}
    outs = {_keyed(v.RandomResizeWithBBox((5, 4)), (1, 2, 0, i), CODED, BOXES)[0].tobytes() for i in range(40)}
    assert 2 <= len(outs) <= 4


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 3), st.integers(1, 8), st.integers(1, 6))
def test_random_crop_boxes_match_the_window_cut(seed, pad, cw, ch):
    op = v.RandomCropWithBBox((ch, cw), padding=pad, fill_value=255)
    img, box = _keyed(op, (seed,), CODED, BOXES)
    assert img.shape == (ch, cw, 3)
    padded = np.pad(CODED, ((pad, pad), (pad, pad), (0, 0)), constant_values=255)
    windows = [(y, x) for y in range(padded.shape[0] - ch + 1) for x in range(padded.shape[1] - cw + 1)
               if np.array_equal(padded[y:y + ch, x:x + cw], img)]
    expected = {kb.crop(kb.shift(BOXES, pad, pad), y, x, ch, cw).tobytes() for y, x in windows}
    assert box.tobytes() in expected


def test_random_crop_drops_boxes_outside_and_clips_the_rest():
    b = np.array([[0, 0, 8, 6], [6, 4, 2, 2], [3, 3, 2, 2], [1, 1, 1, 1]], np.float32)
    assert kb.crop(b, 0, 0, 3, 4).tolist() == [[0, 0, 4, 3], [3, 3, 1, 0], [1, 1, 1, 1]]
    assert kb.crop(b, 2, 3, 3, 4).tolist() == [[0, 0, 4, 3], [3, 2, 1, 1], [0, 1, 2, 2]]
    assert kb.crop(b, 2, 2, 3, 4).tolist()[-1] == [0, 0, 0, 0]  # touching the window's edge keeps it


def test_random_crop_of_the_whole_padded_image_only_shifts_boxes():
    img, box = v.RandomCropWithBBox((10, 12), padding=2, padding_mode=Border.EDGE)(CODED, BOXES)
    np.testing.assert_array_equal(img, np.pad(CODED, ((2, 2), (2, 2), (0, 0)), mode="edge"))
    assert box.tolist() == [[3, 3, 3, 2, 7], [2, 2, 8, 6, 9]]


def test_random_crop_errors():
    with pytest.raises(RuntimeError, match="^RandomCrop: invalid crop size, crop size is bigger than the "
                                           "image dimensions, got crop height: 7, crop width: 8$"):
        v.RandomCropWithBBox((7, 8))(CODED, BOXES)
    with pytest.raises(RuntimeError, match="^Pad: the channel of image tensor does not match"):
        v.RandomCropWithBBox(2)(np.zeros((6, 8, 5), np.uint8), BOXES)


def test_random_resized_crop_of_the_whole_image():
    op = v.RandomResizedCropWithBBox((3, 4), scale=(1, 1), ratio=(4 / 3, 4 / 3), interpolation=Inter.NEAREST)
    img, box = op(CODED, BOXES)
    np.testing.assert_array_equal(img, CODED[::2, ::2])
    assert box.tolist() == [[0.5, 0.5, 1.5, 1.0, 7], [0, 0, 4, 3, 9]]


def test_random_resized_crop_boxes_follow_the_drawn_window():
    op = v.RandomResizedCropWithBBox((6, 8), scale=(0.2, 0.5), interpolation=Inter.NEAREST)
    for i in range(20):
        with rng.sample_key((5, i)):
            top, left, ch, cw = op._crop.box(6, 8)
        img, box = _keyed(op, (5, i), CODED, BOXES)
        assert img.shape == (6, 8, 3)
        assert (int(img[0, 0, 0]), int(img[0, 0, 1])) == (top, left)
        np.testing.assert_array_equal(box, kb.scale(kb.crop(BOXES, top, left, ch, cw), ch, cw, 6, 8))


def test_bounding_box_augment_transforms_whole_pixels_under_each_box():
    b = np.array([[1.5, 1.2, 2.6, 2.7], [5, 2, 2, 3]], np.float32)
    img, box = v.BoundingBoxAugment(v.RandomHorizontalFlip(1.0), 1.0)(CODED, b)
    want = CODED.copy()
    want[1:3, 1:3] = CODED[1:3, 1:3][:, ::-1]
    want[2:5, 5:7] = CODED[2:5, 5:7][:, ::-1]
    np.testing.assert_array_equal(img, want)
    assert box.tolist() == b.tolist()
    img, _ = v.BoundingBoxAugment(v.Invert(), 0.0)(CODED, b)
    np.testing.assert_array_equal(img, CODED)


def test_bounding_box_augment_resizes_other_shapes_back():
    img, _ = v.BoundingBoxAugment(v.HWC2CHW(), 1.0)(CODED, np.array([[1, 1, 3, 2]], np.float32))
    # the 3x2x3 CHW output is read as an image and resized bilinearly to the 2x3 region
    chw = np.ascontiguousarray(CODED[1:3, 1:4].transpose(2, 0, 1))
    np.testing.assert_array_equal(img[1:3, 1:4], cv2.resize(chw, (3, 2), interpolation=cv2.INTER_LINEAR))
    np.testing.assert_array_equal(img[3:], CODED[3:])


def test_bounding_box_augment_chooses_each_box_with_probability_ratio():
    b = np.array([[4 * i, 0, 2, 2] for i in range(10)], np.float32)
    img = np.zeros((4, 40, 3), np.uint8)
    op = v.BoundingBoxAugment(v.Invert(), 0.3)
    for i in range(20):
        out, _ = _keyed(op, (9, i), img, b)
        chosen = out[0, ::4, 0] == 255
        with rng.sample_key((9, i)):
            want = rng.sample_rng().random(10) < 0.3
        np.testing.assert_array_equal(chosen, want)


def test_bounding_box_augment_zero_area_box_errors():
    with pytest.raises(RuntimeError, match=r"^The pointer\[data\] is null\. "):
        v.BoundingBoxAugment(v.Invert(), 1.0)(CODED, np.array([[1, 1, 0.5, 2]], np.float32))


@pytest.mark.parametrize("boxes, message", [
    (np.array([1, 1, 3, 2], np.float32), "BoundingBox: bounding boxes should have to be two-dimensional "
                                         "matrix at least, but got 1 dimension."),
    (np.zeros((0, 4), np.float32), "Input Tensor has no data."),
    (np.zeros((2, 3), np.float32), "BoundingBox: bounding boxes should be have at least 4 features, but got: 3"),
    (np.zeros((1, 4), np.float64), "Template type and Tensor type are not compatible"),
    (np.array([[1, 1, 30, 2]], np.float32), "BoundingBox: bounding boxes is out of bounds of the image, as "
     "image width: 8, bbox width coordinate: 31.000000, and image height: 6, bbox height coordinate: 3.000000"),
    (np.array([[-1, 1, 30, 2]], np.float32), "BoundingBox: bounding boxes is out of bounds of the image, as "
     "image width: 8, bbox width coordinate: 29.000000, and image height: 6, bbox height coordinate: 3.000000"),
    (np.array([[1, -2.5, 3, 2]], np.float32), "BoundingBox: the coordinates of the bounding boxes has "
                                              "negative value, got: (1.000000,-2.500000)."),
])
def test_box_checks(boxes, message):
    for op in (v.RandomHorizontalFlipWithBBox(1.0), v.ResizeWithBBox(3), v.BoundingBoxAugment(v.Invert())):
        with pytest.raises(RuntimeError) as e:
            op(CODED, boxes)
        assert str(e.value) == message


def test_input_count_and_types():
    with pytest.raises(RuntimeError) as e:
        v.ResizeWithBBox(3)(CODED)
    assert str(e.value) == ("BoundingBox: invalid input, size of input data should be 2 (including image and "
                            "bounding box), but got: 1")
    with pytest.raises(RuntimeError, match="^Invalid data, input image hasn't been decoded"):
        v.ResizeWithBBox(3)(CODED[0, :, 0], BOXES)
    with pytest.raises(TypeError, match="^Input should be NumPy or PIL image, got <class 'list'>.$"):
        v.ResizeWithBBox(3)(CODED, BOXES.tolist())


def test_argument_checks():
    with pytest.raises(ValueError, match=r"^Input prob is not within the required interval of \[0.0, 1.0\].$"):
        v.RandomHorizontalFlipWithBBox(1.5)
    with pytest.raises(ValueError, match=r"^Input ratio is not within the required interval of \[0.0, 1.0\].$"):
        v.BoundingBoxAugment(v.Invert(), 2.0)
    with pytest.raises(TypeError, match="^Argument transform with value 1 is not of type"):
        v.BoundingBoxAugment(1, 1.0)
    with pytest.raises(TypeError, match="^Argument interpolation with value 1 is not of type"):
        v.ResizeWithBBox(3, 1)
    with pytest.raises(ValueError, match=r"^Input size at dim 0 is not within the required interval"):
        v.ResizeWithBBox((0, 3))
    assert v.BoundingBoxAugment(v.Invert()).ratio == 0.3
    assert v.RandomVerticalFlipWithBBox().prob == 0.5


def test_pipeline_two_columns_keyed_and_consistent():
    def build():
        data = ds.NumpySlicesDataset({"image": [CODED] * 6, "bbox": [BOXES] * 6}, shuffle=False)
        return data.map(v.RandomHorizontalFlipWithBBox(0.5), input_columns=["image", "bbox"])

    ds.config.set_seed(1234)  # the autouse fixture resets the config afterwards
    rows = [(i.copy(), b.copy()) for i, b in build().create_tuple_iterator(output_numpy=True)]
    again = [(i.copy(), b.copy()) for i, b in build().create_tuple_iterator(output_numpy=True)]
    flipped = [bool(img[0, 0, 1] == 7) for img, _ in rows]
    assert 0 < sum(flipped) < 6  # seed 1234 flips some rows and not others (guards determinism)
    for (img, box), f in zip(rows, flipped):
        assert box[0, 0] == (4.0 if f else 1.0)
    for (a, b), (c, d) in zip(rows, again):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def _bbox_pipeline(workers, processes=False):
    rng_ = np.random.default_rng(4)
    images = rng_.integers(0, 256, (6, 20, 24, 3), dtype=np.uint8)
    boxes = [np.array([[1, 2, 10, 8], [12, 5, 9, 12], [3, 14, 6, 5]][:k + 1], np.float32) for k in range(3)] * 2
    data = ds.GeneratorDataset(lambda: iter(zip(images, boxes)), ["image", "bbox"], shuffle=False)
    ops = [v.RandomHorizontalFlipWithBBox(), v.RandomCropWithBBox((16, 18), padding=2),
           v.BoundingBoxAugment(v.RandomVerticalFlip(), 0.5), v.RandomResizedCropWithBBox((12, 14)),
           v.RandomResizeWithBBox(10)]
    return data.map(ops, input_columns=["image", "bbox"], num_parallel_workers=workers,
                    python_multiprocessing=processes)


@pytest.mark.parametrize("workers, processes", [(2, False), (2, True)])
def test_bbox_chain_in_a_pipeline_is_independent_of_workers(workers, processes):
    def rows(pipeline):
        return [(i.copy(), b.copy()) for i, b in pipeline.create_tuple_iterator(num_epochs=1, output_numpy=True)]

    ds.config.set_seed(17)
    one = rows(_bbox_pipeline(1))
    ds.config.set_seed(17)
    many = rows(_bbox_pipeline(workers, processes))
    assert len(one) == 6
    for (a, b), (c, d) in zip(one, many):
        assert a.shape[2] == 3 and min(a.shape[:2]) == 10 and b.dtype == np.float32 and b.shape[1] == 4
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)
