/*-------------------------------------------------------------------------
 *
 * lease_internal.h
 *		What the files of the lease table share, and nothing else includes:
 *		the slot, waiter and shared-area layouts, the predicates on a slot,
 *		the steps of a grant, and each file's functions for the others.
 *
 * The lease table is one module in fence.h's list, split into files by
 * concern.  They are listed here top to bottom; a file calls only files
 * below it (test/t/051_layering.pl checks this list as it checks fence.h's):
 *
 *	lease_views.c	the rows of fence_leases, fence_lease_waiters and
 *					fence_blocking_pids()
 *	lease_grant.c	FenceLeaseAcquire: one look at a key under its partition
 *					lock, and the loop that gets what that look lacked
 *	lease_watch.c	waiting for a lease to end (FenceLeaseWaitEnd)
 *	lease_wait.c	this backend's own wait: sleeping for its turn, logging
 *					it, leaving the queue on error and at exit
 *	lease_release.c	release, abandon, renew and break
 *	lease_queue.c	the FIFO queue of each key, and the hand-off of a freed
 *					key to its head
 *	lease_permit.c	the entries of a lease with permits (a bulkhead)
 *	lease_drop.c	the leases of dropped databases
 *	lease_table.c	shared memory, partitions, lookup, the free list,
 *					reclaim, installing a grant, status
 *	lease_roles.c	per-role counts of leases that outlive their sessions
 *
 * Locks: fence.h lists every lock of fence in the order they may be taken;
 * each file's opening comment says which it takes and which it expects
 * held.  lease_table.c says what each lock of the table guards, and the
 * table's invariants.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LEASE_INTERNAL_H
#define LEASE_INTERNAL_H

#include "common/hashfn.h"
#include "common/int.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "fence.h"
#include "lease_counts.h"		/* FENCE_LEASE_PARTITIONS */

/*
 * Every function and variable below is the lease table's own: keep them
 * out of the library's exported symbols, so that a namesake elsewhere in
 * the server can never stand in for one.
 */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(hidden)
#endif

#define FENCE_LEASE_TRANCHE		"fence_leases"

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

/* Who the last STEP_REFUSED waited for, for fence.log_lease_waits. */
typedef enum BlockerKind
{
	BLOCKER_SESSION,			/* a session or transaction holder: pid */
	BLOCKER_DETACHED,			/* a detached holder: owner */
	BLOCKER_QUEUE,				/* nobody holds it; others are queued first */
	BLOCKER_PERMITS,			/* every permit is held (or in lock-delay) */
	BLOCKER_LOCK_DELAY			/* it ended unreleased; in its lock-delay */
} BlockerKind;

typedef struct LeaseBlocker
{
	BlockerKind kind;
	int			pid;
	int			ownerlen;
	char		owner[FENCE_MAX_OWNER_LEN + 1];
} LeaseBlocker;

/* ---------- a key's hash, and what a slot says ---------- */

static inline uint32
lease_hash(Oid dbid, const char *key, int keylen)
{
	return hash_combine(hash_bytes_uint32((uint32) dbid),
						hash_bytes((const unsigned char *) key, keylen));
}

