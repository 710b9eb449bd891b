"""pgfence for asyncio, psycopg 3's AsyncConnection and psycopg_pool's AsyncConnectionPool.

The same leases as pgfence.sync, with tasks instead of threads.  When the
lease is lost, the task that entered ``async with`` is cancelled (whatever it
awaits stops, and a statement it runs is cancelled in the server), and the
block raises LeaseLostError, as asyncio.timeout() turns its cancellation into
TimeoutError.  The release at the end of the block is shielded from
cancellation.
"""
from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any, AsyncIterator, Dict, List, Optional, Set, Union

import psycopg
from psycopg.pq import TransactionStatus
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from ._core import config as cfg
from ._core.config import Seconds, logger
from ._core.errors import (CONNECTION, DEADLINE, LOCK_NOT_AVAILABLE, RELEASED, FenceError,
                           LeaseLostError, LeaseUnavailableError, classify)
from ._core.base import FenceBase, LeaseBase
from ._core.state import how_from_server

if TYPE_CHECKING:
    from .breaker import AsyncBreaker

__all__ = ["AsyncFence", "AsyncLease"]

_UNREACHABLE = (psycopg.OperationalError, PoolTimeout, asyncio.TimeoutError)


class AsyncFence(FenceBase["AsyncLease"]):
    """Leases on one database, through a psycopg_pool.AsyncConnectionPool.

    The pool must be open.  Each lease also opens a connection of its own,
    with the pool's conninfo (or ``watchdog_conninfo``).
    """

    def __init__(self, pool: AsyncConnectionPool, *, watchdog_conninfo: Optional[str] = None,
                 renew_timeout: Optional[Seconds] = None, connect_timeout: Seconds = 10):
        if not isinstance(pool, AsyncConnectionPool):
            raise TypeError("AsyncFence() takes a psycopg_pool.AsyncConnectionPool")
        self.pool = pool
        self._settings(pool.conninfo, pool.kwargs, watchdog_conninfo, renew_timeout, connect_timeout)

    def breaker(self, name: str) -> "AsyncBreaker":
        from .breaker import AsyncBreaker
        return AsyncBreaker(self.pool, name)

    async def _connect(self) -> "psycopg.AsyncConnection[Any]":
        return await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True,
                                                     connect_timeout=self._connect_timeout,
                                                     **self._conn_kwargs)


def _cancel_server(conn: Any) -> None:
    with contextlib.suppress(Exception):
        conn.cancel()


async def _drain(conn: "psycopg.AsyncConnection[Any]") -> None:
    """After a cancel request: read the statement's (error) result, so the
    connection is idle in its transaction again and can roll back."""
    from psycopg import generators
    await conn.wait(generators.fetch_many(conn.pgconn))


