"""pgfence.Fence and Lease, with threads, against a real server."""
import contextlib
import logging
import threading
import time

import psycopg
import pytest

import pgfence
from pgfence.testing import VirtualClock

from psycopg_pool import ConnectionPool

from conftest import app_dsn, leases_of, status, wait_for, watchdog_pids


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
        assert wait_for(lambda: len(watchdog_pids(admin, fx)) == 1)
        pid = watchdog_pids(admin, fx)[0]
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        time.sleep(1)
        assert not lease.lost.is_set()
        assert wait_for(lambda: watchdog_pids(admin, fx) not in ([], [pid]))
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


def test_deadline_loss_callbacks_do_not_hold_up_other_leases(dsn, admin, key):
    """A lease lost at its local deadline runs its on_lost callbacks off the
    timer thread: one that blocks delays neither the other leases' renewals
    nor their own deadline losses."""
    from psycopg_pool import ConnectionPool
    from netproxy import Proxy
    release_slow = threading.Event()
    with Proxy(dsn) as proxy, \
            ConnectionPool(proxy.dsn, min_size=1, max_size=4, kwargs={"autocommit": True}) as pool:
        fx = pgfence.Fence(pool, renew_timeout=0.3)
        try:
            # Leaving the blocks of leases lost meanwhile raises LeaseLostError.
            with pytest.raises(pgfence.LeaseLostError), contextlib.ExitStack() as stack:
                slow = stack.enter_context(fx.lease(key + ":slow", ttl=1.0))
                slow.on_lost(lambda err: release_slow.wait(10))
                other = stack.enter_context(fx.lease(key + ":other", ttl=1.5))
                proxy.hold()
                held_at = time.monotonic()
                assert slow.lost.wait(3)
                assert other.lost.wait(3)
                took = time.monotonic() - held_at
                assert (slow.how, other.how) == ("deadline", "deadline")
                assert took <= 1.5 + 0.5, took
                proxy.flow()
                release_slow.set()
        finally:
            release_slow.set()
        fx.close()


def test_twenty_leases_one_watchdog(dsn, admin, key):
    """All the leases of a Fence are watched by one backend; a break of any is
    pushed within a second."""
    app_dsn_, app = app_dsn(dsn)
    with ConnectionPool(app_dsn_, min_size=1, max_size=4, kwargs={"autocommit": True}) as pool:
        fx = pgfence.Fence(pool)
        stack = contextlib.ExitStack()
        leases = [stack.enter_context(fx.lease(f"{key}:{i}", ttl=30)) for i in range(20)]
        try:
            assert wait_for(lambda: len(watchdog_pids(admin, fx)) == 1)
            assert wait_for(lambda: waits(admin, app) == 1)
            # The pool's connections and the watchdog's, nothing per lease.
            backends = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
                                     (app,)).fetchone()[0]
            assert backends <= 4 + 1, backends
            for victim in (leases[13], leases[19], leases[0]):
                admin.execute("SELECT fence_break(%s::text)", (victim.key,))
                started = time.monotonic()
                assert victim.lost.wait(1.0)
                assert time.monotonic() - started < 1.0
                assert victim.how == "broken"
            assert sorted(lease.key for lease in leases if lease.lost.is_set()) == \
                sorted([f"{key}:0", f"{key}:13", f"{key}:19"])
            # The wait goes on with the other 17, on the same single backend.
            assert wait_for(lambda: waits(admin, app) == 1)
            assert len(watchdog_pids(admin, fx)) == 1
        finally:
            with pytest.raises(pgfence.LeaseLostError):
                stack.close()
        assert admin.execute("SELECT count(*) FROM fence_leases WHERE key LIKE %s",
                             (key + ":%",)).fetchone()[0] == 0


def test_new_lease_is_watched_at_once(fx, admin, key):
    """A lease taken while the watchdog sleeps on others is watched by the next wait."""
    with fx.lease(key + ":first", ttl=30):
        assert wait_for(lambda: len(watchdog_pids(admin, fx)) == 1)
        with pytest.raises(pgfence.LeaseLostError), fx.lease(key, ttl=30) as lease:
            admin.execute("SELECT fence_break(%s::text)", (key,))
            assert lease.lost.wait(1.0)
        assert lease.how == "broken"


