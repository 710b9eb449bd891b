/*-------------------------------------------------------------------------
 *
 * enforce_cache.c
 *		The fence_enforce() trigger's arguments: checked against the table
 *		(also by fence_protect(), before it creates the trigger), parsed,
 *		and kept per trigger so that the trigger's per-row path does no
 *		catalog lookup.
 *
 * The cache is keyed by the trigger's OID; a relcache invalidation of the
 * table marks its triggers' entries stale, and they are parsed again at
 * their next write.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "common/hashfn.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "trigger.h"

/*
 * Per-trigger cache, in TopMemoryContext.  enforce_rels lists each table's
 * entries, so that an invalidation finds them without a scan of the whole
 * cache.  An invalidated entry stays (a trigger call may be reading it)
 * until the transaction ends, when FenceEnforceCacheSweep() frees it: a dropped
 * trigger leaves nothing behind, and a live one is parsed again at its next
 * write.  A context an entry was rebuilt out of waits in the graveyard for
 * the same sweep.
 */
typedef struct EnforceRel
{
	Oid			relid;			/* hash key */
	dlist_head	triggers;		/* EnforceTrigger.rel_node */
} EnforceRel;

static HTAB *enforce_cache = NULL;
static HTAB *enforce_rels = NULL;
static MemoryContext enforce_cache_cxt = NULL;
static MemoryContext enforce_graveyard_cxt = NULL;
static bool enforce_garbage = false;	/* something for FenceEnforceCacheSweep() */

static void enforce_relcache_callback(Datum arg, Oid relid);

/*
 * Called through FenceEnforceInit() in every process that loads the
 * library: the callback is per process.
 */
void
FenceEnforceCacheInit(void)
{
	CacheRegisterRelcacheCallback(enforce_relcache_callback, (Datum) 0);
}

/*
 * A table's definition or triggers changed: its triggers must be parsed
 * again.  Only marks entries (no allocation, no error): FenceEnforceCacheSweep()
 * frees them when the transaction ends, so a trigger call in progress never
 * loses what it is reading.
 */
static void
enforce_relcache_callback(Datum arg, Oid relid)
{
	if (enforce_cache == NULL)
		return;
	if (relid == InvalidOid)
	{
		HASH_SEQ_STATUS status;
		EnforceTrigger *et;

		hash_seq_init(&status, enforce_cache);
		while ((et = hash_seq_search(&status)) != NULL)
			et->valid = false;
		enforce_garbage = true;
	}
	else
	{
		EnforceRel *r = hash_search(enforce_rels, &relid, HASH_FIND, NULL);
		dlist_iter	iter;

		if (r == NULL)
			return;
		dlist_foreach(iter, &r->triggers)
			dlist_container(EnforceTrigger, rel_node, iter.cur)->valid = false;
		enforce_garbage = true;
	}
}

/*
 * Free the cache entries invalidated (or never built) in this transaction,
 * and the contexts entries were rebuilt out of.  Runs at transaction end,
 * when no trigger call is in progress.
 */
void
FenceEnforceCacheSweep(void)
{
	HASH_SEQ_STATUS status;
	EnforceTrigger *et;

	if (!enforce_garbage || enforce_cache == NULL)
		return;
	hash_seq_init(&status, enforce_cache);
	while ((et = hash_seq_search(&status)) != NULL)
	{
		if (et->valid)
			continue;
		if (et->cxt != NULL)
			MemoryContextDelete(et->cxt);
		if (et->linked)
		{
			dlist_delete(&et->rel_node);
			if (!OidIsValid(et->relid))
				elog(WARNING, "fence: trigger cache entry without a table");
			else
			{
				EnforceRel *r = hash_search(enforce_rels, &et->relid,
											HASH_FIND, NULL);

				if (r != NULL && dlist_is_empty(&r->triggers))
					hash_search(enforce_rels, &et->relid, HASH_REMOVE, NULL);
			}
		}
		hash_search(enforce_cache, &et->tgoid, HASH_REMOVE, NULL);
	}
	MemoryContextReset(enforce_graveyard_cxt);
	enforce_garbage = false;
}

/* ----------------------------------------------------------------
 * Parsing and checking the trigger's arguments
 * ----------------------------------------------------------------
 */

/* The user column called "name" (exact spelling), or InvalidAttrNumber. */
static AttrNumber
find_column(TupleDesc tupdesc, const char *name)
{
	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(tupdesc, i);

		if (!attr->attisdropped && strcmp(NameStr(attr->attname), name) == 0)
			return attr->attnum;
	}
	return InvalidAttrNumber;
}

