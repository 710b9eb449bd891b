"""pgfence.AsyncFence and AsyncLease, against a real server."""
import asyncio
import random
import time

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

import pgfence
from pgfence.testing import AsyncVirtualClock

from conftest import app_dsn, leases_of, status, watchdog_pids


def waiters_of(admin, key):
    return admin.execute("SELECT count(*) FROM fence_lease_waiters WHERE key = %s", (key,)).fetchone()[0]


async def test_lease_and_release(afx, admin, key):
    async with afx.lease(key, ttl=30) as lease:
        assert leases_of(admin, key) == [(lease.token, lease.owner)]
        lease.check()
        assert not lease.lost.is_set()
    assert leases_of(admin, key) == []
    assert lease.how == "released"


async def test_try_once(afx, key):
    async with afx.lease(key, ttl=30):
        with pytest.raises(pgfence.LeaseUnavailableError):
            async with afx.lease(key, wait=0):
                pass
        with pytest.raises(pgfence.LeaseUnavailableError):
            async with afx.lease(key, wait=0.3):
                pass


async def test_renewal_keeps_a_one_second_lease(afx, admin, key, jobs):
    async with afx.lease(key, ttl=1) as lease:
        for _ in range(8):
            await asyncio.sleep(0.5)
            async with lease.transaction() as conn:
                await conn.execute(f"UPDATE {jobs} SET result = 'working' WHERE id = 1")
        assert status(admin, key, lease.token) == "held"
    assert admin.execute(f"SELECT fence::bigint FROM {jobs}").fetchone()[0] == lease.token


async def test_break_cancels_the_task_within_a_second(afx, admin, key):
    loop = asyncio.get_running_loop()
    seen = []
    start = None
    with pytest.raises(pgfence.LeaseLostError) as ei:
        async with afx.lease(key, ttl=30) as lease:
            lease.on_lost(seen.append)
            loop.call_later(0.3, lambda: admin.execute("SELECT fence_break(%s::text)", (key,)))
            start = time.monotonic()
            await asyncio.sleep(30)
    took = time.monotonic() - start
    assert took < 1.3, took
    assert ei.value.how == "broken"
    assert isinstance(ei.value.__cause__, asyncio.CancelledError)
    assert [e.how for e in seen] == ["broken"]
    assert lease.lost.is_set()
    # The task was not left cancelled: it goes on awaiting.
    await asyncio.sleep(0)
    assert asyncio.current_task().cancelling() == 0


async def test_loss_cancels_the_running_statement(afx, admin, key):
    loop = asyncio.get_running_loop()
    with pytest.raises(pgfence.LeaseLostError):
        async with afx.lease(key, ttl=30) as lease:
            loop.call_later(0.3, lambda: admin.execute("SELECT fence_break(%s::text)", (key,)))
            async with lease.transaction() as conn:
                pid = conn.info.backend_pid
                await conn.execute("SELECT pg_sleep(30)")
    # Within a second, the server's statement is stopped too.
    row = admin.execute("SELECT state, query FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
    assert row is None or row[0] != "active" or "pg_sleep" not in row[1], row


async def test_outside_cancel_is_a_plain_cancel(afx, admin, key):
    async def body():
        async with afx.lease(key, ttl=30):
            await asyncio.sleep(30)

    task = asyncio.ensure_future(body())
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert leases_of(admin, key) == []


async def test_pooled_connection_carries_no_token(dsn, key):
    async with AsyncConnectionPool(dsn, min_size=1, max_size=1, kwargs={"autocommit": True}) as pool:
        afx = pgfence.AsyncFence(pool)
        async with afx.lease(key, ttl=30) as lease:
            async with lease.transaction() as conn:
                pid = conn.info.backend_pid
                cur = await conn.execute("SELECT fence_current_token()::bigint")
                assert (await cur.fetchone())[0] == lease.token
        async with pool.connection() as conn:
            assert conn.info.backend_pid == pid
            cur = await conn.execute("SELECT fence_current_token(), fence_current_token(%s::text)", (key,))
            assert await cur.fetchone() == (None, None)


async def test_cancel_while_waiting_leaves_nothing(afx, admin, key):
    async with afx.lease(key, ttl=30) as first:
        task = asyncio.ensure_future(afx.lease(key, ttl=30, wait=None).__aenter__())
        await asyncio.sleep(0.5)
        assert waiters_of(admin, key) == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.2)
        assert waiters_of(admin, key) == 0
        assert leases_of(admin, key) == [(first.token, first.owner)]
    assert leases_of(admin, key) == []


