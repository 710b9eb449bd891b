"""What the sync and asyncio leases have in common: their settings and what a holder reads."""
from __future__ import annotations

from typing import Any, Callable, ClassVar, Dict, Generic, Optional, Tuple, TypeVar, Union, cast

import psycopg
from psycopg import sql as psycopg_sql
from psycopg.pq import TransactionStatus

from . import config as cfg
from .config import Seconds
from .errors import RELEASED, LeaseLostError, LeaseNotHeldError, LeaseUnavailableError, classify
from .state import LeaseState


class LeaseBase:
    """A lease's settings, and its state once taken."""

    def __init__(self, renew_timeout: Optional[float], key: Union[str, int], ttl: Seconds,
                 wait: Optional[Seconds], owner: Optional[str], permits: Optional[int]):
        self.key = cfg.check_key(key)
        self.ttl = cfg.seconds(ttl, "ttl")
        self._wait = cfg.wait_seconds(wait)
        self.owner = cfg.check_owner(owner) if owner is not None else cfg.generated_owner()
        self._permits = permits
        self._timing = cfg.Timing.for_ttl(self.ttl, renew_timeout)
        self._state: Optional[LeaseState] = None
        self._entered = False
        self._begin: Optional[bytes] = None

    @property
    def token(self) -> int:
        """The lease's fencing token."""
        return self._held().token

    @property
    def expires_at(self) -> Any:
        """The expiry the server last granted (an aware datetime in UTC, by its lease clock)."""
        return self._held().expires_at

    @property
    def how(self) -> Optional[str]:
        """How the lease was lost ("released" after its block), or None while it is held."""
        return self._state.how if self._state else None

    @property
    def suspended(self) -> bool:
        """True while renewals fail; the lease is still held until the local deadline."""
        return bool(self._state and self._state.suspended)

    def check(self) -> None:
        """Raise LeaseLostError if the lease is lost (or released)."""
        st = self._held()
        if st.how is not None:
            raise st.error()

    def on_lost(self, callback: Callable[[LeaseLostError], Any]) -> None:
        """Call ``callback(error)`` once when the lease is lost (at once if it is).

        Not called for the release at the end of the block.
        """
        st = self._held()
        if not st.add_callback(callback) and st.how != RELEASED:
            st.run_callbacks([callback])

    def _held(self) -> LeaseState:
        if self._state is None:
            raise RuntimeError("the lease is not taken yet: use it in its with block")
        return self._state

    def _enter_once(self) -> None:
        if self._entered:
            raise RuntimeError("a lease is entered once; ask the fence for another")
        self._entered = True

    def _grant_sql(self) -> Tuple[str, Dict[str, Any]]:
        """The statement that takes the lease, and its parameters."""
        params = {"key": self.key, "ttl": cfg.interval(self.ttl), "owner": self.owner,
                  "permits": self._permits,
                  "timeout": cfg.interval(self._wait) if self._wait else None}
        if self._wait == 0:
            sql = cfg.SQL_TRY_PERMIT if self._permits else cfg.SQL_TRY_LEASE
        else:
            sql = cfg.SQL_PERMIT if self._permits else cfg.SQL_LEASE
        return sql, params

    def _pool_grant_sql(self) -> Tuple[str, Dict[str, Any]]:
        """The try that takes the lease on a pooled connection, forgotten
        there at once (fence 1.3), and its parameters."""
        sql = cfg.SQL_TRY_PERMIT_ON_POOL if self._permits else cfg.SQL_TRY_LEASE_ON_POOL
        return sql, self._grant_sql()[1]

    def _pool_granted(self, row: Optional[Tuple[Any, ...]], sent: float) -> bool:
        """What the try on the pool answered: True if granted; False if the
        key is taken and the lease may wait for it; LeaseUnavailableError if
        it may not."""
        if row is not None and row[0] is not None:
            self._new_state(tuple(row), sent)
            return True
        if self._wait == 0:
            raise LeaseUnavailableError(self.key, self._wait)
        return False

    @staticmethod
    def _may_have_granted(e: BaseException) -> bool:
        """Whether a grant failed with e may still have granted: the
        connection failed, or the statement was cancelled after the grant."""
        return getattr(e, "sqlstate", None) in (None, "57014")

    @staticmethod
    def _release_owned_sql(fence: "FenceBase[Any]") -> str:
        """What releases this owner's grant of the key whose answer was lost."""
        return cfg.SQL_RELEASE_OWNED_OF_KEY if fence._forget else cfg.SQL_RELEASE_OWNED

    def _new_state(self, row: Tuple[Any, ...], sent: float) -> LeaseState:
        token, expires_at, started = row
        self._state = LeaseState(self.key, token, self.owner, self._timing, sent, expires_at,
                                 started, self._permits)
        return self._state

    def _meaning(self, e: BaseException) -> Tuple[BaseException, bool]:
        """The error to raise for a driver's error, and whether it says that the
        lease is not held (LF002), which marks it lost."""
        st = self._state
        fe = classify(e)
        if fe is not None:
            return fe, isinstance(fe, LeaseNotHeldError) and st is not None
        if st is not None and st.how is not None and getattr(e, "sqlstate", None) == "57014":
            # query_canceled: pgfence cancelled it, as the lease was lost.
            return LeaseLostError(self.key, st.token, st.how, cause=e), False
        return e, False

    def _begin_sql(self, conn: Any) -> bytes:
        """BEGIN and fence_use_token(token, key) as one simple query: a
        transaction of lease.transaction() opens in one round trip, not
        two.  The token and the key are bound here, the key quoted by
        conn's own rules; the text is the same for every transaction of
        the lease (run it with prepare=False: a prepared statement holds
        one command)."""
        sql = self._begin
        if sql is None:
            key = psycopg_sql.Literal(self.key).as_bytes(conn)
            sql = self._begin = b"BEGIN; SELECT fence_use_token(%d::bigint, %s::text)" % (
                self._held().token, key)
        return sql

    def _params(self) -> Dict[str, Any]:
        return {"key": self.key, "token": self._held().token, "ttl": cfg.interval(self.ttl),
                "timeout": cfg.interval(cfg.WATCHDOG_POLL), "owner": self.owner}


