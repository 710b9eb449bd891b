"""pgfence for psycopg 3 and psycopg_pool, with threads.

A Fence hands out leases.  Each lease is detached, owned by a name of its
own, so that any pooled connection can renew and release it; a connection
of its own (not from the pool) takes it.  One watchdog connection of the
Fence then sleeps in fence_wait_leases_end on all its leases at once, so
the server tells a lease the moment it ends (with fence 1.2, which lacks
that function, the lease's own connection stays open and sleeps in
fence_wait_lease_end instead).  A thread renews each lease every third of
its TTL through the pool.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Set, Tuple, Union

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from ._core import config as cfg
from ._core.config import Seconds, logger
from ._core.errors import (CONNECTION, DEADLINE, LOCK_NOT_AVAILABLE, RELEASED, FenceError,
                           LeaseLostError, LeaseUnavailableError, classify)
from ._core.base import FenceBase, LeaseBase
from ._core.state import how_from_server
from ._core import watch

if TYPE_CHECKING:
    from .breaker import Breaker

__all__ = ["Fence", "Lease"]

# Errors that say the server could not be reached (or the try took too long):
# a renewal failing so suspends the lease instead of losing it.
_UNREACHABLE = (psycopg.OperationalError, PoolTimeout, concurrent.futures.TimeoutError)


def _row(cur: "psycopg.Cursor[Any]") -> Tuple[Any, ...]:
    """The one row a statement of pgfence's returns."""
    row = cur.fetchone()
    if row is None:
        raise psycopg.InterfaceError("the statement returned no row")
    return tuple(row)


class Fence(FenceBase["Lease"]):
    """Leases on one database, through a psycopg_pool.ConnectionPool.

    ``Fence(pool)`` uses your pool (and its conninfo for each lease's own
    connection); ``Fence("dbname=app")`` makes a pool of its own, closed by
    ``close()`` or at the end of ``with Fence(...) as fx``.
    ``watchdog_conninfo`` sends each lease's own connection elsewhere (past a
    transaction pooler, straight to the server); ``renew_timeout`` bounds
    each renewal (default: a third of the TTL).
    """

    def __init__(self, pool_or_conninfo: Union[ConnectionPool, str], *,
                 watchdog_conninfo: Optional[str] = None,
                 renew_timeout: Optional[Seconds] = None,
                 connect_timeout: Seconds = 10):
        if isinstance(pool_or_conninfo, str):
            self.pool = ConnectionPool(pool_or_conninfo, min_size=1, max_size=10,
                                       kwargs={"autocommit": True}, open=True)
            self._own_pool = True
            conninfo, kwargs = pool_or_conninfo, {}
        elif isinstance(pool_or_conninfo, ConnectionPool):
            self.pool = pool_or_conninfo
            self._own_pool = False
            conninfo, kwargs = pool_or_conninfo.conninfo, dict(pool_or_conninfo.kwargs)
        else:
            raise TypeError("Fence() takes a psycopg_pool.ConnectionPool or a conninfo string")
        self._settings(conninfo, kwargs, watchdog_conninfo, renew_timeout, connect_timeout)
        self._dog_lock = threading.Lock()
        self._dog: Optional[_Watchdog] = None

    def breaker(self, name: str) -> "Breaker":
        """The shared circuit breaker ``name``."""
        from .breaker import Breaker
        return Breaker(self.pool, name)

    def close(self) -> None:
        with self._dog_lock:
            dog, self._dog = self._dog, None
        if dog is not None:
            dog.close()
        if self._own_pool:
            self.pool.close()

    def __enter__(self) -> "Fence":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _connect(self) -> "psycopg.Connection[Any]":
        """A connection of pgfence's own, without the pool's timeouts."""
        conn = psycopg.connect(self._conninfo, autocommit=True, connect_timeout=self._connect_timeout,
                               **self._conn_kwargs)
        try:
            conn.execute(watch.SQL_OWN_SETTINGS)
        except BaseException:
            conn.close()
            raise
        return conn

    def _watchdog(self, conn: "psycopg.Connection[Any]") -> "Optional[_Watchdog]":
        """The watchdog of all this fence's leases, if the server has
        fence_wait_leases_end (asked on conn, once)."""
        with self._dog_lock:
            if self._multi is None:
                self._multi = bool(_row(conn.execute(watch.SQL_HAS_WAIT_LEASES_END))[0])
            if not self._multi:
                return None
            if self._dog is None:
                self._dog = _Watchdog(self)
            return self._dog


