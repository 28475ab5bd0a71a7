"""Mirror of ``mindspore.dataset.callback``: callbacks a map calls as its rows and epochs go by
(``map(callbacks=...)``), and the training side of ``WaitedDSCallback`` (``TrainSync``)."""
from headrace.dataset.callback._callbacks import DSCallback, DSRunContext, TrainSync, WaitedDSCallback

__all__ = ["DSCallback", "DSRunContext", "TrainSync", "WaitedDSCallback"]
