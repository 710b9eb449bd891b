/*-------------------------------------------------------------------------
 *
 * protect.c
 *		fence_protect() and fence_unprotect(): create and drop the
 *		fence_enforce() trigger of a table (and, through PostgreSQL's
 *		cloning, of its partitions), after checking what the trigger will
 *		check, so that a mistake fails here and not at the first write.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "trigger.h"

/* Run one utility command through SPI. */
static void
run_utility(const char *sql)
{
	int			rc;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rc = SPI_execute(sql, false, 0);
	if (rc != SPI_OK_UTILITY)
		elog(ERROR, "SPI_execute failed with %s: %s", SPI_result_code_string(rc), sql);
	SPI_finish();
}

/* schema.table, quoted, of a relation. */
static char *
qualified_relname(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

/*
 * If relid's fence trigger is a partition's copy of its parent's trigger,
 * fail: it is managed on the table it came from.  (PostgreSQL would refuse
 * too, with a message about internal or child triggers.)
 */
static void
refuse_child_trigger(Oid relid, bool protect)
{
	Relation	tgrel;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			parent_trigger = InvalidOid;
	Oid			parent_rel = InvalidOid;

	tgrel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyInit(&key[0], Anum_pg_trigger_tgrelid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(relid));
	ScanKeyInit(&key[1], Anum_pg_trigger_tgname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum(FENCE_TRIGGER_NAME));
	scan = systable_beginscan(tgrel, TriggerRelidNameIndexId, true, NULL, 2, key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		parent_trigger = ((Form_pg_trigger) GETSTRUCT(tuple))->tgparentid;
	systable_endscan(scan);

	if (OidIsValid(parent_trigger))
	{
		ScanKeyInit(&key[0], Anum_pg_trigger_oid, BTEqualStrategyNumber,
					F_OIDEQ, ObjectIdGetDatum(parent_trigger));
		scan = systable_beginscan(tgrel, TriggerOidIndexId, true, NULL, 1, key);
		tuple = systable_getnext(scan);
		if (HeapTupleIsValid(tuple))
			parent_rel = ((Form_pg_trigger) GETSTRUCT(tuple))->tgrelid;
		systable_endscan(scan);
	}
	table_close(tgrel, AccessShareLock);

	if (OidIsValid(parent_trigger))
	{
		char	   *parent = OidIsValid(parent_rel) ? get_rel_name(parent_rel) : "?";

		if (protect)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("cannot protect partition \"%s\": it is protected by the trigger of \"%s\"",
							get_rel_name(relid), parent),
					 errhint("Call fence_protect() on \"%s\", which covers all its partitions.",
							 parent)));
		else
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("cannot unprotect partition \"%s\": it is protected by the trigger of \"%s\"",
							get_rel_name(relid), parent),
					 errhint("Call fence_unprotect() on \"%s\", which covers all its partitions.",
							 parent)));
	}
}

/*
 * Fail with 22023 when argument argno (named name) of fence_protect or
 * fence_unprotect is NULL.  Only the table has no default; for the others,
 * leaving the argument out is what the caller most likely meant.
 */
static void
require_arg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (!PG_ARGISNULL(argno))
		return;
	if (argno == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("argument \"%s\" must not be NULL", name),
				 errhint("Name the table, for example 'public.orders'.")));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("argument \"%s\" must not be NULL", name),
			 errhint("Leave the argument out to use its default.")));
}

PG_FUNCTION_INFO_V1(fence_protect);

/*
 * fence_protect(tbl, column_name, on_stale, lease, strict, require_token)
 * returns the trigger's name.  Checks everything the trigger would check,
 * then creates (or replaces) trigger zz_fence_enforce on the table.
 */
