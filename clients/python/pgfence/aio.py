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
from ._core.base import FenceBase, LeaseBase, ended_by_block, ended_early_error
from ._core.state import how_from_server
from ._core import watch

if TYPE_CHECKING:
    from .breaker import AsyncBreaker

__all__ = ["AsyncFence", "AsyncLease"]

_UNREACHABLE = (psycopg.OperationalError, PoolTimeout, asyncio.TimeoutError)


class AsyncFence(FenceBase["AsyncLease"]):
    """Leases on one database, through a psycopg_pool.AsyncConnectionPool.

    The pool must be open.  A lease on a free key is taken on a pooled
    connection (fence 1.3); one that waits, and every lease with fence 1.2,
    on a connection of its own, with the pool's conninfo (or
    ``watchdog_conninfo``).
    """

    def __init__(self, pool: AsyncConnectionPool, *, watchdog_conninfo: Optional[str] = None,
                 renew_timeout: Optional[Seconds] = None, connect_timeout: Seconds = 10):
        if not isinstance(pool, AsyncConnectionPool):
            raise TypeError("AsyncFence() takes a psycopg_pool.AsyncConnectionPool")
        self.pool = pool
        self._settings(pool.conninfo, pool.kwargs, watchdog_conninfo, renew_timeout, connect_timeout)
        self._dog: Optional[_AsyncWatchdog] = None

    def breaker(self, name: str) -> "AsyncBreaker":
        from .breaker import AsyncBreaker
        return AsyncBreaker(self.pool, name)

    async def _connect(self) -> "psycopg.AsyncConnection[Any]":
        """A connection of pgfence's own, without the pool's timeouts."""
        conn = await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True,
                                                     connect_timeout=self._connect_timeout,
                                                     **self._conn_kwargs)
        try:
            await conn.execute(watch.SQL_OWN_SETTINGS)
        except BaseException:
            await conn.close()
            raise
        return conn

    async def _capabilities(self, conn: "Optional[psycopg.AsyncConnection[Any]]" = None) -> None:
        """Ask the server, once, what it has of fence 1.3 (on conn, or on a
        pooled connection)."""
        if self._multi is not None:
            return
        if conn is not None:
            row = await (await conn.execute(watch.SQL_CAPABILITIES)).fetchone()
        else:
            async with self.pool.connection() as pooled:
                row = await (await pooled.execute(watch.SQL_CAPABILITIES)).fetchone()
        self._learn(row)

    async def _watchdog(self, conn: "Optional[psycopg.AsyncConnection[Any]]" = None) -> "Optional[_AsyncWatchdog]":
        """The watchdog of all this fence's leases, if the server has
        fence_wait_leases_end."""
        await self._capabilities(conn)
        if not self._multi:
            return None
        if self._dog is None:
            self._dog = _AsyncWatchdog(self)
        return self._dog


