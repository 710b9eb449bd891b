/*-------------------------------------------------------------------------
 *
 * dbstate.c
 *		Per-database shared state: the counters behind the fence_stats view,
 *		the highest token granted so far in each database, and the block of
 *		tokens the durable counter (counter.c) is handing out.
 *
 * The high-water mark is what makes grants appear in token order.  Tokens
 * come from the durable counter outside any lease lock, so two grants can
 * race: a grant publishes its token here just before it becomes visible,
 * and a grant whose token is already below the mark takes a new one.  So a
 * token is never issued after a larger one in the same database.
 *
 * Databases get a slot on first use; there are fence.max_databases slots.
 * A dropped database's slot is given back (FenceDbForgetDatabase) once
 * its leases are gone, by the lease table's sweep, which init.c hands to
 * FenceDbSetSweep() so that claiming a slot can run it (lease_drop.c is
 * above this module), so that databases that come and go (CI, tenants) do
 * not use the slots up; a new database whose OID happens to be a dropped
 * one's must not inherit its high-water mark either.  Counters are atomics
 * and need no lock; claiming and freeing a slot take the "fence_databases"
 * LWLock.
 *
 * The circuit breakers (breaker.c) are per-database shared state too, kept
 * in a table of their own, and a database that only asks breakers has no
 * slot here.  So that the sweep of dropped databases (the lease table's)
 * frees them as well, FenceDbDatabases() also lists the databases that
 * have breakers, and FenceDbForgetDatabase() frees a database's
 * breakers with its slot, through the two functions init.c hands to
 * FenceDbShareDatabases().
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "commands/dbcommands.h"

#include "fence.h"

typedef struct FenceDbSlot
{
	pg_atomic_uint32 dbid;		/* InvalidOid while free */
	pg_atomic_uint64 max_granted;	/* highest token granted */
	pg_atomic_uint64 counters[FENCE_NUM_STATS];
	FenceCounterBlock counter_block;	/* owned by counter.c */
} FenceDbSlot;

typedef struct FenceDbShared
{
	LWLock	   *lock;			/* serializes claiming and freeing slots */
	int			nslots;
	FenceDbSlot slots[FLEXIBLE_ARRAY_MEMBER];
} FenceDbShared;

static FenceDbShared *db_shared = NULL;

/* This backend's slot; a backend stays in one database. */
static FenceDbSlot *my_slot = NULL;

void
FenceDbShmemRequest(void)
{
	RequestNamedLWLockTranche("fence_databases", 1);
}

Size
FenceDbShmemSize(void)
{
	return MAXALIGN(add_size(offsetof(FenceDbShared, slots),
							 mul_size(fence_max_databases, sizeof(FenceDbSlot))));
}

/*
 * counter.c's initializer of the counter block each slot holds, which
 * init.c hands to FenceDbShmemInit (a module calls only those below it).
 */
static FenceCounterBlockInitFn init_counter_block = NULL;

/* breaker.c's functions, which init.c hands to FenceDbShareDatabases. */
static FenceDatabasesFn shared_databases = NULL;
static FenceForgetDatabaseFn shared_forget_database = NULL;

/* The lease table's sweep of dropped databases, which init.c hands over. */
static FenceSweepFn sweep_dropped = NULL;

/* A slot as new: no database, no counts, no tokens. */
static void
reset_slot(FenceDbSlot *slot)
{
	pg_atomic_write_u64(&slot->max_granted, 0);
	for (int j = 0; j < FENCE_NUM_STATS; j++)
		pg_atomic_write_u64(&slot->counters[j], 0);
	init_counter_block(&slot->counter_block, true);
}

/*
 * Create the slots, or attach to them.  The counter's block in each slot
 * is counter.c's: the caller passes counter.c's initializer.
 */
void
FenceDbShmemInit(FenceCounterBlockInitFn init_block)
{
	bool		found;

	init_counter_block = init_block;
	db_shared = ShmemInitStruct("fence databases", FenceDbShmemSize(), &found);
	if (!found)
	{
		db_shared->lock = &(GetNamedLWLockTranche("fence_databases"))->lock;
		db_shared->nslots = fence_max_databases;
		for (int i = 0; i < db_shared->nslots; i++)
		{
			FenceDbSlot *slot = &db_shared->slots[i];

			pg_atomic_init_u32(&slot->dbid, InvalidOid);
			pg_atomic_init_u64(&slot->max_granted, 0);
			for (int j = 0; j < FENCE_NUM_STATS; j++)
				pg_atomic_init_u64(&slot->counters[j], 0);
			init_counter_block(&slot->counter_block, false);
		}
	}
}

