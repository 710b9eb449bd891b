"""pgfence.Fence and Lease, with threads, against a real server."""
import logging
import threading
import time

import psycopg
import pytest

import pgfence
from pgfence.testing import VirtualClock

from conftest import leases_of, status


def test_lease_token_and_release(fx, admin, key):
    with fx.lease(key, ttl=30) as lease:
        assert isinstance(lease.token, int) and lease.token > 0
        assert lease.key == key
        assert lease.expires_at is not None
        rows = leases_of(admin, key)
        assert rows == [(lease.token, lease.owner)]
        assert lease.owner.startswith("pgfence:")
        assert status(admin, key, lease.token) == "held"
        lease.check()
        assert not lease.lost.is_set()
    assert leases_of(admin, key) == []
    assert lease.how == "released"
    assert lease.lost.is_set()
    with pytest.raises(pgfence.LeaseLostError) as ei:
        lease.check()
    assert ei.value.how == "released"


def test_release_on_error(fx, admin, key):
    with pytest.raises(ZeroDivisionError):
        with fx.lease(key, ttl=30):
            1 / 0
    assert leases_of(admin, key) == []


def test_try_once_and_wait(fx, key):
    with fx.lease(key, ttl=30):
        with pytest.raises(pgfence.LeaseUnavailableError) as ei:
            with fx.lease(key, wait=0):
                pass
        assert ei.value.wait == 0
        start = time.monotonic()
        with pytest.raises(pgfence.LeaseUnavailableError) as ei:
            with fx.lease(key, wait=0.5):
                pass
        took = time.monotonic() - start
        assert 0.4 < took < 3, took
        assert ei.value.cause is not None and ei.value.cause.sqlstate == "55P03"


def test_wait_forever_is_served(fx, key):
    got = []

    def second():
        with fx.lease(key, ttl=30, wait=None) as lease:
            got.append(lease.token)

    with fx.lease(key, ttl=30) as first:
        t = threading.Thread(target=second)
        t.start()
        time.sleep(0.5)
        assert got == []
    t.join(10)
    assert got and got[0] > first.token


def test_renewal_keeps_a_one_second_lease_through_four_seconds(fx, admin, key, jobs):
    with fx.lease(key, ttl=1) as lease:
        first_expiry = lease.expires_at
        for _ in range(8):
            time.sleep(0.5)
            with lease.transaction() as conn:
                conn.execute(f"UPDATE {jobs} SET result = 'working' WHERE id = 1")
            assert status(admin, key, lease.token) == "held"
            with pytest.raises(pgfence.LeaseUnavailableError):
                with fx.lease(key, wait=0):
                    pass
        assert not lease.lost.is_set()
        assert lease.expires_at > first_expiry
    assert admin.execute(f"SELECT fence::bigint FROM {jobs}").fetchone()[0] == lease.token


def test_pooled_connection_carries_no_token(dsn, admin, key, jobs):
    # One connection in the pool: the lease's transaction and the next user share it.
    from psycopg_pool import ConnectionPool
    with ConnectionPool(dsn, min_size=1, max_size=1, kwargs={"autocommit": True}) as pool:
        fx = pgfence.Fence(pool)
        with fx.lease(key, ttl=30) as lease:
            with lease.transaction() as conn:
                pid = conn.info.backend_pid
                assert conn.execute("SELECT fence_current_token()::bigint").fetchone()[0] == lease.token
                assert conn.execute("SELECT fence_current_token(%s::text)::bigint",
                                    (key,)).fetchone()[0] == lease.token
                conn.execute(f"UPDATE {jobs} SET result = 'fenced' WHERE id = 1")
            with pool.connection() as conn:
                assert conn.info.backend_pid == pid
                assert conn.execute("SELECT fence_current_token()").fetchone()[0] is None
                assert conn.execute("SELECT fence_current_token(%s::text)", (key,)).fetchone()[0] is None
        with pool.connection() as conn:
            assert conn.info.backend_pid == pid
            assert conn.execute("SELECT fence_current_token()").fetchone()[0] is None
            # The next user's write carries no token: the trigger lets it
            # through as unfenced (an operator's fix), leaving the fence as it was.
            conn.execute(f"UPDATE {jobs} SET result = 'unfenced' WHERE id = 1")
    assert admin.execute(f"SELECT result, fence::bigint FROM {jobs}").fetchone() == ("unfenced", lease.token)


def test_break_is_pushed_and_cancels_the_statement(fx, admin, key):
    seen = []
    with pytest.raises(pgfence.LeaseLostError) as outer:
        with fx.lease(key, ttl=30) as lease:
            lease.on_lost(seen.append)
            timer = threading.Timer(0.5, lambda: admin.execute("SELECT fence_break(%s::text)", (key,)))
            timer.start()
            start = time.monotonic()
            with pytest.raises(pgfence.LeaseLostError) as ei:
                with lease.transaction() as conn:
                    conn.execute("SELECT pg_sleep(30)")
            took = time.monotonic() - start
            assert took < 1.5, took
            assert ei.value.how == "broken"
            assert isinstance(ei.value.cause, psycopg.errors.QueryCanceled)
            assert lease.lost.is_set()
            assert [e.how for e in seen] == ["broken"]
    assert outer.value.how == "broken"
    late = []
    lease.on_lost(late.append)  # lost before the release: called at once
    assert [e.how for e in late] == ["broken"]


