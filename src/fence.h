/*-------------------------------------------------------------------------
 *
 * fence.h
 *		The one header of the fence extension: what each module offers the
 *		others.
 *
 * Modules, top to bottom (a module calls only modules below it):
 *
 *	fence.c			_PG_init and the shared-memory hooks; wires the rest
 *	enforce.c		the fence_enforce() trigger and its COMMIT-time check
 *	lease_sql.c		SQL-callable lease functions, views and clock controls
 *	session.c		what this backend holds, the token in effect, clean-up
 *	lease_table.c	the shared-memory lease table: grant, release, wait
 *	counter.c		the durable per-database token counter
 *	clock.c			the lease clock: real time, or the virtual test clock
 *	stats.c			per-database shared state: counters and high-water mark
 *	token.c			the fence_token type
 *	guc.c			the fence.* settings
 *
 *-------------------------------------------------------------------------
 */
#ifndef FENCE_H
#define FENCE_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "fmgr.h"

/*
 * SQLSTATEs of our own.  Class "LF" (lease/fence) is not used by
 * PostgreSQL.
 */
#define ERRCODE_FENCE_STALE_TOKEN		MAKE_SQLSTATE('L','F','0','0','1')
#define ERRCODE_FENCE_LEASE_NOT_HELD	MAKE_SQLSTATE('L','F','0','0','2')
#define ERRCODE_FENCE_TOKEN_REQUIRED	MAKE_SQLSTATE('L','F','0','0','3')

/* Lease keys are 1 to this many bytes of text. */
#define FENCE_MAX_KEY_LEN		200
/* A detached lease's owner name is 1 to this many bytes. */
#define FENCE_MAX_OWNER_LEN		48

/*
 * A fencing token is a non-negative int64; 0 means "never fenced".  It is
 * stored as an int8-sized pass-by-value datum.
 */
typedef int64 FenceToken;

#define DatumGetFenceToken(X)		((FenceToken) DatumGetInt64(X))
#define FenceTokenGetDatum(X)		Int64GetDatum((int64) (X))
#define PG_GETARG_FENCE_TOKEN(n)	DatumGetFenceToken(PG_GETARG_DATUM(n))
#define PG_RETURN_FENCE_TOKEN(x)	return FenceTokenGetDatum(x)

/* fence.c */
extern bool fence_preloaded;
extern void FenceRequirePreload(void);
extern Oid	FenceExtensionSchema(void);

/* guc.c */
extern int	fence_max_leases;
extern int	fence_max_ttl_s;
extern bool fence_test_clock;
extern int	fence_restart_grace_ms;
extern void FenceGucInit(void);

/* token.c */
extern Oid	FenceTokenTypeOid(void);
extern FenceToken FenceTokenFromInt64(int64 value);

/* clock.c */
extern Size FenceClockShmemSize(void);
extern void FenceClockShmemInit(void);
extern TimestampTz FenceNow(void);
extern bool FenceClockIsVirtual(void);
extern void FenceClockRequireTestMode(void);
extern TimestampTz FenceClockSet(TimestampTz when);
extern void FenceClockClear(void);
extern TimestampTz FenceClockAdvance(int64 usecs);

/* stats.c */
typedef enum FenceStat
{
	FENCE_STAT_GRANTS,
	FENCE_STAT_REFUSALS,
	FENCE_STAT_TAKEOVERS,
	FENCE_STAT_RELEASES,
	FENCE_STAT_RELEASES_REFUSED,
	FENCE_STAT_RENEWALS,
	FENCE_STAT_RENEWALS_FAILED,
	FENCE_STAT_WRITES_ACCEPTED,
	FENCE_STAT_WRITES_REJECTED,
	FENCE_STAT_WRITES_SKIPPED,
	FENCE_STAT_COMMITS_ABORTED,
	FENCE_NUM_STATS
} FenceStat;

extern void FenceStatsShmemRequest(void);
extern Size FenceStatsShmemSize(void);
extern void FenceStatsShmemInit(void);
extern void FenceStatsCount(FenceStat which);
extern bool FenceStatsPublishGrant(FenceToken token);

/* counter.c */
extern FenceToken FenceCounterNext(void);
extern FenceToken FenceCounterAdvance(FenceToken at_least);

/* lease_table.c */
typedef enum FenceLeaseStatus
{
	FENCE_LEASE_HELD,			/* current token, live */
	FENCE_LEASE_EXPIRED,		/* current token, past its expiry */
	FENCE_LEASE_SUPERSEDED,		/* a newer token was granted */
	FENCE_LEASE_RELEASED		/* released, broken, or unknown to the table */
} FenceLeaseStatus;

extern void FenceLeaseShmemRequest(void);
extern Size FenceLeaseShmemSize(void);
extern void FenceLeaseShmemInit(void);
extern FenceLeaseStatus FenceLeaseGetStatus(Oid dbid, const char *key,
											int keylen, FenceToken token);
extern const char *FenceLeaseStatusName(FenceLeaseStatus status);
extern void FenceLeaseWakeWaiters(void);

/* session.c */
extern bool FenceSessionTokenInEffect(const char *lease_key, int keylen,
									  FenceToken *token);

/* enforce.c */
extern void FenceEnforceInit(void);

#endif							/* FENCE_H */