static inline bool
entry_has_key(FenceLeaseSlot *slot, Oid dbid, const char *key, int keylen)
{
	return slot->keylen == keylen && slot->dbid == dbid &&
		memcmp(slot->text, key, keylen) == 0;
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

static inline void
wake_proc(int32 procno)
{
	SetLatch(&GetPGProcByNumber(procno)->procLatch);
}

/*
 * Does the caller already hold this held entry?  A detached lease is held
 * by its owner name within the role that took it: the same name used by
 * another role is another owner.  A session or transaction lease is held
 * by its backend, whatever scope that backend now asks for: asking for it
 * in another scope (detached included) is a conflict, not a wait on
 * oneself.
 */
static inline bool
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

/* ---------- what each file offers the files above it ---------- */

/* lease_wait.c */
extern LeaseBlocker last_blocker;
extern TimestampTz wait_started;
extern bool wait_logged;
extern void cancel_wait(void);
extern void register_exit_callback(void);
extern uint32 lease_wait_event(void);
extern void log_wait_end(const FenceLeaseRequest *req, bool granted,
						 bool timed_out);
extern long ms_until(TimestampTz until, TimestampTz now);
extern bool wait_for_turn(const FenceLeaseRequest *req, AcquireStep step,
						  TimestampTz wake_at);

/* lease_release.c */
extern bool release_token(const char *key, int keylen, FenceToken token,
						  bool check_holder);

/* lease_queue.c */
extern int32 my_wait_slot;
extern LWLock *my_wait_lock;
extern char my_wait_key[FENCE_MAX_KEY_LEN];
extern int	my_wait_keylen;
extern int32 my_role_limit;
extern void enqueue_self(int32 idx, LWLock *lock,
						 const FenceLeaseRequest *req);
extern int count_waiters(FenceLeaseSlot *slot);
extern void dequeue_self(int32 idx);
extern bool take_handed_grant(FenceLeaseGrant *grant);
extern bool serve_queue(FenceLeaseSlot *queue, FenceLeaseSlot *freed);

/* lease_permit.c */
extern bool kind_conflict(FenceLeaseSlot *slot, uint32 hash,
						  const FenceLeaseRequest *req, TimestampTz now,
						  FenceLeaseGrant *grant);
extern void become_kind(FenceLeaseSlot *slot, uint32 hash,
						const FenceLeaseRequest *req, TimestampTz now);
extern bool waiter_owns_permit(uint32 hash, FenceLeaseSlot *key,
							   FenceWaiter *waiter, TimestampTz now);
extern int	scan_permits(uint32 hash, FenceLeaseSlot *key,
						 const FenceLeaseRequest *req, TimestampTz now,
						 FenceLeaseSlot **reused, FenceLeaseSlot **held,
						 TimestampTz *earliest);

/* lease_table.c */
extern FenceLeaseShared *lease_shared;
extern int32 *lease_buckets;
extern FenceLeaseSlot *lease_slots;
extern FenceWaiter *lease_waiters;
#define FENCE_MAX_SPARES 2		/* a permit may need a slot for itself and
								 * one for its key */
extern int32 my_spare_slots[FENCE_MAX_SPARES];
extern int	my_nspare;
extern bool table_may_hold(int keylen);
extern LWLock *partition_lock(uint32 hash);
extern void bump_generation(uint32 partition);
extern uint32 lock_partition(LWLock *lock);
extern int32 *bucket_head(uint32 hash);
extern int32 *lookup_link(uint32 hash, Oid dbid, const char *key, int keylen);
extern int32 *next_permit_link(int32 *link, FenceLeaseSlot *key);
extern int32 lookup(uint32 hash, Oid dbid, const char *key, int keylen);
extern int32 *lock_entry(Oid dbid, const char *key, int keylen,
						 LWLockMode mode, LWLock **lock, uint32 *hash);
extern void entry_ends(FenceLeaseSlot *slot);
extern void count_slot(FenceLeaseSlot *slot, int partition);
extern void push_free_chain(int32 first, int32 last, int count);
extern int32 pop_free(void);
extern bool reclaim_some(void);
extern int reclaim_all(Oid dbid);
extern bool have_spares(int n);
extern void release_spare_slots(void);
extern uint32 start_watching(uint32 partition);
extern void stop_watching(void);
extern int32 new_entry(uint32 hash, const FenceLeaseRequest *req,
					   EntryKind kind);
extern bool in_restart_grace(TimestampTz *until);
extern void note_promotion(void);
extern void install_grant(FenceLeaseSlot *slot, uint32 hash,
						  const FenceLeaseRequest *req, FenceToken token,
						  TimestampTz now, bool same_role_counted,
						  FenceLeaseGrant *grant);
extern void install_grant_to(FenceLeaseSlot *slot, uint32 hash,
							 const FenceLeaseRequest *req, Oid roleid,
							 int32 procno, FenceToken token, TimestampTz now,
							 bool same_role_counted, FenceLeaseGrant *grant);
extern FenceLeaseSlot *lock_token_entry(const char *key, int keylen,
										FenceToken token, LWLock **lock,
										uint32 *hash, int32 **link,
										int32 **held);

/* lease_roles.c */
extern void FenceLeaseRolesShmemRequest(void);
extern Size FenceLeaseRolesShmemSize(void);
extern void FenceLeaseRolesShmemInit(void);
extern bool role_count_add(Oid roleid, int limit, int32 *count);
extern void role_count_sub(Oid roleid);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif

#endif							/* LEASE_INTERNAL_H */