class _Watchdog:
    """One connection and one thread that watch every lease of a Fence."""

    def __init__(self, fence: Fence):
        self._fence = fence
        self.leases = watch.WatchSet()
        self._cond = threading.Condition()
        self._conn: Optional["psycopg.Connection[Any]"] = None
        self._thread: Optional[threading.Thread] = None
        self._closed = False

    def add(self, lease: "Lease") -> None:
        with self._cond:
            cancel = self.leases.add(lease)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="pgfence-watchdog", daemon=True)
                self._thread.start()
            self._cond.notify_all()
            conn = self._conn
            calls = self.leases.calls
        if cancel and conn is not None:
            # The running wait does not watch this lease: stop it, so that
            # it is asked again with the new set.  From a thread of its own,
            # as a cancel request is a connection to the server, which a
            # network that stalls would hold up.
            threading.Thread(target=self._cancel_call, args=(conn, calls), daemon=True).start()

    def _cancel_call(self, conn: "psycopg.Connection[Any]", calls: int) -> None:
        for pause in watch.CANCEL_RETRIES:
            _cancel(conn)
            time.sleep(pause)
            if not self.leases.stale(calls):
                return

    def remove(self, lease: "Lease") -> None:
        # Its release ends the running wait, which then forgets it.
        self.leases.remove(lease)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            conn, thread = self._conn, self._thread
        if conn is not None:
            _cancel(conn)
        if thread is not None:
            thread.join(timeout=2.0)

    def _idle(self) -> bool:
        """Wait for a lease to watch; False when none came for a while (or closed)."""
        with self._cond:
            if not len(self.leases) and not self._closed:
                self._cond.wait(cfg.WATCHDOG_POLL)
            if self._closed or not len(self.leases):
                self._thread = None
                return False
            return True

    def _run(self) -> None:
        conn: Optional["psycopg.Connection[Any]"] = None
        try:
            while self._idle():
                if conn is None:
                    conn = self._open()
                    continue
                call = self.leases.issue()
                if call is None:
                    continue
                keys, tokens = call
                try:
                    rows = conn.execute(watch.SQL_WAIT_LEASES_END, {
                        "keys": keys, "tokens": tokens,
                        "timeout": cfg.interval(cfg.WATCHDOG_POLL)}).fetchall()
                except psycopg.Error as e:
                    self.leases.idle()
                    if e.sqlstate == watch.QUERY_CANCELED and not conn.closed:
                        continue        # the set changed: ask again
                    logger.info("watchdog connection failed (%s); reconnecting", e)
                    self._forget(conn)
                    conn = None
                    time.sleep(cfg.Timing.for_ttl(1.0).next_retry())
                    continue
                self.leases.idle()
                for lease, how in self.leases.ended([tuple(r) for r in rows]):
                    self.leases.remove(lease)
                    if not lease._stop.is_set():
                        lease._lose(how_from_server(how))
        finally:
            if conn is not None:
                self._forget(conn)

    def _open(self) -> Optional["psycopg.Connection[Any]"]:
        """A new watchdog connection; the leases of a server that restarted are lost."""
        try:
            conn = self._fence._connect()
            started = _row(conn.execute(watch.SQL_SERVER_STARTED))[0]
        except psycopg.Error as e:
            logger.info("watchdog could not connect (%s); trying again", e)
            time.sleep(cfg.Timing.for_ttl(1.0).next_retry())
            return None
        for lease in self.leases.leases():
            if lease._held().server_started != started:
                self.leases.remove(lease)
                lease._lose(CONNECTION)
        with self._cond:
            self._conn = conn
        return conn

    def _forget(self, conn: "psycopg.Connection[Any]") -> None:
        with self._cond:
            if self._conn is conn:
                self._conn = None
        with contextlib.suppress(Exception):
            conn.close()


def _cancel(conn: "psycopg.Connection[Any]") -> None:
    with contextlib.suppress(Exception):
        conn.cancel()


