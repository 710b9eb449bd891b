"""pgfence for psycopg 3 and psycopg_pool, with threads.

A Fence hands out leases.  Each lease is detached, owned by a name of its
own, so that any pooled connection can renew and release it.  With fence
1.3 a free key is taken in one statement on a pooled connection, which
forgets the grant at once (fence_forget_token) and so carries no token
afterwards; only a lease that must wait gets a connection of its own, to
wait on.  One watchdog connection of the Fence sleeps in
fence_wait_leases_end on all its leases at once, so the server tells a
lease the moment it ends; a lease joins it a moment after its grant
(watch.JOIN_AFTER).  With fence 1.2, which lacks both functions, every
lease is taken on a connection of its own, which stays open and sleeps in
fence_wait_lease_end.  The Fence's one timer thread renews each lease
every third of its TTL through the pool.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set, Tuple, Union

import psycopg
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolTimeout

from ._core import config as cfg
from ._core.config import Seconds, logger
from ._core.errors import (CONNECTION, DEADLINE, LOCK_NOT_AVAILABLE, RELEASED, FenceError,
                           LeaseLostError, LeaseUnavailableError, classify)
from ._core.base import FenceBase, LeaseBase, ended_by_block, ended_early_error
from ._core.state import how_from_server
from ._core import watch
from ._core.timer import Entry, Timer

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
        self._timer_obj: Optional[Timer] = None

    def breaker(self, name: str) -> "Breaker":
        """The shared circuit breaker ``name``."""
        from .breaker import Breaker
        return Breaker(self.pool, name)

    def close(self) -> None:
        with self._dog_lock:
            dog, self._dog = self._dog, None
            timer, self._timer_obj = self._timer_obj, None
        if dog is not None:
            dog.close()
        if timer is not None:
            timer.close()
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

    def _capabilities(self, conn: "Optional[psycopg.Connection[Any]]" = None) -> None:
        """Ask the server, once, what it has of fence 1.3 (on conn, or on a
        pooled connection)."""
        if self._multi is not None:     # known: no lock needed to read it
            return
        if conn is not None:
            row = conn.execute(watch.SQL_CAPABILITIES).fetchone()
        else:
            with self.pool.connection() as pooled:
                row = pooled.execute(watch.SQL_CAPABILITIES).fetchone()
        with self._dog_lock:
            self._learn(row)

    def _watchdog(self, conn: "Optional[psycopg.Connection[Any]]" = None) -> "Optional[_Watchdog]":
        """The watchdog of all this fence's leases, if the server has
        fence_wait_leases_end."""
        dog = self._dog
        if dog is not None:
            return dog
        self._capabilities(conn)
        with self._dog_lock:
            if not self._multi:
                return None
            if self._dog is None:
                self._dog = _Watchdog(self)
            return self._dog

    def _timer(self) -> Timer:
        timer = self._timer_obj
        if timer is not None:
            return timer
        with self._dog_lock:
            if self._timer_obj is None:
                self._timer_obj = Timer("pgfence-timer")
            return self._timer_obj


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


def _usable(conn: Any) -> bool:
    """Whether conn is open and idle (outside a transaction): a statement can run."""
    return not conn.closed and conn.info.transaction_status == TransactionStatus.IDLE


def _roll_back_quietly(conn: "psycopg.Connection[Any]") -> None:
    """Roll back a failed transaction before its connection goes back to
    the pool (which would do it, with a warning); a broken connection the
    pool discards."""
    if not conn.closed and conn.info.transaction_status in (TransactionStatus.INTRANS,
                                                            TransactionStatus.INERROR):
        with contextlib.suppress(Exception):
            conn.rollback()


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
        # Held while the lease joins the watchdog, and while it stops: a
        # lease released never joins.
        self._stop_lock = threading.Lock()
        self._active: Set["psycopg.Connection[Any]"] = set()
        self._active_lock = threading.Lock()
        self._threads: List[threading.Thread] = []
        self._dog: Optional[_Watchdog] = None
        self._timer: Optional[Timer] = None
        self._joined = False    # in the watchdog's set (under _stop_lock)
        self._due: List[Entry] = []
        # The renewal in flight (see _renew_due), and how many were sent.
        self._renewal: "Optional[concurrent.futures.Future[Any]]" = None
        self._renewals = 0

    def transaction(self) -> "_Transaction":
        """A transaction on a pooled connection that writes with this lease's token.

        The token is set with fence_use_token for this transaction only, so
        the connection goes back to the pool carrying none.  If the lease is
        lost while a statement runs, the statement is cancelled and the
        block raises LeaseLostError; if it is lost by the end of the block,
        the transaction is rolled back, not committed, and the block raises
        LeaseLostError.
        """
        return _Transaction(self)

    # -- the block ------------------------------------------------------------

    def __enter__(self) -> "Lease":
        self._enter_once()
        fence = self._fence
        if not self._grant_on_pool():
            self._grant_on_own()
            try:
                self._dog = fence._watchdog(self._own)
            except psycopg.Error:
                self._dog = None
        else:
            self._dog = fence._watchdog()
        timer = self._timer = fence._timer()
        now = time.monotonic()
        renew_at = now + self._held().timing.next_renewal()
        if self._dog is not None:
            # The fence's watchdog watches it (soon): its own connection,
            # if it had to wait on one, is done.  One entry on the timer at
            # a time: the join first (it comes long before the renewal),
            # which then sets the renewal's.
            self._close_own()
            self._due.append(timer.at(now + watch.JOIN_AFTER, lambda: self._join_watchdog(renew_at)))
            return self
        self._renew_at(renew_at)
        t = threading.Thread(target=self._watch, name=f"pgfence-watchdog:{self.key}", daemon=True)
        self._threads.append(t)
        t.start()
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> Optional[bool]:
        st = self._state
        assert st is not None
        with self._stop_lock:
            self._stop.set()
            st.releasing = True
            if self._joined:
                self._dog.remove(self)  # type: ignore[union-attr]
        for entry in self._due:
            entry.cancel()
        self._due = []
        own = self._own
        if own is not None:
            with contextlib.suppress(Exception):
                own.cancel()
        for t in self._threads:
            t.join(timeout=2.0)
        lost_before = st.how
        self._release()
        if self._own is not None:
            self._close_own()
        self._finish()
        if exc_type is None and lost_before is not None and lost_before != RELEASED:
            raise LeaseLostError(self.key, st.token, lost_before, cause=st.lost_cause)
        return None

    # -- internals -----------------------------------------------------------

    def _grant_on_pool(self) -> bool:
        """Try the key on a pooled connection, in one statement that also
        makes the connection forget the grant (fence 1.3).  True if granted;
        False if the server is older, or the key is taken and the lease may
        wait for it (LeaseUnavailableError if it may not)."""
        fence = self._fence
        fence._capabilities()
        if not fence._grants_on_pool():
            return False
        sql, params = self._pool_grant_sql()
        sent = time.monotonic()
        given_back = False
        try:
            conn = fence.pool.getconn()
            try:
                row = conn.execute(sql, params).fetchone()
            except BaseException as e:
                # A grant may have come before the failure: give it back
                # on this very session if it still works, so that it
                # forgets the token too (the statement may have stopped
                # between the grant and the forget).
                given_back = not self._may_have_granted(e) or self._release_owned_on(conn)
                raise
            finally:
                fence.pool.putconn(conn)
        except PoolTimeout:
            raise
        except BaseException as e:
            if not given_back:
                # Through the pool, once the broken connection is back in it.
                self._release_owned()
            if isinstance(e, psycopg.Error):
                raise self._translate(e) from e
            raise
        return self._pool_granted(row, sent)

    def _grant_on_own(self) -> None:
        """Take the lease on a connection of its own, waiting as long as the
        lease may."""
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

    def _join_watchdog(self, renew_at: float) -> None:
        """On the timer, JOIN_AFTER after the grant: the watchdog watches it,
        and its renewals begin."""
        with self._stop_lock:
            if self._stop.is_set() or self._held().lost or self._dog is None:
                return
            self._dog.add(self)
            self._joined = True
        self._renew_at(renew_at)

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
        params = {"key": self.key, "token": self._held().token}
        pool = self._fence.pool
        try:
            conn = pool.getconn(timeout=max(self._timing.try_timeout, 1.0))
            try:
                self._held().release_result(_row(conn.execute(cfg.SQL_RELEASE, params))[0])
            finally:
                pool.putconn(conn)
            return
        except Exception as e:
            first = e
        try:
            with self._fence._connect() as conn:
                self._held().release_result(_row(conn.execute(cfg.SQL_RELEASE, params))[0])
        except Exception:
            logger.warning("could not release lease %r (%s); it ends by its TTL", self.key, first)

    def _release_owned_on(self, conn: "psycopg.Connection[Any]") -> bool:
        """Release what this owner holds of the key on conn, the session of a
        grant whose answer was lost; False if conn cannot run it."""
        if not _usable(conn):
            return False
        try:
            conn.execute(self._release_owned_sql(self._fence), {"key": self.key, "owner": self.owner})
            return True
        except Exception:
            return False

    def _release_owned(self) -> None:
        """The same on the pool (or after an interrupted wait)."""
        try:
            with self._fence.pool.connection(timeout=10) as conn:
                conn.execute(self._release_owned_sql(self._fence), {"key": self.key, "owner": self.owner})
        except Exception as e:
            logger.warning("could not check lease %r after an interrupted grant (%s)", self.key, e)

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

    # -- renewal, on the fence's timer ---------------------------------------
    #
    # Every third of the TTL (less jitter) the timer sends a renewal to a
    # worker thread; its answer, or its try timeout, whichever comes first,
    # settles it and sets the next time.  The local deadline (the last
    # renewal's send time plus the TTL) is checked each time, and is itself a
    # time the timer wakes up at, so a lease whose renewals hang is lost when
    # it must be, not later.

    def _renew_at(self, when: float) -> None:
        """Wake at when, or at the local deadline if that comes first."""
        st = self._held()
        deadline = time.monotonic() + max(st.remaining(), 0.0)
        assert self._timer is not None
        self._due.append(self._timer.at(min(when, deadline), self._renew_due))
        if len(self._due) > 8:
            self._due = [e for e in self._due if not e.cancelled and e.when > time.monotonic()]

    def _renew_due(self) -> None:
        st = self._held()
        if self._stop.is_set() or st.lost:
            return
        if st.remaining() <= 0:
            # On a worker: the on_lost callbacks it runs must not hold up the
            # timer, and so every other lease's renewals.
            assert self._timer is not None
            self._timer.submit(self._lose, DEADLINE)
            return
        if self._renewal is not None and not self._renewal.done():
            # The last try is still stuck: it counts as failed.
            st.suspend(concurrent.futures.TimeoutError("renewal still pending"))
            self._renew_at(time.monotonic() + st.timing.next_retry())
            return
        assert self._timer is not None
        sent = time.monotonic()
        self._renewals += 1
        number = self._renewals
        future = self._renewal = self._timer.submit(self._renew_once, self._params())
        # The answer and the try timeout race; the first settles the try.
        settled = threading.Lock()

        def answered(f: "concurrent.futures.Future[Any]") -> None:
            if settled.acquire(False):
                self._renewed(f, sent)

        def timed_out() -> None:
            if settled.acquire(False):
                self._renew_timed_out(number)
        future.add_done_callback(answered)
        self._due.append(self._timer.at(sent + st.timing.try_timeout, timed_out))

    def _renew_timed_out(self, number: int) -> None:
        st = self._held()
        if self._stop.is_set() or st.lost or number != self._renewals:
            return
        st.suspend(concurrent.futures.TimeoutError("renewal timed out"))
        self._renew_at(time.monotonic() + st.timing.next_retry())

    def _renewed(self, future: "concurrent.futures.Future[Any]", sent: float) -> None:
        """A renewal's answer came within its try timeout (on a worker thread)."""
        st = self._held()
        if self._stop.is_set() or st.lost:
            return
        try:
            ok, expires_at = future.result(timeout=0)
        except _UNREACHABLE as e:
            st.suspend(e)
            self._renew_at(time.monotonic() + st.timing.next_retry())
            return
        except Exception as e:
            if isinstance(classify(e), FenceError):
                self._lose(how_from_server(self._status()), e)
                return
            st.suspend(e)
            self._renew_at(time.monotonic() + st.timing.next_retry())
            return
        if self._stop.is_set():
            return
        if ok:
            st.renewed(sent, expires_at)
            self._renew_at(time.monotonic() + st.timing.next_renewal())
        else:
            self._lose(how_from_server(self._status()))

    def _renew_once(self, params: Dict[str, Any]) -> Any:
        with self._fence.pool.connection(timeout=self._timing.try_timeout) as conn:
            return conn.execute(cfg.SQL_RENEW, params).fetchone()


