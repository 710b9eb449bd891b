/*-------------------------------------------------------------------------
 *
 * lease_counts.c
 *		Counts of the leases and permits held, per database, scope, kind and
 *		state, kept as the lease table changes: the fence_lease_counts view,
 *		which monitoring reads instead of counting fence_leases' rows.
 *
 * A held entry of the lease table (a lease, or one permit of a lease with
 * permits; the entry a key with permits keeps for its queue holds nothing
 * and is not counted) is in one of two states: live while the lease clock
 * is before its expiry, expired from then until it is released, taken over
 * or reclaimed -- exactly fence_leases' "live" column.  The lease table
 * tells this module whenever an entry starts or stops being held or its
 * expiry moves (FenceCountsNote, under the entry's partition lock, which
 * also guards everything this module keeps for the partition).
 *
 * Only the clock can say when a live entry becomes expired, and nothing
 * happens in the table then.  So each partition keeps its counted entries
 * in two pairing heaps: the live ones by earliest expiry first, the expired
 * ones by latest expiry first, with a count per (database, scope, kind) of
 * each.  A reader, under the partition lock, first moves the live entries
 * whose expiry has passed to the expired heap (and back, should the clock
 * have moved back), then adds up the counts.  Each entry moves once per
 * expiry, so a reader pays for the entries that expired since the last
 * one read, not for the entries held; it moves at most COUNTS_BATCH of them
 * per lock hold, releasing the lock between batches.  A writer pays
 * O(1) to add an entry and amortized O(log n) to remove one.
 *
 * The counts of a database are kept in the row of its dbstate.c slot:
 * every entry is granted in the database of the backend that installs it,
 * which claimed its slot first, and a dropped database's slot is freed only
 * after its entries are (the lease table's sweep).  A crash restart
 * re-creates shared memory, counts and lease table together.
 *
 * Shared memory: one CountedSlot (40 bytes) per lease slot, and per
 * partition a row of counts for each of fence.max_databases.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/dbcommands.h"
#include "funcapi.h"
#include "lib/pairingheap.h"
#include "miscadmin.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "lease_counts.h"

/* Scopes held (session, transaction, detached) times kinds (lease, permit). */
#define COUNT_SCOPES	3
#define COUNT_KINDS		2
#define COUNT_CATS		(COUNT_SCOPES * COUNT_KINDS)

/* Entries a reader moves between heaps per hold of a partition lock. */
#define COUNTS_BATCH	4096

typedef enum CountedState
{
	COUNTED_NONE = 0,			/* not held: in no heap, in no count */
	COUNTED_LIVE,
	COUNTED_EXPIRED,
	COUNTED_UNROWED				/* held, in no heap: see FenceCountsNote */
} CountedState;

/* What is counted of lease slot i: counted_slots[i]. */
typedef struct CountedSlot
{
	pairingheap_node node;		/* in its partition's live or expired heap */
	TimestampTz expires_at;		/* the heaps' key */
	int16		row;			/* dbstate.c's slot of its database */
	uint8		cat;			/* (scope - 1) * COUNT_KINDS + permit */
	uint8		state;			/* CountedState */
	uint8		partition;
} CountedSlot;

StaticAssertDecl(sizeof(CountedSlot) <= 40,
				 "the counts should take at most 40 bytes a lease slot");

/*
 * One partition's heaps; guarded by its partition lock, like the counts
 * (live and expired) of each database row and category.
 */
typedef struct CountsPartition
{
	pairingheap_node *live;		/* earliest expiry first */
	pairingheap_node *expired;	/* latest expiry first */
	int32		held;			/* entries in the two, all databases */
} CountsPartition;

typedef struct CountsShared
{
	LWLockPadded *locks;		/* the lease table's partition locks */
	int			nrows;			/* fence.max_databases */
	int			nslots;			/* fence.max_leases */
	CountsPartition partitions[FENCE_LEASE_PARTITIONS];
} CountsShared;

static CountsShared *counts_shared = NULL;
static CountedSlot *counted_slots = NULL;
/* [partition][row][cat][0: live, 1: expired] */
static int32 *counts = NULL;

