/*-------------------------------------------------------------------------
 *
 * lease_watch.c
 *		Waiting for a lease to end: fence_lease_wait_end().
 *
 * A session waiting for a lease of a partition to end sleeps on that
 * partition's condition variable (FenceLeaseWatch, lease_internal.h), and
 * looks at the lease's status again each time it is woken.
 *
 * Locks: none held across the sleep; each look takes the partition lock,
 * shared, inside FenceLeaseGetStatus.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/condition_variable.h"

#include "lease_internal.h"

/*
 * Wait until the lease (key, token) of database dbid is no longer held, and
 * return its status then: expired, superseded or released (broken, or
 * never this token).  Returns at once if it is not held now.  With a
 * deadline (real time, 0: none), *timed_out is set and FENCE_LEASE_HELD
 * returned if the lease is still held when it passes.
 *
 * The sleep ends when the lease's partition bumps its generation (a
 * release, break, takeover, renewal or reclaim in it), when the virtual
 * clock moves, at the lease's expiry in real time, or at the deadline; it
 * then looks again.  No lock held across the sleep; may ERROR (an
 * interrupt: the count of sleepers is put right on the way out, and at
 * exit after a FATAL).
 */
FenceLeaseStatus
FenceLeaseWaitEnd(Oid dbid, const char *key, int keylen, FenceToken token,
				  TimestampTz deadline, bool *timed_out)
{
	uint32		partition;
	FenceLeaseWatch *watch;
	volatile FenceLeaseStatus status = FENCE_LEASE_RELEASED;
	uint32		sleepers;

	*timed_out = false;
	if (!table_may_hold(keylen))
		return FENCE_LEASE_RELEASED;
	partition = lease_hash(dbid, key, keylen) % FENCE_LEASE_PARTITIONS;
	watch = &lease_shared->watches[partition];

	/*
	 * A backend terminated while it sleeps exits without unwinding (FATAL),
	 * so the count is also put right by this module's exit callback,
	 * registered first (registering may ERROR).
	 */
	register_exit_callback();
	sleepers = start_watching(partition);
	PG_TRY();
	{
		elog(DEBUG2, "fence: %u sessions now wait for a lease of partition %u to end",
			 sleepers, partition);
		ConditionVariablePrepareToSleep(&watch->w.cv);
		for (;;)
		{
			FenceLeaseStamp stamp;
			long		timeout_ms = -1;

			status = FenceLeaseGetStatus(dbid, key, keylen, token, &stamp);
			if (status != FENCE_LEASE_HELD)
				break;
			if (!FenceClockIsVirtual())
				timeout_ms = ms_until(stamp.expires_at, FenceNow()) + 1;
			if (deadline != 0)
			{
				TimestampTz now = GetCurrentTimestamp();
				long		left;

				if (now >= deadline)
				{
					*timed_out = true;
					break;
				}
				left = ms_until(deadline, now);
				if (timeout_ms < 0 || left < timeout_ms)
					timeout_ms = left;
			}
			(void) ConditionVariableTimedSleep(&watch->w.cv, timeout_ms,
											   lease_wait_event());
		}
		ConditionVariableCancelSleep();
	}
	PG_FINALLY();
	{
		stop_watching();
	}
	PG_END_TRY();
	return status;
}