/* Parse "strict" or "strict=<bool>"; value is NULL for the bare form. */
static bool
option_bool(Relation rel, const char *name, const char *value)
{
	bool		result;

	if (value == NULL)
		return true;
	if (!parse_bool(value, &result))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for fence_enforce option \"%s\" on table \"%s\": \"%s\"",
						name, RelationGetRelationName(rel), value),
				 errhint("Write \"%s\" alone, or \"%s=true\" or \"%s=false\".",
						 name, name, name)));
	return result;
}

/*
 * How a {column} of this type is rendered into a lease name, or
 * LEASE_PART_LITERAL if it cannot be rendered the same in every session.
 * A row must name the same lease whoever writes it: a lease name must not
 * depend on TimeZone, DateStyle, IntervalStyle, extra_float_digits,
 * lc_monetary or bytea_output.  Integers and text are rendered here; date
 * and time types here too, in ISO form and in UTC, which is what their
 * output functions print under DateStyle ISO and TimeZone UTC; the few
 * other types whose output functions read no setting go through them.
 * Anything else (floats, intervals, money, bytea, times, arrays, records,
 * other extensions' types) is refused.
 */
static LeasePartKind
placeholder_kind(Oid typid)
{
	Oid			basetype = getBaseType(typid);

	switch (basetype)
	{
		case INT2OID:
			return LEASE_PART_INT2;
		case INT4OID:
			return LEASE_PART_INT4;
		case INT8OID:
			return LEASE_PART_INT8;
		case TEXTOID:
		case VARCHAROID:
			return LEASE_PART_TEXT;
		case DATEOID:
			return LEASE_PART_DATE;
		case TIMESTAMPOID:
			return LEASE_PART_TIMESTAMP;
		case TIMESTAMPTZOID:
			return LEASE_PART_TIMESTAMPTZ;
		case BPCHAROID:
		case NAMEOID:
		case CHAROID:
		case BOOLOID:
		case NUMERICOID:
		case OIDOID:
		case UUIDOID:
			return LEASE_PART_OTHER;
		default:
			if (type_is_enum(basetype))
				return LEASE_PART_OTHER;
			return LEASE_PART_LITERAL;
	}
}

/*
 * Split a lease name into literal pieces and {column} placeholders and
 * check every placeholder against the table.  "{{" and "}}" stand for
 * literal braces.
 */