class _AsyncWatchdog:
    """One connection and one task that watch every lease of an AsyncFence
    (the task ends, and its connection closes, when no lease is left)."""

    def __init__(self, fence: AsyncFence):
        self._fence = fence
        self.leases = watch.WatchSet()
        self._conn: Optional["psycopg.AsyncConnection[Any]"] = None
        self._task: Optional["asyncio.Task[Any]"] = None
        self._helpers: Set["asyncio.Task[Any]"] = set()

    def add(self, lease: "AsyncLease") -> None:
        cancel = self.leases.add(lease)
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run(), name="pgfence-watchdog")
        if cancel and self._conn is not None:
            # The running wait does not watch this lease: stop it, so that
            # it is asked again with the new set.
            t = loop.create_task(self._cancel_call(self._conn, self.leases.calls))
            self._helpers.add(t)
            t.add_done_callback(self._helpers.discard)

    def remove(self, lease: "AsyncLease") -> None:
        # Its release ends the running wait, which then forgets it.
        self.leases.remove(lease)

    async def settle(self) -> None:
        """After a release: with no lease left, let the task end (closing its
        connection) before the caller goes on, so that none outlives its loop."""
        task = self._task
        if len(self.leases) or task is None:
            return
        for helper in list(self._helpers):
            helper.cancel()
        if not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 2.0)
            except BaseException:
                task.cancel()

    async def _cancel_call(self, conn: "psycopg.AsyncConnection[Any]", calls: int) -> None:
        loop = asyncio.get_running_loop()
        for pause in watch.CANCEL_RETRIES:
            # A cancel request is a connection of its own: off the loop.
            await loop.run_in_executor(None, _cancel_server, conn)
            await asyncio.sleep(pause)
            if not self.leases.stale(calls):
                return

    async def _run(self) -> None:
        conn: Optional["psycopg.AsyncConnection[Any]"] = None
        try:
            while len(self.leases):
                if conn is None:
                    conn = await self._open()
                    continue
                call = self.leases.issue()
                if call is None:
                    break
                keys, tokens = call
                try:
                    cur = await conn.execute(watch.SQL_WAIT_LEASES_END, {
                        "keys": keys, "tokens": tokens,
                        "timeout": cfg.interval(cfg.WATCHDOG_POLL)})
                    rows = await cur.fetchall()
                except psycopg.Error as e:
                    self.leases.idle()
                    if e.sqlstate == watch.QUERY_CANCELED and not conn.closed:
                        continue        # the set changed: ask again
                    logger.info("watchdog connection failed (%s); reconnecting", e)
                    await self._forget(conn)
                    conn = None
                    await asyncio.sleep(cfg.Timing.for_ttl(1.0).next_retry())
                    continue
                self.leases.idle()
                for lease, how in self.leases.ended([tuple(r) for r in rows]):
                    self.leases.remove(lease)
                    if not lease._stopping:
                        lease._lose(how_from_server(how))
        finally:
            self.leases.idle()
            if conn is not None:
                await self._forget(conn)

    async def _open(self) -> Optional["psycopg.AsyncConnection[Any]"]:
        """A new watchdog connection; the leases of a server that restarted are lost."""
        try:
            conn = await self._fence._connect()
            cur = await conn.execute(watch.SQL_SERVER_STARTED)
            started = (await cur.fetchone())[0]  # type: ignore[index]
        except psycopg.Error as e:
            logger.info("watchdog could not connect (%s); trying again", e)
            await asyncio.sleep(cfg.Timing.for_ttl(1.0).next_retry())
            return None
        for lease in self.leases.leases():
            if lease._held().server_started != started:
                self.leases.remove(lease)
                lease._lose(CONNECTION)
        self._conn = conn
        return conn

    async def _forget(self, conn: "psycopg.AsyncConnection[Any]") -> None:
        if self._conn is conn:
            self._conn = None
        with contextlib.suppress(Exception):
            await conn.close()


def _cancel_server(conn: Any) -> None:
    with contextlib.suppress(Exception):
        conn.cancel()


async def _drain(conn: "psycopg.AsyncConnection[Any]") -> None:
    """After a cancel request: read the statement's (error) result, so the
    connection is idle in its transaction again and can roll back."""
    from psycopg import generators
    await conn.wait(generators.fetch_many(conn.pgconn))


