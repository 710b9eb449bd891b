/*-------------------------------------------------------------------------
 *
 * lease_sql.c
 *		The SQL-callable face of leases: argument checking, the fence_leases
 *		view, and the virtual clock controls.
 *
 * No function here is STRICT: a NULL key, TTL or token is an error, never
 * a quiet NULL that a caller would read as "refused".  Every function that
 * takes a key has a text and a bigint variant (a bigint key is the lease
 * of its decimal text), so each C entry point below comes in two: NAME for
 * text keys and NAME_int8 for bigint keys.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "common/int.h"
#include "commands/dbcommands.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "fence.h"

typedef struct LeaseKey
{
	char		data[FENCE_MAX_KEY_LEN + 1];	/* NUL-terminated for messages */
	int			len;
} LeaseKey;

/* ---------- argument checking ---------- */

static void
get_key(FunctionCallInfo fcinfo, int argno, bool int_key, LeaseKey *key)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease key must not be NULL"),
				 errhint("Name the lease with a text or bigint key.")));
	if (int_key)
	{
		/*
		 * The decimal form, as snprintf's INT64_FORMAT would write it, at a
		 * tenth of its cost: this runs twice in every take-and-release.
		 */
		StaticAssertStmt(FENCE_MAX_KEY_LEN + 1 >= MAXINT8LEN + 1,
						 "a lease key holds any bigint");
		key->len = pg_lltoa(PG_GETARG_INT64(argno), key->data);
	}
	else
	{
		text	   *t = PG_GETARG_TEXT_PP(argno);
		int			len = VARSIZE_ANY_EXHDR(t);

		if (len == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lease key must not be empty"),
					 errhint("A lease key is 1 to %d bytes of text.", FENCE_MAX_KEY_LEN)));
		if (len > FENCE_MAX_KEY_LEN)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lease key is too long"),
					 errdetail("The key is %d bytes; the limit is %d bytes.",
							   len, FENCE_MAX_KEY_LEN),
					 errhint("Use a shorter key, for example a hash of the long name.")));
		memcpy(key->data, VARDATA_ANY(t), len);
		key->data[len] = '\0';
		key->len = len;
	}
}

static char *
interval_text(Interval *iv)
{
	return DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(iv)));
}

/* Which argument an interval is, so that each gets messages of its own. */
typedef enum DurationArg
{
	DURATION_TTL,
	DURATION_TIMEOUT,
	DURATION_CLOCK_ADVANCE
} DurationArg;

static void
duration_in_months(DurationArg what, Interval *iv)
{
	switch (what)
	{
		case DURATION_TTL:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lease TTL cannot be given in months or years"),
					 errdetail("The value given was %s; a month has no fixed length.",
							   interval_text(iv)),
					 errhint("Give it in days, hours, minutes or seconds, for example '30 days'.")));
			break;
		case DURATION_TIMEOUT:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("timeout cannot be given in months or years"),
					 errdetail("The value given was %s; a month has no fixed length.",
							   interval_text(iv)),
					 errhint("Give it in days, hours, minutes or seconds, for example '30 days'.")));
			break;
		case DURATION_CLOCK_ADVANCE:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("clock advance cannot be given in months or years"),
					 errdetail("The value given was %s; a month has no fixed length.",
							   interval_text(iv)),
					 errhint("Give it in days, hours, minutes or seconds, for example '30 days'.")));
			break;
	}
}

static void
duration_out_of_range(DurationArg what, Interval *iv)
{
	switch (what)
	{
		case DURATION_TTL:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lease TTL is out of range"),
					 errdetail("The value given was %s.", interval_text(iv)),
					 errhint("A lease TTL may be at most fence.max_ttl, which is %s.",
							 GetConfigOptionByName("fence.max_ttl", NULL, false))));
			break;
		case DURATION_TIMEOUT:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("timeout is out of range"),
					 errdetail("The value given was %s.", interval_text(iv)),
					 errhint("A timeout may be at most %lld days.",
							 (long long) (PG_INT64_MAX / USECS_PER_DAY))));
			break;
		case DURATION_CLOCK_ADVANCE:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("clock advance is out of range"),
					 errdetail("The value given was %s.", interval_text(iv)),
					 errhint("The clock may be advanced by at most %lld days at a time.",
							 (long long) (PG_INT64_MAX / USECS_PER_DAY))));
			break;
	}
}

/*
 * An interval as microseconds; months have no fixed length, so no months.
 * 'infinity' and '-infinity' (PostgreSQL 17 and later) are the longest
 * durations either way, for the caller's own range checks to judge: an
 * infinite TTL exceeds fence.max_ttl, an infinite timeout is no limit, and
 * a negative infinity is negative.
 */
static int64
get_duration(FunctionCallInfo fcinfo, int argno, DurationArg what)
{
	Interval   *iv = PG_GETARG_INTERVAL_P(argno);
	int64		usecs;

#ifdef INTERVAL_NOT_FINITE
	if (INTERVAL_IS_NOEND(iv))
		return PG_INT64_MAX;
	if (INTERVAL_IS_NOBEGIN(iv))
		return PG_INT64_MIN;
#endif
	if (iv->month != 0)
		duration_in_months(what, iv);
	if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &usecs) ||
		pg_add_s64_overflow(usecs, iv->time, &usecs))
		duration_out_of_range(what, iv);
	return usecs;
}

/*
 * The timeout argument argno (not NULL), in microseconds: a negative one is
 * an error, whose hint says what NULL means to the caller (a lease wait
 * honours lock_timeout; a watchdog does not).
 */