static FenceDbSlot *
find_slot(Oid dbid)
{
	/* Freed slots leave holes, so look at every one. */
	for (int i = 0; i < db_shared->nslots; i++)
	{
		if (pg_atomic_read_u32(&db_shared->slots[i].dbid) == dbid)
			return &db_shared->slots[i];
	}
	return NULL;
}

/*
 * This database's slot, claimed on first use.  NULL when not preloaded, or
 * when every slot is taken (statistics are then not kept).
 */
static FenceDbSlot *
get_my_slot(void)
{
	if (my_slot != NULL || db_shared == NULL || !OidIsValid(MyDatabaseId))
		return my_slot;

	my_slot = find_slot(MyDatabaseId);
	if (my_slot != NULL)
		return my_slot;

	LWLockAcquire(db_shared->lock, LW_EXCLUSIVE);
	my_slot = find_slot(MyDatabaseId);
	if (my_slot == NULL)
	{
		for (int i = 0; i < db_shared->nslots; i++)
		{
			FenceDbSlot *slot = &db_shared->slots[i];

			if (pg_atomic_read_u32(&slot->dbid) == InvalidOid)
			{
				pg_atomic_write_u32(&slot->dbid, MyDatabaseId);
				my_slot = slot;
				break;
			}
		}
	}
	LWLockRelease(db_shared->lock);
	return my_slot;
}

/*
 * The index of database dbid's slot, or -1 if it has none: the row of
 * lease_counts.c's counts.  This backend's own database is found without a
 * search.  Reads the slots' atomics only; takes no lock, never ERRORs.
 */
int
FenceDbSlotOf(Oid dbid)
{
	FenceDbSlot *slot;

	if (db_shared == NULL)
		return -1;
	if (my_slot != NULL && dbid == MyDatabaseId)
		slot = my_slot;
	else
		slot = find_slot(dbid);
	return slot ? (int) (slot - db_shared->slots) : -1;
}

/* The database slot "index" belongs to, or InvalidOid if it is free. */
Oid
FenceDbSlotDatabase(int index)
{
	Assert(index >= 0 && index < db_shared->nslots);
	return pg_atomic_read_u32(&db_shared->slots[index].dbid);
}

static void
too_many_databases(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("too many databases use fence leases"),
			 errdetail("The server keeps shared lease state for at most %d databases (fence.max_databases), and every slot belongs to a database that still exists.",
					   db_shared->nslots),
			 errhint("Use fence in fewer databases, or increase fence.max_databases (takes effect at server restart).")));
}

/*
 * Claim this database's slot, or fail with 54000.  Every path that needs a
 * slot comes here (or through FenceDbCounterBlock(false)), so that the
 * slots of dropped databases are freed, by the one sweep there is, before
 * the error says that every slot belongs to a database that exists.  Needs
 * a transaction (the sweep reads pg_database) and no LWLock held (the sweep
 * takes the lease table's and ours).
 */
void
FenceDbClaimSlot(void)
{
	if (get_my_slot() != NULL || db_shared == NULL)
		return;
	if (sweep_dropped != NULL)
		(void) sweep_dropped();
	if (get_my_slot() == NULL)
		too_many_databases();
}

/*
 * The lease table's sweep of dropped databases, for FenceDbClaimSlot.
 * Set at startup.
 */
void
FenceDbSetSweep(FenceSweepFn sweep)
{
	sweep_dropped = sweep;
}

/*
 * The per-database state of a module above (see the top of this file): the
 * databases it keeps state of, and forgetting one's.  Set at startup.
 */
void
FenceDbShareDatabases(FenceDatabasesFn databases,
						 FenceForgetDatabaseFn forget)
{
	shared_databases = databases;
	shared_forget_database = forget;
}

/*
 * The databases that have a slot, or state shared through
 * FenceDbShareDatabases(), each once, into a palloc'd array; returns how
 * many.
 */
int
FenceDbDatabases(Oid **dbids)
{
	int			n = 0;
	int			nslots;
	Oid		   *more = NULL;
	int			nmore = 0;

	if (db_shared != NULL && shared_databases != NULL)
		nmore = shared_databases(&more);
	nslots = db_shared ? db_shared->nslots : 0;
	*dbids = palloc(sizeof(Oid) * Max(nslots + nmore, 1));
	if (db_shared == NULL)
		return 0;
	for (int i = 0; i < nslots; i++)
	{
		Oid			dbid = pg_atomic_read_u32(&db_shared->slots[i].dbid);

		if (OidIsValid(dbid))
			(*dbids)[n++] = dbid;
	}

	/* Both lists count databases, not leases or breakers: search plainly. */
	for (int i = 0, nslotted = n; i < nmore; i++)
	{
		bool		listed = false;

		for (int j = 0; j < nslotted && !listed; j++)
			listed = ((*dbids)[j] == more[i]);
		if (!listed)
			(*dbids)[n++] = more[i];
	}
	if (more != NULL)
		pfree(more);
	return n;
}

