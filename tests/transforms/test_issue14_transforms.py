"""Issue 14, transforms side (item 9): OneHot on rank-2 labels, Compose called eagerly and nested,
a Compose inside map."""
import numpy as np
import pytest
from PIL import Image

import headrace.dataset as ds
import headrace.dataset.transforms as t
import headrace.dataset.vision as v
from headrace.dataset.transforms import fuse_ops


@pytest.mark.parametrize("shape, out_shape", [
    ((), (4,)), ((1,), (4,)), ((1, 1), (4,)), ((3,), (3, 4)), ((3, 1), (3, 4)), ((1, 3), (3, 4)),
    ((2, 1, 1), (2, 4)), ((1, 1, 3), (3, 4)), ((3, 1, 1, 1), (3, 4)),
])
def test_one_hot_drops_size_one_axes(shape, out_shape):
    labels = (np.arange(int(np.prod(shape))) % 3).reshape(shape).astype(np.int32)
    for op in (t.OneHot(4), t.Compose([t.OneHot(4)])):
        out = op(labels)
        assert out.shape == out_shape and out.dtype == np.int32
        assert out.reshape(-1, 4).tolist() == np.eye(4, dtype=np.int32)[labels.reshape(-1)].tolist()


@pytest.mark.parametrize("shape", [(2, 2), (1, 2, 3), (2, 3, 1)])
def test_one_hot_refuses_labels_of_rank_two_after_squeezing(shape):
    with pytest.raises(RuntimeError, match="^OneHot: Only support scalar or 1D input, got rank: 2$"):
        t.OneHot(10)(np.zeros(shape, np.int32))


def test_one_hot_of_column_labels_in_compose_inside_map():
    class Source:
        def __getitem__(self, index):
            return np.arange(10, dtype=np.int32).reshape(10, 1)

        def __len__(self):
            return 3

    data = ds.GeneratorDataset(Source(), ["label"], shuffle=False)
    data = data.map(t.Compose([t.OneHot(10)]), input_columns=["label"])
    rows = [r[0] for r in data.create_tuple_iterator(output_numpy=True)]
    assert len(rows) == 3
    for r in rows:
        assert r.dtype == np.int32 and r.tolist() == np.eye(10, dtype=np.int32).tolist()


def test_compose_called_eagerly_and_nested():
    img = np.arange(2 * 6 * 3, dtype=np.uint8).reshape(2, 6, 3)
    nested = t.Compose([t.Compose([v.HorizontalFlip(), v.Crop((0, 1), (2, 4))]), v.HWC2CHW()])
    assert len(nested.transforms) == 3
    out = nested(img)
    assert out.shape == (3, 2, 4) and out.flags.c_contiguous
    assert out.tolist() == img[:, ::-1][:, 1:5].transpose(2, 0, 1).tolist()
    assert t.Compose([t.Fill(3), lambda x: x * 2])([1, 2]).tolist() == [6, 6]


def test_compose_of_callables_returning_pil_images_eagerly():
    """MindSpore's test_compose_embed_compose: an eager C Compose hands the next op an array."""
    class Flip:
        def __init__(self):
            self.transforms = t.Compose([v.HorizontalFlip()])

        def __call__(self, img):
            return Image.fromarray(self.transforms(img))

    class ResizeCrop:
        def __init__(self):
            self.transforms = t.Compose([v.Resize((30, 30)), v.CenterCrop((20, 20))])

        def __call__(self, img):
            return Image.fromarray(self.transforms(img))

    img = np.zeros((31, 102, 3), np.uint8)
    img[:, :51] = 200
    out = t.Compose([Flip(), ResizeCrop()])(img)
    assert type(out) is np.ndarray and out.shape == (20, 20, 3) and out.dtype == np.uint8
    expected = v.CenterCrop((20, 20))(v.Resize((30, 30))(img[:, ::-1].copy()))
    assert out.tolist() == expected.tolist()


def test_compose_in_map_lets_pil_images_reach_the_next_function():
    seen_eager, seen_map = [], []

    def record(into):
        def f(x):
            into.append(type(x).__name__)
            return np.asarray(x)
        return f

    img = np.zeros((2, 3, 3), np.uint8)
    t.Compose([Image.fromarray, record(seen_eager)])(img)
    data = ds.NumpySlicesDataset({"x": [img]}, shuffle=False)
    data = data.map(t.Compose([Image.fromarray, record(seen_map)]), input_columns=["x"])
    (row,) = list(data.create_tuple_iterator(output_numpy=True))
    assert row[0].tolist() == img.tolist()
    assert seen_eager == ["ndarray"] and seen_map == ["Image"]


def test_fuse_ops_expands_compose():
    flip, crop = v.HorizontalFlip(), v.CenterCrop(2)
    fn = abs
    ops = fuse_ops([t.Compose([flip, fn]), t.Compose([t.Compose([crop])])])
    assert ops == [flip, fn, crop]


def test_compose_without_input():
    with pytest.raises(RuntimeError, match="^Input Tensor is not valid.$"):
        t.Compose([lambda x: x + x])()
    with pytest.raises(TypeError, match="^Compose was called without an image"):
        t.Compose([v.ToPIL()])()


def test_executor_cache_name_exists_and_stays_empty():
    from headrace.dataset.transforms import transforms as module
    v.Resize((2, 2))(np.zeros((4, 4, 3), np.uint8))
    t.Compose([v.HorizontalFlip()])(np.zeros((2, 2, 3), np.uint8))
    assert module.EXECUTORS_LIST == {}
