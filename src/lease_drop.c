/*-------------------------------------------------------------------------
 *
 * lease_drop.c
 *		The leases of dropped databases: freed as the DROP DATABASE commits,
 *		and by a sweep of whatever is left.
 *
 * Entries of a dropped database are freed, with its breakers and
 * per-database slot, as its DROP DATABASE commits
 * (FenceLeaseDatabaseDropping); a sweep (FenceLeaseForgetDroppedDatabases)
 * frees anything left when the table or the slots run out, or on request.
 *
 * Locks (fence.h has the order): a heavyweight lock on each database object
 * it looks at, not waited for, taken with no LWLock held; then, one after
 * another, each partition lock (reclaim_all) and dbstate.c's lock, with
 * that heavyweight lock still held.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "storage/lock.h"
#include "utils/fmgroids.h"
#include "utils/snapmgr.h"

#include "lease_internal.h"

/*
 * Free every lease, breaker and the per-database slot of database dbid,
 * which the caller made sure is dropped and that nobody can connect to
 * while this runs.  Takes the partition locks one after another, then the
 * breaker and slot locks; no ERROR of its own.
 */
static int
forget_database(Oid dbid)
{
	/* None of its backends is left to wait, so every entry goes. */
	int			ended = reclaim_all(dbid);

	FenceDbForgetDatabase(dbid);
	return ended;
}

/*
 * Does database dbid exist now?  Read with a snapshot taken now: the
 * syscache, and the catalog snapshot behind it, are only as fresh as the
 * invalidations this backend has read, and whether it read the one of a
 * CREATE DATABASE that committed since depends on what it locked in
 * between; a snapshot taken after our lock on the database object does not.
 */
static bool
database_exists_now(Oid dbid)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	Snapshot	snapshot;
	bool		found;

	ScanKeyInit(&key, Anum_pg_database_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(dbid));
	rel = table_open(DatabaseRelationId, AccessShareLock);
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	scan = systable_beginscan(rel, DatabaseOidIndexId, true, snapshot, 1, &key);
	found = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	UnregisterSnapshot(snapshot);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * Free the leases and the per-database slots of every database that was
 * dropped: its detached leases would otherwise stay until they expire,
 * beyond the reach of fence_break, which works in the caller's database.
 * DROP DATABASE frees them as it commits (FenceLeaseDatabaseDropping), so
 * this finds something only if that did not run.  Needs a transaction (it
 * reads pg_database); takes no LWLock across that.  Returns how many held
 * leases it ended.
 *
 * It must never free the state of a live database, nor of a new database
 * that took a dropped one's OID.  So for each database it holds a lock on
 * the database object (ShareLock, not waited for) while it decides and
 * frees: a backend takes RowExclusiveLock on its database while it
 * connects, so while we hold ours nobody connects to a database of that
 * OID, DROP DATABASE (AccessExclusiveLock) is not under way, and a backend
 * that connected before has seen the database committed.  The existence
 * check then reads pg_database with a snapshot taken after the lock: if it
 * finds no such database, no backend is connected to one of that OID and
 * none can connect until we are done, so every lease, breaker and slot of
 * that OID belongs to the dropped database.  A lock that is not free means
 * a connection or a drop is under way: the database is skipped this time.
 */
int
FenceLeaseForgetDroppedDatabases(void)
{
	Oid		   *dbids;
	int			n;
	int			ended = 0;

	if (lease_shared == NULL)
		return 0;
	n = FenceDbDatabases(&dbids);
	for (int i = 0; i < n; i++)
	{
		LOCKTAG		tag;

		if (dbids[i] == MyDatabaseId)
			continue;
		SET_LOCKTAG_OBJECT(tag, InvalidOid, DatabaseRelationId, dbids[i], 0);
		if (LockAcquire(&tag, ShareLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
			continue;
		if (!database_exists_now(dbids[i]))
			ended += forget_database(dbids[i]);
		LockRelease(&tag, ShareLock, false);
	}
	pfree(dbids);
	return ended;
}

/*
 * The database that this backend's DROP DATABASE is dropping, whose state
 * goes when the drop commits; InvalidOid if none.  DROP DATABASE cannot run
 * in a transaction block, so there is at most one.
 */
static Oid	dropping_dbid = InvalidOid;

static bool drop_callback_registered = false;

/*
 * Free a dropped database's state just before its DROP DATABASE commits.
 * Not earlier: the drop may still fail before it is done, while the
 * database is in use (DROP DATABASE checks that only after the hook).  Not
 * later: until the drop commits, pg_database still holds the database's
 * row, and a new database gets an OID only if no row of pg_database has it
 * (GetNewOidWithIndex looks at dead rows too), so no new database can have
 * this OID yet, and none inherits the old one's leases, breakers, slot or
 * counter block.  DROP DATABASE holds AccessExclusiveLock on the database,
 * so nobody is connected to it.  Interrupts are held: an ERROR here would
 * abort a drop whose files are gone already.
 */
static void
drop_xact_callback(XactEvent event, void *arg)
{
	Oid			dbid = dropping_dbid;

	if (!OidIsValid(dbid))
		return;
	dropping_dbid = InvalidOid;
	if (event != XACT_EVENT_PRE_COMMIT)
		return;
	HOLD_INTERRUPTS();
	(void) forget_database(dbid);
	RESUME_INTERRUPTS();
}

/*
 * DROP DATABASE dbid is under way in this backend (fence.c's object access
 * hook): have its state freed as it commits.
 */
void
FenceLeaseDatabaseDropping(Oid dbid)
{
	if (lease_shared == NULL)
		return;
	if (!drop_callback_registered)
	{
		RegisterXactCallback(drop_xact_callback, NULL);
		drop_callback_registered = true;
	}
	dropping_dbid = dbid;
}
