/*-------------------------------------------------------------------------
 *
 * enforce.c
 *		The fence_enforce() trigger: rejects writes that carry a stale
 *		fencing token, and re-checks strict leases at COMMIT.  Also
 *		fence_protect() and fence_unprotect(), which create and drop the
 *		trigger for you.
 *
 * The trigger is the guarantee half of fence: a worker that paused past its
 * lease still has its old token in effect, and the storage rejects it.  Per
 * row:
 *
 *	T, the write's token (the rule is spelled out where fence_enforce()
 *	works it out, and the halves of a partition move in MoveMemo's comment).
 *	UPDATE and DELETE with T below the row's stored fence are
 *	stale: LF001, or the row is left out with on_stale=skip.  Otherwise the
 *	row is stamped with T.  No token: allowed unless require_token (LF003).
 *	strict: T must also be the current live token of the trigger's lease
 *	(LF002), and the transaction re-checks those leases at COMMIT.
 *
 * It runs for every row of every write to a protected table, so the
 * per-row path does no catalog lookups and no SPI: what the trigger
 * arguments say (column number and type, options, the parsed lease name) is
 * worked out once per trigger and kept in a cache keyed by the trigger's
 * OID, which a relcache invalidation of the table marks stale.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "lib/ilist.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "fence.h"

/* What kind of column holds the fence. */
typedef enum FenceColType
{
	FENCE_COL_TOKEN,			/* fence_token */
	FENCE_COL_INT8,				/* bigint */
	FENCE_COL_INT4				/* integer */
} FenceColType;

/* One piece of a lease name: literal text, or a {column} of the row. */
typedef enum LeasePartKind
{
	LEASE_PART_LITERAL,
	LEASE_PART_INT2,			/* smallint column: formatted without fmgr */
	LEASE_PART_INT4,			/* integer column: likewise */
	LEASE_PART_INT8,			/* bigint column: likewise */
	LEASE_PART_TEXT,			/* text or varchar column: its bytes */
	LEASE_PART_DATE,			/* date: ISO, whatever DateStyle says */
	LEASE_PART_TIMESTAMP,		/* timestamp: likewise */
	LEASE_PART_TIMESTAMPTZ,		/* timestamptz: likewise, and in UTC */
	LEASE_PART_OTHER			/* a type whose output function depends on
								 * no setting (see placeholder_kind) */
} LeasePartKind;

typedef struct LeasePart
{
	LeasePartKind kind;
	const char *text;			/* literal text, or the column's name */
	int			len;			/* length of a literal */
	AttrNumber	attnum;			/* a placeholder's column */
	FmgrInfo	outfunc;		/* LEASE_PART_OTHER: output function */
} LeasePart;

/* What a fence_enforce trigger's arguments say, checked against its table. */
typedef struct EnforceConfig
{
	const char *colname;		/* the fence column */
	AttrNumber	attnum;
	FenceColType coltype;
	bool		skip;			/* on_stale=skip (else error) */
	bool		strict;
	bool		require_token;
	const char *lease;			/* lease name as written, or NULL */
	int			nparts;			/* lease name pieces */
	LeasePart  *parts;
	bool		lease_has_columns;	/* any {column} placeholders? */
	const char *static_key;		/* lease name without placeholders */
	int			static_keylen;
} EnforceConfig;

/* The cache entry of one trigger (one per partition for a partitioned table). */
typedef struct EnforceTrigger
{
	Oid			tgoid;			/* hash key: pg_trigger OID */
	bool		valid;			/* false after a relcache invalidation */
	bool		linked;			/* in its table's list (rel_node) */
	dlist_node	rel_node;
	Oid			relid;
	MemoryContext cxt;			/* everything below lives here */
	EnforceConfig cfg;
	Oid			family;			/* root trigger of its protection (MoveMemo) */
	int			natts;			/* tuple width the arrays below fit */
	Datum	   *values;			/* scratch space for stamping a row */
	bool	   *isnull;
	uint64	   *colhash;		/* per column, a hash of its name */
} EnforceTrigger;

/* Where the write's token came from (for messages). */
typedef enum TokenSource
{
	TOKEN_NONE,
	TOKEN_FROM_COLUMN,			/* UPDATE set the fence column */
	TOKEN_IN_EFFECT,			/* the session's token in effect */
	TOKEN_GIVEN					/* INSERT gave the fence column a value */
} TokenSource;

/*
 * A (lease, token) pair a strict write was accepted under, to re-check at
 * COMMIT.  The key is fixed-size and zero-padded so that it hashes as bytes.
 */
typedef struct StrictKey
{
	FenceToken	token;
	int			keylen;
	char		key[FENCE_MAX_KEY_LEN];
} StrictKey;

typedef struct StrictWrite
{
	StrictKey	k;				/* hash key */
	SubTransactionId subid;		/* oldest open subtransaction that wrote */
	Oid			relid;			/* a table written under it, for messages */
} StrictWrite;

/* The trigger name fence_protect() uses: sorts after other BEFORE triggers. */
#define FENCE_TRIGGER_NAME "zz_fence_enforce"

/*
 * Per-trigger cache, in TopMemoryContext.  enforce_rels lists each table's
 * entries, so that an invalidation finds them without a scan of the whole
 * cache.  An invalidated entry stays (a trigger call may be reading it)
 * until the transaction ends, when enforce_sweep() frees it: a dropped
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
static bool enforce_garbage = false;	/* something for enforce_sweep() */

/* Strict writes of the current transaction (in TopTransactionContext). */
static HTAB *strict_writes = NULL;
static SubTransactionId strict_max_subid = InvalidSubTransactionId;
/*
 * The last pair checked and recorded, with the lease table's stamp of it.
 * A bulk write under one lease looks the lease up again only when the
 * stamp no longer holds (see FenceLeaseStampHolds): the check stays exact
 * for every row, at the cost of an atomic read instead of a lock.
 */
static bool strict_last_valid = false;
static StrictKey strict_last;
static FenceLeaseStamp strict_last_stamp;

