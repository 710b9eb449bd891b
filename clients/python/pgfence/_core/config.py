"""Settings, names and the SQL both flavours send."""
from __future__ import annotations

import datetime as _dt
import functools
import logging
import itertools
import os
import random
import secrets
import socket
from dataclasses import dataclass
from typing import Optional, Tuple, Union

logger = logging.getLogger("pgfence")

Seconds = Union[int, float, _dt.timedelta]

# An owner name is at most 48 bytes (fence's limit).
OWNER_MAX_BYTES = 48


def seconds(value: Seconds, what: str) -> float:
    """A duration given as seconds or as a timedelta, as float seconds (> 0)."""
    if isinstance(value, _dt.timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a number of seconds or a timedelta, not {type(value).__name__}")
    if value != value or value <= 0 or value == float("inf"):
        raise ValueError(f"{what} must be a positive, finite number of seconds, not {value!r}")
    return float(value)


def wait_seconds(value: Optional[Seconds]) -> Optional[float]:
    """wait=None: forever; 0: try once; else seconds (>= 0)."""
    if value is None:
        return None
    if isinstance(value, _dt.timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"wait must be None, 0 or a number of seconds, not {type(value).__name__}")
    if value != value or value < 0:
        raise ValueError(f"wait must be None or at least 0, not {value!r}")
    if value == float("inf"):
        return None
    return float(value)


@functools.lru_cache(maxsize=256)
def interval(value: float) -> _dt.timedelta:
    """Seconds as the timedelta psycopg sends as an interval (a worker asks
    for the same few TTLs over and over)."""
    return _dt.timedelta(seconds=value)


_owner_head: Optional[Tuple[int, str, "itertools.count[int]"]] = None


def generated_owner() -> str:
    """A name no other lease uses: host, pid, 48 random bits drawn once a
    process (a pid comes back after a restart) and a count, within 48 bytes."""
    global _owner_head
    pid = os.getpid()
    head = _owner_head
    if head is None or head[0] != pid:
        # Once a process (a forked child has a pid of its own).
        host = socket.gethostname().split(".")[0] or "host"
        tail = f":{pid}:{secrets.token_hex(6)}:"
        room = OWNER_MAX_BYTES - len(tail.encode()) - 10
        head = _owner_head = (pid, ("pgfence:" + host).encode()[:room].decode("utf-8", "ignore") + tail,
                              itertools.count(1))
    return f"{head[1]}{next(head[2]):x}"


def check_owner(owner: str) -> str:
    if not isinstance(owner, str) or not owner:
        raise ValueError("owner must be a non-empty string")
    if len(owner.encode()) > OWNER_MAX_BYTES:
        raise ValueError(f"owner must be at most {OWNER_MAX_BYTES} bytes")
    return owner


def check_key(key: Union[str, int]) -> str:
    """Keys are text; an int names the same lease as its decimal text."""
    if isinstance(key, bool):
        raise TypeError("key must be a string or an int")
    if isinstance(key, int):
        return str(key)
    if not isinstance(key, str) or not key:
        raise ValueError("key must be a non-empty string")
    return key


@dataclass(frozen=True)
class Timing:
    """When to renew and how long each try may take, for one TTL."""

    ttl: float
    renew_every: float
    try_timeout: float
    retry_every: float

    @classmethod
    @functools.lru_cache(maxsize=256)
    def for_ttl(cls, ttl: float, renew_timeout: Optional[float] = None) -> "Timing":
        """The timing of a TTL (made once for each TTL a process uses)."""
        every = ttl / 3.0
        timeout = renew_timeout if renew_timeout is not None else max(every, 0.05)
        return cls(ttl=ttl, renew_every=every, try_timeout=timeout,
                   retry_every=max(min(ttl / 10.0, 1.0), 0.02))

    def next_renewal(self) -> float:
        """Seconds until the next renewal: a third of the TTL, less up to 20% jitter."""
        return self.renew_every * random.uniform(0.8, 1.0)

    def next_retry(self) -> float:
        return self.retry_every * random.uniform(0.5, 1.0)


# The SQL.  Keys travel as text and tokens as bigint (fence_token has an
# implicit cast from int8, and ::bigint reads one back as an int).  A grant
# also returns its expiry by the lease clock and the server's start time (a
# restart ends every lease: the watchdog compares it after a reconnect),
# both as seconds since the epoch: a float is read far faster than a
# timestamptz, whose time zone psycopg looks up for every value, and every
# grant pays for it.  lease.expires_at makes the datetime when asked.
EXPIRY = "extract(epoch FROM fence_now() + %(ttl)s::interval)::float8"
STARTED = "extract(epoch FROM pg_postmaster_start_time())::float8"
_GRANTED = f"SELECT t::bigint, {EXPIRY}, {STARTED} FROM "
SQL_TRY_LEASE = _GRANTED + "fence_try_lease(%(key)s::text, %(ttl)s::interval, owner => %(owner)s::text) AS t"
SQL_LEASE = (_GRANTED + "fence_lease(%(key)s::text, %(ttl)s::interval, %(timeout)s::interval, "
             "owner => %(owner)s::text) AS t")
SQL_TRY_PERMIT = (_GRANTED + "fence_try_permit(%(key)s::text, %(permits)s::int4, %(ttl)s::interval, "
                  "owner => %(owner)s::text) AS t")
SQL_PERMIT = (_GRANTED + "fence_permit(%(key)s::text, %(permits)s::int4, %(ttl)s::interval, "
              "%(timeout)s::interval, owner => %(owner)s::text) AS t")
# The same tries wrapped in fence_forget_token (fence 1.3), for a grant on a
# pooled connection: the connection that took the lease does not keep its
# token in effect for the pool's next borrower.
_FORGOTTEN = _GRANTED + "fence_forget_token(%(key)s::text, {}) AS t"
SQL_TRY_LEASE_ON_POOL = _FORGOTTEN.format(
    "fence_try_lease(%(key)s::text, %(ttl)s::interval, owner => %(owner)s::text)")
SQL_TRY_PERMIT_ON_POOL = _FORGOTTEN.format(
    "fence_try_permit(%(key)s::text, %(permits)s::int4, %(ttl)s::interval, owner => %(owner)s::text)")
SQL_RENEW = f"SELECT fence_renew(%(key)s::text, %(token)s::bigint, %(ttl)s::interval), {EXPIRY}"
SQL_RELEASE = "SELECT fence_release(%(key)s::text, %(token)s::bigint)"
SQL_STATUS = f"SELECT fence_lease_status(%(key)s::text, %(token)s::bigint), {STARTED}"
SQL_WAIT_END = "SELECT fence_wait_lease_end(%(key)s::text, %(token)s::bigint, %(timeout)s::interval)"
SQL_USE_TOKEN = "SELECT fence_use_token(%(token)s::bigint, %(key)s::text)"
# What this owner holds of the key after a grant whose answer never came
# back (the wait was interrupted): released by its token.  With fence 1.3,
# read from the key's own place in the lease table, not the whole table.
SQL_RELEASE_OWNED_OF_KEY = ("SELECT fence_release(l.key, l.token) FROM fence_leases_of(%(key)s::text) l "
                            "WHERE l.owner = %(owner)s::text")
SQL_RELEASE_OWNED = ("SELECT fence_release(l.key, l.token) FROM fence_leases l "
                     "WHERE l.database = current_database() AND l.key = %(key)s::text "
                     "AND l.owner = %(owner)s::text")
SQL_NO_LOCK_TIMEOUT = "SET LOCAL lock_timeout = 0"

# How long the watchdog's fence_wait_lease_end sleeps before it asks again:
# a return with NULL (still held) also proves the connection is alive.
WATCHDOG_POLL = 30.0
