"""An ordered thread pool: work goes in as chunks, results come out in submission order.

Threads suit work that releases the GIL (OpenCV, libjpeg-turbo, NumPy, file reads). Each chunk
runs ``fn(chunk)`` in a worker; ``get()`` returns the oldest chunk's result, re-raising what it
raised. Every wait is bounded by the pool's own liveness: a pool that is closed stops waiting.
"""
from __future__ import annotations

import collections
import concurrent.futures as cf
import threading
from typing import Any, Callable


class OrderedThreadPool:
    def __init__(self, fn: Callable[[Any], Any], num_workers: int, name: str = "headrace") -> None:
        self._fn = fn
        self._pool = cf.ThreadPoolExecutor(max_workers=num_workers, thread_name_prefix=name)
        self._pending: collections.deque[cf.Future] = collections.deque()
        self._closed = False
        self._lock = threading.Lock()

    @property
    def pending(self) -> int:
        return len(self._pending)

    def submit(self, chunk: Any) -> None:
        self._pending.append(self._pool.submit(self._fn, chunk))

    def get(self) -> Any:
        """The oldest chunk's result (blocks until it is done)."""
        fut = self._pending.popleft()
        return fut.result()

    def cancel_all(self) -> None:
        """Forgets everything in flight (waits for running chunks so no work outlives a reset)."""
        while self._pending:
            fut = self._pending.popleft()
            if not fut.cancel():
                try:
                    fut.result()
                except BaseException:  # noqa: BLE001 - discarded work; its error does not matter
                    pass

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for fut in self._pending:
            fut.cancel()
        self._pending.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)
