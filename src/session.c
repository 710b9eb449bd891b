/*-------------------------------------------------------------------------
 *
 * session.c
 *		What this backend holds: its leases and their tokens, the token in
 *		effect for fenced writes, and clean-up at transaction and session end.
 *
 * The backend remembers, per key, the latest token it took (in any scope).
 * A remembered token outlives the lease's expiry or supersession on
 * purpose: a worker that lost its lease must stay fenced with its old
 * token, never become an unfenced writer.  It is forgotten only when this
 * backend releases that lease, when a transaction lease's transaction (or
 * savepoint) ends, with the session (its end, or DISCARD ALL), and, for a
 * detached lease, when the session asks (fence_forget_token).
 *
 * The token in effect for a write guarded by lease K:
 *	1. the latest fence_use_token(token, K) of this transaction;
 *	2. else the latest fence_use_token(token) without a key;
 *	3. else the token this backend remembers for K;
 *	4. else the most recent token this backend took: the largest one it
 *	   remembers, since tokens only grow.
 * Without K, the latest fence_use_token of this transaction (with or
 * without a key), else 4.  fence_use_token settings follow the transaction
 * like SET LOCAL: rolling back a savepoint undoes those made inside it.
 *
 * A fence_use_token setting counts only for writes made as the role that
 * was the current user when it was set.  A token is whatever number the
 * caller passes, so without this a caller could choose the token of the
 * writes a SECURITY DEFINER function makes under the lease it takes for
 * itself, and stamp rows that the caller may not even update with a token
 * above every holder's.  Inside such a function (or any change of the
 * current user) the caller's settings are not in effect, and the
 * function's own are not in effect for the caller after it returns.  The
 * leases this backend remembers (3 and 4) count for every role: their
 * tokens were granted, and a grant's token is above every fence written
 * before it, so no choice of one can fence out a later holder.
 *
 * A session with none of these uses the token in effect carried to it
 * (fence.carried_tokens): on a Citus worker node, the shard writes of a
 * coordinator's statement run in backends of their own, and the coordinator
 * carries its session's state to them (citus.c).  The carried state holds
 * everything the rule above reads, so the same rule over it gives the
 * coordinator's answer for any lease name.
 *
 * Memory is prepared before a grant becomes visible in shared memory, so a
 * grant can never be left unrecorded (and so never leaked): clean-up at
 * COMMIT/ROLLBACK, savepoint rollback and backend exit finds everything.
 *
 * DISCARD ALL ends the session's hold as backend exit does: a session
 * pooler runs it between clients (PgBouncer's server_reset_query), and
 * the next client must not inherit the leases or the token in effect of
 * the last one, just as it does not inherit its advisory locks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/ipc.h"
#include "tcop/utility.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "fence.h"

typedef struct SessionLease
{
	char		key[FENCE_MAX_KEY_LEN + 1]; /* hash key, NUL-terminated */
	FenceLeaseScope scope;		/* NONE only while a grant is pending */
	FenceToken	token;
	SubTransactionId subid;		/* transaction scope: (sub)xact that took it */
	bool		in_xact_list;
	dlist_node	xact_node;		/* in xact_leases when scope is XACT */
} SessionLease;

typedef struct TokenOverride
{
	bool		has_key;
	char		key[FENCE_MAX_KEY_LEN + 1];
	FenceToken	token;
	SubTransactionId subid;
	Oid			roleid;			/* the current user who set it */
} TokenOverride;

static HTAB *session_leases = NULL;
static dlist_head xact_leases = DLIST_STATIC_INIT(xact_leases);

/* The largest remembered token, cached; recomputed when it may have left. */
static bool latest_known = true;
static bool latest_exists = false;
static FenceToken latest_token = 0;

/* fence_use_token() settings of the current transaction, oldest first. */
static TokenOverride *overrides = NULL;
static int	n_overrides = 0;
static int	max_overrides = 0;