static Size
counts_len(void)
{
	return mul_size(mul_size(FENCE_LEASE_PARTITIONS, fence_max_databases),
					COUNT_CATS * 2);
}

Size
FenceCountsShmemSize(void)
{
	Size		size = MAXALIGN(sizeof(CountsShared));

	size = add_size(size, MAXALIGN(mul_size(fence_max_leases,
											sizeof(CountedSlot))));
	size = add_size(size, mul_size(counts_len(), sizeof(int32)));
	return size;
}

void
FenceCountsShmemInit(LWLockPadded *partition_locks)
{
	bool		found;
	char	   *base;

	base = ShmemInitStruct("fence lease counts", FenceCountsShmemSize(),
						   &found);
	counts_shared = (CountsShared *) base;
	counted_slots = (CountedSlot *) (base + MAXALIGN(sizeof(CountsShared)));
	counts = (int32 *) (base + MAXALIGN(sizeof(CountsShared)) +
						MAXALIGN(mul_size(fence_max_leases,
										  sizeof(CountedSlot))));
	if (found)
		return;
	counts_shared->locks = partition_locks;
	counts_shared->nrows = fence_max_databases;
	counts_shared->nslots = fence_max_leases;
	for (int p = 0; p < FENCE_LEASE_PARTITIONS; p++)
	{
		counts_shared->partitions[p].live = NULL;
		counts_shared->partitions[p].expired = NULL;
		counts_shared->partitions[p].held = 0;
	}
	memset(counted_slots, 0, mul_size(fence_max_leases, sizeof(CountedSlot)));
	memset(counts, 0, mul_size(counts_len(), sizeof(int32)));
}

/* ---------- the heaps ---------- */

static inline CountedSlot *
node_slot(pairingheap_node *node)
{
	return pairingheap_container(CountedSlot, node, node);
}

static inline TimestampTz
node_expiry(const pairingheap_node *node)
{
	return pairingheap_const_container(CountedSlot, node, node)->expires_at;
}

/* pairingheap keeps the greatest first: the live heap's is the earliest. */
static int
live_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	TimestampTz ea = node_expiry(a);
	TimestampTz eb = node_expiry(b);

	return (ea > eb) ? -1 : (ea < eb) ? 1 : 0;
}

static int
expired_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	TimestampTz ea = node_expiry(a);
	TimestampTz eb = node_expiry(b);

	return (ea < eb) ? -1 : (ea > eb) ? 1 : 0;
}

/*
 * The heap a state's entries of partition p are in, as pairingheap wants
 * it: a backend-local header around the root kept in shared memory (the
 * comparator's address is this backend's), written back by heap_store().
 */
static void
heap_load(pairingheap *heap, int p, CountedState state)
{
	CountsPartition *part = &counts_shared->partitions[p];

	heap->ph_compare = (state == COUNTED_LIVE) ? live_cmp : expired_cmp;
	heap->ph_arg = NULL;
	heap->ph_root = (state == COUNTED_LIVE) ? part->live : part->expired;
}

static void
heap_store(pairingheap *heap, int p, CountedState state)
{
	CountsPartition *part = &counts_shared->partitions[p];

	if (state == COUNTED_LIVE)
		part->live = heap->ph_root;
	else
		part->expired = heap->ph_root;
}

static inline int32 *
count_of(int p, int row, int cat, CountedState state)
{
	Size		at = (Size) p * counts_shared->nrows + row;

	at = (at * COUNT_CATS + cat) * 2 + (state == COUNTED_EXPIRED ? 1 : 0);
	return &counts[at];
}

/* Put c, not counted, into state's heap and count. */
static void
enter_state(CountedSlot *c, CountedState state)
{
	pairingheap heap;

	heap_load(&heap, c->partition, state);
	pairingheap_add(&heap, &c->node);
	heap_store(&heap, c->partition, state);
	c->state = (uint8) state;
	(*count_of(c->partition, c->row, c->cat, state))++;
}

