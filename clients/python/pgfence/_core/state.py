"""What one held lease knows about itself, shared by the sync and asyncio flavours.

Both flavours keep one LeaseState per lease: its token, the local deadline
(the last successful renewal's send time plus the TTL, on the monotonic
clock: the server's expiry cannot come before it), whether renewals are
failing (suspended), and how it was lost.  Loss is final: once declared,
nothing makes the lease held again.
"""
from __future__ import annotations

import datetime as _dt
import logging
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from .config import Timing, logger
from .errors import BROKEN, EXPIRED, RELEASED, SUPERSEDED, LeaseLostError

# fence_wait_lease_end and fence_lease_status say how a lease ended; a
# release this process did not do is "broken" to it.
_SERVER_HOW = {"expired": EXPIRED, "superseded": SUPERSEDED, "released": BROKEN}


def how_from_server(status: Optional[str]) -> str:
    return _SERVER_HOW.get(status or "", EXPIRED)


class LeaseState:
    def __init__(self, key: str, token: int, owner: str, timing: Timing, sent_at: float,
                 expires_at: Optional[float], server_started: Any, permits: Optional[int]):
        self.key = key
        self.token = token
        self.owner = owner
        self.timing = timing
        self.permits = permits
        self.expires_epoch = expires_at
        self.server_started = server_started
        self.deadline = sent_at + timing.ttl
        self.suspended = False
        self.how: Optional[str] = None
        self.lost_cause: Optional[BaseException] = None
        self.releasing = False
        self.released_ok = False
        self._lock = threading.Lock()
        self._callbacks: List[Callable[[LeaseLostError], Any]] = []
        if logger.isEnabledFor(logging.INFO):
            logger.info("acquired lease %r, token %d, ttl %gs, owner %s", key, token, timing.ttl, owner,
                        extra=self._extra("acquired"))

    def _extra(self, event: str, **more: Any) -> Dict[str, Any]:
        d = {"pgfence_event": event, "pgfence_key": self.key, "pgfence_token": self.token}
        d.update(more)
        return d

    @property
    def lost(self) -> bool:
        return self.how is not None

    def remaining(self, now: Optional[float] = None) -> float:
        """Seconds left before the local deadline."""
        return self.deadline - (time.monotonic() if now is None else now)

    @property
    def expires_at(self) -> Optional[_dt.datetime]:
        """The expiry the server last granted, by its lease clock (UTC)."""
        epoch = self.expires_epoch
        return None if epoch is None else _dt.datetime.fromtimestamp(epoch, _dt.timezone.utc)

    def renewed(self, sent_at: float, expires_at: Optional[float]) -> None:
        with self._lock:
            if self.how is not None:
                return
            self.deadline = max(self.deadline, sent_at + self.timing.ttl)
            self.expires_epoch = expires_at
            was = self.suspended
            self.suspended = False
        if was:
            logger.info("lease %r renewed again after a suspension", self.key,
                        extra=self._extra("renewed"))
        else:
            logger.debug("renewed lease %r", self.key, extra=self._extra("renewed"))

    def suspend(self, err: BaseException) -> None:
        with self._lock:
            if self.how is not None or self.suspended:
                return
            self.suspended = True
        why = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        logger.warning("lease %r suspended: renewal failed (%s); lost in %.2fs unless a renewal succeeds",
                       self.key, why, max(self.remaining(), 0.0), extra=self._extra("suspended"))

    def add_callback(self, callback: Callable[[LeaseLostError], Any]) -> bool:
        """Keep callback for the loss; False if the lease is lost already."""
        with self._lock:
            if self.how is None:
                self._callbacks.append(callback)
                return True
            return False

    def mark_lost(self, how: str, cause: Optional[BaseException] = None
                  ) -> Optional[List[Callable[[LeaseLostError], Any]]]:
        """Declare the lease lost; the callbacks to run if this was the first word of it."""
        with self._lock:
            if self.how is not None:
                return None
            self.how = how
            self.lost_cause = cause
            callbacks, self._callbacks = self._callbacks, []
        if how != RELEASED:
            logger.warning("lost lease %r (token %d): %s", self.key, self.token, how,
                           extra=self._extra("lost", pgfence_how=how))
        return callbacks

    def release_result(self, released: bool) -> None:
        """What fence_release answered at the end of the block."""
        self.released_ok = bool(released)

    def released(self) -> None:
        """The block ended: the lease is no longer held, whatever happened before."""
        with self._lock:
            if self.how is None:
                self.how = RELEASED
            self._callbacks = []
        if not logger.isEnabledFor(logging.INFO):
            return
        if self.released_ok:
            logger.info("released lease %r (token %d)", self.key, self.token,
                        extra=self._extra("released"))
        else:
            logger.info("lease %r (token %d) was no longer held at its release", self.key, self.token,
                        extra=self._extra("released", pgfence_held=False))

    def error(self) -> LeaseLostError:
        assert self.how is not None
        return LeaseLostError(self.key, self.token, self.how, cause=self.lost_cause)

    def run_callbacks(self, callbacks: List[Callable[[LeaseLostError], Any]]) -> None:
        err = self.error()
        for cb in callbacks:
            try:
                cb(err)
            except Exception:  # a callback's failure must not stop the others
                logger.exception("on_lost callback %r of lease %r failed", cb, self.key)
