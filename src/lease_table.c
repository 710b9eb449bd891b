/*-------------------------------------------------------------------------
 *
 * lease_table.c
 *		The shared-memory lease table: grant, release, renew, expire, wait.
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
 * Granting takes a token from the durable counter.  Its block in shared
 * memory nearly always has one (the next block is reserved ahead, before
 * the partition lock is taken), taken under a spinlock while the partition
 * lock is held; when the block must be refilled all the same (I/O, may
 * ERROR), that happens with no LWLock held: decide under the partition
 * lock, drop it, take the token, then re-check and install under the lock.
 * FenceDbPublishGrant() under the lock makes grants visible in token
 * order; a grant that lost that race takes a new token.  Tokens wasted by
 * lost races leave gaps, which the token law allows.
 *
 * Blocking waits: each entry has a FIFO queue of waiting backends, linked
 * through a per-PGPROC array (FenceWaiter) that also holds each waiter's
 * whole request.  Nobody may barge past a non-empty queue.  As in
 * PostgreSQL's lock manager, the backend that frees a key grants it to the
 * head of the queue itself (hand_off): a release, a break, the end of a
 * transaction, the end of a session (of a lease without a lock-delay), or a
 * head that gives up.  It takes the token, counts the role, publishes the
 * grant and installs it under the partition lock, as the head would have,
 * unlinks the head and sets its latch; the head finds its grant ready and
 * returns without the lock.  A released permit is granted in place.  A lease
 * that expires is handed over by whoever finds it expired first (a waiter
 * whose timer fired, or any caller), or taken by the head when its own timer
 * fires; one that ended without a release, only once its lock-delay has
 * passed.  Where a hand-off could change the outcome (the restart grace; an
 * empty token block, which is never refilled under the lock; the role's
 * limit; a lost publication race; a waiter in a read-only transaction) the
 * head is woken instead and takes the key itself: only the head may take a
 * free key.  Every waiter sleeps on its latch until the holder's expiry or
 * the end of the lock-delay (real clock), and records until when
 * (watch_until), so that a new holder wakes the new head only if it must
 * watch an earlier time or take a free key: nobody is woken just to sleep
 * again.  Waiters are also woken by the virtual clock moving
 * (FenceLeaseWakeWaiters) and by a renewal that moves the expiry earlier.
 * During fence.restart_grace waiters queue up all the same (a free key gets
 * an entry to hold its queue), so that the grace's end serves them in arrival
 * order.  A waiter that errors out leaves the queue in a PG_CATCH block; one
 * that exits, in this module's exit callback; a grant handed to it meanwhile
 * is released there, and so goes on to the next in line.  fence_lease_waiters
 * and fence_blocking_pids() read the waiters' entries too.
 *
 * A lease with permits (a bulkhead) lets up to n holders have a key at
 * once, each with a token of its own: one entry for the key (its queue, its
 * n, its latest token) and one entry per permit, all in the key's bucket
 * chain (see EntryKind).  A grant walks the key's permits to count the live
 * ones, so n is bounded (FENCE_MAX_PERMITS); the head of the queue sleeps
 * until the earliest permit expires.  Release, renew and status find the
 * permit by its token.  A key is one kind or the other while anything holds
 * or awaits it.
 *
 * A detached lease belongs to its owner name within the role that took it.
 * The leases of each role that can outlive their sessions -- detached ones,
 * and those taken with a lock-delay -- are counted (a small shared hash
 * under its own LWLock, taken inside a partition lock), so that one role
 * cannot fill the table for everyone: fence.max_leases_per_role.  Entries
 * of a dropped database are freed, with its breakers and per-database slot,
 * as its DROP DATABASE commits (FenceLeaseDatabaseDropping); a sweep
 * (FenceLeaseForgetDroppedDatabases) frees anything left when the table or
 * the slots run out, or on request.
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
 *	  those slots, or granted one by a hand-off and not yet
 *	  back.  Readers (status, snapshot) take it shared; anything that
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

#include <limits.h>
#include <sys/stat.h>

#include "access/genam.h"
#include "access/table.h"
#include "access/twophase.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "common/hashfn.h"
#include "common/int.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lock.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "fence.h"
#include "lease_counts.h"

#define FENCE_LEASE_TRANCHE		"fence_leases"
#define FENCE_ROLES_TRANCHE		"fence_lease_roles"

/* How often in a row a grant may lose the publish race before giving up. */
#define FENCE_MAX_LOST_RACES	1000

#if PG_VERSION_NUM >= 170000
#define FENCE_MY_PROCNO		MyProcNumber
#else
#define FENCE_MY_PROCNO		(MyProc->pgprocno)
#endif

/*
 * What an entry is.  An ordinary lease is one entry: its key, its holder and
 * its queue.  A lease with permits (a bulkhead) is one ENTRY_PERMIT_KEY
 * entry, which holds nothing itself but keeps the key's queue, its number
 * of permits and its latest token, plus one ENTRY_PERMIT entry per permit
 * held (live or expired).  All entries of a key hash alike, so they share a
 * bucket chain; looking a key up finds its lease or permit-key entry and
 * steps over the permits, which are reached by walking the chain.  A permit
 * entry never has waiters and goes back to the free list when it ends; the
 * permit-key entry stays while any permit of the key remains in the table.
 */
typedef enum EntryKind
{
	ENTRY_LEASE = 0,
	ENTRY_PERMIT_KEY,
	ENTRY_PERMIT
} EntryKind;

/*
 * One entry.  Kept small (about 300 bytes a slot, buckets included):
 * no cached hash, and the wait queue is a singly linked list from its head
 * (queues are short; appending walks it).  A session or transaction lease
 * is identified by its holder's procno alone: the holder releases it in its
 * exit callback, and a backend that dies without running that callback
 * takes shared memory down with it (crash restart).
 */
typedef struct FenceLeaseSlot
{
	Oid			dbid;
	int32		next;			/* bucket chain or free list; -1 ends */
	uint8		keylen;
	uint8		ownerlen;		/* detached scope only */
	uint8		scope;			/* FenceLeaseScope; NONE = released */
	uint8		kind;			/* EntryKind */
	Oid			roleid;			/* the role that took it (view privacy) */
	FenceToken	token;			/* current token, or the last one */
	TimestampTz granted_at;
	TimestampTz expires_at;		/* lease clock */
	int64		lock_delay;		/* after an end without release: see
								 * slot_in_lock_delay() */
	union
	{
		int32		procno;		/* session/xact scope: the holder; else -1 */
		int32		permits;	/* ENTRY_PERMIT_KEY: the key's permits */
	}			held;
	int32		wait_head;		/* first waiting procno; -1 = none */
	char		text[FENCE_MAX_KEY_LEN + FENCE_MAX_OWNER_LEN];	/* key, owner */
} FenceLeaseSlot;

StaticAssertDecl(FENCE_MAX_KEY_LEN <= PG_UINT8_MAX &&
				 FENCE_MAX_OWNER_LEN <= PG_UINT8_MAX,
				 "key and owner lengths must fit in uint8");
StaticAssertDecl(sizeof(FenceLeaseSlot) <= 304,
				 "a lease slot and its bucket should take at most 308 bytes");

/*
 * How many counted leases (entry_counted: detached, or lock-delayed; live
 * or expired, until the entry is reused or reclaimed) each role has in the
 * table, for fence.max_leases_per_role.  A shared hash protected by one
 * LWLock, taken only inside a partition lock and only when a counted lease
 * begins or ends: other session and transaction leases end with their
 * sessions and are not counted.
 */
typedef struct FenceRoleCount
{
	Oid			roleid;			/* hash key */
	int32		count;
} FenceRoleCount;

/*
 * Per-PGPROC wait state; protected by the partition lock of "slot" (of the
 * slot the proc was granted, once "granted" is set).  It holds the whole
 * request, so that the backend that frees the key can grant it to the head
 * of the queue (hand_off) as the waiter itself would have; the scope, role,
 * since and deadline also describe the wait for fence_lease_waiters.
 */
typedef struct FenceWaiter
{
	int32		slot;			/* slot whose queue this proc is in, or -1 */
	int32		next;			/* next procno in that queue, or -1 */
	uint8		scope;			/* FenceLeaseScope asked for */
	uint8		ownerlen;		/* detached scope only */
	bool		may_hand_off;	/* another backend may grant it (the waiter
								 * could take a token itself) */
	bool		granted;		/* handed: the grant is ready; set last */
	Oid			roleid;			/* the role that asks */
	int32		permits;		/* 0, or the permits of the key */
	int32		role_limit;		/* see FenceLeaseAcquire; 0: none */
	int64		ttl;			/* lease-clock microseconds */
	int64		lock_delay;		/* lease-clock microseconds */
	TimestampTz since;			/* real time it joined the queue */
	TimestampTz deadline;		/* real time it gives up; 0: none */
	TimestampTz watch_until;	/* lease-clock time it wakes up by itself to
								 * look again; 0: only when woken */
	FenceLeaseGrant handed;		/* when granted: what it got */
	char		owner[FENCE_MAX_OWNER_LEN];
} FenceWaiter;

/*
 * A partition's generation goes up whenever a lease of the partition ends
 * or its expiry may move earlier (release, break, renew, takeover, reclaim);
 * bumped under the exclusive partition lock, read without it.  A held lease
 * seen at generation g with expiry e is still held by the same token while
 * the generation is g and the lease clock is before e: the strict trigger
 * re-checks a bulk write's lease that way, exactly, without the lock.  One
 * cache line each, so that partitions do not share one.
 */
typedef union FenceLeaseGeneration
{
	pg_atomic_uint64 value;
	char		pad[PG_CACHE_LINE_SIZE];
} FenceLeaseGeneration;

