/*-------------------------------------------------------------------------
 *
 * counter.c
 *		The durable token counter of a database.
 *
 * The counter is a sequence in the extension's schema, so it is crash-safe,
 * streamed to standbys, dumped by pg_dump (it is marked as extension
 * configuration) and carried by pg_upgrade, all through machinery that
 * PostgreSQL already trusts.
 *
 * A bare nextval() is not enough, though.  A sequence logs a value in WAL
 * ahead of handing it out, but nobody flushes that WAL until some commit
 * does; if the transaction that got the value aborts and the server
 * crashes, the sequence comes back below it and hands it out again.
 *
 * So tokens are handed out in blocks.  The sequence counts in steps of its
 * INCREMENT (1024): one nextval reserves the block of tokens up to the value
 * it returns.  We flush WAL up to the LSN of the sequence's page, which
 * covers the record that logged the value (and with a synchronous standby,
 * wait for the standby to confirm it), and only then put the block in
 * shared memory, where every backend of the database takes tokens from it
 * under a spinlock.  A token is thus durable before anyone can see it, and
 * a grant costs one spinlock, not one flush: the flush happens once per
 * block.  After a crash the blocks in shared memory are gone, and the
 * sequence resumes above every block it ever reserved, so no token comes
 * back; the tokens of a lost block are simply skipped (gaps are allowed).
 *
 * The next block is reserved ahead: a grant that finds the current block
 * running low (and no spare, and nobody reserving one) reserves the spare
 * itself before it looks at the lease table, with no lock held.  So a
 * grant under the partition lock almost never finds the block empty, which
 * would make it drop the lock for the I/O (see lease_grant.c), and
 * concurrent backends do not each reserve a block when one runs out.
 *
 * The range ends at the sequence's maximum, 2^63-1.  A nextval that would
 * pass it fails, so near the end (see counter_reserve) no block is reserved
 * ahead, and the last blocks, the final one shorter than the increment, are
 * reserved under a lock that keeps other reservations out.  Only when every
 * token up to the maximum has been issued does a grant fail (SQLSTATE
 * 2200H, "the fencing token counter is exhausted").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "commands/sequence.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
/*
 * Private to the walsender machinery, but the only place the confirmed
 * synchronous-standby LSN can be read: see counter_make_durable().
 */
#include "replication/walsender_private.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "catalog/pg_sequence.h"
#include "access/htup_details.h"

#include "fence.h"

#define FENCE_COUNTER_NAME "fence_token_counter"

/* Reserve the spare block once fewer tokens than this are left. */
#define FENCE_COUNTER_LOW_WATER 256

/*
 * The counter's OID in this backend's database, its INCREMENT (the block
 * size) and its MAXVALUE, cached until a relcache invalidation.
 */
static Oid	counter_relid = InvalidOid;
static int64 counter_increment = 0;
static int64 counter_max = 0;
static bool counter_callback_registered = false;

/* The block whose spare this backend is reserving, for clean-up on exit. */
static FenceCounterBlock *my_reserving_block = NULL;
static bool counter_exit_registered = false;

static void counter_end_reserving(void);
static void counter_exit_callback(int code, Datum arg);

static void
counter_relcache_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == counter_relid)
		counter_relid = InvalidOid;
}

static Oid
counter_oid(void)
{
	Oid			nspoid;
	Oid			relid = InvalidOid;
	HeapTuple	tuple;

	if (OidIsValid(counter_relid))
		return counter_relid;

	if (!counter_callback_registered)
	{
		CacheRegisterRelcacheCallback(counter_relcache_callback, (Datum) 0);
		counter_callback_registered = true;
	}

	/*
	 * counter_relid is set only once every check below has passed: a
	 * refused counter must be looked at again by the next grant, not used.
	 */
	nspoid = FenceExtensionSchema();
	if (OidIsValid(nspoid))
		relid = get_relname_relid(FENCE_COUNTER_NAME, nspoid);
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the fence token counter of database \"%s\" is missing",
						get_database_name(MyDatabaseId)),
				 errhint("Run CREATE EXTENSION fence in this database.")));

	tuple = SearchSysCache1(SEQRELID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for sequence %u", relid);
	counter_increment = ((Form_pg_sequence) GETSTRUCT(tuple))->seqincrement;
	counter_max = ((Form_pg_sequence) GETSTRUCT(tuple))->seqmax;
	ReleaseSysCache(tuple);
	if (counter_increment < 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the fence token counter must count upwards"),
				 errdetail("Its increment is %lld.", (long long) counter_increment),
				 errhint("Restore it with ALTER SEQUENCE fence_token_counter INCREMENT BY 1024.")));
	counter_relid = relid;
	return counter_relid;
}

