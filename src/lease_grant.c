/*-------------------------------------------------------------------------
 *
 * lease_grant.c
 *		Granting a lease: FenceLeaseAcquire, one look at a key under its
 *		partition lock at a time, and getting what that look lacked.
 *
 * Granting takes a token from the durable counter.  Its block in shared
 * memory nearly always has one (the next block is reserved ahead, before
 * the partition lock is taken), taken under a spinlock while the partition
 * lock is held; when the block must be refilled all the same (I/O, may
 * ERROR), that happens with no LWLock held: decide under the partition
 * lock, drop it, take the token, then re-check and install under the lock.
 * FenceDbPublishGrant() under the lock makes grants visible in token
 * order; a grant that lost that race takes a new token.  Tokens wasted by
 * lost races leave gaps, which the token law allows.
 *
 * One look (acquire_step) decides with the partition lock held exclusively
 * and must not ERROR: it extends, refuses, installs a grant, or says what
 * is missing first (a token, a slot, the grace's end, a turn in the queue).
 * FenceLeaseAcquire gets that with no lock held -- a token from the
 * counter, a slot from the free list or reclaim, a sleep in lease_wait.c
 * -- and looks again.  dbstate.c's lock (claiming a database's slot) is
 * taken only with no partition lock held: FenceLeaseAcquire claims the
 * slot before it locks a partition.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/acl.h"

#include "lease_internal.h"

/* How often in a row a grant may lose the publish race before giving up. */
#define FENCE_MAX_LOST_RACES	1000

/* The count the last STEP_ROLE_LIMIT saw, for its error message. */
static int32 role_limit_count = 0;

/* A free slot for a new entry, reclaiming if needed.  No lock held. */
static int32
reserve_slot(void)
{
	for (;;)
	{
		int32		idx = pop_free();

		if (idx >= 0)
			return idx;
		if (reclaim_some())
			continue;
		/* Leases of dropped databases are the last thing to give back. */
		if (FenceLeaseForgetDroppedDatabases() > 0)
			continue;
		if ((idx = pop_free()) >= 0)
			return idx;
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("lease table is full"),
				 errdetail("All %d slots hold live leases, leases in their fence.lock_delay or leases with waiters.",
						   lease_shared->nslots),
				 errhint("Release leases that are no longer needed (fence_break() also ends a lease in its fence.lock_delay), or increase fence.max_leases (takes effect at server restart).")));
	}
}

/*
 * The caller holds live entry "slot" (a lease or a permit) in the scope it
 * asks for: the same token, never a shorter lease, and the larger
 * lock-delay.  A lease that gains its first delay counts against its role
 * from now on: STEP_ROLE_LIMIT, changing nothing, if the role holds its
 * limit (role_limit, as in acquire_step).  In another scope: a conflict.
 */
static AcquireStep
extend_held(FenceLeaseSlot *slot, const FenceLeaseRequest *req,
			TimestampTz now, int role_limit, FenceLeaseGrant *grant)
{
	if (slot->scope != req->scope)
	{
		grant->outcome = FENCE_ACQUIRE_SCOPE_CONFLICT;
		grant->held_scope = (FenceLeaseScope) slot->scope;
		return STEP_DONE;
	}
	if (!entry_counted(slot) && req->lock_delay > 0 &&
		!role_count_add(slot->roleid, role_limit, &role_limit_count))
		return STEP_ROLE_LIMIT;
	slot->expires_at = Max(slot->expires_at, lease_deadline(now, req->ttl));
	slot->lock_delay = Max(slot->lock_delay, req->lock_delay);
	count_slot(slot, -1);
	grant->outcome = FENCE_ACQUIRE_EXTENDED;
	grant->token = slot->token;
	grant->expires_at = slot->expires_at;
	return STEP_DONE;
}

/* Who holds a live entry, for fence.log_lease_waits. */
static void
note_blocker(FenceLeaseSlot *slot)
{
	if (slot->scope == FENCE_SCOPE_DETACHED)
	{
		last_blocker.kind = BLOCKER_DETACHED;
		last_blocker.ownerlen = slot->ownerlen;
		memcpy(last_blocker.owner, slot->text + slot->keylen, slot->ownerlen);
		last_blocker.owner[slot->ownerlen] = '\0';
	}
	else
	{
		last_blocker.kind = BLOCKER_SESSION;
		last_blocker.pid = GetPGProcByNumber(slot->held.procno)->pid;
	}
}

/*
 * The key (or a permit of it) is free, but others queued for entry idx
 * first: refused, and in the queue if req waits.  A lease we find expired
 * (and past its lock-delay) goes to the head of the queue at once, whether
 * or not the head's own timer has fired.
 */
