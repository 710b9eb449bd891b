/*-------------------------------------------------------------------------
 *
 * lease_table.c
 *		The shared-memory lease table: shared memory, partitions, lookup, the
 *		free list and reclaim, installing a grant, and a lease's status.
 *
 * One array of fence.max_leases slots, shared by all databases, looked up
 * through a hash table split into FENCE_LEASE_PARTITIONS partitions.  Each
 * partition has its own LWLock (tranche "fence_leases") and bucket array,
 * so grants on different keys rarely meet on a lock; a slot belongs to the
 * partition of its key while it is in use, and to a global free list
 * (guarded by a spinlock) otherwise.  Every operation touches one bucket
 * chain, so its cost does not depend on how many leases are held.
 *
 * An entry is held (scope set; live while FenceNow() < expires_at) until
 * it is released or broken; then its slot goes straight back to the free
 * list, unless backends wait in its queue: such an entry stays, released,
 * for the head of the queue to take.  So the table holds about as many
 * entries as there are leases, and a grant touches few, cache-warm slots.
 * Expired entries keep their last token (fence_lease_status() says
 * "superseded" for older ones) until the free list runs dry; then they
 * are reclaimed a partition at a time.  An entry with waiters never is.
 *
 * Lock-delay (fence.lock_delay): a lease granted with one that ends
 * without a release (it expires, or its session ends holding it:
 * FenceLeaseAbandon leaves it expired as of then) keeps its key from
 * everyone until its end plus the delay; such an entry is refused like a
 * live one, its waiters sleep until the delay's end, and reclaim keeps it.
 * So it counts against its role from its grant (entry_counted), whatever
 * its scope, and fence.max_lock_delay bounds the delay.
 *
 * Slot size: 304 bytes (248 of them key and owner text), plus 2 to 4 bytes
 * of bucket array per slot.
 *
 * The other files of the table (lease_internal.h lists them) grant, queue,
 * release and show what this one keeps; of them, this one calls only
 * lease_roles.c, to count a lease that ends against its role.
 *
 * Locks: fence.h lists every lock of fence in the order they may be taken.
 * Here, in that order:
 *
 *	- one partition LWLock ("fence_leases").  Never two at once: reclaim,
 *	  the fence_leases snapshot and FenceLeaseWakeWaiters() take them one
 *	  after another, releasing each first.  Held only over work that cannot
 *	  wait or ERROR (acquire_step and hand_off promise this; a hand-off, like
 *	  a grant, takes the token block's spinlock and the role-count lock
 *	  inside it, and sets the head's latch); never across WaitLatch,
 *	  palloc, the counter's refill (FenceCounterNext: WAL, synchronous
 *	  replication) or reclaim_some().  dbstate.c's LWLock (claiming a
 *	  database's slot) is taken only with no partition lock held:
 *	  FenceLeaseAcquire claims the slot before it locks a partition.
 *	- the role-count LWLock ("fence_lease_roles"), taken only inside
 *	  role_count_add() and role_count_sub(), which may run with a partition
 *	  lock held; nothing is taken while it is held, and a full hash makes
 *	  them return, never ERROR.
 *	- free_mutex, a spinlock: free_head, nfree and the "next" links of free
 *	  slots.
 *
 * What each lock guards:
 *	- the role-count lock: role_counts, the number of counted leases
 *	  (entry_counted) each role has in the table.
 *	- a partition lock: its bucket chains, every field of the slots linked
 *	  into them (and lease_counts.c's heaps and counts of the partition),
 *	  and the FenceWaiter entries (lease_waiters) of the procs queued on
 *	  those slots, or granted one by a hand-off and not yet back.  Readers (status, snapshot) take it shared; anything that
 *	  changes a slot or a queue, exclusive.  One read goes without it: a
 *	  backend looks at its own "granted" flag, which the granter sets last,
 *	  after a write barrier, and only that backend clears.
 *	- a partition's generation: bumped under the exclusive lock whenever a
 *	  lease of the partition ends or may end sooner; read without a lock.
 *	- sweep_hand: atomic, only spreads reclaim over the partitions.
 *	- my_wait_slot, my_wait_lock, my_spare_slots: this backend's own.
 *
 * Invariants:
 *	- a slot is in exactly one place: one bucket chain (in use), the free
 *	  list, or a backend's my_spare_slots (or, between the two locks, in the
 *	  chain reclaim_some() is moving to the free list);
 *	- an entry with waiters (wait_head >= 0) is never unlinked or reclaimed,
 *	  so a waiter's my_wait_slot stays valid until it dequeues itself or is
 *	  granted the key (then the entry may go once the grant ends: a grant
 *	  the waiter cannot take is released by key and token);
 *	- a permit entry never has waiters, and its key's entry stays linked
 *	  while it is; the number of permit entries of a key, live or expired,
 *	  never exceeds its permits, which change only while nothing holds or
 *	  awaits the key;
 *	- a proc is in at most one queue, and lease_waiters[proc].slot says which;
 *	  a proc whose "granted" is set is in none, and holds the lease its
 *	  "handed" describes (or held it: it may have ended since);
 *	- a held entry's token was published with FenceDbPublishGrant()
 *	  under the partition lock, so grants of a database appear in token
 *	  order; tokens only grow per key.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/twophase.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "lease_internal.h"

FenceLeaseShared *lease_shared = NULL;
int32	   *lease_buckets = NULL;	/* [partition][bucket] chain heads */
FenceLeaseSlot *lease_slots = NULL;
FenceWaiter *lease_waiters = NULL;

