/*-------------------------------------------------------------------------
 *
 * init.c
 *		Module entry point, and wiring only: defines the settings, installs
 *		the trigger's transaction callbacks and session.c's DISCARD ALL hook,
 *		and when the library is in shared_preload_libraries, claims shared
 *		memory for the modules that need it and has them create or attach to
 *		it at startup, and tells the lease table of each DROP DATABASE.
 *
 * Nothing in here is called by another module: it stands at the top of the
 * module list (fence.h) and calls down into each module.  What every
 * module needs about the extension as a whole lives at the bottom, in
 * extension.c; fence.h, which every file includes, declares and defines
 * nothing that calls.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/objectaccess.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "fence.h"
#include "lease_counts.h"

PG_MODULE_MAGIC;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static object_access_hook_type prev_object_access_hook = NULL;

void		_PG_init(void);
static void fence_shmem_request(void);
static void fence_shmem_startup(void);
static void fence_object_access(ObjectAccessType access, Oid classId,
								Oid objectId, int subId, void *arg);

void
_PG_init(void)
{
	FenceGucInit();
	FenceEnforceInit();
	FenceSessionInit();
	FenceCitusInit();

	if (!process_shared_preload_libraries_in_progress)
		return;

	fence_preloaded = true;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = fence_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = fence_shmem_startup;
	prev_object_access_hook = object_access_hook;
	object_access_hook = fence_object_access;
}

/*
 * DROP DATABASE: the lease table frees the database's leases, breakers and
 * slot as the drop commits, before its OID can be given to a new database.
 */
static void
fence_object_access(ObjectAccessType access, Oid classId, Oid objectId,
					int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access == OAT_DROP && classId == DatabaseRelationId)
		FenceLeaseDatabaseDropping(objectId);
}

/*
 * Ask for the shared memory and the named LWLock tranches of every module.
 * This must happen in shmem_request_hook, after every library's _PG_init
 * ran and MaxBackends is known.
 */
static void
fence_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(add_size(FenceClockShmemSize(),
									add_size(FenceDbShmemSize(),
											 add_size(FenceLeaseShmemSize(),
													  FenceCountsShmemSize()))));
	RequestAddinShmemSpace(FenceBreakerShmemSize());
	RequestAddinShmemSpace(FenceWatchAnyShmemSize());
	FenceDbShmemRequest();
	FenceLeaseShmemRequest();
	FenceBreakerShmemRequest();
}

/*
 * Create or attach to the modules' shared structures.  AddinShmemInitLock
 * makes the "first one initializes" decisions of the modules atomic.
 */
static void
fence_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	FenceClockShmemInit();
	FenceWatchAnyShmemInit();
	FenceDbShmemInit(FenceCounterBlockInit);
	FenceLeaseShmemInit();
	FenceCountsShmemInit(FenceLeasePartitionLocks());
	FenceBreakerShmemInit();
	/* The sweep of dropped databases frees their breakers too. */
	FenceDbShareDatabases(FenceBreakerDatabases, FenceBreakerForgetDatabase);
	/* Claiming a database slot runs that sweep when every slot is taken. */
	FenceDbSetSweep(FenceLeaseForgetDroppedDatabases);
	LWLockRelease(AddinShmemInitLock);
}