/*
 * Give back the slot of a dropped database, and free its breakers.  The
 * caller has made sure that the database no longer exists and that the
 * lease table holds nothing of it; no backend can be using the slot then.
 */
void
FenceDbForgetDatabase(Oid dbid)
{
	FenceDbSlot *slot;

	if (db_shared == NULL || !OidIsValid(dbid))
		return;
	/* Not under our lock: the breakers have a lock of their own. */
	if (shared_forget_database != NULL)
		(void) shared_forget_database(dbid);
	LWLockAcquire(db_shared->lock, LW_EXCLUSIVE);
	slot = find_slot(dbid);
	if (slot != NULL)
	{
		reset_slot(slot);
		pg_atomic_write_u32(&slot->dbid, InvalidOid);
	}
	LWLockRelease(db_shared->lock);
}

void
FenceDbCount(FenceStat which)
{
	FenceDbSlot *slot = get_my_slot();

	Assert(which >= 0 && which < FENCE_NUM_STATS);
	if (slot != NULL)
		pg_atomic_fetch_add_u64(&slot->counters[which], 1);
}

/* Add n at once, for callers that count per row and report per transaction. */
void
FenceDbAdd(FenceStat which, uint64 n)
{
	FenceDbSlot *slot;

	Assert(which >= 0 && which < FENCE_NUM_STATS);
	if (n == 0 || (slot = get_my_slot()) == NULL)
		return;
	pg_atomic_fetch_add_u64(&slot->counters[which], n);
}

/*
 * Record that "token" is about to be granted in this database.  Returns
 * false, changing nothing, if a larger token was granted already: the
 * caller must then take a fresh token.  Call it with the lease partition
 * lock held, right before the grant becomes visible, after
 * FenceDbClaimSlot(): it neither claims nor sweeps under that lock.
 */
bool
FenceDbPublishGrant(FenceToken token)
{
	FenceDbSlot *slot = my_slot;
	uint64		seen;

	if (slot == NULL)
		elog(ERROR, "fence: a grant was published before its database's slot was claimed");

	seen = pg_atomic_read_u64(&slot->max_granted);
	while ((uint64) token > seen)
	{
		if (pg_atomic_compare_exchange_u64(&slot->max_granted, &seen, (uint64) token))
			return true;
	}
	return false;
}

/*
 * This database's block of counter tokens (see counter.c).  With
 * missing_ok, NULL when the database has no slot and none is free, with no
 * sweep (a caller may hold an LWLock); without it, the slot is claimed as
 * FenceDbClaimSlot() does, so the caller must hold no LWLock.
 */
FenceCounterBlock *
FenceDbCounterBlock(bool missing_ok)
{
	FenceDbSlot *slot = get_my_slot();

	if (slot == NULL)
	{
		if (missing_ok)
			return NULL;
		FenceDbClaimSlot();
		slot = my_slot;
	}
	return &slot->counter_block;
}

/*
 * fence_stats(): one row per database that used fence since server start.
 */
PG_FUNCTION_INFO_V1(fence_stats);
Datum
fence_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			natts;

	FenceRequirePreload();
	InitMaterializedSRF(fcinfo, 0);

	/*
	 * The columns the installed SQL declares: a 1.2 library serves a
	 * database still at 1.1 (before ALTER EXTENSION UPDATE), whose
	 * fence_stats lacks the counts by SQLSTATE, as well.
	 */
	natts = Min(rsinfo->setDesc->natts, FENCE_NUM_STATS + 1);

	for (int i = 0; i < db_shared->nslots; i++)
	{
		FenceDbSlot *slot = &db_shared->slots[i];
		Oid			dbid = pg_atomic_read_u32(&slot->dbid);
		Datum		values[FENCE_NUM_STATS + 1];
		bool		nulls[FENCE_NUM_STATS + 1] = {0};
		char	   *dbname;

		if (dbid == InvalidOid)
			continue;
		dbname = get_database_name(dbid);
		if (dbname == NULL)
			continue;			/* dropped since */
		values[0] = DirectFunctionCall1(namein, CStringGetDatum(dbname));
		for (int j = 0; j < FENCE_NUM_STATS && j + 1 < natts; j++)
			values[j + 1] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->counters[j]));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
