/*-------------------------------------------------------------------------
 *
 * lease_release.c
 *		Ending and renewing leases: release, abandon (the end of a session),
 *		renew and break.
 *
 * A lease that ends goes back to the free list at once, unless backends
 * wait in its queue: then it is granted to the head of the queue
 * (lease_queue.c's serve_queue), or stays, released, for the head to take.
 *
 * Locks: each entry point takes the key's partition lock exclusively, with
 * no lock of fence held (and so no other partition lock), and releases it
 * before it returns; inside it, only what lease_queue.c's hand-off takes
 * and the free list's spinlock.  None of them ERRORs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/proc.h"

#include "lease_internal.h"

/*
 * End the lease of the entry *link points at; the caller holds its
 * partition lock, "lock", exclusively.  With nobody waiting, the entry is
 * unlinked and its slot goes back on the free list at once: that keeps the
 * table's working set to the leases actually held, as in PostgreSQL's lock
 * manager, rather than every key ever taken (a table full of released
 * entries costs a cache and TLB miss per slot on every grant and reclaim).
 * An entry with waiters stays: it is granted to the head of its queue at
 * once, or stays released for the head, woken, to take it (serve_queue).
 */
static void
release_entry(int32 *link, LWLock *lock)
{
	int32		idx = *link;
	FenceLeaseSlot *slot = &lease_slots[idx];

	bump_generation(lock_partition(lock));
	entry_ends(slot);
	slot->scope = FENCE_SCOPE_NONE;
	count_slot(slot, lock_partition(lock));
	slot->held.procno = -1;
	slot->ownerlen = 0;
	if (slot->wait_head >= 0)
	{
		(void) serve_queue(slot, slot);
		return;
	}
	*link = slot->next;
	push_free_chain(idx, idx, 1);
}

/*
 * End the permit *plink points at, of the permit key "key"; the caller holds
 * the partition lock, "lock", exclusively.  The permit's slot is granted in
 * place to the head of the key's queue (true: it stays linked, with a new
 * holder); else it goes back on the free list, and the head is woken to
 * take a permit itself (serve_queue).  Call forget_idle_key() when done
 * ending permits.
 */
static bool
release_permit(int32 *plink, FenceLeaseSlot *key, LWLock *lock)
{
	int32		idx = *plink;
	FenceLeaseSlot *permit = &lease_slots[idx];

	bump_generation(lock_partition(lock));
	entry_ends(permit);
	permit->scope = FENCE_SCOPE_NONE;
	count_slot(permit, lock_partition(lock));
	if (serve_queue(key, permit))
		return true;
	*plink = permit->next;
	push_free_chain(idx, idx, 1);
	return false;
}

/*
 * A permit key's entry goes once no permit of it is left and nobody waits.
 * Caller holds the partition lock exclusively.
 */
static void
forget_idle_key(uint32 hash, FenceLeaseSlot *key)
{
	int32	   *link;
	int32		idx;

	if (key->wait_head >= 0 ||
		next_permit_link(bucket_head(hash), key) != NULL)
		return;
	/* Ending permits may have changed the link that points at the key. */
	link = lookup_link(hash, key->dbid, key->text, key->keylen);
	Assert(link != NULL && &lease_slots[*link] == key);
	idx = *link;
	*link = key->next;
	push_free_chain(idx, idx, 1);
}

/*
 * Compare-and-delete: free the lease (or the permit) only if token is its
 * current token (live or expired) and the caller may release it.  Never
 * ERRORs, so transaction and exit clean-up can use it.  Counts successful
 * releases; fence_release() counts the refused ones (implicit releases at
 * the end of a scope are not requests that can be refused).
 */
bool
FenceLeaseRelease(const char *key, int keylen, FenceToken token)
{
	return release_token(key, keylen, token, true);
}

/*
 * The same without the holder check, for a caller that has made its own
 * (breaker_sql.c: whoever reports with the probe's token ends the probe).
 */
bool
FenceLeaseReleaseToken(const char *key, int keylen, FenceToken token)
{
	return release_token(key, keylen, token, false);
}

/*
 * The end of a session that holds the lease (or permit) with token: release
 * it, unless it was granted with a lock-delay.  Then it is left expired as
 * of now, its holder forgotten, so that its key stays ungranted for the
 * delay (slot_in_lock_delay) and fence_lease_status() says "expired", as
 * for a holder that stopped renewing.  Waiters are woken to sleep until
 * the delay's end instead.  Never ERRORs: exit clean-up uses it.
 */
