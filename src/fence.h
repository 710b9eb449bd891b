/*-------------------------------------------------------------------------
 *
 * fence.h
 *		The header every module includes: the types, limits and SQLSTATEs
 *		they share, and what each module offers the modules above it.  It
 *		calls nothing; the start-up wiring is init.c's.
 *
 * Modules, top to bottom (a module calls only modules below it):
 *
 *	init.c			_PG_init and the shared-memory hooks; wires the rest
 *	protect.c		fence_protect(), fence_unprotect(): the trigger made and dropped
 *	enforce.c		the fence_enforce() trigger: the rule for each row, moved rows
 *	enforce_commit.c	the trigger's lease checks: strict (write, COMMIT), superseded
 *	enforce_cache.c	the trigger's arguments, checked, parsed and cached
 *	breaker_sql.c	the circuit breakers' SQL functions and view
 *	breaker_access.c	who may use and manage a breaker
 *	breaker_args.c	the breaker functions' arguments, checked
 *	breaker_state.c	a breaker's state machine; a probe is a lease (a permit)
 *	breaker.c		the shared table of circuit breakers
 *	lease_watch_many.c	fence_wait_leases_end(): one wait on several leases
 *	lease_sql.c		SQL-callable lease functions, views and clock controls
 *	citus.c			Citus: the token in effect carried to the worker nodes
 *	session.c		what this backend holds, the token in effect, clean-up
 *	lease_views.c	the lease table's views: fence_leases, its waiters, blockers
 *	lease_grant.c	granting a lease (FenceLeaseAcquire)
 *	lease_watch.c	waiting for a lease to end
 *	lease_wait.c	a backend's own wait in a queue; its clean-up on error, exit
 *	lease_release.c	release, abandon, renew, break
 *	lease_queue.c	the lease table's FIFO queues; the hand-off to their heads
 *	lease_permit.c	leases with permits (bulkheads)
 *	lease_drop.c	the leases of dropped databases
 *	lease_table.c	the shared-memory lease table: slots, partitions, status
 *	lease_roles.c	per-role counts of leases that outlive their sessions
 *	lease_counts.c	counts of the leases held, kept as the lease table changes
 *	counter.c		the durable per-database token counter
 *	watch_any.c		the wake-up of the sessions waiting on several leases
 *	clock.c			the lease clock: real time, or the virtual test clock
 *	dbstate.c		per-database shared state: slots, statistics, high-water mark
 *	token.c			the fence_token type
 *	guc.c			the fence.* settings
 *	extension.c		whether the library was preloaded; the extension's schema
 *
 * Locks, in the order they may be taken: a lock further down the list may be
 * taken while one above it is held, never the other way round.  The module
 * that owns a lock says what it guards.
 *
 *	1. heavyweight locks: the token counter's sequence (counter.c, while it
 *	   reserves one of the last blocks, and in fence_advance_tokens), a
 *	   database object (lease_drop.c's sweep of dropped databases, never
 *	   waited for).  Never taken with an LWLock or a spinlock held.
 *	2. "fence_breakers" (breaker.c; the breaker_*.c files take it).  Taken
 *	   with no other lock of fence held, and nothing is taken while it is
 *	   held: a breaker's probe is decided under it, taken as a lease with
 *	   it released, and recorded under it again.
 *	3. "fence_databases" (dbstate.c), to claim or free a database's slot.
 *	   Taken with no partition lock held (a grant claims its slot before it
 *	   locks a partition); nothing is taken while it is held.
 *	4. one partition lock, "fence_leases" (lease_table.c; every lease_*.c
 *	   file but lease_sql.c takes it; it guards lease_counts.c's counts of
 *	   the partition too); never two at once.  Held only over
 *	   work that cannot wait or ERROR: never across a latch wait, palloc,
 *	   the counter's refill (WAL flush, synchronous replication) or an
 *	   ereport.
 *	5. "fence_lease_roles" (lease_roles.c), only inside a partition lock.
 *	6. spinlocks, each held for a few instructions and never two at once:
 *	   the lease table's free list, a database's token block (counter.c),
 *	   the virtual clock (clock.c), and the mutex of a partition's condition
 *	   variable or of watch_any.c's (PostgreSQL's), which a broadcast to the
 *	   sessions waiting for a lease to end takes, also under a partition
 *	   lock.
 *
 * PostgreSQL's SyncRepLock is read (shared, briefly) by the counter's refill,
 * which runs with none of the above held.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FENCE_H
#define FENCE_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "storage/spin.h"

/*
 * SQLSTATEs of our own.  Class "LF" (lease/fence) is not used by
 * PostgreSQL.
 */