static void
parse_lease_name(Relation rel, EnforceConfig *cfg)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	const char *relname = RelationGetRelationName(rel);
	const char *p = cfg->lease;
	int			maxparts = 1;
	int			literal_bytes = 0;
	StringInfoData lit;

	for (const char *q = p; *q; q++)
		if (*q == '{')
			maxparts += 2;
	cfg->parts = palloc0(sizeof(LeasePart) * maxparts);
	cfg->nparts = 0;
	cfg->lease_has_columns = false;
	initStringInfo(&lit);

	while (true)
	{
		if (*p == '{' && p[1] == '{')
		{
			appendStringInfoChar(&lit, '{');
			p += 2;
			continue;
		}
		if (*p == '}' && p[1] == '}')
		{
			appendStringInfoChar(&lit, '}');
			p += 2;
			continue;
		}
		if (*p == '}')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid lease name for table \"%s\": \"%s\"",
							relname, cfg->lease),
					 errdetail("A \"}\" without a matching \"{\"."),
					 errhint("Write \"}}\" for a literal brace.")));
		if (*p != '{' && *p != '\0')
		{
			appendStringInfoChar(&lit, *p++);
			continue;
		}

		/* End of a literal piece. */
		if (lit.len > 0)
		{
			LeasePart  *part = &cfg->parts[cfg->nparts++];

			part->kind = LEASE_PART_LITERAL;
			part->text = pstrdup(lit.data);
			part->len = lit.len;
			literal_bytes += lit.len;
			resetStringInfo(&lit);
		}
		if (*p == '\0')
			break;

		/* A placeholder: {column} */
		{
			const char *start = ++p;
			const char *end = strchr(start, '}');
			char	   *colname;
			AttrNumber	attnum;
			Form_pg_attribute attr;
			LeasePart  *part;

			if (end == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid lease name for table \"%s\": \"%s\"",
								relname, cfg->lease),
						 errdetail("A \"{\" without a matching \"}\"."),
						 errhint("Placeholders are written {column}; write \"{{\" for a literal brace.")));
			colname = pnstrdup(start, end - start);
			if (colname[0] == '\0')
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid lease name for table \"%s\": \"%s\"",
								relname, cfg->lease),
						 errdetail("The placeholder \"{}\" names no column.")));
			attnum = find_column(tupdesc, colname);
			if (attnum == InvalidAttrNumber)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_COLUMN),
						 errmsg("column \"%s\" named in lease name \"%s\" does not exist in table \"%s\"",
								colname, cfg->lease, relname)));
			if (attnum == cfg->attnum)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("lease name \"%s\" for table \"%s\" cannot use the fence column \"%s\"",
								cfg->lease, relname, colname),
						 errdetail("The trigger sets the fence column; the lease name must come from other columns.")));
			attr = TupleDescAttr(tupdesc, attnum - 1);
			if (attr->attgenerated != '\0')
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_COLUMN_DEFINITION),
						 errmsg("column \"%s\" named in lease name \"%s\" of table \"%s\" is a generated column",
								colname, cfg->lease, relname),
						 errdetail("Generated columns are computed after BEFORE triggers run, so the fence trigger cannot see their new value."),
						 errhint("Name a column the writer sets, or one a BEFORE trigger that fires before the fence trigger fills in.")));
			part = &cfg->parts[cfg->nparts++];
			part->text = colname;
			part->attnum = attnum;
			part->kind = placeholder_kind(attr->atttypid);
			if (part->kind == LEASE_PART_OTHER)
			{
				Oid			outfunc;
				bool		isvarlena;

				getTypeOutputInfo(attr->atttypid, &outfunc, &isvarlena);
				fmgr_info_cxt(outfunc, &part->outfunc, CurrentMemoryContext);
			}
			else if (part->kind == LEASE_PART_LITERAL)
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("column \"%s\" named in lease name \"%s\" of table \"%s\" has type %s",
								colname, cfg->lease, relname,
								format_type_be(attr->atttypid)),
						 errdetail("A row must name the same lease in every session, and the text form of this type is not known to be independent of session settings."),
						 errhint("Use a column of an integer, text, character, name, boolean, numeric, oid, uuid, enum, date, timestamp or timestamptz type (or a domain over one).")));
			cfg->lease_has_columns = true;
			p = end + 1;
		}
	}

	if (literal_bytes > FENCE_MAX_KEY_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease name for table \"%s\" is longer than %d bytes",
						relname, FENCE_MAX_KEY_LEN),
				 errdetail("The lease name starts \"%.*s...\".",
						   pg_mbcliplen(cfg->lease, strlen(cfg->lease), 40),
						   cfg->lease)));
	if (!cfg->lease_has_columns)
	{
		if (literal_bytes == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lease name for table \"%s\" is empty", relname),
					 errhint("Lease names are 1 to %d bytes.", FENCE_MAX_KEY_LEN)));
		cfg->static_key = cfg->nparts > 0 ? cfg->parts[0].text : "";
		cfg->static_keylen = literal_bytes;
	}
}

/*
 * Check a fence_enforce trigger's arguments against its table and fill in
 * *cfg (allocated in the current memory context).  args[0] is the fence
 * column (default "fence"), the rest are options.  Every error names the
 * table, and the column where there is one.  fence_protect() calls this
 * before it creates the trigger, so that a bad call fails up front.
 */
