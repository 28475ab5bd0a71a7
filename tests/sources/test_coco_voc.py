"""VOCDataset, CocoDataset, ManifestDataset, CelebADataset."""
import io
import json
import os

import numpy as np
import pytest
from PIL import Image

import headrace.dataset as ds
from tests.helpers import assert_resume_equivalence, rows

from .makers import make_celeba, make_coco, make_manifest, make_voc, palette_png, png_bytes


def annots(d):
    """Rows without the image column, as plain lists with dtypes."""
    return [[(v.dtype.str, v.tolist()) for v in r[1:]] for r in d.create_tuple_iterator(output_numpy=True)]


# ---- VOC ------------------------------------------------------------------------------------

@pytest.fixture
def voc(tmp_path):
    make_voc(tmp_path)
    return str(tmp_path)


def test_voc_segmentation(voc):
    d = ds.VOCDataset(voc, task="Segmentation", usage="train", shuffle=False)
    assert d.get_col_names() == ["image", "target"] and d.get_dataset_size() == 2
    got = rows(d)
    assert bytes(got[0][0]) == png_bytes(0) and bytes(got[0][1]) == palette_png(10)
    assert bytes(got[1][0]) == png_bytes(1)
    d = ds.VOCDataset(voc, task="Segmentation", usage="val", shuffle=False, decode=True)
    (image, target), = d.create_tuple_iterator(output_numpy=True)
    np.testing.assert_array_equal(image, np.asarray(Image.open(io.BytesIO(png_bytes(2)))))
    np.testing.assert_array_equal(target, np.asarray(Image.open(io.BytesIO(palette_png(12))).convert("RGB")))
    with pytest.raises(NotImplementedError, match="Only 'Detection' support get_class_indexing."):
        d.get_class_indexing()


def test_voc_detection(voc):
    d = ds.VOCDataset(voc, task="Detection", shuffle=False)
    assert d.get_col_names() == ["image", "bbox", "label", "difficult", "truncate"]
    assert d.get_class_indexing() == {"cat": 0, "dog": 1, "person": 2}
    assert d.num_classes() is None
    assert annots(d) == [
        [("<f4", [[1.0, 2.0, 3.0, 1.0], [1.0, 1.0, 1.5, 2.0]]), ("<u4", [[1], [2]]), ("<u4", [[0], [1]]),
         ("<u4", [[0], [1]])],
        [("<f4", [[2.0, 1.0, 3.0, 3.0]]), ("<u4", [[0]]), ("<u4", [[0]]), ("<u4", [[0]])],
        [("<f4", [[3.0, 3.0, 1.0, 1.0]]), ("<u4", [[1]]), ("<u4", [[0]]), ("<u4", [[1]])]]
    d = ds.VOCDataset(voc, task="Detection", shuffle=False, class_indexing={"dog": 5, "cat": 1}, extra_metadata=True)
    assert d.get_col_names()[-1] == "_meta-filename"
    d = d.rename("_meta-filename", "filename")  # iterators hide _meta- columns unless renamed, as MindSpore's
    assert [(r[2], r[5]) for r in rows(d)] == [([[5]], "2007_000002"), ([[1]], "2008_000003"), ([[5]], "2007_000001")]
    only_cat = ds.VOCDataset(voc, task="Detection", shuffle=False, class_indexing={"cat": 1})
    assert only_cat.get_dataset_size() == 1 and only_cat.get_class_indexing() == {"cat": 1}
    ds.config.set_seed(4)
    assert_resume_equivalence(ds.VOCDataset(voc, task="Detection"), num_epochs=2)


@pytest.mark.parametrize("xml, msg", [
    ("<annotation><object><name>cat</name></object></annotation>", "Invalid xml, the node of bndbox is missing in"),
    ("<annotation><object><name>cat</name><bndbox><xmin>5</xmin><ymin>1</ymin><xmax>5</xmax><ymax>4</ymax>"
     "</bndbox></object></annotation>", r"should be greater than 0, but got \{5, 1, 5, 4\}"),
    ("<annotation><object><name>cat</name><bndbox><xmin>0</xmin><ymin>1</ymin><xmax>2.5</xmax><ymax>4</ymax>"
     "</bndbox></object></annotation>", r"but got \{0, 1, 2.5, 4\}"),
    ("<annotation><object>", "Invalid xml, failed to load .*the xml file is damaged or incorrect format"),
    ("<annotation></annotation>", "Invalid xml, the node of object is missing in"),
])
def test_voc_damaged_annotation_names_the_file(voc, xml, msg):
    bad = os.path.join(voc, "Annotations", "2008_000003.xml")
    with open(bad, "w") as f:
        f.write(xml)
    with pytest.raises(RuntimeError, match=msg) as e:
        ds.VOCDataset(voc, task="Detection").get_dataset_size()
    assert e.value.file == bad