/* Taking a token writes WAL: refuse cleanly where that is impossible. */
static void
require_writable(void)
{
	FenceRequirePreload();		/* the blocks live in shared memory */
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot issue a fencing token on a standby"),
				 errdetail("Tokens come from the primary's durable counter."),
				 errhint("Take leases on the primary server.")));
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot issue a fencing token in a read-only transaction"),
				 errdetail("A token must be made durable, which writes WAL."),
				 errhint("Take the lease in a read-write transaction.")));
}

/*
 * Wait until the synchronous standbys, if any are configured, have flushed
 * the WAL up to lsn, or ERROR.
 *
 * A block serves every session of the database, not only the one that
 * happens to reserve it, so the reserving session's own synchronous_commit
 * cannot decide how it is confirmed: a session at local or off would hand
 * every other session tokens that the standby never received, and a
 * failover would issue them again.  Nor can remote_write, which a standby
 * crash can undo.  So the wait is always for the remote flush, what
 * synchronous_commit = on waits for; SyncRepWaitForLSN caps any wait that
 * is not a commit's there anyway, so remote_apply asks for nothing more.
 *
 * SyncRepWaitForLSN waits as the session's synchronous_commit says (not at
 * all below remote_write), so "on" is put in force for the wait alone, at a
 * GUC nest level of its own as a function's SET clause would be: the
 * session's value comes back right after, or at the end of the transaction
 * should anything in between ERROR.  Interrupts are held as a commit holds
 * them (PostgreSQL 18 asserts it): the wait still ends on a cancel or a
 * terminate, which it checks for itself.
 */
static void
counter_wait_for_standbys(XLogRecPtr lsn)
{
	int			save_nestlevel;
	XLogRecPtr	confirmed;

	if (max_wal_senders == 0 || SyncRepStandbyNames == NULL ||
		SyncRepStandbyNames[0] == '\0')
		return;

	save_nestlevel = NewGUCNestLevel();
	if (synchronous_commit < SYNCHRONOUS_COMMIT_REMOTE_FLUSH)
		(void) set_config_option("synchronous_commit", "on",
								 PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	HOLD_INTERRUPTS();
	SyncRepWaitForLSN(lsn, false);

	/*
	 * A cancel ends the wait early with only a WARNING; a token that the
	 * standby may not have must not be handed out.  The public API cannot
	 * tell the two endings apart: SyncRepWaitForLSN returns nothing, clears
	 * QueryCancelPending itself before its WARNING, and leaves
	 * MyProc->syncRepState at SYNC_REP_NOT_WAITING either way; the position
	 * the synchronous standbys confirmed (after quorum or priority
	 * selection) is kept only in WalSndCtl->lsn[], which walsender_private.h
	 * declares.  SyncRepGetCandidateStandbys gives each standby's positions
	 * but not that selection, which is static in syncrep.c.  So read
	 * WalSndCtl->lsn[] under SyncRepLock, as syncrep.c does.
	 */
	LWLockAcquire(SyncRepLock, LW_SHARED);
	confirmed = WalSndCtl->lsn[SYNC_REP_WAIT_FLUSH];
	LWLockRelease(SyncRepLock);
	RESUME_INTERRUPTS();
	AtEOXact_GUC(true, save_nestlevel);

	if (confirmed < lsn)
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("canceled before the synchronous standby confirmed the fencing token"),
				 errdetail("The token was not handed out."),
				 errhint("Take the lease again once the standby is reachable.")));
}

/*
 * Make everything the counter has logged so far durable, locally and on
 * the synchronous standbys, before any of its values is handed out.
 */
