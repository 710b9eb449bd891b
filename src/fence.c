/*-------------------------------------------------------------------------
 *
 * fence.c
 *		Module entry point: defines the settings, and when the library is in
 *		shared_preload_libraries, claims shared memory for the modules that
 *		need it; plus the lookup of the extension's own schema, which several
 *		modules need.
 *
 * Without preloading, the fence_token type and the fence_enforce() trigger
 * still work; every lease function refuses with FenceRequirePreload().
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/fmgroids.h"

#include "fence.h"

PG_MODULE_MAGIC;

/* True in the postmaster and every backend it forks when preloaded. */
bool		fence_preloaded = false;

#if PG_VERSION_NUM >= 150000
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

void		_PG_init(void);
static void fence_shmem_request(void);
static void fence_shmem_startup(void);

void
_PG_init(void)
{
	FenceGucInit();
	FenceEnforceInit();

	if (!process_shared_preload_libraries_in_progress)
		return;

	fence_preloaded = true;

#if PG_VERSION_NUM >= 150000
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = fence_shmem_request;
#else
	fence_shmem_request();
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = fence_shmem_startup;
}

/*
 * Ask for the shared memory and the named LWLock tranches of every module.
 * On 15 and later this must happen in shmem_request_hook, after all
 * libraries' _PG_init ran and MaxBackends is known.
 */
static void
fence_shmem_request(void)
{
#if PG_VERSION_NUM >= 150000
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
#endif
	RequestAddinShmemSpace(add_size(FenceClockShmemSize(),
									add_size(FenceStatsShmemSize(),
											 FenceLeaseShmemSize())));
	FenceStatsShmemRequest();
	FenceLeaseShmemRequest();
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
	FenceStatsShmemInit();
	FenceLeaseShmemInit();
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Lease functions call this first: the lease table only exists when the
 * library was loaded at server start.
 */
void
FenceRequirePreload(void)
{
	if (!fence_preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("fence leases are not available"),
				 errdetail("The fence library was not loaded at server start, so the shared lease table does not exist."),
				 errhint("Add fence to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/*
 * The schema fence was created in, or InvalidOid if it is not installed in
 * this database.  (PostgreSQL 15 does not export get_extension_schema.)
 */
Oid
FenceExtensionSchema(void)
{
	Oid			extoid = get_extension_oid("fence", true);
	Oid			result = InvalidOid;
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;

	if (!OidIsValid(extoid))
		return InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		result = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}