/*
 * Sessions waiting for a lease of the partition to end
 * (FenceLeaseWaitEnd) sleep on its condition variable; whoever bumps the
 * partition's generation broadcasts on it, but only when the count says
 * someone sleeps there, so that a release pays nothing for a feature
 * nobody uses.  The count is raised before the sleeper first looks at the
 * lease, and read after the generation is bumped (both full barriers): a
 * bump the sleeper did not see is one whose broadcast it gets.
 */
typedef union FenceLeaseWatch
{
	struct
	{
		pg_atomic_uint32 sleepers;
		ConditionVariable cv;
	}			w;
	char		pad[PG_CACHE_LINE_SIZE];
} FenceLeaseWatch;

typedef struct FenceLeaseShared
{
	FenceLeaseGeneration generations[FENCE_LEASE_PARTITIONS];
	FenceLeaseWatch watches[FENCE_LEASE_PARTITIONS];
	LWLockPadded *locks;		/* FENCE_LEASE_PARTITIONS partition locks */
	LWLock	   *roles_lock;		/* protects role_counts */
	slock_t		free_mutex;		/* protects free_head, nfree */
	int32		free_head;
	int32		nfree;
	pg_atomic_uint32 sweep_hand;	/* next partition to reclaim from */
	uint32		bucket_mask;	/* buckets per partition - 1 */
	int32		nslots;
	int32		nprocs;
	TimestampTz started_at;		/* shared memory (re)initialized: grace */
	pg_atomic_uint64 promoted_at;	/* this server's promotion, or 0: grace */
} FenceLeaseShared;

static FenceLeaseShared *lease_shared = NULL;
static int32 *lease_buckets = NULL; /* [partition][bucket] chain heads */
static FenceLeaseSlot *lease_slots = NULL;
static FenceWaiter *lease_waiters = NULL;
static HTAB *role_counts = NULL;

/* This backend's acquire in progress, for clean-up on error or exit. */
static int32 my_wait_slot = -1;		/* queue we are in, or -1 */
static LWLock *my_wait_lock = NULL; /* ... and its partition lock */
static char my_wait_key[FENCE_MAX_KEY_LEN]; /* ... and its key, to release a
											 * grant handed to us that we
											 * could not take */
static int	my_wait_keylen = 0;
static int32 my_role_limit = 0;	/* the acquire's role_limit, for the queue */
#define FENCE_MAX_SPARES 2		/* a permit may need a slot for itself and
								 * one for its key */
static int32 my_spare_slots[FENCE_MAX_SPARES];	/* reserved free slots */
static int	my_nspare = 0;
static bool lease_exit_registered = false;	/* lease_exit_callback */
/* The partition this backend is counted a sleeper of (FenceLeaseWaitEnd). */
static int	my_watch_partition = -1;

/* What one look at an entry under its lock concluded. */
typedef enum AcquireStep
{
	STEP_DONE,					/* grant filled in: granted, extended, conflict */
	STEP_REFUSED,				/* held by another, or not our turn */
	STEP_GRACE,					/* free, but in the restart grace period */
	STEP_NEED_TOKEN,			/* free and ours to take: get a token first */
	STEP_NEED_SLOT,				/* ... and a slot for a new entry */
	STEP_LOST_RACE,				/* a larger token was granted meanwhile */
	STEP_ROLE_LIMIT				/* the role holds fence.max_leases_per_role */
} AcquireStep;

/* The count the last STEP_ROLE_LIMIT saw, for its error message. */
static int32 role_limit_count = 0;

/* Who the last STEP_REFUSED waited for, for fence.log_lease_waits. */
typedef enum BlockerKind
{
	BLOCKER_SESSION,			/* a session or transaction holder: pid */
	BLOCKER_DETACHED,			/* a detached holder: owner */
	BLOCKER_QUEUE,				/* nobody holds it; others are queued first */
	BLOCKER_PERMITS,			/* every permit is held (or in lock-delay) */
	BLOCKER_LOCK_DELAY			/* it ended unreleased; in its lock-delay */
} BlockerKind;

static struct
{
	BlockerKind kind;
	int			pid;
	int			ownerlen;
	char		owner[FENCE_MAX_OWNER_LEN + 1];
} last_blocker;

/* This backend's current wait, for fence.log_lease_waits. */
static TimestampTz wait_started = 0;	/* real time; 0: not waiting */
static bool wait_logged = false;	/* "still waiting" was logged */

#if PG_VERSION_NUM >= 170000
/* Our own wait event, FenceLease, registered on first use. */
static uint32 fence_wait_event = 0;
#endif

/* ---------- shared memory ---------- */

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

/*
 * Entries the role hash is sized for: as many roles as could hold detached
 * leases, up to a bound (it can grow into the spare shared memory beyond).
 */
static long
role_hash_size(void)
{
	return Min((long) fence_max_leases, 1024L);
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
	RequestNamedLWLockTranche(FENCE_ROLES_TRANCHE, 1);
}

