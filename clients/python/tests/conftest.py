"""Fixtures: a real fence server, named by PGFENCE_TEST_DSN (a libpq conninfo
of a superuser, on a server with fence preloaded and fence.test_clock = on).

Without PGFENCE_TEST_DSN the tests that need a server are skipped; make test
(test/t/044_python_client.pl) always sets it.
"""
import os
import sys
import time
import uuid

import psycopg
import pytest
import pytest_asyncio
from psycopg_pool import AsyncConnectionPool, ConnectionPool

import pgfence

HERE = os.path.dirname(os.path.abspath(__file__))


def env_or_skip(name):
    """The value of an environment variable the test needs, or skip it."""
    value = os.environ.get(name)
    if not value:
        pytest.skip(f"{name} is not set")
    return value


@pytest.fixture(scope="session")
def dsn():
    return env_or_skip("PGFENCE_TEST_DSN")


@pytest.fixture
def admin(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        yield conn
        # Every test leaves the lease clock on real time.
        conn.execute("SELECT fence_set_clock(NULL)")


@pytest.fixture
def key():
    return f"test:{uuid.uuid4().hex[:12]}"


@pytest.fixture
def jobs(admin):
    """A protected table with one row, as in the README's getting started."""
    name = f"jobs_{uuid.uuid4().hex[:8]}"
    admin.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, result text, "
                  "fence fence_token NOT NULL DEFAULT 0)")
    admin.execute(f"INSERT INTO {name} VALUES (1, 'pending')")
    admin.execute("SELECT fence_protect(%s)", (name,))
    yield name
    admin.execute(f"DROP TABLE {name}")


@pytest.fixture
def pool(dsn):
    with ConnectionPool(dsn, min_size=1, max_size=4, kwargs={"autocommit": True}) as p:
        yield p


@pytest.fixture
def fx(pool):
    return pgfence.Fence(pool)


@pytest_asyncio.fixture
async def apool(dsn):
    async with AsyncConnectionPool(dsn, min_size=1, max_size=4, kwargs={"autocommit": True}) as p:
        yield p


@pytest.fixture
def afx(apool):
    return pgfence.AsyncFence(apool)


def leases_of(admin, key):
    return admin.execute("SELECT token::bigint, owner FROM fence_leases WHERE key = %s",
                         (key,)).fetchall()


def status(admin, key, token):
    return admin.execute("SELECT fence_lease_status(%s::text, %s::bigint)", (key, token)).fetchone()[0]


def worker(*args):
    """The command line of tests/worker.py, with this interpreter."""
    return [sys.executable, os.path.join(HERE, "worker.py"), *args]


def app_dsn(dsn):
    """dsn with an application_name of its own, to count its backends by."""
    app = f"pgfence-test-{uuid.uuid4().hex[:8]}"
    return f"{dsn} application_name={app}", app


def watchdog_pids(admin, fence):
    """The backend of the fence's watchdog connection (one, or none)."""
    dog = fence._dog
    conn = dog._conn if dog is not None else None
    if conn is None or conn.closed:
        return []
    pid = conn.info.backend_pid
    alive = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()[0]
    return [pid] if alive else []


def wait_for(check, timeout=5.0):
    """Poll check() until it is true (True) or timeout seconds pass (False)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.02)
    return bool(check())
