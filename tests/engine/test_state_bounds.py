"""A checkpoint state past the iterator's last epoch is refused (issue 39 item 12)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace.dataset as ds


def _data():
    return ds.NumpySlicesDataset({"x": np.arange(4)}, shuffle=False).batch(2)


def _state(num_epochs, **change):
    it = _data().create_tuple_iterator(output_numpy=True, num_epochs=num_epochs)
    state = dict(it.get_state(), **change)
    it.stop()
    return state


def test_step_past_the_last_epoch_is_refused_and_nothing_changes():
    it = _data().create_tuple_iterator(output_numpy=True, num_epochs=2)
    with pytest.raises(ValueError, match=r"^set_state: state\['epoch'\] is 2, the iterator's num_epochs \(every epoch "
                                         r"read\), so state\['step'\] must be 0, but got 1: "):
        it.set_state(_state(2, epoch=2, step=1))
    assert [r[0].tolist() for r in it] == [[0, 1], [2, 3]]  # the refused state left the iterator as it was
    it.stop()


def test_the_end_state_restores_to_an_iterator_that_yields_nothing():
    it = _data().create_tuple_iterator(output_numpy=True, num_epochs=2)
    for _ in range(2):
        assert len(list(it)) == 2
    end = it.get_state()
    assert (end["epoch"], end["step"]) == (2, 0)
    it2 = _data().create_tuple_iterator(output_numpy=True, num_epochs=2)
    it2.set_state(end)
    with pytest.raises(RuntimeError, match="User tries to fetch data beyond the specified number of epochs"):
        next(iter(it2))
    it.stop()
    it2.stop()


@settings(max_examples=30, deadline=None)
@given(epoch=st.integers(0, 3), step=st.integers(0, 2))
def test_a_restored_state_never_yields_more_than_the_epochs_left(epoch, step):
    it = _data().create_tuple_iterator(output_numpy=True, num_epochs=2)
    try:
        it.set_state(_state(2, epoch=epoch, step=step))
    except ValueError:
        assert epoch > 2 or (epoch == 2 and step > 0)
        it.stop()
        return
    total = sum(len(list(it)) for _ in range(2 - epoch))
    with pytest.raises(RuntimeError, match="User tries to fetch data beyond the specified number of epochs"):
        next(iter(it))
    it.stop()
    assert total == (2 - epoch) * 2 - step


def test_start_at_past_the_end_is_refused():
    from headrace._engine.run import PipelineRun
    run = PipelineRun(_data()._plan, num_epochs=2)
    with pytest.raises(ValueError, match=r"^start_at: epoch 2, step 1 is past the end of the iterator's 2 epochs\.$"):
        run.start_at(2, 1)
    run.close()
