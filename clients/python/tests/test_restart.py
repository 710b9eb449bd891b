"""A server restart while a lease is held: declared lost, never silently kept.

Needs PGFENCE_TEST_RESTART, a shell command that restarts the server (the
TAP test gives a pg_ctl restart of its own node).
"""
import subprocess
import time

import psycopg
import pytest

import pgfence

from conftest import env_or_skip


@pytest.fixture
def restart_command():
    return env_or_skip("PGFENCE_TEST_RESTART")


def test_server_restart_while_held(dsn, fx, key, restart_command):
    seen = []
    with pytest.raises(pgfence.LeaseLostError) as ei:
        with fx.lease(key, ttl=3) as lease:
            lease.on_lost(seen.append)
            token = lease.token
            restarted = time.monotonic()
            subprocess.run(restart_command, shell=True, check=True, capture_output=True, timeout=120)
            # Lost by the time the TTL has passed, at the latest.
            assert lease.lost.wait(max(3 - (time.monotonic() - restarted), 0) + 2)
            with pytest.raises(pgfence.LeaseLostError):
                lease.check()
    assert ei.value.how in ("connection", "deadline", "broken"), ei.value.how
    assert [e.how for e in seen] == [ei.value.how]
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM fence_leases WHERE key = %s", (key,)).fetchone()[0] == 0
        assert conn.execute("SELECT fence_lease_status(%s::text, %s::bigint)",
                            (key, token)).fetchone()[0] == "released"
    # The key is free again, with a larger token.
    with pgfence.Fence(dsn) as fx2:
        with fx2.lease(key, ttl=5, wait=5) as again:
            assert again.token > token
