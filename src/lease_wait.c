/*-------------------------------------------------------------------------
 *
 * lease_wait.c
 *		This backend's own wait for a lease: sleeping until its turn, logging
 *		a long wait, and leaving the queue on error and at exit.
 *
 * lease_queue.c describes the queues and who wakes whom.  A waiter that
 * errors out leaves the queue in FenceLeaseAcquire's PG_CATCH block
 * (cancel_wait); one that exits, in this module's exit callback; a grant
 * handed to it meanwhile is released there, and so goes on to the next in
 * line.
 *
 * Locks: wait_for_turn sleeps with no lock held; cancel_wait takes the
 * partition lock of the queue this backend is in (exclusive), unless the
 * caller holds it already, and releases it before it releases a grant
 * handed to it (lease_release.c takes the lock again).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/wait_event.h"

#include "lease_internal.h"

/* Who the last STEP_REFUSED waited for, for fence.log_lease_waits. */
LeaseBlocker last_blocker;

/* This backend's current wait, for fence.log_lease_waits. */
TimestampTz wait_started = 0;	/* real time; 0: not waiting */
bool		wait_logged = false;	/* "still waiting" was logged */

static bool lease_exit_registered = false;	/* lease_exit_callback */

#if PG_VERSION_NUM >= 170000
/* Our own wait event, FenceLease, registered on first use. */
static uint32 fence_wait_event = 0;
#endif

/*
 * Leave whatever queue this backend is in, and give back a reserved slot.
 * A lease another backend granted us meanwhile is released (and so goes to
 * the next in line): whoever called us is not going to record it.  For
 * error and exit paths; safe to call when there is nothing to undo.  Never
 * ERRORs.
 */
void
cancel_wait(void)
{
	if (lease_shared == NULL)
		return;
	if (my_wait_slot >= 0)
	{
		int32		idx = my_wait_slot;
		LWLock	   *lock = my_wait_lock;
		FenceLeaseGrant handed;

		/* An entry with waiters is never reclaimed, so idx is still it. */
		if (!LWLockHeldByMe(lock))
			LWLockAcquire(lock, LW_EXCLUSIVE);
		if (take_handed_grant(&handed))
		{
			LWLockRelease(lock);
			FenceDbCount(FENCE_STAT_GRANTS);
			(void) release_token(my_wait_key, my_wait_keylen, handed.token,
								 false);
		}
		else
		{
			dequeue_self(idx);
			LWLockRelease(lock);
		}
	}
	release_spare_slots();
}

static void
lease_exit_callback(int code, Datum arg)
{
	cancel_wait();
	stop_watching();
}

void
register_exit_callback(void)
{
	if (!lease_exit_registered)
	{
		before_shmem_exit(lease_exit_callback, (Datum) 0);
		lease_exit_registered = true;
	}
}

/*
 * The wait event a waiting fence_lease shows in pg_stat_activity: our own
 * "FenceLease" where PostgreSQL lets extensions define one (17 and later),
 * else the generic "Extension".  Registering may ERROR: call it before
 * anything needs undoing.
 */
uint32
lease_wait_event(void)
{
#if PG_VERSION_NUM >= 170000
	if (fence_wait_event == 0)
		fence_wait_event = WaitEventExtensionNew("FenceLease");
	return fence_wait_event;
#else
	return PG_WAIT_EXTENSION;
#endif
}

/* The same wait event, for fence_wait_leases_end (lease_watch_many.c). */
uint32
FenceLeaseWaitEvent(void)
{
	return lease_wait_event();
}

/* Milliseconds since the wait began, split for "%ld.%03d ms". */
static void
waited_ms(long *msecs, int *usecs)
{
	long		secs;
	int			us;

	TimestampDifference(wait_started, GetCurrentTimestamp(), &secs, &us);
	*msecs = secs * 1000 + us / 1000;
	*usecs = us % 1000;
}

