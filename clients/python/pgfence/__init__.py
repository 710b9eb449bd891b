"""pgfence: leases with fencing tokens from PostgreSQL's fence extension.

    import pgfence
    fx = pgfence.Fence(pool)
    with fx.lease("job:42", ttl=30) as lease:
        with lease.transaction() as conn:
            conn.execute("UPDATE jobs SET state = 'done' WHERE id = 42")

Sync: Fence / Lease (pgfence.sync); asyncio: AsyncFence / AsyncLease
(pgfence.aio); errors: FenceError and its subclasses, classify().
"""
from ._core.errors import (BROKEN, CONNECTION, DEADLINE, EXPIRED, RELEASED, SUPERSEDED, FenceError,
                           LeaseLostError, LeaseNotHeldError, LeaseUnavailableError, StaleTokenError,
                           TokenRequiredError, classify)
from .aio import AsyncFence, AsyncLease
from .breaker import AsyncBreaker, Breaker, BreakerOpenError, Decision
from .sync import Fence, Lease

__version__ = "1.3.0"

__all__ = [
    "Fence", "Lease", "AsyncFence", "AsyncLease", "Breaker", "AsyncBreaker", "Decision",
    "FenceError", "StaleTokenError", "LeaseNotHeldError", "TokenRequiredError",
    "LeaseUnavailableError", "LeaseLostError", "BreakerOpenError", "classify",
    "EXPIRED", "SUPERSEDED", "RELEASED", "BROKEN", "CONNECTION", "DEADLINE",
]
