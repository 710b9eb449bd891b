/*-------------------------------------------------------------------------
 *
 * enforce.c
 *		The fence_enforce() trigger: rejects writes that carry a stale
 *		fencing token, and re-checks strict leases at COMMIT.
 *
 *		(Stub: being written.)
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fence.h"

void
FenceEnforceInit(void)
{
}
