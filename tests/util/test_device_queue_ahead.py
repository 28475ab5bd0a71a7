"""``Direct``'s transfer in the pipeline's prefetch thread (``Ahead``), and the rows it leaves to
the loop's thread (a transfer that lets go of the GIL, for a row the loop waits for or a loop that
takes its batches back to back)."""
import threading

import pytest

from headrace._util import device_queue
from headrace._util.device_queue import LOOP_STEP_S, Ahead, Direct, Made


class Transfer:
    """Records the thread each transfer runs in; ``lets_go_of_gil`` as given."""

    def __init__(self, lets_go_of_gil):
        self.lets_go_of_gil = lets_go_of_gil
        self.threads = []

    def __call__(self, row):
        self.threads.append(threading.current_thread().name)
        return [f"t({v})" for v in row]


def convert(row):
    return [f"c({v})" for v in row]


@pytest.mark.parametrize("gil_free", [True, False])
def test_ahead_transfers_a_row_unless_the_loop_waits_for_it_and_the_transfer_lets_go_of_the_gil(gil_free):
    transfer = Transfer(gil_free)
    ahead = Ahead(transfer, convert)
    made = ahead([1], False)
    assert type(made) is Made and not made.pending and made.value == ["t(c(1))"] and made.error is None
    waited = ahead([2], True)
    if gil_free:
        assert waited.pending and waited.value == ["c(2)"] and waited.error is None  # converted, not transferred
        assert len(transfer.threads) == 1
    else:
        assert not waited.pending and waited.value == ["t(c(2))"]
        assert len(transfer.threads) == 2
    assert ahead(made, True) is made  # made ahead already: handed on as it is


def test_direct_transfers_a_pending_row_in_the_loops_thread():
    transfer = Transfer(True)
    rows = [([1], "s1"), ([2], "s2")]
    direct = Direct(lambda: rows.pop(0), transfer, lambda: 0)
    pending = direct.ahead(rows[0][0], True)
    rows[0] = (pending, "s1")
    ahead_made = direct.ahead(rows[1][0], False)  # (in this thread, standing in for the prefetch thread)
    rows[1] = (ahead_made, "s2")
    transfer.threads.clear()
    out = []

    def loop():
        out.extend([direct.get(), direct.get()])

    t = threading.Thread(target=loop, name="the-loop")
    t.start()
    t.join(60)
    assert out == [("batch", ["t(1)"], "s1"), ("batch", ["t(2)"], "s2")]
    assert transfer.threads == ["the-loop"]  # only the pending row, in the loop's thread
    assert direct.stats.have_sent == 2


def test_a_pending_row_whose_transfer_fails_raises_in_the_loop():
    class Failing(Transfer):
        def __call__(self, row):
            raise OverflowError("no room on the device")

    direct = Direct(lambda: (Made([1], 0.0, 0.0, None, pending=True), "s"), Failing(True), lambda: 0)
    with pytest.raises(OverflowError, match="no room on the device"):
        direct.get()


def test_direct_says_when_it_transferred_a_row_in_the_callers_thread():
    transfer, told = Transfer(True), []
    ahead = Ahead(transfer, None)
    rows = [(ahead([1], False), "s1"), (ahead([2], True), "s2"), ([3], "s3")]  # ahead, pending, unmade
    direct = Direct(lambda: rows.pop(0), transfer, lambda: 0, None, lambda: told.append(len(transfer.threads)))
    assert [direct.get()[1] for _ in range(3)] == [["t(1)"], ["t(2)"], ["t(3)"]]
    assert told == [2, 3]  # after the pending row's transfer and the unmade row's, not the one made ahead


def test_a_loop_that_takes_its_batches_back_to_back_gets_them_put_in_its_own_thread(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(device_queue, "_clock", lambda: now[0])
    transfer = Transfer(True)
    rows = [([i], f"s{i}") for i in range(4)]
    direct = Direct(lambda: rows.pop(0), transfer, lambda: 0)
    assert not direct.ahead([9], False).pending  # before any batch: put ahead (the first batch is ready)
    direct.get()
    now[0] += LOOP_STEP_S / 2  # back to back (loop bookkeeping only)
    direct.get()
    assert direct.ahead.loop_steps is False
    assert direct.ahead([9], False).pending  # left to the loop's thread
    now[0] += LOOP_STEP_S  # a training step
    direct.get()
    assert direct.ahead.loop_steps is True
    assert not direct.ahead([9], False).pending and direct.ahead([9], True).pending  # (unless it waits)
    now[0] += LOOP_STEP_S / 4
    direct.get()
    assert direct.ahead.loop_steps is False
    assert len(transfer.threads) == 6  # the 4 rows in get() and the 2 put ahead
