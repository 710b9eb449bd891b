/*-------------------------------------------------------------------------
 *
 * guc.c
 *		The fence.* settings.  The "fence" prefix is reserved, so a typo such
 *		as fence.max_lease is reported instead of silently accepted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "miscadmin.h"
#include "utils/guc.h"

#include "fence.h"

int			fence_max_leases = 65536;
int			fence_max_ttl_s = 86400;
bool		fence_test_clock = false;
int			fence_restart_grace_ms = 0;
int			fence_max_databases = 1024;
int			fence_max_leases_per_role = -1;
bool		fence_log_lease_waits = false;
int			fence_max_breakers = 1024;

void
FenceGucInit(void)
{
	/*
	 * PostgreSQL accepts new PGC_POSTMASTER settings only from a library in
	 * shared_preload_libraries: loaded later, defining one is FATAL, which
	 * would make the type and the trigger unusable without preloading.  A
	 * library loaded on demand has no lease table and no virtual clock
	 * anyway, so it shows those two settings as fixed (PGC_INTERNAL).
	 */
	GucContext	startup_context = process_shared_preload_libraries_in_progress ?
		PGC_POSTMASTER : PGC_INTERNAL;

	DefineCustomIntVariable("fence.max_leases",
							"Capacity of the shared lease table.",
							"Each slot takes about 300 bytes of shared memory.",
							&fence_max_leases,
							65536,
							16,
							16 * 1024 * 1024,
							startup_context,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("fence.max_ttl",
							"Longest lease TTL a caller may ask for.",
							NULL,
							&fence_max_ttl_s,
							86400,
							1,
							INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("fence.test_clock",
							 "Allows the virtual lease clock (fence_set_clock, fence_advance_clock).",
							 "For tests that replay timelines; never turn it on in production.",
							 &fence_test_clock,
							 false,
							 startup_context,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("fence.restart_grace",
							"After server start, grant no lease for this long.",
							"Covers detached leases that were lost with shared memory.",
							&fence_restart_grace_ms,
							0,
							0,
							INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("fence.max_databases",
							"Number of databases that can use fence leases at the same time.",
							"A dropped database's slot is reused by the next database that needs one.",
							&fence_max_databases,
							1024,
							1,
							65536,
							startup_context,
							0,
							NULL, NULL, NULL);

	/*
	 * Superuser-settable, so that an administrator can give one role a
	 * different limit (ALTER ROLE ... SET) and a role cannot raise its own.
	 * The default, -1, follows fence.max_leases (FenceMaxLeasesPerRole): a
	 * fixed number would cap a large table but not a small one.
	 */
	DefineCustomIntVariable("fence.max_leases_per_role",
							"Most detached leases one role may hold at a time (0: no limit; -1: 1000, or a quarter of fence.max_leases if less).",
							"Detached leases outlive their sessions; the limit keeps one role from filling the lease table.  Superusers are not limited.",
							&fence_max_leases_per_role,
							-1,
							-1,
							INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("fence.log_lease_waits",
							 "Logs a wait for a lease that lasts longer than deadlock_timeout, and its end.",
							 NULL,
							 &fence_log_lease_waits,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("fence.max_breakers",
							"Capacity of the shared circuit-breaker table.",
							"Each breaker takes about 232 bytes of shared memory.",
							&fence_max_breakers,
							1024,
							16,
							1024 * 1024,
							startup_context,
							0,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("fence");
}

/*
 * The number of detached leases one role may hold, fence.max_leases_per_role
 * resolved: 0 for no limit.  Its default, -1, is 1000, or a quarter of the
 * lease table when that is less, so that no single role can fill a table of
 * any size and every table leaves room for at least three other roles.
 */
int
FenceMaxLeasesPerRole(void)
{
	if (fence_max_leases_per_role >= 0)
		return fence_max_leases_per_role;
	return Min(1000, Max(fence_max_leases / 4, 1));
}
