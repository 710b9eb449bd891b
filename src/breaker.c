/*-------------------------------------------------------------------------
 *
 * breaker.c
 *		The table of circuit breakers shared by every session of the server:
 *		one state per (database, breaker name), so that many workers learn of
 *		a dead dependency once and probe it once; its lock, and the changes
 *		of state it notes and sends.
 *
 * Every time is read from the lease clock (FenceNow()), so the virtual test
 * clock drives breakers exactly as it drives leases.  The table lives in
 * shared memory only: a server restart forgets every breaker (they come
 * back closed).
 *
 * A dropped database's breakers are freed as its DROP DATABASE commits,
 * with its leases (FenceLeaseDatabaseDropping), and should any be left, by
 * the lease table's sweep of dropped databases
 * (FenceLeaseForgetDroppedDatabases); both reach them
 * through dbstate.c (FenceBreakerDatabases and FenceBreakerForgetDatabase,
 * handed over by init.c: the lease table is below this module).  The sweep
 * runs when this table is full, before a new breaker is refused, and behind
 * fence_break_dropped_databases().
 *
 * Shared memory: a dynahash of fence.max_breakers entries, protected by
 * one LWLock (tranche "fence_breakers").  The number of entries is counted
 * under that lock and capped at fence.max_breakers, so the capacity is
 * exact even though a shared dynahash could borrow spare shared memory.
 *
 * Lock order (fence.h has the whole list): the breaker lock is never held
 * while calling into the lease table (which takes its partition locks and
 * may do I/O for a token), nor across an ereport.  Taking a probe is
 * therefore three steps: decide under the breaker lock that a probe is due,
 * take the lease with no lock held, then record the probe under the lock
 * again if the breaker still wants one (else give the lease back).  The
 * other way round, the lease table's sweep of dropped databases takes the
 * breaker lock (through dbstate.c) with none of its own locks held, and so
 * never while this backend holds the breaker lock.
 *
 * The other files of the breakers (breaker_internal.h lists them) decide,
 * check and answer; this one calls none of them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "commands/async.h"
#include "commands/dbcommands.h"
#include "common/int.h"
#include "funcapi.h"
#include "lib/qunique.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/json.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "breaker_internal.h"

#define BREAKER_TRANCHE			"fence_breakers"

BreakerShared *breaker_shared = NULL;
HTAB	   *breaker_hash = NULL;

void
FenceBreakerShmemRequest(void)
{
	RequestNamedLWLockTranche(BREAKER_TRANCHE, 1);
}

Size
FenceBreakerShmemSize(void)
{
	return add_size(MAXALIGN(sizeof(BreakerShared)),
					hash_estimate_size(fence_max_breakers, sizeof(Breaker)));
}

void
FenceBreakerShmemInit(void)
{
	bool		found;
	HASHCTL		info;

	breaker_shared = ShmemInitStruct("fence breakers", sizeof(BreakerShared), &found);
	if (!found)
	{
		breaker_shared->lock = &(GetNamedLWLockTranche(BREAKER_TRANCHE))->lock;
		breaker_shared->count = 0;
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(BreakerKey);
	info.entrysize = sizeof(Breaker);
	breaker_hash = ShmemInitHash("fence breaker table",
								 fence_max_breakers, fence_max_breakers,
								 &info, HASH_ELEM | HASH_BLOBS);
}

const char *
state_name(uint8 state)
{
	switch ((BreakerState) state)
	{
		case BREAKER_CLOSED:
			return "closed";
		case BREAKER_OPEN:
			return "open";
		case BREAKER_HALF_OPEN:
			return "half_open";
		case BREAKER_FORCED_OPEN:
			return "forced_open";
		case BREAKER_DISABLED:
			return "disabled";
	}
	return "unknown";
}

/*
 * A change of state, noted under the lock and sent as a notification once
 * the lock is released (send_events).  One SQL call changes a breaker's
 * state at most once; two are kept to be safe.
 */
typedef struct BreakerEvent
{
	uint8		from;
	uint8		to;
	TimestampTz at;
	const char *reason;			/* a constant: no palloc under the lock */
} BreakerEvent;

static BreakerEvent pending_events[2];

static int	n_pending_events = 0;

/* Under the lock: change the state, count it, and keep its event. */
void
change_state(Breaker *b, uint8 to, TimestampTz now, const char *reason)
{
	if (b->state == to)
		return;
	if (n_pending_events < (int) lengthof(pending_events))
	{
		BreakerEvent *e = &pending_events[n_pending_events++];

		e->from = b->state;
		e->to = to;
		e->at = now;
		e->reason = reason;
	}
	b->state_changes++;
	b->state = to;
	b->changed_at = now;
}

static void
init_breaker(Breaker *b, int namelen, const BreakerConfig *config,
			 TimestampTz now)
{
	b->roleid = GetUserId();
	b->manager_role = InvalidOid;
	b->caller_role = InvalidOid;
	b->defined = false;
	b->state = BREAKER_CLOSED;
	b->namelen = (uint8) namelen;
	clear_window(b);
	b->config = *config;
	b->open_period = 0;
	b->opened_at = 0;
	b->open_until = 0;
	b->changed_at = now;
	clear_trials(b);
	b->trips = 0;
	b->fast_failures = 0;
	b->successes = 0;
	b->failures = 0;
	b->slow_calls = 0;
	b->state_changes = 0;
}

/*
 * Find the breaker, or create it (closed).  With the lock held exclusively;
 * when the table is full, returns NULL and the caller reports it after
 * releasing the lock.
 */
