/*-------------------------------------------------------------------------
 *
 * enforce.c
 *		The fence_enforce() trigger: the rule it applies to each row, and
 *		the rows that move between partitions.
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
 *	(LF002), and the transaction re-checks those leases at COMMIT
 *	(enforce_commit.c).
 *
 * It runs for every row of every write to a protected table, so the
 * per-row path does no catalog lookups and no SPI: what the trigger
 * arguments say (column number and type, options, the parsed lease name) is
 * worked out once per trigger and kept in a cache keyed by the trigger's
 * OID, which a relcache invalidation of the table marks stale
 * (enforce_cache.c).  fence_protect() creates the trigger (protect.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/xact.h"
#include "commands/trigger.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "trigger.h"

/* Where the write's token came from (for messages). */
typedef enum TokenSource
{
	TOKEN_NONE,
	TOKEN_FROM_COLUMN,			/* UPDATE set the fence column */
	TOKEN_IN_EFFECT,			/* the session's token in effect */
	TOKEN_GIVEN					/* INSERT gave the fence column a value */
} TokenSource;

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
 * The statement each of the outermost executor levels runs, so that the
 * trigger can tell an INSERT that moves a row between partitions from an
 * INSERT (running_move_insert).  Deeper levels are not kept: their INSERTs
 * are judged by the move memo alone.
 */
#define EXEC_LEVELS_KEPT 32
static QueryDesc *exec_query[EXEC_LEVELS_KEPT];

/*
 * Row counts for fence_stats, kept here and added to the shared counters
 * when the transaction ends: one atomic add per transaction, not per row.
 */
static uint64 count_accepted = 0;
static uint64 count_skipped = 0;

/* Rejected writes, by SQLSTATE: LF001, LF002, LF003. */
static uint64 count_rejected[3] = {0, 0, 0};

static inline void
count_rejection(FenceStat kind)
{
	count_rejected[kind - FENCE_STAT_REJECTED_STALE]++;
}

#if PG_VERSION_NUM >= 180000
static void enforce_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction,
								uint64 count);
#else
static void enforce_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction,
								uint64 count, bool execute_once);
#endif
static uint64 row_fingerprint(EnforceTrigger *et, Relation rel, HeapTuple row);
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
	FenceEnforceCacheInit();
	FenceEnforceCommitInit();
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
	if (exec_depth <= EXEC_LEVELS_KEPT)
		exec_query[exec_depth - 1] = NULL;
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
	if (exec_depth <= EXEC_LEVELS_KEPT)
		exec_query[exec_depth - 1] = queryDesc;
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