/*
 * An UPDATE that moves a row to another partition runs as three row writes,
 * each firing a trigger: the UPDATE on the old partition, then a DELETE
 * there and an INSERT into the new one.  The UPDATE decides (its token, its
 * checks); the two halves must carry exactly that decision, not work out a
 * token of their own (the token in effect may differ from the one the
 * statement set, and the INSERT would take the token in effect over the
 * value given).  So each UPDATE of a partition's row leaves a memo, which
 * the DELETE of the same row version by the same trigger takes, and the
 * INSERT half takes from it.
 *
 * The decision holds only where it was made: under one protection, the
 * trigger fence_protect() put on a partitioned table and its clones on the
 * partitions, which share the options.  A memo names that protection (its
 * root trigger, the "family"), so a partition protected on its own, with
 * options of its own, never takes the decision of another partition's
 * trigger: a row moved into it is judged as a direct INSERT.
 *
 * And only for its own row.  The INSERT half comes right after the DELETE
 * half unless another BEFORE INSERT trigger of the new partition vetoes
 * it; then the next INSERT of the family, in the same statement (a
 * writable CTE), is another row.  The memo keeps a fingerprint of the row
 * the UPDATE let through, and an INSERT whose row differs is judged as
 * what it is.  (A BEFORE INSERT trigger of the new partition that changes
 * the row makes its INSERT half a direct INSERT too: safe, if stricter.)
 *
 * A memo is one per family and executor nesting level, and any other
 * firing of the family at that level ends it; it is forgotten when the
 * executor run that made it returns: a memo left behind by an UPDATE that
 * did not happen (a later BEFORE trigger vetoed it) cannot reach a DELETE
 * of a later statement, and statements that other BEFORE triggers run
 * between the halves (an audit trigger's INSERT) run one level deeper and
 * neither see nor end it.  (The command counter would not do: each of those
 * statements advances it.)
 */
typedef enum MoveStage
{
	MOVE_FREE,					/* slot unused */
	MOVE_UPDATED,				/* the UPDATE half accepted the row */
	MOVE_DELETED				/* the DELETE half passed; INSERT next */
} MoveStage;

typedef struct MoveMemo
{
	MoveStage	stage;
	int			depth;			/* exec_depth when made */
	Oid			family;			/* root trigger of the protection */
	Oid			tgoid;			/* the trigger that left it, */
	Oid			relid;			/* on the old partition, */
	ItemPointerData tid;		/* for this row version */
	uint64		fingerprint;	/* the new row, as the UPDATE let it through */
	bool		has_token;
	FenceToken	token;
} MoveMemo;

#define MOVE_MEMO_SLOTS 4
static MoveMemo move_memo[MOVE_MEMO_SLOTS];

/* How many ExecutorRun calls this backend is inside of. */
static int	exec_depth = 0;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;

/*
 * Row counts for fence_stats, kept here and added to the shared counters
 * when the transaction ends: one atomic add per transaction, not per row.
 */
static uint64 count_accepted = 0;
static uint64 count_rejected = 0;
static uint64 count_skipped = 0;

static void enforce_relcache_callback(Datum arg, Oid relid);
#if PG_VERSION_NUM >= 180000
static void enforce_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction,
								uint64 count);
#else
static void enforce_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction,
								uint64 count, bool execute_once);
#endif
static void enforce_xact_callback(XactEvent event, void *arg);
static void enforce_subxact_callback(SubXactEvent event,
									 SubTransactionId mySubid,
									 SubTransactionId parentSubid,
									 void *arg);

/*
 * Called from _PG_init in every process that loads the library (preloaded
 * or not): the callbacks are per process.
 */
void
FenceEnforceInit(void)
{
	CacheRegisterRelcacheCallback(enforce_relcache_callback, (Datum) 0);
	RegisterXactCallback(enforce_xact_callback, NULL);
	RegisterSubXactCallback(enforce_subxact_callback, NULL);
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = enforce_ExecutorRun;
}

/* An executor run returns or fails: forget the memos made in it. */
static void
move_memo_leave_level(void)
{
	for (int i = 0; i < MOVE_MEMO_SLOTS; i++)
	{
		if (move_memo[i].depth >= exec_depth)
			move_memo[i].stage = MOVE_FREE;
	}
	exec_depth--;
}

/*
 * Counts executor nesting, for the move memos: when a run returns (or
 * fails), the memos made at its level are forgotten.
 */
static void
#if PG_VERSION_NUM >= 180000
enforce_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction,
					uint64 count)
#else
enforce_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction,
					uint64 count, bool execute_once)
#endif
{
	exec_depth++;
	PG_TRY();
	{
#if PG_VERSION_NUM >= 180000
		if (prev_ExecutorRun)
			prev_ExecutorRun(queryDesc, direction, count);
		else
			standard_ExecutorRun(queryDesc, direction, count);
#else
		if (prev_ExecutorRun)
			prev_ExecutorRun(queryDesc, direction, count, execute_once);
		else
			standard_ExecutorRun(queryDesc, direction, count, execute_once);
#endif
	}
	PG_CATCH();
	{
		move_memo_leave_level();
		PG_RE_THROW();
	}
	PG_END_TRY();
	move_memo_leave_level();
}

/*
 * A table's definition or triggers changed: its triggers must be parsed
 * again.  Only marks entries (no allocation, no error): enforce_sweep()
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
static void
enforce_sweep(void)
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
static void
parse_trigger_args(Relation rel, int nargs, char **args, EnforceConfig *cfg)
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
static void
refuse_later_triggers(Relation rel, const char *tgname, int16 events,
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
static EnforceTrigger *
get_trigger_entry(FunctionCallInfo fcinfo, TriggerData *trigdata)
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
		parse_trigger_args(rel, trigger->tgnargs, trigger->tgargs, &cfg);
		refuse_later_triggers(rel, trigger->tgname,
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

/* ----------------------------------------------------------------
 * The per-row rule
 * ----------------------------------------------------------------
 */