async def test_cancellation_at_await_points_leaves_no_lease(afx, admin, key):
    """Cancel a worker at random moments: taking, holding, writing, releasing."""
    async def job():
        async with afx.lease(key, ttl=5, wait=5) as lease:
            async with lease.transaction() as conn:
                await conn.execute("SELECT pg_sleep(0.01)")
            await asyncio.sleep(0.01)

    rnd = random.Random(7)
    outcomes = {"cancelled": 0, "finished": 0}
    for _ in range(25):
        task = asyncio.ensure_future(job())
        await asyncio.sleep(rnd.uniform(0, 0.05))
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            outcomes["cancelled"] += 1
        else:
            outcomes["finished"] += 1
    # Releases are shielded, but may still be finishing.
    deadline = time.monotonic() + 5
    while leases_of(admin, key) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert leases_of(admin, key) == []
    assert waiters_of(admin, key) == 0
    assert outcomes["cancelled"] > 0
    async with afx.lease(key, ttl=5, wait=0):
        pass


async def test_virtual_clock_expiry(afx, dsn, key):
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        async with AsyncVirtualClock(conn) as clock:
            await clock.freeze()
            with pytest.raises(pgfence.LeaseLostError) as ei:
                async with afx.lease(key, ttl=30):
                    # From another task: the loss cancels this one wherever it
                    # awaits, and it must not be in the middle of conn's statement.
                    advance = asyncio.ensure_future(clock.advance(31))
                    await asyncio.sleep(5)
            await advance
            assert ei.value.how == "expired"


async def test_permits_and_breaker(afx, key):
    async with afx.permit(key, 2, ttl=30) as a, afx.permit(key, 2, ttl=30) as b:
        assert a.token != b.token
        with pytest.raises(pgfence.LeaseUnavailableError):
            async with afx.permit(key, 2, wait=0):
                pass
    br = afx.breaker(key)
    async with br.call():
        pass
    d = await br.allow()
    assert d.decision == "call"


async def test_network_stall_past_the_deadline_cancels_the_task(dsn, key):
    from netproxy import Proxy
    with Proxy(dsn) as proxy:
        async with AsyncConnectionPool(proxy.dsn, min_size=1, max_size=2,
                                       kwargs={"autocommit": True}) as pool:
            afx = pgfence.AsyncFence(pool, renew_timeout=0.3)
            with pytest.raises(pgfence.LeaseLostError) as ei:
                async with afx.lease(key, ttl=1.5):
                    proxy.hold()
                    held_at = time.monotonic()
                    try:
                        await asyncio.sleep(10)
                    finally:
                        took = time.monotonic() - held_at
                        proxy.flow()
            assert ei.value.how == "deadline"
            assert took <= 1.5 + 0.3, took


async def test_network_stall_suspends_then_renews(dsn, admin, key):
    from netproxy import Proxy
    with Proxy(dsn) as proxy:
        async with AsyncConnectionPool(proxy.dsn, min_size=1, max_size=2,
                                       kwargs={"autocommit": True}) as pool:
            afx = pgfence.AsyncFence(pool, renew_timeout=0.3)
            async with afx.lease(key, ttl=4) as lease:
                proxy.hold()
                suspended = False
                for _ in range(44):
                    await asyncio.sleep(0.05)
                    suspended = suspended or lease.suspended
                proxy.flow()
                assert suspended and not lease.lost.is_set()
                for _ in range(60):
                    if not lease.suspended:
                        break
                    await asyncio.sleep(0.05)
                assert not lease.suspended and not lease.lost.is_set()
                assert status(admin, key, lease.token) == "held"


