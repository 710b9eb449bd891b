/*-------------------------------------------------------------------------
 *
 * fence.c
 *		Module entry point, and wiring only: defines the settings, installs
 *		the trigger's transaction callbacks, and when the library is in
 *		shared_preload_libraries, claims shared memory for the modules that
 *		need it and has them create or attach to it at startup.
 *
 * Nothing in here is called by another module; what every module needs
 * about the extension as a whole lives at the bottom, in extension.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "fence.h"

PG_MODULE_MAGIC;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

void		_PG_init(void);
static void fence_shmem_request(void);
static void fence_shmem_startup(void);

void
_PG_init(void)
{
	FenceGucInit();
	FenceEnforceInit();
	FenceCitusInit();

	if (!process_shared_preload_libraries_in_progress)
		return;

	fence_preloaded = true;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = fence_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = fence_shmem_startup;
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
									add_size(FenceStatsShmemSize(),
											 FenceLeaseShmemSize())));
	RequestAddinShmemSpace(FenceBreakerShmemSize());
	FenceStatsShmemRequest();
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
	FenceStatsShmemInit(FenceCounterBlockInit);
	FenceLeaseShmemInit();
	FenceBreakerShmemInit();
	/* The sweep of dropped databases frees their breakers too. */
	FenceStatsShareDatabases(FenceBreakerDatabases, FenceBreakerForgetDatabase);
	LWLockRelease(AddinShmemInitLock);
}