#define ERRCODE_FENCE_STALE_TOKEN		MAKE_SQLSTATE('L','F','0','0','1')
#define ERRCODE_FENCE_LEASE_NOT_HELD	MAKE_SQLSTATE('L','F','0','0','2')
#define ERRCODE_FENCE_TOKEN_REQUIRED	MAKE_SQLSTATE('L','F','0','0','3')

/* Lease keys are 1 to this many bytes of text. */
#define FENCE_MAX_KEY_LEN		200
/* A detached lease's owner name is 1 to this many bytes. */
#define FENCE_MAX_OWNER_LEN		48
/* A lease with permits has 1 to this many (each grant walks them all). */
#define FENCE_MAX_PERMITS		1000
/* fence_wait_leases_end watches 1 to this many leases at once. */
#define FENCE_MAX_WATCHED_LEASES	10000
/* A circuit breaker's name is 1 to this many bytes. */
#define FENCE_MAX_BREAKER_NAME	64
/*
 * The probe lease of breaker <name> has the key "breaker:<name>".  The
 * prefix is reserved: the SQL lease functions refuse keys that begin with
 * it (lease_sql.c), and only breaker_sql.c takes and ends them.
 */
#define FENCE_BREAKER_KEY_PREFIX		"breaker:"
#define FENCE_BREAKER_KEY_PREFIX_LEN	(sizeof(FENCE_BREAKER_KEY_PREFIX) - 1)

/*
 * A fencing token is a non-negative int64; 0 means "never fenced".  It is
 * stored as an int8-sized pass-by-value datum.
 */
typedef int64 FenceToken;

#define DatumGetFenceToken(X)		((FenceToken) DatumGetInt64(X))
#define FenceTokenGetDatum(X)		Int64GetDatum((int64) (X))
#define PG_GETARG_FENCE_TOKEN(n)	DatumGetFenceToken(PG_GETARG_DATUM(n))
#define PG_RETURN_FENCE_TOKEN(x)	return FenceTokenGetDatum(x)

/* extension.c */
extern bool fence_preloaded;
extern void FenceRequirePreload(void);
extern Oid	FenceExtensionSchema(void);

/*
 * The token in effect that a Citus coordinator carried to this session (see
 * guc.c's fence.carried_tokens): a parsed list of items.  kind is 'U' (the
 * latest fence_use_token), 'u' (the latest without a lease name), 'k' (the
 * latest with lease name key) or 'l' (a lease the coordinator's session
 * remembers).
 */
typedef struct FenceCarriedItem
{
	char		kind;
	FenceToken	token;
	int			keylen;
	const char *key;			/* 'k' and 'l'; not NUL-ended */
} FenceCarriedItem;

typedef struct FenceCarried
{
	int			n;
	FenceCarriedItem items[FLEXIBLE_ARRAY_MEMBER];
} FenceCarried;

