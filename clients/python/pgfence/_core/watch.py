"""The set of leases one Fence's watchdog watches, shared by both flavours.

A Fence keeps one watchdog connection for all its leases when the server
has fence_wait_leases_end (fence 1.3): it sleeps in one call on the whole
set and is told the moment any lease of it ends.  A lease joins the set
JOIN_AFTER after its grant; the call running then does not watch it yet, so the watchdog cancels
that call (a cancel request, as psycopg's ``conn.cancel()`` sends) and
calls again with the new set: the new lease is watched within a round trip,
not after a poll interval.  A lease that leaves the set needs no cancel:
its release ends the running call by itself, with a row that the watchdog
ignores.  On a server without the function (fence 1.2), each lease keeps a
watchdog connection of its own, as before.
"""
from __future__ import annotations

import threading
from typing import Any, Dict, Hashable, List, Optional, Tuple

from .config import STARTED

# What the server has of fence 1.3: fence_wait_leases_end (one watchdog
# for all leases) and fence_forget_token (grants on the pool).
# (to_regproc is NULL for a name with more than one function, as
# fence_forget_token has: one for text keys, one for bigint keys.)
SQL_CAPABILITIES = ("SELECT to_regproc('fence_wait_leases_end') IS NOT NULL, "
                    "EXISTS (SELECT FROM pg_catalog.pg_proc WHERE proname = 'fence_forget_token' "
                    "AND pg_catalog.pg_function_is_visible(oid))")
SQL_WAIT_LEASES_END = ("SELECT key, token::bigint, status FROM fence_wait_leases_end("
                       "%(keys)s::text[], %(tokens)s::bigint[], %(timeout)s::interval)")
SQL_SERVER_STARTED = f"SELECT {STARTED}"

# What a watchdog connection must not inherit from the pool's settings: a
# statement_timeout would cut every wait short (and the watchdog would
# reconnect in a loop), a lock_timeout or an idle-in-transaction timeout
# has no business on it either.  Each is set only where it is not 0 already
# (a session setting made through a transaction pooler would stay on the
# server connection for its other clients).
SQL_OWN_SETTINGS = "SELECT " + ", ".join(
    f"CASE WHEN current_setting('{name}') <> '0' THEN set_config('{name}', '0', false) END"
    for name in ("statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"))

# A lease joins the watchdog's set once it has been held this long
# (seconds).  Each join stops the running call with a cancel request (a
# connection to the server of its own) and calls again; most leases of a
# busy worker are released sooner, and never cost the watchdog anything.
# A lease lost in that first moment is still told: the call that watches it
# returns at once, as the lease is no longer held.
JOIN_AFTER = 0.1

# fence_wait_leases_end watches at most this many leases in one call.
MAX_WATCHED = 10000

# The sqlstate of a cancelled statement.
QUERY_CANCELED = "57014"

# A cancel request that reaches the server before the call starts (or after
# it ended) cancels nothing: the watchdog sends it again after these pauses
# (seconds) while the call it meant to stop still runs.
CANCEL_RETRIES = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)


class WatchSet:
    """The leases a watchdog watches, by (key, token), and whether the call
    that runs now watches all of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._leases: Dict[int, Any] = {}
        self._version = 0        # leases added so far
        self._issued = -1       # the version the running call watches
        self._cancel_sent = False
        self.calls = 0          # calls issued so far

    def add(self, lease: Any) -> bool:
        """Watch lease; True if the running call must be cancelled to see it."""
        with self._lock:
            self._leases[id(lease)] = lease
            self._version += 1
            if self._issued >= 0 and not self._cancel_sent:
                self._cancel_sent = True
                return True
            return False

    def remove(self, lease: Any) -> None:
        # The running call may go on watching it: only a lease added makes
        # it stale.
        with self._lock:
            self._leases.pop(id(lease), None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._leases)

    def leases(self) -> List[Any]:
        with self._lock:
            return list(self._leases.values())

    def issue(self) -> Optional[Tuple[List[str], List[int]]]:
        """The keys and tokens of the call about to run, or None if the set is empty."""
        with self._lock:
            self._cancel_sent = False
            if not self._leases:
                self._issued = -1
                return None
            self._issued = self._version
            self.calls += 1
            # More than one call takes: the rest rely on their renewals.
            watched = list(self._leases.values())[:MAX_WATCHED]
            return [lease.key for lease in watched], [lease._held().token for lease in watched]

    def idle(self) -> None:
        """No call runs now."""
        with self._lock:
            self._issued = -1

    def stale(self, calls: int) -> bool:
        """Does call number ``calls`` still run, though the set has changed since?"""
        with self._lock:
            return self.calls == calls and self._issued >= 0 and self._issued != self._version

    def ended(self, rows: List[Tuple[Any, ...]]) -> List[Tuple[Any, str]]:
        """The leases the rows of fence_wait_leases_end name, with their status."""
        with self._lock:
            by: Dict[Hashable, List[Any]] = {}
            for lease in self._leases.values():
                by.setdefault((lease.key, lease._held().token), []).append(lease)
            out = []
            for key, token, status in rows:
                for lease in by.pop((key, token), []):
                    out.append((lease, status))
            return out
