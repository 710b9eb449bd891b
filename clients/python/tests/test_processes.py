"""Several processes: the frozen holder, and a killed one."""
import os
import signal
import subprocess
import time

from conftest import status, worker


def start(*args):
    return subprocess.Popen(worker(*args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def read_line(proc, timeout=20):
    # readline blocks; the workers print promptly or fail.
    line = proc.stdout.readline()
    assert line, f"worker ended early: {proc.stderr.read()}"
    return line.split()


def test_frozen_holder(dsn, admin, key, jobs):
    holder = start("holder", dsn, key, "1", jobs)
    try:
        words = read_line(holder)
        assert words[0] == "wrote", words
        holder_token = int(words[1])
        os.kill(holder.pid, signal.SIGSTOP)       # frozen past its TTL
        time.sleep(2.5)
        taker = subprocess.run(worker("taker", dsn, key, "30", jobs), capture_output=True,
                               text=True, timeout=60)
        assert taker.returncode == 0, taker.stderr
        taker_token = int(taker.stdout.split()[1])
        assert taker_token > holder_token
        assert admin.execute(f"SELECT result, fence::bigint FROM {jobs}").fetchone() == \
            ("done by the taker", taker_token)
        os.kill(holder.pid, signal.SIGCONT)       # resumed: it tries its late write
        holder.stdin.write("go\n")
        holder.stdin.flush()
        out, err = holder.communicate(timeout=60)
        assert holder.returncode == 0, err
    finally:
        if holder.poll() is None:
            os.kill(holder.pid, signal.SIGCONT)
            holder.kill()
            holder.wait()
    print(out)
    lines = out.splitlines()
    assert "late write landed" not in lines
    refused = [line for line in lines if line.startswith("refused ")]
    assert refused, out
    kind = refused[0].split()[1]
    assert kind in ("LeaseLostError", "StaleTokenError"), refused
    # The late write never landed.
    assert admin.execute(f"SELECT result, fence::bigint FROM {jobs}").fetchone() == \
        ("done by the taker", taker_token)
    assert status(admin, key, holder_token) in ("superseded", "released")


def test_killed_process_lease_expires_by_its_ttl(dsn, fx, admin, key):
    sleeper = start("sleeper", dsn, key, "1")
    try:
        words = read_line(sleeper)
        assert words[0] == "holding"
        token = int(words[1])
        time.sleep(1.5)                           # its renewals keep it
        assert status(admin, key, token) == "held"
        sleeper.kill()
        sleeper.wait()
        killed = time.monotonic()
        with fx.lease(key, ttl=30, wait=10) as lease:
            waited = time.monotonic() - killed
            assert lease.token > token
        assert waited < 1.0 + 1.0, waited        # its TTL, and some slack
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()
