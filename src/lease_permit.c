/*-------------------------------------------------------------------------
 *
 * lease_permit.c
 *		The entries of a lease with permits (a bulkhead): its permits walked,
 *		counted and freed, and a key turned from one kind into the other.
 *
 * A lease with permits (a bulkhead) lets up to n holders have a key at
 * once, each with a token of its own: one entry for the key (its queue, its
 * n, its latest token) and one entry per permit, all in the key's bucket
 * chain (see EntryKind).  A grant walks the key's permits to count the live
 * ones, so n is bounded (FENCE_MAX_PERMITS); the head of the queue sleeps
 * until the earliest permit expires.  Release, renew and status find the
 * permit by its token.  A key is one kind or the other while anything holds
 * or awaits it.
 *
 * Locks: every function here runs with the key's partition lock held, as
 * its comment says (exclusive wherever it changes an entry), and takes
 * none of its own but those install_grant_to() and entry_ends() take
 * inside it (the role-count lock).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"


#include "lease_internal.h"

/*
 * Free the permit entries of permit-key entry "key" that are not live: all
 * of them when the key changes kind or number of permits (it has no live
 * permit then).  Caller holds the partition lock exclusively; never ERRORs.
 */
static void
drop_dead_permits(uint32 hash, FenceLeaseSlot *key, TimestampTz now)
{
	int32	   *link = next_permit_link(bucket_head(hash), key);

	while (link != NULL)
	{
		int32		idx = *link;
		FenceLeaseSlot *permit = &lease_slots[idx];

		if (slot_is_taken(permit, now))
		{
			link = next_permit_link(&permit->next, key);
			continue;
		}
		entry_ends(permit);
		permit->scope = FENCE_SCOPE_NONE;
		count_slot(permit, hash % FENCE_LEASE_PARTITIONS);
		*link = permit->next;
		push_free_chain(idx, idx, 1);
		link = next_permit_link(link, key);
	}
}

/* Does a permit of permit-key entry "key" remain live or in its lock-delay? */
static bool
has_taken_permit(uint32 hash, FenceLeaseSlot *key, TimestampTz now)
{
	for (int32 *link = next_permit_link(bucket_head(hash), key); link != NULL;
		 link = next_permit_link(&lease_slots[*link].next, key))
	{
		if (slot_is_taken(&lease_slots[*link], now))
			return true;
	}
	return false;
}

/*
 * A key is an ordinary lease or a lease with a number of permits while
 * anything holds it or waits for it; once idle it may become either.  Is
 * the entry busy in another way than req asks for?  Then grant says how.
 */
bool
kind_conflict(FenceLeaseSlot *slot, uint32 hash, const FenceLeaseRequest *req,
			  TimestampTz now, FenceLeaseGrant *grant)
{
	bool		is_permit_key = (slot->kind == ENTRY_PERMIT_KEY);
	int			permits = is_permit_key ? slot->held.permits : 0;

	if (permits == req->permits)
		return false;
	if (slot->wait_head < 0 &&
		!(is_permit_key ? has_taken_permit(hash, slot, now) :
		  slot_is_taken(slot, now)))
		return false;
	grant->outcome = FENCE_ACQUIRE_KIND_CONFLICT;
	grant->held_permits = permits;
	return true;
}

/*
 * Make idle entry "slot" (no live holder, no waiters: kind_conflict said
 * so) the kind req asks for, with its number of permits; nothing to do if it
 * is that already.  Called only once the caller is sure to take the key or
 * queue for it, so that a request that is refused or fails changes nothing.  An expired lease
 * or permits it still kept end here, as a takeover would end them: a key
 * never keeps more permit entries than its number, so that no clock moved
 * back can make more of them live.  Caller holds the lock exclusively.
 */
void
become_kind(FenceLeaseSlot *slot, uint32 hash, const FenceLeaseRequest *req,
			TimestampTz now)
{
	EntryKind	kind = (req->permits > 0) ? ENTRY_PERMIT_KEY : ENTRY_LEASE;

	if (slot->kind == kind &&
		(kind == ENTRY_LEASE || slot->held.permits == req->permits))
		return;
	bump_generation(hash % FENCE_LEASE_PARTITIONS);
	if (slot->kind == ENTRY_PERMIT_KEY)
	{
		drop_dead_permits(hash, slot, now);
		if (kind == ENTRY_PERMIT_KEY)
			slot->held.permits = req->permits;
		else
			slot->held.procno = -1;
	}
	else
	{
		entry_ends(slot);
		slot->scope = FENCE_SCOPE_NONE;
		count_slot(slot, hash % FENCE_LEASE_PARTITIONS);
		slot->ownerlen = 0;
		slot->held.permits = req->permits;
	}
	slot->kind = (uint8) kind;
}

/*
 * Does a live permit of permit-key entry "key" belong to the detached owner
 * the waiter asks for?  Then its request extends that permit rather than
 * taking another: it must look itself.
 */
bool
waiter_owns_permit(uint32 hash, FenceLeaseSlot *key, FenceWaiter *waiter,
				   TimestampTz now)
{
	for (int32 *link = next_permit_link(bucket_head(hash), key); link != NULL;
		 link = next_permit_link(&lease_slots[*link].next, key))
	{
		FenceLeaseSlot *permit = &lease_slots[*link];

		if (slot_is_live(permit, now) &&
			permit->scope == FENCE_SCOPE_DETACHED &&
			permit->roleid == waiter->roleid &&
			permit->ownerlen == waiter->ownerlen &&
			memcmp(permit->text + permit->keylen, waiter->owner,
				   waiter->ownerlen) == 0)
			return true;
	}
	return false;
}

/*
 * Walk the permits of permit-key entry "key" for request req: returns how
 * many are taken (live, or in their lock-delay), with *earliest the first
 * time one of them frees (lease clock; left alone if none is taken);
 * *reused is the first expired permit, to reuse (else left NULL), and
 * *held the caller's own live permit (else left NULL).  Caller holds the
 * partition lock; never ERRORs.
 */
int
scan_permits(uint32 hash, FenceLeaseSlot *key, const FenceLeaseRequest *req,
			 TimestampTz now, FenceLeaseSlot **reused, FenceLeaseSlot **held,
			 TimestampTz *earliest)
{
	int			taken = 0;

	for (int32 *link = next_permit_link(bucket_head(hash), key);
		 link != NULL;
		 link = next_permit_link(&lease_slots[*link].next, key))
	{
		FenceLeaseSlot *permit = &lease_slots[*link];

		if (slot_in_lock_delay(permit, now))
		{
			/* Not free, and no longer anyone's to extend. */
			if (taken++ == 0 || lock_delay_end(permit) < *earliest)
				*earliest = lock_delay_end(permit);
			continue;
		}
		if (!slot_is_live(permit, now))
		{
			if (*reused == NULL)
				*reused = permit;
			continue;
		}

		/*
		 * A detached request may match two permits: the owner's, and this
		 * backend's own session or transaction permit.  The latter decides,
		 * whichever comes first in the chain: the backend holds the key in
		 * that scope, and asking in another is a conflict.
		 */
		if (holder_matches(permit, req) &&
			(*held == NULL || permit->scope != FENCE_SCOPE_DETACHED))
			*held = permit;
		if (taken++ == 0 || permit->expires_at < *earliest)
			*earliest = permit->expires_at;
	}
	return taken;
}