/* fence.log_lease_waits: the wait passed deadlock_timeout. */
static void
log_still_waiting(const FenceLeaseRequest *req, AcquireStep step)
{
	long		msecs;
	int			usecs;

	waited_ms(&msecs, &usecs);
	if (step == STEP_GRACE)
		ereport(LOG,
				(errmsg("process %d still waiting for lease \"%.*s\" after %ld.%03d ms",
						MyProcPid, req->keylen, req->key, msecs, usecs),
				 errdetail("No lease is granted until fence.restart_grace has passed since the server started or was promoted.")));
	else if (last_blocker.kind == BLOCKER_SESSION)
		ereport(LOG,
				(errmsg("process %d still waiting for lease \"%.*s\" after %ld.%03d ms",
						MyProcPid, req->keylen, req->key, msecs, usecs),
				 errdetail("Process holding the lease: %d.", last_blocker.pid)));
	else if (last_blocker.kind == BLOCKER_DETACHED)
		ereport(LOG,
				(errmsg("process %d still waiting for lease \"%.*s\" after %ld.%03d ms",
						MyProcPid, req->keylen, req->key, msecs, usecs),
				 errdetail("The lease is held by detached owner \"%s\".",
						   last_blocker.owner)));
	else if (last_blocker.kind == BLOCKER_PERMITS)
		ereport(LOG,
				(errmsg("process %d still waiting for lease \"%.*s\" after %ld.%03d ms",
						MyProcPid, req->keylen, req->key, msecs, usecs),
				 errdetail("All %d permits of the lease are held.", req->permits)));
	else if (last_blocker.kind == BLOCKER_LOCK_DELAY)
		ereport(LOG,
				(errmsg("process %d still waiting for lease \"%.*s\" after %ld.%03d ms",
						MyProcPid, req->keylen, req->key, msecs, usecs),
				 errdetail("The lease ended without being released, and its fence.lock_delay has not passed.")));
	else
		ereport(LOG,
				(errmsg("process %d still waiting for lease \"%.*s\" after %ld.%03d ms",
						MyProcPid, req->keylen, req->key, msecs, usecs),
				 errdetail("The lease is free, but other sessions are queued ahead of this one.")));
}

/*
 * fence.log_lease_waits: a wait that was logged ended, granted or not
 * (timed_out: its timeout passed; else an error or cancel ended it).
 */
void
log_wait_end(const FenceLeaseRequest *req, bool granted, bool timed_out)
{
	long		msecs;
	int			usecs;

	waited_ms(&msecs, &usecs);
	if (granted)
		ereport(LOG,
				(errmsg("process %d acquired lease \"%.*s\" after %ld.%03d ms",
						MyProcPid, req->keylen, req->key, msecs, usecs)));
	else if (timed_out)
		ereport(LOG,
				(errmsg("process %d gave up waiting for lease \"%.*s\" after %ld.%03d ms",
						MyProcPid, req->keylen, req->key, msecs, usecs),
				 errdetail("Its timeout passed.")));
	else
		ereport(LOG,
				(errmsg("process %d gave up waiting for lease \"%.*s\" after %ld.%03d ms",
						MyProcPid, req->keylen, req->key, msecs, usecs),
				 errdetail("An error or a cancel request ended the wait.")));
}

/* Milliseconds from now until "until" on the given clock, at least 1. */
long
ms_until(TimestampTz until, TimestampTz now)
{
	int64		us = until - now;

	if (us <= 0)
		return 1;
	return (long) Min((us + 999) / 1000, (int64) INT_MAX);
}

/*
 * FenceLeaseAcquire's wait: the grant was refused (STEP_REFUSED) or held
 * back by the restart grace (STEP_GRACE), and the request waits.  Sleeps
 * until the latch is set (a holder let go, a waiter ahead left, the clock
 * moved), until wake_at (the lease's expiry in real time, or the grace's
 * end), or until the request's deadline; logs the wait once, after
 * deadlock_timeout, as log_lock_waits does.  Returns false if the deadline
 * has passed (the caller gives up), true to try again.  No lock held; may
 * ERROR (an interrupt).
 */
bool
wait_for_turn(const FenceLeaseRequest *req, AcquireStep step,
			  TimestampTz wake_at)
{
	TimestampTz real_now = GetCurrentTimestamp();
	long		timeout_ms = -1;

	if (wait_started == 0)
		wait_started = real_now;
	if (step == STEP_GRACE)
		timeout_ms = ms_until(wake_at, real_now);
	else if (wake_at != 0 && !FenceClockIsVirtual())
		timeout_ms = ms_until(wake_at, FenceNow());
	if (req->has_deadline)
	{
		long		left;

		if (real_now >= req->deadline)
			return false;
		left = ms_until(req->deadline, real_now);
		if (timeout_ms < 0 || left < timeout_ms)
			timeout_ms = left;
	}
	if (fence_log_lease_waits && !wait_logged)
	{
		TimestampTz log_at = lease_deadline(wait_started,
											(int64) DeadlockTimeout * 1000);

		if (real_now >= log_at)
		{
			log_still_waiting(req, step);
			wait_logged = true;
		}
		else if (timeout_ms < 0 || ms_until(log_at, real_now) < timeout_ms)
			timeout_ms = ms_until(log_at, real_now);
	}
	(void) WaitLatch(MyLatch,
					 WL_LATCH_SET | WL_EXIT_ON_PM_DEATH |
					 (timeout_ms >= 0 ? WL_TIMEOUT : 0),
					 timeout_ms, lease_wait_event());
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	return true;
}