def test_voc_missing_files(voc):
    os.remove(os.path.join(voc, "Annotations", "2007_000001.xml"))
    with pytest.raises(RuntimeError, match=r"Invalid file path, .*2007_000001\.xml does not exist"):
        ds.VOCDataset(voc, task="Detection").get_dataset_size()
    os.remove(os.path.join(voc, "JPEGImages", "2007_000001.jpg"))
    with pytest.raises(RuntimeError, match=r"failed to open .*2007_000001\.jpg"):
        rows(ds.VOCDataset(voc, task="Segmentation", shuffle=False))


@pytest.mark.parametrize("kw, exc, msg", [
    (dict(task="Bad"), ValueError, "Invalid task : Bad."),
    (dict(usage="nope"), ValueError, r"The file .*ImageSets/Segmentation/nope\.txt does not exist or permission denied!"),
    (dict(task="Detection", usage="nope"), ValueError, r"ImageSets/Main/nope\.txt does not exist"),
    (dict(class_indexing={"a": 1}), ValueError, "class_indexing is not supported in Segmentation task."),
    (dict(extra_metadata=1), TypeError, "extra_metadata"),
    (dict(decode="yes"), TypeError, "decode"),
])
def test_voc_argument_checks(voc, kw, exc, msg):
    with pytest.raises(exc, match=msg):
        ds.VOCDataset(voc, **kw)


# ---- COCO -----------------------------------------------------------------------------------

@pytest.fixture
def coco(tmp_path):
    make_coco(tmp_path)
    return str(tmp_path / "images"), str(tmp_path)


def test_coco_detection(coco):
    images, root = coco
    d = ds.CocoDataset(images, os.path.join(root, "ann.json"), shuffle=False)
    assert d.get_col_names() == ["image", "bbox", "category_id", "iscrowd"]
    assert d.get_dataset_size() == 3
    assert d.get_class_indexing() == {"person": [1], "dog": [5], "cat": [3]}
    assert annots(d) == [
        [("<f4", [[1.0, 2.0, 3.0, 1.5], [0.0, 0.0, 2.0, 2.0]]), ("<u4", [[5], [1]]), ("<u4", [[0], [1]])],
        [("<f4", [[2.0, 1.0, 1.0, 1.0]]), ("<u4", [[3]]), ("<u4", [[0]])],
        [("<f4", [[1.0, 1.0, 1.0, 1.0]]), ("<u4", [[3]]), ("<u4", [[0]])]]
    got = rows(ds.CocoDataset(images, os.path.join(root, "ann.json"), shuffle=False, extra_metadata=True)
               .rename("_meta-filename", "filename"))
    assert [bytes(r[0]) == png_bytes(k) for k, r in enumerate(got)] == [True, True, True]
    assert [r[-1] for r in got] == ["b", "a", "c"]
    dec = ds.CocoDataset(images, os.path.join(root, "ann.json"), shuffle=False, decode=True)
    assert [r[0].shape for r in dec.create_tuple_iterator(output_numpy=True)] == [(4, 5, 3)] * 3


