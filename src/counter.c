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
 * crashes, the sequence comes back below it and hands it out again.  So
 * after each nextval we flush WAL up to the LSN of the sequence's page,
 * which covers the record that logged our value.  The sequence logs once
 * per 32 values, and a flush that is already done is only a comparison, so
 * this costs one WAL flush per 32 tokens, not one per token.  With a
 * synchronous standby we also wait for it to confirm that LSN, so the
 * counter survives promotion.
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

#include "fence.h"

#define FENCE_COUNTER_NAME "fence_token_counter"

/* The counter's OID in this backend's database, cached until invalidated. */
static Oid	counter_relid = InvalidOid;
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
	return counter_relid;
}

/* Taking a token writes WAL: refuse cleanly where that is impossible. */
static void
require_writable(void)
{
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
 * The next token of this database's counter, durable before it returns.
 * Must be called without any LWLock held: it does I/O and may wait.
 */
FenceToken
FenceCounterNext(void)
{
	Oid			relid;
	int64		value;

	require_writable();
	relid = counter_oid();
	value = nextval_internal(relid, false);
	counter_make_durable(relid);
	return (FenceToken) value;
}

/*
 * Move the counter forward so that the next token is above at_least; never
 * back.  Returns the counter's value afterwards.
 */
FenceToken
FenceCounterAdvance(FenceToken at_least)
{
	Oid			relid;
	int64		value;

	require_writable();
	relid = counter_oid();
	value = nextval_internal(relid, false);
	if (value < at_least)
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
		value = at_least;
	}
	counter_make_durable(relid);
	return (FenceToken) value;
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