/* Take c out of its heap and count. */
static void
leave_state(CountedSlot *c)
{
	CountedState state = (CountedState) c->state;
	pairingheap heap;

	Assert(state != COUNTED_NONE);
	heap_load(&heap, c->partition, state);
	pairingheap_remove(&heap, &c->node);
	heap_store(&heap, c->partition, state);
	(*count_of(c->partition, c->row, c->cat, state))--;
	c->state = COUNTED_NONE;
}

/* c holds nothing any more (or is about to be counted anew). */
static void
forget_slot(CountedSlot *c)
{
	if (c->state == COUNTED_NONE)
		return;
	if (c->state != COUNTED_UNROWED)
		leave_state(c);
	counts_shared->partitions[c->partition].held--;
	c->state = COUNTED_NONE;
}

/*
 * Lease slot idx of partition now holds a lease of database dbid in scope
 * (FENCE_SCOPE_NONE: it holds nothing), a permit or not, expiring at
 * expires_at; or it changed its expiry.  Called by the lease table, with
 * the partition lock held exclusively, after every such change; calling it
 * again with nothing changed does nothing.  Never ERRORs.
 *
 * A new entry is counted live whatever the clock says: the next reader
 * moves it if it has expired already.
 */
void
FenceCountsNote(int32 idx, int partition, Oid dbid, FenceLeaseScope scope,
				bool permit, TimestampTz expires_at)
{
	CountedSlot *c;
	int			row;
	int			cat;

	Assert(idx >= 0 && idx < counts_shared->nslots);
	c = &counted_slots[idx];
	if (scope == FENCE_SCOPE_NONE)
	{
		forget_slot(c);
		return;
	}

	row = FenceDbSlotOf(dbid);
	cat = ((int) scope - 1) * COUNT_KINDS + (permit ? 1 : 0);
	Assert(cat >= 0 && cat < COUNT_CATS);
	if (c->state != COUNTED_NONE)
	{
		if (c->row == row && c->cat == cat && c->expires_at == expires_at)
			return;
		if (partition < 0)
			partition = c->partition;
		forget_slot(c);
	}
	Assert(partition >= 0 && partition < FENCE_LEASE_PARTITIONS);
	if (partition < 0 || partition >= FENCE_LEASE_PARTITIONS)
		return;
	c->row = (int16) row;
	c->cat = (uint8) cat;
	c->partition = (uint8) partition;
	c->expires_at = expires_at;
	counts_shared->partitions[partition].held++;

	/*
	 * No slot for its database: cannot happen, since a grant claims its
	 * database's slot first.  Then the entry still counts as held in its
	 * partition (fence_leases sizes its rows by that), but in no database's
	 * counts, rather than fail the grant.
	 */
	Assert(row >= 0 && row < counts_shared->nrows);
	if (row < 0 || row >= counts_shared->nrows)
		c->state = COUNTED_UNROWED;
	else
		enter_state(c, COUNTED_LIVE);
}

/*
 * How many entries of partition p hold a lease or a permit: the rows of
 * fence_leases it has.  Partition lock held (shared is enough).
 */
int
FenceCountsPartitionHeld(int p)
{
	Assert(p >= 0 && p < FENCE_LEASE_PARTITIONS);
	return counts_shared->partitions[p].held;
}

/*
 * Move the entries of partition p's heap "from" that the lease clock "now"
 * puts in the other state (live ones whose expiry has passed, or expired
 * ones whose expiry is ahead again: the clock moved back) there, as long as
 * *budget lasts.  True when none is left to move.  Partition lock held
 * exclusively.
 */
static bool
move_due(int p, CountedState from, TimestampTz now, int *budget)
{
	CountedState to = (from == COUNTED_LIVE) ? COUNTED_EXPIRED : COUNTED_LIVE;

	for (;;)
	{
		pairingheap heap;
		CountedSlot *c;

		heap_load(&heap, p, from);
		if (pairingheap_is_empty(&heap))
			return true;
		c = node_slot(pairingheap_first(&heap));
		if ((c->expires_at > now) == (from == COUNTED_LIVE))
			return true;
		if ((*budget)-- <= 0)
			return false;
		leave_state(c);
		enter_state(c, to);
	}
}