/* A fence column value as a token; negative values are an error. */
static FenceToken
datum_to_token(EnforceTrigger *et, Relation rel, Datum value, bool stored)
{
	int64		v;

	if (et->cfg.coltype == FENCE_COL_INT4)
		v = DatumGetInt32(value);
	else
		v = DatumGetInt64(value);
	if (unlikely(v < 0))
	{
		if (stored)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("row of table \"%s\" has a negative fence in column \"%s\"",
							RelationGetRelationName(rel), et->cfg.colname),
					 errdetail("The row's fence is %lld; fences are 0 or greater, so this row cannot be compared with a fencing token.",
							   (long long) v),
					 errhint("Repair the row with the trigger disabled (ALTER TABLE ... DISABLE TRIGGER), and add CHECK (%s >= 0).",
							 et->cfg.colname)));
		else
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("fencing token cannot be negative"),
					 errdetail("The write sets fence column \"%s\" of table \"%s\" to %lld.",
							   et->cfg.colname, RelationGetRelationName(rel),
							   (long long) v)));
	}
	return (FenceToken) v;
}

/* A token as a value of the fence column; too big for integer is an error. */
static Datum
token_to_datum(EnforceTrigger *et, Relation rel, FenceToken token)
{
	if (et->cfg.coltype == FENCE_COL_INT4)
	{
		if (unlikely(token > PG_INT32_MAX))
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("fencing token does not fit in integer fence column \"%s\" of table \"%s\"",
							et->cfg.colname, RelationGetRelationName(rel)),
					 errdetail("The token is %lld; an integer column holds at most %d.",
							   (long long) token, PG_INT32_MAX),
					 errhint("Make the fence column bigint or fence_token.")));
		return Int32GetDatum((int32) token);
	}
	return Int64GetDatum(token);
}

/*
 * A copy of "row" with the fence column set.  The scratch arrays of the
 * cache entry save two allocations per row over heap_modify_tuple().
 */
static HeapTuple
set_fence_column(EnforceTrigger *et, Relation rel, HeapTuple row,
				 Datum value, bool isnull)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	HeapTuple	result;

	heap_deform_tuple(row, tupdesc, et->values, et->isnull);
	et->values[et->cfg.attnum - 1] = value;
	et->isnull[et->cfg.attnum - 1] = isnull;
	result = heap_form_tuple(tupdesc, et->values, et->isnull);
	result->t_data->t_ctid = row->t_data->t_ctid;
	result->t_self = row->t_self;
	result->t_tableOid = row->t_tableOid;
	return result;
}

/*
 * The byte offset of attribute i in a tuple without NULLs that the tuple
 * descriptor has cached, or -1 while unknown.  PostgreSQL 18 moved the
 * cached offset out of pg_attribute's struct into the compact attributes.
 */
#if PG_VERSION_NUM >= 180000
#define fence_attcacheoff(tupdesc, i) \
	(TupleDescCompactAttr((tupdesc), (i))->attcacheoff)
#else
#define fence_attcacheoff(tupdesc, i) \
	(TupleDescAttr((tupdesc), (i))->attcacheoff)
#endif

/*
 * Where the fence column's bytes start in "row"'s data area, or -1 if the
 * column is NULL or not physically in the tuple (added later with a
 * default).  Walks the attributes before it, unless their offsets are fixed.
 */
static int
fence_data_offset(EnforceTrigger *et, TupleDesc tupdesc, HeapTuple row)
{
	HeapTupleHeader th = row->t_data;
	int			target = et->cfg.attnum - 1;
	Form_pg_attribute att = TupleDescAttr(tupdesc, target);
	bool		hasnulls = HeapTupleHasNulls(row);
	char	   *tp;
	int			off = 0;

	if (et->cfg.attnum > HeapTupleHeaderGetNatts(th))
		return -1;
	if (hasnulls && att_isnull(target, th->t_bits))
		return -1;
	if (!hasnulls && fence_attcacheoff(tupdesc, target) >= 0)
		return fence_attcacheoff(tupdesc, target);

	tp = (char *) th + th->t_hoff;
	for (int i = 0; i < target; i++)
	{
		Form_pg_attribute a = TupleDescAttr(tupdesc, i);

		if (hasnulls && att_isnull(i, th->t_bits))
			continue;
		off = att_align_pointer(off, a->attalign, a->attlen, tp + off);
		off = att_addlength_pointer(off, a->attlen, tp + off);
	}
	return att_align_nominal(off, att->attalign);
}

/*
 * "row" stamped with a token: the row itself if it already holds it, else a
 * copy.  When the row has a value there already, the copy is patched in
 * place (same width): cheaper than taking the row apart and forming it
 * again, which is the fallback for a NULL.
 */
static HeapTuple
stamp_row(EnforceTrigger *et, Relation rel, HeapTuple row, Datum stamp)
{
	int			off = fence_data_offset(et, RelationGetDescr(rel), row);
	HeapTuple	result;
	char	   *p;

	if (off < 0)
		return set_fence_column(et, rel, row, stamp, false);
	p = (char *) row->t_data + row->t_data->t_hoff + off;
	if (et->cfg.coltype == FENCE_COL_INT4)
	{
		int32		v = DatumGetInt32(stamp);

		if (memcmp(p, &v, sizeof(v)) == 0)
			return row;
		result = heap_copytuple(row);
		memcpy((char *) result->t_data + result->t_data->t_hoff + off, &v, sizeof(v));
	}
	else
	{
		int64		v = DatumGetInt64(stamp);

		if (memcmp(p, &v, sizeof(v)) == 0)
			return row;
		result = heap_copytuple(row);
		memcpy((char *) result->t_data + result->t_data->t_hoff + off, &v, sizeof(v));
	}
	return result;
}

