/*-------------------------------------------------------------------------
 *
 * session.c
 *		What this backend holds: its leases and their tokens, the token in
 *		effect for fenced writes, and clean-up at transaction and session end.
 *
 *		(Stub: being written.)
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fence.h"

bool
FenceSessionTokenInEffect(const char *lease_key, int keylen, FenceToken *token)
{
	return false;
}
