"""The core without a server: errors, classify(), argument checks."""
import datetime as dt

import psycopg
import pytest

import pgfence
from pgfence._core import config


class FakeDbError(Exception):
    def __init__(self, sqlstate, text="boom"):
        super().__init__(text)
        self.sqlstate = sqlstate


@pytest.mark.parametrize("state,cls", [
    ("LF001", pgfence.StaleTokenError),
    ("LF002", pgfence.LeaseNotHeldError),
    ("LF003", pgfence.TokenRequiredError),
])
def test_classify_fence_sqlstates(state, cls):
    err = FakeDbError(state, "stale fencing token for table \"jobs\"\nDETAIL: more")
    fe = pgfence.classify(err)
    assert type(fe) is cls
    assert isinstance(fe, pgfence.FenceError)
    assert fe.cause is err and fe.__cause__ is err
    assert fe.sqlstate == state
    assert str(fe) == 'stale fencing token for table "jobs"'


def test_classify_other_errors():
    assert pgfence.classify(FakeDbError("23505")) is None
    assert pgfence.classify(ValueError("x")) is None
    assert pgfence.classify(psycopg.OperationalError("gone")) is None
    lost = pgfence.LeaseLostError("k", 3, "expired")
    assert pgfence.classify(lost) is lost


def test_lease_lost_error():
    e = pgfence.LeaseLostError("job:1", 7, pgfence.SUPERSEDED)
    assert (e.key, e.token, e.how) == ("job:1", 7, "superseded")
    assert isinstance(e, pgfence.FenceError)
    assert "superseded" in str(e)


def test_unavailable_error():
    assert "held by another" in str(pgfence.LeaseUnavailableError("k", 0))
    assert "within 2.5 seconds" in str(pgfence.LeaseUnavailableError("k", 2.5))


def test_durations():
    assert config.seconds(2, "ttl") == 2.0
    assert config.seconds(dt.timedelta(milliseconds=1500), "ttl") == 1.5
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            config.seconds(bad, "ttl")
    for bad in ("30", None, True):
        with pytest.raises(TypeError):
            config.seconds(bad, "ttl")
    assert config.wait_seconds(None) is None
    assert config.wait_seconds(0) == 0.0
    assert config.wait_seconds(float("inf")) is None
    with pytest.raises(ValueError):
        config.wait_seconds(-1)


def test_keys_and_owners():
    assert config.check_key(42) == "42"
    with pytest.raises(ValueError):
        config.check_key("")
    with pytest.raises(TypeError):
        config.check_key(True)
    owners = {config.generated_owner() for _ in range(100)}
    assert len(owners) == 100
    assert all(len(o.encode()) <= 48 for o in owners)
    with pytest.raises(ValueError):
        config.check_owner("x" * 49)


def test_renewal_timing():
    t = config.Timing.for_ttl(30)
    assert t.renew_every == 10
    for _ in range(100):
        assert 8 <= t.next_renewal() <= 10
    assert config.Timing.for_ttl(30, 2).try_timeout == 2