def test_coco_other_tasks(coco):
    images, root = coco
    stuff = ds.CocoDataset(images, os.path.join(root, "ann.json"), task="Stuff", shuffle=False)
    assert stuff.get_col_names() == ["image", "segmentation", "iscrowd"]
    assert annots(stuff) == [
        [("<f4", [[1.0, 1.0, 2.0, 2.0, 3.0, 1.0], [2.0, 3.0, 4.0, 1.0, -1.0, -1.0]]), ("<u4", [[0], [1]])],
        [("<f4", [[2.0, 1.0, 3.0, 1.0, 3.0, 2.0], [0.0, 0.0, 1.0, 0.0, 1.0, 1.0]]), ("<u4", [[0]])],
        [("<f4", [[1.0, 1.0, 2.0, 1.0, 2.0, 2.0]]), ("<u4", [[0]])]]
    with pytest.raises(NotImplementedError, match="Only 'Detection' and 'Panoptic' support get_class_indexing."):
        stuff.get_class_indexing()
    kp = ds.CocoDataset(images, os.path.join(root, "ann.json"), task="Keypoint", shuffle=False)
    got = annots(kp)
    assert kp.get_col_names() == ["image", "keypoints", "num_keypoints"]
    assert got[0][0][1][0][:6] == [1.0, 2.0, 2.0, 3.0, 4.0, 1.0] and got[0][1] == ("<u4", [[2], [0]])
    assert [len(r[0][1][0]) for r in got] == [51, 51, 51]
    pan = ds.CocoDataset(images, os.path.join(root, "pan.json"), task="Panoptic", shuffle=False)
    assert pan.get_col_names() == ["image", "bbox", "category_id", "iscrowd", "area"]
    assert annots(pan) == [
        [("<f4", [[1.0, 2.0, 3.0, 1.0], [0.0, 0.0, 1.0, 1.0]]), ("<u4", [[5], [3]]), ("<u4", [[0], [1]]),
         ("<u4", [[3], [1]])],
        [("<f4", [[1.0, 1.0, 1.0, 1.0]]), ("<u4", [[1]]), ("<u4", [[0]]), ("<u4", [[1]])]]
    assert pan.get_class_indexing() == {"person": [1, 1], "dog": [5, 0], "cat": [3, 1]}
    cap = ds.CocoDataset(images, os.path.join(root, "cap.json"), task="Captioning", shuffle=False)
    assert annots(cap) == [[("<U5", [["a dog"], ["two"]])], [("<U8", [["cat here"]])]]


@pytest.mark.parametrize("change, msg", [
    (lambda j: j["annotations"][1].pop("bbox"), r"the attribute of 'bbox' is missing in annotation file: .*ann\.json"
                                                r"\. \(in the annotation with id 1\)"),
    (lambda j: j["annotations"][1].update(image_id=99), "the attribute of 'image_id': 99 is missing in the node of "
                                                        "'image' from annotation file"),
    (lambda j: j.update(images=[]), "the 'image' node is missing"),
    (lambda j: j["annotations"][2]["segmentation"].pop("counts"), "the attribute of 'counts' is missing"),
    (lambda j: j["categories"][1].pop("isthing"), "the attribute of 'isthing' is missing in the node of 'categories'"),
    (lambda j: j["annotations"][3].pop("iscrowd"), r"the attribute of 'iscrowd' is missing .*\(in the annotation with "
                                                   r"id 3\)"),
])
def test_coco_damaged_annotations(coco, change, msg):
    images, root = coco
    name = "pan.json" if "isthing" in msg else "ann.json"
    path = os.path.join(root, name)
    doc = json.load(open(path))
    change(doc)
    json.dump(doc, open(path, "w"))
    task = "Panoptic" if "isthing" in msg else "Stuff" if ("counts" in msg or "iscrowd" in msg) else "Detection"
    with pytest.raises(RuntimeError, match=msg) as e:
        ds.CocoDataset(images, path, task=task).get_dataset_size()
    assert e.value.file == path


def test_coco_detection_iscrowd_defaults_to_zero(coco):
    images, root = coco
    path = os.path.join(root, "ann.json")
    doc = json.load(open(path))
    for a in doc["annotations"]:
        a.pop("iscrowd")
    json.dump(doc, open(path, "w"))
    assert [r[3] for r in rows(ds.CocoDataset(images, path, shuffle=False))] == [[[0], [0]], [[0]], [[0]]]


def test_coco_bad_json_and_missing_image(coco):
    images, root = coco
    bad = os.path.join(root, "bad.json")
    open(bad, "w").write("{bad")
    with pytest.raises(RuntimeError, match=f"Invalid annotation file, Coco Dataset annotation file:{bad} load failed"):
        ds.CocoDataset(images, bad).get_dataset_size()
    os.remove(os.path.join(images, "a.jpg"))
    with pytest.raises(RuntimeError, match=r"failed to open .*a\.jpg") as e:
        rows(ds.CocoDataset(images, os.path.join(root, "ann.json"), shuffle=False))
    assert e.value.index == 1


@pytest.mark.parametrize("kw, exc, msg", [
    (dict(task="Bad"), ValueError, "Invalid task type: Bad."), (dict(task=1), TypeError, "task"),
    (dict(annotation_file="/no/such.json"), ValueError, "The file /no/such.json does not exist or permission denied!"),
])
def test_coco_argument_checks(coco, kw, exc, msg):
    images, root = coco
    kw.setdefault("annotation_file", os.path.join(root, "ann.json"))
    with pytest.raises(exc, match=msg):
        ds.CocoDataset(images, **kw)