/* The lease name of a row has outgrown FENCE_MAX_KEY_LEN: say how it starts. */
static void
key_too_long(EnforceTrigger *et, Relation rel, const char *buf, int len,
			 const char *s, int n)
{
	char		preview[FENCE_MAX_KEY_LEN * 2];
	int			plen;

	memcpy(preview, buf, len);
	memcpy(preview + len, s, Min(n, FENCE_MAX_KEY_LEN));
	plen = pg_mbcliplen(preview, len + Min(n, FENCE_MAX_KEY_LEN), 40);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("lease name for a row of table \"%s\" is longer than %d bytes",
					RelationGetRelationName(rel), FENCE_MAX_KEY_LEN),
			 errdetail("The fence trigger's lease name is \"%s\"; for this row it starts \"%.*s...\".",
					   et->cfg.lease, plen, preview)));
}

/* Append to the lease key being built, failing when it outgrows the limit. */
static inline void
key_append(EnforceTrigger *et, char *buf, int *len, const char *s, int n,
		   Relation rel)
{
	if (unlikely(*len + n > FENCE_MAX_KEY_LEN))
		key_too_long(et, rel, buf, *len, s, n);
	memcpy(buf + *len, s, n);
	*len += n;
}

/*
 * A date, timestamp or timestamptz as its output function prints it under
 * DateStyle ISO and, for timestamptz, TimeZone UTC, whatever the session
 * says.  buf has room for MAXDATELEN + 1 bytes.
 */
static void
render_datetime(LeasePartKind kind, Datum value, char *buf)
{
	struct pg_tm tm;
	fsec_t		fsec;

	if (kind == LEASE_PART_DATE)
	{
		DateADT		d = DatumGetDateADT(value);

		if (DATE_NOT_FINITE(d))
			EncodeSpecialDate(d, buf);
		else
		{
			j2date(d + POSTGRES_EPOCH_JDATE, &tm.tm_year, &tm.tm_mon, &tm.tm_mday);
			EncodeDateOnly(&tm, USE_ISO_DATES, buf);
		}
		return;
	}

	/* A timestamptz is microseconds since 2000-01-01 UTC: no zone applied. */
	{
		Timestamp	ts = DatumGetTimestamp(value);

		if (TIMESTAMP_NOT_FINITE(ts))
			EncodeSpecialTimestamp(ts, buf);
		else if (timestamp2tm(ts, NULL, &tm, &fsec, NULL, NULL) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("timestamp out of range")));
		else
		{
			/* Known to be UTC: EncodeDateTime prints no zone otherwise. */
			tm.tm_isdst = 0;
			EncodeDateTime(&tm, fsec, kind == LEASE_PART_TIMESTAMPTZ, 0, NULL,
						   USE_ISO_DATES, buf);
		}
	}
}

/*
 * The trigger's lease name for this row: the static name, or the template
 * filled from the row.  buf has room for FENCE_MAX_KEY_LEN bytes.
 */
static const char *
lease_key_for_row(EnforceTrigger *et, Relation rel, HeapTuple row,
				  char *buf, int *keylen)
{
	EnforceConfig *cfg = &et->cfg;
	int			len = 0;

	if (!cfg->lease_has_columns)
	{
		*keylen = cfg->static_keylen;
		return cfg->static_key;
	}

	for (int i = 0; i < cfg->nparts; i++)
	{
		LeasePart  *part = &cfg->parts[i];
		Datum		value;
		bool		isnull;
		char		num[MAXINT8LEN + 1];

		if (part->kind == LEASE_PART_LITERAL)
		{
			key_append(et, buf, &len, part->text, part->len, rel);
			continue;
		}
		value = heap_getattr(row, part->attnum, RelationGetDescr(rel), &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("column \"%s\" of a row of table \"%s\" is null, so the row has no lease name",
							part->text, RelationGetRelationName(rel)),
					 errdetail("The fence trigger's lease name is \"%s\".", cfg->lease)));
		switch (part->kind)
		{
			case LEASE_PART_INT2:
				pg_itoa(DatumGetInt16(value), num);
				key_append(et, buf, &len, num, strlen(num), rel);
				break;
			case LEASE_PART_INT4:
				pg_ltoa(DatumGetInt32(value), num);
				key_append(et, buf, &len, num, strlen(num), rel);
				break;
			case LEASE_PART_INT8:
				pg_lltoa(DatumGetInt64(value), num);
				key_append(et, buf, &len, num, strlen(num), rel);
				break;
			case LEASE_PART_TEXT:
				{
					text	   *t = DatumGetTextPP(value);

					key_append(et, buf, &len, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), rel);
				}
				break;
			case LEASE_PART_DATE:
			case LEASE_PART_TIMESTAMP:
			case LEASE_PART_TIMESTAMPTZ:
				{
					char		when[MAXDATELEN + 1];

					render_datetime(part->kind, value, when);
					key_append(et, buf, &len, when, strlen(when), rel);
				}
				break;
			case LEASE_PART_OTHER:
				{
					char	   *s = OutputFunctionCall(&part->outfunc, value);

					key_append(et, buf, &len, s, strlen(s), rel);
				}
				break;
			case LEASE_PART_LITERAL:
				break;
		}
	}
	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease name for a row of table \"%s\" is empty",
						RelationGetRelationName(rel)),
				 errdetail("The fence trigger's lease name is \"%s\".", cfg->lease)));
	*keylen = len;
	return buf;
}

/*
 * The errdetail of a stale write (LF001).  One whole sentence per way the
 * write came by its token, so that each can be translated.
 */
static int
errdetail_stale(TokenSource source, FenceToken token, FenceToken stored)
{
	if (source == TOKEN_FROM_COLUMN)
		return errdetail("The statement sets the fence column to token %lld, and a writer with token %lld has written this row since.",
						 (long long) token, (long long) stored);
	return errdetail("The token in effect for this session is %lld, and a writer with token %lld has written this row since.",
					 (long long) token, (long long) stored);
}

