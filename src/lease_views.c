/*-------------------------------------------------------------------------
 *
 * lease_views.c
 *		What the views read: the rows of fence_leases and fence_lease_waiters,
 *		and the blockers fence_blocking_pids() returns; the same for one key
 *		(fence_leases_of, fence_lease_waiters_of, fence_lease_blockers_of).
 *
 * Each takes the partition locks shared, one after another (never two at
 * once), copies what it needs and releases the lock before it pallocs the
 * rows it returns, or pallocs their room first.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/procarray.h"
#include "utils/timestamp.h"

#include "lease_internal.h"

/*
 * One held entry as a row of fence_leases.  Partition lock held (shared is
 * enough).
 */
static void
snapshot_entry(FenceLeaseSlot *slot, FenceLeaseInfo *info)
{
	info->dbid = slot->dbid;
	info->scope = (FenceLeaseScope) slot->scope;
	info->token = slot->token;
	info->granted_at = slot->granted_at;
	info->expires_at = slot->expires_at;
	info->roleid = slot->roleid;
	info->pid = (slot->held.procno >= 0) ?
		GetPGProcByNumber(slot->held.procno)->pid : 0;
	info->nwaiters = count_waiters(slot);
	info->permits = 0;
	if (slot->kind == ENTRY_PERMIT)
	{
		int32		key = lookup(lease_hash(slot->dbid, slot->text,
											slot->keylen),
								 slot->dbid, slot->text,
								 slot->keylen);

		/* A permit's key entry stays while the permit does. */
		Assert(key >= 0);
		if (key >= 0)
		{
			info->nwaiters = count_waiters(&lease_slots[key]);
			info->permits = lease_slots[key].held.permits;
		}
	}
	info->keylen = slot->keylen;
	info->ownerlen = slot->ownerlen;
	memcpy(info->key, slot->text, slot->keylen);
	memcpy(info->owner, slot->text + slot->keylen, slot->ownerlen);
}

/*
 * Copy of every held entry (live or expired), for the fence_leases view:
 * leases, and permits (with their key's queue and number of permits).
 * Each partition is copied under its lock; allocation happens outside.
 */
int
FenceLeaseSnapshot(FenceLeaseInfo **leases)
{
	uint32		nbuckets;
	int			n = 0;
	int			cap = 0;
	FenceLeaseInfo *out = NULL;

	FenceRequirePreload();
	nbuckets = lease_shared->bucket_mask + 1;

	for (int p = 0; p < FENCE_LEASE_PARTITIONS; p++)
	{
		LWLock	   *lock = &lease_shared->locks[p].lock;

		/*
		 * The partition's count of held entries (lease_counts.c) says how
		 * much room its rows need; make room with the lock released, and
		 * look again.
		 */
		int			count;

		for (;;)
		{
			CHECK_FOR_INTERRUPTS();
			LWLockAcquire(lock, LW_SHARED);
			count = FenceCountsPartitionHeld(p);
			if (n + count <= cap)
				break;
			LWLockRelease(lock);
			cap = n + count;
			/* fence.max_leases rows may take more than 1 GB. */
			out = out ? repalloc_huge(out, sizeof(FenceLeaseInfo) * cap)
				: palloc_extended(sizeof(FenceLeaseInfo) * cap,
								  MCXT_ALLOC_HUGE);
		}

		for (uint32 b = 0; count > 0 && b < nbuckets && n < cap; b++)
		{
			for (int32 i = lease_buckets[p * nbuckets + b]; i >= 0 && n < cap;
				 i = lease_slots[i].next)
			{
				if (lease_slots[i].scope != FENCE_SCOPE_NONE)
					snapshot_entry(&lease_slots[i], &out[n++]);
			}
		}
		LWLockRelease(lock);
	}
	*leases = out;
	return n;
}

/*
 * The held entries of one key of this database (its lease, or its
 * permits), as FenceLeaseSnapshot() gives them: one bucket chain of one
 * partition is read, so the cost does not depend on how many leases are
 * held.  A key holds at most FENCE_MAX_PERMITS entries, allocated before
 * the partition lock is taken.
 */
int
FenceLeaseSnapshotKey(const char *key, int keylen, FenceLeaseInfo **leases)
{
	FenceLeaseInfo *out;
	uint32		hash;
	LWLock	   *lock;
	int			n = 0;

	FenceRequirePreload();
	out = palloc(sizeof(FenceLeaseInfo) * (FENCE_MAX_PERMITS + 1));
	*leases = out;
	if (!table_may_hold(keylen))
		return 0;

	hash = lease_hash(MyDatabaseId, key, keylen);
	lock = partition_lock(hash);
	LWLockAcquire(lock, LW_SHARED);
	for (int32 i = *bucket_head(hash); i >= 0 && n <= FENCE_MAX_PERMITS;
		 i = lease_slots[i].next)
	{
		FenceLeaseSlot *slot = &lease_slots[i];

		if (slot->scope != FENCE_SCOPE_NONE &&
			entry_has_key(slot, MyDatabaseId, key, keylen))
			snapshot_entry(slot, &out[n++]);
	}
	LWLockRelease(lock);
	return n;
}

