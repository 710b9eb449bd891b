/*-------------------------------------------------------------------------
 *
 * lease_watch_many.c
 *		fence_wait_leases_end(keys, tokens, timeout): one wait on several
 *		leases, so that a process holding many leases needs one watchdog
 *		connection for all of them, not one per lease.
 *
 * The wait returns as soon as any lease of the set is no longer held, with
 * one row for each that has ended (key, token, and how: expired,
 * superseded, released); no row at all means the timeout passed with every
 * lease still held.  It sleeps on watch_any.c's server-wide condition
 * variable, which every partition's generation bump and every move of the
 * virtual clock broadcast on while such a wait exists; after a wake-up it
 * looks again, under the partition lock, only at the leases whose stamp
 * (lease_table.c) no longer holds.  Like fence_wait_lease_end, it takes
 * nothing, so lock_timeout does not apply, and a lease the caller may not
 * see reads as released at once.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "fence.h"

/* One lease of the set, and what the last look at it found. */
typedef struct WatchItem
{
	const char *key;			/* into the keys array; not NUL-ended */
	int			keylen;
	FenceToken	token;
	FenceLeaseStatus status;
	FenceLeaseStamp stamp;		/* status == FENCE_LEASE_HELD */
} WatchItem;

/* A one-dimensional array argument, not NULL, with no NULL element. */
static ArrayType *
get_array_arg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	ArrayType  *arr;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("array of %s must not be NULL", name),
				 errhint("Pass the keys and the tokens of the leases to watch as two arrays of the same length.")));
	arr = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("array of %s must have one dimension", name),
				 errdetail("The array given has %d dimensions.", ARR_NDIM(arr)),
				 errhint("Pass the keys and the tokens of the leases to watch as two arrays of the same length.")));
	if (array_contains_nulls(arr))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("array of %s must not contain NULL", name),
				 errhint("Name each lease to watch by its key and the token that granted it.")));
	return arr;
}

/* The set to watch, checked: *n items, palloc'd in the current context. */
static WatchItem *
get_items(FunctionCallInfo fcinfo, int *n)
{
	ArrayType  *keys = get_array_arg(fcinfo, 0, "lease keys");
	ArrayType  *tokens = get_array_arg(fcinfo, 1, "tokens");
	Datum	   *key_datums;
	Datum	   *token_datums;
	int			nkeys;
	int			ntokens;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	WatchItem  *items;

	nkeys = ArrayGetNItems(ARR_NDIM(keys), ARR_DIMS(keys));
	ntokens = ArrayGetNItems(ARR_NDIM(tokens), ARR_DIMS(tokens));
	if (nkeys != ntokens)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("arrays of lease keys and tokens must have the same length"),
				 errdetail("The array of keys has %d elements, the array of tokens %d.",
						   nkeys, ntokens),
				 errhint("Pass the token of each lease at the same place as its key.")));
	if (nkeys == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no lease to wait for"),
				 errdetail("The arrays of lease keys and tokens are empty."),
				 errhint("Name at least one lease; a set with nothing in it would never end.")));
	if (nkeys > FENCE_MAX_WATCHED_LEASES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many leases to wait for at once"),
				 errdetail("%d leases were given; the limit is %d.",
						   nkeys, FENCE_MAX_WATCHED_LEASES),
				 errhint("Split the leases into sets of at most %d, each watched by a wait of its own.",
						 FENCE_MAX_WATCHED_LEASES)));

	deconstruct_array(keys, TEXTOID, -1, false, TYPALIGN_INT,
					  &key_datums, NULL, &nkeys);
	get_typlenbyvalalign(ARR_ELEMTYPE(tokens), &typlen, &typbyval, &typalign);
	deconstruct_array(tokens, ARR_ELEMTYPE(tokens), typlen, typbyval, typalign,
					  &token_datums, NULL, &ntokens);

	items = palloc0(sizeof(WatchItem) * nkeys);
	for (int i = 0; i < nkeys; i++)
	{
		text	   *t = DatumGetTextPP(key_datums[i]);
		int			len = VARSIZE_ANY_EXHDR(t);

		if (len == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lease key must not be empty"),
					 errdetail("Key %d of the array is empty.", i + 1),
					 errhint("A lease key is 1 to %d bytes of text.", FENCE_MAX_KEY_LEN)));
		if (len > FENCE_MAX_KEY_LEN)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lease key is too long"),
					 errdetail("Key %d of the array is %d bytes; the limit is %d bytes.",
							   i + 1, len, FENCE_MAX_KEY_LEN),
					 errhint("Use a shorter key, for example a hash of the long name.")));
		items[i].key = VARDATA_ANY(t);
		items[i].keylen = len;
		items[i].token = DatumGetFenceToken(token_datums[i]);
	}
	*n = nkeys;
	return items;
}