static AcquireStep
behind_queue(const FenceLeaseRequest *req, uint32 hash, int32 idx)
{
	FenceLeaseSlot *slot = &lease_slots[idx];

	if (slot->kind == ENTRY_LEASE && slot->scope != FENCE_SCOPE_NONE &&
		!slot_is_taken(slot, FenceNow()))
		(void) serve_queue(slot, slot);
	if (req->wait && my_wait_slot < 0)
		enqueue_self(idx, partition_lock(hash), req);
	last_blocker.kind = BLOCKER_QUEUE;
	return STEP_REFUSED;
}

/*
 * During fence.restart_grace: queue up now, so that when the grace ends the
 * sessions that waited are served in arrival order, before any that merely
 * poll.  A key nobody holds needs an entry to hold its queue.  idx: the
 * key's lease or permit-key entry, or -1.
 */
static AcquireStep
grace_step(const FenceLeaseRequest *req, uint32 hash, int32 idx)
{
	if (req->wait && my_wait_slot < 0)
	{
		if (idx >= 0)
			become_kind(&lease_slots[idx], hash, req, FenceNow());
		else
		{
			if (!have_spares(1))
				return STEP_NEED_SLOT;
			idx = new_entry(hash, req, (req->permits > 0) ?
							ENTRY_PERMIT_KEY : ENTRY_LEASE);
		}
		enqueue_self(idx, partition_lock(hash), req);
	}
	return STEP_GRACE;
}

/*
 * The token, the role count and the publication a grant needs, in that
 * order; STEP_DONE when all are in hand and the grant may be installed.
 * reused: the entry to be taken over, or NULL.
 */
static AcquireStep
prepare_grant(const FenceLeaseRequest *req, FenceToken *token, int role_limit,
			  FenceLeaseSlot *reused, bool *same_role_counted)
{
	bool		counted = request_counted(req->scope, req->lock_delay);
	bool		count_it;

	if (*token == 0 && !FenceCounterTryNext(token))
		return STEP_NEED_TOKEN;

	/*
	 * A detached or lock-delayed lease counts against its role's limit from
	 * now on, unless it replaces an expired lease of the same role that was
	 * counted already.
	 */
	*same_role_counted = counted && reused && entry_counted(reused) &&
		reused->roleid == GetUserId();
	count_it = counted && !*same_role_counted;
	if (count_it && !role_count_add(GetUserId(), role_limit, &role_limit_count))
		return STEP_ROLE_LIMIT;
	if (!FenceDbPublishGrant(*token))
	{
		if (count_it)
			role_count_sub(GetUserId());
		return STEP_LOST_RACE;
	}
	return STEP_DONE;
}

/*
 * acquire_step() for an ordinary lease.  idx: the key's lease entry (or an
 * idle permit key, made a lease entry when it is granted), or -1.
 */
static AcquireStep
lease_step(const FenceLeaseRequest *req, uint32 hash, int32 idx,
		   FenceToken token, int role_limit, FenceLeaseGrant *grant,
		   TimestampTz *wake_at)
{
	FenceLeaseSlot *slot = (idx >= 0) ? &lease_slots[idx] : NULL;
	TimestampTz now = FenceNow();
	int32		me = FENCE_MY_PROCNO;
	bool		same_role_counted;
	AcquireStep step;

	if (slot && slot_is_live(slot, now))
	{
		if (holder_matches(slot, req))
			return extend_held(slot, req, now, role_limit, grant);
		if (req->wait && my_wait_slot < 0)
			enqueue_self(idx, partition_lock(hash), req);
		*wake_at = slot->expires_at;
		note_blocker(slot);
		return STEP_REFUSED;
	}
	if (slot && slot_in_lock_delay(slot, now))
	{
		if (req->wait && my_wait_slot < 0)
			enqueue_self(idx, partition_lock(hash), req);
		*wake_at = lock_delay_end(slot);
		last_blocker.kind = BLOCKER_LOCK_DELAY;
		return STEP_REFUSED;
	}

	/* The key is free.  Waiters ahead of us have it first. */
	if (slot && slot->wait_head >= 0 && slot->wait_head != me)
		return behind_queue(req, hash, idx);
	if (in_restart_grace(wake_at))
		return grace_step(req, hash, idx);

	/*
	 * A slot first, so that a full table wastes no token.  The fast paths
	 * take only spinlocks, so a grant usually needs this lock just once;
	 * reclaiming slots and refilling the counter happen with no lock held.
	 */
	if (slot == NULL && !have_spares(1))
		return STEP_NEED_SLOT;
	step = prepare_grant(req, &token, role_limit, slot, &same_role_counted);
	if (step != STEP_DONE)
		return step;

	if (slot == NULL)
	{
		idx = new_entry(hash, req, ENTRY_LEASE);
		slot = &lease_slots[idx];
	}
	else
		become_kind(slot, hash, req, now);
	install_grant(slot, hash, req, token, now, same_role_counted, grant);
	if (my_wait_slot == idx)
		dequeue_self(idx);		/* and wake the next in line */
	return STEP_DONE;
}

