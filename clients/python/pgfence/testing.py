"""Helpers for tests: fence's virtual lease clock.

On a server started with ``fence.test_clock = on``, a superuser moves one
clock for the whole server (fence_set_clock, fence_advance_clock); every
lease decision reads it, so a test can expire a lease without waiting:

    from pgfence.testing import VirtualClock
    with VirtualClock(conn) as clock:     # back to real time at the end
        clock.advance(31)                 # seconds, or a timedelta

A watchdog learns the expiry at once; timeouts stay in real time.
"""
from __future__ import annotations

import datetime as _dt
from typing import Any, Optional, Union

Amount = Union[int, float, _dt.timedelta]


def _delta(amount: Amount) -> _dt.timedelta:
    return amount if isinstance(amount, _dt.timedelta) else _dt.timedelta(seconds=amount)


class VirtualClock:
    """Drive the lease clock through ``conn`` (a psycopg Connection, autocommit,
    as a superuser)."""

    def __init__(self, conn: Any):
        self.conn = conn

    def now(self) -> _dt.datetime:
        return self.conn.execute("SELECT fence_now()").fetchone()[0]

    def set(self, when: Optional[_dt.datetime]) -> Optional[_dt.datetime]:
        """Put the clock at ``when``; None goes back to real time."""
        return self.conn.execute("SELECT fence_set_clock(%s::timestamptz)", (when,)).fetchone()[0]

    def freeze(self) -> _dt.datetime:
        """Stop the clock at the current time."""
        return self.conn.execute("SELECT fence_set_clock(fence_now())").fetchone()[0]

    def advance(self, amount: Amount) -> _dt.datetime:
        """Move the clock forward (stopping it there, if it ran in real time)."""
        return self.conn.execute("SELECT fence_advance_clock(%s::interval)", (_delta(amount),)).fetchone()[0]

    def real(self) -> None:
        self.set(None)

    def __enter__(self) -> "VirtualClock":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.real()


class AsyncVirtualClock:
    """The same for a psycopg AsyncConnection."""

    def __init__(self, conn: Any):
        self.conn = conn

    async def _one(self, sql: str, params: tuple = ()) -> Any:
        cur = await self.conn.execute(sql, params)
        row = await cur.fetchone()
        return row[0]

    async def now(self) -> _dt.datetime:
        return await self._one("SELECT fence_now()")

    async def set(self, when: Optional[_dt.datetime]) -> Optional[_dt.datetime]:
        return await self._one("SELECT fence_set_clock(%s::timestamptz)", (when,))

    async def freeze(self) -> _dt.datetime:
        return await self._one("SELECT fence_set_clock(fence_now())")

    async def advance(self, amount: Amount) -> _dt.datetime:
        return await self._one("SELECT fence_advance_clock(%s::interval)", (_delta(amount),))

    async def real(self) -> None:
        await self.set(None)

    async def __aenter__(self) -> "AsyncVirtualClock":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.real()