static int64
get_timeout(FunctionCallInfo fcinfo, int argno, bool watchdog)
{
	int64		timeout = get_duration(fcinfo, argno, DURATION_TIMEOUT);

	if (timeout < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timeout must not be negative"),
				 errdetail("The timeout given was %s.",
						   interval_text(PG_GETARG_INTERVAL_P(argno))),
				 watchdog ?
				 errhint("Pass NULL to wait as long as the lease lasts.") :
				 errhint("Pass NULL to wait without a limit (or up to lock_timeout).")));
	return timeout;
}

static int64
get_ttl(FunctionCallInfo fcinfo, int argno)
{
	int64		ttl;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease TTL must not be NULL"),
				 errhint("Say how long the lease lasts, for example '30 seconds'.")));
	ttl = get_duration(fcinfo, argno, DURATION_TTL);
	if (ttl <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease TTL must be greater than zero"),
				 errdetail("The TTL given was %s.", interval_text(PG_GETARG_INTERVAL_P(argno))),
				 errhint("Say how long the lease lasts, for example '30 seconds'.")));
	if (ttl > (int64) fence_max_ttl_s * USECS_PER_SEC)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease TTL exceeds fence.max_ttl"),
				 errdetail("The TTL given was %s; fence.max_ttl is %s.",
						   interval_text(PG_GETARG_INTERVAL_P(argno)),
						   GetConfigOptionByName("fence.max_ttl", NULL, false)),
				 errhint("Take a shorter lease and extend it with fence_renew() while the work lasts, or raise fence.max_ttl.")));
	return ttl;
}

static FenceToken
get_token(FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fencing token must not be NULL"),
				 errhint("Pass the token that granted the lease.")));
	return PG_GETARG_FENCE_TOKEN(argno);
}

/* How many permits a lease with permits has. */
static int
get_permits(FunctionCallInfo fcinfo, int argno)
{
	int32		permits;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of permits must not be NULL"),
				 errhint("Say how many holders the lease may have at once, from 1 to %d.",
						 FENCE_MAX_PERMITS)));
	permits = PG_GETARG_INT32(argno);
	if (permits < 1 || permits > FENCE_MAX_PERMITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of permits must be between 1 and %d",
						FENCE_MAX_PERMITS),
				 errdetail("The number given was %d.", permits),
				 errhint("Say how many holders the lease may have at once.")));
	return permits;
}

/* The owner of a detached lease, or none (NULL: session scope). */
static bool
get_owner(FunctionCallInfo fcinfo, int argno, char *buf, int *len)
{
	text	   *t;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return false;
	t = PG_GETARG_TEXT_PP(argno);
	*len = VARSIZE_ANY_EXHDR(t);
	if (*len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease owner must not be empty"),
				 errhint("Pass NULL for a session lease, or a name for a detached lease.")));
	if (*len > FENCE_MAX_OWNER_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease owner is too long"),
				 errdetail("The owner is %d bytes; the limit is %d bytes.",
						   *len, FENCE_MAX_OWNER_LEN)));
	memcpy(buf, VARDATA_ANY(t), *len);
	buf[*len] = '\0';
	return true;
}

/* A grant issues a durable token: refuse cleanly where that cannot be. */
static void
require_writable(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot take a lease on a standby"),
				 errdetail("Fencing tokens come from the primary's durable counter."),
				 errhint("Take leases on the primary server.")));
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot take a lease in a read-only transaction"),
				 errdetail("Granting a lease issues a fencing token, which is written to WAL."),
				 errhint("Take the lease in a read-write transaction.")));
}

/* ---------- taking leases ---------- */

/* This backend holds the key in held_scope and asked for another scope. */
static void
scope_conflict(const char *key, FenceLeaseScope held_scope)
{
	switch (held_scope)
	{
		case FENCE_SCOPE_SESSION:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("lease \"%s\" is already held by this session with session scope",
							key),
					 errdetail("A session holds a key in one scope at a time."),
					 errhint("Release it with fence_release() first, or keep using the session lease.")));
			break;
		case FENCE_SCOPE_XACT:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("lease \"%s\" is already held by this session with transaction scope",
							key),
					 errdetail("A session holds a key in one scope at a time."),
					 errhint("Release it with fence_release() first, or keep using the transaction lease.")));
			break;
		case FENCE_SCOPE_DETACHED:
		case FENCE_SCOPE_NONE:
			/* A detached lease is not held by a session. */
			break;
	}
	elog(ERROR, "unexpected lease scope %d in a scope conflict", (int) held_scope);
}

/*
 * The key is held or awaited as the other kind of lease, or with another
 * number of permits, than req asked for.
 */
static void
kind_conflict(const char *key, const FenceLeaseRequest *req, int held_permits)
{
	if (held_permits == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lease \"%s\" is held as a lease without permits", key),
				 errdetail("A key is a lease with permits or one without while anybody holds it or waits for it."),
				 errhint("Take it with fence_lease() or fence_try_lease(), or use another key for the lease with permits.")));
	else if (req->permits == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lease \"%s\" is held as a lease with %d permits", key,
						held_permits),
				 errdetail("A key is a lease with permits or one without while anybody holds it or waits for it."),
				 errhint("Take a permit with fence_permit() or fence_try_permit(), or use another key.")));
	else
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lease \"%s\" is held as a lease with %d permits, not %d",
						key, held_permits, req->permits),
				 errdetail("The number of permits of a key is fixed while anybody holds a permit or waits for one."),
				 errhint("Ask for the same number of permits wherever the key is used.")));
}

