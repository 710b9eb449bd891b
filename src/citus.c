/*-------------------------------------------------------------------------
 *
 * citus.c
 *		fence on a Citus cluster: carries the coordinator session's token in
 *		effect to the worker nodes, and tells fence_protect() what it must
 *		refuse on Citus tables.
 *
 * A write to a distributed table runs on the worker nodes, in backends that
 * Citus opens for the coordinator's session; the fence trigger fires there,
 * on the shard.  A token in the statement (SET fence = ...) travels with the
 * statement's text.  The token in effect (fence_use_token, the session's
 * leases) is state of the coordinator's backend, which those backends do not
 * share.  So before each write, the coordinator sets fence.carried_tokens,
 * transaction-locally, to its session's state (session.c spells it, guc.c
 * parses it) and has Citus send the same SET LOCAL to every worker of the
 * transaction; the trigger on a shard reads it when its backend has no
 * token of its own.
 *
 * How the setting gets there: Citus propagates a SET LOCAL statement to the
 * workers when citus.propagate_set_commands is 'local' and the SET runs in
 * a transaction block: it sends it to every worker already in the
 * transaction, and puts it in the BEGIN of every remote transaction it
 * opens later in it, also after a savepoint (whose SET LOCALs it replays
 * and undoes with it).  fence runs that statement itself, through SPI (so
 * through Citus's utility hook), with citus.propagate_set_commands set to
 * 'local' just for it: the client need not remember a setting, and Citus
 * does not start propagating the client's own SET LOCALs.  fence cannot
 * call the Citus functions behind it directly: Citus is built with hidden
 * symbols.  The setting is also set in this backend, so that its value here
 * (restored by PostgreSQL at ROLLBACK TO SAVEPOINT, like the workers') says
 * what the workers have, and only a change is sent.
 *
 * Outside a transaction block nothing can carry it: Citus sends a write
 * that touches one shard bare, without BEGIN and so without any setting,
 * and sends no SET LOCAL of a single-statement transaction.  There, a
 * write to a distributed or reference table while the session has a token
 * in effect fails (25P01) instead of reaching the shards unchecked; the
 * hint says to write inside BEGIN ... COMMIT.
 *
 * The per-row path of the trigger is untouched: it reads a parsed setting
 * (a pointer) only when its own session has no token.  Here the work is per
 * write statement, and only on a server where Citus is loaded: the
 * session's state is spelled out and compared with the setting; only a
 * change is sent.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "nodes/parsenodes.h"
#include "utils/acl.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "fence.h"

typedef enum CitusPresence
{
	CITUS_UNKNOWN,
	CITUS_ABSENT,
	CITUS_LOADED
} CitusPresence;

static CitusPresence citus_presence = CITUS_UNKNOWN;

/* This backend set fence.carried_tokens in the current transaction. */
static bool carry_set_here = false;

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

static void citus_ExecutorStart(QueryDesc *queryDesc, int eflags);
static void citus_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
								 bool readOnlyTree,
								 ProcessUtilityContext context,
								 ParamListInfo params,
								 QueryEnvironment *queryEnv,
								 DestReceiver *dest, QueryCompletion *qc);
static void citus_xact_callback(XactEvent event, void *arg);

/*
 * Called from _PG_init in every process that loads the library.  Whether
 * Citus is loaded too is found out at the first write (libraries load in
 * the order of shared_preload_libraries, and Citus insists on being first).
 */
void
FenceCitusInit(void)
{
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = citus_ExecutorStart;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = citus_ProcessUtility;
	RegisterXactCallback(citus_xact_callback, NULL);
}

/*
 * Is the Citus library loaded in this backend?  Its settings exist then,
 * and not as placeholders (a "citus." line in postgresql.conf without the
 * library makes one).
 */
static bool
citus_loaded(void)
{
	if (citus_presence == CITUS_UNKNOWN)
	{
		const char *v = GetConfigOption("citus.propagate_set_commands", true, false);

		citus_presence = CITUS_ABSENT;
		if (v != NULL &&
			(GetConfigOptionFlags("citus.propagate_set_commands", true) &
			 GUC_CUSTOM_PLACEHOLDER) == 0)
			citus_presence = CITUS_LOADED;
	}
	return citus_presence == CITUS_LOADED;
}