/* The errdetail of a strict write whose token is not the lease's (LF002). */
static int
errdetail_not_held(TokenSource source, FenceToken token,
				   FenceLeaseStatus status)
{
	switch (source)
	{
		case TOKEN_FROM_COLUMN:
			return errdetail("The statement sets the fence column to token %lld, whose status for this lease is \"%s\".",
							 (long long) token, FenceLeaseStatusName(status));
		case TOKEN_GIVEN:
			return errdetail("The row gives the fence column token %lld, whose status for this lease is \"%s\".",
							 (long long) token, FenceLeaseStatusName(status));
		case TOKEN_IN_EFFECT:
		case TOKEN_NONE:
			break;
	}
	return errdetail("The token in effect for this session is %lld, whose status for this lease is \"%s\".",
					 (long long) token, FenceLeaseStatusName(status));
}

/*
 * Was this (lease, token) found held, and recorded, by a strict write of
 * this transaction, and is it certainly still held?
 */
static inline bool
strict_still_held(const char *key, int keylen, FenceToken token)
{
	return strict_last_valid && strict_last.token == token &&
		strict_last.keylen == keylen &&
		memcmp(strict_last.key, key, keylen) == 0 &&
		FenceLeaseStampHolds(&strict_last_stamp);
}

/*
 * Remember a strict write's (lease, token), found held with the given
 * stamp, to check it again at COMMIT.
 */
static void
record_strict_write(const char *key, int keylen, FenceToken token, Oid relid,
					const FenceLeaseStamp *stamp)
{
	StrictKey	k;
	StrictWrite *w;
	bool		found;
	SubTransactionId subid = GetCurrentSubTransactionId();

	if (strict_writes == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(StrictKey);
		ctl.entrysize = sizeof(StrictWrite);
		ctl.hcxt = TopTransactionContext;
		strict_writes = hash_create("fence strict writes", 16, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		strict_max_subid = InvalidSubTransactionId;
	}

	memset(&k, 0, sizeof(k));
	k.token = token;
	k.keylen = keylen;
	memcpy(k.key, key, keylen);
	w = hash_search(strict_writes, &k, HASH_ENTER, &found);
	if (!found || subid < w->subid)
	{
		w->subid = subid;
		w->relid = relid;
	}
	if (subid > strict_max_subid)
		strict_max_subid = subid;
	strict_last = k;
	strict_last_valid = true;
	strict_last_stamp = *stamp;
}

/*
 * strict: the status of (key, token), HELD if the token is the lease's live
 * token.  A write accepted under it is recorded for the COMMIT-time check.
 */
static FenceLeaseStatus
strict_check(const char *key, int keylen, FenceToken token, Oid relid)
{
	FenceLeaseStamp stamp;
	FenceLeaseStatus status;

	if (strict_still_held(key, keylen, token))
		return FENCE_LEASE_HELD;
	status = FenceLeaseGetStatus(MyDatabaseId, key, keylen, token, &stamp);
	if (status == FENCE_LEASE_HELD)
		record_strict_write(key, keylen, token, relid, &stamp);
	return status;
}

/*
 * strict, an UPDATE of a table with one lease per row: if the UPDATE changes
 * the row's lease name, the write must also hold the lease of the row as it
 * was (its token in effect for that name, live), else a holder of one lease
 * could take another's row by rewriting the column its lease name is made
 * of.  "newkey" is the lease of the row as it will be, already checked.
 * True if the write may go on; false if the row is to be skipped
 * (on_stale=skip); otherwise LF002.
 */
static bool
strict_holds_old_lease(EnforceTrigger *et, Relation rel, HeapTuple oldrow,
					   const char *newkey, int newkeylen)
{
	char		buf[FENCE_MAX_KEY_LEN];
	int			keylen;
	const char *key;
	FenceToken	token;
	FenceLeaseStatus status;

	key = lease_key_for_row(et, rel, oldrow, buf, &keylen);
	if (keylen == newkeylen && memcmp(key, newkey, keylen) == 0)
		return true;
	if (!FenceSessionTokenInEffect(key, keylen, &token))
	{
		if (et->cfg.skip)
			return false;
		count_rejected++;
		ereport(ERROR,
				(errcode(ERRCODE_FENCE_LEASE_NOT_HELD),
				 errmsg("update of table \"%s\" rejected: it moves the row from lease \"%.*s\", which the write does not hold",
						RelationGetRelationName(rel), keylen, key),
				 errdetail("The row's lease becomes \"%.*s\"; this session has no token for lease \"%.*s\".",
						   newkeylen, newkey, keylen, key),
				 errhint("Take lease \"%.*s\" as well before the update, or delete the row and insert it under the new lease.",
						 keylen, key)));
	}
	status = strict_check(key, keylen, token, RelationGetRelid(rel));
	if (status == FENCE_LEASE_HELD)
		return true;
	if (et->cfg.skip)
		return false;
	count_rejected++;
	ereport(ERROR,
			(errcode(ERRCODE_FENCE_LEASE_NOT_HELD),
			 errmsg("update of table \"%s\" rejected: it moves the row from lease \"%.*s\", which the write does not hold",
					RelationGetRelationName(rel), keylen, key),
			 errdetail("The row's lease becomes \"%.*s\"; the token in effect for lease \"%.*s\" is %lld, whose status for that lease is \"%s\".",
					   newkeylen, newkey, keylen, key, (long long) token,
					   FenceLeaseStatusName(status)),
			 errhint("Hold lease \"%.*s\" as well, with a token in effect for each lease name, or delete the row and insert it under the new lease.",
					 keylen, key)));
	return false;				/* keep compiler quiet */
}

/* Forget this transaction's strict writes (their memory goes with it). */
static void
forget_strict_writes(void)
{
	strict_writes = NULL;
	strict_max_subid = InvalidSubTransactionId;
	strict_last_valid = false;
}

/* The move memo of a protection (family) at this executor level, or NULL. */
static MoveMemo *
move_memo_find(Oid family)
{
	for (int i = 0; i < MOVE_MEMO_SLOTS; i++)
	{
		if (move_memo[i].stage != MOVE_FREE &&
			move_memo[i].depth == exec_depth &&
			move_memo[i].family == family)
			return &move_memo[i];
	}
	return NULL;
}

/*
 * A fingerprint of a row's values that does not depend on the order of its
 * columns (partitions may differ in it, and in dropped columns): the sum,
 * over the columns, of the column name's hash combined with the value's.
 * Values are hashed as stored, so a TOASTed value counts by its pointer.
 * Uses the entry's scratch arrays.
 */
static uint64
row_fingerprint(EnforceTrigger *et, Relation rel, HeapTuple row)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	uint64		fp = 0;

	heap_deform_tuple(row, tupdesc, et->values, et->isnull);
	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		Datum		d = et->values[i];
		uint64		h;

		if (att->attisdropped)
			continue;
		if (et->isnull[i])
			h = 0;
		else if (att->attbyval)
			h = hash_bytes_extended((const unsigned char *) &d, sizeof(d), 1);
		else if (att->attlen == -1)
		{
			const char *p = DatumGetPointer(d);

			if (VARATT_IS_EXTERNAL(p) || VARATT_IS_COMPRESSED(p))
				h = hash_bytes_extended((const unsigned char *) p,
										VARSIZE_ANY(p), 1);
			else
				h = hash_bytes_extended((const unsigned char *) VARDATA_ANY(p),
										VARSIZE_ANY_EXHDR(p), 1);
		}
		else if (att->attlen == -2)
			h = hash_bytes_extended((const unsigned char *) DatumGetCString(d),
									strlen(DatumGetCString(d)), 1);
		else
			h = hash_bytes_extended((const unsigned char *) DatumGetPointer(d),
									att->attlen, 1);
		fp += hash_combine64(et->colhash[i], h);
	}
	return fp;
}