class Lease(LeaseBase):
    """A held lease, inside its ``with`` block (see Fence.lease)."""

    def __init__(self, fence: Fence, key: Union[str, int], ttl: Seconds, wait: Optional[Seconds],
                 owner: Optional[str], permits: Optional[int]):
        super().__init__(fence._renew_timeout, key, ttl, wait, owner, permits)
        self._fence = fence
        self.lost = threading.Event()
        self._own: Optional["psycopg.Connection[Any]"] = None
        self._stop = threading.Event()
        self._active: Set["psycopg.Connection[Any]"] = set()
        self._active_lock = threading.Lock()
        self._threads: List[threading.Thread] = []
        self._dog: Optional[_Watchdog] = None

    @contextlib.contextmanager
    def transaction(self) -> Iterator["psycopg.Connection[Any]"]:
        """A transaction on a pooled connection that writes with this lease's token.

        The token is set with fence_use_token for this transaction only, so
        the connection goes back to the pool carrying none.  If the lease is
        lost while a statement runs, the statement is cancelled and the
        block raises LeaseLostError.
        """
        self.check()
        with self._fence.pool.connection() as conn:
            with self._active_lock:
                self._active.add(conn)
            try:
                try:
                    with conn.transaction():
                        self.check()
                        conn.execute(cfg.SQL_USE_TOKEN, {"token": self.token, "key": self.key})
                        yield conn
                finally:
                    with self._active_lock:
                        self._active.discard(conn)
            except psycopg.Error as e:
                raise self._translate(e) from e

    # -- the block ------------------------------------------------------------

    def __enter__(self) -> "Lease":
        self._enter_once()
        self._acquire()
        try:
            self._dog = self._fence._watchdog(self._own)  # type: ignore[arg-type]
        except psycopg.Error:
            self._dog = None
        targets = [(self._renew_loop, "renewer")]
        if self._dog is not None:
            # The fence's watchdog watches it: its own connection is done.
            self._close_own()
            self._dog.add(self)
        else:
            targets.append((self._watch, "watchdog"))
        for target, name in targets:
            t = threading.Thread(target=target, name=f"pgfence-{name}:{self.key}", daemon=True)
            self._threads.append(t)
            t.start()
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> Optional[bool]:
        st = self._state
        assert st is not None
        self._stop.set()
        st.releasing = True
        if self._dog is not None:
            self._dog.remove(self)
        own = self._own
        if own is not None:
            with contextlib.suppress(Exception):
                own.cancel()
        for t in self._threads:
            t.join(timeout=2.0)
        lost_before = st.how
        self._release()
        self._close_own()
        self._finish()
        if exc_type is None and lost_before is not None and lost_before != RELEASED:
            raise LeaseLostError(self.key, st.token, lost_before, cause=st.lost_cause)
        return None

    # -- internals -----------------------------------------------------------

    def _acquire(self) -> None:
        sql, params = self._grant_sql()
        own = self._own = self._fence._connect()
        sent = time.monotonic()
        try:
            with own.transaction():
                if self._wait is None:
                    own.execute(cfg.SQL_NO_LOCK_TIMEOUT)
                row = own.execute(sql, params).fetchone()
        except psycopg.Error as e:
            self._close_own()
            if e.sqlstate == LOCK_NOT_AVAILABLE:
                raise LeaseUnavailableError(self.key, self._wait, cause=e) from e
            raise self._translate(e) from e
        except BaseException:
            # Interrupted (KeyboardInterrupt) while waiting: psycopg cancels the
            # statement, but a grant may have come just then; give back
            # whatever this owner holds.
            self._close_own()
            self._release_owned()
            raise
        if row is None or row[0] is None:
            self._close_own()
            raise LeaseUnavailableError(self.key, self._wait)
        token = self._new_state(row, sent).token
        if time.monotonic() - sent > self._timing.renew_every:
            # The grant came after a wait: when is unknown, so renew now to
            # know a deadline that cannot be late.
            sent = time.monotonic()
            ok, expires_at = _row(own.execute(cfg.SQL_RENEW, {**params, "token": token}))
            if not ok:
                self._release()
                self._close_own()
                raise LeaseLostError(self.key, token, how_from_server(None))
            self._held().renewed(sent, expires_at)

    def _translate(self, e: psycopg.Error) -> BaseException:
        """The FenceError a driver error means (LF002 also marks the lease lost)."""
        err, not_held = self._meaning(e)
        if not_held:
            self._lose(how_from_server(self._status()), e)
        return err

    def _lose(self, how: str, cause: Optional[BaseException] = None) -> None:
        st = self._held()
        callbacks = st.mark_lost(how, cause)
        if callbacks is None:
            return
        self.lost.set()
        with self._active_lock:
            for conn in list(self._active):
                with contextlib.suppress(Exception):
                    conn.cancel()
        st.run_callbacks(callbacks)

    def _finish(self) -> None:
        self._held().released()
        self.lost.set()

    def _status(self) -> Optional[str]:
        try:
            with self._fence.pool.connection(timeout=self._timing.try_timeout) as conn:
                row = conn.execute(cfg.SQL_STATUS, {"key": self.key, "token": self.token}).fetchone()
                return row[0] if row else None
        except Exception:
            return None

    def _release(self) -> None:
        params = self._params()
        try:
            with self._fence.pool.connection(timeout=max(self._timing.try_timeout, 1.0)) as conn:
                self._held().release_result(_row(conn.execute(cfg.SQL_RELEASE, params))[0])
            return
        except Exception as e:
            first = e
        try:
            with self._fence._connect() as conn:
                self._held().release_result(_row(conn.execute(cfg.SQL_RELEASE, params))[0])
        except Exception:
            logger.warning("could not release lease %r (%s); it ends by its TTL", self.key, first)

    def _release_owned(self) -> None:
        try:
            with self._fence.pool.connection(timeout=10) as conn:
                conn.execute(cfg.SQL_RELEASE_OWNED, {"key": self.key, "owner": self.owner})
        except Exception as e:
            logger.warning("could not check lease %r after an interrupted wait (%s)", self.key, e)

    def _close_own(self) -> None:
        own, self._own = self._own, None
        if own is not None:
            with contextlib.suppress(Exception):
                own.close()

    def _watch(self) -> None:
        """The watchdog: sleep in fence_wait_lease_end until the lease ends."""
        st = self._held()
        params = self._params()
        conn = self._own
        while not self._stop.is_set() and not st.lost:
            try:
                if conn is None or conn.closed:
                    conn = self._reconnect()
                    if conn is None:
                        return
                    continue
                row = conn.execute(cfg.SQL_WAIT_END, params).fetchone()
            except psycopg.Error as e:
                if self._stop.is_set():
                    return
                logger.info("watchdog connection of lease %r failed (%s); reconnecting", self.key, e)
                with contextlib.suppress(Exception):
                    conn.close()  # type: ignore[union-attr]
                conn = None
                continue
            how = row[0] if row else None
            if how is None or self._stop.is_set():
                continue
            self._lose(how_from_server(how))
            return

    def _reconnect(self) -> Optional["psycopg.Connection[Any]"]:
        """A new watchdog connection, once the lease is known to be still held."""
        st = self._held()
        while not self._stop.is_set() and not st.lost:
            try:
                conn = self._fence._connect()
                status, started = _row(conn.execute(cfg.SQL_STATUS, {"key": self.key, "token": st.token}))
            except psycopg.Error:
                self._stop.wait(st.timing.next_retry())
                continue
            if started != st.server_started:
                conn.close()
                self._lose(CONNECTION)
                return None
            if status != "held":
                conn.close()
                self._lose(how_from_server(status))
                return None
            if self._stop.is_set():
                conn.close()
                return None
            self._own = conn
            return conn
        return None

    def _renew_loop(self) -> None:
        st = self._held()
        params = self._params()
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1,
                                                     thread_name_prefix=f"pgfence-renew:{self.key}")
        pending: "Optional[concurrent.futures.Future[Any]]" = None
        delay = st.timing.next_renewal()
        try:
            while True:
                wake = min(delay, max(st.remaining(), 0.0))
                if self._stop.wait(wake) or st.lost:
                    return
                if st.remaining() <= 0:
                    self._lose(DEADLINE)
                    return
                if pending is not None and not pending.done():
                    # The last try is still stuck: it counts as failed.
                    st.suspend(concurrent.futures.TimeoutError("renewal still pending"))
                    delay = st.timing.next_retry()
                    continue
                sent = time.monotonic()
                pending = pool.submit(self._renew_once, params)
                if not self._await(pending, sent + st.timing.try_timeout):
                    return
                try:
                    ok, expires_at = pending.result(timeout=0)
                except _UNREACHABLE as e:
                    st.suspend(e)
                    delay = st.timing.next_retry()
                    continue
                except Exception as e:
                    if isinstance(classify(e), FenceError):
                        self._lose(how_from_server(self._status()), e)
                        return
                    st.suspend(e)
                    delay = st.timing.next_retry()
                    continue
                if self._stop.is_set():
                    return
                if ok:
                    st.renewed(sent, expires_at)
                    delay = st.timing.next_renewal()
                else:
                    self._lose(how_from_server(self._status()))
                    return
        finally:
            pool.shutdown(wait=False)

    def _await(self, future: "concurrent.futures.Future[Any]", until: float) -> bool:
        """Wait for future until then (monotonic); False if the lease is being released."""
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        while not done.is_set():
            left = until - time.monotonic()
            if left <= 0:
                break
            if self._stop.is_set():
                return False
            done.wait(min(left, 0.05))
        return not self._stop.is_set()

    def _renew_once(self, params: Dict[str, Any]) -> Any:
        with self._fence.pool.connection(timeout=self._timing.try_timeout) as conn:
            return conn.execute(cfg.SQL_RENEW, params).fetchone()


Fence._lease_class = Lease