/* guc.c */
extern int	fence_max_leases;
extern int	fence_max_ttl_s;
extern bool fence_test_clock;
extern int	fence_restart_grace_ms;
extern int	fence_lock_delay_ms;
extern int	fence_max_lock_delay_ms;
extern int	fence_max_databases;
extern int	fence_max_leases_per_role;
extern bool fence_log_lease_waits;
extern bool fence_external_tokens;
extern int	fence_max_breakers;
extern char *fence_carried_tokens;
extern const FenceCarried *FenceCarriedInEffect(void);
extern void FenceGucInit(void);
extern int	FenceMaxLeasesPerRole(void);
extern void FenceCarriedAppend(StringInfo buf, char kind, FenceToken token,
							   const char *key, int keylen);

/* token.c */
extern Oid	FenceTokenTypeOid(void);
extern FenceToken FenceTokenFromInt64(int64 value);

/* clock.c */
extern Size FenceClockShmemSize(void);
extern void FenceClockShmemInit(void);
extern TimestampTz FenceNow(void);
extern bool FenceClockIsVirtual(void);
extern void FenceClockRequireTestMode(void);
extern TimestampTz FenceClockSet(TimestampTz when);
extern void FenceClockClear(void);
extern TimestampTz FenceClockAdvance(int64 usecs);

/* watch_any.c */
extern Size FenceWatchAnyShmemSize(void);
extern void FenceWatchAnyShmemInit(void);
extern void FenceWatchAnyNotify(void);
extern void FenceWatchAnyBegin(void);
extern void FenceWatchAnySleep(long timeout_ms, uint32 wait_event_info);
extern void FenceWatchAnyEnd(void);

/* dbstate.c */
typedef enum FenceStat
{
	FENCE_STAT_GRANTS,
	FENCE_STAT_REFUSALS,
	FENCE_STAT_TAKEOVERS,
	FENCE_STAT_RELEASES,
	FENCE_STAT_RELEASES_REFUSED,
	FENCE_STAT_RENEWALS,
	FENCE_STAT_RENEWALS_FAILED,
	FENCE_STAT_WRITES_ACCEPTED,
	FENCE_STAT_WRITES_REJECTED,
	FENCE_STAT_WRITES_SKIPPED,
	FENCE_STAT_COMMITS_ABORTED,
	FENCE_STAT_REJECTED_STALE,	/* of WRITES_REJECTED: LF001 */
	FENCE_STAT_REJECTED_NOT_HELD,	/* LF002 */
	FENCE_STAT_REJECTED_NO_TOKEN,	/* LF003 */
	FENCE_NUM_STATS
} FenceStat;

/*
 * The durable counter's block of reserved tokens in one database: counter.c's
 * (it initializes and uses it), kept in dbstate.c's per-database slot.  Tokens
 * up to "last" are durable; those above "issued" are not handed out yet.
 */
typedef struct FenceCounterBlock
{
	slock_t		mutex;
	Oid			relid;			/* the counter sequence the block came from */
	bool		reserving;		/* a backend is reserving the spare block */
	FenceToken	issued;			/* the last token handed out or skipped */
	FenceToken	last;			/* the last token of the block */
	FenceToken	spare_first;	/* the next durable block, reserved ahead, */
	FenceToken	spare_last;		/* or spare_last = 0 */
} FenceCounterBlock;

extern void FenceDbShmemRequest(void);
extern Size FenceDbShmemSize(void);
/* counter.c's FenceCounterBlockInit; reuse: a slot given to another database */
typedef void (*FenceCounterBlockInitFn) (FenceCounterBlock *block, bool reuse);
extern void FenceDbShmemInit(FenceCounterBlockInitFn init_block);
extern void FenceDbCount(FenceStat which);
extern void FenceDbAdd(FenceStat which, uint64 n);
extern bool FenceDbPublishGrant(FenceToken token);
extern FenceCounterBlock *FenceDbCounterBlock(bool missing_ok);
extern void FenceDbClaimSlot(void);
extern int	FenceDbDatabases(Oid **dbids);
extern void FenceDbForgetDatabase(Oid dbid);
extern int	FenceDbSlotOf(Oid dbid);
extern Oid	FenceDbSlotDatabase(int index);