/*
 * The UPDATE half of a possible move accepted "newrow", as it will be
 * written: remember the decision.  Four slots are plenty (a slot is in use
 * from a row's UPDATE to its INSERT, per protection and executor level);
 * should they all be taken, the first is reused, and its move falls back to
 * the halves' own rule.
 */
static void
move_memo_set(EnforceTrigger *et, TriggerData *trigdata, HeapTuple newrow,
			  bool has_token, FenceToken token)
{
	MoveMemo   *m = move_memo_find(et->family);

	for (int i = 0; m == NULL && i < MOVE_MEMO_SLOTS; i++)
	{
		if (move_memo[i].stage == MOVE_FREE)
			m = &move_memo[i];
	}
	if (m == NULL)
		m = &move_memo[0];
	m->stage = MOVE_UPDATED;
	m->depth = exec_depth;
	m->family = et->family;
	m->tgoid = trigdata->tg_trigger->tgoid;
	m->relid = RelationGetRelid(trigdata->tg_relation);
	m->tid = trigdata->tg_trigtuple->t_self;
	m->fingerprint = row_fingerprint(et, trigdata->tg_relation, newrow);
	m->has_token = has_token;
	m->token = token;
}

static void
move_memo_forget_all(void)
{
	for (int i = 0; i < MOVE_MEMO_SLOTS; i++)
		move_memo[i].stage = MOVE_FREE;
}

PG_FUNCTION_INFO_V1(fence_enforce);

/*
 * fence_enforce(): BEFORE INSERT OR UPDATE OR DELETE ... FOR EACH ROW.
 */