static void
counter_make_durable(Oid relid)
{
	Relation	rel;
	Buffer		buf;
	XLogRecPtr	lsn;

	rel = relation_open(relid, AccessShareLock);
	buf = ReadBuffer(rel, 0);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	lsn = PageGetLSN(BufferGetPage(buf));
	UnlockReleaseBuffer(buf);
	relation_close(rel, NoLock);

	XLogFlush(lsn);
	counter_wait_for_standbys(lsn);
}

/*
 * Take the next token of the block, moving on to the spare block when the
 * current one is used up.  Block spinlock held.  Tokens only go up: a spare
 * that is not above the current block (the counter was advanced, or
 * refilled, past it meanwhile) is dropped.
 */
static inline bool
block_take(FenceCounterBlock *block, FenceToken *token)
{
	if (block->issued >= block->last && block->spare_last != 0)
	{
		if (block->spare_last > block->last)
		{
			block->issued = Max(block->issued, block->spare_first - 1);
			block->last = block->spare_last;
		}
		block->spare_first = block->spare_last = 0;
	}
	if (block->issued >= block->last)
		return false;
	*token = ++block->issued;
	return true;
}

/*
 * Read the counter's last value, or set it, as the counter's owner: the
 * sequence functions check privileges on it, which only fence's own code
 * has (the SQL function that got us here was checked already).  *called is
 * false while the sequence has never handed out a value.
 */
static int64
counter_as_owner(Oid relid, bool set, int64 value, bool *called)
{
	Relation	rel;
	Oid			owner;
	Oid			save_userid;
	int			save_sec_context;
	int64		result = value;

	rel = relation_open(relid, AccessShareLock);
	owner = rel->rd_rel->relowner;
	relation_close(rel, NoLock);
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner,
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	if (set)
	{
		DirectFunctionCall2(setval_oid, ObjectIdGetDatum(relid),
							Int64GetDatum(value));
		*called = true;
	}
	else
	{
		/* pg_sequence_last_value returns NULL until the first nextval */
		LOCAL_FCINFO(fcinfo, 1);

		InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, NULL, NULL);
		fcinfo->args[0].value = ObjectIdGetDatum(relid);
		fcinfo->args[0].isnull = false;
		result = DatumGetInt64(pg_sequence_last_value(fcinfo));
		*called = !fcinfo->isnull;
	}
	SetUserIdAndSecContext(save_userid, save_sec_context);
	return result;
}

/*
 * Is a sequence at "last" close enough to its maximum that a nextval soon
 * after could run past it?  A backend reserves one block at a time, so at
 * most MaxBackends reservations run at once: outside MaxBackends + 1
 * blocks of the end, a nextval right after reading "last" fails only if
 * backends finished several reservations each (each with a WAL flush) in
 * between.  Should that ever happen, the grant fails with nextval's error;
 * no token is handed out twice either way.
 */
static bool
counter_near_end(int64 last)
{
	if (last >= counter_max)
		return true;
	return (counter_max - last) / counter_increment <= (int64) MaxBackends + 1;
}

/*
 * Reserve the next block from the sequence and make it durable.  Returns
 * its last token and sets *first to its first.  Runs with no LWLock or
 * spinlock held; may ERROR.  With "ahead" (reserving the spare block),
 * near the end of the range it reserves nothing and returns 0: the current
 * block still has tokens, and the grant that empties it reserves under the
 * lock below.
 *
 * Normally one nextval reserves the counter_increment values up to the one
 * it returns.  Near the maximum a nextval could fail, and the last block is
 * shorter than the increment, which nextval cannot hand out at all; so
 * there reservations take turns under ShareUpdateExclusiveLock on the
 * sequence, which conflicts with itself and with fence_advance_tokens'
 * ShareRowExclusiveLock, but not with the RowExclusiveLock that every
 * nextval keeps to the end of its transaction (waiting for those would
 * wait for other grants' transactions to end, and two of them could wait
 * for each other).  The read and the nextval or setval that follows need
 * no more: a plain nextval elsewhere is atomic, and the setval happens only
 * when no whole block is left, when no nextval can succeed.  The lock is
 * released as soon as the block is reserved (a sequence's value is not
 * transactional), before the WAL flush.
 */
