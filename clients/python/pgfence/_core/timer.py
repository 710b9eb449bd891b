"""One timer thread for all the leases of a (threaded) Fence.

A lease has two things to do later: renew itself every third of its TTL
(and give up at its local deadline), and join the fence's watchdog once it
has been held for a moment.  A thread per lease for that costs more than a
short job's own work (starting and joining it, each time), and most leases
of a busy worker end before either is due.  So a Fence keeps one thread
that sleeps until the earliest thing due, and a few worker threads for the
renewals themselves, which wait on the network.
"""
from __future__ import annotations

import concurrent.futures
import heapq
import itertools
import threading
import time
from typing import Any, Callable, List, Optional, Tuple

from .config import logger

# Renewals in flight at once, for all the leases of one Fence.  A renewal
# that hangs on a stalled network holds a worker until the driver gives up;
# the others go on on the rest.
RENEW_WORKERS = 16


class Entry:
    """Something due at a time; cancel() before then and it never runs."""

    __slots__ = ("when", "fn", "cancelled")

    def __init__(self, when: float, fn: Callable[[], Any]):
        self.when = when
        self.fn: Optional[Callable[[], Any]] = fn
        self.cancelled = False

    def cancel(self) -> None:
        # The entry stays in the heap until its time comes; it must not keep
        # its lease alive until then (a busy worker releases thousands of
        # leases in a renewal period).
        self.cancelled = True
        self.fn = None


class Timer:
    """Runs short callables at given times (time.monotonic()) on one thread,
    and hands work that waits on the server to a pool of worker threads."""

    def __init__(self, name: str):
        self._name = name
        self._cond = threading.Condition()
        self._heap: List[Tuple[float, int, Entry]] = []
        self._seq = itertools.count()
        self._thread: Optional[threading.Thread] = None
        self._workers: Optional[concurrent.futures.ThreadPoolExecutor] = None
        self._closed = False

    def at(self, when: float, fn: Callable[[], Any]) -> Entry:
        """Run fn at when (or soon after); its errors are its own to handle."""
        entry = Entry(when, fn)
        with self._cond:
            if self._closed:
                entry.cancelled = True
                return entry
            first = not self._heap or when < self._heap[0][0]
            heapq.heappush(self._heap, (when, next(self._seq), entry))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            elif first:
                self._cond.notify()
        return entry

    def submit(self, fn: Callable[..., Any], *args: Any) -> "concurrent.futures.Future[Any]":
        with self._cond:
            if self._workers is None:
                self._workers = concurrent.futures.ThreadPoolExecutor(
                    max_workers=RENEW_WORKERS, thread_name_prefix=f"{self._name}-renew")
            workers = self._workers
        return workers.submit(fn, *args)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._heap.clear()
            self._cond.notify()
            thread, workers = self._thread, self._workers
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2.0)
        if workers is not None:
            workers.shutdown(wait=False)

    def _next(self) -> Optional[Entry]:
        """The next entry due, once it is; None when closed."""
        with self._cond:
            while not self._closed:
                if not self._heap:
                    self._cond.wait()
                    continue
                when, _, entry = self._heap[0]
                if entry.cancelled:
                    heapq.heappop(self._heap)
                    continue
                left = when - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                heapq.heappop(self._heap)
                return entry
            return None

    def _run(self) -> None:
        while True:
            entry = self._next()
            if entry is None:
                return
            fn = entry.fn
            if entry.cancelled or fn is None:
                continue
            try:
                fn()
            except Exception:
                # One lease's fault must not stop the others' renewals.
                logger.exception("pgfence timer: a scheduled call failed")