/* Is relid a table whose writes run on the worker nodes? */
static bool
written_on_workers(Oid relid)
{
	FenceCitusTable kind = FenceCitusTableKind(relid);

	return kind == CITUS_TABLE_DISTRIBUTED || kind == CITUS_TABLE_REFERENCE;
}

/* Does the statement write a table whose writes run on the workers? */
static bool
plan_writes_on_workers(PlannedStmt *pstmt)
{
	ListCell   *lc;

#if PG_VERSION_NUM >= 160000
	foreach(lc, pstmt->permInfos)
	{
		RTEPermissionInfo *perm = lfirst_node(RTEPermissionInfo, lc);

		if ((perm->requiredPerms & (ACL_INSERT | ACL_UPDATE | ACL_DELETE)) != 0 &&
			written_on_workers(perm->relid))
			return true;
	}
#else
	foreach(lc, pstmt->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

		if (rte->rtekind == RTE_RELATION &&
			(rte->requiredPerms & (ACL_INSERT | ACL_UPDATE | ACL_DELETE)) != 0 &&
			written_on_workers(rte->relid))
			return true;
	}
#endif
	return false;
}

/*
 * Before a write (pstmt, or COPY FROM into copyrel): make
 * fence.carried_tokens, here and on every worker of the transaction, this
 * session's token in effect.  A backend with no token of its own that did
 * not set the setting leaves it alone: on a worker, that is the value its
 * coordinator sent.
 */
static void
carry_token_in_effect(PlannedStmt *pstmt, Oid copyrel)
{
	StringInfoData want;
	const char *have = fence_carried_tokens ? fence_carried_tokens : "";
	StringInfoData cmd;
	int			nestlevel;
	int			rc;

	if (!citus_loaded() || IsParallelWorker() || !IsTransactionState())
		return;

	initStringInfo(&want);
	FenceSessionCarryState(&want);
	if (want.len == 0 && !carry_set_here)
		return;
	if (strcmp(want.data, have) == 0)
		return;
	/* Citus is loaded, but this database does not use it. */
	if (!OidIsValid(get_extension_oid("citus", true)))
		return;

	if (!IsTransactionBlock())
	{
		if (want.len > 0 &&
			(pstmt ? plan_writes_on_workers(pstmt) :
			 (OidIsValid(copyrel) && written_on_workers(copyrel))))
			ereport(ERROR,
					(errcode(ERRCODE_NO_ACTIVE_SQL_TRANSACTION),
					 errmsg("cannot carry the token in effect to the Citus worker nodes outside a transaction block"),
					 errdetail("Citus sends a write outside a transaction block to the worker nodes without the settings that carry this session's token in effect, so the fence trigger on the shards would judge it without the token."),
					 errhint("Write inside BEGIN ... COMMIT, even a single statement.")));
		return;
	}

	/*
	 * Citus propagates the SET LOCAL that it sees in its utility hook, with
	 * citus.propagate_set_commands = 'local', which is set for this one
	 * statement only.
	 */
	initStringInfo(&cmd);
	appendStringInfo(&cmd, "SET LOCAL fence.carried_tokens TO %s",
					 quote_literal_cstr(want.data));
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("citus.propagate_set_commands", "local",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, ERROR, false);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rc = SPI_execute(cmd.data, false, 0);
	if (rc != SPI_OK_UTILITY)
		elog(ERROR, "SPI_execute failed with %s: %s", SPI_result_code_string(rc), cmd.data);
	SPI_finish();
	/* This ends both settings here; the workers keep theirs. */
	AtEOXact_GUC(true, nestlevel);

	(void) set_config_option("fence.carried_tokens", want.data,
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
							 true, ERROR, false);
	carry_set_here = true;
}

/* A write (INSERT, UPDATE, DELETE, MERGE, or a data-modifying WITH). */
static void
citus_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0 &&
		(queryDesc->operation != CMD_SELECT ||
		 queryDesc->plannedstmt->hasModifyingCTE))
		carry_token_in_effect(queryDesc->plannedstmt, InvalidOid);

	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/* COPY FROM: Citus runs it through its utility hook, not the executor. */
