"""Behind PgBouncer in transaction mode, one server connection for every client.

Needs PGFENCE_TEST_PGBOUNCER_DSN (the TAP test starts a PgBouncer with
pool_mode = transaction and default_pool_size = 1 in front of the test
database).  The lease's own connection goes straight to the server
(watchdog_conninfo); renewals, transactions and the release go through
PgBouncer, where every client shares one server connection.
"""
import time

import psycopg
import pytest
from psycopg_pool import ConnectionPool

import pgfence

from conftest import env_or_skip, status


@pytest.fixture
def bouncer_dsn():
    return env_or_skip("PGFENCE_TEST_PGBOUNCER_DSN")


def test_lease_through_transaction_pooling(dsn, bouncer_dsn, admin, key, jobs):
    # prepare_threshold=None: PgBouncer 1.18 in transaction mode keeps no
    # prepared statements (psycopg's own advice).
    kwargs = {"autocommit": True, "prepare_threshold": None}
    with ConnectionPool(bouncer_dsn, min_size=2, max_size=3, kwargs=kwargs) as pool:
        fx = pgfence.Fence(pool, watchdog_conninfo=dsn)
        backends = set()
        with fx.lease(key, ttl=1) as lease:
            for _ in range(6):
                time.sleep(0.5)
                with lease.transaction() as conn:
                    backends.add(conn.execute("SELECT pg_backend_pid()").fetchone()[0])
                    conn.execute(f"UPDATE {jobs} SET result = 'pooled' WHERE id = 1")
                assert status(admin, key, lease.token) == "held"
            assert not lease.lost.is_set()
        assert len(backends) == 1           # one server connection served them all
        assert status(admin, key, lease.token) == "released"
        with pool.connection() as conn:
            assert conn.execute("SELECT pg_backend_pid()").fetchone()[0] in backends
            assert conn.execute("SELECT fence_current_token()").fetchone()[0] is None
    assert admin.execute(f"SELECT result, fence::bigint FROM {jobs}").fetchone() == ("pooled", lease.token)


def test_the_server_connection_forgets_the_token(bouncer_dsn, dsn, key):
    """Another client of the same server connection writes with no token."""
    kwargs = {"autocommit": True, "prepare_threshold": None}
    with ConnectionPool(bouncer_dsn, min_size=1, max_size=1, kwargs=kwargs) as pool:
        fx = pgfence.Fence(pool, watchdog_conninfo=dsn)
        with fx.lease(key, ttl=30) as lease:
            with lease.transaction():
                pass
            with psycopg.connect(bouncer_dsn, autocommit=True, prepare_threshold=None) as other:
                assert other.execute("SELECT fence_current_token()").fetchone()[0] is None