/*
 * The rows of entry "slot"'s queue, in queue order, into out[n...] (at
 * most the nprocs there are); returns the new n.  Partition lock held.
 */
static int
add_waiter_rows(FenceLeaseSlot *slot, FenceWaiterInfo *out, int n)
{
	int			position = 0;

	for (int32 w = slot->wait_head; w >= 0 && n < lease_shared->nprocs;
		 w = lease_waiters[w].next)
	{
		FenceWaiterInfo *info = &out[n++];

		info->dbid = slot->dbid;
		info->keylen = slot->keylen;
		memcpy(info->key, slot->text, slot->keylen);
		info->pid = GetPGProcByNumber(w)->pid;
		info->roleid = lease_waiters[w].roleid;
		info->scope = (FenceLeaseScope) lease_waiters[w].scope;
		info->since = lease_waiters[w].since;
		info->deadline = lease_waiters[w].deadline;
		info->position = ++position;
	}
	return n;
}

/*
 * Is slot idx, which proc w's wait state names, the head of a queue in
 * partition p?  Partition lock p held.  The wait state and the slot of
 * another partition may change meanwhile: only the key's entry, found in
 * p's own chains, says that the slot is p's and its fields stable.
 */
static bool
queue_head_in(int32 idx, int32 w, uint32 p)
{
	FenceLeaseSlot *slot;
	uint32		hash;
	int			keylen;

	if (idx < 0 || idx >= lease_shared->nslots)
		return false;
	slot = &lease_slots[idx];
	keylen = Min((int) slot->keylen, FENCE_MAX_KEY_LEN);
	if (slot->wait_head != w || keylen == 0)
		return false;
	hash = lease_hash(slot->dbid, slot->text, keylen);
	return hash % FENCE_LEASE_PARTITIONS == p &&
		lookup(hash, slot->dbid, slot->text, keylen) == idx;
}

/*
 * Every session waiting for a lease, for the fence_lease_waiters view: one
 * row per waiter, in queue order per key.  The queues are found from the
 * waiting procs, not the table's chains, so the cost grows with the
 * server's connections, not with the leases held: for each partition,
 * under its lock, each proc at the head of a queue of that partition lists
 * its queue.  The array is allocated first (there are at most nprocs
 * waiters).
 */
int
FenceLeaseWaitersSnapshot(FenceWaiterInfo **waiters)
{
	int			n = 0;
	FenceWaiterInfo *out;

	FenceRequirePreload();
	out = palloc(sizeof(FenceWaiterInfo) * Max(lease_shared->nprocs, 1));

	for (uint32 p = 0; p < FENCE_LEASE_PARTITIONS; p++)
	{
		LWLock	   *lock = &lease_shared->locks[p].lock;

		CHECK_FOR_INTERRUPTS();
		LWLockAcquire(lock, LW_SHARED);
		for (int32 w = 0; w < lease_shared->nprocs; w++)
		{
			int32		idx = lease_waiters[w].slot;

			if (queue_head_in(idx, w, p))
				n = add_waiter_rows(&lease_slots[idx], out, n);
		}
		LWLockRelease(lock);
	}
	*waiters = out;
	return n;
}

/* A blocker row for the live holder of a lease or a permit. */
static void
add_holder(FenceBlockerInfo *info, FenceLeaseSlot *slot)
{
	info->holder = true;
	info->position = 0;
	info->roleid = slot->roleid;
	info->pid = (slot->held.procno >= 0) ?
		GetPGProcByNumber(slot->held.procno)->pid : 0;
	info->ownerlen = (slot->scope == FENCE_SCOPE_DETACHED) ?
		slot->ownerlen : 0;
	memcpy(info->owner, slot->text + slot->keylen, info->ownerlen);
}

/*
 * What a request for the key of entry "slot" (a lease or permit-key entry)
 * waits for, into out[0..cap): its live holders (every live permit of a
 * lease with permits), then the sessions of its queue up to the proc
 * stop_procno (-1: all of them), in queue order.  Returns how many.
 * Partition lock held.
 */
