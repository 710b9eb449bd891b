/*-------------------------------------------------------------------------
 *
 * lease_table.c
 *		The shared-memory lease table: grant, release, renew, expire, wait.
 *
 *		(Stub: being written.)
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fence.h"

void
FenceLeaseShmemRequest(void)
{
}

Size
FenceLeaseShmemSize(void)
{
	return 0;
}

void
FenceLeaseShmemInit(void)
{
}

FenceLeaseStatus
FenceLeaseGetStatus(Oid dbid, const char *key, int keylen, FenceToken token)
{
	return FENCE_LEASE_RELEASED;
}

const char *
FenceLeaseStatusName(FenceLeaseStatus status)
{
	switch (status)
	{
		case FENCE_LEASE_HELD:
			return "held";
		case FENCE_LEASE_EXPIRED:
			return "expired";
		case FENCE_LEASE_SUPERSEDED:
			return "superseded";
		case FENCE_LEASE_RELEASED:
			return "released";
	}
	return "released";
}

void
FenceLeaseWakeWaiters(void)
{
}