bool
FenceLeaseAbandon(const char *key, int keylen, FenceToken token)
{
	LWLock	   *lock;
	uint32		hash;
	int32	   *link;
	FenceLeaseSlot *slot;
	TimestampTz now;
	bool		delayed = false;

	if (!table_may_hold(keylen))
		return false;
	slot = lock_token_entry(key, keylen, token, &lock, &hash, &link, NULL);
	now = FenceNow();
	if (slot && slot->lock_delay > 0 && slot->scope != FENCE_SCOPE_DETACHED &&
		slot_is_taken(slot, now) && may_touch(slot))
	{
		FenceLeaseSlot *queue = &lease_slots[*link];

		/* Expired already, it is in its delay: leave it there. */
		if (slot_is_live(slot, now))
		{
			bump_generation(lock_partition(lock));
			slot->expires_at = now;
			count_slot(slot, lock_partition(lock));
			if (queue->wait_head >= 0)
				wake_proc(queue->wait_head);
		}
		slot->held.procno = -1;
		delayed = true;
	}
	LWLockRelease(lock);

	return delayed || release_token(key, keylen, token, true);
}

/* FenceLeaseRelease(); check_holder false skips may_touch(). */
bool
release_token(const char *key, int keylen, FenceToken token, bool check_holder)
{
	LWLock	   *lock;
	uint32		hash;
	int32	   *link;
	int32	   *held;
	FenceLeaseSlot *slot;
	bool		released = false;

	if (!table_may_hold(keylen))
		return false;
	slot = lock_token_entry(key, keylen, token, &lock, &hash, &link, &held);
	if (slot && (!check_holder || may_touch(slot)))
	{
		if (held == link)
			release_entry(link, lock);
		else
		{
			FenceLeaseSlot *permit_key = &lease_slots[*link];

			(void) release_permit(held, permit_key, lock);
			forget_idle_key(hash, permit_key);
		}
		released = true;
	}
	LWLockRelease(lock);

	if (released)
		FenceDbCount(FENCE_STAT_RELEASES);
	return released;
}

/* expires_at := now + ttl, only if token is current and live. */
bool
FenceLeaseRenew(const char *key, int keylen, FenceToken token, int64 ttl)
{
	LWLock	   *lock;
	uint32		hash;
	int32	   *link;
	FenceLeaseSlot *slot;
	TimestampTz now;
	bool		renewed = false;

	Assert(table_may_hold(keylen));
	slot = lock_token_entry(key, keylen, token, &lock, &hash, &link, NULL);
	now = FenceNow();
	if (slot && slot_is_live(slot, now) && may_touch(slot))
	{
		TimestampTz expires_at = lease_deadline(now, ttl);
		FenceLeaseSlot *queue = &lease_slots[*link];

		/*
		 * The new expiry may be earlier.  The head of the queue sleeps until
		 * the old one (or a permit's that expires sooner): wake it to watch
		 * the new one instead.
		 */
		bump_generation(lock_partition(lock));
		if (expires_at < slot->expires_at && queue->wait_head >= 0)
			wake_proc(queue->wait_head);
		slot->expires_at = expires_at;
		count_slot(slot, lock_partition(lock));
		renewed = true;
	}
	LWLockRelease(lock);

	FenceDbCount(renewed ? FENCE_STAT_RENEWALS : FENCE_STAT_RENEWALS_FAILED);
	return renewed;
}

/*
 * Admin: free the lease whoever holds it; *token is the token it ended.
 * For a lease with permits, every permit, and *token is the largest.
 */
bool
FenceLeaseBreak(const char *key, int keylen, FenceToken *token)
{
	LWLock	   *lock;
	uint32		hash;
	int32	   *link;
	FenceLeaseSlot *slot;
	bool		broken = false;

	Assert(lease_shared != NULL);
	link = lock_entry(MyDatabaseId, key, keylen, LW_EXCLUSIVE, &lock, &hash);
	slot = link ? &lease_slots[*link] : NULL;
	if (slot && slot->kind == ENTRY_PERMIT_KEY)
	{
		int32	   *plink;

		/* A permit handed to a waiter in place is passed over. */
		*token = 0;
		plink = next_permit_link(bucket_head(hash), slot);
		while (plink != NULL)
		{
			FenceLeaseSlot *permit = &lease_slots[*plink];

			*token = Max(*token, permit->token);
			if (release_permit(plink, slot, lock))
				plink = next_permit_link(&permit->next, slot);
			else
				plink = next_permit_link(plink, slot);
			broken = true;
		}
		forget_idle_key(hash, slot);
	}
	else if (slot && slot->scope != FENCE_SCOPE_NONE)
	{
		*token = slot->token;
		release_entry(link, lock);
		broken = true;
	}
	LWLockRelease(lock);

	if (broken)
		FenceDbCount(FENCE_STAT_RELEASES);
	return broken;
}