static int64
counter_reserve(Oid relid, bool ahead, int64 *first)
{
	bool		called;
	int64		cur = counter_as_owner(relid, false, 0, &called);
	int64		last;

	if (!called || !counter_near_end(cur))
	{
		last = nextval_internal(relid, false);
		*first = last - counter_increment + 1;
	}
	else if (ahead)
		return 0;
	else
	{
		LockRelationOid(relid, ShareUpdateExclusiveLock);
		cur = counter_as_owner(relid, false, 0, &called);
		if (cur >= counter_max)
			ereport(ERROR,
					(errcode(ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED),
					 errmsg("the fencing token counter of database \"%s\" is exhausted",
							get_database_name(MyDatabaseId)),
					 errdetail("Every token up to %lld has been issued.",
							   (long long) counter_max)));
		if (counter_max - cur >= counter_increment)
		{
			last = nextval_internal(relid, false);
			*first = last - counter_increment + 1;
		}
		else
		{
			counter_as_owner(relid, true, counter_max, &called);
			*first = cur + 1;
			last = counter_max;
		}
		UnlockRelationOid(relid, ShareUpdateExclusiveLock);
	}

	counter_make_durable(relid);
	return last;
}

/*
 * Refill an empty block with a newly reserved one, unless a newer block is
 * there already (another backend refilled meanwhile; ours is then skipped).
 */
static void
counter_refill(Oid relid, FenceCounterBlock *block)
{
	int64		first;
	int64		last = counter_reserve(relid, false, &first);

	SpinLockAcquire(&block->mutex);
	if (block->relid == relid && last > block->last)
	{
		block->issued = Max(block->issued, first - 1);
		block->last = last;
		if (block->spare_last <= last)
			block->spare_first = block->spare_last = 0;
	}
	SpinLockRelease(&block->mutex);
}

/* An empty block of no counter. */
static void
block_clear(FenceCounterBlock *block, Oid relid)
{
	block->relid = relid;
	block->reserving = false;
	block->issued = 0;
	block->last = 0;
	block->spare_first = block->spare_last = 0;
}

/*
 * Initialize a block in new shared memory, or empty it when its database
 * slot is given to another database ("reuse": other backends may look at
 * it, so under its spinlock).  dbstate.c holds the blocks, one per database
 * slot, and calls this through the pointer init.c gives it.
 */
void
FenceCounterBlockInit(FenceCounterBlock *block, bool reuse)
{
	if (!reuse)
		SpinLockInit(&block->mutex);
	else
		SpinLockAcquire(&block->mutex);
	block_clear(block, InvalidOid);
	if (reuse)
		SpinLockRelease(&block->mutex);
}

/*
 * The block of this database, emptied if it came from another counter (the
 * extension was dropped and created again since).  Spinlock held on return.
 */
static FenceCounterBlock *
counter_lock_block(Oid relid)
{
	FenceCounterBlock *block = FenceDbCounterBlock(false);

	SpinLockAcquire(&block->mutex);
	if (block->relid != relid)
		block_clear(block, relid);
	return block;
}

/*
 * The next token of this database's counter, durable before it returns.
 * Must be called without any LWLock held: a refill does I/O and may wait.
 */
