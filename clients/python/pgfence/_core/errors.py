"""The errors pgfence raises, and classify(), which maps a driver's error to one.

Every error is a FenceError.  When a database error is the reason, it is kept
both as ``__cause__`` (so tracebacks show it) and as ``cause`` (so code can
read its ``sqlstate`` or ``diag``).
"""
from __future__ import annotations

from typing import Optional

# fence's own SQLSTATEs (class LF), and PostgreSQL's "lock not available",
# which fence_lease raises when its timeout passes.
STALE_TOKEN = "LF001"
LEASE_NOT_HELD = "LF002"
TOKEN_REQUIRED = "LF003"
LOCK_NOT_AVAILABLE = "55P03"

# How a lease was lost (LeaseLostError.how).
EXPIRED = "expired"          # its expiry passed on the server
SUPERSEDED = "superseded"    # another holder took it over
RELEASED = "released"        # released by this process before the check
BROKEN = "broken"            # ended by someone else: fence_break, or a release with its token
CONNECTION = "connection"    # the server restarted (every lease ended with it)
DEADLINE = "deadline"        # no renewal succeeded before the local deadline
LOST_HOWS = (EXPIRED, SUPERSEDED, RELEASED, BROKEN, CONNECTION, DEADLINE)


class FenceError(Exception):
    """Base class of every pgfence error."""

    sqlstate: Optional[str] = None

    def __init__(self, message: str, *, cause: Optional[BaseException] = None):
        super().__init__(message)
        self.cause = cause
        if cause is not None:
            self.__cause__ = cause
            state = getattr(cause, "sqlstate", None)
            if state:
                self.sqlstate = state


class StaleTokenError(FenceError):
    """SQLSTATE LF001: a newer holder has written the row; stop."""

    sqlstate = STALE_TOKEN


class LeaseNotHeldError(FenceError):
    """SQLSTATE LF002: the token is not the current live token of its lease.

    Raised from a lease's transaction, it also marks that lease lost.
    """

    sqlstate = LEASE_NOT_HELD


class TokenRequiredError(FenceError):
    """SQLSTATE LF003: a protected table requires a token and the write had none."""

    sqlstate = TOKEN_REQUIRED


class LeaseUnavailableError(FenceError):
    """The lease was not granted within ``wait`` seconds (or at once, for wait=0)."""

    def __init__(self, key: str, wait: Optional[float], *, cause: Optional[BaseException] = None):
        if wait == 0:
            message = f"lease {key!r} is held by another owner"
        else:
            message = f"lease {key!r} was not granted within {wait} seconds"
        super().__init__(message, cause=cause)
        self.key = key
        self.wait = wait


class LeaseLostError(FenceError):
    """The lease ended while this process believed it held it.

    ``how`` says why: one of "expired", "superseded", "released", "broken",
    "connection", "deadline".
    """

    def __init__(self, key: str, token: int, how: str, *, cause: Optional[BaseException] = None):
        super().__init__(f"lease {key!r} (token {token}) was lost: {how}", cause=cause)
        self.key = key
        self.token = token
        self.how = how


def classify(err: BaseException) -> Optional[FenceError]:
    """Map a driver's error to the FenceError it means, or None.

    Reads the SQLSTATE (psycopg's ``sqlstate``, or ``pgcode``/``code`` of
    other drivers).  A FenceError is returned as it is.  The result keeps
    ``err`` as its cause.
    """
    if isinstance(err, FenceError):
        return err
    state = (getattr(err, "sqlstate", None) or getattr(err, "pgcode", None)
             or getattr(err, "code", None))
    if not isinstance(state, str):
        return None
    text = _first_line(err)
    if state == STALE_TOKEN:
        return StaleTokenError(text, cause=err)
    if state == LEASE_NOT_HELD:
        return LeaseNotHeldError(text, cause=err)
    if state == TOKEN_REQUIRED:
        return TokenRequiredError(text, cause=err)
    return None


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__