/* The errdetail of a write whose lease has a newer token (LF001). */
static int
errdetail_superseded(TokenSource source, FenceToken token, const char *key,
					 int keylen)
{
	switch (source)
	{
		case TOKEN_FROM_COLUMN:
			return errdetail("The statement sets the fence column to token %lld, and lease \"%.*s\" has been granted to a newer token since.",
							 (long long) token, keylen, key);
		case TOKEN_GIVEN:
			return errdetail("The row gives the fence column token %lld, and lease \"%.*s\" has been granted to a newer token since.",
							 (long long) token, keylen, key);
		case TOKEN_IN_EFFECT:
		case TOKEN_NONE:
			break;
	}
	return errdetail("The token in effect for this session is %lld, and lease \"%.*s\" has been granted to a newer token since.",
					 (long long) token, keylen, key);
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
	FenceToken	token = 0;
	FenceLeaseStatus status = FENCE_LEASE_RELEASED;
	bool		has_token;

	key = lease_key_for_row(et, rel, oldrow, buf, &keylen);
	if (keylen == newkeylen && memcmp(key, newkey, keylen) == 0)
		return true;
	has_token = FenceSessionTokenInEffect(key, keylen, &token);
	if (has_token)
	{
		status = FenceStrictCheck(key, keylen, token, RelationGetRelid(rel));
		if (status == FENCE_LEASE_HELD)
			return true;
	}
	if (et->cfg.skip)
		return false;
	count_rejection(FENCE_STAT_REJECTED_NOT_HELD);
	ereport(ERROR,
			(errcode(ERRCODE_FENCE_LEASE_NOT_HELD),
			 errmsg("update of table \"%s\" rejected: it moves the row from lease \"%.*s\", which the write does not hold",
					RelationGetRelationName(rel), keylen, key),
			 has_token ?
			 errdetail("The row's lease becomes \"%.*s\"; the token in effect for lease \"%.*s\" is %lld, whose status for that lease is \"%s\".",
					   newkeylen, newkey, keylen, key, (long long) token,
					   FenceLeaseStatusName(status)) :
			 errdetail("The row's lease becomes \"%.*s\"; this session has no token for lease \"%.*s\".",
					   newkeylen, newkey, keylen, key),
			 errhint("Hold lease \"%.*s\" as well, with a token in effect for each lease name, or delete the row and insert it under the new lease.",
					 keylen, key)));
	return false;				/* keep compiler quiet */
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
 * The memo of a row that an UPDATE under another protection is moving into
 * this partition: its DELETE half passed at this executor level, and the
 * row is the one it let through.  NULL if none.
 */
static MoveMemo *
move_memo_moving_in(EnforceTrigger *et, Relation rel, HeapTuple newrow)
{
	uint64		fingerprint = 0;
	bool		computed = false;

	for (int i = 0; i < MOVE_MEMO_SLOTS; i++)
	{
		MoveMemo   *m = &move_memo[i];

		if (m->stage != MOVE_DELETED || m->depth != exec_depth ||
			m->family == et->family)
			continue;
		if (!computed)
		{
			fingerprint = row_fingerprint(et, rel, newrow);
			computed = true;
		}
		if (m->fingerprint == fingerprint)
			return m;
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

/*
 * Is the INSERT the trigger was fired for the INSERT half of an UPDATE that
 * moves a row between partitions?  Nothing in TriggerData says so, but the
 * statement running at this executor level does: an UPDATE inserts only
 * rows it moves, and so does a MERGE while one of its UPDATE actions runs
 * (PostgreSQL 17 and later name the running action; on 15, a MERGE
 * without INSERT actions).  Other statements that can move rows, writable
 * CTEs and a MERGE of 15 with both kinds of action, cannot be told apart
 * from an INSERT here: false, and the move memo alone decides.
 */
static bool
running_move_insert(void)
{
	QueryDesc  *qd;

	if (exec_depth < 1 || exec_depth > EXEC_LEVELS_KEPT)
		return false;
	qd = exec_query[exec_depth - 1];
	if (qd == NULL || qd->plannedstmt->hasModifyingCTE)
		return false;
	if (qd->operation == CMD_UPDATE)
		return true;
	if (qd->operation == CMD_MERGE && qd->planstate != NULL &&
		IsA(qd->planstate, ModifyTableState))
	{
		ModifyTableState *mt = (ModifyTableState *) qd->planstate;

#if PG_VERSION_NUM >= 170000
		return mt->mt_merge_action != NULL &&
			mt->mt_merge_action->mas_action->commandType == CMD_UPDATE;
#else
		return (mt->mt_merge_subcommands & MERGE_INSERT) == 0;
#endif
	}
	return false;
}

static void
move_memo_forget_all(void)
{
	for (int i = 0; i < MOVE_MEMO_SLOTS; i++)
		move_memo[i].stage = MOVE_FREE;
}

/*
 * The write's token T, and where it came from (TOKEN_NONE: it has none).
 *
 * UPDATE: a value the statement sets in the fence column, if it differs
 * from the stored fence; else the token in effect; else the value set,
 * equal to the stored fence (the holder writing again).  A value equal to
 * the stored one is no token while one is in effect, because PostgreSQL
 * cannot tell a statement that sets the fence from one that copies it: a
 * MERGE hands every BEFORE UPDATE trigger the columns all of its UPDATE
 * actions set (on 15 to 18), and "fence = CASE ... ELSE fence END" or an
 * ORM saving every column back copy the stored value.  INSERT: the token in
 * effect, else the value given; for a row moved in from another partition
 * (moved_in), the token in effect only: the value is the fence the row
 * had.  DELETE: the token in effect.  A NULL is no token, and neither is 0,
 * which marks a row never fenced (the documented column default): counted
 * as a token, it would let a writer that never took a lease through
 * require_token with nothing but the default.
 *
 * Looking up the token in effect needs the row's lease name: then *key
 * points to it (built in keybuf), so that strict mode need not build it
 * again; else *key is left alone.
 */
static TokenSource
write_token(EnforceTrigger *et, TriggerData *trigdata, HeapTuple oldrow,
			HeapTuple newrow, HeapTuple keyrow, bool moved_in,
			FenceToken *token, char *keybuf, const char **key, int *keylen)
{
	EnforceConfig *cfg = &et->cfg;
	Relation	rel = trigdata->tg_relation;
	TupleDesc	tupdesc = RelationGetDescr(rel);
	Datum		value;
	bool		isnull;
	bool		has_set = false;	/* UPDATE set the fence, not to NULL */
	FenceToken	set_token = 0;	/* ... to this */

	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) &&
		bms_is_member(cfg->attnum - FirstLowInvalidHeapAttributeNumber,
					  trigdata->tg_updatedcols))
	{
		value = heap_getattr(newrow, cfg->attnum, tupdesc, &isnull);
		if (!isnull)
			set_token = datum_to_token(et, rel, value, false);
		if (set_token != 0)
		{
			FenceToken	stored = 0;

			has_set = true;
			value = heap_getattr(oldrow, cfg->attnum, tupdesc, &isnull);
			if (!isnull)
				stored = datum_to_token(et, rel, value, true);
			if (set_token != stored)
			{
				*token = set_token;
				return TOKEN_FROM_COLUMN;
			}
		}
	}

	if (cfg->lease != NULL)
		*key = lease_key_for_row(et, rel, keyrow, keybuf, keylen);
	if (FenceSessionTokenInEffect(*key, *keylen, token))
		return TOKEN_IN_EFFECT;
	if (has_set)
	{
		*token = set_token;
		return TOKEN_FROM_COLUMN;
	}

	if (TRIGGER_FIRED_BY_INSERT(trigdata->tg_event) && !moved_in)
	{
		value = heap_getattr(newrow, cfg->attnum, tupdesc, &isnull);
		if (!isnull)
		{
			*token = datum_to_token(et, rel, value, false);
			if (*token != 0)
				return TOKEN_GIVEN;
		}
	}
	return TOKEN_NONE;
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
	TokenSource source;
	Datum		value;
	bool		isnull;
	MoveMemo   *memo;
	bool		moved_in = false;	/* a row moved in from another partition */
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

	et = FenceEnforceGetTrigger(fcinfo, trigdata);
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
	 * A row moved in from a partition under another protection, or none:
	 * judged as an INSERT, except that the fence it carries is the one it
	 * had, not this write's token, and a token below it is stale.  The
	 * UPDATE's token, if a protection of the old partition saw one, counts
	 * when none is in effect for this trigger's lease.
	 */
	memo = NULL;
	if (is_insert && rel->rd_rel->relispartition)
	{
		memo = move_memo_moving_in(et, rel, newrow);
		moved_in = (memo != NULL || running_move_insert());
		if (memo != NULL)
			memo->stage = MOVE_FREE;
	}

	source = write_token(et, trigdata, oldrow, newrow, keyrow, moved_in,
						 &token, keybuf, &key, &keylen);
	if (source == TOKEN_NONE && memo != NULL && memo->has_token)
	{
		token = memo->token;
		source = TOKEN_IN_EFFECT;
	}

	if (source == TOKEN_NONE)
	{
		/* No token: an operator's manual fix, unless a token is required. */
		if (cfg->require_token)
		{
			count_rejection(FENCE_STAT_REJECTED_NO_TOKEN);
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

	/* No path may stamp a number that no lease of this database ever had. */
	FenceCounterRequireIssued(token);

	/*
	 * A token below the row's fence is stale (UPDATE and DELETE), and so is
	 * one below the fence a moved row carries.  So is one below the latest
	 * token the lease table knows for the row's lease, for a new row too (no
	 * fence to compare with), and for a row the newer holder has not written
	 * yet; strict refuses it below (LF002).  0 is no holder's token.  A
	 * moved row is never skipped: its DELETE half has run, and leaving out
	 * the INSERT would lose it.
	 */
	{
		FenceToken	stored = 0;
		bool		superseded = false;

		if (!is_insert || moved_in)
		{
			value = heap_getattr(moved_in ? newrow : oldrow, cfg->attnum,
								 RelationGetDescr(rel), &isnull);
			if (!isnull)
				stored = datum_to_token(et, rel, value, true);
		}
		if (token >= stored && cfg->lease != NULL && !cfg->strict && token != 0)
		{
			if (key == NULL)
				key = lease_key_for_row(et, rel, keyrow, keybuf, &keylen);
			superseded = FenceLeaseSuperseded(key, keylen, token);
		}
		if (token < stored || superseded)
		{
			if (cfg->skip && !moved_in)
			{
				count_skipped++;
				return PointerGetDatum(NULL);
			}
			count_rejection(FENCE_STAT_REJECTED_STALE);
			ereport(ERROR,
					(errcode(ERRCODE_FENCE_STALE_TOKEN),
					 errmsg("stale fencing token for table \"%s\"",
							RelationGetRelationName(rel)),
					 superseded ?
					 errdetail_superseded(source, token, key, keylen) :
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
		status = FenceStrictCheck(key, keylen, token, RelationGetRelid(rel));
		if (status != FENCE_LEASE_HELD)
		{
			if (cfg->skip && !moved_in)
			{
				count_skipped++;
				return PointerGetDatum(NULL);
			}
			count_rejection(FENCE_STAT_REJECTED_NOT_HELD);
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

/*
 * At the end of a transaction: its move memos are gone, its row counts go to
 * the shared statistics, and the cache entries it invalidated are freed.
 */
static void
enforce_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			move_memo_forget_all();
			FenceEnforceCacheSweep();
			FenceDbAdd(FENCE_STAT_WRITES_ACCEPTED, count_accepted);
			FenceDbAdd(FENCE_STAT_WRITES_REJECTED,
					   count_rejected[0] + count_rejected[1] + count_rejected[2]);
			for (int i = 0; i < (int) lengthof(count_rejected); i++)
				FenceDbAdd(FENCE_STAT_REJECTED_STALE + i, count_rejected[i]);
			FenceDbAdd(FENCE_STAT_WRITES_SKIPPED, count_skipped);
			count_accepted = count_skipped = 0;
			memset(count_rejected, 0, sizeof(count_rejected));
			break;
		default:
			break;
	}
}

/* A rolled-back savepoint takes the move memos made in it with it. */
static void
enforce_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		move_memo_forget_all();
}