/*
 * Keys that begin with FENCE_BREAKER_KEY_PREFIX are the probe leases of the
 * circuit breakers, which breaker_sql.c takes from the lease table directly.
 * Taking one here would let any role hold a breaker's probe lease, and so
 * keep the breaker from ever probing again, whatever its caller role; and
 * a release or a break here would end a probe behind its breaker's back.
 * So the functions that take, release or break a lease refuse them, for
 * every role.  Reading their status, and a probe's holder renewing its
 * lease with its token, stay allowed.  (A bigint key is digits: never one.)
 */
static void
refuse_reserved_key(const LeaseKey *key)
{
	if (key->len >= (int) FENCE_BREAKER_KEY_PREFIX_LEN &&
		memcmp(key->data, FENCE_BREAKER_KEY_PREFIX,
			   FENCE_BREAKER_KEY_PREFIX_LEN) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_RESERVED_NAME),
				 errmsg("lease key \"%s\" is reserved for circuit breakers",
						key->data),
				 errdetail("Keys beginning with \"%s\" are the probe leases of fence's circuit breakers: only the breaker functions take, release and break them.",
						   FENCE_BREAKER_KEY_PREFIX),
				 errhint("Use a key with another prefix.  A breaker's probe is taken with fence_breaker_allow(), ended with fence_breaker_report(), and freed with fence_breaker_reset().")));
}

/*
 * The lock-delay a lease is taken with: fence.lock_delay, in lease-clock
 * microseconds, if it is within fence.max_lock_delay.
 */
static int64
get_lock_delay(void)
{
	if (fence_lock_delay_ms > fence_max_lock_delay_ms)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fence.lock_delay exceeds fence.max_lock_delay"),
				 errdetail("fence.lock_delay is %lld ms; fence.max_lock_delay is %lld ms.",
						   (long long) fence_lock_delay_ms,
						   (long long) fence_max_lock_delay_ms),
				 errhint("Set a shorter fence.lock_delay, or ask an administrator to raise fence.max_lock_delay for this role.")));
	return (int64) fence_lock_delay_ms * 1000;
}

/*
 * The eight ways to take a lease or a permit.  Argument positions: key 0,
 * then permits (for a permit), ttl, then timeout (blocking variants), then
 * owner last for the session variants.
 */
static Datum
acquire(FunctionCallInfo fcinfo, bool int_key, FenceLeaseScope scope,
		bool wait, bool permit)
{
	LeaseKey	key;
	char		owner[FENCE_MAX_OWNER_LEN + 1];
	int			ownerlen = 0;
	int			arg = 1;
	int			timeout_arg;
	int			owner_arg;
	FenceLeaseRequest req;
	FenceLeaseGrant grant;
	int64		timeout_ms = 0;
	bool		timeout_is_lock_timeout = false;

	FenceRequirePreload();
	get_key(fcinfo, 0, int_key, &key);
	refuse_reserved_key(&key);
	memset(&req, 0, sizeof(req));
	req.key = key.data;
	req.keylen = key.len;
	if (permit)
		req.permits = get_permits(fcinfo, arg++);
	req.ttl = get_ttl(fcinfo, arg++);
	req.lock_delay = get_lock_delay();
	timeout_arg = wait ? arg++ : -1;
	owner_arg = arg;
	req.scope = scope;
	if (scope == FENCE_SCOPE_SESSION && get_owner(fcinfo, owner_arg, owner, &ownerlen))
	{
		req.scope = FENCE_SCOPE_DETACHED;
		req.owner = owner;
		req.ownerlen = ownerlen;
	}
	req.wait = wait;
	if (wait)
	{
		int64		timeout = -1;

		if (!PG_ARGISNULL(timeout_arg))
		{
			timeout = get_timeout(fcinfo, timeout_arg, false);
			/* For the message; rounded up, without overflow near INT64_MAX. */
			timeout_ms = timeout / 1000 + (timeout % 1000 != 0);
		}
		else if (LockTimeout > 0)
		{
			timeout = (int64) LockTimeout * 1000;
			timeout_ms = LockTimeout;
			timeout_is_lock_timeout = true;
		}
		if (timeout >= 0)
		{
			TimestampTz now = GetCurrentTimestamp();

			req.has_deadline = true;
			if (pg_add_s64_overflow(now, timeout, &req.deadline) ||
				!IS_VALID_TIMESTAMP(req.deadline))
				req.has_deadline = false;	/* beyond any real wait */
		}
	}
	require_writable();

	FenceSessionAcquire(&req, &grant);

	switch (grant.outcome)
	{
		case FENCE_ACQUIRE_GRANTED:
		case FENCE_ACQUIRE_EXTENDED:
			PG_RETURN_FENCE_TOKEN(grant.token);
		case FENCE_ACQUIRE_REFUSED:
			PG_RETURN_NULL();
		case FENCE_ACQUIRE_TIMED_OUT:
			if (req.permits > 0)
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("could not obtain a permit of lease \"%s\" before the timeout",
								key.data),
						 timeout_is_lock_timeout ?
						 errdetail("lock_timeout is %lld ms.", (long long) timeout_ms) :
						 errdetail("The timeout was %lld ms.", (long long) timeout_ms),
						 errhint("All %d permits are held or in their fence.lock_delay, others are queued before this session, or fence.restart_grace is not over yet.",
								 req.permits)));
			else if (timeout_is_lock_timeout)
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("could not obtain lease \"%s\" before the timeout", key.data),
						 errdetail("lock_timeout is %lld ms.", (long long) timeout_ms),
						 errhint("Another holder still has the lease or it is in its fence.lock_delay, others are queued before this session, or fence.restart_grace is not over yet.")));
			else
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("could not obtain lease \"%s\" before the timeout", key.data),
						 errdetail("The timeout was %lld ms.", (long long) timeout_ms),
						 errhint("Another holder still has the lease or it is in its fence.lock_delay, others are queued before this session, or fence.restart_grace is not over yet.")));
			break;
		case FENCE_ACQUIRE_SCOPE_CONFLICT:
			scope_conflict(key.data, grant.held_scope);
			break;
		case FENCE_ACQUIRE_KIND_CONFLICT:
			kind_conflict(key.data, &req, grant.held_permits);
			break;
	}
	PG_RETURN_NULL();			/* keep compiler quiet */
}