static bool callbacks_registered = false;

static ProcessUtility_hook_type prev_ProcessUtility = NULL;

static void session_xact_callback(XactEvent event, void *arg);
static void session_subxact_callback(SubXactEvent event,
									 SubTransactionId mySubid,
									 SubTransactionId parentSubid, void *arg);
static void session_exit_callback(int code, Datum arg);
static void session_end(bool at_exit);
static void session_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
								   bool readOnlyTree,
								   ProcessUtilityContext context,
								   ParamListInfo params,
								   QueryEnvironment *queryEnv,
								   DestReceiver *dest, QueryCompletion *qc);

/*
 * Called from _PG_init in every process that loads the library (preloaded
 * or not): the hook is per process.
 */
void
FenceSessionInit(void)
{
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = session_ProcessUtility;
}

static void
session_init(void)
{
	if (!callbacks_registered)
	{
		RegisterXactCallback(session_xact_callback, NULL);
		RegisterSubXactCallback(session_subxact_callback, NULL);
		if (fence_preloaded)
			before_shmem_exit(session_exit_callback, (Datum) 0);
		callbacks_registered = true;
	}
	if (session_leases == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = FENCE_MAX_KEY_LEN + 1;
		ctl.entrysize = sizeof(SessionLease);
		session_leases = hash_create("fence session leases", 16, &ctl,
									 HASH_ELEM | HASH_STRINGS);
	}
}

/* key as a NUL-terminated hash key; false if it cannot be a lease key. */
static bool
make_key(char *buf, const char *key, int keylen)
{
	if (key == NULL || keylen <= 0 || keylen > FENCE_MAX_KEY_LEN)
		return false;
	memcpy(buf, key, keylen);
	buf[keylen] = '\0';
	return true;
}

static SessionLease *
find_lease(const char *key, int keylen)
{
	char		buf[FENCE_MAX_KEY_LEN + 1];
	SessionLease *entry;

	if (session_leases == NULL || !make_key(buf, key, keylen))
		return NULL;
	entry = hash_search(session_leases, buf, HASH_FIND, NULL);
	if (entry == NULL || entry->scope == FENCE_SCOPE_NONE)
		return NULL;
	return entry;
}

static void
set_token(SessionLease *entry, FenceToken token)
{
	if (latest_known && (!latest_exists || token >= latest_token))
	{
		latest_exists = true;
		latest_token = token;
	}
	else if (entry->scope != FENCE_SCOPE_NONE && entry->token == latest_token)
		latest_known = false;
	entry->token = token;
}

static void
forget(SessionLease *entry)
{
	if (entry->in_xact_list)
	{
		dlist_delete(&entry->xact_node);
		entry->in_xact_list = false;
	}
	if (entry->scope != FENCE_SCOPE_NONE && latest_exists &&
		entry->token == latest_token)
		latest_known = false;
	(void) hash_search(session_leases, entry->key, HASH_REMOVE, NULL);
}

/*
 * Take or extend a lease and remember it.  The remembered entry is created
 * first (that may ERROR on memory) and dropped again if nothing was
 * granted, so that once the shared table has the grant, recording it
 * cannot fail.
 */
