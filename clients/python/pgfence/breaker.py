"""Shared circuit breakers (fence_breaker_allow / fence_breaker_report), sync and asyncio.

    with fx.breaker("payments").call():   # BreakerOpenError while it is open
        charge()                          # an exception reports a failure

Exactly one caller is told to probe a breaker that is open and due; its
report carries the probe token.  Options of fence_breaker_allow (thresholds,
open time) are passed to ``call()`` / ``allow()`` as keyword arguments.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import time
from dataclasses import dataclass
from typing import Any, AsyncIterator, Iterator, Optional

from ._core.errors import FenceError

_ALLOW_OPTIONS = ("failure_threshold", "failure_rate", "window_size", "open_for",
                  "max_open_for", "probe_ttl")


class BreakerOpenError(FenceError):
    """The breaker is open: fail fast, and try again at ``retry_at``."""

    def __init__(self, name: str, retry_at: Optional[_dt.datetime]):
        super().__init__(f"circuit breaker {name!r} is open; retry at {retry_at}")
        self.name = name
        self.retry_at = retry_at


@dataclass(frozen=True)
class Decision:
    decision: str                 # "call", "probe" or "fail_fast"
    probe_token: Optional[int]
    retry_at: Optional[_dt.datetime]


def _allow_sql(options: dict) -> tuple:
    unknown = set(options) - set(_ALLOW_OPTIONS)
    if unknown:
        raise TypeError(f"unknown breaker options: {', '.join(sorted(unknown))}")
    names = "".join(f", {k} => %({k})s" for k in options)
    sql = ("SELECT decision, probe_token::bigint, retry_at "
           f"FROM fence_breaker_allow(%(name)s::text{names})")
    return sql, options


def _go_ahead(name: str, d: Decision) -> float:
    """Raise BreakerOpenError for fail_fast; else the start time of the call."""
    if d.decision == "fail_fast":
        raise BreakerOpenError(name, d.retry_at)
    return time.monotonic()


def _took(start: float) -> _dt.timedelta:
    return _dt.timedelta(seconds=time.monotonic() - start)


_REPORT = ("SELECT fence_breaker_report(%(name)s::text, %(success)s, %(probe)s::bigint, "
           "%(duration)s::interval)")


class Breaker:
    def __init__(self, pool: Any, name: str):
        self.pool = pool
        self.name = name

    def allow(self, **options: Any) -> Decision:
        sql, params = _allow_sql(options)
        with self.pool.connection() as conn:
            row = conn.execute(sql, {"name": self.name, **params}).fetchone()
        return Decision(*row)

    def report(self, success: bool, probe_token: Optional[int] = None,
               duration: Optional[_dt.timedelta] = None) -> str:
        with self.pool.connection() as conn:
            return conn.execute(_REPORT, {"name": self.name, "success": success,
                                          "probe": probe_token, "duration": duration}).fetchone()[0]

    @contextlib.contextmanager
    def call(self, **options: Any) -> Iterator[Decision]:
        d = self.allow(**options)
        start = _go_ahead(self.name, d)
        try:
            yield d
        except BaseException:
            self.report(False, d.probe_token, _took(start))
            raise
        self.report(True, d.probe_token, _took(start))


class AsyncBreaker:
    def __init__(self, pool: Any, name: str):
        self.pool = pool
        self.name = name

    async def allow(self, **options: Any) -> Decision:
        sql, params = _allow_sql(options)
        async with self.pool.connection() as conn:
            cur = await conn.execute(sql, {"name": self.name, **params})
            row = await cur.fetchone()
        return Decision(*row)

    async def report(self, success: bool, probe_token: Optional[int] = None,
                     duration: Optional[_dt.timedelta] = None) -> str:
        async with self.pool.connection() as conn:
            cur = await conn.execute(_REPORT, {"name": self.name, "success": success,
                                               "probe": probe_token, "duration": duration})
            row = await cur.fetchone()
            return row[0]

    @contextlib.asynccontextmanager
    async def call(self, **options: Any) -> AsyncIterator[Decision]:
        d = await self.allow(**options)
        start = _go_ahead(self.name, d)
        try:
            yield d
        except BaseException:
            await self.report(False, d.probe_token, _took(start))
            raise
        await self.report(True, d.probe_token, _took(start))