def test_lf002_marks_the_lease_lost(fx, admin, key, jobs):
    admin.execute("SELECT fence_protect(%s, lease => %s, strict => true)", (jobs, key))
    with pytest.raises(pgfence.LeaseLostError):
        with fx.lease(key, ttl=30) as lease:
            with VirtualClock(admin) as clock:
                clock.freeze()
                # The watchdog would tell too; the write must fail on its own.
                lease._stop.set()
                clock.advance(31)
                with pytest.raises(pgfence.LeaseNotHeldError) as ei:
                    with lease.transaction() as conn:
                        conn.execute(f"UPDATE {jobs} SET result = 'late' WHERE id = 1")
                assert ei.value.sqlstate == "LF002"
                assert lease.lost.is_set()
                assert lease.how == "expired"


def test_virtual_clock_expiry_is_pushed(fx, admin, key):
    with VirtualClock(admin) as clock:
        clock.freeze()
        with pytest.raises(pgfence.LeaseLostError) as ei:
            with fx.lease(key, ttl=30) as lease:
                clock.advance(31)
                assert lease.lost.wait(2)
                assert lease.how == "expired"
                with pytest.raises(pgfence.LeaseLostError):
                    lease.check()
        assert ei.value.how == "expired"


def test_superseded_after_expiry(fx, admin, key):
    with VirtualClock(admin) as clock:
        clock.freeze()
        with pytest.raises(pgfence.LeaseLostError) as ei:
            with fx.lease(key, ttl=30) as lease:
                clock.advance(31)
                with fx.lease(key, ttl=30, wait=0) as other:
                    assert other.token > lease.token
                    assert status(admin, key, lease.token) == "superseded"
                    assert lease.lost.wait(2)
        assert ei.value.how in ("expired", "superseded")


def test_watchdog_connection_killed_while_held(fx, admin, key):
    # The watchdog reconnects, finds the lease still held, and goes on.
    with pytest.raises(pgfence.LeaseLostError), fx.lease(key, ttl=30) as lease:
        pid = lease._own.info.backend_pid
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        time.sleep(1)
        assert not lease.lost.is_set()
        assert lease._own is not None and lease._own.info.backend_pid != pid
        admin.execute("SELECT fence_break(%s::text)", (key,))
        assert lease.lost.wait(2)
        assert lease.how == "broken"
    # (the block raises LeaseLostError, checked elsewhere)


def test_logging_events(fx, admin, key, caplog):
    caplog.set_level(logging.DEBUG, logger="pgfence")
    with pytest.raises(pgfence.LeaseLostError):
        with fx.lease(key, ttl=1) as lease:
            time.sleep(0.6)
            admin.execute("SELECT fence_break(%s::text)", (key,))
            assert lease.lost.wait(2)
    events = [getattr(r, "pgfence_event", None) for r in caplog.records if r.name == "pgfence"]
    assert events[0] == "acquired"
    assert "renewed" in events
    assert "lost" in events
    assert events[-1] == "released"


def test_permits(fx, admin, key):
    with fx.permit(key, 2, ttl=30) as a, fx.permit(key, 2, ttl=30) as b:
        assert a.token != b.token
        with pytest.raises(pgfence.LeaseUnavailableError):
            with fx.permit(key, 2, wait=0):
                pass
        assert admin.execute("SELECT count(*) FROM fence_leases WHERE key = %s AND permits = 2",
                             (key,)).fetchone()[0] == 2
    assert leases_of(admin, key) == []


def test_breaker(fx, key):
    b = fx.breaker(key)
    with b.call(failure_threshold=2):
        pass
    for _ in range(2):
        with pytest.raises(RuntimeError):
            with b.call(failure_threshold=2):
                raise RuntimeError("provider down")
    with pytest.raises(pgfence.BreakerOpenError) as ei:
        with b.call(failure_threshold=2):
            pass
    assert ei.value.retry_at is not None


def test_conninfo_fence_owns_its_pool(dsn, admin, key):
    with pgfence.Fence(dsn) as fx:
        with fx.lease(key, ttl=5) as lease:
            assert leases_of(admin, key) == [(lease.token, lease.owner)]
    assert fx.pool.closed


def test_network_stall_suspends_then_renews(dsn, admin, key, caplog):
    """Renewals that hang are suspended, not lost, while the local deadline holds."""
    from psycopg_pool import ConnectionPool
    from netproxy import Proxy
    caplog.set_level(logging.INFO, logger="pgfence")
    with Proxy(dsn) as proxy, \
            ConnectionPool(proxy.dsn, min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
        fx = pgfence.Fence(pool, renew_timeout=0.3)
        with fx.lease(key, ttl=4) as lease:
            time.sleep(0.2)
            proxy.hold()
            suspended = False
            end = time.monotonic() + 2.2
            while time.monotonic() < end:
                suspended = suspended or lease.suspended
                time.sleep(0.05)
            proxy.flow()
            assert suspended
            assert not lease.lost.is_set()
            end = time.monotonic() + 3
            while lease.suspended and time.monotonic() < end:
                time.sleep(0.05)
            assert not lease.suspended and not lease.lost.is_set()
            assert status(admin, key, lease.token) == "held"
    events = [getattr(r, "pgfence_event", None) for r in caplog.records if r.name == "pgfence"]
    assert "suspended" in events and "renewed" in events


def test_network_stall_past_the_deadline_loses_the_lease(dsn, admin, key):
    """No renewal through by the local deadline: lost, whatever the server says."""
    from psycopg_pool import ConnectionPool
    from netproxy import Proxy
    with Proxy(dsn) as proxy, \
            ConnectionPool(proxy.dsn, min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
        fx = pgfence.Fence(pool, renew_timeout=0.3)
        with pytest.raises(pgfence.LeaseLostError) as ei:
            with fx.lease(key, ttl=1.5) as lease:
                proxy.hold()                  # the watchdog's connection is held too
                held_at = time.monotonic()
                assert lease.lost.wait(3)
                took = time.monotonic() - held_at
                proxy.flow()
        assert ei.value.how == "deadline"
        assert took <= 1.5 + 0.3, took