/*
 * Look again at the leases whose stamp may no longer hold (all of them when
 * all is true); how many are no longer held.  Takes each partition lock
 * briefly; no lock held on return.
 */
static int
look(WatchItem *items, int n, bool all)
{
	int			ended = 0;

	for (int i = 0; i < n; i++)
	{
		WatchItem  *it = &items[i];

		if (!all && it->status == FENCE_LEASE_HELD &&
			FenceLeaseStampHolds(&it->stamp))
			continue;
		if (all || it->status == FENCE_LEASE_HELD)
			it->status = FenceLeaseVisibleStatus(it->key, it->keylen,
												 it->token, &it->stamp);
		if (it->status != FENCE_LEASE_HELD)
			ended++;
	}
	return ended;
}

/* Milliseconds from now until "until" on the clock of "now", at least 1. */
static long
ms_left(TimestampTz until, TimestampTz now)
{
	int64		us = until - now;

	return us <= 0 ? 1 : (long) Min((us + 999) / 1000, (int64) INT_MAX);
}

/*
 * Sleep until a lease of the set is no longer held or the deadline (real
 * time; 0: none) passes; false when it passed.  Returns at once when one is
 * not held now.  May ERROR (an interrupt):
 * the count of sleepers is put right on the way out, and at exit after a
 * FATAL (watch_any.c).
 */
static bool
wait_any_end(WatchItem *items, int n, TimestampTz deadline)
{
	uint32		wait_event = FenceLeaseWaitEvent();
	volatile bool ended = false;

	/* Counted before the first look: see watch_any.c. */
	FenceWatchAnyBegin();
	PG_TRY();
	{
		bool		first = true;

		for (;;)
		{
			long		timeout_ms = -1;

			if (look(items, n, first) > 0)
			{
				ended = true;
				break;
			}
			first = false;

			/* In real time, wake up by the earliest expiry. */
			if (!FenceClockIsVirtual())
			{
				TimestampTz now = FenceNow();
				TimestampTz soonest = items[0].stamp.expires_at;

				for (int i = 1; i < n; i++)
					soonest = Min(soonest, items[i].stamp.expires_at);
				timeout_ms = ms_left(soonest, now) + 1;
			}
			if (deadline != 0)
			{
				TimestampTz now = GetCurrentTimestamp();
				long		left;

				if (now >= deadline)
					break;
				left = ms_left(deadline, now);
				if (timeout_ms < 0 || left < timeout_ms)
					timeout_ms = left;
			}
			FenceWatchAnySleep(timeout_ms, wait_event);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_FINALLY();
	{
		FenceWatchAnyEnd();
	}
	PG_END_TRY();
	return ended;
}

PG_FUNCTION_INFO_V1(fence_wait_leases_end);

/*
 * fence_wait_leases_end(keys text[], tokens fence_token[], timeout DEFAULT
 * NULL) RETURNS TABLE (key text, token fence_token, status text)
 */
Datum
fence_wait_leases_end(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WatchItem  *items;
	int			n;
	TimestampTz deadline;

	FenceRequirePreload();
	items = get_items(fcinfo, &n);
	deadline = FenceWatchdogDeadline(fcinfo, 2);
	InitMaterializedSRF(fcinfo, 0);

	(void) wait_any_end(items, n, deadline);

	for (int i = 0; i < n; i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		if (items[i].status == FENCE_LEASE_HELD)
			continue;
		values[0] = PointerGetDatum(cstring_to_text_with_len(items[i].key,
															 items[i].keylen));
		values[1] = FenceTokenGetDatum(items[i].token);
		values[2] = PointerGetDatum(cstring_to_text(FenceLeaseStatusName(items[i].status)));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