/*
 * acquire_step() for a permit.  idx: the key's permit-key entry (or an idle
 * lease, or an idle permit key with another number of permits, made this
 * kind when a permit is granted), or -1.  At most req->permits live
 * permits (a permit in its lock-delay counts as one); the queue is the
 * key's, and only its head may take a free permit.
 */
static AcquireStep
permit_step(const FenceLeaseRequest *req, uint32 hash, int32 idx,
			FenceToken token, int role_limit, FenceLeaseGrant *grant,
			TimestampTz *wake_at)
{
	FenceLeaseSlot *key = (idx >= 0) ? &lease_slots[idx] : NULL;
	FenceLeaseSlot *reused = NULL;
	FenceLeaseSlot *held = NULL;
	TimestampTz now = FenceNow();
	TimestampTz earliest = 0;
	int32		me = FENCE_MY_PROCNO;
	int			taken = 0;	/* live, or in lock-delay */
	bool		same_role_counted;
	AcquireStep step;
	int32		permit_idx;
	bool		reshape = key && (key->kind != ENTRY_PERMIT_KEY ||
								  key->held.permits != req->permits);

	/*
	 * A key to reshape is idle: it has no live permit, and its expired ones
	 * (of another number) go when it is reshaped, so none is reused.
	 */
	if (key && !reshape)
	{
		taken = scan_permits(hash, key, req, now, &reused, &held, &earliest);
		if (held != NULL)
			return extend_held(held, req, now, role_limit, grant);
	}

	if (taken >= req->permits)
	{
		Assert(key != NULL);
		if (req->wait && my_wait_slot < 0)
			enqueue_self(idx, partition_lock(hash), req);
		*wake_at = earliest;
		last_blocker.kind = BLOCKER_PERMITS;
		return STEP_REFUSED;
	}

	/* A permit is free.  Waiters ahead of us have it first. */
	if (key && key->wait_head >= 0 && key->wait_head != me)
		return behind_queue(req, hash, idx);
	if (in_restart_grace(wake_at))
		return grace_step(req, hash, idx);

	if (!have_spares((key ? 0 : 1) + (reused ? 0 : 1)))
		return STEP_NEED_SLOT;
	step = prepare_grant(req, &token, role_limit, reused, &same_role_counted);
	if (step != STEP_DONE)
		return step;

	if (key == NULL)
	{
		idx = new_entry(hash, req, ENTRY_PERMIT_KEY);
		key = &lease_slots[idx];
	}
	else
		become_kind(key, hash, req, now);
	if (reused == NULL)
	{
		permit_idx = new_entry(hash, req, ENTRY_PERMIT);
		reused = &lease_slots[permit_idx];
	}
	install_grant(reused, hash, req, token, now, same_role_counted, grant);
	/* The key keeps its latest token and role, for fence_lease_status. */
	key->token = token;
	key->roleid = GetUserId();
	if (my_wait_slot == idx)
		dequeue_self(idx);		/* and wake the next in line */
	return STEP_DONE;
}

/*
 * One look at the key under its partition lock (held exclusively by the
 * caller): extend, refuse, install a grant, or say what is missing first.
 * Must not ERROR.  role_limit: the most detached leases the caller's role
 * may hold (0: no limit).  On STEP_REFUSED, *wake_at is the lease-clock time at
 * which the holder expires (0: wait to be woken); on STEP_GRACE, the real
 * time at which the grace period ends.
 */
static AcquireStep
acquire_step(const FenceLeaseRequest *req, uint32 hash, FenceToken token,
			 int role_limit, FenceLeaseGrant *grant, TimestampTz *wake_at)
{
	int32		idx = lookup(hash, MyDatabaseId, req->key, req->keylen);
	TimestampTz now = FenceNow();

	*wake_at = 0;
	if (idx >= 0)
	{
		FenceLeaseSlot *slot = &lease_slots[idx];

		if (kind_conflict(slot, hash, req, now, grant))
			return STEP_DONE;
	}
	if (req->permits > 0)
		return permit_step(req, hash, idx, token, role_limit, grant, wake_at);
	return lease_step(req, hash, idx, token, role_limit, grant, wake_at);
}