void
FenceSessionAcquire(const FenceLeaseRequest *req, FenceLeaseGrant *grant)
{
	char		buf[FENCE_MAX_KEY_LEN + 1];
	SessionLease *entry;
	bool		found;

	session_init();
	if (!make_key(buf, req->key, req->keylen))
		elog(ERROR, "invalid lease key length %d", req->keylen);

	entry = hash_search(session_leases, buf, HASH_ENTER, &found);
	if (!found)
	{
		entry->scope = FENCE_SCOPE_NONE;
		entry->token = 0;
		entry->subid = InvalidSubTransactionId;
		entry->in_xact_list = false;
	}

	PG_TRY();
	{
		FenceLeaseAcquire(req, grant);
	}
	PG_CATCH();
	{
		if (!found)
			(void) hash_search(session_leases, buf, HASH_REMOVE, NULL);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (grant->outcome != FENCE_ACQUIRE_GRANTED &&
		grant->outcome != FENCE_ACQUIRE_EXTENDED)
	{
		if (!found)
			(void) hash_search(session_leases, buf, HASH_REMOVE, NULL);
		return;
	}

	/*
	 * A new transaction lease belongs to the current subtransaction; an
	 * extended one stays with the one that took it.
	 */
	if (req->scope == FENCE_SCOPE_XACT)
	{
		if (!entry->in_xact_list)
		{
			dlist_push_tail(&xact_leases, &entry->xact_node);
			entry->in_xact_list = true;
			entry->subid = GetCurrentSubTransactionId();
		}
		else if (grant->outcome == FENCE_ACQUIRE_GRANTED)
			entry->subid = GetCurrentSubTransactionId();
	}
	else if (entry->in_xact_list)
	{
		dlist_delete(&entry->xact_node);
		entry->in_xact_list = false;
	}
	set_token(entry, grant->token);
	entry->scope = req->scope;
}

/* fence_release(): compare-and-delete; forget the token if it was ours. */
bool
FenceSessionRelease(const char *key, int keylen, FenceToken token)
{
	bool		released = FenceLeaseRelease(key, keylen, token);

	if (released)
	{
		SessionLease *entry = find_lease(key, keylen);

		if (entry && entry->token == token)
			forget(entry);
	}
	return released;
}

/* fence_break(): like a release, by force. */
bool
FenceSessionBreak(const char *key, int keylen, FenceToken *token)
{
	bool		broken = FenceLeaseBreak(key, keylen, token);

	if (broken)
	{
		SessionLease *entry = find_lease(key, keylen);

		if (entry && entry->token == *token)
			forget(entry);
	}
	return broken;
}

/*
 * fence_forget_token(): stop remembering that this backend took token for
 * key, as DISCARD ALL forgets, but for one detached lease and without
 * ending it.  The lease stays its owner's, renewable and releasable by its
 * token from any session; only this backend's token in effect no longer
 * comes from it.  So a session that takes a detached lease for work done
 * elsewhere (a pooled connection, handing the lease to a client) goes on
 * writing with what it had before.  A session or transaction lease is
 * refused: this backend ends those itself, at session or transaction end,
 * from what it remembers.  Returns false if it did not remember token for
 * key (nothing to forget).
 */
bool
FenceSessionForget(const char *key, int keylen, FenceToken token)
{
	SessionLease *entry = find_lease(key, keylen);

	if (entry == NULL || entry->token != token)
		return false;
	if (entry->scope == FENCE_SCOPE_SESSION)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lease \"%s\" is held by this session with session scope",
						entry->key),
				 errdetail("Only the token of a detached lease can be forgotten; this session ends its session leases itself."),
				 errhint("Take the lease with an owner (owner => ...) to hand it on, or release it with fence_release().")));
	if (entry->scope == FENCE_SCOPE_XACT)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lease \"%s\" is held by this session with transaction scope",
						entry->key),
				 errdetail("Only the token of a detached lease can be forgotten; a transaction lease ends with its transaction."),
				 errhint("Take the lease with an owner (owner => ...) to hand it on.")));
	forget(entry);
	return true;
}