FenceToken
FenceCounterNext(void)
{
	Oid			relid;

	require_writable();
	relid = counter_oid();

	for (;;)
	{
		FenceCounterBlock *block = counter_lock_block(relid);
		FenceToken	token;

		if (block_take(block, &token))
		{
			SpinLockRelease(&block->mutex);
			return token;
		}
		SpinLockRelease(&block->mutex);

		counter_refill(relid, block);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * A token from this database's current or spare block, if it has one and
 * nothing needs checking first.  Takes only the block's spinlock and never
 * ERRORs, so a caller may hold an LWLock (the lease table takes the token
 * under the partition lock that publishes the grant).  False, changing
 * nothing, when FenceCounterNext() must be called instead: both blocks are
 * empty, or the counter or the transaction has not been checked yet.
 */
bool
FenceCounterTryNext(FenceToken *token)
{
	FenceCounterBlock *block;
	bool		got = false;

	if (!OidIsValid(counter_relid) || XactReadOnly || RecoveryInProgress())
		return false;
	block = FenceDbCounterBlock(true);
	if (block == NULL)
		return false;

	SpinLockAcquire(&block->mutex);
	if (block->relid == counter_relid)
		got = block_take(block, token);
	SpinLockRelease(&block->mutex);
	return got;
}

/*
 * Before a grant: if the current block is running low and there is no spare
 * yet, reserve the spare now, while no lock is held, unless another backend
 * is doing so already (then just go on: the current block has tokens left,
 * or FenceCounterNext() refills it).  Does nothing where a token cannot be
 * taken at all (the grant reports that).  May ERROR, like any reservation;
 * nothing has been granted yet when it does.
 */
void
FenceCounterReserveAhead(void)
{
	Oid			relid;
	FenceCounterBlock *block;
	bool		reserve;

	if (XactReadOnly || RecoveryInProgress() ||
		FenceDbCounterBlock(true) == NULL)
		return;
	relid = counter_oid();

	/*
	 * The mark set below must not outlive this backend: while it is set, no
	 * other backend reserves ahead.  An ERROR clears it in the PG_CATCH
	 * block, but a backend terminated during the reservation (it may wait
	 * for the sequence's lock, or for a synchronous standby) exits without
	 * unwinding.  The exit callback is this module's own, registered before
	 * the first mark can be set (not under the spinlock: registering may
	 * ERROR), because whoever called us may have none: a breaker's probe
	 * takes its lease without session.c.
	 */
	if (!counter_exit_registered)
	{
		before_shmem_exit(counter_exit_callback, (Datum) 0);
		counter_exit_registered = true;
	}

	block = counter_lock_block(relid);
	reserve = !block->reserving && block->spare_last == 0 &&
		block->last - block->issued < FENCE_COUNTER_LOW_WATER;
	if (reserve)
	{
		block->reserving = true;
		my_reserving_block = block;
	}
	SpinLockRelease(&block->mutex);
	if (!reserve)
		return;

	PG_TRY();
	{
		int64		first;
		int64		last = counter_reserve(relid, true, &first);

		SpinLockAcquire(&block->mutex);
		if (last != 0 && block->relid == relid && last > block->last &&
			last > block->spare_last)
		{
			block->spare_first = first;
			block->spare_last = last;
		}
		block->reserving = false;
		SpinLockRelease(&block->mutex);
		my_reserving_block = NULL;
	}
	PG_CATCH();
	{
		counter_end_reserving();
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/*
 * Let other backends reserve the spare block again if this one was doing it
 * and errored out or is exiting.
 */
static void
counter_end_reserving(void)
{
	FenceCounterBlock *block = my_reserving_block;

	if (block == NULL)
		return;
	my_reserving_block = NULL;
	SpinLockAcquire(&block->mutex);
	block->reserving = false;
	SpinLockRelease(&block->mutex);
}

static void
counter_exit_callback(int code, Datum arg)
{
	counter_end_reserving();
}

/*
 * Move the counter forward so that every later token is above at_least;
 * never back.  Returns the counter's value afterwards: the last token handed
 * out or skipped, at least at_least.
 */
FenceToken
FenceCounterAdvance(FenceToken at_least)
{
	Oid			relid;
	FenceCounterBlock *block;
	int64		last;
	bool		called;
	FenceToken	result;

	require_writable();
	relid = counter_oid();

	/* Below the end of the current block: no I/O, just skip ahead. */
	block = counter_lock_block(relid);
	if (at_least < block->last)
	{
		block->issued = Max(block->issued, at_least);
		result = block->issued;
		SpinLockRelease(&block->mutex);
		return result;
	}
	SpinLockRelease(&block->mutex);

	/*
	 * Read the sequence and move it forward under a lock that conflicts
	 * with nextval's RowExclusiveLock and with itself, so that no block is
	 * reserved between the two (setval would then move the sequence back
	 * below it).  Reading, not nextval, so that this works within a block
	 * of the maximum.  The lock is held to the end of the transaction.
	 */
	LockRelationOid(relid, ShareRowExclusiveLock);
	last = counter_as_owner(relid, false, 0, &called);
	if (!called || last < at_least)
		counter_as_owner(relid, true, at_least, &called);
	counter_make_durable(relid);

	/*
	 * Every token up to at_least is now reserved by some block or skipped;
	 * the next one comes from the spare block if it reaches past at_least,
	 * else from a new block.
	 */
	block = counter_lock_block(relid);
	block->issued = Max(block->issued, at_least);
	if (block->spare_last <= Max(block->last, block->issued))
		block->spare_first = block->spare_last = 0;
	result = block->issued;
	SpinLockRelease(&block->mutex);
	return result;
}

/*
 * The highest token this database's counter may have issued, cached: it
 * only grows while the counter is the same sequence.
 */
static Oid	issued_bound_relid = InvalidOid;
static FenceToken issued_bound = 0;

/*
 * Could this database's counter have issued "token"?  True when it is at
 * or below the highest token issued (or skipped by fence_advance_tokens),
 * or when fence.external_tokens says this database's tables take tokens
 * from leases on another server, which this one cannot check.  Otherwise
 * false, with *highest set (0 if the counter never issued a token): the
 * token is a number no lease of this database ever had, and a write that
 * stamps it on a row would fence out every real holder until the counter
 * got there.  A counter that never issued a token bounds nothing less:
 * before its first grant, every token is such a number.
 *
 * The bound is the block in shared memory (the highest token handed out
 * since the server started, above every earlier one), else, before the
 * first grant since then, the sequence's value: the end of the last block
 * reserved, up to two blocks above the last token handed out.  Cheap when
 * the token is below what was seen before: the trigger calls it per row.
 * Takes the block's spinlock; may read the sequence (so no LWLock held).
 */
static bool
counter_may_have_issued(FenceToken token, FenceToken *highest)
{
	Oid			relid;
	FenceCounterBlock *block;
	FenceToken	bound = 0;

	if (fence_external_tokens)
		return true;
	if (OidIsValid(issued_bound_relid) && issued_bound_relid == counter_relid &&
		token <= issued_bound)
		return true;

	relid = counter_oid();
	block = fence_preloaded ? FenceDbCounterBlock(true) : NULL;
	if (block != NULL)
	{
		SpinLockAcquire(&block->mutex);
		if (block->relid == relid && block->last > 0)
			bound = block->issued;
		SpinLockRelease(&block->mutex);
	}
	if (bound == 0)
	{
		bool		called;
		int64		last = counter_as_owner(relid, false, 0, &called);

		if (!called)
		{
			*highest = 0;
			return false;
		}
		bound = (FenceToken) last;
	}
	if (issued_bound_relid != relid || bound > issued_bound)
	{
		issued_bound_relid = relid;
		issued_bound = bound;
	}
	*highest = bound;
	return token <= bound;
}

/*
 * ERROR unless this database's counter could have issued "token" (see
 * counter_may_have_issued): the trigger calls it for the token of every
 * write, fence_use_token for the token it is given.  No LWLock held.
 */
void
FenceCounterRequireIssued(FenceToken token)
{
	FenceToken	highest = 0;

	if (likely(counter_may_have_issued(token, &highest)))
		return;
	if (highest == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fencing token %lld was never issued in database \"%s\"",
						(long long) token, get_database_name(MyDatabaseId)),
				 errdetail("This database's counter has issued no token yet, so no lease of this database ever had this one."),
				 errhint("Use the token a lease granted. A database whose tables take tokens from leases on another server needs fence.external_tokens = on, which a superuser sets with ALTER DATABASE ... SET.")));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("fencing token %lld was never issued in database \"%s\"",
					(long long) token, get_database_name(MyDatabaseId)),
			 errdetail("The highest token this database's counter has issued is %lld; a fence above it would reject every real holder.",
					   (long long) highest),
			 errhint("Use the token a lease granted. If this database's tables take tokens from leases on another server, a superuser can set fence.external_tokens for it.")));
}

/*
 * fence_advance_tokens(at_least bigint): admin function, revoked from
 * PUBLIC.  Moves the counter forward, never back; returns its value.
 */
PG_FUNCTION_INFO_V1(fence_advance_tokens);
Datum
fence_advance_tokens(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("at_least must not be NULL"),
				 errhint("Pass the value the token counter must reach.")));
	PG_RETURN_FENCE_TOKEN(FenceCounterAdvance(FenceTokenFromInt64(PG_GETARG_INT64(0))));
}
