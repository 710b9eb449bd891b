/*-------------------------------------------------------------------------
 *
 * lease_sql.c
 *		The SQL-callable face of leases: argument checking, the fence_leases
 *		view, and the virtual clock controls.
 *
 *		(Stub: being written.)
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fence.h"