/* fence_use_token(): the token in effect for the rest of the transaction. */
void
FenceSessionUseToken(FenceToken token, const char *key, int keylen)
{
	SubTransactionId subid = GetCurrentSubTransactionId();
	Oid			roleid = GetUserId();
	char		buf[FENCE_MAX_KEY_LEN + 1];
	bool		has_key = (key != NULL);
	TokenOverride *o;

	session_init();
	if (has_key && !make_key(buf, key, keylen))
		elog(ERROR, "invalid lease key length %d", keylen);

	/* Setting the same key again in the same subtransaction replaces. */
	for (int i = 0; i < n_overrides; i++)
	{
		o = &overrides[i];
		if (o->subid == subid && o->roleid == roleid &&
			o->has_key == has_key &&
			(!has_key || strcmp(o->key, buf) == 0))
		{
			o->token = token;
			/* keep "latest set" order: move it to the end */
			if (i != n_overrides - 1)
			{
				TokenOverride tmp = *o;

				memmove(&overrides[i], &overrides[i + 1],
						sizeof(TokenOverride) * (n_overrides - i - 1));
				overrides[n_overrides - 1] = tmp;
			}
			return;
		}
	}

	if (n_overrides == max_overrides)
	{
		int			newmax = Max(8, max_overrides * 2);

		if (overrides == NULL)
			overrides = MemoryContextAlloc(TopMemoryContext,
										   sizeof(TokenOverride) * newmax);
		else
			overrides = repalloc(overrides, sizeof(TokenOverride) * newmax);
		max_overrides = newmax;
	}
	o = &overrides[n_overrides];
	o->has_key = has_key;
	if (has_key)
		strcpy(o->key, buf);
	o->token = token;
	o->subid = subid;
	o->roleid = roleid;
	n_overrides++;
}

static void
recompute_latest(void)
{
	HASH_SEQ_STATUS status;
	SessionLease *entry;

	latest_exists = false;
	latest_token = 0;
	if (session_leases != NULL)
	{
		hash_seq_init(&status, session_leases);
		while ((entry = hash_seq_search(&status)) != NULL)
		{
			if (entry->scope != FENCE_SCOPE_NONE &&
				(!latest_exists || entry->token > latest_token))
			{
				latest_exists = true;
				latest_token = entry->token;
			}
		}
	}
	latest_known = true;
}

/*
 * The latest fence_use_token setting that the current user made, for this
 * lease name (keyed: only one naming it; else one naming any or none) or,
 * unkeyed, one naming no lease; NULL if none.
 */
static const TokenOverride *
latest_override(bool keyed, const char *lease_key, int keylen, bool any)
{
	Oid			roleid;

	if (n_overrides == 0)
		return NULL;
	roleid = GetUserId();
	for (int i = n_overrides - 1; i >= 0; i--)
	{
		const TokenOverride *o = &overrides[i];

		if (o->roleid != roleid)
			continue;
		if (any)
			return o;
		if (keyed ? (o->has_key && strlen(o->key) == (size_t) keylen &&
					 memcmp(o->key, lease_key, keylen) == 0) :
			!o->has_key)
			return o;
	}
	return NULL;
}

/* The session's own token in effect (FenceSessionTokenInEffect). */
static bool
own_token_in_effect(const char *lease_key, int keylen, FenceToken *token)
{
	SessionLease *entry;

	if (n_overrides > 0)
	{
		const TokenOverride *o;

		if (lease_key == NULL)
			o = latest_override(false, NULL, 0, true);
		else if ((o = latest_override(true, lease_key, keylen, false)) == NULL)
			o = latest_override(false, NULL, 0, false);
		if (o != NULL)
		{
			*token = o->token;
			return true;
		}
	}

	if (session_leases == NULL)
		return false;

	if (lease_key != NULL && (entry = find_lease(lease_key, keylen)) != NULL)
	{
		*token = entry->token;
		return true;
	}

	if (!latest_known)
		recompute_latest();
	if (!latest_exists)
		return false;
	*token = latest_token;
	return true;
}

/*
 * The rule of the header comment over the state a coordinator carried: the
 * same steps as own_token_in_effect(), in the same order.
 */
