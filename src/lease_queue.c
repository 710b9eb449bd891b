/*-------------------------------------------------------------------------
 *
 * lease_queue.c
 *		The FIFO queue of each key: joining and leaving it, and the hand-off
 *		of a freed key to its head.
 *
 * Blocking waits: each entry has a FIFO queue of waiting backends, linked
 * through a per-PGPROC array (FenceWaiter) that also holds each waiter's
 * whole request.  Nobody may barge past a non-empty queue.  As in
 * PostgreSQL's lock manager, the backend that frees a key grants it to the
 * head of the queue itself (hand_off): a release, a break, the end of a
 * transaction, the end of a session (of a lease without a lock-delay), or a
 * head that gives up.  It takes the token, counts the role, publishes the
 * grant and installs it under the partition lock, as the head would have,
 * unlinks the head and sets its latch; the head finds its grant ready and
 * returns without the lock.  A released permit is granted in place.  A lease
 * that expires is handed over by whoever finds it expired first (a waiter
 * whose timer fired, or any caller), or taken by the head when its own timer
 * fires; one that ended without a release, only once its lock-delay has
 * passed.  Where a hand-off could change the outcome (the restart grace; an
 * empty token block, which is never refilled under the lock; the role's
 * limit; a lost publication race; a waiter in a read-only transaction) the
 * head is woken instead and takes the key itself: only the head may take a
 * free key.  Every waiter sleeps on its latch until the holder's expiry or
 * the end of the lock-delay (real clock), and records until when
 * (watch_until), so that a new holder wakes the new head only if it must
 * watch an earlier time or take a free key: nobody is woken just to sleep
 * again.  Waiters are also woken by the virtual clock moving
 * (FenceLeaseWakeWaiters) and by a renewal that moves the expiry earlier.
 * During fence.restart_grace waiters queue up all the same (a free key gets
 * an entry to hold its queue), so that the grace's end serves them in arrival
 * order.  A waiter that errors out leaves the queue in a PG_CATCH block; one
 * that exits, in this module's exit callback; a grant handed to it meanwhile
 * is released there, and so goes on to the next in line.  fence_lease_waiters
 * and fence_blocking_pids() read the waiters' entries too.
 *
 * Locks: everything here runs with the partition lock of the queue's key
 * held exclusively (count_waiters: shared is enough), and never ERRORs;
 * a hand-off takes the token block's spinlock and the role-count lock
 * inside it, and sets the head's latch.  lease_wait.c sleeps, with no lock
 * held.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "storage/proc.h"

#include "lease_internal.h"

/* This backend's acquire in progress, for clean-up on error or exit. */
int32		my_wait_slot = -1;	/* queue we are in, or -1 */
LWLock	   *my_wait_lock = NULL;	/* ... and its partition lock */
char		my_wait_key[FENCE_MAX_KEY_LEN];	/* ... and its key, to release
											 * a grant handed to us that we
											 * could not take */
int			my_wait_keylen = 0;
int32		my_role_limit = 0;	/* the acquire's role_limit, for the queue */

void
enqueue_self(int32 idx, LWLock *lock, const FenceLeaseRequest *req)
{
	FenceLeaseSlot *slot = &lease_slots[idx];
	int32		me = FENCE_MY_PROCNO;
	int32	   *link = &slot->wait_head;

	Assert(lease_waiters[me].slot < 0);
	while (*link >= 0)
		link = &lease_waiters[*link].next;
	*link = me;
	lease_waiters[me].slot = idx;
	lease_waiters[me].next = -1;
	lease_waiters[me].scope = (uint8) req->scope;
	lease_waiters[me].roleid = GetUserId();
	lease_waiters[me].since = GetCurrentTimestamp();
	lease_waiters[me].deadline = req->has_deadline ? req->deadline : 0;
	lease_waiters[me].permits = req->permits;
	lease_waiters[me].ttl = req->ttl;
	lease_waiters[me].lock_delay = req->lock_delay;
	lease_waiters[me].role_limit = my_role_limit;
	lease_waiters[me].ownerlen =
		(req->scope == FENCE_SCOPE_DETACHED) ? (uint8) req->ownerlen : 0;
	if (lease_waiters[me].ownerlen > 0)
		memcpy(lease_waiters[me].owner, req->owner, lease_waiters[me].ownerlen);
	/* A read-only transaction cannot take a token: it must fail itself. */
	lease_waiters[me].may_hand_off = !XactReadOnly;
	lease_waiters[me].granted = false;
	lease_waiters[me].watch_until = 0;
	my_wait_slot = idx;
	my_wait_lock = lock;
	memcpy(my_wait_key, req->key, req->keylen);
	my_wait_keylen = req->keylen;
}