/*
 * Move partition p's entries to the state "now" gives them, at most
 * COUNTS_BATCH of them.  True when done.  Partition lock held exclusively.
 */
static bool
settle_partition(int p, TimestampTz now)
{
	int			budget = COUNTS_BATCH;

	return move_due(p, COUNTED_LIVE, now, &budget) &&
		move_due(p, COUNTED_EXPIRED, now, &budget);
}

/* ---------- the view ---------- */

static const char *const scope_names[COUNT_SCOPES] = {
	"session", "transaction", "detached"
};
static const char *const kind_names[COUNT_KINDS] = {"lease", "permit"};
static const char *const state_names[2] = {"live", "expired"};

/* The rows of one database (NULL name: dropped ones, together). */
static void
put_count_rows(ReturnSetInfo *rsinfo, const char *dbname, const int64 *sums)
{
	for (int s = 0; s < COUNT_SCOPES; s++)
		for (int k = 0; k < COUNT_KINDS; k++)
			for (int st = 0; st < 2; st++)
			{
				Datum		values[5];
				bool		nulls[5] = {0};

				if (dbname == NULL)
					nulls[0] = true;
				else
					values[0] = DirectFunctionCall1(namein,
													CStringGetDatum(dbname));
				values[1] = CStringGetTextDatum(scope_names[s]);
				values[2] = CStringGetTextDatum(kind_names[k]);
				values[3] = CStringGetTextDatum(state_names[st]);
				values[4] = Int64GetDatum(sums[(s * COUNT_KINDS + k) * 2 + st]);
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
									 values, nulls);
			}
}

/*
 * fence_lease_counts_all(): for each database that used fence since the
 * server started, the leases and permits held by scope, kind and state,
 * every combination, 0 when none; then, if any is held in databases
 * dropped since (whose entries the sweep has not freed yet), the same rows
 * for them together with a NULL database.  Each partition is read under
 * its lock, one after another, with the lease clock as of then.
 */
PG_FUNCTION_INFO_V1(fence_lease_counts_all);
Datum
fence_lease_counts_all(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			nrows;
	Size		nsums;
	int64	   *sums;
	int64		dropped[COUNT_CATS * 2] = {0};
	bool		any_dropped = false;

	FenceRequirePreload();
	InitMaterializedSRF(fcinfo, 0);
	nrows = counts_shared->nrows;
	nsums = (Size) nrows * COUNT_CATS * 2;
	sums = palloc0(sizeof(int64) * nsums);

	for (int p = 0; p < FENCE_LEASE_PARTITIONS; p++)
	{
		LWLock	   *lock = &counts_shared->locks[p].lock;
		int32	   *part = &counts[(Size) p * nsums];

		for (;;)
		{
			bool		settled;

			CHECK_FOR_INTERRUPTS();
			LWLockAcquire(lock, LW_EXCLUSIVE);
			settled = settle_partition(p, FenceNow());
			if (settled)
				for (Size i = 0; i < nsums; i++)
					sums[i] += part[i];
			LWLockRelease(lock);
			if (settled)
				break;
		}
	}

	for (int row = 0; row < nrows; row++)
	{
		const int64 *rs = &sums[(Size) row * COUNT_CATS * 2];
		Oid			dbid = FenceDbSlotDatabase(row);
		char	   *dbname = OidIsValid(dbid) ? get_database_name(dbid) : NULL;
		bool		held = false;

		for (int i = 0; i < COUNT_CATS * 2; i++)
			held |= (rs[i] != 0);
		if (dbname != NULL)
			put_count_rows(rsinfo, dbname, rs);
		else if (held)
		{
			for (int i = 0; i < COUNT_CATS * 2; i++)
				dropped[i] += rs[i];
			any_dropped = true;
		}
	}
	if (any_dropped)
		put_count_rows(rsinfo, NULL, dropped);
	return (Datum) 0;
}