async def _roll_back_quietly(conn: "psycopg.AsyncConnection[Any]") -> None:
    """Roll back a failed transaction before its connection goes back to
    the pool; a broken connection the pool discards."""
    if not conn.closed and conn.info.transaction_status in (TransactionStatus.INTRANS,
                                                            TransactionStatus.INERROR):
        with contextlib.suppress(Exception):
            await conn.rollback()


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
        self._dog: Optional[_AsyncWatchdog] = None
        self._join: Optional[asyncio.TimerHandle] = None

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator["psycopg.AsyncConnection[Any]"]:
        """A transaction on a pooled connection that writes with this lease's token
        (for this transaction only; the connection goes back to the pool
        carrying none).  Lost by the end of the block, it rolls back and
        raises LeaseLostError."""
        self.check()
        ended_early = False
        async with self._fence.pool.connection() as conn:
            self._active.add(conn)
            try:
                try:
                    self.check()
                    await conn.execute(self._begin_sql(conn), prepare=False)
                    try:
                        yield conn
                        ended_early = ended_by_block(conn)
                        # Lost while the block ran: roll back what it wrote rather
                        # than commit it (the trigger would refuse a stale write, but
                        # not one that was current when it ran).
                        self.check()
                    except psycopg.Rollback as e:
                        # As conn.transaction() does: roll back, and end the block quietly.
                        await conn.rollback()
                        if e.transaction is not None:
                            raise
                        return
                    except BaseException:
                        await _roll_back_quietly(conn)
                        raise
                    if not ended_early:
                        await conn.commit()
                except asyncio.CancelledError:
                    if conn.pgconn.transaction_status == TransactionStatus.ACTIVE:
                        # A statement was running: stop it in the server.
                        _cancel_server(conn)
                        with contextlib.suppress(Exception):
                            await _drain(conn)
                    await _roll_back_quietly(conn)
                    raise
                except psycopg.Error as e:
                    await _roll_back_quietly(conn)
                    raise (await self._translate(e)) from e
            finally:
                self._active.discard(conn)
        if ended_early:
            raise ended_early_error()

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
        self._tasks = [loop.create_task(self._renew_loop(), name=f"pgfence-renewer:{self.key}")]
        if self._dog is not None:
            self._join = loop.call_later(watch.JOIN_AFTER, self._join_watchdog)
        else:
            self._tasks.append(loop.create_task(self._watch(), name=f"pgfence-watchdog:{self.key}"))
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

    def _join_watchdog(self) -> None:
        """JOIN_AFTER after the grant: the fence's watchdog watches it."""
        if not self._stopping and not self._held().lost and self._dog is not None:
            self._dog.add(self)

    async def _acquire(self) -> None:
        if await self._grant_on_pool():
            self._dog = await self._fence._watchdog()
            return
        await self._grant_on_own()

    async def _grant_on_pool(self) -> bool:
        """Try the key on a pooled connection, in one statement that also
        makes the connection forget the grant (fence 1.3).  True if granted;
        False if the server is older, or the key is taken and the lease may
        wait for it (LeaseUnavailableError if it may not).  A cancellation
        here is the caller's to clean up (_abandon): a grant may have come."""
        fence = self._fence
        await fence._capabilities()
        if not fence._grants_on_pool():
            return False
        sql, params = self._pool_grant_sql()
        sent = time.monotonic()
        given_back = False
        try:
            async with fence.pool.connection() as conn:
                try:
                    row = await (await conn.execute(sql, params)).fetchone()
                except psycopg.Error as e:
                    # A grant may have come before the failure: give it back
                    # on this very session if it still works, so that it
                    # forgets the token too.
                    given_back = not self._may_have_granted(e) or await self._release_owned_on(conn)
                    raise
        except PoolTimeout:
            raise
        except psycopg.Error as e:
            if not given_back:
                # Through the pool, once the broken connection is back in it.
                await self._release_owned()
            raise (await self._translate(e)) from e
        return self._pool_granted(row, sent)

    async def _grant_on_own(self) -> None:
        """Take the lease on a connection of its own, waiting as long as the
        lease may."""
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
        # Still in the shielded grant: a cancel cannot come between the
        # grant and the lease's watchdog.
        try:
            self._dog = await self._fence._watchdog(own)
        except psycopg.Error:
            self._dog = None
        if self._dog is not None:
            # The fence's watchdog will watch it: its own connection is done.
            await self._close_own()

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
        if self._join is not None:
            self._join.cancel()
        if self._dog is not None:
            self._dog.remove(self)
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
        if self._dog is not None:
            await self._dog.settle()
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

    async def _release_owned_on(self, conn: "psycopg.AsyncConnection[Any]") -> bool:
        """Release what this owner holds of the key on conn, the session of a
        grant whose answer was lost; False if conn cannot run it."""
        if conn.closed or conn.info.transaction_status != TransactionStatus.IDLE:
            return False
        try:
            await conn.execute(self._release_owned_sql(self._fence), {"key": self.key, "owner": self.owner})
            return True
        except Exception:
            return False

    async def _release_owned(self) -> None:
        """The same on the pool (or after an interrupted wait)."""
        try:
            async with self._fence.pool.connection(timeout=10) as conn:
                await conn.execute(self._release_owned_sql(self._fence), {"key": self.key, "owner": self.owner})
        except Exception as e:
            logger.warning("could not check lease %r after an interrupted grant (%s)", self.key, e)

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