/* Free slots this backend reserved for its acquire in progress. */
int32		my_spare_slots[FENCE_MAX_SPARES];
int			my_nspare = 0;

/* The partition this backend is counted a sleeper of (FenceLeaseWaitEnd). */
static int	my_watch_partition = -1;

static int
lease_nprocs(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

/*
 * Buckets per partition: a power of two, one for every one or two slots.
 * Chains hold only the leases held (and released ones with waiters), so
 * even a full table has chains of two at most on average.
 */
static uint32
lease_nbuckets(void)
{
	uint32		want = (uint32) Max(fence_max_leases / FENCE_LEASE_PARTITIONS / 2, 1);
	uint32		n = 1;

	while (n < want)
		n <<= 1;
	return n;
}

/* Offsets of the parts of the shared area; the total when all is true. */
static Size
lease_layout(Size *buckets_off, Size *slots_off, Size *waiters_off)
{
	Size		size = MAXALIGN(sizeof(FenceLeaseShared));

	*buckets_off = size;
	size = add_size(size, MAXALIGN(mul_size(mul_size(FENCE_LEASE_PARTITIONS,
													 lease_nbuckets()),
											sizeof(int32))));
	*slots_off = size;
	size = add_size(size, mul_size(fence_max_leases, sizeof(FenceLeaseSlot)));
	*waiters_off = size;
	size = add_size(size, mul_size(lease_nprocs(), sizeof(FenceWaiter)));
	return size;
}

void
FenceLeaseShmemRequest(void)
{
	RequestNamedLWLockTranche(FENCE_LEASE_TRANCHE, FENCE_LEASE_PARTITIONS);
	FenceLeaseRolesShmemRequest();
}

Size
FenceLeaseShmemSize(void)
{
	Size		b,
				s,
				w;

	return add_size(lease_layout(&b, &s, &w),
					FenceLeaseRolesShmemSize());
}

void
FenceLeaseShmemInit(void)
{
	Size		buckets_off,
				slots_off,
				waiters_off;
	Size		size = lease_layout(&buckets_off, &slots_off, &waiters_off);
	bool		found;
	char	   *base;

	FenceLeaseRolesShmemInit();

	base = ShmemInitStruct("fence leases", size, &found);
	lease_shared = (FenceLeaseShared *) base;
	lease_buckets = (int32 *) (base + buckets_off);
	lease_slots = (FenceLeaseSlot *) (base + slots_off);
	lease_waiters = (FenceWaiter *) (base + waiters_off);

	if (found)
		return;

	lease_shared->locks = GetNamedLWLockTranche(FENCE_LEASE_TRANCHE);
	for (int i = 0; i < FENCE_LEASE_PARTITIONS; i++)
	{
		pg_atomic_init_u64(&lease_shared->generations[i].value, 0);
		pg_atomic_init_u32(&lease_shared->watches[i].w.sleepers, 0);
		ConditionVariableInit(&lease_shared->watches[i].w.cv);
	}
	SpinLockInit(&lease_shared->free_mutex);
	pg_atomic_init_u32(&lease_shared->sweep_hand, 0);
	lease_shared->bucket_mask = lease_nbuckets() - 1;
	lease_shared->nslots = fence_max_leases;
	lease_shared->nprocs = lease_nprocs();
	lease_shared->started_at = GetCurrentTimestamp();
	pg_atomic_init_u64(&lease_shared->promoted_at, 0);

	for (uint32 i = 0; i < FENCE_LEASE_PARTITIONS * lease_nbuckets(); i++)
		lease_buckets[i] = -1;
	for (int i = 0; i < fence_max_leases; i++)
		lease_slots[i].next = (i + 1 < fence_max_leases) ? i + 1 : -1;
	lease_shared->free_head = 0;
	lease_shared->nfree = fence_max_leases;
	for (int i = 0; i < lease_shared->nprocs; i++)
	{
		lease_waiters[i].slot = -1;
		lease_waiters[i].next = -1;
	}
}

/* The partition locks, which init.c hands to lease_counts.c. */
LWLockPadded *
FenceLeasePartitionLocks(void)
{
	return lease_shared->locks;
}

/*
 * Could a key of keylen bytes be in the table?  Not if the table was never
 * set up (fence not preloaded) or the length is no key's: the callers that
 * must never ERROR (exit clean-up, status, the watchdog) answer "not held"
 * then instead of looking.
 */
bool
table_may_hold(int keylen)
{
	return lease_shared != NULL && keylen > 0 && keylen <= FENCE_MAX_KEY_LEN;
}

LWLock *
partition_lock(uint32 hash)
{
	return &lease_shared->locks[hash % FENCE_LEASE_PARTITIONS].lock;
}

/*
 * A lease of the partition ended or may end sooner.  Exclusive lock held;
 * waking the sessions that wait for a lease of it to end (a spinlock and
 * SetLatch) is allowed under it.
 */
void
bump_generation(uint32 partition)
{
	pg_atomic_fetch_add_u64(&lease_shared->generations[partition].value, 1);
	if (pg_atomic_read_u32(&lease_shared->watches[partition].w.sleepers) > 0)
		ConditionVariableBroadcast(&lease_shared->watches[partition].w.cv);
	FenceWatchAnyNotify();
}

/* The partition whose lock this is. */
uint32
lock_partition(LWLock *lock)
{
	return (uint32) ((LWLockPadded *) lock - lease_shared->locks);
}

int32 *
bucket_head(uint32 hash)
{
	uint32		partition = hash % FENCE_LEASE_PARTITIONS;
	uint32		bucket = (hash / FENCE_LEASE_PARTITIONS) & lease_shared->bucket_mask;

	return &lease_buckets[partition * (lease_shared->bucket_mask + 1) + bucket];
}

/*
 * The link that points at the lease or permit-key entry of (dbid, key) --
 * its bucket head or its predecessor's next -- or NULL.  Caller holds the
 * partition lock.
 */
int32 *
lookup_link(uint32 hash, Oid dbid, const char *key, int keylen)
{
	for (int32 *link = bucket_head(hash); *link >= 0;
		 link = &lease_slots[*link].next)
	{
		FenceLeaseSlot *slot = &lease_slots[*link];

		if (slot->kind != ENTRY_PERMIT &&
			entry_has_key(slot, dbid, key, keylen))
			return link;
	}
	return NULL;
}

/*
 * Walking the permits of permit-key entry "key" (or of a dropped one's key):
 * the link to the first permit at or after *link, or NULL.  Caller holds
 * the partition lock.  All entries of a key share its bucket chain.
 */
int32 *
next_permit_link(int32 *link, FenceLeaseSlot *key)
{
	for (; *link >= 0; link = &lease_slots[*link].next)
	{
		FenceLeaseSlot *slot = &lease_slots[*link];

		if (slot->kind == ENTRY_PERMIT &&
			entry_has_key(slot, key->dbid, key->text, key->keylen))
			return link;
	}
	return NULL;
}

/* The link to the key's permit with this token, or NULL. */
static int32 *
permit_link(uint32 hash, FenceLeaseSlot *key, FenceToken token)
{
	for (int32 *link = next_permit_link(bucket_head(hash), key); link != NULL;
		 link = next_permit_link(&lease_slots[*link].next, key))
	{
		if (lease_slots[*link].token == token)
			return link;
	}
	return NULL;
}

/* The slot of (dbid, key), or -1.  Caller holds the partition lock. */
int32
lookup(uint32 hash, Oid dbid, const char *key, int keylen)
{
	int32	   *link = lookup_link(hash, dbid, key, keylen);

	return link ? *link : -1;
}

/*
 * Lock the partition of (dbid, key) in the given mode and return the link
 * to its entry (see lookup_link), or NULL.  The caller releases *lock.
 */
int32 *
lock_entry(Oid dbid, const char *key, int keylen, LWLockMode mode,
		   LWLock **lock, uint32 *hash)
{
	*hash = lease_hash(dbid, key, keylen);
	*lock = partition_lock(*hash);
	LWLockAcquire(*lock, mode);
	return lookup_link(*hash, dbid, key, keylen);
}

/* An entry stops holding its lease (scope becomes NONE or is reused). */
void
entry_ends(FenceLeaseSlot *slot)
{
	if (entry_counted(slot))
		role_count_sub(slot->roleid);
}

/*
 * Tell lease_counts.c what the entry holds now (after it started or stopped
 * holding a lease, or its expiry moved).  partition: the entry's, or -1 for
 * an entry that was held before and is still (its partition is known).
 * Exclusive partition lock held; never ERRORs.
 */
void
count_slot(FenceLeaseSlot *slot, int partition)
{
	FenceCountsNote((int32) (slot - lease_slots), partition, slot->dbid,
					slot->kind == ENTRY_PERMIT_KEY ? FENCE_SCOPE_NONE :
					(FenceLeaseScope) slot->scope,
					slot->kind == ENTRY_PERMIT, slot->expires_at);
}

void
push_free_chain(int32 first, int32 last, int count)
{
	SpinLockAcquire(&lease_shared->free_mutex);
	lease_slots[last].next = lease_shared->free_head;
	lease_shared->free_head = first;
	lease_shared->nfree += count;
	SpinLockRelease(&lease_shared->free_mutex);
}

int32
pop_free(void)
{
	int32		idx;

	SpinLockAcquire(&lease_shared->free_mutex);
	idx = lease_shared->free_head;
	if (idx >= 0)
	{
		lease_shared->free_head = lease_slots[idx].next;
		lease_shared->nfree--;
	}
	SpinLockRelease(&lease_shared->free_mutex);
	return idx;
}

/*
 * Free entries of one partition that have no waiters: with dbid invalid,
 * those no longer live (released or expired; permit keys left without
 * permits); else every entry of database dbid.  Returns how many were freed; *ended counts those that were held.
 * Takes the partition lock.
 */
static int
free_entries(uint32 partition, Oid dbid, int *ended)
{
	uint32		nbuckets = lease_shared->bucket_mask + 1;
	LWLock	   *lock = &lease_shared->locks[partition].lock;
	int32		first = -1,
				last = -1;
	int			count = 0;
	TimestampTz now;

	LWLockAcquire(lock, LW_EXCLUSIVE);
	now = FenceNow();
	for (uint32 b = 0; b < nbuckets * 2; b++)
	{
		int32	   *chain = &lease_buckets[partition * nbuckets + b / 2];
		int32	   *link = chain;

		/*
		 * Each chain twice: leases and permits first, then permit keys, each
		 * of which stays while any permit of its key does.
		 */
		while (*link >= 0)
		{
			int32		idx = *link;
			FenceLeaseSlot *slot = &lease_slots[idx];
			bool		permit_key = (slot->kind == ENTRY_PERMIT_KEY);
			bool		free_it;

			if (slot->wait_head >= 0 || permit_key != (b % 2 == 1))
				free_it = false;
			else if (OidIsValid(dbid) && slot->dbid != dbid)
				free_it = false;
			else if (permit_key)
				free_it = next_permit_link(chain, slot) == NULL;
			else
				free_it = OidIsValid(dbid) || !slot_is_taken(slot, now);

			if (free_it)
			{
				if (slot->scope != FENCE_SCOPE_NONE)
					(*ended)++;
				entry_ends(slot);
				slot->scope = FENCE_SCOPE_NONE;
				count_slot(slot, partition);
				*link = slot->next;
				slot->next = first;
				first = idx;
				if (last < 0)
					last = idx;
				count++;
			}
			else
				link = &slot->next;
		}
	}
	if (count > 0)
		bump_generation(partition);
	LWLockRelease(lock);

	if (count > 0)
		push_free_chain(first, last, count);
	return count;
}

/*
 * Reclaim from one partition, trying partitions in turn until one yields
 * something.  False if nothing at all could be freed: the table is full of
 * live leases or queues.
 */
bool
reclaim_some(void)
{
	uint32		start = pg_atomic_fetch_add_u32(&lease_shared->sweep_hand, 1);
	int			ended = 0;

	for (int i = 0; i < FENCE_LEASE_PARTITIONS; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (free_entries((start + i) % FENCE_LEASE_PARTITIONS, InvalidOid,
						 &ended) > 0)
			return true;
	}
	return false;
}

/*
 * free_entries() over every partition: every reclaimable entry (dbid
 * invalid), or every entry of database dbid.  How many held leases ended.
 */
int
reclaim_all(Oid dbid)
{
	int			ended = 0;

	for (uint32 p = 0; p < FENCE_LEASE_PARTITIONS; p++)
	{
		CHECK_FOR_INTERRUPTS();
		(void) free_entries(p, dbid, &ended);
	}
	return ended;
}

/*
 * Have at least n reserved slots, from the free list only (no reclaim: the
 * caller may hold a partition lock).  False if it ran dry.
 */
bool
have_spares(int n)
{
	Assert(n <= FENCE_MAX_SPARES);
	while (my_nspare < n)
	{
		int32		idx = pop_free();

		if (idx < 0)
			return false;
		my_spare_slots[my_nspare++] = idx;
	}
	return true;
}

void
release_spare_slots(void)
{
	while (my_nspare > 0)
	{
		int32		idx = my_spare_slots[--my_nspare];

		push_free_chain(idx, idx, 1);
	}
}

/*
 * Count this backend a sleeper of the partition (FenceLeaseWaitEnd), until
 * stop_watching(); returns how many sleep there now.  See FenceLeaseWatch.
 */
uint32
start_watching(uint32 partition)
{
	Assert(my_watch_partition < 0);
	my_watch_partition = (int) partition;
	return pg_atomic_add_fetch_u32(&lease_shared->watches[partition].w.sleepers, 1);
}

/* No longer count this backend a sleeper of its partition, if it was. */
void
stop_watching(void)
{
	if (my_watch_partition >= 0)
	{
		pg_atomic_fetch_sub_u32(&lease_shared->watches[my_watch_partition].w.sleepers, 1);
		my_watch_partition = -1;
	}
}

/*
 * Link a new, released entry of the given kind for (MyDatabaseId, key) from
 * a spare slot.
 */
int32
new_entry(uint32 hash, const FenceLeaseRequest *req, EntryKind kind)
{
	int32	   *head = bucket_head(hash);
	int32		idx;
	FenceLeaseSlot *slot;

	Assert(my_nspare > 0);
	idx = my_spare_slots[--my_nspare];
	slot = &lease_slots[idx];
	slot->dbid = MyDatabaseId;
	slot->kind = (uint8) kind;
	slot->keylen = (uint8) req->keylen;
	memcpy(slot->text, req->key, req->keylen);
	slot->scope = FENCE_SCOPE_NONE;
	slot->ownerlen = 0;
	if (kind == ENTRY_PERMIT_KEY)
		slot->held.permits = req->permits;
	else
		slot->held.procno = -1;
	slot->token = 0;
	slot->expires_at = 0;
	slot->lock_delay = 0;
	slot->wait_head = -1;
	slot->next = *head;
	*head = idx;
	return idx;
}

/*
 * The restart grace counts from the server's start (shared memory's) or
 * from its promotion, whichever came last.
 */
bool
in_restart_grace(TimestampTz *until)
{
	TimestampTz promoted_at;

	if (fence_restart_grace_ms <= 0)
		return false;
	promoted_at = (TimestampTz) pg_atomic_read_u64(&lease_shared->promoted_at);
	*until = lease_deadline(Max(lease_shared->started_at, promoted_at),
							(int64) fence_restart_grace_ms * 1000);
	return GetCurrentTimestamp() < *until;
}

/*
 * A standby's lease table is empty when it is promoted, as a restarted
 * server's is, while the old primary's holders may still be working: the
 * restart grace must count from the promotion too.  PostgreSQL keeps no
 * promotion time, but a promotion writes the history file of the timeline
 * it starts, and that file's modification time says when.  A server that
 * merely started on a later timeline finds a history file older than its
 * start, which changes nothing.  Looked up once per backend, on its first
 * grant once it is out of recovery (a stat(); with no lock held).
 */
void
note_promotion(void)
{
	static bool noted = false;
	char		path[MAXPGPATH];
	struct stat st;
	TimeLineID	tli;
	TimestampTz promoted_at;
	uint64		seen;

	if (noted || fence_restart_grace_ms <= 0 || RecoveryInProgress())
		return;
	noted = true;
	tli = GetWALInsertionTimeLine();
	if (tli <= 1)
		return;
	TLHistoryFilePath(path, tli);
	if (stat(path, &st) != 0)
		return;
	/* Whole seconds: round up, so that the grace is never shorter. */
	promoted_at = time_t_to_timestamptz(st.st_mtime + 1);

	/* Every backend finds the same time; keep the latest seen. */
	seen = pg_atomic_read_u64(&lease_shared->promoted_at);
	while ((TimestampTz) seen < promoted_at &&
		   !pg_atomic_compare_exchange_u64(&lease_shared->promoted_at, &seen,
										   (uint64) promoted_at))
		;
}

/*
 * Give entry "slot" (a lease entry, or a permit entry) to the caller with a
 * new token.  same_role_counted: it held an expired lease of the caller's
 * role that is counted against the role (entry_counted), and so is the new
 * one: the count carries over.
 */
void
install_grant(FenceLeaseSlot *slot, uint32 hash, const FenceLeaseRequest *req,
			  FenceToken token, TimestampTz now, bool same_role_counted,
			  FenceLeaseGrant *grant)
{
	install_grant_to(slot, hash, req, GetUserId(), FENCE_MY_PROCNO, token, now,
					 same_role_counted, grant);
}

/*
 * install_grant() for the request req of role roleid from backend procno
 * (the caller, or the waiter a release hands the key to).
 */
void
install_grant_to(FenceLeaseSlot *slot, uint32 hash,
				 const FenceLeaseRequest *req, Oid roleid, int32 procno,
				 FenceToken token, TimestampTz now, bool same_role_counted,
				 FenceLeaseGrant *grant)
{
	grant->takeover = (slot->scope != FENCE_SCOPE_NONE);
	if (grant->takeover)
	{
		if (!same_role_counted)
			entry_ends(slot);
		bump_generation(hash % FENCE_LEASE_PARTITIONS);
	}
	slot->scope = (uint8) req->scope;
	slot->token = token;
	slot->granted_at = now;
	slot->expires_at = lease_deadline(now, req->ttl);
	slot->lock_delay = req->lock_delay;
	slot->roleid = roleid;
	if (req->scope == FENCE_SCOPE_DETACHED)
	{
		slot->held.procno = -1;
		slot->ownerlen = (uint8) req->ownerlen;
		memcpy(slot->text + slot->keylen, req->owner, req->ownerlen);
	}
	else
	{
		slot->held.procno = procno;
		slot->ownerlen = 0;
	}
	count_slot(slot, hash % FENCE_LEASE_PARTITIONS);
	grant->outcome = FENCE_ACQUIRE_GRANTED;
	grant->token = token;
	grant->expires_at = slot->expires_at;
}

/*
 * The link to the entry that holds (or held, if it expired) token for the
 * key whose lease or permit-key entry *link points at: that entry itself,
 * or one of the key's permits.  NULL if there is none.  Caller holds the
 * partition lock.
 */
static int32 *
token_link(uint32 hash, int32 *link, FenceToken token)
{
	FenceLeaseSlot *slot;

	if (link == NULL)
		return NULL;
	slot = &lease_slots[*link];
	if (slot->kind == ENTRY_PERMIT_KEY)
		return permit_link(hash, slot, token);
	if (slot->scope != FENCE_SCOPE_NONE && slot->token == token)
		return link;
	return NULL;
}

/*
 * Lock the partition of this database's key exclusively and find the entry
 * that holds (or held, if it expired) token: the lease itself or one of its
 * permits (token_link).  Returns that entry, or NULL if there is none; the
 * lock is held either way, and the caller releases *lock.  *link is set to
 * the key's entry, as lock_entry() returns it, and *held (unless held is
 * NULL) to the link to the returned entry, or NULL.  Caller holds no
 * partition lock, nor any lock fence.h lists after them.  Whether the
 * caller may touch the entry, and whether it must still be live, is the
 * caller's to check.
 */
FenceLeaseSlot *
lock_token_entry(const char *key, int keylen, FenceToken token,
				 LWLock **lock, uint32 *hash, int32 **link, int32 **held)
{
	int32	   *found;

	*link = lock_entry(MyDatabaseId, key, keylen, LW_EXCLUSIVE, lock, hash);
	found = token_link(*hash, *link, token);
	if (held != NULL)
		*held = found;
	return found ? &lease_slots[*found] : NULL;
}

/*
 * Where token stands for the lease key of database dbid.  For the trigger
 * and fence_lease_status(); never ERRORs.  A key the table does not know
 * (never taken, released, or its expired entry reclaimed) reads as
 * released.  A lease with permits answers for the permit that has token:
 * held or expired while it is in the table, then superseded (other tokens
 * were granted since) or released.  When the lease is held and stamp is
 * not NULL, *stamp is set for FenceLeaseStampHolds().
 */
FenceLeaseStatus
FenceLeaseGetStatus(Oid dbid, const char *key, int keylen, FenceToken token,
					FenceLeaseStamp *stamp)
{
	return FenceLeaseGetStatusRole(dbid, key, keylen, token, stamp, NULL);
}

/*
 * The same, and *roleid (when not NULL) set to the role that took the
 * table's entry for the key (for a permit key: the permit with token, or
 * else the latest permit granted), or InvalidOid if there is none.
 */
FenceLeaseStatus
FenceLeaseGetStatusRole(Oid dbid, const char *key, int keylen,
						FenceToken token, FenceLeaseStamp *stamp, Oid *roleid)
{
	uint32		hash;
	LWLock	   *lock;
	int32	   *link;
	int32	   *held;
	FenceLeaseSlot *slot;
	FenceLeaseStatus status = FENCE_LEASE_RELEASED;

	if (roleid != NULL)
		*roleid = InvalidOid;
	if (!table_may_hold(keylen))
		return FENCE_LEASE_RELEASED;
	link = lock_entry(dbid, key, keylen, LW_SHARED, &lock, &hash);
	held = token_link(hash, link, token);
	slot = held ? &lease_slots[*held] : link ? &lease_slots[*link] : NULL;
	if (slot && roleid != NULL && slot->token != 0)
		*roleid = slot->roleid;
	if (held)
		status = slot_is_live(slot, FenceNow()) ?
			FENCE_LEASE_HELD : FENCE_LEASE_EXPIRED;
	else if (slot && token < slot->token)
		status = FENCE_LEASE_SUPERSEDED;
	if (status == FENCE_LEASE_HELD && stamp != NULL)
	{
		stamp->partition = hash % FENCE_LEASE_PARTITIONS;
		stamp->generation =
			pg_atomic_read_u64(&lease_shared->generations[stamp->partition].value);
		stamp->expires_at = slot->expires_at;
	}
	LWLockRelease(lock);
	return status;
}

/*
 * Is the lease that FenceLeaseGetStatus() found held still held by the same
 * token?  True only if nothing in its partition ended or shortened a lease
 * since, and it has not expired: exact, and without the partition lock.
 */
bool
FenceLeaseStampHolds(const FenceLeaseStamp *stamp)
{
	pg_memory_barrier();
	return pg_atomic_read_u64(&lease_shared->generations[stamp->partition].value) ==
		stamp->generation &&
		FenceNow() < stamp->expires_at;
}

const char *
FenceLeaseStatusName(FenceLeaseStatus status)
{
	switch (status)
	{
		case FENCE_LEASE_HELD:
			return "held";
		case FENCE_LEASE_EXPIRED:
			return "expired";
		case FENCE_LEASE_SUPERSEDED:
			return "superseded";
		case FENCE_LEASE_RELEASED:
			return "released";
	}
	return "released";
}

const char *
FenceLeaseScopeName(FenceLeaseScope scope)
{
	switch (scope)
	{
		case FENCE_SCOPE_SESSION:
			return "session";
		case FENCE_SCOPE_XACT:
			return "transaction";
		case FENCE_SCOPE_DETACHED:
			return "detached";
		case FENCE_SCOPE_NONE:
			break;
	}
	return "none";
}