static Breaker *
find_or_create(const BreakerKey *key, int namelen, const BreakerConfig *config,
			   TimestampTz now)
{
	Breaker    *b;
	bool		found;

	b = hash_search(breaker_hash, key, HASH_FIND, NULL);
	if (b)
		return b;
	if (breaker_shared->count >= fence_max_breakers)
		return NULL;
	b = hash_search(breaker_hash, key, HASH_ENTER_NULL, &found);
	if (b == NULL)
		return NULL;
	Assert(!found);
	breaker_shared->count++;
	init_breaker(b, namelen, config, now);
	return b;
}

/*
 * The databases that have breakers, each once, into a palloc'd array;
 * returns how many.
 */
int
FenceBreakerDatabases(Oid **dbids)
{
	int			n = 0;

	if (breaker_shared == NULL)
	{
		*dbids = palloc(sizeof(Oid));
		return 0;
	}

	/* No palloc under the lock: sized as in fence_breakers_all. */
	for (;;)
	{
		int			room = breaker_shared->count + 16;
		HASH_SEQ_STATUS seq;
		Breaker    *b;

		*dbids = palloc(sizeof(Oid) * room);
		LWLockAcquire(breaker_shared->lock, LW_SHARED);
		if (breaker_shared->count <= room)
		{
			hash_seq_init(&seq, breaker_hash);
			while ((b = hash_seq_search(&seq)) != NULL)
				(*dbids)[n++] = b->key.dbid;
			LWLockRelease(breaker_shared->lock);
			break;
		}
		LWLockRelease(breaker_shared->lock);
		pfree(*dbids);
		CHECK_FOR_INTERRUPTS();
	}
	if (n > 1)
	{
		qsort(*dbids, n, sizeof(Oid), oid_cmp);
		n = qunique(*dbids, n, sizeof(Oid), oid_cmp);
	}
	return n;
}

/*
 * Free every breaker of database dbid, which the caller found dropped;
 * returns how many.  Their probe leases are the lease table's to free, with
 * the database's other leases.
 */
int
FenceBreakerForgetDatabase(Oid dbid)
{
	HASH_SEQ_STATUS seq;
	Breaker    *b;
	int			n = 0;

	if (breaker_shared == NULL)
		return 0;
	LWLockAcquire(breaker_shared->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, breaker_hash);
	while ((b = hash_seq_search(&seq)) != NULL)
	{
		/* A scan may remove the entry it has just returned. */
		if (b->key.dbid == dbid &&
			hash_search(breaker_hash, &b->key, HASH_REMOVE, NULL) != NULL)
			n++;
	}
	breaker_shared->count -= n;
	LWLockRelease(breaker_shared->lock);
	return n;
}

static void
report_table_full(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("the fence breaker table is full"),
			 errdetail("All %d breaker slots (fence.max_breakers) are in use.",
					   fence_max_breakers),
			 errhint("Reset breakers that are no longer used with fence_breaker_reset(), or raise fence.max_breakers and restart the server.")));
}

/*
 * Lock the table and find the breaker, or create it (see find_or_create);
 * with config NULL, only find it (NULL if it does not exist).
 * Returns with the lock held exclusively, and *now read under it.  A full
 * table first has the sweep of dropped databases free their breakers (and
 * leases), with no lock held: nothing else ever would (fence_breaker_reset
 * works in the caller's database only).
 */
Breaker *
lock_breaker(const BreakerKey *key, int namelen, const BreakerConfig *config,
			 TimestampTz *now)
{
	bool		swept = false;

	/* Events a failed call noted but never sent are not this call's. */
	n_pending_events = 0;
	for (;;)
	{
		Breaker    *b;

		LWLockAcquire(breaker_shared->lock, LW_EXCLUSIVE);
		*now = FenceNow();
		if (config == NULL)
			return hash_search(breaker_hash, key, HASH_FIND, NULL);
		b = find_or_create(key, namelen, config, *now);
		if (b != NULL)
			return b;
		LWLockRelease(breaker_shared->lock);
		if (swept)
			report_table_full();
		/* The lease table's sweep frees their breakers (through dbstate.c). */
		(void) FenceLeaseForgetDroppedDatabases();
		swept = true;
	}
}

/*
 * With no lock held: send the state changes that change_state() noted, as
 * notifications on channel fence_breaker, with a JSON payload.  PostgreSQL
 * delivers them when this transaction commits, and drops them if it rolls
 * back (the state change itself stays: breakers are not transactional).
 * A standby cannot notify: there the changes are only counted.
 */
void
send_events(const BreakerKey *key, int namelen)
{
	int			n = n_pending_events;
	char	   *name;

	n_pending_events = 0;
	if (n == 0 || RecoveryInProgress())
		return;
	name = pnstrdup(key->name, namelen);
	for (int i = 0; i < n; i++)
	{
		BreakerEvent *e = &pending_events[i];
		StringInfoData buf;
		char		at[MAXDATELEN + 1];
		int			utc = 0;

		initStringInfo(&buf);
		appendStringInfoString(&buf, "{\"breaker\": ");
		escape_json(&buf, name);
		appendStringInfo(&buf, ", \"from\": \"%s\", \"to\": \"%s\", \"at\": \"%s\", \"reason\": \"%s\"}",
						 state_name(e->from), state_name(e->to),
						 JsonEncodeDateTime(at, TimestampTzGetDatum(e->at),
											TIMESTAMPTZOID, &utc),
						 e->reason);
		Async_Notify(BREAKER_EVENT_CHANNEL, buf.data);
		pfree(buf.data);
	}
}
