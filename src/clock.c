/*-------------------------------------------------------------------------
 *
 * clock.c
 *		The lease clock.  Every lease decision reads FenceNow(): real time,
 *		or, when fence.test_clock is on and a test has set it, one virtual
 *		clock shared by the whole server.  The virtual clock only moves when
 *		told to, which lets the test suites replay minutes-long incident
 *		timelines exactly and in milliseconds.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "fence.h"

typedef struct FenceClockShared
{
	slock_t		mutex;
	bool		is_set;			/* false: follow real time */
	TimestampTz now;			/* the virtual time, when is_set */
} FenceClockShared;

static FenceClockShared *clock_shared = NULL;

Size
FenceClockShmemSize(void)
{
	return MAXALIGN(sizeof(FenceClockShared));
}

void
FenceClockShmemInit(void)
{
	bool		found;

	clock_shared = ShmemInitStruct("fence clock", FenceClockShmemSize(), &found);
	if (!found)
	{
		SpinLockInit(&clock_shared->mutex);
		clock_shared->is_set = false;
		clock_shared->now = 0;
	}
}

/* Is the virtual clock in charge right now? */
bool
FenceClockIsVirtual(void)
{
	bool		is_set;

	if (!fence_test_clock || clock_shared == NULL)
		return false;
	SpinLockAcquire(&clock_shared->mutex);
	is_set = clock_shared->is_set;
	SpinLockRelease(&clock_shared->mutex);
	return is_set;
}

TimestampTz
FenceNow(void)
{
	TimestampTz result = 0;
	bool		is_set = false;

	if (fence_test_clock && clock_shared != NULL)
	{
		SpinLockAcquire(&clock_shared->mutex);
		is_set = clock_shared->is_set;
		result = clock_shared->now;
		SpinLockRelease(&clock_shared->mutex);
	}
	return is_set ? result : GetCurrentTimestamp();
}

/*
 * The clock controls are for tests only: refuse them unless the server was
 * started with fence.test_clock = on, and unless the caller is a superuser
 * (one clock moves every lease in the server).
 */
void
FenceClockRequireTestMode(void)
{
	FenceRequirePreload();
	if (!fence_test_clock)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the virtual lease clock is disabled"),
				 errdetail("fence.test_clock is off, so leases follow real time."),
				 errhint("Set fence.test_clock = on in postgresql.conf and restart, on a test server only.")));
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to move the lease clock"),
				 errdetail("The virtual clock is shared by every lease in the server."),
				 errhint("Only a superuser may set or advance it.")));
}

TimestampTz
FenceClockSet(TimestampTz when)
{
	Assert(clock_shared != NULL);
	SpinLockAcquire(&clock_shared->mutex);
	clock_shared->is_set = true;
	clock_shared->now = when;
	SpinLockRelease(&clock_shared->mutex);
	return when;
}

void
FenceClockClear(void)
{
	Assert(clock_shared != NULL);
	SpinLockAcquire(&clock_shared->mutex);
	clock_shared->is_set = false;
	SpinLockRelease(&clock_shared->mutex);
}

/*
 * Move the virtual clock forward by usecs (>= 0, checked by the caller).  A
 * clock that follows real time starts from the real time now.
 */
TimestampTz
FenceClockAdvance(int64 usecs)
{
	TimestampTz real_now = GetCurrentTimestamp();
	TimestampTz result;

	Assert(clock_shared != NULL);
	SpinLockAcquire(&clock_shared->mutex);
	if (!clock_shared->is_set)
	{
		clock_shared->is_set = true;
		clock_shared->now = real_now;
	}
	clock_shared->now += usecs;
	result = clock_shared->now;
	SpinLockRelease(&clock_shared->mutex);
	return result;
}