static bool
carried_token_in_effect(const FenceCarried *carried, const char *lease_key,
						int keylen, FenceToken *token)
{
	const FenceCarriedItem *any_override = NULL;
	const FenceCarriedItem *unkeyed = NULL;
	const FenceCarriedItem *keyed = NULL;
	const FenceCarriedItem *lease = NULL;
	bool		have_latest = false;
	FenceToken	latest = 0;

	for (int i = 0; i < carried->n; i++)
	{
		const FenceCarriedItem *item = &carried->items[i];
		bool		same_key = lease_key != NULL && item->keylen == keylen &&
			memcmp(item->key, lease_key, keylen) == 0;

		switch (item->kind)
		{
			case 'U':
				any_override = item;
				break;
			case 'u':
				unkeyed = item;
				break;
			case 'k':
				if (same_key)
					keyed = item;
				break;
			case 'l':
				if (same_key)
					lease = item;
				if (!have_latest || item->token > latest)
					latest = item->token;
				have_latest = true;
				break;
		}
	}

	if (lease_key == NULL && any_override != NULL)
		*token = any_override->token;
	else if (keyed != NULL)
		*token = keyed->token;
	else if (unkeyed != NULL)
		*token = unkeyed->token;
	else if (lease != NULL)
		*token = lease->token;
	else if (have_latest)
		*token = latest;
	else
		return false;
	return true;
}

/*
 * The token a fenced write by this session carries now, for a table
 * guarded by lease_key (NULL: the trigger names no lease).  False if there
 * is none.  Cheap: the trigger calls it for every row.
 */
bool
FenceSessionTokenInEffect(const char *lease_key, int keylen, FenceToken *token)
{
	const FenceCarried *carried;

	if (own_token_in_effect(lease_key, keylen, token))
		return true;
	carried = FenceCarriedInEffect();
	if (carried == NULL)
		return false;
	return carried_token_in_effect(carried, lease_key, keylen, token);
}

/*
 * This session's own token in effect, as fence.carried_tokens spells it
 * (see guc.c), appended to buf; nothing if the session has none.  Each
 * key's latest fence_use_token only, and every remembered lease.
 */
void
FenceSessionCarryState(StringInfo buf)
{
	if (n_overrides > 0)
	{
		Oid			roleid = GetUserId();
		const TokenOverride *o;

		if ((o = latest_override(false, NULL, 0, true)) != NULL)
			FenceCarriedAppend(buf, 'U', o->token, NULL, 0);
		if ((o = latest_override(false, NULL, 0, false)) != NULL)
			FenceCarriedAppend(buf, 'u', o->token, NULL, 0);
		for (int i = n_overrides - 1; i >= 0; i--)
		{
			bool		later = false;

			if (!overrides[i].has_key || overrides[i].roleid != roleid)
				continue;
			for (int j = i + 1; j < n_overrides && !later; j++)
				later = overrides[j].has_key && overrides[j].roleid == roleid &&
					strcmp(overrides[j].key, overrides[i].key) == 0;
			if (!later)
				FenceCarriedAppend(buf, 'k', overrides[i].token,
								   overrides[i].key, strlen(overrides[i].key));
		}
	}
	if (session_leases != NULL)
	{
		HASH_SEQ_STATUS status;
		SessionLease *entry;

		hash_seq_init(&status, session_leases);
		while ((entry = hash_seq_search(&status)) != NULL)
		{
			if (entry->scope != FENCE_SCOPE_NONE)
				FenceCarriedAppend(buf, 'l', entry->token,
								   entry->key, strlen(entry->key));
		}
	}
}

/*
 * Release this backend's transaction leases: all of them (subid invalid,
 * at transaction end) or those of one aborted subtransaction.  Runs in
 * transaction callbacks: must not ERROR.
 */
static void
release_xact_leases(SubTransactionId subid)
{
	dlist_mutable_iter iter;

	dlist_foreach_modify(iter, &xact_leases)
	{
		SessionLease *entry = dlist_container(SessionLease, xact_node, iter.cur);

		if (subid != InvalidSubTransactionId && entry->subid != subid)
			continue;
		(void) FenceLeaseRelease(entry->key, strlen(entry->key), entry->token);
		forget(entry);
	}
}