Datum
fence_enforce(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata;
	TriggerEvent event;
	Relation	rel;
	EnforceTrigger *et;
	EnforceConfig *cfg;
	HeapTuple	oldrow = NULL;	/* the stored row: UPDATE, DELETE */
	HeapTuple	newrow = NULL;	/* the row to write: INSERT, UPDATE */
	HeapTuple	keyrow;			/* the row the lease name is filled from */
	bool		is_insert,
				is_update;
	FenceToken	token = 0;
	TokenSource source = TOKEN_NONE;
	Datum		value;
	bool		isnull;
	bool		has_set = false;	/* UPDATE set the fence, not to NULL */
	FenceToken	set_token = 0;	/* ... to this */
	MoveMemo   *memo;
	const char *key = NULL;
	int			keylen = 0;
	char		keybuf[FENCE_MAX_KEY_LEN];

	/* How were we called? */
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fence_enforce() must be called as a trigger")));
	trigdata = (TriggerData *) fcinfo->context;
	event = trigdata->tg_event;
	rel = trigdata->tg_relation;
	if (unlikely(!TRIGGER_FIRED_BEFORE(event) || !TRIGGER_FIRED_FOR_ROW(event) ||
				 TRIGGER_FIRED_BY_TRUNCATE(event)))
	{
		Trigger    *trigger = trigdata->tg_trigger;

		/* The detail's words are SQL keywords, which are not translated. */
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fence_enforce trigger \"%s\" on table \"%s\" (fence column \"%s\") must be BEFORE INSERT OR UPDATE OR DELETE FOR EACH ROW",
						trigger->tgname, RelationGetRelationName(rel),
						trigger->tgnargs > 0 ? trigger->tgargs[0] : "fence"),
				 errdetail("It fired %s %s FOR EACH %s.",
						   TRIGGER_FIRED_BEFORE(event) ? "BEFORE" :
						   TRIGGER_FIRED_AFTER(event) ? "AFTER" : "INSTEAD OF",
						   TRIGGER_FIRED_BY_TRUNCATE(event) ? "TRUNCATE" :
						   TRIGGER_FIRED_BY_INSERT(event) ? "INSERT" :
						   TRIGGER_FIRED_BY_UPDATE(event) ? "UPDATE" : "DELETE",
						   TRIGGER_FIRED_FOR_ROW(event) ? "ROW" : "STATEMENT"),
				 errhint("Drop it and call fence_protect('%s'), which creates the trigger as it must be.",
						 RelationGetRelationName(rel))));
	}

	et = get_trigger_entry(fcinfo, trigdata);
	cfg = &et->cfg;

	is_insert = TRIGGER_FIRED_BY_INSERT(event);
	is_update = TRIGGER_FIRED_BY_UPDATE(event);
	if (is_insert)
		newrow = keyrow = trigdata->tg_trigtuple;
	else if (is_update)
	{
		oldrow = trigdata->tg_trigtuple;
		newrow = keyrow = trigdata->tg_newtuple;
	}
	else
		oldrow = keyrow = trigdata->tg_trigtuple;

	/*
	 * The DELETE and INSERT halves of an UPDATE that moves a row to another
	 * partition carry the UPDATE's decision, made and checked there (see
	 * MoveMemo); any other firing of this trigger ends its memo.
	 */
	memo = move_memo_find(et->family);
	if (memo != NULL)
	{
		if (!is_insert && !is_update && memo->stage == MOVE_UPDATED &&
			memo->tgoid == trigdata->tg_trigger->tgoid &&
			memo->relid == RelationGetRelid(rel) &&
			ItemPointerEquals(&memo->tid, &oldrow->t_self))
		{
			memo->stage = MOVE_DELETED;
			return PointerGetDatum(oldrow);
		}
		if (is_insert && memo->stage == MOVE_DELETED &&
			rel->rd_rel->relispartition &&
			memo->fingerprint == row_fingerprint(et, rel, newrow))
		{
			memo->stage = MOVE_FREE;
			if (!memo->has_token)
				return PointerGetDatum(newrow);
			return PointerGetDatum(stamp_row(et, rel, newrow,
											 token_to_datum(et, rel, memo->token)));
		}
		memo->stage = MOVE_FREE;
	}

	/*
	 * The write's token T.  UPDATE: a value the statement sets in the fence
	 * column, if it differs from the stored fence; else the token in
	 * effect; else the value set, equal to the stored fence (the holder
	 * writing again).  A value equal to the stored one is no token while one
	 * is in effect, because PostgreSQL cannot tell a statement that sets the
	 * fence from one that copies it: a MERGE hands every BEFORE UPDATE
	 * trigger the columns all of its UPDATE actions set (on 15 to 18), and
	 * "fence = CASE ... ELSE fence END" or an ORM saving every column back
	 * copy the stored value.  INSERT: the token in effect, else the value
	 * given.  DELETE: the token in effect.  A NULL is no token.
	 */
	if (is_update &&
		bms_is_member(cfg->attnum - FirstLowInvalidHeapAttributeNumber,
					  trigdata->tg_updatedcols))
	{
		value = heap_getattr(newrow, cfg->attnum, RelationGetDescr(rel), &isnull);
		if (!isnull)
		{
			FenceToken	stored = 0;

			set_token = datum_to_token(et, rel, value, false);
			has_set = true;
			value = heap_getattr(oldrow, cfg->attnum, RelationGetDescr(rel), &isnull);
			if (!isnull)
				stored = datum_to_token(et, rel, value, true);
			if (set_token != stored)
			{
				token = set_token;
				source = TOKEN_FROM_COLUMN;
			}
		}
	}
	if (source == TOKEN_NONE)
	{
		if (cfg->lease != NULL)
			key = lease_key_for_row(et, rel, keyrow, keybuf, &keylen);
		if (FenceSessionTokenInEffect(key, keylen, &token))
			source = TOKEN_IN_EFFECT;
		else if (has_set)
		{
			token = set_token;
			source = TOKEN_FROM_COLUMN;
		}
	}
	if (source == TOKEN_NONE && is_insert)
	{
		value = heap_getattr(newrow, cfg->attnum, RelationGetDescr(rel), &isnull);
		if (!isnull)
		{
			token = datum_to_token(et, rel, value, false);
			source = TOKEN_GIVEN;
		}
	}

	if (source == TOKEN_NONE)
	{
		/* No token: an operator's manual fix, unless a token is required. */
		if (cfg->require_token)
		{
			count_rejected++;
			ereport(ERROR,
					(errcode(ERRCODE_FENCE_TOKEN_REQUIRED),
					 errmsg("write to table \"%s\" carries no fencing token",
							RelationGetRelationName(rel)),
					 errdetail("Table \"%s\" is protected with require_token on fence column \"%s\".",
							   RelationGetRelationName(rel), cfg->colname),
					 errhint("Take a lease first, or call fence_use_token(), or set the fence column in the statement.")));
		}

		/*
		 * An UPDATE without a token keeps the row's stored fence, whatever
		 * NULL the statement set or value an earlier trigger put there: a
		 * fence only moves when a token moves it.
		 */
		if (is_update)
		{
			TupleDesc	tupdesc = RelationGetDescr(rel);
			Datum		newvalue;
			bool		newnull;

			value = heap_getattr(oldrow, cfg->attnum, tupdesc, &isnull);
			newvalue = heap_getattr(newrow, cfg->attnum, tupdesc, &newnull);
			if (isnull != newnull || (!isnull && value != newvalue))
				newrow = set_fence_column(et, rel, newrow, value, isnull);
			if (rel->rd_rel->relispartition)
				move_memo_set(et, trigdata, newrow, false, 0);
		}
		return PointerGetDatum(is_insert || is_update ? newrow : oldrow);
	}

	/* UPDATE and DELETE: a token below the row's fence is stale. */
	if (!is_insert)
	{
		FenceToken	stored = 0;

		value = heap_getattr(oldrow, cfg->attnum, RelationGetDescr(rel), &isnull);
		if (!isnull)
			stored = datum_to_token(et, rel, value, true);
		if (token < stored)
		{
			if (cfg->skip)
			{
				count_skipped++;
				return PointerGetDatum(NULL);
			}
			count_rejected++;
			ereport(ERROR,
					(errcode(ERRCODE_FENCE_STALE_TOKEN),
					 errmsg("stale fencing token for table \"%s\"",
							RelationGetRelationName(rel)),
					 errdetail_stale(source, token, stored),
					 errhint("A newer holder has taken over this lease; stop, and take the lease again before retrying.")));
		}
	}

	/* strict: T must be the current live token of the trigger's lease. */
	if (cfg->strict)
	{
		FenceLeaseStatus status;

		/*
		 * Strict mode reads this server's lease table.  Without the library
		 * preloaded there is none, and preloading it on a server that only
		 * stores fenced rows would not help: its table never sees the leases
		 * another server grants.  So the hint says where strict mode works.
		 */
		if (!fence_preloaded)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("strict mode of table \"%s\" needs this server's lease table",
							RelationGetRelationName(rel)),
					 errdetail("The fence library was not loaded at server start, so this server has no lease table in which to check the write's lease."),
					 errhint("Strict mode works only on the server that grants the leases, with fence in shared_preload_libraries; on a server that only stores fenced rows, protect the table without strict.")));
		if (key == NULL)
			key = lease_key_for_row(et, rel, keyrow, keybuf, &keylen);
		status = strict_check(key, keylen, token, RelationGetRelid(rel));
		if (status != FENCE_LEASE_HELD)
		{
			if (cfg->skip)
			{
				count_skipped++;
				return PointerGetDatum(NULL);
			}
			count_rejected++;
			ereport(ERROR,
					(errcode(ERRCODE_FENCE_LEASE_NOT_HELD),
					 errmsg("write to table \"%s\" rejected: lease \"%.*s\" is not held by the write's token",
							RelationGetRelationName(rel), keylen, key),
					 errdetail_not_held(source, token, status),
					 errhint("Stop, and take the lease again before retrying.")));
		}
		if (is_update && cfg->lease_has_columns &&
			!strict_holds_old_lease(et, rel, oldrow, key, keylen))
		{
			count_skipped++;
			return PointerGetDatum(NULL);
		}
	}

	count_accepted++;

	if (!is_insert && !is_update)
		return PointerGetDatum(oldrow);

	/* Stamp the row with T. */
	if (source != TOKEN_FROM_COLUMN)
		newrow = stamp_row(et, rel, newrow, token_to_datum(et, rel, token));

	/* A partition's row may be moving: its halves carry this token. */
	if (is_update && rel->rd_rel->relispartition)
		move_memo_set(et, trigdata, newrow, true, token);
	return PointerGetDatum(newrow);
}