static void
citus_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
					 bool readOnlyTree, ProcessUtilityContext context,
					 ParamListInfo params, QueryEnvironment *queryEnv,
					 DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;

	if (IsA(parsetree, CopyStmt) && ((CopyStmt *) parsetree)->is_from &&
		((CopyStmt *) parsetree)->relation != NULL)
		carry_token_in_effect(NULL,
							  RangeVarGetRelid(((CopyStmt *) parsetree)->relation,
											   NoLock, true));

	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
							queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

static void
citus_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			carry_set_here = false;
			break;
		default:
			break;
	}
}

/*
 * What kind of Citus table relid is, from Citus's catalog on this node;
 * CITUS_TABLE_NONE where Citus is not loaded or not in this database.
 */
FenceCitusTable
FenceCitusTableKind(Oid relid)
{
	FenceCitusTable kind = CITUS_TABLE_NONE;
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1];
	int			rc;

	if (!citus_loaded() || !OidIsValid(get_extension_oid("citus", true)))
		return CITUS_TABLE_NONE;

	values[0] = ObjectIdGetDatum(relid);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/*
	 * partmethod 'n' (no distribution column): a reference table when
	 * replicated to every node ('t'), else a Citus local table (its one
	 * shard on the coordinator, colocation 0) or a single-shard distributed
	 * table.
	 */
	rc = SPI_execute_with_args("SELECT CASE WHEN partmethod <> 'n' THEN 'd' "
							   "WHEN repmodel = 't' THEN 'r' "
							   "WHEN colocationid = 0 THEN 'l' ELSE 'd' END "
							   "FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1",
							   1, argtypes, values, NULL, true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args failed with %s", SPI_result_code_string(rc));
	if (SPI_processed == 1)
	{
		char	   *k = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		kind = k[0] == 'r' ? CITUS_TABLE_REFERENCE :
			k[0] == 'l' ? CITUS_TABLE_LOCAL : CITUS_TABLE_DISTRIBUTED;
	}
	SPI_finish();
	return kind;
}

/*
 * fence_protect() on a Citus table: refuse what would not work, with
 * fence's reasons instead of Citus's.
 */
void
FenceCitusCheckProtect(Oid relid, bool strict)
{
	FenceCitusTable kind = FenceCitusTableKind(relid);
	const char *unsafe;

	if (kind != CITUS_TABLE_DISTRIBUTED && kind != CITUS_TABLE_REFERENCE)
		return;				/* a Citus local table is written on the coordinator */

	unsafe = GetConfigOption("citus.enable_unsafe_triggers", true, false);
	if (unsafe == NULL || strcmp(unsafe, "on") != 0)
	{
		if (kind == CITUS_TABLE_DISTRIBUTED)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("cannot protect distributed table \"%s\" while citus.enable_unsafe_triggers is off",
							get_rel_name(relid)),
					 errdetail("The fence trigger must fire on every shard, on the worker nodes, and Citus creates triggers on the shards of a distributed table only with citus.enable_unsafe_triggers on."),
					 errhint("Set citus.enable_unsafe_triggers = on on the coordinator (ALTER SYSTEM, then SELECT pg_reload_conf()), and call fence_protect again.")));
		else
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("cannot protect reference table \"%s\" while citus.enable_unsafe_triggers is off",
							get_rel_name(relid)),
					 errdetail("The fence trigger must fire on every copy of the table, on every node, and Citus creates triggers on a reference table only with citus.enable_unsafe_triggers on."),
					 errhint("Set citus.enable_unsafe_triggers = on on the coordinator (ALTER SYSTEM, then SELECT pg_reload_conf()), and call fence_protect again.")));
	}

	if (strict)
	{
		if (kind == CITUS_TABLE_DISTRIBUTED)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("strict mode is not supported on distributed table \"%s\"",
							get_rel_name(relid)),
					 errdetail("Strict mode checks each write against the lease table of the server the trigger runs on; the shards of a distributed table are written on the worker nodes, and the leases are in the coordinator's lease table."),
					 errhint("Protect the table without strict, and call fence_assert_current(key, token) on the coordinator, in the writing transaction, right before a step that must not run late.")));
		else
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("strict mode is not supported on reference table \"%s\"",
							get_rel_name(relid)),
					 errdetail("Strict mode checks each write against the lease table of the server the trigger runs on; a reference table is written on every node, and the leases are in the coordinator's lease table."),
					 errhint("Protect the table without strict, and call fence_assert_current(key, token) on the coordinator, in the writing transaction, right before a step that must not run late.")));
	}
}