def test_pool_statement_timeout_does_not_reach_the_watchdog(dsn, admin, key):
    """A pool whose connections time out after 100 ms: the lease is still watched."""
    app_dsn_, app = app_dsn(dsn)
    options = ("-c statement_timeout=100 -c lock_timeout=100 "
               "-c idle_in_transaction_session_timeout=100")
    with ConnectionPool(app_dsn_ + f" options='{options}'", min_size=1, max_size=2,
                        kwargs={"autocommit": True}) as pool:
        with pool.connection() as conn:
            assert conn.execute("SHOW statement_timeout").fetchone()[0] == "100ms"
        fx = pgfence.Fence(pool)
        with pytest.raises(pgfence.LeaseLostError), fx.lease(key, ttl=1) as lease:
            time.sleep(2.0)
            assert not lease.lost.is_set()
            pids = watchdog_pids(admin, fx)
            assert len(pids) == 1 and waits(admin, app) == 1
            # One wait all along, not one cut short every 100 ms.
            assert admin.execute("SELECT now() - query_start > interval '1.5 seconds' "
                                 "FROM pg_stat_activity WHERE pid = %s", (pids[0],)).fetchone()[0]
            admin.execute("SELECT fence_break(%s::text)", (key,))
            assert lease.lost.wait(1.0)
            assert watchdog_pids(admin, fx) == pids     # no reconnect along the way


def test_without_fence_wait_leases_end_each_lease_watches_itself(fx, admin, key):
    """A 1.2 server: one watchdog connection per lease, as before."""
    fx._multi = False                     # as a server without the function answers
    stack = contextlib.ExitStack()
    a = stack.enter_context(fx.lease(key + ":a", ttl=30))
    b = stack.enter_context(fx.lease(key + ":b", ttl=30))
    try:
        assert wait_for(lambda: admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
            "AND query LIKE 'SELECT fence_wait_lease_end(%%'").fetchone()[0] == 2)
        assert fx._dog is None
        admin.execute("SELECT fence_break(%s::text)", (b.key,))
        assert b.lost.wait(1.0) and not a.lost.is_set()
    finally:
        with pytest.raises(pgfence.LeaseLostError):
            stack.close()


def waits(admin, app):
    """How many backends of application app sleep in fence_wait_leases_end."""
    return admin.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s "
                         "AND state = 'active' AND query LIKE '%%fence_wait_leases_end(%%'",
                         (app,)).fetchone()[0]


def test_free_key_is_taken_in_one_statement_on_the_pool(dsn, admin, key, monkeypatch):
    """With fence 1.3 a lease on a free key is one statement on a pooled
    connection: no connection of its own, no token left on any pooled
    connection, and a lease released before it joins the watchdog never
    makes the watchdog call again (so sends no cancel request)."""
    from pgfence._core import watch
    app_dsn_, app = app_dsn(dsn)
    with ConnectionPool(app_dsn_, min_size=2, max_size=2, kwargs={"autocommit": True}) as pool:
        pool.wait()
        fx = pgfence.Fence(pool)
        connects = []
        real_connect = fx._connect
        monkeypatch.setattr(fx, "_connect", lambda: connects.append(1) or real_connect())
        monkeypatch.setattr(watch, "JOIN_AFTER", 0.05)
        with fx.lease(key + ":long", ttl=30):
            assert wait_for(lambda: waits(admin, app) == 1)     # the watchdog joined
            monkeypatch.setattr(watch, "JOIN_AFTER", 5.0)      # no short lease below does
            assert connects == [1]                             # the watchdog's own, no other
            calls = fx._dog.leases.calls
            backends = sorted(r[0] for r in admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (app,)))
            assert len(backends) == 3
            for i in range(20):
                with fx.lease(f"{key}:{i}", ttl=30) as lease:
                    with pool.connection() as a, pool.connection() as b:
                        for conn in (a, b):
                            assert conn.execute("SELECT fence_current_token()").fetchone()[0] is None
                    with lease.transaction() as conn:
                        assert conn.execute("SELECT fence_current_token()::bigint").fetchone()[0] == lease.token
                    assert leases_of(admin, lease.key) == [(lease.token, lease.owner)]
                assert leases_of(admin, f"{key}:{i}") == []
            assert connects == [1]
            assert fx._dog.leases.calls == calls
            assert sorted(r[0] for r in admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (app,))) == backends


def test_lease_that_waits_takes_its_own_connection(fx, admin, key):
    """A key held by another: the lease waits on a connection of its own and
    is granted when the holder lets go; the pool then carries no token."""
    other = pgfence.Fence(fx.pool)
    with other.lease(key, ttl=30) as first:
        got = []

        def second():
            with fx.lease(key, ttl=30, wait=10) as lease:
                got.append(lease.token)
        t = threading.Thread(target=second)
        t.start()
        assert wait_for(lambda: admin.execute(
            "SELECT count(*) FROM fence_lease_waiters_of(%s::text)", (key,)).fetchone()[0] == 1)
    t.join(10)
    assert got and got[0] > first.token
    with fx.pool.connection() as conn:
        assert conn.execute("SELECT fence_current_token()").fetchone()[0] is None
    other.close()


