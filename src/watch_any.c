/*-------------------------------------------------------------------------
 *
 * watch_any.c
 *		The server-wide wake-up of the sessions that wait for any one of
 *		several leases to end (fence_wait_leases_end, lease_watch_many.c).
 *
 * A session waiting on one lease sleeps on its partition's condition
 * variable (lease_table.c).  A session may sleep on one condition variable
 * at a time, and the leases of a set lie in any partitions, so the sessions
 * that wait on a set sleep on this one condition variable instead, which
 * every generation bump of every partition and every move of the virtual
 * clock broadcast on -- but only while such a session exists: the bump reads
 * a count of them first, so that a release pays one atomic read for a
 * feature nobody uses.  A woken session looks again only at the leases whose
 * partition's generation moved.
 *
 * The count is raised before the sleeper first looks at its leases, and
 * read after the generation is bumped (both full barriers): a bump the
 * sleeper did not see is one whose broadcast it gets.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pgstat.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

#include "fence.h"

typedef struct FenceWatchAnyShared
{
	pg_atomic_uint32 sleepers;
	ConditionVariable cv;
} FenceWatchAnyShared;

static FenceWatchAnyShared *watch_any = NULL;

/* Is this backend counted a sleeper?  Put right at exit after a FATAL. */
static bool my_watching = false;
static bool watch_any_exit_registered = false;

Size
FenceWatchAnyShmemSize(void)
{
	return MAXALIGN(sizeof(FenceWatchAnyShared));
}

void
FenceWatchAnyShmemInit(void)
{
	bool		found;

	watch_any = ShmemInitStruct("fence watch any", FenceWatchAnyShmemSize(),
								&found);
	if (found)
		return;
	pg_atomic_init_u32(&watch_any->sleepers, 0);
	ConditionVariableInit(&watch_any->cv);
}

/*
 * A lease of some partition ended or may end sooner, or the lease clock
 * moved: wake the sessions waiting on several leases, if there are any.
 * Called under a partition lock, too (a spinlock and SetLatch).
 */
void
FenceWatchAnyNotify(void)
{
	if (watch_any != NULL && pg_atomic_read_u32(&watch_any->sleepers) > 0)
		ConditionVariableBroadcast(&watch_any->cv);
}

static void
watch_any_exit_callback(int code, Datum arg)
{
	FenceWatchAnyEnd();
}

/*
 * Count this backend a sleeper and prepare to sleep; the caller looks at its
 * leases only after this.  May ERROR before it counts anything (registering
 * the exit callback).
 */
void
FenceWatchAnyBegin(void)
{
	uint32		sleepers;

	Assert(watch_any != NULL);
	if (!watch_any_exit_registered)
	{
		before_shmem_exit(watch_any_exit_callback, (Datum) 0);
		watch_any_exit_registered = true;
	}
	Assert(!my_watching);
	sleepers = pg_atomic_add_fetch_u32(&watch_any->sleepers, 1);
	my_watching = true;
	elog(DEBUG2, "fence: %u sessions now wait for one of several leases to end",
		 sleepers);
	ConditionVariablePrepareToSleep(&watch_any->cv);
}

/*
 * Sleep until a broadcast or for timeout_ms (-1: no limit); reacts to
 * interrupts (may ERROR: the caller's PG_FINALLY calls FenceWatchAnyEnd).
 */
void
FenceWatchAnySleep(long timeout_ms, uint32 wait_event_info)
{
	(void) ConditionVariableTimedSleep(&watch_any->cv, timeout_ms,
									   wait_event_info);
}

/* No longer a sleeper; harmless when not one. */
void
FenceWatchAnyEnd(void)
{
	ConditionVariableCancelSleep();
	if (my_watching)
	{
		pg_atomic_fetch_sub_u32(&watch_any->sleepers, 1);
		my_watching = false;
	}
}