/*
 * The two SQL entry points of a keyed function: NAME (text key) and
 * NAME_int8 (bigint key), both calling NAME_impl.
 */
#define FENCE_KEYED_ENTRY_POINTS(name) \
	PG_FUNCTION_INFO_V1(name); \
	PG_FUNCTION_INFO_V1(name##_int8); \
	Datum \
	name(PG_FUNCTION_ARGS) \
	{ \
		return name##_impl(fcinfo, false); \
	} \
	Datum \
	name##_int8(PG_FUNCTION_ARGS) \
	{ \
		return name##_impl(fcinfo, true); \
	}

/*
 * A function that takes a lease or a permit: NAME_impl calls acquire() with
 * the scope, whether to wait, and whether it is a permit; then its two
 * entry points.
 */
#define FENCE_ACQUIRE_ENTRY_POINTS(name, scope, wait, permit) \
	static Datum \
	name##_impl(FunctionCallInfo fcinfo, bool int_key) \
	{ \
		return acquire(fcinfo, int_key, scope, wait, permit); \
	} \
	FENCE_KEYED_ENTRY_POINTS(name)

/* (key, ttl, owner DEFAULT NULL): grant now or NULL */
FENCE_ACQUIRE_ENTRY_POINTS(fence_try_lease, FENCE_SCOPE_SESSION, false, false)
/* (key, ttl) */
FENCE_ACQUIRE_ENTRY_POINTS(fence_try_xact_lease, FENCE_SCOPE_XACT, false, false)
/* (key, ttl, timeout DEFAULT NULL, owner DEFAULT NULL) */
FENCE_ACQUIRE_ENTRY_POINTS(fence_lease, FENCE_SCOPE_SESSION, true, false)
/* (key, ttl, timeout DEFAULT NULL) */
FENCE_ACQUIRE_ENTRY_POINTS(fence_xact_lease, FENCE_SCOPE_XACT, true, false)
/* (key, permits, ttl, owner DEFAULT NULL) */
FENCE_ACQUIRE_ENTRY_POINTS(fence_try_permit, FENCE_SCOPE_SESSION, false, true)
/* (key, permits, ttl) */
FENCE_ACQUIRE_ENTRY_POINTS(fence_try_xact_permit, FENCE_SCOPE_XACT, false, true)
/* (key, permits, ttl, timeout DEFAULT NULL, owner DEFAULT NULL) */
FENCE_ACQUIRE_ENTRY_POINTS(fence_permit, FENCE_SCOPE_SESSION, true, true)
/* (key, permits, ttl, timeout DEFAULT NULL) */
FENCE_ACQUIRE_ENTRY_POINTS(fence_xact_permit, FENCE_SCOPE_XACT, true, true)

/* ---------- using leases ---------- */

/* fence_release(key, token): compare-and-delete */
static Datum
fence_release_impl(FunctionCallInfo fcinfo, bool int_key)
{
	LeaseKey	key;
	FenceToken	token;
	bool		released;

	FenceRequirePreload();
	get_key(fcinfo, 0, int_key, &key);
	refuse_reserved_key(&key);
	token = get_token(fcinfo, 1);
	released = FenceSessionRelease(key.data, key.len, token);
	if (!released)
		FenceDbCount(FENCE_STAT_RELEASES_REFUSED);
	PG_RETURN_BOOL(released);
}
FENCE_KEYED_ENTRY_POINTS(fence_release)

/*
 * fence_forget_token(key, token): this session stops remembering the
 * detached lease it took (session.c); returns token, so that it wraps a
 * grant: fence_forget_token(k, fence_try_lease(k, ttl, owner => o)).
 */
static Datum
fence_forget_token_impl(FunctionCallInfo fcinfo, bool int_key)
{
	LeaseKey	key;
	FenceToken	token;

	FenceRequirePreload();
	get_key(fcinfo, 0, int_key, &key);
	refuse_reserved_key(&key);
	token = get_token(fcinfo, 1);
	(void) FenceSessionForget(key.data, key.len, token);
	PG_RETURN_FENCE_TOKEN(token);
}
FENCE_KEYED_ENTRY_POINTS(fence_forget_token)

/* fence_renew(key, token, ttl): extend only a current, live lease */
static Datum
fence_renew_impl(FunctionCallInfo fcinfo, bool int_key)
{
	LeaseKey	key;
	FenceToken	token;
	int64		ttl;

	FenceRequirePreload();
	get_key(fcinfo, 0, int_key, &key);
	token = get_token(fcinfo, 1);
	ttl = get_ttl(fcinfo, 2);
	PG_RETURN_BOOL(FenceLeaseRenew(key.data, key.len, token, ttl));
}
FENCE_KEYED_ENTRY_POINTS(fence_renew)

static bool may_see(Oid roleid);

/*
 * Where token stands for a key, as the caller may know it: a key whose
 * lease was last taken by a role whose leases the caller may not see (the
 * rule of fence_leases) reads as released, like a key never taken, so that
 * guessing keys of another role confirms nothing.  Every answer other than
 * "held" means "not held" all the same.
 */
FenceLeaseStatus
FenceLeaseVisibleStatus(const char *key, int keylen, FenceToken token,
						FenceLeaseStamp *stamp)
{
	Oid			roleid;
	FenceLeaseStatus status;

	status = FenceLeaseGetStatusRole(MyDatabaseId, key, keylen, token,
									 stamp, &roleid);
	if (OidIsValid(roleid) && !may_see(roleid))
		return FENCE_LEASE_RELEASED;
	return status;
}

static inline FenceLeaseStatus
visible_status(LeaseKey *key, FenceToken token)
{
	return FenceLeaseVisibleStatus(key->data, key->len, token, NULL);
}

/*
 * A watchdog's timeout argument argno as a deadline in real time: 0 when it
 * is NULL or lies beyond any real wait (fence_wait_lease_end and
 * fence_wait_leases_end).
 */
TimestampTz
FenceWatchdogDeadline(FunctionCallInfo fcinfo, int argno)
{
	TimestampTz deadline = 0;

	if (!PG_ARGISNULL(argno))
	{
		int64		timeout = get_timeout(fcinfo, argno, true);

		if (pg_add_s64_overflow(GetCurrentTimestamp(), timeout, &deadline) ||
			!IS_VALID_TIMESTAMP(deadline))
			deadline = 0;		/* beyond any real wait */
	}
	return deadline;
}

/* fence_lease_status(key, token): held, expired, superseded, released */
static Datum
fence_lease_status_impl(FunctionCallInfo fcinfo, bool int_key)
{
	LeaseKey	key;
	FenceToken	token;
	FenceLeaseStatus status;

	FenceRequirePreload();
	get_key(fcinfo, 0, int_key, &key);
	token = get_token(fcinfo, 1);
	status = visible_status(&key, token);
	PG_RETURN_TEXT_P(cstring_to_text(FenceLeaseStatusName(status)));
}
FENCE_KEYED_ENTRY_POINTS(fence_lease_status)

/*
 * fence_wait_lease_end(key, token, timeout DEFAULT NULL): wait until the
 * lease with this token is no longer held, and return its status then
 * (expired, superseded or released); NULL if the timeout passes first.  For
 * a holder's watchdog, a second connection or task: it learns at once that
 * the lease is gone (it expired, another session took it, an administrator
 * broke it, its token was released from elsewhere), without polling.  It
 * takes nothing, so lock_timeout does not apply: a watchdog waits as long
 * as the lease lasts.  A lease the caller may not see is "released" at
 * once, as fence_lease_status says.
 */
static Datum
fence_wait_lease_end_impl(FunctionCallInfo fcinfo, bool int_key)
{
	LeaseKey	key;
	FenceToken	token;
	FenceLeaseStatus status;
	TimestampTz deadline;
	bool		timed_out = false;

	FenceRequirePreload();
	get_key(fcinfo, 0, int_key, &key);
	token = get_token(fcinfo, 1);
	deadline = FenceWatchdogDeadline(fcinfo, 2);

	status = visible_status(&key, token);
	if (status == FENCE_LEASE_HELD)
		status = FenceLeaseWaitEnd(MyDatabaseId, key.data, key.len, token,
								   deadline, &timed_out);
	if (timed_out)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(FenceLeaseStatusName(status)));
}
FENCE_KEYED_ENTRY_POINTS(fence_wait_lease_end)