def test_grant_whose_answer_is_lost_is_given_back(dsn, admin, key):
    """The server grants, the answer never comes back (the connection
    breaks): the client releases what its owner holds of the key, so nothing
    waits for the TTL."""
    from netproxy import Proxy
    with Proxy(dsn) as proxy, \
            ConnectionPool(proxy.dsn, min_size=1, max_size=1, kwargs={"autocommit": True}) as pool:
        fx = pgfence.Fence(pool)
        fx._capabilities()
        proxy.hold_replies()
        errors = []

        def take():
            try:
                with fx.lease(key, ttl=60, wait=0):
                    errors.append("entered")
            except Exception as e:
                errors.append(e)
        t = threading.Thread(target=take)
        t.start()
        assert wait_for(lambda: len(leases_of(admin, key)) == 1)    # granted in the server
        proxy.cut()
        t.join(15)
        assert len(errors) == 1 and isinstance(errors[0], psycopg.OperationalError), errors
        assert wait_for(lambda: leases_of(admin, key) == [])


def test_lost_before_commit_rolls_back(fx, admin, key, jobs):
    """A lease lost while its transaction's block runs: the block's writes
    are rolled back, not committed, and the block raises LeaseLostError."""
    with pytest.raises(pgfence.LeaseLostError), fx.lease(key, ttl=30) as lease:
        with pytest.raises(pgfence.LeaseLostError) as ei:
            with lease.transaction() as conn:
                conn.execute(f"UPDATE {jobs} SET result = 'written, then lost' WHERE id = 1")
                admin.execute("SELECT fence_break(%s::text)", (key,))
                assert lease.lost.wait(2.0)
        assert ei.value.how == "broken"
    assert admin.execute(f"SELECT result FROM {jobs}").fetchone()[0] == "pending"


def test_transaction_many_on_one_lease_with_a_quoted_key(fx, admin, jobs):
    """BEGIN and fence_use_token go as one simple query with the key quoted
    by the connection: a key with a quote and a backslash, used by more
    transactions than psycopg's prepare threshold, names the lease the
    table is protected with."""
    key = "it's a \\ key " + jobs
    admin.execute(f"SELECT fence_unprotect('{jobs}')")
    admin.execute("SELECT fence_protect(%s, lease => %s)", (jobs, key))
    with fx.lease(key, ttl=30) as lease:
        for i in range(8):
            with lease.transaction() as conn:
                assert conn.execute("SELECT fence_current_token(%s::text)::bigint",
                                    (key,)).fetchone()[0] == lease.token
                conn.execute(f"UPDATE {jobs} SET result = %s WHERE id = 1", (f"write {i}",))
    assert admin.execute(f"SELECT result, fence::bigint FROM {jobs}").fetchone() == ("write 7", lease.token)


def test_transaction_ended_inside_its_block_raises(fx, admin, key, jobs):
    """A block that commits its transaction itself raises ProgrammingError
    at its end (what ran after the commit carried no token), and its
    connection goes back to the pool idle."""
    with fx.lease(key, ttl=30) as lease:
        with pytest.raises(psycopg.ProgrammingError, match="ended its transaction itself"):
            with lease.transaction() as conn:
                conn.execute(f"UPDATE {jobs} SET result = 'committed early' WHERE id = 1")
                conn.commit()
                assert conn.execute("SELECT fence_current_token()").fetchone()[0] is None
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        with lease.transaction() as conn:
            conn.execute(f"UPDATE {jobs} SET result = 'fenced' WHERE id = 1")
    assert admin.execute(f"SELECT result, fence::bigint FROM {jobs}").fetchone() == ("fenced", lease.token)


def test_rollback_in_a_transaction_block(fx, admin, key, jobs):
    """psycopg.Rollback() ends the block quietly, its writes rolled back, as
    in conn.transaction(); another error rolls back and propagates."""
    with fx.lease(key, ttl=30) as lease:
        with lease.transaction() as conn:
            conn.execute(f"UPDATE {jobs} SET result = 'rolled back' WHERE id = 1")
            raise psycopg.Rollback()
        with pytest.raises(ZeroDivisionError):
            with lease.transaction() as conn:
                conn.execute(f"UPDATE {jobs} SET result = 'failed' WHERE id = 1")
                1 / 0
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert not lease.lost.is_set()
    assert admin.execute(f"SELECT result FROM {jobs}").fetchone()[0] == "pending"