static int
add_blockers(FenceLeaseSlot *slot, uint32 hash, TimestampTz now,
			 int32 stop_procno, FenceBlockerInfo *out, int cap)
{
	int			n = 0;

	if (slot->kind == ENTRY_PERMIT_KEY)
	{
		for (int32 *link = next_permit_link(bucket_head(hash), slot);
			 link != NULL;
			 link = next_permit_link(&lease_slots[*link].next, slot))
		{
			if (slot_is_live(&lease_slots[*link], now) && n < cap)
				add_holder(&out[n++], &lease_slots[*link]);
		}
	}
	else if (slot_is_live(slot, now) && n < cap)
		add_holder(&out[n++], slot);
	for (int32 w = slot->wait_head, position = 1;
		 w >= 0 && w != stop_procno && n < cap;
		 w = lease_waiters[w].next, position++)
	{
		FenceBlockerInfo *info = &out[n++];

		info->holder = false;
		info->position = position;
		info->roleid = lease_waiters[w].roleid;
		info->pid = GetPGProcByNumber(w)->pid;
		info->ownerlen = 0;
	}
	return n;
}

/*
 * What the session with this pid waits for, if it waits for a lease: the
 * live holder (a session's pid, or a detached owner; every live permit
 * holder of a lease with permits) and the sessions
 * queued ahead of it, in queue order.  Returns how many; 0 if it does not
 * wait.  The queue a backend is in is found by trying each partition under
 * its lock, since only that lock makes its wait state stable.
 */
int
FenceLeaseBlockers(int pid, FenceBlockerInfo **blockers)
{
	PGPROC	   *proc;
	int32		procno;
	int			n = 0;
	int			cap;
	FenceBlockerInfo *out;

	FenceRequirePreload();
	proc = BackendPidGetProc(pid);
	/* At most one row per permit (or one holder) and one per other proc. */
	cap = Max(lease_shared->nprocs, 1) + FENCE_MAX_PERMITS;
	out = palloc(sizeof(FenceBlockerInfo) * cap);
	*blockers = out;
	if (proc == NULL)
		return 0;
#if PG_VERSION_NUM >= 170000
	procno = GetNumberFromPGProc(proc);
#else
	procno = proc->pgprocno;
#endif

	for (uint32 p = 0; p < FENCE_LEASE_PARTITIONS; p++)
	{
		LWLock	   *lock = &lease_shared->locks[p].lock;
		int32		idx;
		FenceLeaseSlot *slot;
		TimestampTz now;

		LWLockAcquire(lock, LW_SHARED);
		now = FenceNow();
		idx = lease_waiters[procno].slot;
		slot = (idx >= 0) ? &lease_slots[idx] : NULL;
		if (slot == NULL ||
			lease_hash(slot->dbid, slot->text, slot->keylen) % FENCE_LEASE_PARTITIONS != p)
		{
			LWLockRelease(lock);
			continue;
		}
		n = add_blockers(slot, lease_hash(slot->dbid, slot->text, slot->keylen),
						 now, procno, out, cap);
		LWLockRelease(lock);
		break;
	}
	return n;
}

/*
 * One key of this database, read from its bucket: its queue into waiters
 * (fence_lease_waiters' rows), or what a session asking for the key now
 * would wait for into blockers[0..cap): its live holders and every session
 * queued for it (fence_blocking_pids()'s rows).  Returns how many rows.
 */
static int
key_queue(const char *key, int keylen, FenceWaiterInfo *waiters,
		  FenceBlockerInfo *blockers, int cap)
{
	uint32		hash;
	LWLock	   *lock;
	int32	   *link;
	int			n = 0;

	if (!table_may_hold(keylen))
		return 0;
	link = lock_entry(MyDatabaseId, key, keylen, LW_SHARED, &lock, &hash);
	if (link != NULL && waiters != NULL)
		n = add_waiter_rows(&lease_slots[*link], waiters, 0);
	else if (link != NULL)
		n = add_blockers(&lease_slots[*link], hash, FenceNow(), -1, blockers,
						 cap);
	LWLockRelease(lock);
	return n;
}

int
FenceLeaseWaitersSnapshotKey(const char *key, int keylen,
							 FenceWaiterInfo **waiters)
{
	FenceRequirePreload();
	*waiters = palloc(sizeof(FenceWaiterInfo) * Max(lease_shared->nprocs, 1));
	return key_queue(key, keylen, *waiters, NULL, 0);
}

int
FenceLeaseBlockersKey(const char *key, int keylen, FenceBlockerInfo **blockers)
{
	int			cap = Max(lease_shared->nprocs, 1) + FENCE_MAX_PERMITS;

	FenceRequirePreload();
	*blockers = palloc(sizeof(FenceBlockerInfo) * cap);
	return key_queue(key, keylen, NULL, *blockers, cap);
}