/*
 * Per-database state that a module above keeps in shared memory of its own
 * (breaker.c's breakers), so that it goes with a dropped database's slot:
 * the databases it holds state of, into a palloc'd array, and forgetting
 * one database's.  init.c hands breaker.c's functions over.
 */
typedef int (*FenceDatabasesFn) (Oid **dbids);
typedef int (*FenceForgetDatabaseFn) (Oid dbid);
extern void FenceDbShareDatabases(FenceDatabasesFn databases,
									 FenceForgetDatabaseFn forget);

/*
 * The lease table's sweep of dropped databases (it frees their leases, then
 * their slots through FenceDbForgetDatabase), which claiming a slot runs
 * when every slot is taken; init.c hands it over.
 */
typedef int (*FenceSweepFn) (void);
extern void FenceDbSetSweep(FenceSweepFn sweep);

/* counter.c */
extern void FenceCounterBlockInit(FenceCounterBlock *block, bool reuse);
extern FenceToken FenceCounterNext(void);
extern bool FenceCounterTryNext(FenceToken *token);
extern void FenceCounterReserveAhead(void);
extern FenceToken FenceCounterAdvance(FenceToken at_least);
extern void FenceCounterRequireIssued(FenceToken token);

/* The lease table: lease_table.c and the files lease_internal.h lists */
typedef enum FenceLeaseStatus
{
	FENCE_LEASE_HELD,			/* current token, live */
	FENCE_LEASE_EXPIRED,		/* current token, past its expiry */
	FENCE_LEASE_SUPERSEDED,		/* a newer token was granted */
	FENCE_LEASE_RELEASED		/* released, broken, or unknown to the table */
} FenceLeaseStatus;

/* Who holds a lease, and so when it ends. */
typedef enum FenceLeaseScope
{
	FENCE_SCOPE_NONE = 0,		/* not held (a released entry) */
	FENCE_SCOPE_SESSION,		/* this backend, until release or exit */
	FENCE_SCOPE_XACT,			/* this backend, until its transaction ends */
	FENCE_SCOPE_DETACHED		/* an owner name, until release or expiry */
} FenceLeaseScope;

/* What the caller of FenceLeaseAcquire asks for. */
typedef struct FenceLeaseRequest
{
	const char *key;			/* 1..FENCE_MAX_KEY_LEN bytes, not NUL-ended */
	int			keylen;
	const char *owner;			/* detached scope only; else NULL */
	int			ownerlen;
	FenceLeaseScope scope;
	int			permits;		/* 0: an ordinary lease; else a permit of a
								 * key with this many (1..FENCE_MAX_PERMITS) */
	int64		ttl;			/* lease-clock microseconds, > 0 */
	int64		lock_delay;		/* lease-clock microseconds the key stays
								 * ungranted after this lease ends without
								 * a release (fence.lock_delay); >= 0 */
	bool		wait;			/* queue up until granted (or the deadline) */
	bool		has_deadline;	/* wait: give up at deadline (real time) */
	TimestampTz deadline;
} FenceLeaseRequest;

typedef enum FenceAcquireOutcome
{
	FENCE_ACQUIRE_GRANTED,		/* a new token */
	FENCE_ACQUIRE_EXTENDED,		/* the caller held it: same token, later expiry */
	FENCE_ACQUIRE_REFUSED,		/* another live holder, or waiters ahead */
	FENCE_ACQUIRE_TIMED_OUT,	/* waited until the deadline */
	FENCE_ACQUIRE_SCOPE_CONFLICT,	/* this backend holds it in another scope */
	FENCE_ACQUIRE_KIND_CONFLICT /* held or awaited with other permits */
} FenceAcquireOutcome;