/*
 * What every acquire does before it looks at the key, none of it under a
 * lock; returns the role's limit of counted leases for this request (0:
 * none).  May ERROR, with nothing to undo yet.
 */
static int
acquire_prepare(const FenceLeaseRequest *req, FenceLeaseGrant *grant)
{
	Assert(table_may_hold(req->keylen));
	Assert(my_wait_slot < 0 && my_nspare == 0);

	/*
	 * A backend terminated in the middle of a grant (while it waits, or
	 * while it refills the counter) exits without running PG_CATCH blocks:
	 * FATAL does not unwind.  Its queue entry and reserved slots are undone
	 * by this module's own exit callback, since not every caller has
	 * session.c's (a breaker's probe does not).
	 */
	register_exit_callback();

	memset(grant, 0, sizeof(*grant));
	wait_started = 0;
	wait_logged = false;
	if (req->wait)
		(void) lease_wait_event();

	/*
	 * Claim this database's statistics slot now (sweeping dropped databases
	 * if every slot is taken), so that publishing a grant under the
	 * partition lock below cannot fail; and see that the token counter has
	 * a block ready, so that the grant need not drop the lock to wait for
	 * one.
	 */
	FenceDbClaimSlot();
	FenceCounterReserveAhead();
	note_promotion();

	/* superuser() reads the catalog: decide before any lock is taken. */
	if (request_counted(req->scope, req->lock_delay) &&
		FenceMaxLeasesPerRole() > 0 && !superuser())
		my_role_limit = FenceMaxLeasesPerRole();
	else
		my_role_limit = 0;
	return my_role_limit;
}

/* STEP_NEED_SLOT: reserve a free slot, with no lock held.  May ERROR. */
static void
acquire_spare_slot(void)
{
	/* Counted only once it is ours: reserve_slot() may ERROR. */
	int32		idx = reserve_slot();

	Assert(my_nspare < FENCE_MAX_SPARES);
	my_spare_slots[my_nspare++] = idx;
}

/* STEP_ROLE_LIMIT, after a reclaim: the role holds too many.  ERRORs. */
static void
refuse_role_limit(int role_limit)
{
	char	   *rolename = GetUserNameFromId(GetUserId(), false);

	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("role \"%s\" holds too many detached or lock-delayed leases",
					rolename),
			 fence_max_leases_per_role >= 0 ?
			 errdetail("The role holds %d detached or lock-delayed leases; fence.max_leases_per_role is %d.",
					   (int) role_limit_count, role_limit) :
			 errdetail("The role holds %d detached or lock-delayed leases; fence.max_leases_per_role is -1, which allows %d with fence.max_leases at %d.",
					   (int) role_limit_count, role_limit,
					   fence_max_leases),
			 errhint("Release leases that are no longer needed with fence_release() (a lease with a fence.lock_delay counts until its delay has passed), or ask an administrator to raise fence.max_leases_per_role for this role.")));
}

/* STEP_LOST_RACE: give up if the counter keeps losing; token was taken. */
static void
check_lost_races(int lost_races, FenceToken token)
{
	if (lost_races >= FENCE_MAX_LOST_RACES)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the fencing token counter is behind tokens already granted in this database"),
				 errdetail("The counter returned %lld, but a larger token was granted since the server started.",
						   (long long) token),
				 errhint("If the extension was dropped and created again, move the counter forward with fence_advance_tokens().")));
}

/*
 * One look at the key under its partition lock: take a grant handed to us
 * meanwhile, or take one step (acquire_step).  On STEP_REFUSED and
 * STEP_GRACE, *wake_at says until when to sleep.
 */
static AcquireStep
look_once(const FenceLeaseRequest *req, uint32 hash, LWLock *lock,
		  FenceToken token, int role_limit, FenceLeaseGrant *grant,
		  TimestampTz *wake_at)
{
	AcquireStep step;

	/*
	 * Woken with a grant handed to us?  Look without the lock first: that
	 * is the common way a wait ends.
	 */
	if (take_handed_grant(grant))
		return STEP_DONE;
	LWLockAcquire(lock, LW_EXCLUSIVE);
	if (take_handed_grant(grant))
		step = STEP_DONE;
	else
	{
		step = acquire_step(req, hash, token, role_limit, grant, wake_at);
		if (my_wait_slot >= 0)
			lease_waiters[FENCE_MY_PROCNO].watch_until =
				(step == STEP_REFUSED) ? *wake_at : 0;
	}
	LWLockRelease(lock);
	return step;
}