/* ----------------------------------------------------------------
 * The COMMIT-time check of strict writes
 * ----------------------------------------------------------------
 */

/*
 * Every lease a strict write was accepted under must still be held by the
 * same token when the transaction commits (PREPARE is refused): a holder that
 * paused between its write and its COMMIT, and lost the lease meanwhile,
 * must not commit stale work.
 */
static void
check_strict_writes(void)
{
	HASH_SEQ_STATUS status;
	StrictWrite *w;

	if (strict_writes == NULL)
		return;
	hash_seq_init(&status, strict_writes);
	while ((w = hash_seq_search(&status)) != NULL)
	{
		FenceLeaseStatus st = FenceLeaseGetStatus(MyDatabaseId, w->k.key,
												  w->k.keylen, w->k.token,
												  NULL);

		if (st != FENCE_LEASE_HELD)
		{
			char	   *relname = get_rel_name(w->relid);

			hash_seq_term(&status);
			FenceDbCount(FENCE_STAT_COMMITS_ABORTED);
			ereport(ERROR,
					(errcode(ERRCODE_FENCE_LEASE_NOT_HELD),
					 errmsg("cannot commit: lease \"%.*s\" was lost after this transaction wrote under it",
							w->k.keylen, w->k.key),
					 errdetail("This transaction wrote rows of table \"%s\" in strict mode with token %lld, whose status is now \"%s\".",
							   relname ? relname : "?", (long long) w->k.token,
							   FenceLeaseStatusName(st)),
					 errhint("The transaction is rolled back.  Take the lease again before retrying.")));
		}
	}
}

static void
enforce_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			check_strict_writes();
			break;
		case XACT_EVENT_PRE_PREPARE:

			/*
			 * COMMIT PREPARED runs no extension code that could check the
			 * leases again, and may come any time later: a prepared strict
			 * write could commit after its lease passed on.
			 */
			if (strict_writes != NULL && hash_get_num_entries(strict_writes) > 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that wrote rows in strict mode"),
						 errdetail("COMMIT PREPARED does not check the lease again, and may run after the lease was lost."),
						 errhint("Commit the transaction directly, or write to tables protected without strict.")));
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			forget_strict_writes();
			move_memo_forget_all();
			enforce_sweep();
			FenceDbAdd(FENCE_STAT_WRITES_ACCEPTED, count_accepted);
			FenceDbAdd(FENCE_STAT_WRITES_REJECTED, count_rejected);
			FenceDbAdd(FENCE_STAT_WRITES_SKIPPED, count_skipped);
			count_accepted = count_rejected = count_skipped = 0;
			break;
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			break;
	}
}

/*
 * A rolled-back savepoint takes its strict writes with it; a released one
 * hands them to its parent.
 */
static void
enforce_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	HASH_SEQ_STATUS status;
	StrictWrite *w;

	if (event != SUBXACT_EVENT_COMMIT_SUB && event != SUBXACT_EVENT_ABORT_SUB)
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB)
		move_memo_forget_all();
	strict_last_valid = false;
	if (strict_writes == NULL || strict_max_subid < mySubid)
		return;

	hash_seq_init(&status, strict_writes);
	while ((w = hash_seq_search(&status)) != NULL)
	{
		if (w->subid < mySubid)
			continue;
		if (event == SUBXACT_EVENT_COMMIT_SUB)
			w->subid = parentSubid;
		else if (hash_search(strict_writes, &w->k, HASH_REMOVE, NULL) == NULL)
			elog(WARNING, "fence: strict write entry vanished");
	}
	strict_max_subid = parentSubid;
}

/* ----------------------------------------------------------------
 * fence_protect() and fence_unprotect()
 * ----------------------------------------------------------------
 */

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

/* Fail with 22023 when a fence_protect argument is NULL. */
static void
require_arg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be null", name)));
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
	parse_trigger_args(rel, nargs, args, &cfg);
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

		refuse_later_triggers(part, FENCE_TRIGGER_NAME,
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
