"""Files that are not TFRecord files at all are named together, as MindSpore 2.10 names them (its
sentence, then each file with headrace's reason), and a valid file among them is not named."""
import pytest

import headrace.dataset as ds
from headrace._util.errors import PipelineError
from tests.sources.makers import write_tfrecord


def test_every_file_that_is_not_tfrecord_is_named(tmp_path):
    good = str(tmp_path / "b.tfrecord")
    write_tfrecord(good, [{"v": ("int64", [1])}])
    (tmp_path / "a.txt").write_text("garbage text")
    (tmp_path / "c.json").write_text('{"x": 1}')
    d = ds.TFRecordDataset([str(tmp_path / "c.json"), good, str(tmp_path / "a.txt")], shuffle=False)
    with pytest.raises(PipelineError) as info:
        next(d.create_dict_iterator(num_epochs=1, output_numpy=True))
    text = str(info.value)
    assert ("Invalid file. The following files either cannot be opened, or are not valid TFRecordDataset files:\n"
            f"    {tmp_path / 'a.txt'}: Invalid TFRecord file, record 0:") in text
    assert f"\n    {tmp_path / 'c.json'}: Invalid TFRecord file, record 0: the file ends inside a record header" in text
    assert good not in text
    assert info.value.file == str(tmp_path / "a.txt")
