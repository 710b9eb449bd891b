/*-------------------------------------------------------------------------
 *
 * lease_counts.h
 *		What the lease table tells lease_counts.c, which keeps the counts of
 *		held leases and permits behind the fence_lease_counts view.
 *
 * lease_counts.c sits beside lease_table.c: the lease table calls
 * FenceCountsNote() under a partition lock whenever a slot starts or stops
 * holding a lease or its expiry moves; the view's reader takes the
 * partition locks, which fence.c hands over at start-up (lease_counts.c is
 * below lease_table.c and calls nothing of it), one at a time.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FENCE_LEASE_COUNTS_H
#define FENCE_LEASE_COUNTS_H

#include "storage/lwlock.h"

#include "fence.h"

/* Partitions of the lease table, each with its own LWLock; a power of two. */
#define FENCE_LEASE_PARTITIONS	16

/* lease_table.c: for fence.c, which hands them to lease_counts.c */
extern LWLockPadded *FenceLeasePartitionLocks(void);

/* lease_counts.c */
extern Size FenceCountsShmemSize(void);
extern void FenceCountsShmemInit(LWLockPadded *partition_locks);
extern void FenceCountsNote(int32 idx, int partition, Oid dbid,
							FenceLeaseScope scope, bool permit,
							TimestampTz expires_at);
extern int	FenceCountsPartitionHeld(int p);

#endif							/* FENCE_LEASE_COUNTS_H */