int
count_waiters(FenceLeaseSlot *slot)
{
	int			n = 0;

	for (int32 p = slot->wait_head; p >= 0; p = lease_waiters[p].next)
		n++;
	return n;
}

/*
 * Leave the queue of slot idx.  If the head changed, the queue is served
 * (serve_queue): a released key goes to the new head, or the new head is
 * woken if it must look again: to take the key, or to watch an expiry
 * sooner than the one it sleeps until.
 */
void
dequeue_self(int32 idx)
{
	FenceLeaseSlot *slot = &lease_slots[idx];
	int32		me = FENCE_MY_PROCNO;
	int32	   *link = &slot->wait_head;

	while (*link >= 0 && *link != me)
		link = &lease_waiters[*link].next;
	if (*link == me)
	{
		*link = lease_waiters[me].next;
		if (link == &slot->wait_head && slot->wait_head >= 0)
			(void) serve_queue(slot, (slot->kind == ENTRY_LEASE &&
									  slot->scope == FENCE_SCOPE_NONE) ?
							   slot : NULL);
	}
	lease_waiters[me].slot = -1;
	lease_waiters[me].next = -1;
	my_wait_slot = -1;
	my_wait_lock = NULL;
}

/*
 * Has another backend granted us the lease we queue for (hand_off)?  Then
 * take the grant: we are out of the queue.  Without the partition lock the
 * answer may be a stale "no" (the caller then asks again under the lock),
 * never a wrong "yes": only we clear "granted", and the grant was written
 * before it was set.
 */
bool
take_handed_grant(FenceLeaseGrant *grant)
{
	FenceWaiter *me = &lease_waiters[FENCE_MY_PROCNO];

	if (my_wait_slot < 0 || !me->granted)
		return false;
	pg_read_barrier();
	*grant = me->handed;
	me->granted = false;
	my_wait_slot = -1;
	my_wait_lock = NULL;
	return true;
}

/*
 * Grant "freed" -- the lease entry "queue" just released or found expired
 * past its lock-delay (taken over then), or a permit of permit key "queue"
 * just released (reused in place, so that a released permit goes to the
 * head of the queue) -- to the head of the queue, as the
 * head would take it itself: a token from the counter's block, the role
 * count, publication in token order, the grant.  Then the head leaves the
 * queue, finds the grant ready when it wakes (take_handed_grant), and
 * returns.  As in PostgreSQL's lock manager, this saves the head a trip
 * through the partition lock, and the next waiter a wake-up to sleep again.
 *
 * A release or a break ends a lease outright, with no lock-delay: freed
 * may be granted at once.  (A lease that expires, or that its session
 * abandons, stays in its lock-delay: its waiters are woken, or wake up, to
 * look themselves.)  Other permits of the key in their lock-delay count as
 * taken; the released one makes room for one more.
 *
 * Only where it cannot change the outcome: not during the restart grace
 * (whose end serves the queue), not when the counter's block is empty (the
 * refill may not run under the partition lock) or the grant would lose the
 * publication race, not over the role's limit (the head's own attempt
 * reclaims and reports it), not in another database (whose counter this
 * backend does not read), not for a waiter that could take no token itself
 * or whose owner holds a permit of the key already (it extends that).
 * False then, changing nothing but maybe wasting a token: the caller wakes
 * the head to take the key itself.  Caller holds the partition lock
 * exclusively; never ERRORs.
 */
static bool
hand_off(FenceLeaseSlot *queue, FenceLeaseSlot *freed, uint32 hash)
{
	int32		procno = queue->wait_head;
	FenceWaiter *waiter = &lease_waiters[procno];
	int			permits = (queue->kind == ENTRY_PERMIT_KEY) ?
		queue->held.permits : 0;
	FenceLeaseRequest req;
	FenceToken	token;
	TimestampTz grace_end;
	TimestampTz now = FenceNow();
	int32		count;

	Assert(procno >= 0 && !slot_is_taken(freed, now));
	if (!waiter->may_hand_off || waiter->granted ||
		queue->dbid != MyDatabaseId || waiter->permits != permits ||
		in_restart_grace(&grace_end))
		return false;
	if (permits > 0 && waiter->scope == FENCE_SCOPE_DETACHED &&
		waiter_owns_permit(hash, queue, waiter, now))
		return false;
	if (!FenceCounterTryNext(&token))
		return false;
	if (request_counted(waiter->scope, waiter->lock_delay) &&
		!role_count_add(waiter->roleid, waiter->role_limit, &count))
		return false;
	if (!FenceDbPublishGrant(token))
	{
		if (request_counted(waiter->scope, waiter->lock_delay))
			role_count_sub(waiter->roleid);
		return false;
	}

	memset(&req, 0, sizeof(req));
	req.key = queue->text;
	req.keylen = queue->keylen;
	req.owner = waiter->owner;
	req.ownerlen = waiter->ownerlen;
	req.scope = (FenceLeaseScope) waiter->scope;
	req.permits = permits;
	req.ttl = waiter->ttl;
	req.lock_delay = waiter->lock_delay;
	install_grant_to(freed, hash, &req, waiter->roleid, procno, token, now,
					 false, &waiter->handed);
	if (freed != queue)
	{
		/* The key keeps its latest token and role, as permit_step's. */
		queue->token = token;
		queue->roleid = waiter->roleid;
	}
	queue->wait_head = waiter->next;
	waiter->slot = -1;
	waiter->next = -1;
	pg_write_barrier();
	waiter->granted = true;
	wake_proc(procno);
	return true;
}