async def test_lf002_marks_the_lease_lost(afx, admin, key, jobs):
    admin.execute("SELECT fence_protect(%s, lease => %s, strict => true)", (jobs, key))
    with pytest.raises(pgfence.LeaseLostError):
        async with afx.lease(key, ttl=30) as lease:
            for t in lease._tasks:          # no watchdog, no renewal: the write must tell
                t.cancel()
            admin.execute("SELECT fence_set_clock(fence_now() + interval '31 seconds')")
            with pytest.raises(pgfence.LeaseNotHeldError) as ei:
                async with lease.transaction() as conn:
                    await conn.execute(f"UPDATE {jobs} SET result = 'late' WHERE id = 1")
            assert ei.value.sqlstate == "LF002"
            assert lease.lost.is_set() and lease.how == "expired"
    assert admin.execute(f"SELECT result FROM {jobs}").fetchone()[0] == "pending"


async def eventually(check, timeout=5.0):
    """Poll check() (sync) without blocking the loop, until true or timeout."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        await asyncio.sleep(0.02)
    return bool(check())


def waits(admin, app):
    return admin.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s "
                         "AND state = 'active' AND query LIKE '%%fence_wait_leases_end(%%'",
                         (app,)).fetchone()[0]


async def test_twenty_leases_one_watchdog(dsn, admin, key):
    """Twenty leases in twenty tasks, one watchdog backend; a break of one
    cancels its task within a second, and only it."""
    app_dsn_, app = app_dsn(dsn)
    async with AsyncConnectionPool(app_dsn_, min_size=1, max_size=4,
                                   kwargs={"autocommit": True}) as pool:
        afx = pgfence.AsyncFence(pool)
        entered = []

        async def hold(i):
            async with afx.lease(f"{key}:{i}", ttl=30) as lease:
                entered.append(lease)
                await asyncio.sleep(60)

        tasks = [asyncio.ensure_future(hold(i)) for i in range(20)]
        try:
            assert await eventually(lambda: len(entered) == 20)
            assert await eventually(lambda: len(watchdog_pids(admin, afx)) == 1)
            assert await eventually(lambda: waits(admin, app) == 1)
            backends = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
                                     (app,)).fetchone()[0]
            assert backends <= 4 + 1, backends
            admin.execute("SELECT fence_break(%s::text)", (f"{key}:7",))
            start = time.monotonic()
            done, _ = await asyncio.wait(tasks, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
            assert time.monotonic() - start < 1.0
            assert done == {tasks[7]}
            with pytest.raises(pgfence.LeaseLostError) as ei:
                tasks[7].result()
            assert ei.value.how == "broken"
            assert await eventually(lambda: waits(admin, app) == 1)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        assert admin.execute("SELECT count(*) FROM fence_leases WHERE key LIKE %s",
                             (key + ":%",)).fetchone()[0] == 0


async def test_pool_statement_timeout_does_not_reach_the_watchdog(dsn, admin, key):
    app_dsn_, app = app_dsn(dsn)
    options = "-c statement_timeout=100 -c idle_in_transaction_session_timeout=100"
    async with AsyncConnectionPool(app_dsn_ + f" options='{options}'", min_size=1, max_size=2,
                                   kwargs={"autocommit": True}) as pool:
        afx = pgfence.AsyncFence(pool)
        with pytest.raises(pgfence.LeaseLostError) as ei:
            async with afx.lease(key, ttl=1) as lease:
                await asyncio.sleep(2.0)
                assert not lease.lost.is_set()
                pids = watchdog_pids(admin, afx)
                assert len(pids) == 1 and waits(admin, app) == 1
                assert admin.execute("SELECT now() - query_start > interval '1.5 seconds' "
                                     "FROM pg_stat_activity WHERE pid = %s", (pids[0],)).fetchone()[0]
                asyncio.get_running_loop().call_later(
                    0.1, lambda: admin.execute("SELECT fence_break(%s::text)", (key,)))
                await asyncio.sleep(1.1)
        assert ei.value.how == "broken"


async def test_free_key_is_taken_in_one_statement_on_the_pool(dsn, admin, key, monkeypatch):
    """With fence 1.3 a lease on a free key is one statement on a pooled
    connection: no connection of its own, no token left on any pooled
    connection, and one released before it joins the watchdog never makes
    the watchdog call again."""
    from pgfence._core import watch
    app_dsn_, app = app_dsn(dsn)
    async with AsyncConnectionPool(app_dsn_, min_size=2, max_size=2, kwargs={"autocommit": True}) as pool:
        await pool.wait()
        afx = pgfence.AsyncFence(pool)
        connects = []
        real_connect = afx._connect

        async def counted():
            connects.append(1)
            return await real_connect()
        monkeypatch.setattr(afx, "_connect", counted)
        monkeypatch.setattr(watch, "JOIN_AFTER", 0.05)
        async with afx.lease(key + ":long", ttl=30):
            assert await eventually(lambda: waits(admin, app) == 1)    # the watchdog joined
            monkeypatch.setattr(watch, "JOIN_AFTER", 5.0)      # no short lease below does
            assert connects == [1]
            calls = afx._dog.leases.calls
            for i in range(20):
                async with afx.lease(f"{key}:{i}", ttl=30) as lease:
                    async with pool.connection() as a, pool.connection() as b:
                        for conn in (a, b):
                            cur = await conn.execute("SELECT fence_current_token()")
                            assert (await cur.fetchone())[0] is None
                    async with lease.transaction() as conn:
                        cur = await conn.execute("SELECT fence_current_token()::bigint")
                        assert (await cur.fetchone())[0] == lease.token
                assert leases_of(admin, f"{key}:{i}") == []
            assert connects == [1]
            assert afx._dog.leases.calls == calls


async def test_lease_broken_before_it_joins_the_watchdog_is_lost_at_once(afx, admin, key):
    """A break in the lease's first moment, before it joins the watchdog,
    still cancels the task within a second."""
    start = None
    with pytest.raises(pgfence.LeaseLostError) as ei:
        async with afx.lease(key, ttl=30):
            await asyncio.to_thread(admin.execute, "SELECT fence_break(%s::text)", (key,))
            start = time.monotonic()
            await asyncio.sleep(10)
    assert time.monotonic() - start < 1.0
    assert ei.value.how == "broken"


async def test_lost_before_commit_rolls_back(afx, admin, key, jobs):
    """Lost while the transaction's block runs: the task is cancelled, the
    transaction rolled back, not committed, and the block raises
    LeaseLostError."""
    with pytest.raises(pgfence.LeaseLostError):
        async with afx.lease(key, ttl=30) as lease:
            async with lease.transaction() as conn:
                await conn.execute(f"UPDATE {jobs} SET result = 'written, then lost' WHERE id = 1")
                await asyncio.to_thread(admin.execute, "SELECT fence_break(%s::text)", (key,))
                await asyncio.sleep(5)
    assert admin.execute(f"SELECT result FROM {jobs}").fetchone()[0] == "pending"


async def test_transaction_quoted_key_ended_early_and_rollback(afx, admin, jobs):
    """The asyncio transaction: one simple query opens it with the key
    quoted (more transactions than psycopg's prepare threshold); a block
    that commits itself raises ProgrammingError; psycopg.Rollback() rolls
    back quietly."""
    key = "it's a \\ key " + jobs
    admin.execute(f"SELECT fence_unprotect('{jobs}')")
    admin.execute("SELECT fence_protect(%s, lease => %s)", (jobs, key))
    async with afx.lease(key, ttl=30) as lease:
        for i in range(8):
            async with lease.transaction() as conn:
                await conn.execute(f"UPDATE {jobs} SET result = %s WHERE id = 1", (f"write {i}",))
        with pytest.raises(psycopg.ProgrammingError, match="ended its transaction itself"):
            async with lease.transaction() as conn:
                await conn.commit()
        async with lease.transaction() as conn:
            await conn.execute(f"UPDATE {jobs} SET result = 'rolled back' WHERE id = 1")
            raise psycopg.Rollback()
    assert admin.execute(f"SELECT result, fence::bigint FROM {jobs}").fetchone() == ("write 7", lease.token)