typedef struct FenceLeaseGrant
{
	FenceAcquireOutcome outcome;
	FenceToken	token;			/* GRANTED, EXTENDED */
	bool		takeover;		/* GRANTED over an expired holder */
	TimestampTz expires_at;		/* GRANTED, EXTENDED */
	FenceLeaseScope held_scope; /* SCOPE_CONFLICT: the scope already held */
	int			held_permits;	/* KIND_CONFLICT: the key's permits (0: it
								 * is an ordinary lease) */
} FenceLeaseGrant;

/* One row of the fence_leases view. */
typedef struct FenceLeaseInfo
{
	Oid			dbid;
	FenceLeaseScope scope;
	FenceToken	token;
	TimestampTz granted_at;
	TimestampTz expires_at;
	Oid			roleid;			/* who took it */
	int			pid;			/* session and transaction scope; else 0 */
	int			nwaiters;		/* the key's queue */
	int			permits;		/* a permit: the key's permits; else 0 */
	int			keylen;
	int			ownerlen;
	char		key[FENCE_MAX_KEY_LEN];
	char		owner[FENCE_MAX_OWNER_LEN];
} FenceLeaseInfo;

/* One row of the fence_lease_waiters view. */
typedef struct FenceWaiterInfo
{
	Oid			dbid;
	int			keylen;
	char		key[FENCE_MAX_KEY_LEN];
	int			pid;
	Oid			roleid;			/* the waiting session's role */
	FenceLeaseScope scope;		/* asked for */
	TimestampTz since;			/* real time */
	TimestampTz deadline;		/* real time; 0: none */
	int			position;		/* 1: first in line */
} FenceWaiterInfo;

/* One row of fence_blocking_pids(): the holder, or a waiter queued ahead. */
typedef struct FenceBlockerInfo
{
	bool		holder;
	int			pid;			/* 0: a detached holder */
	int			position;		/* waiter ahead: its place in the queue */
	Oid			roleid;
	int			ownerlen;		/* detached holder only */
	char		owner[FENCE_MAX_OWNER_LEN];
} FenceBlockerInfo;

/*
 * What a held lease looked like when it was checked: enough to tell later,
 * without the partition lock, that nothing can have ended it since.
 */
typedef struct FenceLeaseStamp
{
	int			partition;
	uint64		generation;		/* the partition's, when checked */
	TimestampTz expires_at;		/* lease clock */
} FenceLeaseStamp;

/* lease_table.c */
extern void FenceLeaseShmemRequest(void);
extern Size FenceLeaseShmemSize(void);
extern void FenceLeaseShmemInit(void);
extern FenceLeaseStatus FenceLeaseGetStatus(Oid dbid, const char *key,
											int keylen, FenceToken token,
											FenceLeaseStamp *stamp);
extern FenceLeaseStatus FenceLeaseGetStatusRole(Oid dbid, const char *key,
												int keylen, FenceToken token,
												FenceLeaseStamp *stamp,
												Oid *roleid);
extern bool FenceLeaseStampHolds(const FenceLeaseStamp *stamp);
extern const char *FenceLeaseStatusName(FenceLeaseStatus status);
extern const char *FenceLeaseScopeName(FenceLeaseScope scope);

/* lease_drop.c */
extern int	FenceLeaseForgetDroppedDatabases(void);
extern void FenceLeaseDatabaseDropping(Oid dbid);

/* lease_queue.c */
extern void FenceLeaseWakeWaiters(void);

/* lease_wait.c */
extern uint32 FenceLeaseWaitEvent(void);

/* lease_release.c */
extern bool FenceLeaseRelease(const char *key, int keylen, FenceToken token);
extern bool FenceLeaseReleaseToken(const char *key, int keylen,
								   FenceToken token);
extern bool FenceLeaseAbandon(const char *key, int keylen, FenceToken token);
extern bool FenceLeaseRenew(const char *key, int keylen, FenceToken token,
							int64 ttl);
extern bool FenceLeaseBreak(const char *key, int keylen, FenceToken *token);

/* lease_watch.c */
extern FenceLeaseStatus FenceLeaseWaitEnd(Oid dbid, const char *key,
										  int keylen, FenceToken token,
										  TimestampTz deadline,
										  bool *timed_out);