Size
FenceLeaseShmemSize(void)
{
	Size		b,
				s,
				w;

	return add_size(lease_layout(&b, &s, &w),
					hash_estimate_size(role_hash_size(), sizeof(FenceRoleCount)));
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
	HASHCTL		info;

	info.keysize = sizeof(Oid);
	info.entrysize = sizeof(FenceRoleCount);
	role_counts = ShmemInitHash("fence lease roles", role_hash_size(),
								role_hash_size(), &info,
								HASH_ELEM | HASH_BLOBS);

	base = ShmemInitStruct("fence leases", size, &found);
	lease_shared = (FenceLeaseShared *) base;
	lease_buckets = (int32 *) (base + buckets_off);
	lease_slots = (FenceLeaseSlot *) (base + slots_off);
	lease_waiters = (FenceWaiter *) (base + waiters_off);

	if (found)
		return;

	lease_shared->locks = GetNamedLWLockTranche(FENCE_LEASE_TRANCHE);
	lease_shared->roles_lock = &(GetNamedLWLockTranche(FENCE_ROLES_TRANCHE))->lock;
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

/* The partition locks, which fence.c hands to lease_counts.c. */
LWLockPadded *
FenceLeasePartitionLocks(void)
{
	return lease_shared->locks;
}

/* ---------- lookup ---------- */

/*
 * Could a key of keylen bytes be in the table?  Not if the table was never
 * set up (fence not preloaded) or the length is no key's: the callers that
 * must never ERROR (exit clean-up, status, the watchdog) answer "not held"
 * then instead of looking.
 */
static inline bool
table_may_hold(int keylen)
{
	return lease_shared != NULL && keylen > 0 && keylen <= FENCE_MAX_KEY_LEN;
}

static inline uint32
lease_hash(Oid dbid, const char *key, int keylen)
{
	return hash_combine(hash_bytes_uint32((uint32) dbid),
						hash_bytes((const unsigned char *) key, keylen));
}

static inline LWLock *
partition_lock(uint32 hash)
{
	return &lease_shared->locks[hash % FENCE_LEASE_PARTITIONS].lock;
}

/*
 * A lease of the partition ended or may end sooner.  Exclusive lock held;
 * waking the sessions that wait for a lease of it to end (a spinlock and
 * SetLatch) is allowed under it.
 */
static inline void
bump_generation(uint32 partition)
{
	pg_atomic_fetch_add_u64(&lease_shared->generations[partition].value, 1);
	if (pg_atomic_read_u32(&lease_shared->watches[partition].w.sleepers) > 0)
		ConditionVariableBroadcast(&lease_shared->watches[partition].w.cv);
}

/* The partition whose lock this is. */
static inline uint32
lock_partition(LWLock *lock)
{
	return (uint32) ((LWLockPadded *) lock - lease_shared->locks);
}

static inline int32 *
bucket_head(uint32 hash)
{
	uint32		partition = hash % FENCE_LEASE_PARTITIONS;
	uint32		bucket = (hash / FENCE_LEASE_PARTITIONS) & lease_shared->bucket_mask;

	return &lease_buckets[partition * (lease_shared->bucket_mask + 1) + bucket];
}

static inline bool
entry_has_key(FenceLeaseSlot *slot, Oid dbid, const char *key, int keylen)
{
	return slot->keylen == keylen && slot->dbid == dbid &&
		memcmp(slot->text, key, keylen) == 0;
}

/*
 * The link that points at the lease or permit-key entry of (dbid, key) --
 * its bucket head or its predecessor's next -- or NULL.  Caller holds the
 * partition lock.
 */
static int32 *
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
static int32 *
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
static inline int32
lookup(uint32 hash, Oid dbid, const char *key, int keylen)
{
	int32	   *link = lookup_link(hash, dbid, key, keylen);

	return link ? *link : -1;
}

/*
 * Lock the partition of (dbid, key) in the given mode and return the link
 * to its entry (see lookup_link), or NULL.  The caller releases *lock.
 */
static int32 *
lock_entry(Oid dbid, const char *key, int keylen, LWLockMode mode,
		   LWLock **lock, uint32 *hash)
{
	*hash = lease_hash(dbid, key, keylen);
	*lock = partition_lock(*hash);
	LWLockAcquire(*lock, mode);
	return lookup_link(*hash, dbid, key, keylen);
}

static inline bool
slot_is_live(FenceLeaseSlot *slot, TimestampTz now)
{
	return slot->scope != FENCE_SCOPE_NONE && now < slot->expires_at;
}

/* now + usecs, saturated far below the end of the timestamp range. */
static inline TimestampTz
lease_deadline(TimestampTz now, int64 usecs)
{
	TimestampTz result;

	if (pg_add_s64_overflow(now, usecs, &result) || !IS_VALID_TIMESTAMP(result))
		result = END_TIMESTAMP - 1;
	return result;
}

/*
 * Lock-delay (fence.lock_delay): a lease that ended without a release (it
 * expired, or its session ended holding it, which leaves it expired) keeps
 * its key from everyone until its end plus the delay it was granted with.
 * Its holder may be paused rather than gone, and may still act on work no
 * fence can check; the delay is the time it has to notice.  A release or
 * a break ends a lease outright: its scope is NONE then, and no delay
 * applies.
 */
static inline TimestampTz
lock_delay_end(FenceLeaseSlot *slot)
{
	return lease_deadline(slot->expires_at, slot->lock_delay);
}

static inline bool
slot_in_lock_delay(FenceLeaseSlot *slot, TimestampTz now)
{
	return slot->scope != FENCE_SCOPE_NONE && slot->lock_delay > 0 &&
		now >= slot->expires_at && now < lock_delay_end(slot);
}

/* Nobody may be granted the entry now: it is held, or in its lock-delay. */
static inline bool
slot_is_taken(FenceLeaseSlot *slot, TimestampTz now)
{
	return slot_is_live(slot, now) || slot_in_lock_delay(slot, now);
}

/* ---------- leases per role ---------- */

/*
 * Does the entry count against its role's fence.max_leases_per_role?  Those
 * that can outlive their session do: a detached lease, and a lease taken
 * with a lock-delay, which its session's end leaves in its delay, holding
 * its slot.  Counted from the grant, not from the session's end, since an
 * exit cannot be refused.  An entry's lock_delay only grows while it is
 * held (extend_held counts it then), so the answer changes only through
 * entry_ends() and install_grant_to().
 */
static inline bool
entry_counted(FenceLeaseSlot *slot)
{
	return slot->scope == FENCE_SCOPE_DETACHED ||
		(slot->scope != FENCE_SCOPE_NONE && slot->lock_delay > 0);
}

/* Would the lease a request asks for be counted? */
static inline bool
request_counted(FenceLeaseScope scope, int64 lock_delay)
{
	return scope == FENCE_SCOPE_DETACHED || lock_delay > 0;
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
static bool
role_count_add(Oid roleid, int limit, int32 *count)
{
	FenceRoleCount *rc;
	bool		found;
	bool		ok = true;

	LWLockAcquire(lease_shared->roles_lock, LW_EXCLUSIVE);
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
	LWLockRelease(lease_shared->roles_lock);
	return ok;
}

/* A counted lease of roleid ended or left the table.  Never ERRORs. */
static void
role_count_sub(Oid roleid)
{
	FenceRoleCount *rc;

	LWLockAcquire(lease_shared->roles_lock, LW_EXCLUSIVE);
	rc = hash_search(role_counts, &roleid, HASH_FIND, NULL);
	if (rc != NULL && --rc->count <= 0)
		(void) hash_search(role_counts, &roleid, HASH_REMOVE, NULL);
	LWLockRelease(lease_shared->roles_lock);
}

/* An entry stops holding its lease (scope becomes NONE or is reused). */
static inline void
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
static inline void
count_slot(FenceLeaseSlot *slot, int partition)
{
	FenceCountsNote((int32) (slot - lease_slots), partition, slot->dbid,
					slot->kind == ENTRY_PERMIT_KEY ? FENCE_SCOPE_NONE :
					(FenceLeaseScope) slot->scope,
					slot->kind == ENTRY_PERMIT, slot->expires_at);
}

/* ---------- free list and reclaim ---------- */

static void
push_free_chain(int32 first, int32 last, int count)
{
	SpinLockAcquire(&lease_shared->free_mutex);
	lease_slots[last].next = lease_shared->free_head;
	lease_shared->free_head = first;
	lease_shared->nfree += count;
	SpinLockRelease(&lease_shared->free_mutex);
}

static int32
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
static bool
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
static int
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
 * Free every lease, breaker and the per-database slot of database dbid,
 * which the caller made sure is dropped and that nobody can connect to
 * while this runs.  Takes the partition locks one after another, then the
 * breaker and slot locks; no ERROR of its own.
 */
static int
forget_database(Oid dbid)
{
	/* None of its backends is left to wait, so every entry goes. */
	int			ended = reclaim_all(dbid);

	FenceDbForgetDatabase(dbid);
	return ended;
}

/*
 * Does database dbid exist now?  Read with a snapshot taken now: the
 * syscache, and the catalog snapshot behind it, are only as fresh as the
 * invalidations this backend has read, and whether it read the one of a
 * CREATE DATABASE that committed since depends on what it locked in
 * between; a snapshot taken after our lock on the database object does not.
 */
static bool
database_exists_now(Oid dbid)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	Snapshot	snapshot;
	bool		found;

	ScanKeyInit(&key, Anum_pg_database_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(dbid));
	rel = table_open(DatabaseRelationId, AccessShareLock);
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	scan = systable_beginscan(rel, DatabaseOidIndexId, true, snapshot, 1, &key);
	found = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	UnregisterSnapshot(snapshot);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * Free the leases and the per-database slots of every database that was
 * dropped: its detached leases would otherwise stay until they expire,
 * beyond the reach of fence_break, which works in the caller's database.
 * DROP DATABASE frees them as it commits (FenceLeaseDatabaseDropping), so
 * this finds something only if that did not run.  Needs a transaction (it
 * reads pg_database); takes no LWLock across that.  Returns how many held
 * leases it ended.
 *
 * It must never free the state of a live database, nor of a new database
 * that took a dropped one's OID.  So for each database it holds a lock on
 * the database object (ShareLock, not waited for) while it decides and
 * frees: a backend takes RowExclusiveLock on its database while it
 * connects, so while we hold ours nobody connects to a database of that
 * OID, DROP DATABASE (AccessExclusiveLock) is not under way, and a backend
 * that connected before has seen the database committed.  The existence
 * check then reads pg_database with a snapshot taken after the lock: if it
 * finds no such database, no backend is connected to one of that OID and
 * none can connect until we are done, so every lease, breaker and slot of
 * that OID belongs to the dropped database.  A lock that is not free means
 * a connection or a drop is under way: the database is skipped this time.
 */
int
FenceLeaseForgetDroppedDatabases(void)
{
	Oid		   *dbids;
	int			n;
	int			ended = 0;

	if (lease_shared == NULL)
		return 0;
	n = FenceDbDatabases(&dbids);
	for (int i = 0; i < n; i++)
	{
		LOCKTAG		tag;

		if (dbids[i] == MyDatabaseId)
			continue;
		SET_LOCKTAG_OBJECT(tag, InvalidOid, DatabaseRelationId, dbids[i], 0);
		if (LockAcquire(&tag, ShareLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
			continue;
		if (!database_exists_now(dbids[i]))
			ended += forget_database(dbids[i]);
		LockRelease(&tag, ShareLock, false);
	}
	pfree(dbids);
	return ended;
}

/*
 * The database that this backend's DROP DATABASE is dropping, whose state
 * goes when the drop commits; InvalidOid if none.  DROP DATABASE cannot run
 * in a transaction block, so there is at most one.
 */
static Oid	dropping_dbid = InvalidOid;
static bool drop_callback_registered = false;

/*
 * Free a dropped database's state just before its DROP DATABASE commits.
 * Not earlier: the drop may still fail before it is done, while the
 * database is in use (DROP DATABASE checks that only after the hook).  Not
 * later: until the drop commits, pg_database still holds the database's
 * row, and a new database gets an OID only if no row of pg_database has it
 * (GetNewOidWithIndex looks at dead rows too), so no new database can have
 * this OID yet, and none inherits the old one's leases, breakers, slot or
 * counter block.  DROP DATABASE holds AccessExclusiveLock on the database,
 * so nobody is connected to it.  Interrupts are held: an ERROR here would
 * abort a drop whose files are gone already.
 */
static void
drop_xact_callback(XactEvent event, void *arg)
{
	Oid			dbid = dropping_dbid;

	if (!OidIsValid(dbid))
		return;
	dropping_dbid = InvalidOid;
	if (event != XACT_EVENT_PRE_COMMIT)
		return;
	HOLD_INTERRUPTS();
	(void) forget_database(dbid);
	RESUME_INTERRUPTS();
}

/*
 * DROP DATABASE dbid is under way in this backend (fence.c's object access
 * hook): have its state freed as it commits.
 */
void
FenceLeaseDatabaseDropping(Oid dbid)
{
	if (lease_shared == NULL)
		return;
	if (!drop_callback_registered)
	{
		RegisterXactCallback(drop_xact_callback, NULL);
		drop_callback_registered = true;
	}
	dropping_dbid = dbid;
}

/* A free slot for a new entry, reclaiming if needed.  No lock held. */
static int32
reserve_slot(void)
{
	for (;;)
	{
		int32		idx = pop_free();

		if (idx >= 0)
			return idx;
		if (reclaim_some())
			continue;
		/* Leases of dropped databases are the last thing to give back. */
		if (FenceLeaseForgetDroppedDatabases() > 0)
			continue;
		if ((idx = pop_free()) >= 0)
			return idx;
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("lease table is full"),
				 errdetail("All %d slots hold live leases, leases in their fence.lock_delay or leases with waiters.",
						   lease_shared->nslots),
				 errhint("Release leases that are no longer needed (fence_break() also ends a lease in its fence.lock_delay), or increase fence.max_leases (takes effect at server restart).")));
	}
}

/*
 * Have at least n reserved slots, from the free list only (no reclaim: the
 * caller may hold a partition lock).  False if it ran dry.
 */
static bool
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

static void
release_spare_slots(void)
{
	while (my_nspare > 0)
	{
		int32		idx = my_spare_slots[--my_nspare];

		push_free_chain(idx, idx, 1);
	}
}

/* ---------- wait queues (caller holds the partition lock) ---------- */

static bool serve_queue(FenceLeaseSlot *queue, FenceLeaseSlot *freed);
static bool release_token(const char *key, int keylen, FenceToken token,
						  bool check_holder);

static inline void
wake_proc(int32 procno)
{
	SetLatch(&GetPGProcByNumber(procno)->procLatch);
}

static void
enqueue_self(int32 idx, LWLock *lock, const FenceLeaseRequest *req)
{
	FenceLeaseSlot *slot = &lease_slots[idx];
	int32		me = FENCE_MY_PROCNO;
	int32	   *link = &slot->wait_head;

	Assert(lease_waiters[me].slot < 0);
	while (*link >= 0)
		link = &lease_waiters[*link].next;
	*link = me;
	lease_waiters[me].slot = idx;
	lease_waiters[me].next = -1;
	lease_waiters[me].scope = (uint8) req->scope;
	lease_waiters[me].roleid = GetUserId();
	lease_waiters[me].since = GetCurrentTimestamp();
	lease_waiters[me].deadline = req->has_deadline ? req->deadline : 0;
	lease_waiters[me].permits = req->permits;
	lease_waiters[me].ttl = req->ttl;
	lease_waiters[me].lock_delay = req->lock_delay;
	lease_waiters[me].role_limit = my_role_limit;
	lease_waiters[me].ownerlen =
		(req->scope == FENCE_SCOPE_DETACHED) ? (uint8) req->ownerlen : 0;
	if (lease_waiters[me].ownerlen > 0)
		memcpy(lease_waiters[me].owner, req->owner, lease_waiters[me].ownerlen);
	/* A read-only transaction cannot take a token: it must fail itself. */
	lease_waiters[me].may_hand_off = !XactReadOnly;
	lease_waiters[me].granted = false;
	lease_waiters[me].watch_until = 0;
	my_wait_slot = idx;
	my_wait_lock = lock;
	memcpy(my_wait_key, req->key, req->keylen);
	my_wait_keylen = req->keylen;
}

static int
count_waiters(FenceLeaseSlot *slot)
{
	int			n = 0;

	for (int32 p = slot->wait_head; p >= 0; p = lease_waiters[p].next)
		n++;
	return n;
}

/*
 * Leave the queue of slot idx.  If the head changed, the queue is served
 * (serve_queue): a released key goes to the new head, or the new head is
 * woken if it must look again: to take the key, or to watch an expiry
 * sooner than the one it sleeps until.
 */
static void
dequeue_self(int32 idx)
{
	FenceLeaseSlot *slot = &lease_slots[idx];
	int32		me = FENCE_MY_PROCNO;
	int32	   *link = &slot->wait_head;

	while (*link >= 0 && *link != me)
		link = &lease_waiters[*link].next;
	if (*link == me)
	{
		*link = lease_waiters[me].next;
		if (link == &slot->wait_head && slot->wait_head >= 0)
			(void) serve_queue(slot, (slot->kind == ENTRY_LEASE &&
									  slot->scope == FENCE_SCOPE_NONE) ?
							   slot : NULL);
	}
	lease_waiters[me].slot = -1;
	lease_waiters[me].next = -1;
	my_wait_slot = -1;
	my_wait_lock = NULL;
}

/*
 * Has another backend granted us the lease we queue for (hand_off)?  Then
 * take the grant: we are out of the queue.  Without the partition lock the
 * answer may be a stale "no" (the caller then asks again under the lock),
 * never a wrong "yes": only we clear "granted", and the grant was written
 * before it was set.
 */
static bool
take_handed_grant(FenceLeaseGrant *grant)
{
	FenceWaiter *me = &lease_waiters[FENCE_MY_PROCNO];

	if (my_wait_slot < 0 || !me->granted)
		return false;
	pg_read_barrier();
	*grant = me->handed;
	me->granted = false;
	my_wait_slot = -1;
	my_wait_lock = NULL;
	return true;
}

/*
 * Leave whatever queue this backend is in, and give back a reserved slot.
 * A lease another backend granted us meanwhile is released (and so goes to
 * the next in line): whoever called us is not going to record it.  For
 * error and exit paths; safe to call when there is nothing to undo.  Never
 * ERRORs.
 */
static void
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

/* No longer count this backend a sleeper of its partition, if it was. */
static void
stop_watching(void)
{
	if (my_watch_partition >= 0)
	{
		pg_atomic_fetch_sub_u32(&lease_shared->watches[my_watch_partition].w.sleepers, 1);
		my_watch_partition = -1;
	}
}

static void
lease_exit_callback(int code, Datum arg)
{
	cancel_wait();
	stop_watching();
}

static void
register_exit_callback(void)
{
	if (!lease_exit_registered)
	{
		before_shmem_exit(lease_exit_callback, (Datum) 0);
		lease_exit_registered = true;
	}
}

/* ---------- acquire ---------- */

/*
 * Does the caller already hold this held entry?  A detached lease is held
 * by its owner name within the role that took it: the same name used by
 * another role is another owner.  A session or transaction lease is held
 * by its backend, whatever scope that backend now asks for: asking for it
 * in another scope (detached included) is a conflict, not a wait on
 * oneself.
 */
static bool
holder_matches(FenceLeaseSlot *slot, const FenceLeaseRequest *req)
{
	if (slot->scope == FENCE_SCOPE_DETACHED)
		return req->scope == FENCE_SCOPE_DETACHED &&
			slot->roleid == GetUserId() &&
			slot->ownerlen == req->ownerlen &&
			memcmp(slot->text + slot->keylen, req->owner, req->ownerlen) == 0;
	return slot->held.procno == FENCE_MY_PROCNO;
}

/*
 * Link a new, released entry of the given kind for (MyDatabaseId, key) from
 * a spare slot.
 */
static int32
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
static bool
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
static void
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
 * Free the permit entries of permit-key entry "key" that are not live: all
 * of them when the key changes kind or number of permits (it has no live
 * permit then).  Caller holds the partition lock exclusively; never ERRORs.
 */
static void
drop_dead_permits(uint32 hash, FenceLeaseSlot *key, TimestampTz now)
{
	int32	   *link = next_permit_link(bucket_head(hash), key);

	while (link != NULL)
	{
		int32		idx = *link;
		FenceLeaseSlot *permit = &lease_slots[idx];

		if (slot_is_taken(permit, now))
		{
			link = next_permit_link(&permit->next, key);
			continue;
		}
		entry_ends(permit);
		permit->scope = FENCE_SCOPE_NONE;
		count_slot(permit, hash % FENCE_LEASE_PARTITIONS);
		*link = permit->next;
		push_free_chain(idx, idx, 1);
		link = next_permit_link(link, key);
	}
}

/* Does a permit of permit-key entry "key" remain live or in its lock-delay? */
static bool
has_taken_permit(uint32 hash, FenceLeaseSlot *key, TimestampTz now)
{
	for (int32 *link = next_permit_link(bucket_head(hash), key); link != NULL;
		 link = next_permit_link(&lease_slots[*link].next, key))
	{
		if (slot_is_taken(&lease_slots[*link], now))
			return true;
	}
	return false;
}

/*
 * A key is an ordinary lease or a lease with a number of permits while
 * anything holds it or waits for it; once idle it may become either.  Is
 * the entry busy in another way than req asks for?  Then grant says how.
 */
static bool
kind_conflict(FenceLeaseSlot *slot, uint32 hash, const FenceLeaseRequest *req,
			  TimestampTz now, FenceLeaseGrant *grant)
{
	bool		is_permit_key = (slot->kind == ENTRY_PERMIT_KEY);
	int			permits = is_permit_key ? slot->held.permits : 0;

	if (permits == req->permits)
		return false;
	if (slot->wait_head < 0 &&
		!(is_permit_key ? has_taken_permit(hash, slot, now) :
		  slot_is_taken(slot, now)))
		return false;
	grant->outcome = FENCE_ACQUIRE_KIND_CONFLICT;
	grant->held_permits = permits;
	return true;
}

/*
 * Make idle entry "slot" (no live holder, no waiters: kind_conflict said
 * so) the kind req asks for, with its number of permits; nothing to do if it
 * is that already.  Called only once the caller is sure to take the key or
 * queue for it, so that a request that is refused or fails changes nothing.  An expired lease
 * or permits it still kept end here, as a takeover would end them: a key
 * never keeps more permit entries than its number, so that no clock moved
 * back can make more of them live.  Caller holds the lock exclusively.
 */
static void
become_kind(FenceLeaseSlot *slot, uint32 hash, const FenceLeaseRequest *req,
			TimestampTz now)
{
	EntryKind	kind = (req->permits > 0) ? ENTRY_PERMIT_KEY : ENTRY_LEASE;

	if (slot->kind == kind &&
		(kind == ENTRY_LEASE || slot->held.permits == req->permits))
		return;
	bump_generation(hash % FENCE_LEASE_PARTITIONS);
	if (slot->kind == ENTRY_PERMIT_KEY)
	{
		drop_dead_permits(hash, slot, now);
		if (kind == ENTRY_PERMIT_KEY)
			slot->held.permits = req->permits;
		else
			slot->held.procno = -1;
	}
	else
	{
		entry_ends(slot);
		slot->scope = FENCE_SCOPE_NONE;
		count_slot(slot, hash % FENCE_LEASE_PARTITIONS);
		slot->ownerlen = 0;
		slot->held.permits = req->permits;
	}
	slot->kind = (uint8) kind;
}

static void install_grant_to(FenceLeaseSlot *slot, uint32 hash,
							 const FenceLeaseRequest *req, Oid roleid,
							 int32 procno, FenceToken token, TimestampTz now,
							 bool same_role_counted, FenceLeaseGrant *grant);

/*
 * Give entry "slot" (a lease entry, or a permit entry) to the caller with a
 * new token.  same_role_counted: it held an expired lease of the caller's
 * role that is counted against the role (entry_counted), and so is the new
 * one: the count carries over.
 */
static void
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
static void
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
 * Does a live permit of permit-key entry "key" belong to the detached owner
 * the waiter asks for?  Then its request extends that permit rather than
 * taking another: it must look itself.
 */
static bool
waiter_owns_permit(uint32 hash, FenceLeaseSlot *key, FenceWaiter *waiter,
				   TimestampTz now)
{
	for (int32 *link = next_permit_link(bucket_head(hash), key); link != NULL;
		 link = next_permit_link(&lease_slots[*link].next, key))
	{
		FenceLeaseSlot *permit = &lease_slots[*link];

		if (slot_is_live(permit, now) &&
			permit->scope == FENCE_SCOPE_DETACHED &&
			permit->roleid == waiter->roleid &&
			permit->ownerlen == waiter->ownerlen &&
			memcmp(permit->text + permit->keylen, waiter->owner,
				   waiter->ownerlen) == 0)
			return true;
	}
	return false;
}

/*
 * Grant "freed" -- the lease entry "queue" just released or found expired
 * past its lock-delay (taken over then), or a permit of permit key "queue"
 * just released (reused in place, so that a released permit goes to the
 * head of the queue) -- to the head of the queue, as the
 * head would take it itself: a token from the counter's block, the role
 * count, publication in token order, the grant.  Then the head leaves the
 * queue, finds the grant ready when it wakes (take_handed_grant), and
 * returns.  As in PostgreSQL's lock manager, this saves the head a trip
 * through the partition lock, and the next waiter a wake-up to sleep again.
 *
 * A release or a break ends a lease outright, with no lock-delay: freed
 * may be granted at once.  (A lease that expires, or that its session
 * abandons, stays in its lock-delay: its waiters are woken, or wake up, to
 * look themselves.)  Other permits of the key in their lock-delay count as
 * taken; the released one makes room for one more.
 *
 * Only where it cannot change the outcome: not during the restart grace
 * (whose end serves the queue), not when the counter's block is empty (the
 * refill may not run under the partition lock) or the grant would lose the
 * publication race, not over the role's limit (the head's own attempt
 * reclaims and reports it), not in another database (whose counter this
 * backend does not read), not for a waiter that could take no token itself
 * or whose owner holds a permit of the key already (it extends that).
 * False then, changing nothing but maybe wasting a token: the caller wakes
 * the head to take the key itself.  Caller holds the partition lock
 * exclusively; never ERRORs.
 */
static bool
hand_off(FenceLeaseSlot *queue, FenceLeaseSlot *freed, uint32 hash)
{
	int32		procno = queue->wait_head;
	FenceWaiter *waiter = &lease_waiters[procno];
	int			permits = (queue->kind == ENTRY_PERMIT_KEY) ?
		queue->held.permits : 0;
	FenceLeaseRequest req;
	FenceToken	token;
	TimestampTz grace_end;
	TimestampTz now = FenceNow();
	int32		count;

	Assert(procno >= 0 && !slot_is_taken(freed, now));
	if (!waiter->may_hand_off || waiter->granted ||
		queue->dbid != MyDatabaseId || waiter->permits != permits ||
		in_restart_grace(&grace_end))
		return false;
	if (permits > 0 && waiter->scope == FENCE_SCOPE_DETACHED &&
		waiter_owns_permit(hash, queue, waiter, now))
		return false;
	if (!FenceCounterTryNext(&token))
		return false;
	if (request_counted(waiter->scope, waiter->lock_delay) &&
		!role_count_add(waiter->roleid, waiter->role_limit, &count))
		return false;
	if (!FenceDbPublishGrant(token))
	{
		if (request_counted(waiter->scope, waiter->lock_delay))
			role_count_sub(waiter->roleid);
		return false;
	}

	memset(&req, 0, sizeof(req));
	req.key = queue->text;
	req.keylen = queue->keylen;
	req.owner = waiter->owner;
	req.ownerlen = waiter->ownerlen;
	req.scope = (FenceLeaseScope) waiter->scope;
	req.permits = permits;
	req.ttl = waiter->ttl;
	req.lock_delay = waiter->lock_delay;
	install_grant_to(freed, hash, &req, waiter->roleid, procno, token, now,
					 false, &waiter->handed);
	if (freed != queue)
	{
		/* The key keeps its latest token and role, as permit_step's. */
		queue->token = token;
		queue->roleid = waiter->roleid;
	}
	queue->wait_head = waiter->next;
	waiter->slot = -1;
	waiter->next = -1;
	pg_write_barrier();
	waiter->granted = true;
	wake_proc(procno);
	return true;
}

/*
 * When entry "slot", taken (slot_is_taken), may next be granted: at its
 * expiry, or at the end of the lock-delay it is in.
 */
static inline TimestampTz
taken_until(FenceLeaseSlot *slot, TimestampTz now)
{
	return slot_is_live(slot, now) ? slot->expires_at : lock_delay_end(slot);
}

/*
 * Must the head of queue "queue" look at the key now?  Yes if the key (or a
 * permit of it) is free; else only if the lease clock is the real one and
 * it sleeps past the time the key (the first permit) may next be granted,
 * or without a timeout: on the virtual clock, every move of the clock
 * wakes all waiters.  Caller holds the partition lock.
 */
static bool
head_needs_wake(FenceLeaseSlot *queue, uint32 hash)
{
	TimestampTz watch_until = lease_waiters[queue->wait_head].watch_until;
	TimestampTz now = FenceNow();
	TimestampTz earliest = 0;

	if (queue->kind == ENTRY_PERMIT_KEY)
	{
		int			taken = 0;

		for (int32 *link = next_permit_link(bucket_head(hash), queue);
			 link != NULL;
			 link = next_permit_link(&lease_slots[*link].next, queue))
		{
			FenceLeaseSlot *permit = &lease_slots[*link];

			if (!slot_is_taken(permit, now))
				continue;
			if (taken++ == 0 || taken_until(permit, now) < earliest)
				earliest = taken_until(permit, now);
		}
		if (taken < queue->held.permits)
			return true;
	}
	else
	{
		if (!slot_is_taken(queue, now))
			return true;
		earliest = taken_until(queue, now);
	}
	if (FenceClockIsVirtual())
		return false;
	return watch_until == 0 || watch_until > earliest;
}

/*
 * The queue of lease or permit-key entry "queue" has a new head, or its key
 * was freed: with freed (the released entry, or a released permit of the
 * key), try to grant it to the head (hand_off); then wake the head only if
 * it must look (head_needs_wake).  True if freed was handed off.  Caller
 * holds the partition lock exclusively; never ERRORs.
 */
static bool
serve_queue(FenceLeaseSlot *queue, FenceLeaseSlot *freed)
{
	uint32		hash;
	bool		handed = false;

	if (queue->wait_head < 0)
		return false;
	hash = lease_hash(queue->dbid, queue->text, queue->keylen);
	if (freed != NULL)
		handed = hand_off(queue, freed, hash);
	if (queue->wait_head >= 0 && head_needs_wake(queue, hash))
		wake_proc(queue->wait_head);
	return handed;
}

/*
 * The caller holds live entry "slot" (a lease or a permit) in the scope it
 * asks for: the same token, never a shorter lease, and the larger
 * lock-delay.  A lease that gains its first delay counts against its role
 * from now on: STEP_ROLE_LIMIT, changing nothing, if the role holds its
 * limit (role_limit, as in acquire_step).  In another scope: a conflict.
 */
static AcquireStep
extend_held(FenceLeaseSlot *slot, const FenceLeaseRequest *req,
			TimestampTz now, int role_limit, FenceLeaseGrant *grant)
{
	if (slot->scope != req->scope)
	{
		grant->outcome = FENCE_ACQUIRE_SCOPE_CONFLICT;
		grant->held_scope = (FenceLeaseScope) slot->scope;
		return STEP_DONE;
	}
	if (!entry_counted(slot) && req->lock_delay > 0 &&
		!role_count_add(slot->roleid, role_limit, &role_limit_count))
		return STEP_ROLE_LIMIT;
	slot->expires_at = Max(slot->expires_at, lease_deadline(now, req->ttl));
	slot->lock_delay = Max(slot->lock_delay, req->lock_delay);
	count_slot(slot, -1);
	grant->outcome = FENCE_ACQUIRE_EXTENDED;
	grant->token = slot->token;
	grant->expires_at = slot->expires_at;
	return STEP_DONE;
}

/* Who holds a live entry, for fence.log_lease_waits. */
static void
note_blocker(FenceLeaseSlot *slot)
{
	if (slot->scope == FENCE_SCOPE_DETACHED)
	{
		last_blocker.kind = BLOCKER_DETACHED;
		last_blocker.ownerlen = slot->ownerlen;
		memcpy(last_blocker.owner, slot->text + slot->keylen, slot->ownerlen);
		last_blocker.owner[slot->ownerlen] = '\0';
	}
	else
	{
		last_blocker.kind = BLOCKER_SESSION;
		last_blocker.pid = GetPGProcByNumber(slot->held.procno)->pid;
	}
}

/*
 * The key (or a permit of it) is free, but others queued for entry idx
 * first: refused, and in the queue if req waits.  A lease we find expired
 * (and past its lock-delay) goes to the head of the queue at once, whether
 * or not the head's own timer has fired.
 */
static AcquireStep
behind_queue(const FenceLeaseRequest *req, uint32 hash, int32 idx)
{
	FenceLeaseSlot *slot = &lease_slots[idx];

	if (slot->kind == ENTRY_LEASE && slot->scope != FENCE_SCOPE_NONE &&
		!slot_is_taken(slot, FenceNow()))
		(void) serve_queue(slot, slot);
	if (req->wait && my_wait_slot < 0)
		enqueue_self(idx, partition_lock(hash), req);
	last_blocker.kind = BLOCKER_QUEUE;
	return STEP_REFUSED;
}

/*
 * During fence.restart_grace: queue up now, so that when the grace ends the
 * sessions that waited are served in arrival order, before any that merely
 * poll.  A key nobody holds needs an entry to hold its queue.  idx: the
 * key's lease or permit-key entry, or -1.
 */
static AcquireStep
grace_step(const FenceLeaseRequest *req, uint32 hash, int32 idx)
{
	if (req->wait && my_wait_slot < 0)
	{
		if (idx >= 0)
			become_kind(&lease_slots[idx], hash, req, FenceNow());
		else
		{
			if (!have_spares(1))
				return STEP_NEED_SLOT;
			idx = new_entry(hash, req, (req->permits > 0) ?
							ENTRY_PERMIT_KEY : ENTRY_LEASE);
		}
		enqueue_self(idx, partition_lock(hash), req);
	}
	return STEP_GRACE;
}

/*
 * The token, the role count and the publication a grant needs, in that
 * order; STEP_DONE when all are in hand and the grant may be installed.
 * reused: the entry to be taken over, or NULL.
 */
static AcquireStep
prepare_grant(const FenceLeaseRequest *req, FenceToken *token, int role_limit,
			  FenceLeaseSlot *reused, bool *same_role_counted)
{
	bool		counted = request_counted(req->scope, req->lock_delay);
	bool		count_it;

	if (*token == 0 && !FenceCounterTryNext(token))
		return STEP_NEED_TOKEN;

	/*
	 * A detached or lock-delayed lease counts against its role's limit from
	 * now on, unless it replaces an expired lease of the same role that was
	 * counted already.
	 */
	*same_role_counted = counted && reused && entry_counted(reused) &&
		reused->roleid == GetUserId();
	count_it = counted && !*same_role_counted;
	if (count_it && !role_count_add(GetUserId(), role_limit, &role_limit_count))
		return STEP_ROLE_LIMIT;
	if (!FenceDbPublishGrant(*token))
	{
		if (count_it)
			role_count_sub(GetUserId());
		return STEP_LOST_RACE;
	}
	return STEP_DONE;
}

/*
 * acquire_step() for an ordinary lease.  idx: the key's lease entry (or an
 * idle permit key, made a lease entry when it is granted), or -1.
 */
static AcquireStep
lease_step(const FenceLeaseRequest *req, uint32 hash, int32 idx,
		   FenceToken token, int role_limit, FenceLeaseGrant *grant,
		   TimestampTz *wake_at)
{
	FenceLeaseSlot *slot = (idx >= 0) ? &lease_slots[idx] : NULL;
	TimestampTz now = FenceNow();
	int32		me = FENCE_MY_PROCNO;
	bool		same_role_counted;
	AcquireStep step;

	if (slot && slot_is_live(slot, now))
	{
		if (holder_matches(slot, req))
			return extend_held(slot, req, now, role_limit, grant);
		if (req->wait && my_wait_slot < 0)
			enqueue_self(idx, partition_lock(hash), req);
		*wake_at = slot->expires_at;
		note_blocker(slot);
		return STEP_REFUSED;
	}
	if (slot && slot_in_lock_delay(slot, now))
	{
		if (req->wait && my_wait_slot < 0)
			enqueue_self(idx, partition_lock(hash), req);
		*wake_at = lock_delay_end(slot);
		last_blocker.kind = BLOCKER_LOCK_DELAY;
		return STEP_REFUSED;
	}

	/* The key is free.  Waiters ahead of us have it first. */
	if (slot && slot->wait_head >= 0 && slot->wait_head != me)
		return behind_queue(req, hash, idx);
	if (in_restart_grace(wake_at))
		return grace_step(req, hash, idx);

	/*
	 * A slot first, so that a full table wastes no token.  The fast paths
	 * take only spinlocks, so a grant usually needs this lock just once;
	 * reclaiming slots and refilling the counter happen with no lock held.
	 */
	if (slot == NULL && !have_spares(1))
		return STEP_NEED_SLOT;
	step = prepare_grant(req, &token, role_limit, slot, &same_role_counted);
	if (step != STEP_DONE)
		return step;

	if (slot == NULL)
	{
		idx = new_entry(hash, req, ENTRY_LEASE);
		slot = &lease_slots[idx];
	}
	else
		become_kind(slot, hash, req, now);
	install_grant(slot, hash, req, token, now, same_role_counted, grant);
	if (my_wait_slot == idx)
		dequeue_self(idx);		/* and wake the next in line */
	return STEP_DONE;
}

/*
 * acquire_step() for a permit.  idx: the key's permit-key entry (or an idle
 * lease, or an idle permit key with another number of permits, made this
 * kind when a permit is granted), or -1.  At most req->permits live
 * permits (a permit in its lock-delay counts as one); the queue is the
 * key's, and only its head may take a free permit.
 */
static AcquireStep
permit_step(const FenceLeaseRequest *req, uint32 hash, int32 idx,
			FenceToken token, int role_limit, FenceLeaseGrant *grant,
			TimestampTz *wake_at)
{
	FenceLeaseSlot *key = (idx >= 0) ? &lease_slots[idx] : NULL;
	FenceLeaseSlot *reused = NULL;
	FenceLeaseSlot *held = NULL;
	TimestampTz now = FenceNow();
	TimestampTz earliest = 0;
	int32		me = FENCE_MY_PROCNO;
	int			taken = 0;	/* live, or in lock-delay */
	bool		same_role_counted;
	AcquireStep step;
	int32		permit_idx;
	bool		reshape = key && (key->kind != ENTRY_PERMIT_KEY ||
								  key->held.permits != req->permits);

	/*
	 * A key to reshape is idle: it has no live permit, and its expired ones
	 * (of another number) go when it is reshaped, so none is reused.
	 */
	if (key && !reshape)
	{
		for (int32 *link = next_permit_link(bucket_head(hash), key);
			 link != NULL;
			 link = next_permit_link(&lease_slots[*link].next, key))
		{
			FenceLeaseSlot *permit = &lease_slots[*link];

			if (slot_in_lock_delay(permit, now))
			{
				/* Not free, and no longer anyone's to extend. */
				if (taken++ == 0 || lock_delay_end(permit) < earliest)
					earliest = lock_delay_end(permit);
				continue;
			}
			if (!slot_is_live(permit, now))
			{
				if (reused == NULL)
					reused = permit;
				continue;
			}
			/*
			 * A detached request may match two permits: the owner's, and
			 * this backend's own session or transaction permit.  The latter
			 * decides, whichever comes first in the chain: the backend holds
			 * the key in that scope, and asking in another is a conflict.
			 */
			if (holder_matches(permit, req) &&
				(held == NULL || permit->scope != FENCE_SCOPE_DETACHED))
				held = permit;
			if (taken++ == 0 || permit->expires_at < earliest)
				earliest = permit->expires_at;
		}
		if (held != NULL)
			return extend_held(held, req, now, role_limit, grant);
	}

	if (taken >= req->permits)
	{
		Assert(key != NULL);
		if (req->wait && my_wait_slot < 0)
			enqueue_self(idx, partition_lock(hash), req);
		*wake_at = earliest;
		last_blocker.kind = BLOCKER_PERMITS;
		return STEP_REFUSED;
	}

	/* A permit is free.  Waiters ahead of us have it first. */
	if (key && key->wait_head >= 0 && key->wait_head != me)
		return behind_queue(req, hash, idx);
	if (in_restart_grace(wake_at))
		return grace_step(req, hash, idx);

	if (!have_spares((key ? 0 : 1) + (reused ? 0 : 1)))
		return STEP_NEED_SLOT;
	step = prepare_grant(req, &token, role_limit, reused, &same_role_counted);
	if (step != STEP_DONE)
		return step;

	if (key == NULL)
	{
		idx = new_entry(hash, req, ENTRY_PERMIT_KEY);
		key = &lease_slots[idx];
	}
	else
		become_kind(key, hash, req, now);
	if (reused == NULL)
	{
		permit_idx = new_entry(hash, req, ENTRY_PERMIT);
		reused = &lease_slots[permit_idx];
	}
	install_grant(reused, hash, req, token, now, same_role_counted, grant);
	/* The key keeps its latest token and role, for fence_lease_status. */
	key->token = token;
	key->roleid = GetUserId();
	if (my_wait_slot == idx)
		dequeue_self(idx);		/* and wake the next in line */
	return STEP_DONE;
}

/*
 * One look at the key under its partition lock (held exclusively by the
 * caller): extend, refuse, install a grant, or say what is missing first.
 * Must not ERROR.  role_limit: the most detached leases the caller's role
 * may hold (0: no limit).  On STEP_REFUSED, *wake_at is the lease-clock time at
 * which the holder expires (0: wait to be woken); on STEP_GRACE, the real
 * time at which the grace period ends.
 */
static AcquireStep
acquire_step(const FenceLeaseRequest *req, uint32 hash, FenceToken token,
			 int role_limit, FenceLeaseGrant *grant, TimestampTz *wake_at)
{
	int32		idx = lookup(hash, MyDatabaseId, req->key, req->keylen);
	TimestampTz now = FenceNow();

	*wake_at = 0;
	if (idx >= 0)
	{
		FenceLeaseSlot *slot = &lease_slots[idx];

		if (kind_conflict(slot, hash, req, now, grant))
			return STEP_DONE;
	}
	if (req->permits > 0)
		return permit_step(req, hash, idx, token, role_limit, grant, wake_at);
	return lease_step(req, hash, idx, token, role_limit, grant, wake_at);
}

/*
 * The wait event a waiting fence_lease shows in pg_stat_activity: our own
 * "FenceLease" where PostgreSQL lets extensions define one (17 and later),
 * else the generic "Extension".  Registering may ERROR: call it before
 * anything needs undoing.
 */
static uint32
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
static void
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
static long
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
static bool
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

/*
 * Take the lease for this backend (session or transaction scope) or for
 * req->owner (detached scope), or extend it if the caller already holds
 * it.  With req->wait, queue up until granted, the deadline, or an error
 * (cancel, termination): the queue entry is removed on every way out.
 */
void
FenceLeaseAcquire(const FenceLeaseRequest *req, FenceLeaseGrant *grant)
{
	uint32		hash = lease_hash(MyDatabaseId, req->key, req->keylen);
	LWLock	   *lock = partition_lock(hash);
	int			role_limit = 0;

	Assert(table_may_hold(req->keylen));
	Assert(my_wait_slot < 0 && my_nspare == 0);

	/*
	 * A backend terminated in the middle of a grant (while it waits, or
	 * while it refills the counter) exits without running PG_CATCH blocks:
	 * FATAL does not unwind.  Its queue entry and reserved slots are undone
	 * by this module's own exit callback, since not every caller has
	 * session.c's (a breaker's probe does not).
	 */
	register_exit_callback();

	memset(grant, 0, sizeof(*grant));
	wait_started = 0;
	wait_logged = false;
	if (req->wait)
		(void) lease_wait_event();

	/*
	 * Claim this database's statistics slot now (sweeping dropped databases
	 * if every slot is taken), so that publishing a grant under the
	 * partition lock below cannot fail; and see that the token counter has
	 * a block ready, so that the grant need not drop the lock to wait for
	 * one.
	 */
	FenceDbClaimSlot();
	FenceCounterReserveAhead();
	note_promotion();

	/* superuser() reads the catalog: decide before any lock is taken. */
	if (request_counted(req->scope, req->lock_delay) &&
		FenceMaxLeasesPerRole() > 0 && !superuser())
		role_limit = FenceMaxLeasesPerRole();
	my_role_limit = role_limit;

	PG_TRY();
	{
		FenceToken	token = 0;
		int			lost_races = 0;
		bool		reclaimed = false;
		char	   *rolename;

		for (;;)
		{
			AcquireStep step;
			TimestampTz wake_at;

			/*
			 * Woken with a grant handed to us?  Look without the lock first:
			 * that is the common way a wait ends.
			 */
			if (take_handed_grant(grant))
				break;
			LWLockAcquire(lock, LW_EXCLUSIVE);
			if (take_handed_grant(grant))
				step = STEP_DONE;
			else
			{
				step = acquire_step(req, hash, token, role_limit, grant,
									&wake_at);
				if (my_wait_slot >= 0)
					lease_waiters[FENCE_MY_PROCNO].watch_until =
						(step == STEP_REFUSED) ? wake_at : 0;
			}
			LWLockRelease(lock);

			switch (step)
			{
				case STEP_DONE:
					break;
				case STEP_NEED_TOKEN:
					token = FenceCounterNext();
					continue;
				case STEP_NEED_SLOT:
					{
						/* Counted only once it is ours: reserve_slot() may ERROR. */
						int32		idx = reserve_slot();

						Assert(my_nspare < FENCE_MAX_SPARES);
						my_spare_slots[my_nspare++] = idx;
					}
					continue;
				case STEP_ROLE_LIMIT:

					/*
					 * Expired counted leases count until their entries are
					 * reused or reclaimed (those in their lock-delay stay):
					 * reclaim them all once, then ask again.
					 */
					if (!reclaimed)
					{
						(void) reclaim_all(InvalidOid);
						reclaimed = true;
						continue;
					}
					rolename = GetUserNameFromId(GetUserId(), false);
					ereport(ERROR,
							(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
							 errmsg("role \"%s\" holds too many detached or lock-delayed leases",
									rolename),
							 fence_max_leases_per_role >= 0 ?
							 errdetail("The role holds %d detached or lock-delayed leases; fence.max_leases_per_role is %d.",
									   (int) role_limit_count, role_limit) :
							 errdetail("The role holds %d detached or lock-delayed leases; fence.max_leases_per_role is -1, which allows %d with fence.max_leases at %d.",
									   (int) role_limit_count, role_limit,
									   fence_max_leases),
							 errhint("Release leases that are no longer needed with fence_release() (a lease with a fence.lock_delay counts until its delay has passed), or ask an administrator to raise fence.max_leases_per_role for this role.")));
					break;
				case STEP_LOST_RACE:
					if (++lost_races >= FENCE_MAX_LOST_RACES)
						ereport(ERROR,
								(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
								 errmsg("the fencing token counter is behind tokens already granted in this database"),
								 errdetail("The counter returned %lld, but a larger token was granted since the server started.",
										   (long long) token),
								 errhint("If the extension was dropped and created again, move the counter forward with fence_advance_tokens().")));
					token = 0;
					CHECK_FOR_INTERRUPTS();
					continue;
				case STEP_REFUSED:
				case STEP_GRACE:
					/* A token taken for a grant that did not happen is stale. */
					token = 0;
					if (!req->wait)
						grant->outcome = FENCE_ACQUIRE_REFUSED;
					else if (!wait_for_turn(req, step, wake_at))
					{
						cancel_wait();
						grant->outcome = FENCE_ACQUIRE_TIMED_OUT;
					}
					else
						continue;
					break;
			}
			break;
		}
	}
	PG_CATCH();
	{
		cancel_wait();
		if (wait_logged)
		{
			wait_logged = false;
			log_wait_end(req, false, false);
		}
		wait_started = 0;
		PG_RE_THROW();
	}
	PG_END_TRY();

	/* Not waiting any more on any way out; a spare slot may be left. */
	Assert(my_wait_slot < 0 || grant->outcome != FENCE_ACQUIRE_GRANTED);
	cancel_wait();
	if (wait_logged)
	{
		wait_logged = false;
		log_wait_end(req,
					 grant->outcome == FENCE_ACQUIRE_GRANTED ||
					 grant->outcome == FENCE_ACQUIRE_EXTENDED,
					 grant->outcome == FENCE_ACQUIRE_TIMED_OUT);
	}
	wait_started = 0;

	switch (grant->outcome)
	{
		case FENCE_ACQUIRE_GRANTED:
			FenceDbCount(FENCE_STAT_GRANTS);
			if (grant->takeover)
				FenceDbCount(FENCE_STAT_TAKEOVERS);
			break;
		case FENCE_ACQUIRE_EXTENDED:
			FenceDbCount(FENCE_STAT_RENEWALS);
			break;
		case FENCE_ACQUIRE_REFUSED:
		case FENCE_ACQUIRE_TIMED_OUT:
			FenceDbCount(FENCE_STAT_REFUSALS);
			break;
		case FENCE_ACQUIRE_SCOPE_CONFLICT:
		case FENCE_ACQUIRE_KIND_CONFLICT:
			break;
	}
}

/* ---------- release, renew, break, status ---------- */

/*
 * End the lease of the entry *link points at; the caller holds its
 * partition lock, "lock", exclusively.  With nobody waiting, the entry is
 * unlinked and its slot goes back on the free list at once: that keeps the
 * table's working set to the leases actually held, as in PostgreSQL's lock
 * manager, rather than every key ever taken (a table full of released
 * entries costs a cache and TLB miss per slot on every grant and reclaim).
 * An entry with waiters stays: it is granted to the head of its queue at
 * once, or stays released for the head, woken, to take it (serve_queue).
 */
static void
release_entry(int32 *link, LWLock *lock)
{
	int32		idx = *link;
	FenceLeaseSlot *slot = &lease_slots[idx];

	bump_generation(lock_partition(lock));
	entry_ends(slot);
	slot->scope = FENCE_SCOPE_NONE;
	count_slot(slot, lock_partition(lock));
	slot->held.procno = -1;
	slot->ownerlen = 0;
	if (slot->wait_head >= 0)
	{
		(void) serve_queue(slot, slot);
		return;
	}
	*link = slot->next;
	push_free_chain(idx, idx, 1);
}

/*
 * End the permit *plink points at, of the permit key "key"; the caller holds
 * the partition lock, "lock", exclusively.  The permit's slot is granted in
 * place to the head of the key's queue (true: it stays linked, with a new
 * holder); else it goes back on the free list, and the head is woken to
 * take a permit itself (serve_queue).  Call forget_idle_key() when done
 * ending permits.
 */
static bool
release_permit(int32 *plink, FenceLeaseSlot *key, LWLock *lock)
{
	int32		idx = *plink;
	FenceLeaseSlot *permit = &lease_slots[idx];

	bump_generation(lock_partition(lock));
	entry_ends(permit);
	permit->scope = FENCE_SCOPE_NONE;
	count_slot(permit, lock_partition(lock));
	if (serve_queue(key, permit))
		return true;
	*plink = permit->next;
	push_free_chain(idx, idx, 1);
	return false;
}

/*
 * A permit key's entry goes once no permit of it is left and nobody waits.
 * Caller holds the partition lock exclusively.
 */
static void
forget_idle_key(uint32 hash, FenceLeaseSlot *key)
{
	int32	   *link;
	int32		idx;

	if (key->wait_head >= 0 ||
		next_permit_link(bucket_head(hash), key) != NULL)
		return;
	/* Ending permits may have changed the link that points at the key. */
	link = lookup_link(hash, key->dbid, key->text, key->keylen);
	Assert(link != NULL && &lease_slots[*link] == key);
	idx = *link;
	*link = key->next;
	push_free_chain(idx, idx, 1);
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
static FenceLeaseSlot *
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
 * Session and transaction leases may be released and renewed only by the
 * backend that holds them; detached ones by a session of the role that
 * took them (any connection: that is what detached means) that has the
 * token.  Another role, even a superuser, must SET ROLE to it, or break
 * the lease with fence_break().  The same goes for permits.
 */
static inline bool
may_touch(FenceLeaseSlot *slot)
{
	if (slot->scope == FENCE_SCOPE_DETACHED)
		return slot->roleid == GetUserId();
	return slot->held.procno == FENCE_MY_PROCNO;
}

/*
 * Compare-and-delete: free the lease (or the permit) only if token is its
 * current token (live or expired) and the caller may release it.  Never
 * ERRORs, so transaction and exit clean-up can use it.  Counts successful
 * releases; fence_release() counts the refused ones (implicit releases at
 * the end of a scope are not requests that can be refused).
 */
bool
FenceLeaseRelease(const char *key, int keylen, FenceToken token)
{
	return release_token(key, keylen, token, true);
}

/*
 * The same without the holder check, for a caller that has made its own
 * (breaker.c: whoever reports with the probe's token ends the probe).
 */
bool
FenceLeaseReleaseToken(const char *key, int keylen, FenceToken token)
{
	return release_token(key, keylen, token, false);
}

/*
 * The end of a session that holds the lease (or permit) with token: release
 * it, unless it was granted with a lock-delay.  Then it is left expired as
 * of now, its holder forgotten, so that its key stays ungranted for the
 * delay (slot_in_lock_delay) and fence_lease_status() says "expired", as
 * for a holder that stopped renewing.  Waiters are woken to sleep until
 * the delay's end instead.  Never ERRORs: exit clean-up uses it.
 */
bool
FenceLeaseAbandon(const char *key, int keylen, FenceToken token)
{
	LWLock	   *lock;
	uint32		hash;
	int32	   *link;
	FenceLeaseSlot *slot;
	TimestampTz now;
	bool		delayed = false;

	if (!table_may_hold(keylen))
		return false;
	slot = lock_token_entry(key, keylen, token, &lock, &hash, &link, NULL);
	now = FenceNow();
	if (slot && slot->lock_delay > 0 && slot->scope != FENCE_SCOPE_DETACHED &&
		slot_is_taken(slot, now) && may_touch(slot))
	{
		FenceLeaseSlot *queue = &lease_slots[*link];

		/* Expired already, it is in its delay: leave it there. */
		if (slot_is_live(slot, now))
		{
			bump_generation(lock_partition(lock));
			slot->expires_at = now;
			count_slot(slot, lock_partition(lock));
			if (queue->wait_head >= 0)
				wake_proc(queue->wait_head);
		}
		slot->held.procno = -1;
		delayed = true;
	}
	LWLockRelease(lock);

	return delayed || release_token(key, keylen, token, true);
}

/* FenceLeaseRelease(); check_holder false skips may_touch(). */
static bool
release_token(const char *key, int keylen, FenceToken token, bool check_holder)
{
	LWLock	   *lock;
	uint32		hash;
	int32	   *link;
	int32	   *held;
	FenceLeaseSlot *slot;
	bool		released = false;

	if (!table_may_hold(keylen))
		return false;
	slot = lock_token_entry(key, keylen, token, &lock, &hash, &link, &held);
	if (slot && (!check_holder || may_touch(slot)))
	{
		if (held == link)
			release_entry(link, lock);
		else
		{
			FenceLeaseSlot *permit_key = &lease_slots[*link];

			(void) release_permit(held, permit_key, lock);
			forget_idle_key(hash, permit_key);
		}
		released = true;
	}
	LWLockRelease(lock);

	if (released)
		FenceDbCount(FENCE_STAT_RELEASES);
	return released;
}

/* expires_at := now + ttl, only if token is current and live. */
bool
FenceLeaseRenew(const char *key, int keylen, FenceToken token, int64 ttl)
{
	LWLock	   *lock;
	uint32		hash;
	int32	   *link;
	FenceLeaseSlot *slot;
	TimestampTz now;
	bool		renewed = false;

	Assert(table_may_hold(keylen));
	slot = lock_token_entry(key, keylen, token, &lock, &hash, &link, NULL);
	now = FenceNow();
	if (slot && slot_is_live(slot, now) && may_touch(slot))
	{
		TimestampTz expires_at = lease_deadline(now, ttl);
		FenceLeaseSlot *queue = &lease_slots[*link];

		/*
		 * The new expiry may be earlier.  The head of the queue sleeps until
		 * the old one (or a permit's that expires sooner): wake it to watch
		 * the new one instead.
		 */
		bump_generation(lock_partition(lock));
		if (expires_at < slot->expires_at && queue->wait_head >= 0)
			wake_proc(queue->wait_head);
		slot->expires_at = expires_at;
		count_slot(slot, lock_partition(lock));
		renewed = true;
	}
	LWLockRelease(lock);

	FenceDbCount(renewed ? FENCE_STAT_RENEWALS : FENCE_STAT_RENEWALS_FAILED);
	return renewed;
}

/*
 * Admin: free the lease whoever holds it; *token is the token it ended.
 * For a lease with permits, every permit, and *token is the largest.
 */
bool
FenceLeaseBreak(const char *key, int keylen, FenceToken *token)
{
	LWLock	   *lock;
	uint32		hash;
	int32	   *link;
	FenceLeaseSlot *slot;
	bool		broken = false;

	Assert(lease_shared != NULL);
	link = lock_entry(MyDatabaseId, key, keylen, LW_EXCLUSIVE, &lock, &hash);
	slot = link ? &lease_slots[*link] : NULL;
	if (slot && slot->kind == ENTRY_PERMIT_KEY)
	{
		int32	   *plink;

		/* A permit handed to a waiter in place is passed over. */
		*token = 0;
		plink = next_permit_link(bucket_head(hash), slot);
		while (plink != NULL)
		{
			FenceLeaseSlot *permit = &lease_slots[*plink];

			*token = Max(*token, permit->token);
			if (release_permit(plink, slot, lock))
				plink = next_permit_link(&permit->next, slot);
			else
				plink = next_permit_link(plink, slot);
			broken = true;
		}
		forget_idle_key(hash, slot);
	}
	else if (slot && slot->scope != FENCE_SCOPE_NONE)
	{
		*token = slot->token;
		release_entry(link, lock);
		broken = true;
	}
	LWLockRelease(lock);

	if (broken)
		FenceDbCount(FENCE_STAT_RELEASES);
	return broken;
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
 * Wait until the lease (key, token) of database dbid is no longer held, and
 * return its status then: expired, superseded or released (broken, or
 * never this token).  Returns at once if it is not held now.  With a
 * deadline (real time, 0: none), *timed_out is set and FENCE_LEASE_HELD
 * returned if the lease is still held when it passes.
 *
 * The sleep ends when the lease's partition bumps its generation (a
 * release, break, takeover, renewal or reclaim in it), when the virtual
 * clock moves, at the lease's expiry in real time, or at the deadline; it
 * then looks again.  No lock held across the sleep; may ERROR (an
 * interrupt: the count of sleepers is put right on the way out, and at
 * exit after a FATAL).
 */
FenceLeaseStatus
FenceLeaseWaitEnd(Oid dbid, const char *key, int keylen, FenceToken token,
				  TimestampTz deadline, bool *timed_out)
{
	uint32		partition;
	FenceLeaseWatch *watch;
	volatile FenceLeaseStatus status = FENCE_LEASE_RELEASED;
	uint32		sleepers;

	*timed_out = false;
	if (!table_may_hold(keylen))
		return FENCE_LEASE_RELEASED;
	partition = lease_hash(dbid, key, keylen) % FENCE_LEASE_PARTITIONS;
	watch = &lease_shared->watches[partition];

	/*
	 * A backend terminated while it sleeps exits without unwinding (FATAL),
	 * so the count is also put right by this module's exit callback,
	 * registered first (registering may ERROR).
	 */
	register_exit_callback();
	Assert(my_watch_partition < 0);
	sleepers = pg_atomic_add_fetch_u32(&watch->w.sleepers, 1);
	my_watch_partition = partition;
	PG_TRY();
	{
		elog(DEBUG2, "fence: %u sessions now wait for a lease of partition %u to end",
			 sleepers, partition);
		ConditionVariablePrepareToSleep(&watch->w.cv);
		for (;;)
		{
			FenceLeaseStamp stamp;
			long		timeout_ms = -1;

			status = FenceLeaseGetStatus(dbid, key, keylen, token, &stamp);
			if (status != FENCE_LEASE_HELD)
				break;
			if (!FenceClockIsVirtual())
				timeout_ms = ms_until(stamp.expires_at, FenceNow()) + 1;
			if (deadline != 0)
			{
				TimestampTz now = GetCurrentTimestamp();
				long		left;

				if (now >= deadline)
				{
					*timed_out = true;
					break;
				}
				left = ms_until(deadline, now);
				if (timeout_ms < 0 || left < timeout_ms)
					timeout_ms = left;
			}
			(void) ConditionVariableTimedSleep(&watch->w.cv, timeout_ms,
											   lease_wait_event());
		}
		ConditionVariableCancelSleep();
	}
	PG_FINALLY();
	{
		stop_watching();
	}
	PG_END_TRY();
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

/*
 * The lease clock moved: wake every waiter so that it re-reads it.  Taking
 * and dropping each partition lock first means that a waiter is either
 * already flagged in lease_waiters (and gets its latch set), or decides
 * after this point and so sees the new clock.
 */
void
FenceLeaseWakeWaiters(void)
{
	if (lease_shared == NULL)
		return;
	for (int i = 0; i < FENCE_LEASE_PARTITIONS; i++)
	{
		LWLockAcquire(&lease_shared->locks[i].lock, LW_SHARED);
		LWLockRelease(&lease_shared->locks[i].lock);
	}
	for (int i = 0; i < lease_shared->nprocs; i++)
	{
		if (lease_waiters[i].slot >= 0)
			wake_proc(i);
	}
	/* The clock moved: a lease may have expired on it. */
	for (int i = 0; i < FENCE_LEASE_PARTITIONS; i++)
	{
		if (pg_atomic_read_u32(&lease_shared->watches[i].w.sleepers) > 0)
			ConditionVariableBroadcast(&lease_shared->watches[i].w.cv);
	}
}

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