/* fence_assert_current(key, token): LF002 unless held */
static Datum
fence_assert_current_impl(FunctionCallInfo fcinfo, bool int_key)
{
	LeaseKey	key;
	FenceToken	token;
	FenceLeaseStatus status;

	FenceRequirePreload();
	get_key(fcinfo, 0, int_key, &key);
	token = get_token(fcinfo, 1);
	status = visible_status(&key, token);

	/*
	 * The token goes in the detail: the primary message stays the same for
	 * every token, which keeps logs greppable.  The word in parentheses is
	 * the value fence_lease_status() returns.
	 */
	switch (status)
	{
		case FENCE_LEASE_HELD:
			PG_RETURN_VOID();
		case FENCE_LEASE_EXPIRED:
			ereport(ERROR,
					(errcode(ERRCODE_FENCE_LEASE_NOT_HELD),
					 errmsg("lease \"%s\" is not held (expired)",
							key.data),
					 errdetail("Token %lld is expired: nobody has taken the lease (or its permit) over yet, but any worker may take it now.",
							   (long long) token),
					 errhint("Do not perform the side effect: this worker no longer holds the lease.")));
			break;
		case FENCE_LEASE_SUPERSEDED:
			ereport(ERROR,
					(errcode(ERRCODE_FENCE_LEASE_NOT_HELD),
					 errmsg("lease \"%s\" is not held (superseded)",
							key.data),
					 errdetail("Token %lld is superseded: a newer token was granted for this lease since.",
							   (long long) token),
					 errhint("Do not perform the side effect: this worker no longer holds the lease.")));
			break;
		case FENCE_LEASE_RELEASED:
			ereport(ERROR,
					(errcode(ERRCODE_FENCE_LEASE_NOT_HELD),
					 errmsg("lease \"%s\" is not held (released)",
							key.data),
					 errdetail("Token %lld is released: the lease was released or broken, or never had this token.",
							   (long long) token),
					 errhint("Do not perform the side effect: this worker no longer holds the lease.")));
			break;
	}
	PG_RETURN_VOID();
}
FENCE_KEYED_ENTRY_POINTS(fence_assert_current)