static void
session_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			if (!dlist_is_empty(&xact_leases))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that holds a transaction-scoped lease"),
						 errdetail("A prepared transaction outlives its session's hold on the transaction, but a transaction lease ends with it."),
						 errhint("Release the lease before PREPARE TRANSACTION, or use a detached lease (fence_try_lease with owner).")));
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			release_xact_leases(InvalidSubTransactionId);
			n_overrides = 0;
			break;
		default:
			break;
	}
}

static void
session_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	dlist_iter	iter;
	int			n;

	switch (event)
	{
		case SUBXACT_EVENT_ABORT_SUB:
			release_xact_leases(mySubid);
			n = 0;
			for (int i = 0; i < n_overrides; i++)
				if (overrides[i].subid != mySubid)
					overrides[n++] = overrides[i];
			n_overrides = n;
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
			dlist_foreach(iter, &xact_leases)
			{
				SessionLease *entry = dlist_container(SessionLease, xact_node, iter.cur);

				if (entry->subid == mySubid)
					entry->subid = parentSubid;
			}
			for (int i = 0; i < n_overrides; i++)
				if (overrides[i].subid == mySubid)
					overrides[i].subid = parentSubid;
			break;
		default:
			break;
	}
}

/*
 * The end of the session's hold, at backend exit and at DISCARD ALL:
 * release the session and transaction leases this backend holds (those it
 * still holds: a release with a superseded token changes nothing), and
 * forget every remembered token, detached leases' too.  At exit a lease
 * granted with a lock-delay is not released but abandoned: its session
 * ended without releasing it, and its key stays ungranted for the delay
 * (FenceLeaseAbandon).  DISCARD ALL is a request, and releases.  Detached
 * leases stay: they belong to their owner name, not to the session.  Must
 * not ERROR (neither FenceLeaseRelease nor FenceLeaseAbandon does).
 */
static void
session_end(bool at_exit)
{
	HASH_SEQ_STATUS status;
	SessionLease *entry;

	n_overrides = 0;
	if (session_leases == NULL)
		return;

	hash_seq_init(&status, session_leases);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		if (entry->scope != FENCE_SCOPE_SESSION && entry->scope != FENCE_SCOPE_XACT)
			continue;
		if (at_exit)
			(void) FenceLeaseAbandon(entry->key, strlen(entry->key), entry->token);
		else
			(void) FenceLeaseRelease(entry->key, strlen(entry->key), entry->token);
	}
	hash_destroy(session_leases);
	session_leases = NULL;
	dlist_init(&xact_leases);
	latest_known = true;
	latest_exists = false;
}

/*
 * Backend exit.  (A wait in progress is lease_wait.c's to undo, in its own
 * exit callback.)
 */
static void
session_exit_callback(int code, Datum arg)
{
	session_end(true);
}

/*
 * DISCARD ALL ends the session's hold once it has succeeded: it refuses to
 * run in a transaction block (so no transaction lease or fence_use_token
 * can be in effect then), and a DISCARD ALL that failed must leave
 * everything as it was.  Advisory locks are released the same way, at
 * once and not undone by the transaction's fate.
 *
 * The other forms do nothing here: DISCARD PLANS, SEQUENCES and TEMP each
 * drop one cache or kind of object and leave the session itself (its
 * settings, prepared statements and advisory locks) alone; a lease is the
 * session's, like an advisory lock.
 */
static void
session_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
					   bool readOnlyTree, ProcessUtilityContext context,
					   ParamListInfo params, QueryEnvironment *queryEnv,
					   DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	bool		discard_all = IsA(parsetree, DiscardStmt) &&
		((DiscardStmt *) parsetree)->target == DISCARD_ALL;

	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);

	if (discard_all)
		session_end(false);
}
