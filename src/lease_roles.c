/*-------------------------------------------------------------------------
 *
 * lease_roles.c
 *		Per-role counts of the leases that can outlive their sessions, for
 *		fence.max_leases_per_role.
 *
 * The leases of each role that can outlive their sessions -- detached
 * ones, and those taken with a lock-delay -- are counted (entry_counted in
 * lease_internal.h), so that one role cannot fill the table for everyone.
 * The counts are a small shared hash of their own.
 *
 * Locks (fence.h has the order): the role-count LWLock ("fence_lease_roles")
 * guards role_counts, the number of counted leases each role has in the
 * table.  It is taken only inside role_count_add() and role_count_sub(),
 * which may run with a partition lock held (they usually do); nothing is
 * taken while it is held, and a full hash makes them return, never ERROR.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"

#include "lease_internal.h"

#define FENCE_ROLES_TRANCHE		"fence_lease_roles"

/*
 * How many counted leases (entry_counted: detached, or lock-delayed; live
 * or expired, until the entry is reused or reclaimed) each role has in the
 * table.  A shared hash protected by one LWLock, taken only inside a
 * partition lock and only when a counted lease begins or ends: other
 * session and transaction leases end with their sessions and are not
 * counted.
 */
typedef struct FenceRoleCount
{
	Oid			roleid;			/* hash key */
	int32		count;
} FenceRoleCount;

static HTAB *role_counts = NULL;
static LWLock *roles_lock = NULL;	/* protects role_counts */

/*
 * Entries the role hash is sized for: as many roles as could hold detached
 * leases, up to a bound (it can grow into the spare shared memory beyond).
 */
static long
role_hash_size(void)
{
	return Min((long) fence_max_leases, 1024L);
}

/*
 * A counted lease of roleid begins.  With limit > 0, refuse (false,
 * changing nothing) if the role holds that many already; *count is then
 * what it holds.  Caller holds a partition lock; never ERRORs.  Should the
 * hash run out of shared memory (more roles hold detached leases than it
 * was sized for, and no spare memory is left), the lease goes uncounted:
 * bookkeeping never refuses a grant, and the limit stays an upper bound
 * that is at worst enforced a little late.
 */
bool
role_count_add(Oid roleid, int limit, int32 *count)
{
	FenceRoleCount *rc;
	bool		found;
	bool		ok = true;

	LWLockAcquire(roles_lock, LW_EXCLUSIVE);
	rc = hash_search(role_counts, &roleid, HASH_ENTER_NULL, &found);
	if (rc == NULL)
		*count = 0;
	else
	{
		if (!found)
			rc->count = 0;
		*count = rc->count;
		if (limit > 0 && rc->count >= limit)
			ok = false;			/* count > 0 here: the entry stays */
		else
			rc->count++;
	}
	LWLockRelease(roles_lock);
	return ok;
}

/* A counted lease of roleid ended or left the table.  Never ERRORs. */
void
role_count_sub(Oid roleid)
{
	FenceRoleCount *rc;

	LWLockAcquire(roles_lock, LW_EXCLUSIVE);
	rc = hash_search(role_counts, &roleid, HASH_FIND, NULL);
	if (rc != NULL && --rc->count <= 0)
		(void) hash_search(role_counts, &roleid, HASH_REMOVE, NULL);
	LWLockRelease(roles_lock);
}

void
FenceLeaseRolesShmemRequest(void)
{
	RequestNamedLWLockTranche(FENCE_ROLES_TRANCHE, 1);
}

Size
FenceLeaseRolesShmemSize(void)
{
	return hash_estimate_size(role_hash_size(), sizeof(FenceRoleCount));
}

/* Create or attach to the hash; AddinShmemInitLock held (lease_table.c). */
void
FenceLeaseRolesShmemInit(void)
{
	HASHCTL		info;

	info.keysize = sizeof(Oid);
	info.entrysize = sizeof(FenceRoleCount);
	role_counts = ShmemInitHash("fence lease roles", role_hash_size(),
								role_hash_size(), &info,
								HASH_ELEM | HASH_BLOBS);
	roles_lock = &(GetNamedLWLockTranche(FENCE_ROLES_TRANCHE))->lock;
}