Datum
fence_protect(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char		relkind;
	char	   *column;
	char	   *on_stale;
	char	   *lease = NULL;
	bool		strict;
	bool		require_token;
	char	   *args[5];
	int			nargs = 0;
	Relation	rel;
	EnforceConfig cfg;
	AclResult	aclresult;
	StringInfoData cmd;
	Oid			nspoid;
	Oid			fence_foid;
	ListCell   *lc;

	require_arg(fcinfo, 0, "tbl");
	require_arg(fcinfo, 1, "column_name");
	require_arg(fcinfo, 2, "on_stale");
	require_arg(fcinfo, 4, "strict");
	require_arg(fcinfo, 5, "require_token");
	relid = PG_GETARG_OID(0);
	column = pstrdup(NameStr(*PG_GETARG_NAME(1)));
	on_stale = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (!PG_ARGISNULL(3))
		lease = text_to_cstring(PG_GETARG_TEXT_PP(3));
	strict = PG_GETARG_BOOL(4);
	require_token = PG_GETARG_BOOL(5);

	relkind = get_rel_relkind(relid);
	if (relkind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	aclresult = pg_class_aclcheck(relid, GetUserId(), ACL_TRIGGER);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, get_relkind_objtype(relkind), get_rel_name(relid));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE &&
		relkind != RELKIND_FOREIGN_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot protect \"%s\": it is not a table", get_rel_name(relid)),
				 errdetail("fence_protect() works on tables, partitioned tables and foreign tables.")));

	/* The trigger's arguments, as fence_enforce() will read them. */
	args[nargs++] = column;
	if (pg_strcasecmp(on_stale, "error") == 0)
		;
	else if (pg_strcasecmp(on_stale, "skip") == 0)
		args[nargs++] = "on_stale=skip";
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for on_stale: \"%s\"", on_stale),
				 errhint("Use 'error' (the default) or 'skip'.")));
	if (lease != NULL)
		args[nargs++] = psprintf("lease=%s", lease);
	if (strict)
		args[nargs++] = "strict";
	if (require_token)
		args[nargs++] = "require_token";

	/* Check them now, so that a mistake fails here and not at a write. */
	rel = relation_open(relid, ShareRowExclusiveLock);
	FenceEnforceParseArgs(rel, nargs, args, &cfg);
	relation_close(rel, NoLock);
	refuse_child_trigger(relid, true);
	FenceCitusCheckProtect(relid, strict);

	nspoid = FenceExtensionSchema();
	if (!OidIsValid(nspoid))
		elog(ERROR, "extension fence is not installed in this database");

	/* No BEFORE trigger may fire after it, on the table or a partition. */
	fence_foid = LookupFuncName(list_make2(makeString(get_namespace_name(nspoid)),
										   makeString("fence_enforce")),
								0, NULL, false);
	foreach(lc, find_all_inheritors(relid, ShareRowExclusiveLock, NULL))
	{
		Relation	part = relation_open(lfirst_oid(lc), NoLock);

		FenceEnforceRefuseLaterTriggers(part, FENCE_TRIGGER_NAME,
							  TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE |
							  TRIGGER_TYPE_DELETE, fence_foid);
		relation_close(part, NoLock);
	}

	initStringInfo(&cmd);
	appendStringInfoString(&cmd, "CREATE OR REPLACE TRIGGER ");
	appendStringInfo(&cmd, "%s BEFORE INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %s.fence_enforce(",
					 quote_identifier(FENCE_TRIGGER_NAME), qualified_relname(relid),
					 quote_identifier(get_namespace_name(nspoid)));
	for (int i = 0; i < nargs; i++)
		appendStringInfo(&cmd, "%s%s", i > 0 ? ", " : "", quote_literal_cstr(args[i]));
	appendStringInfoChar(&cmd, ')');
	run_utility(cmd.data);

	PG_RETURN_TEXT_P(cstring_to_text(FENCE_TRIGGER_NAME));
}

PG_FUNCTION_INFO_V1(fence_unprotect);

/*
 * fence_unprotect(tbl): drops the trigger fence_protect() made.  Returns
 * false if there was none.
 */
Datum
fence_unprotect(PG_FUNCTION_ARGS)
{
	Oid			relid;
	StringInfoData cmd;

	require_arg(fcinfo, 0, "tbl");
	relid = PG_GETARG_OID(0);
	if (get_rel_relkind(relid) == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
#if PG_VERSION_NUM >= 160000
	if (!object_ownercheck(RelationRelationId, relid, GetUserId()))
#else
	if (!pg_class_ownercheck(relid, GetUserId()))
#endif
		aclcheck_error(ACLCHECK_NOT_OWNER,
					   get_relkind_objtype(get_rel_relkind(relid)),
					   get_rel_name(relid));
	if (!OidIsValid(get_trigger_oid(relid, FENCE_TRIGGER_NAME, true)))
		PG_RETURN_BOOL(false);
	refuse_child_trigger(relid, false);

	initStringInfo(&cmd);
	appendStringInfo(&cmd, "DROP TRIGGER %s ON %s",
					 quote_identifier(FENCE_TRIGGER_NAME), qualified_relname(relid));
	run_utility(cmd.data);
	PG_RETURN_BOOL(true);
}