void
FenceEnforceParseArgs(Relation rel, int nargs, char **args, EnforceConfig *cfg)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	const char *relname = RelationGetRelationName(rel);
	Form_pg_attribute attr;
	Oid			token_type;
	bool		seen_on_stale = false;
	bool		seen_strict = false;
	bool		seen_require = false;

	memset(cfg, 0, sizeof(*cfg));
	cfg->colname = pstrdup(nargs > 0 ? args[0] : "fence");

	/* The column: present, of a fence type, stored (not generated). */
	cfg->attnum = find_column(tupdesc, cfg->colname);
	if (cfg->attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("fence column \"%s\" does not exist in table \"%s\"",
						cfg->colname, relname),
				 errhint("The first argument of fence_enforce() names the fence column; it defaults to \"fence\".")));
	attr = TupleDescAttr(tupdesc, cfg->attnum - 1);
	token_type = FenceTokenTypeOid();
	if (OidIsValid(token_type) && attr->atttypid == token_type)
		cfg->coltype = FENCE_COL_TOKEN;
	else if (attr->atttypid == INT8OID)
		cfg->coltype = FENCE_COL_INT8;
	else if (attr->atttypid == INT4OID)
		cfg->coltype = FENCE_COL_INT4;
	else
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("fence column \"%s\" of table \"%s\" has type %s",
						cfg->colname, relname, format_type_be(attr->atttypid)),
				 errdetail("A fence column must be of type fence_token, bigint or integer.")));
	if (attr->attgenerated != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_DEFINITION),
				 errmsg("fence column \"%s\" of table \"%s\" cannot be a generated column",
						cfg->colname, relname),
				 errdetail("The trigger stamps the fence column with the write's token.")));

	/* Options: on_stale=error|skip, lease=NAME, strict, require_token. */
	for (int i = 1; i < nargs; i++)
	{
		char	   *opt = pstrdup(args[i]);
		char	   *value = strchr(opt, '=');

		if (value != NULL)
			*value++ = '\0';

		if (strcmp(opt, "on_stale") == 0 && !seen_on_stale)
		{
			seen_on_stale = true;
			if (value != NULL && pg_strcasecmp(value, "error") == 0)
				cfg->skip = false;
			else if (value != NULL && pg_strcasecmp(value, "skip") == 0)
				cfg->skip = true;
			else
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid value for fence_enforce option \"on_stale\" on table \"%s\": \"%s\"",
								relname, value ? value : ""),
						 errhint("Use on_stale=error or on_stale=skip.")));
		}
		else if (strcmp(opt, "lease") == 0 && cfg->lease == NULL)
		{
			if (value == NULL)
				value = "";
			cfg->lease = value;
			parse_lease_name(rel, cfg);
		}
		else if (strcmp(opt, "strict") == 0 && !seen_strict)
		{
			seen_strict = true;
			cfg->strict = option_bool(rel, opt, value);
		}
		else if (strcmp(opt, "require_token") == 0 && !seen_require)
		{
			seen_require = true;
			cfg->require_token = option_bool(rel, opt, value);
		}
		else if (strcmp(opt, "on_stale") == 0 || strcmp(opt, "lease") == 0 ||
				 strcmp(opt, "strict") == 0 || strcmp(opt, "require_token") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("fence_enforce option \"%s\" is given more than once for table \"%s\"",
							opt, relname)));
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown fence_enforce option \"%s\" for table \"%s\"",
							args[i], relname),
					 errhint("The arguments are the fence column, then any of on_stale=error, on_stale=skip, lease=NAME, strict, require_token.")));
	}

	if (cfg->strict && cfg->lease == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fence_enforce option \"strict\" on table \"%s\" needs a lease",
						relname),
				 errhint("Name the lease whose current token writes must carry, e.g. lease=lock:%s.",
						 relname)));
}

/*
 * BEFORE row triggers fire in the byte order of their names.  One that
 * fires after a fence trigger, on an event the fence trigger handles, could
 * change or drop the row the fence trigger has just checked and stamped (put
 * back the old fence, so that a stale writer passes next time), so such a
 * table is refused: by fence_protect(), and by the trigger when it is
 * (re)loaded after the table's triggers changed.  Other fence_enforce
 * triggers (another fence column) are exempt: they touch only their column.
 * A disabled trigger does not fire; enabling it invalidates the table, and
 * the fence trigger checks again.
 */
void
FenceEnforceRefuseLaterTriggers(Relation rel, const char *tgname, int16 events,
					  Oid fence_foid)
{
	TriggerDesc *trigdesc = rel->trigdesc;

	if (trigdesc == NULL)
		return;
	for (int i = 0; i < trigdesc->numtriggers; i++)
	{
		Trigger    *t = &trigdesc->triggers[i];

		if (!TRIGGER_FOR_ROW(t->tgtype) || !TRIGGER_FOR_BEFORE(t->tgtype) ||
			(t->tgtype & events) == 0 || t->tgenabled == TRIGGER_DISABLED ||
			t->tgfoid == fence_foid || strcmp(t->tgname, tgname) <= 0)
			continue;
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("trigger \"%s\" on table \"%s\" fires after fence trigger \"%s\"",
						t->tgname, RelationGetRelationName(rel), tgname),
				 errdetail("BEFORE row triggers fire in the byte order of their names; one that fires after the fence trigger could change the row it checked."),
				 errhint("Rename trigger \"%s\" so that its name sorts before \"%s\".",
						 t->tgname, tgname)));
	}
}

/*
 * The root of a trigger's clones: the trigger fence_protect() created on the
 * partitioned table that a partition's trigger was cloned from (through
 * every level of partitioning), or the trigger itself.
 */