/* lease_grant.c */
extern void FenceLeaseAcquire(const FenceLeaseRequest *req,
							  FenceLeaseGrant *grant);

/* lease_views.c */
extern int	FenceLeaseSnapshot(FenceLeaseInfo **leases);
extern int	FenceLeaseSnapshotKey(const char *key, int keylen,
								  FenceLeaseInfo **leases);
extern int	FenceLeaseWaitersSnapshot(FenceWaiterInfo **waiters);
extern int	FenceLeaseBlockers(int pid, FenceBlockerInfo **blockers);
extern int	FenceLeaseWaitersSnapshotKey(const char *key, int keylen,
										 FenceWaiterInfo **waiters);
extern int	FenceLeaseBlockersKey(const char *key, int keylen,
								  FenceBlockerInfo **blockers);

/* lease_sql.c */
extern FenceLeaseStatus FenceLeaseVisibleStatus(const char *key, int keylen,
												FenceToken token,
												FenceLeaseStamp *stamp);
extern TimestampTz FenceWatchdogDeadline(FunctionCallInfo fcinfo, int argno);

/* session.c */
extern void FenceSessionInit(void);
extern bool FenceSessionTokenInEffect(const char *lease_key, int keylen,
									  FenceToken *token);
extern void FenceSessionAcquire(const FenceLeaseRequest *req,
								FenceLeaseGrant *grant);
extern bool FenceSessionRelease(const char *key, int keylen, FenceToken token);
extern bool FenceSessionBreak(const char *key, int keylen, FenceToken *token);
extern bool FenceSessionForget(const char *key, int keylen, FenceToken token);
extern void FenceSessionUseToken(FenceToken token, const char *key,
								 int keylen);
extern void FenceSessionCarryState(StringInfo buf);

/* citus.c */
typedef enum FenceCitusTable
{
	CITUS_TABLE_NONE,			/* not a Citus table, or no Citus here */
	CITUS_TABLE_DISTRIBUTED,	/* shards on the worker nodes */
	CITUS_TABLE_REFERENCE,		/* a copy on every node */
	CITUS_TABLE_LOCAL			/* a Citus local table: on the coordinator */
} FenceCitusTable;

extern void FenceCitusInit(void);
extern FenceCitusTable FenceCitusTableKind(Oid relid);
extern void FenceCitusCheckProtect(Oid relid, bool strict);

/* enforce_cache.c (the types are in trigger.h, for the trigger's files) */
typedef struct EnforceConfig EnforceConfig;
typedef struct EnforceTrigger EnforceTrigger;
struct RelationData;
struct TriggerData;
extern void FenceEnforceCacheInit(void);
extern void FenceEnforceCacheSweep(void);
extern EnforceTrigger *FenceEnforceGetTrigger(FunctionCallInfo fcinfo,
											  struct TriggerData *trigdata);
extern void FenceEnforceParseArgs(struct RelationData *rel, int nargs,
								  char **args, EnforceConfig *cfg);
extern void FenceEnforceRefuseLaterTriggers(struct RelationData *rel,
											const char *tgname, int16 events,
											Oid fence_foid);

/* enforce_commit.c */
extern void FenceEnforceCommitInit(void);
extern FenceLeaseStatus FenceStrictCheck(const char *key, int keylen,
										 FenceToken token, Oid relid);
extern bool FenceLeaseSuperseded(const char *key, int keylen,
								 FenceToken token);

/* enforce.c */
extern void FenceEnforceInit(void);

/* breaker.c */
extern void FenceBreakerShmemRequest(void);
extern Size FenceBreakerShmemSize(void);
extern void FenceBreakerShmemInit(void);
extern int	FenceBreakerDatabases(Oid **dbids);
extern int	FenceBreakerForgetDatabase(Oid dbid);

#endif							/* FENCE_H */