/* fence_break(key): admin; frees the lease whoever holds it */
static Datum
fence_break_impl(FunctionCallInfo fcinfo, bool int_key)
{
	LeaseKey	key;
	FenceToken	token;

	FenceRequirePreload();
	get_key(fcinfo, 0, int_key, &key);
	refuse_reserved_key(&key);
	if (!FenceSessionBreak(key.data, key.len, &token))
		PG_RETURN_NULL();
	PG_RETURN_FENCE_TOKEN(token);
}
FENCE_KEYED_ENTRY_POINTS(fence_break)

/*
 * fence_break_dropped_databases(): admin; frees the leases and the
 * per-database slots of every dropped database; how many leases it ended.
 */
PG_FUNCTION_INFO_V1(fence_break_dropped_databases);
Datum
fence_break_dropped_databases(PG_FUNCTION_ARGS)
{
	FenceRequirePreload();
	PG_RETURN_INT64((int64) FenceLeaseForgetDroppedDatabases());
}

/*
 * fence_use_token(token, key DEFAULT NULL): the token in effect for the
 * rest of the transaction.  Purely session-local, so it works without the
 * library preloaded (tokens from an outside lock service need no lease
 * table).
 */
static Datum
use_token(FunctionCallInfo fcinfo, bool int_key)
{
	FenceToken	token = get_token(fcinfo, 0);
	LeaseKey	key;
	bool		has_key = !PG_ARGISNULL(1);

	/*
	 * 0 is the fence of a row never fenced, and no lease has it: in effect,
	 * it would pass require_token without a lease.
	 */
	if (token == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("0 is not a fencing token"),
				 errdetail("A fence of 0 marks a row that no holder has written; every token a lease grants is 1 or greater."),
				 errhint("Pass the token that granted the lease.")));
	FenceCounterRequireIssued(token);

	if (has_key)
		get_key(fcinfo, 1, int_key, &key);
	FenceSessionUseToken(token, has_key ? key.data : NULL, has_key ? key.len : 0);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(fence_use_token);
Datum
fence_use_token(PG_FUNCTION_ARGS)
{
	return use_token(fcinfo, false);
}

PG_FUNCTION_INFO_V1(fence_use_token_int8);
Datum
fence_use_token_int8(PG_FUNCTION_ARGS)
{
	return use_token(fcinfo, true);
}

/*
 * fence_current_token(lease DEFAULT NULL): the token the trigger would use
 * now, or NULL.  With a lease key: for a trigger that names that lease.
 * Session-local like fence_use_token, so it works without preloading.
 */
static Datum
fence_current_token_impl(FunctionCallInfo fcinfo, bool int_key)
{
	FenceToken	token;
	LeaseKey	key;
	bool		has_key = PG_NARGS() > 0 && !PG_ARGISNULL(0);

	if (has_key)
		get_key(fcinfo, 0, int_key, &key);
	if (!FenceSessionTokenInEffect(has_key ? key.data : NULL,
								   has_key ? key.len : 0, &token))
		PG_RETURN_NULL();
	PG_RETURN_FENCE_TOKEN(token);
}
FENCE_KEYED_ENTRY_POINTS(fence_current_token)

/* ---------- the fence_leases view ---------- */

/*
 * Like pg_stat_activity's query column: the key, owner and token of a
 * lease taken by another role are shown only to superusers, members of
 * pg_read_all_stats, and members of that role.
 */
static bool
may_see(Oid roleid)
{
	return superuser() ||
		has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS) ||
		has_privs_of_role(GetUserId(), roleid);
}

/*
 * Rows of fence_leases, one per entry, into the SRF's tuplestore.  Rows of
 * a database, and of a role, come in runs (a partition holds many of one
 * database's leases): the database's name and whether the caller may see
 * the role's keys are looked up once per run, not once per row, which is
 * most of what a row costs.
 */