/*
 * When entry "slot", taken (slot_is_taken), may next be granted: at its
 * expiry, or at the end of the lock-delay it is in.
 */
static inline TimestampTz
taken_until(FenceLeaseSlot *slot, TimestampTz now)
{
	return slot_is_live(slot, now) ? slot->expires_at : lock_delay_end(slot);
}

/*
 * Must the head of queue "queue" look at the key now?  Yes if the key (or a
 * permit of it) is free; else only if the lease clock is the real one and
 * it sleeps past the time the key (the first permit) may next be granted,
 * or without a timeout: on the virtual clock, every move of the clock
 * wakes all waiters.  Caller holds the partition lock.
 */
static bool
head_needs_wake(FenceLeaseSlot *queue, uint32 hash)
{
	TimestampTz watch_until = lease_waiters[queue->wait_head].watch_until;
	TimestampTz now = FenceNow();
	TimestampTz earliest = 0;

	if (queue->kind == ENTRY_PERMIT_KEY)
	{
		int			taken = 0;

		for (int32 *link = next_permit_link(bucket_head(hash), queue);
			 link != NULL;
			 link = next_permit_link(&lease_slots[*link].next, queue))
		{
			FenceLeaseSlot *permit = &lease_slots[*link];

			if (!slot_is_taken(permit, now))
				continue;
			if (taken++ == 0 || taken_until(permit, now) < earliest)
				earliest = taken_until(permit, now);
		}
		if (taken < queue->held.permits)
			return true;
	}
	else
	{
		if (!slot_is_taken(queue, now))
			return true;
		earliest = taken_until(queue, now);
	}
	if (FenceClockIsVirtual())
		return false;
	return watch_until == 0 || watch_until > earliest;
}

/*
 * The queue of lease or permit-key entry "queue" has a new head, or its key
 * was freed: with freed (the released entry, or a released permit of the
 * key), try to grant it to the head (hand_off); then wake the head only if
 * it must look (head_needs_wake).  True if freed was handed off.  Caller
 * holds the partition lock exclusively; never ERRORs.
 */
bool
serve_queue(FenceLeaseSlot *queue, FenceLeaseSlot *freed)
{
	uint32		hash;
	bool		handed = false;

	if (queue->wait_head < 0)
		return false;
	hash = lease_hash(queue->dbid, queue->text, queue->keylen);
	if (freed != NULL)
		handed = hand_off(queue, freed, hash);
	if (queue->wait_head >= 0 && head_needs_wake(queue, hash))
		wake_proc(queue->wait_head);
	return handed;
}

/*
 * The lease clock moved: wake every waiter so that it re-reads it.  Taking
 * and dropping each partition lock first means that a waiter is either
 * already flagged in lease_waiters (and gets its latch set), or decides
 * after this point and so sees the new clock.
 */
void
FenceLeaseWakeWaiters(void)
{
	if (lease_shared == NULL)
		return;
	for (int i = 0; i < FENCE_LEASE_PARTITIONS; i++)
	{
		LWLockAcquire(&lease_shared->locks[i].lock, LW_SHARED);
		LWLockRelease(&lease_shared->locks[i].lock);
	}
	for (int i = 0; i < lease_shared->nprocs; i++)
	{
		if (lease_waiters[i].slot >= 0)
			wake_proc(i);
	}
	/* The clock moved: a lease may have expired on it. */
	for (int i = 0; i < FENCE_LEASE_PARTITIONS; i++)
	{
		if (pg_atomic_read_u32(&lease_shared->watches[i].w.sleepers) > 0)
			ConditionVariableBroadcast(&lease_shared->watches[i].w.cv);
	}
	FenceWatchAnyNotify();
}