def ended_by_block(conn: Any) -> bool:
    """Whether the block of lease.transaction() ended its transaction
    itself (a commit() or a ROLLBACK of its own)."""
    return bool(conn.pgconn.transaction_status == TransactionStatus.IDLE)


def ended_early_error() -> psycopg.ProgrammingError:
    """What a block that ended its own transaction raises at its end: what
    it ran after that ran outside the transaction, without the token."""
    return psycopg.ProgrammingError(
        "the block of lease.transaction() ended its transaction itself; what it ran "
        "after that ran outside it, without the lease's token (leave the commit to "
        "the end of the block)")


def check_permits(permits: int) -> int:
    if isinstance(permits, bool) or not isinstance(permits, int) or permits < 1:
        raise ValueError("permits must be a positive int")
    return permits


L = TypeVar("L")


class FenceBase(Generic[L]):
    """What Fence and AsyncFence share: settings, and the leases they hand out."""

    # The lease class of the flavour, set where it is defined.
    _lease_class: ClassVar[Callable[..., Any]]

    def _settings(self, conninfo: str, kwargs: Dict[str, Any], watchdog_conninfo: Optional[str],
                  renew_timeout: Optional[Seconds], connect_timeout: Seconds) -> None:
        kwargs = dict(kwargs)
        kwargs.pop("autocommit", None)
        self._conninfo = watchdog_conninfo if watchdog_conninfo is not None else conninfo
        self._conn_kwargs: Dict[str, Any] = kwargs
        self._renew_timeout = cfg.seconds(renew_timeout, "renew_timeout") if renew_timeout is not None else None
        # libpq's connect_timeout is whole seconds, at least 1 (0 means none).
        self._connect_timeout = max(int(cfg.seconds(connect_timeout, "connect_timeout") + 0.999), 1)
        # Whether the server has fence_wait_leases_end and fence_forget_token
        # (None: not asked yet; see _capabilities).
        self._multi: Optional[bool] = None
        self._forget: Optional[bool] = None

    def _learn(self, row: Optional[Tuple[Any, ...]]) -> None:
        """What watch.SQL_CAPABILITIES answered.  A test that sets _multi
        to False plays a 1.2 server, which lacks both."""
        if self._multi is None:
            self._multi = bool(row and row[0])
            self._forget = bool(row and row[1])

    def _grants_on_pool(self) -> bool:
        """Whether a grant goes through the pool (fence 1.3): known once asked."""
        return bool(self._multi and self._forget)

    def lease(self, key: Union[str, int], ttl: Seconds = 30, wait: Optional[Seconds] = None,
              owner: Optional[str] = None) -> L:
        """A lease on ``key``, taken when its block starts.

        ``wait``: None waits as long as it takes, 0 tries once, a number
        waits that many seconds; then LeaseUnavailableError.
        """
        return cast(L, self._lease_class(self, key, ttl, wait, owner, None))

    def permit(self, key: Union[str, int], permits: int, ttl: Seconds = 30,
               wait: Optional[Seconds] = None, owner: Optional[str] = None) -> L:
        """One of ``permits`` permits of ``key`` (a bulkhead), as a lease of its own."""
        return cast(L, self._lease_class(self, key, ttl, wait, owner, check_permits(permits)))