Fence._lease_class = Lease


class _Transaction:
    """lease.transaction(): a connection from the pool, in a transaction that
    carries the lease's token, for the length of a with block.

    A class rather than a generator, and the pool's getconn and putconn
    rather than its connection() (a generator too, which also enters the
    connection's own with block, a no-op in autocommit): this is on every
    job's path, and the grant and the release take their connections the
    same way."""

    __slots__ = ("_lease", "_conn")

    def __init__(self, lease: Lease):
        self._lease = lease
        self._conn: "Optional[psycopg.Connection[Any]]" = None

    def __enter__(self) -> "psycopg.Connection[Any]":
        lease = self._lease
        lease.check()
        conn = lease._fence.pool.getconn()
        with lease._active_lock:
            lease._active.add(conn)
        try:
            lease.check()
            conn.execute(lease._begin_sql(conn), prepare=False)
        except BaseException as e:
            self._give_back(conn, roll_back=True)
            if isinstance(e, psycopg.Error):
                raise lease._translate(e) from e
            raise
        self._conn = conn
        return conn

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> bool:
        lease, conn = self._lease, self._conn
        assert conn is not None
        self._conn = None
        if exc is not None:
            self._give_back(conn, roll_back=True)
            if isinstance(exc, psycopg.Rollback):
                # As conn.transaction() does: end the block quietly.
                return exc.transaction is None
            if isinstance(exc, psycopg.Error):
                raise lease._translate(exc) from exc
            return False
        if ended_by_block(conn):
            self._give_back(conn, roll_back=False)
            raise ended_early_error()
        try:
            # Lost while the block ran: roll back what it wrote rather than
            # commit it (the trigger would refuse a stale write, but not one
            # that was current when it ran).
            lease.check()
            conn.commit()
        except BaseException as e:
            self._give_back(conn, roll_back=True)
            if isinstance(e, psycopg.Error):
                raise lease._translate(e) from e
            raise
        self._give_back(conn, roll_back=False)
        return False

    def _give_back(self, conn: "psycopg.Connection[Any]", roll_back: bool) -> None:
        lease = self._lease
        with lease._active_lock:
            lease._active.discard(conn)
        if roll_back:
            _roll_back_quietly(conn)
        lease._fence.pool.putconn(conn)