/*
 * Look at the key until a look is final (granted, extended, a conflict,
 * refused, timed out), getting with no lock held what each look lacked.
 * May ERROR; FenceLeaseAcquire undoes the wait then.
 */
static void
acquire_loop(const FenceLeaseRequest *req, uint32 hash, LWLock *lock,
			 int role_limit, FenceLeaseGrant *grant)
{
	FenceToken	token = 0;
	int			lost_races = 0;
	bool		reclaimed = false;

	for (;;)
	{
		TimestampTz wake_at = 0;
		AcquireStep step = look_once(req, hash, lock, token, role_limit,
									 grant, &wake_at);

		switch (step)
		{
			case STEP_DONE:
				return;
			case STEP_NEED_TOKEN:
				token = FenceCounterNext();
				break;
			case STEP_NEED_SLOT:
				acquire_spare_slot();
				break;
			case STEP_ROLE_LIMIT:

				/*
				 * Expired counted leases count until their entries are
				 * reused or reclaimed (those in their lock-delay stay):
				 * reclaim them all once, then ask again.
				 */
				if (!reclaimed)
				{
					(void) reclaim_all(InvalidOid);
					reclaimed = true;
					break;
				}
				refuse_role_limit(role_limit);
				break;
			case STEP_LOST_RACE:
				check_lost_races(++lost_races, token);
				token = 0;
				CHECK_FOR_INTERRUPTS();
				break;
			case STEP_REFUSED:
			case STEP_GRACE:
				/* A token taken for a grant that did not happen is stale. */
				token = 0;
				if (!req->wait)
				{
					grant->outcome = FENCE_ACQUIRE_REFUSED;
					return;
				}
				if (!wait_for_turn(req, step, wake_at))
				{
					cancel_wait();
					grant->outcome = FENCE_ACQUIRE_TIMED_OUT;
					return;
				}
				break;
		}
	}
}

/*
 * The acquire is over, whichever way: leave the queue (a spare slot may be
 * left), log the end of a logged wait, count the outcome.
 */
static void
acquire_finish(const FenceLeaseRequest *req, FenceLeaseGrant *grant)
{
	Assert(my_wait_slot < 0 || grant->outcome != FENCE_ACQUIRE_GRANTED);
	cancel_wait();
	if (wait_logged)
	{
		wait_logged = false;
		log_wait_end(req,
					 grant->outcome == FENCE_ACQUIRE_GRANTED ||
					 grant->outcome == FENCE_ACQUIRE_EXTENDED,
					 grant->outcome == FENCE_ACQUIRE_TIMED_OUT);
	}
	wait_started = 0;

	switch (grant->outcome)
	{
		case FENCE_ACQUIRE_GRANTED:
			FenceDbCount(FENCE_STAT_GRANTS);
			if (grant->takeover)
				FenceDbCount(FENCE_STAT_TAKEOVERS);
			break;
		case FENCE_ACQUIRE_EXTENDED:
			FenceDbCount(FENCE_STAT_RENEWALS);
			break;
		case FENCE_ACQUIRE_REFUSED:
		case FENCE_ACQUIRE_TIMED_OUT:
			FenceDbCount(FENCE_STAT_REFUSALS);
			break;
		case FENCE_ACQUIRE_SCOPE_CONFLICT:
		case FENCE_ACQUIRE_KIND_CONFLICT:
			break;
	}
}

/*
 * Take the lease for this backend (session or transaction scope) or for
 * req->owner (detached scope), or extend it if the caller already holds
 * it.  With req->wait, queue up until granted, the deadline, or an error
 * (cancel, termination): the queue entry is removed on every way out.
 */
void
FenceLeaseAcquire(const FenceLeaseRequest *req, FenceLeaseGrant *grant)
{
	uint32		hash = lease_hash(MyDatabaseId, req->key, req->keylen);
	LWLock	   *lock = partition_lock(hash);
	int			role_limit = acquire_prepare(req, grant);

	PG_TRY();
	{
		acquire_loop(req, hash, lock, role_limit, grant);
	}
	PG_CATCH();
	{
		cancel_wait();
		if (wait_logged)
		{
			wait_logged = false;
			log_wait_end(req, false, false);
		}
		wait_started = 0;
		PG_RE_THROW();
	}
	PG_END_TRY();

	/* Not waiting any more on any way out; a spare slot may be left. */
	acquire_finish(req, grant);
}