class AsyncLease(LeaseBase):
    """A held lease, inside its ``async with`` block (see AsyncFence.lease)."""

    def __init__(self, fence: AsyncFence, key: Union[str, int], ttl: Seconds, wait: Optional[Seconds],
                 owner: Optional[str], permits: Optional[int]):
        super().__init__(fence._renew_timeout, key, ttl, wait, owner, permits)
        self._fence = fence
        self.lost = asyncio.Event()
        self._own: Optional["psycopg.AsyncConnection[Any]"] = None
        self._stopping = False
        self._tasks: List["asyncio.Task[Any]"] = []
        self._task: Optional["asyncio.Task[Any]"] = None
        self._inside = False
        self._cancelled_by_us = False
        self._cancelling = 0
        self._active: Set["psycopg.AsyncConnection[Any]"] = set()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator["psycopg.AsyncConnection[Any]"]:
        """A transaction on a pooled connection that writes with this lease's token
        (for this transaction only; the connection goes back to the pool
        carrying none)."""
        self.check()
        async with self._fence.pool.connection() as conn:
            self._active.add(conn)
            try:
                async with conn.transaction():
                    try:
                        self.check()
                        await conn.execute(cfg.SQL_USE_TOKEN, {"token": self.token, "key": self.key})
                        yield conn
                    except asyncio.CancelledError:
                        if conn.pgconn.transaction_status == TransactionStatus.ACTIVE:
                            # A statement was running: stop it in the server.
                            _cancel_server(conn)
                            with contextlib.suppress(Exception):
                                await _drain(conn)
                        raise
            except psycopg.Error as e:
                raise (await self._translate(e)) from e
            finally:
                self._active.discard(conn)

    async def __aenter__(self) -> "AsyncLease":
        self._enter_once()
        self._task = asyncio.current_task()
        grant = asyncio.ensure_future(self._acquire())
        try:
            await asyncio.shield(grant)
        except asyncio.CancelledError:
            # Cancelled while waiting: stop the wait in the server, and give
            # back a grant that came just then, in a task the next
            # cancellation cannot stop.
            cleanup = asyncio.ensure_future(self._abandon(grant))
            with contextlib.suppress(BaseException):
                await asyncio.shield(cleanup)
            raise
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._watch(), name=f"pgfence-watchdog:{self.key}"),
                       loop.create_task(self._renew_loop(), name=f"pgfence-renewer:{self.key}")]
        self._cancelling = self._task.cancelling() if self._task and hasattr(self._task, "cancelling") else 0
        self._inside = True
        return self

    async def __aexit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> Optional[bool]:
        self._inside = False
        st = self._held()
        lost_before = st.how
        # Cancelled again while releasing, this raises CancelledError; the
        # release goes on regardless.
        await asyncio.shield(asyncio.ensure_future(self._shutdown()))
        if self._cancelled_by_us and exc_type is asyncio.CancelledError:
            uncancel = getattr(self._task, "uncancel", None)
            if uncancel is None or uncancel() <= self._cancelling:
                raise LeaseLostError(self.key, st.token, lost_before or DEADLINE,
                                     cause=st.lost_cause) from exc
            return None
        if exc_type is None and lost_before is not None and lost_before != RELEASED:
            raise LeaseLostError(self.key, st.token, lost_before, cause=st.lost_cause)
        return None

    # -- internals -------------------------------------------------------------

    async def _acquire(self) -> None:
        sql, params = self._grant_sql()
        own = self._own = await self._fence._connect()
        sent = time.monotonic()
        try:
            async with own.transaction():
                if self._wait is None:
                    await own.execute(cfg.SQL_NO_LOCK_TIMEOUT)
                cur = await own.execute(sql, params)
                row = await cur.fetchone()
        except psycopg.Error as e:
            await self._close_own()
            if e.sqlstate == LOCK_NOT_AVAILABLE:
                raise LeaseUnavailableError(self.key, self._wait, cause=e) from e
            raise (await self._translate(e)) from e
        if row is None or row[0] is None:
            await self._close_own()
            raise LeaseUnavailableError(self.key, self._wait)
        token = self._new_state(row, sent).token
        if time.monotonic() - sent > self._timing.renew_every:
            sent = time.monotonic()
            cur = await own.execute(cfg.SQL_RENEW, {**params, "token": token})
            ok, expires_at = await cur.fetchone()  # type: ignore[misc]
            if not ok:
                await self._release()
                await self._close_own()
                raise LeaseLostError(self.key, token, how_from_server(None))
            self._held().renewed(sent, expires_at)

    async def _abandon(self, grant: "asyncio.Future[None]") -> None:
        if self._own is not None:
            _cancel_server(self._own)
        try:
            await asyncio.wait_for(grant, timeout=10)
        except BaseException:
            pass
        if self._state is not None:
            await self._release()
            self._finish()
        else:
            await self._release_owned()
        await self._close_own()

    async def _shutdown(self) -> None:
        self._stopping = True
        self._held().releasing = True
        own = self._own
        if own is not None:
            _cancel_server(own)
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(t, timeout=2)
        await self._release()
        await self._close_own()
        self._finish()

    async def _translate(self, e: psycopg.Error) -> BaseException:
        err, not_held = self._meaning(e)
        if not_held:
            self._lose(how_from_server(await self._status()), e)
        return err

    def _lose(self, how: str, cause: Optional[BaseException] = None) -> None:
        st = self._held()
        callbacks = st.mark_lost(how, cause)
        if callbacks is None:
            return
        self.lost.set()
        if (self._inside and self._task is not None and not self._task.done()
                and self._task is not asyncio.current_task()):
            self._cancelled_by_us = True
            self._task.cancel()
        st.run_callbacks(callbacks)

    def _finish(self) -> None:
        self._held().released()
        self.lost.set()

    async def _status(self) -> Optional[str]:
        try:
            async with self._fence.pool.connection(timeout=self._timing.try_timeout) as conn:
                cur = await conn.execute(cfg.SQL_STATUS, {"key": self.key, "token": self.token})
                row = await cur.fetchone()
                return row[0] if row else None
        except Exception:
            return None

    async def _release(self) -> None:
        params = self._params()
        try:
            async with self._fence.pool.connection(timeout=max(self._timing.try_timeout, 1.0)) as conn:
                cur = await asyncio.wait_for(conn.execute(cfg.SQL_RELEASE, params),
                                             self._timing.try_timeout + 5)
                self._held().release_result((await cur.fetchone())[0])  # type: ignore[index]
            return
        except Exception as e:
            first = e
        try:
            conn2 = await self._fence._connect()
            try:
                cur = await conn2.execute(cfg.SQL_RELEASE, params)
                self._held().release_result((await cur.fetchone())[0])  # type: ignore[index]
            finally:
                await conn2.close()
        except Exception:
            logger.warning("could not release lease %r (%s); it ends by its TTL", self.key, first)

    async def _release_owned(self) -> None:
        try:
            async with self._fence.pool.connection(timeout=10) as conn:
                await conn.execute(cfg.SQL_RELEASE_OWNED, {"key": self.key, "owner": self.owner})
        except Exception as e:
            logger.warning("could not check lease %r after an interrupted wait (%s)", self.key, e)

    async def _close_own(self) -> None:
        own, self._own = self._own, None
        if own is not None:
            with contextlib.suppress(Exception):
                await own.close()

    async def _watch(self) -> None:
        st = self._held()
        params = self._params()
        conn = self._own
        while not self._stopping and not st.lost:
            try:
                if conn is None or conn.closed:
                    conn = await self._reconnect()
                    if conn is None:
                        return
                    continue
                cur = await conn.execute(cfg.SQL_WAIT_END, params)
                row = await cur.fetchone()
            except psycopg.Error as e:
                if self._stopping:
                    return
                logger.info("watchdog connection of lease %r failed (%s); reconnecting", self.key, e)
                with contextlib.suppress(Exception):
                    await conn.close()  # type: ignore[union-attr]
                conn = None
                continue
            how = row[0] if row else None
            if how is None or self._stopping:
                continue
            self._lose(how_from_server(how))
            return

    async def _reconnect(self) -> Optional["psycopg.AsyncConnection[Any]"]:
        st = self._held()
        while not self._stopping and not st.lost:
            try:
                conn = await self._fence._connect()
                cur = await conn.execute(cfg.SQL_STATUS, {"key": self.key, "token": st.token})
                status, started = await cur.fetchone()  # type: ignore[misc]
            except psycopg.Error:
                await asyncio.sleep(st.timing.next_retry())
                continue
            if started != st.server_started or status != "held" or self._stopping:
                await conn.close()
                if not self._stopping:
                    self._lose(CONNECTION if started != st.server_started else how_from_server(status))
                return None
            self._own = conn
            return conn
        return None

    async def _renew_loop(self) -> None:
        st = self._held()
        params = self._params()
        delay = st.timing.next_renewal()
        while not self._stopping and not st.lost:
            await asyncio.sleep(min(delay, max(st.remaining(), 0.0)))
            if self._stopping or st.lost:
                return
            if st.remaining() <= 0:
                self._lose(DEADLINE)
                return
            sent = time.monotonic()
            try:
                ok, expires_at = await asyncio.wait_for(self._renew_once(params), st.timing.try_timeout)
            except _UNREACHABLE as e:
                st.suspend(e)
                delay = st.timing.next_retry()
                continue
            except psycopg.Error as e:
                if isinstance(classify(e), FenceError):
                    self._lose(how_from_server(await self._status()), e)
                    return
                st.suspend(e)
                delay = st.timing.next_retry()
                continue
            if self._stopping:
                return
            if ok:
                st.renewed(sent, expires_at)
                delay = st.timing.next_renewal()
            else:
                self._lose(how_from_server(await self._status()))
                return

    async def _renew_once(self, params: Dict[str, Any]) -> Any:
        async with self._fence.pool.connection(timeout=self._timing.try_timeout) as conn:
            cur = await conn.execute(cfg.SQL_RENEW, params)
            return await cur.fetchone()


AsyncFence._lease_class = AsyncLease