static void
put_lease_rows(ReturnSetInfo *rsinfo, FenceLeaseInfo *leases, int n)
{
	TimestampTz now = FenceNow();
	Oid			last_dbid = InvalidOid;
	Datum		last_dbname = (Datum) 0;
	bool		last_dbnull = true;
	Oid			last_roleid = InvalidOid;
	bool		last_visible = false;

	for (int i = 0; i < n; i++)
	{
		FenceLeaseInfo *l = &leases[i];
		Datum		values[11];
		bool		nulls[11] = {0};
		bool		visible;

		if (i == 0 || l->dbid != last_dbid)
		{
			char	   *dbname = get_database_name(l->dbid);

			last_dbid = l->dbid;
			last_dbnull = (dbname == NULL);
			if (dbname != NULL)
				last_dbname = DirectFunctionCall1(namein, CStringGetDatum(dbname));
		}
		if (i == 0 || l->roleid != last_roleid)
		{
			last_roleid = l->roleid;
			last_visible = may_see(l->roleid);
		}
		visible = last_visible;

		if (last_dbnull)
			nulls[0] = true;
		else
			values[0] = last_dbname;
		if (visible)
			values[1] = PointerGetDatum(cstring_to_text_with_len(l->key, l->keylen));
		else
			nulls[1] = true;
		if (visible)
			values[2] = FenceTokenGetDatum(l->token);
		else
			nulls[2] = true;
		values[3] = CStringGetTextDatum(FenceLeaseScopeName(l->scope));
		if (l->scope == FENCE_SCOPE_DETACHED && visible)
			values[4] = PointerGetDatum(cstring_to_text_with_len(l->owner, l->ownerlen));
		else
			nulls[4] = true;
		if (l->pid != 0)
			values[5] = Int32GetDatum(l->pid);
		else
			nulls[5] = true;
		values[6] = TimestampTzGetDatum(l->granted_at);
		values[7] = TimestampTzGetDatum(l->expires_at);
		values[8] = BoolGetDatum(now < l->expires_at);
		values[9] = Int32GetDatum(l->nwaiters);
		/*
		 * permits: 1.0's definition, which this library serves until ALTER
		 * EXTENSION UPDATE, has no such column; tuplestore_putvalues() reads
		 * only the columns the result's descriptor has.
		 */
		if (l->permits > 0)
			values[10] = Int32GetDatum(l->permits);
		else
			nulls[10] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

PG_FUNCTION_INFO_V1(fence_leases_all);
Datum
fence_leases_all(PG_FUNCTION_ARGS)
{
	FenceLeaseInfo *leases;
	int			n;

	FenceRequirePreload();
	InitMaterializedSRF(fcinfo, 0);
	n = FenceLeaseSnapshot(&leases);
	put_lease_rows((ReturnSetInfo *) fcinfo->resultinfo, leases, n);
	return (Datum) 0;
}

/* What a look-up of one key returns: the rows of which view or function. */
typedef enum KeyRows
{
	KEY_ROWS_LEASES,			/* fence_leases */
	KEY_ROWS_WAITERS,			/* fence_lease_waiters */
	KEY_ROWS_BLOCKERS			/* fence_blocking_pids */
} KeyRows;

static void put_waiter_rows(ReturnSetInfo *rsinfo, FenceWaiterInfo *waiters,
							int n);
static void put_blocker_rows(ReturnSetInfo *rsinfo, FenceBlockerInfo *blockers,
							 int n);

/*
 * The rows for one key of this database, read from that key's bucket alone
 * (the views read every partition, or every waiting session).  A key
 * another role holds shows as in the views: its key, token and owner NULL
 * unless you may see them.
 */
static Datum
key_rows(FunctionCallInfo fcinfo, bool int_key, KeyRows which)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LeaseKey	key;

	FenceRequirePreload();
	get_key(fcinfo, 0, int_key, &key);
	InitMaterializedSRF(fcinfo, 0);
	switch (which)
	{
		case KEY_ROWS_LEASES:
			{
				FenceLeaseInfo *leases;
				int			n = FenceLeaseSnapshotKey(key.data, key.len, &leases);

				put_lease_rows(rsinfo, leases, n);
				break;
			}
		case KEY_ROWS_WAITERS:
			{
				FenceWaiterInfo *waiters;
				int			n = FenceLeaseWaitersSnapshotKey(key.data, key.len,
															 &waiters);

				put_waiter_rows(rsinfo, waiters, n);
				break;
			}
		case KEY_ROWS_BLOCKERS:
			{
				FenceBlockerInfo *blockers;
				int			n = FenceLeaseBlockersKey(key.data, key.len, &blockers);

				put_blocker_rows(rsinfo, blockers, n);
				break;
			}
	}
	return (Datum) 0;
}

/* fence_leases_of(key): the rows of fence_leases for one key */
static Datum
fence_leases_of_impl(FunctionCallInfo fcinfo, bool int_key)
{
	return key_rows(fcinfo, int_key, KEY_ROWS_LEASES);
}
FENCE_KEYED_ENTRY_POINTS(fence_leases_of)

/*
 * Rows of fence_lease_waiters into the SRF's tuplestore.  The key of
 * another role's wait is hidden as in fence_leases.
 */
static void
put_waiter_rows(ReturnSetInfo *rsinfo, FenceWaiterInfo *waiters, int n)
{
	for (int i = 0; i < n; i++)
	{
		FenceWaiterInfo *w = &waiters[i];
		Datum		values[8];
		bool		nulls[8] = {0};
		char	   *dbname = get_database_name(w->dbid);
		char	   *rolename = GetUserNameFromId(w->roleid, true);

		if (dbname == NULL)
			nulls[0] = true;
		else
			values[0] = DirectFunctionCall1(namein, CStringGetDatum(dbname));
		if (may_see(w->roleid))
			values[1] = PointerGetDatum(cstring_to_text_with_len(w->key, w->keylen));
		else
			nulls[1] = true;
		values[2] = Int32GetDatum(w->pid);
		if (rolename == NULL)
			nulls[3] = true;
		else
			values[3] = DirectFunctionCall1(namein, CStringGetDatum(rolename));
		values[4] = CStringGetTextDatum(FenceLeaseScopeName(w->scope));
		values[5] = TimestampTzGetDatum(w->since);
		values[6] = Int32GetDatum(w->position);
		if (w->deadline != 0)
			values[7] = TimestampTzGetDatum(w->deadline);
		else
			nulls[7] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/* fence_lease_waiters_all(): every session waiting for a lease. */
PG_FUNCTION_INFO_V1(fence_lease_waiters_all);
Datum
fence_lease_waiters_all(PG_FUNCTION_ARGS)
{
	FenceWaiterInfo *waiters;
	int			n;

	FenceRequirePreload();
	InitMaterializedSRF(fcinfo, 0);
	n = FenceLeaseWaitersSnapshot(&waiters);
	put_waiter_rows((ReturnSetInfo *) fcinfo->resultinfo, waiters, n);
	return (Datum) 0;
}

/* fence_lease_waiters_of(key): the rows of fence_lease_waiters for one key */
static Datum
fence_lease_waiters_of_impl(FunctionCallInfo fcinfo, bool int_key)
{
	return key_rows(fcinfo, int_key, KEY_ROWS_WAITERS);
}
FENCE_KEYED_ENTRY_POINTS(fence_lease_waiters_of)

/* Rows of fence_blocking_pids() into the SRF's tuplestore. */
static void
put_blocker_rows(ReturnSetInfo *rsinfo, FenceBlockerInfo *blockers, int n)
{
	for (int i = 0; i < n; i++)
	{
		FenceBlockerInfo *b = &blockers[i];
		Datum		values[4];
		bool		nulls[4] = {0};

		if (b->pid != 0)
			values[0] = Int32GetDatum(b->pid);
		else
			nulls[0] = true;
		values[1] = CStringGetTextDatum(b->holder ? "holder" : "queued ahead");
		if (b->holder && b->ownerlen > 0 && may_see(b->roleid))
			values[2] = PointerGetDatum(cstring_to_text_with_len(b->owner, b->ownerlen));
		else
			nulls[2] = true;
		if (b->holder)
			nulls[3] = true;
		else
			values[3] = Int32GetDatum(b->position);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * fence_blocking_pids(pid): what that session waits for: the live holder
 * of the lease (its pid; NULL for a detached holder, whose owner is shown
 * where fence_leases would show it) and each session queued ahead of it.
 * No rows if it does not wait for a lease.
 */
PG_FUNCTION_INFO_V1(fence_blocking_pids);
Datum
fence_blocking_pids(PG_FUNCTION_ARGS)
{
	FenceBlockerInfo *blockers;
	int			n;

	FenceRequirePreload();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pid must not be NULL"),
				 errhint("Pass the process ID of a waiting session, as pg_stat_activity shows it.")));
	InitMaterializedSRF(fcinfo, 0);
	n = FenceLeaseBlockers(PG_GETARG_INT32(0), &blockers);
	put_blocker_rows((ReturnSetInfo *) fcinfo->resultinfo, blockers, n);
	return (Datum) 0;
}

/*
 * fence_lease_blockers_of(key): what a session asking for this database's
 * key now would wait for: its live holders and every session queued for
 * it, as fence_blocking_pids() shows them.
 */
static Datum
fence_lease_blockers_of_impl(FunctionCallInfo fcinfo, bool int_key)
{
	return key_rows(fcinfo, int_key, KEY_ROWS_BLOCKERS);
}
FENCE_KEYED_ENTRY_POINTS(fence_lease_blockers_of)

/* ---------- the lease clock ---------- */

/* fence_now(): the lease clock (real time unless a test set it) */
PG_FUNCTION_INFO_V1(fence_now);
Datum
fence_now(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(FenceNow());
}

/*
 * The virtual clock must stay far enough from the end of the timestamp
 * range that now + the longest possible TTL is still a timestamp.
 */
static void
check_clock_value(TimestampTz when)
{
	TimestampTz latest_expiry;

	if (TIMESTAMP_NOT_FINITE(when) ||
		pg_add_s64_overflow(when, (int64) INT_MAX * USECS_PER_SEC, &latest_expiry) ||
		!IS_VALID_TIMESTAMP(latest_expiry))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("lease clock value out of range"),
				 errdetail("The lease clock must stay a finite time, at least the longest possible TTL away from the end of the timestamp range."),
				 errhint("Pass an ordinary timestamp, or NULL to return to real time.")));
}

/* fence_set_clock(timestamptz): superuser, test servers only; NULL clears */
PG_FUNCTION_INFO_V1(fence_set_clock);
Datum
fence_set_clock(PG_FUNCTION_ARGS)
{
	FenceClockRequireTestMode();
	if (PG_ARGISNULL(0))
		FenceClockClear();
	else
	{
		TimestampTz when = PG_GETARG_TIMESTAMPTZ(0);

		check_clock_value(when);
		FenceClockSet(when);
	}
	FenceLeaseWakeWaiters();
	PG_RETURN_TIMESTAMPTZ(FenceNow());
}

/* fence_advance_clock(interval): superuser, test servers only; forward */
PG_FUNCTION_INFO_V1(fence_advance_clock);
Datum
fence_advance_clock(PG_FUNCTION_ARGS)
{
	int64		usecs;
	TimestampTz target;
	TimestampTz result;

	FenceClockRequireTestMode();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("interval must not be NULL"),
				 errhint("Say how far to move the lease clock, for example '30 seconds'.")));
	usecs = get_duration(fcinfo, 0, DURATION_CLOCK_ADVANCE);
	if (usecs < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the lease clock cannot go backwards"),
				 errdetail("The interval given was %s.", interval_text(PG_GETARG_INTERVAL_P(0))),
				 errhint("Use fence_set_clock() to put the clock at an earlier time.")));
	if (pg_add_s64_overflow(FenceNow(), usecs, &target))
		target = DT_NOEND;
	check_clock_value(target);
	result = FenceClockAdvance(usecs);
	FenceLeaseWakeWaiters();
	PG_RETURN_TIMESTAMPTZ(result);
}
