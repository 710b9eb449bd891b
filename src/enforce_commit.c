/*-------------------------------------------------------------------------
 *
 * enforce_commit.c
 *		The trigger's looks at the lease table: a strict write's token must
 *		be the live token of its lease when the row is written
 *		(FenceStrictCheck), and every lease a transaction's strict writes
 *		used is checked again at COMMIT; any write under a lease name must
 *		not carry a token the lease table knows a newer one of
 *		(FenceLeaseSuperseded).
 *
 * A holder that paused between its write and its COMMIT, and lost the lease
 * meanwhile, must not commit stale work: the transaction remembers each
 * (lease, token) its strict writes were accepted under, forgets those of a
 * savepoint rolled back, and fails the COMMIT with LF002 if one was lost.
 * PREPARE TRANSACTION is refused after a strict write: COMMIT PREPARED runs
 * no check and may come long after the lease passed on.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "trigger.h"

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
 * The same for FenceLeaseSuperseded: the last (lease, token) it found held,
 * which no newer token can have superseded while the stamp holds.
 */
static bool super_last_valid = false;
static StrictKey super_last;
static FenceLeaseStamp super_last_stamp;

static void enforce_commit_xact_callback(XactEvent event, void *arg);
static void enforce_commit_subxact_callback(SubXactEvent event,
											SubTransactionId mySubid,
											SubTransactionId parentSubid,
											void *arg);

/*
 * Called through FenceEnforceInit() in every process that loads the
 * library: the callbacks are per process.
 */
void
FenceEnforceCommitInit(void)
{
	RegisterXactCallback(enforce_commit_xact_callback, NULL);
	RegisterSubXactCallback(enforce_commit_subxact_callback, NULL);
}

/* ----------------------------------------------------------------
 * The check of each strict write
 * ----------------------------------------------------------------
 */

/*
 * Is (key, token) the pair "last" was found held as, with "stamp", and is
 * it certainly still held?
 */
static inline bool
still_held(bool valid, const StrictKey *last, const FenceLeaseStamp *stamp,
		   const char *key, int keylen, FenceToken token)
{
	return valid && last->token == token && last->keylen == keylen &&
		memcmp(last->key, key, keylen) == 0 && FenceLeaseStampHolds(stamp);
}

/*
 * Was this (lease, token) found held, and recorded, by a strict write of
 * this transaction, and is it certainly still held?
 */
static inline bool
strict_still_held(const char *key, int keylen, FenceToken token)
{
	return still_held(strict_last_valid, &strict_last, &strict_last_stamp,
					  key, keylen, token);
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
FenceLeaseStatus
FenceStrictCheck(const char *key, int keylen, FenceToken token, Oid relid)
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
 * A write under a lease name, strict or not: true if the lease table knows
 * a newer token of the lease than token (status "superseded"), which makes
 * the write stale even where the row has no fence to compare with (a new
 * row).  Tokens only go up, so that stays true; a lease held by token is
 * looked up again only when its stamp no longer holds.  A key the table
 * does not know (on a server that only stores fenced rows, without the
 * library preloaded, or once the newer holder released it) says nothing.
 */
bool
FenceLeaseSuperseded(const char *key, int keylen, FenceToken token)
{
	FenceLeaseStamp stamp;
	FenceLeaseStatus status;

	if (still_held(super_last_valid, &super_last, &super_last_stamp,
				   key, keylen, token))
		return false;
	status = FenceLeaseGetStatus(MyDatabaseId, key, keylen, token, &stamp);
	if (status == FENCE_LEASE_HELD)
	{
		memset(&super_last, 0, sizeof(super_last));
		super_last.token = token;
		super_last.keylen = keylen;
		memcpy(super_last.key, key, keylen);
		super_last_stamp = stamp;
		super_last_valid = true;
	}
	return status == FENCE_LEASE_SUPERSEDED;
}

/* Forget this transaction's strict writes (their memory goes with it). */
static void
forget_strict_writes(void)
{
	strict_writes = NULL;
	strict_max_subid = InvalidSubTransactionId;
	strict_last_valid = false;
}

/* ----------------------------------------------------------------
 * The COMMIT-time check
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
enforce_commit_xact_callback(XactEvent event, void *arg)
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
enforce_commit_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								SubTransactionId parentSubid, void *arg)
{
	HASH_SEQ_STATUS status;
	StrictWrite *w;

	if (event != SUBXACT_EVENT_COMMIT_SUB && event != SUBXACT_EVENT_ABORT_SUB)
		return;
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