static Oid
trigger_family(Trigger *trigger)
{
	Oid			tgoid = trigger->tgoid;
	Relation	tgrel;

	if (!trigger->tgisclone)
		return tgoid;
	tgrel = table_open(TriggerRelationId, AccessShareLock);
	for (;;)
	{
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tuple;
		Oid			parent = InvalidOid;

		CHECK_FOR_INTERRUPTS();
		ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber,
					F_OIDEQ, ObjectIdGetDatum(tgoid));
		scan = systable_beginscan(tgrel, TriggerOidIndexId, true, NULL, 1, &key);
		tuple = systable_getnext(scan);
		if (HeapTupleIsValid(tuple))
			parent = ((Form_pg_trigger) GETSTRUCT(tuple))->tgparentid;
		systable_endscan(scan);
		if (!OidIsValid(parent))
			break;
		tgoid = parent;
	}
	table_close(tgrel, AccessShareLock);
	return tgoid;
}

/* The cache entry of the trigger being fired, (re)built if needed. */
EnforceTrigger *
FenceEnforceGetTrigger(FunctionCallInfo fcinfo, TriggerData *trigdata)
{
	Trigger    *trigger = trigdata->tg_trigger;
	Relation	rel = trigdata->tg_relation;
	EnforceTrigger *et = (EnforceTrigger *) fcinfo->flinfo->fn_extra;
	bool		found;
	MemoryContext oldcxt;

	/* Fast path: this call site saw the same, still valid, entry before. */
	if (likely(et != NULL && et->valid && et->tgoid == trigger->tgoid &&
			   et->natts == RelationGetDescr(rel)->natts))
		return et;

	if (enforce_cache == NULL)
	{
		HASHCTL		ctl;

		enforce_cache_cxt = AllocSetContextCreate(TopMemoryContext,
												  "fence trigger cache",
												  ALLOCSET_DEFAULT_SIZES);
		enforce_graveyard_cxt = AllocSetContextCreate(enforce_cache_cxt,
													  "fence trigger graveyard",
													  ALLOCSET_SMALL_SIZES);
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(EnforceTrigger);
		ctl.hcxt = enforce_cache_cxt;
		enforce_cache = hash_create("fence trigger cache", 64, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(EnforceRel);
		enforce_rels = hash_create("fence trigger cache tables", 64, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}

	et = hash_search(enforce_cache, &trigger->tgoid, HASH_ENTER, &found);
	if (!found)
	{
		et->valid = false;
		et->linked = false;
		et->relid = InvalidOid;
		et->cxt = NULL;
		enforce_garbage = true; /* swept if it is never built */
	}
	if (!et->valid || et->natts != RelationGetDescr(rel)->natts)
	{
		/*
		 * Parse into a fresh context under the current (short-lived) one, so
		 * that a failed parse leaves nothing behind; keep it once it worked.
		 */
		MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
												  "fence trigger",
												  ALLOCSET_SMALL_SIZES);
		EnforceConfig cfg;
		Oid			family;

		oldcxt = MemoryContextSwitchTo(cxt);
		FenceEnforceParseArgs(rel, trigger->tgnargs, trigger->tgargs, &cfg);
		FenceEnforceRefuseLaterTriggers(rel, trigger->tgname,
							  trigger->tgtype & (TRIGGER_TYPE_INSERT |
												 TRIGGER_TYPE_UPDATE |
												 TRIGGER_TYPE_DELETE),
							  trigger->tgfoid);
		family = trigger_family(trigger);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextSetParent(cxt, enforce_cache_cxt);

		if (et->cxt != NULL)
		{
			MemoryContextSetParent(et->cxt, enforce_graveyard_cxt);
			enforce_garbage = true;
		}
		if (!et->linked)
		{
			Oid			relid = RelationGetRelid(rel);
			EnforceRel *r = hash_search(enforce_rels, &relid, HASH_ENTER,
										&found);

			if (!found)
				dlist_init(&r->triggers);
			dlist_push_tail(&r->triggers, &et->rel_node);
			et->linked = true;
		}
		et->cxt = cxt;
		et->cfg = cfg;
		et->relid = RelationGetRelid(rel);
		et->natts = RelationGetDescr(rel)->natts;
		et->values = MemoryContextAlloc(cxt, sizeof(Datum) * Max(et->natts, 1));
		et->isnull = MemoryContextAlloc(cxt, sizeof(bool) * Max(et->natts, 1));
		et->colhash = MemoryContextAlloc(cxt, sizeof(uint64) * Max(et->natts, 1));
		for (int i = 0; i < et->natts; i++)
		{
			const char *name = NameStr(TupleDescAttr(RelationGetDescr(rel), i)->attname);

			et->colhash[i] = hash_bytes_extended((const unsigned char *) name,
												 strlen(name), 0);
		}
		et->family = family;
		et->valid = true;
	}
	fcinfo->flinfo->fn_extra = et;
	return et;
}
