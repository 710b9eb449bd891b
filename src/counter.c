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
#include "replication/walsender_private.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/fmgrprotos.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "catalog/pg_sequence.h"
#include "access/htup_details.h"

#include "fence.h"

#define FENCE_COUNTER_NAME "fence_token_counter"

/*
 * The counter's OID in this backend's database and its INCREMENT (the block
 * size), cached until a relcache invalidation.
 */
static Oid	counter_relid = InvalidOid;
static int64 counter_increment = 0;
static bool counter_callback_registered = false;

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
	HeapTuple	tuple;

	if (OidIsValid(counter_relid))
		return counter_relid;

	if (!counter_callback_registered)
	{
		CacheRegisterRelcacheCallback(counter_relcache_callback, (Datum) 0);
		counter_callback_registered = true;
	}

	nspoid = FenceExtensionSchema();
	if (OidIsValid(nspoid))
		counter_relid = get_relname_relid(FENCE_COUNTER_NAME, nspoid);
	if (!OidIsValid(counter_relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the fence token counter of database \"%s\" is missing",
						get_database_name(MyDatabaseId)),
				 errhint("Run CREATE EXTENSION fence in this database.")));

	tuple = SearchSysCache1(SEQRELID, ObjectIdGetDatum(counter_relid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for sequence %u", counter_relid);
	counter_increment = ((Form_pg_sequence) GETSTRUCT(tuple))->seqincrement;
	ReleaseSysCache(tuple);
	if (counter_increment < 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the fence token counter must count upwards"),
				 errdetail("Its increment is " INT64_FORMAT ".", counter_increment),
				 errhint("Restore it with ALTER SEQUENCE fence_token_counter INCREMENT BY 1024.")));
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
 * Make everything the counter has logged so far durable, locally and on a
 * synchronous standby, before any of its values is handed out.
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

	if (SyncRepRequested() && SyncRepStandbyNames != NULL &&
		SyncRepStandbyNames[0] != '\0')
	{
		int			mode;
		XLogRecPtr	confirmed;

		SyncRepWaitForLSN(lsn, false);

		/*
		 * A cancel ends the wait early with only a WARNING; a token that the
		 * standby may not have must not be handed out.  The wait used the
		 * write position for remote_write, the flush position otherwise.
		 */
		mode = (synchronous_commit == SYNCHRONOUS_COMMIT_REMOTE_WRITE) ?
			SYNC_REP_WAIT_WRITE : SYNC_REP_WAIT_FLUSH;
		LWLockAcquire(SyncRepLock, LW_SHARED);
		confirmed = WalSndCtl->lsn[mode];
		LWLockRelease(SyncRepLock);
		if (confirmed < lsn)
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("canceled before the synchronous standby confirmed the fencing token"),
					 errdetail("The token was not handed out."),
					 errhint("Take the lease again once the standby is reachable.")));
	}
}

/*
 * Reserve the next block from the sequence and make it durable, then put it
 * in shared memory unless a newer block is there already (another backend
 * refilled meanwhile; ours is then skipped).  Runs with no LWLock or
 * spinlock held.
 */
static void
counter_refill(Oid relid, FenceCounterBlock *block)
{
	int64		last = nextval_internal(relid, false);

	counter_make_durable(relid);

	SpinLockAcquire(&block->mutex);
	if (block->relid == relid && last > block->last)
	{
		block->issued = Max(block->issued, last - counter_increment);
		block->last = last;
	}
	SpinLockRelease(&block->mutex);
}

/*
 * The block of this database, emptied if it came from another counter (the
 * extension was dropped and created again since).  Spinlock held on return.
 */
static FenceCounterBlock *
counter_lock_block(Oid relid)
{
	FenceCounterBlock *block = FenceStatsCounterBlock(false);

	SpinLockAcquire(&block->mutex);
	if (block->relid != relid)
	{
		block->relid = relid;
		block->issued = 0;
		block->last = 0;
	}
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

		if (block->issued < block->last)
		{
			FenceToken	token = ++block->issued;

			SpinLockRelease(&block->mutex);
			return token;
		}
		SpinLockRelease(&block->mutex);

		counter_refill(relid, block);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * A token from this database's current block, if it has one and nothing
 * needs checking first.  Takes only the block's spinlock and never ERRORs,
 * so a caller may hold an LWLock (the lease table takes the token under
 * the partition lock that publishes the grant).  False, changing nothing,
 * when FenceCounterNext() must be called instead: the block is empty, or
 * the counter or the transaction has not been checked yet.
 */
bool
FenceCounterTryNext(FenceToken *token)
{
	FenceCounterBlock *block;
	bool		got = false;

	if (!OidIsValid(counter_relid) || XactReadOnly || RecoveryInProgress())
		return false;
	block = FenceStatsCounterBlock(true);
	if (block == NULL)
		return false;

	SpinLockAcquire(&block->mutex);
	if (block->relid == counter_relid && block->issued < block->last)
	{
		*token = ++block->issued;
		got = true;
	}
	SpinLockRelease(&block->mutex);
	return got;
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
	 * setval() could move the sequence back below a block that a concurrent
	 * grant reserved between our nextval and our setval.  This lock, which
	 * conflicts with nextval's RowExclusiveLock and with itself, keeps the
	 * two apart; it is held to the end of the transaction.
	 */
	LockRelationOid(relid, ShareRowExclusiveLock);

	last = nextval_internal(relid, false);
	if (last <= at_least)
	{
		Oid			save_userid;
		int			save_sec_context;
		Relation	rel;
		Oid			owner;

		/*
		 * setval checks UPDATE privilege; the admin function's own privilege
		 * was checked already, so act as the counter's owner.
		 */
		rel = relation_open(relid, AccessShareLock);
		owner = rel->rd_rel->relowner;
		relation_close(rel, NoLock);
		GetUserIdAndSecContext(&save_userid, &save_sec_context);
		SetUserIdAndSecContext(owner,
							   save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
		DirectFunctionCall2(setval_oid, ObjectIdGetDatum(relid), Int64GetDatum(at_least));
		SetUserIdAndSecContext(save_userid, save_sec_context);
	}
	counter_make_durable(relid);

	block = counter_lock_block(relid);
	if (last > at_least && last > block->last)
	{
		block->issued = Max(block->issued, last - counter_increment);
		block->last = last;
	}
	block->issued = Max(block->issued, at_least);
	result = block->issued;
	SpinLockRelease(&block->mutex);
	return result;
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