# ---- Manifest -------------------------------------------------------------------------------

def test_manifest(tmp_path):
    path = make_manifest(tmp_path)
    d = ds.ManifestDataset(path, shuffle=False)
    assert d.get_col_names() == ["image", "label"]
    got = list(d.create_tuple_iterator(output_numpy=True))
    assert [(bytes(r[0][:4]), r[1].dtype.str, r[1].tolist()) for r in got] == [
        (b"\x89PNG", "<i4", [1, 0]), (b"\x89PNG", "<i4", 0), (b"GIF8", "<i4", 2)]
    assert d.get_class_indexing() == {"cat": 0, "dog": 1, "gif": 2} and d.num_classes() == 3
    d = ds.ManifestDataset(path, shuffle=False, class_indexing={"cat": 7, "dog": 2})
    assert [r[1] for r in rows(d)] == [[2, 7], 7]
    assert [r[1] for r in rows(ds.ManifestDataset(path, usage="eval"))] == [0]
    assert [r[1] for r in rows(ds.ManifestDataset(path, sampler=ds.PKSampler(1, shuffle=False)))] == [0, [1, 0], 2]


def test_manifest_errors(tmp_path):
    path = make_manifest(tmp_path)
    with pytest.raises(ValueError, match=r"Input usage is not within the valid set of \['train', 'eval', 'inference'\]"):
        ds.ManifestDataset(path, usage="TRAIN")
    bad = tmp_path / "bad.manifest"
    bad.write_text('{"source": "x"\n')
    with pytest.raises(RuntimeError, match=f"Invalid manifest file, parse ManiFest file: {bad} failed at line 1"):
        ds.ManifestDataset(str(bad)).get_dataset_size()
    bad.write_text(json.dumps({"source": str(tmp_path / "zz.jpg"), "usage": "train", "annotation": []}) + "\n")
    with pytest.raises(RuntimeError, match=r"Invalid file path, .*zz\.jpg does not exist \(line 1 of"):
        ds.ManifestDataset(str(bad)).get_dataset_size()
    bad.write_text(json.dumps({"source": str(tmp_path / "a.png"), "usage": "train", "annotation": [{}]}) + "\n")
    with pytest.raises(RuntimeError, match="parse label name failed at line 1"):
        ds.ManifestDataset(str(bad)).get_dataset_size()
    empty = tmp_path / "empty.manifest"
    empty.write_text("")
    with pytest.raises(RuntimeError, match="ManifestDataset API can't read the data file"):
        rows(ds.ManifestDataset(str(empty)))


# ---- CelebA ---------------------------------------------------------------------------------

def test_celeba(tmp_path):
    make_celeba(tmp_path)
    root = str(tmp_path)
    attrs = {u: [r[1] for r in rows(ds.CelebADataset(root, usage=u, shuffle=False))]
             for u in ("all", "train", "valid", "test")}
    assert attrs == {"all": [[1, 0, 1], [0, 0, 1], [1, 1, 0], [0, 1, 1]], "train": [[1, 0, 1], [0, 1, 1]],
                     "valid": [[0, 0, 1]], "test": [[1, 1, 0]]}
    d = ds.CelebADataset(root, shuffle=False, extensions=[".png"], decode=True)
    (image, attr), = d.create_tuple_iterator(output_numpy=True)
    assert image.shape == (4, 5, 3) and attr.dtype == np.uint32 and attr.tolist() == [1, 1, 0]
    assert ds.CelebADataset(root).get_class_indexing() == {}
    with pytest.raises(ValueError, match="usage should be 'all', 'train', 'valid' or 'test'."):
        ds.CelebADataset(root, usage="bad")
    os.remove(tmp_path / "list_eval_partition.txt")
    assert len(rows(ds.CelebADataset(root))) == 4
    with pytest.raises(RuntimeError, match=r"Invalid file path, .*list_eval_partition\.txt does not exist"):
        rows(ds.CelebADataset(root, usage="train"))
    (tmp_path / "list_attr_celeba.txt").write_text("1\nA B\nx.jpg 1\n")
    with pytest.raises(RuntimeError, match=r"line 3 of .*list_attr_celeba\.txt has 1 attribute values, but the file "
                                           r"names 2 attributes"):
        rows(ds.CelebADataset(root))
