/*-------------------------------------------------------------------------
 *
 * breaker.c
 *		Circuit breakers shared by every session of the server: one state per
 *		(database, breaker name), so that many workers learn of a dead
 *		dependency once and probe it once.
 *
 * A breaker is closed (calls go through), open (callers fail fast until
 * open_until), or half-open (one probe call is in flight).  Closed trips to
 * open after failure_threshold consecutive failures, or when the last
 * window_size reported calls hold a failure rate of at least failure_rate.
 * When the open time has passed, the next caller becomes the probe: the
 * right to probe is a detached lease on the key "breaker:<name>" with the
 * probe TTL, taken from the lease table, and its fencing token names the
 * probe.  A probe that dies or stalls past its TTL leaves the lease free
 * for the next caller; the stale probe's report carries an older token and
 * is ignored.  The probe's success closes the breaker; its failure reopens
 * it for twice the previous open time, capped at max_open_for.
 *
 * An operator may define a breaker once (its settings then ignore the
 * callers'), and force it open or disabled: a forced state is a state of its
 * own, which only fence_breaker_unforce() (or a reset) leaves.  A definition
 * may also set min_calls (the rate rules judge a partial window), slow_call
 * and slow_call_rate (a report's duration counts), and half_open_trials: N
 * trial calls run while half-open, each a permit of the lease "breaker:<name>"
 * with N permits (so the single probe above is the case N = 1), and N
 * successes close the breaker.  Who may manage or use a breaker is checked
 * against its owner (who defined it first; an undefined breaker has none),
 * manager role and caller role, with the breaker lock released (a privilege
 * check reads the catalogs).  The probe keys' prefix is reserved: the SQL
 * lease functions refuse it, so no role can squat a breaker's probe lease.
 * Every change of state is counted and sent, once the lock is released, as a
 * NOTIFY on channel fence_breaker.
 *
 * Every time is read from the lease clock (FenceNow()), so the virtual test
 * clock drives breakers exactly as it drives leases.  The table lives in
 * shared memory only: a server restart forgets every breaker (they come
 * back closed).
 *
 * A dropped database's breakers are freed as its DROP DATABASE commits,
 * with its leases (FenceLeaseDatabaseDropping), and should any be left, by
 * the lease table's sweep of dropped databases
 * (FenceLeaseForgetDroppedDatabases); both reach them
 * through dbstate.c (FenceBreakerDatabases and FenceBreakerForgetDatabase,
 * handed over by init.c: lease_table.c is below this module).  The sweep
 * runs when this table is full, before a new breaker is refused, and behind
 * fence_break_dropped_databases().
 *
 * Shared memory: a dynahash of fence.max_breakers entries, protected by
 * one LWLock (tranche "fence_breakers").  The number of entries is counted
 * under that lock and capped at fence.max_breakers, so the capacity is
 * exact even though a shared dynahash could borrow spare shared memory.
 *
 * Lock order (fence.h has the whole list): the breaker lock is never held
 * while calling into the lease table (which takes its partition locks and
 * may do I/O for a token), nor across an ereport.  Taking a probe is
 * therefore three steps: decide under the breaker lock that a probe is due,
 * take the lease with no lock held, then record the probe under the lock
 * again if the breaker still wants one (else give the lease back).  The
 * other way round, the lease table's sweep of dropped databases takes the
 * breaker lock (through dbstate.c) with none of its own locks held, and so
 * never while this backend holds the breaker lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "commands/async.h"
#include "commands/dbcommands.h"
#include "common/int.h"
#include "funcapi.h"
#include "lib/qunique.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/json.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "fence.h"

#define BREAKER_TRANCHE			"fence_breakers"
#define BREAKER_MAX_WINDOW		64	/* one bit per call in a uint64 */
#define BREAKER_EVENT_CHANNEL	"fence_breaker"	/* NOTIFY channel of state changes */

/*
 * A breaker half-open lets this many trial calls run (half_open_trials).
 * Each trial holds a permit of the lease "breaker:<name>", which has as
 * many permits as the half-open period needs trials; a single probe holds
 * that key as an ordinary lease (the same thing with one permit, and what
 * fence_leases showed before there were trials).
 */
#define BREAKER_MAX_TRIALS		10

/*
 * The single probe's lease (half_open_trials 1) is owned by "breaker
 * probe", as it always was.  Two callers that race for it may therefore
 * see "granted" and "extended": only a grant (a new token) makes a probe,
 * so the second caller fails fast and the first one's lease merely lasts a
 * moment longer.  With several trials, permits of one
 * detached owner would be one holder, so each backend's trial is owned by
 * "breaker probe <pid>"; a backend that asks again while its trial runs
 * has that permit extended, which makes no new trial: it fails fast.
 */
#define BREAKER_PROBE_OWNER		"breaker probe"
#define BREAKER_TRIAL_OWNER_FMT	"breaker probe %d"

StaticAssertDecl(FENCE_BREAKER_KEY_PREFIX_LEN + FENCE_MAX_BREAKER_NAME <= FENCE_MAX_KEY_LEN,
				 "a breaker's probe lease key must fit in a lease key");

typedef enum BreakerState
{
	BREAKER_CLOSED = 0,
	BREAKER_OPEN,
	BREAKER_HALF_OPEN,
	BREAKER_FORCED_OPEN,		/* an operator's: every caller fails fast */
	BREAKER_DISABLED			/* an operator's: every caller calls */
} BreakerState;

/*
 * The hash key: zero-padded, hashed and compared as bytes.  A name of the
 * full length has no terminating zero: print it with pnstrdup().
 */
typedef struct BreakerKey
{
	Oid			dbid;
	char		name[FENCE_MAX_BREAKER_NAME];
} BreakerKey;

/*
 * Settings: those of fence_breaker_define() for a defined breaker, else as
 * given by the latest fence_breaker_allow() call.
 */
typedef struct BreakerConfig
{
	int32		failure_threshold;
	int32		window_size;
	double		failure_rate;	/* 0: the rate rule is off */
	int64		open_for;		/* microseconds */
	int64		max_open_for;
	int64		probe_ttl;
	int32		min_calls;		/* the rate rules judge from this many calls */
	int32		half_open_trials;	/* successful trials that close it */
	int64		slow_call;		/* a call this long or longer is slow; 0: off */
	double		slow_call_rate; /* this share of slow calls trips it */
} BreakerConfig;

/*
 * A trial call of a half-open breaker: the token of its permit, and when
 * that permit expires (as last seen).  A trial whose permit expired stays
 * until its report comes or another trial takes its slot.
 */
typedef struct BreakerTrial
{
	FenceToken	token;
	TimestampTz expires_at;
} BreakerTrial;

typedef struct Breaker
{
	BreakerKey	key;
	Oid			roleid;			/* who made it, or defined it first: whose
								 * members see its name; once defined, its
								 * owner (breaker_owner) */
	Oid			manager_role;	/* its members may manage it too; or 0 */
	Oid			caller_role;	/* only its members may ask and report; or 0 */
	bool		defined;		/* settings from fence_breaker_define() */
	uint8		state;			/* BreakerState */
	uint8		namelen;
	uint8		window_len;		/* outcomes in the window, <= window_size */
	uint8		window_pos;		/* next bit to write */
	int32		consecutive_failures;
	uint64		window_bits;	/* 1 = failure */
	uint64		window_slow_bits;	/* 1 = slow call */
	BreakerConfig config;
	int64		open_period;	/* the current or last open time, usecs */
	TimestampTz opened_at;		/* last trip or reopen; 0 = never */
	TimestampTz open_until;
	TimestampTz changed_at;		/* last change of state */
	/* Half-open only: trials_needed is 0 in every other state. */
	int32		trials_needed;	/* successful trials that close it */
	int32		trials_ok;		/* trials that succeeded so far */
	BreakerTrial trials[BREAKER_MAX_TRIALS];	/* token 0: a free slot */
	int64		trips;			/* closed -> open */
	int64		fast_failures;	/* fail_fast answers */
	int64		successes;		/* reports counted */
	int64		failures;
	int64		slow_calls;		/* reports counted that were slow */
	int64		state_changes;	/* events: every change of state */
} Breaker;

typedef struct BreakerShared
{
	LWLock	   *lock;
	int32		count;			/* entries in the hash */
} BreakerShared;

static BreakerShared *breaker_shared = NULL;
static HTAB *breaker_hash = NULL;

/* ---------- shared memory ---------- */

void
FenceBreakerShmemRequest(void)
{
	RequestNamedLWLockTranche(BREAKER_TRANCHE, 1);
}

Size
FenceBreakerShmemSize(void)
{
	return add_size(MAXALIGN(sizeof(BreakerShared)),
					hash_estimate_size(fence_max_breakers, sizeof(Breaker)));
}

void
FenceBreakerShmemInit(void)
{
	bool		found;
	HASHCTL		info;

	breaker_shared = ShmemInitStruct("fence breakers", sizeof(BreakerShared), &found);
	if (!found)
	{
		breaker_shared->lock = &(GetNamedLWLockTranche(BREAKER_TRANCHE))->lock;
		breaker_shared->count = 0;
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(BreakerKey);
	info.entrysize = sizeof(Breaker);
	breaker_hash = ShmemInitHash("fence breaker table",
								 fence_max_breakers, fence_max_breakers,
								 &info, HASH_ELEM | HASH_BLOBS);
}

/* ---------- arguments ---------- */

static void
get_name(FunctionCallInfo fcinfo, int argno, BreakerKey *key, int *namelen)
{
	text	   *t;
	int			len;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker name must not be NULL"),
				 errhint("Name the dependency the breaker guards, for example 'provider:openai'.")));
	t = PG_GETARG_TEXT_PP(argno);
	len = VARSIZE_ANY_EXHDR(t);
	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker name must not be empty"),
				 errhint("A breaker name is 1 to %d bytes of text.", FENCE_MAX_BREAKER_NAME)));
	if (len > FENCE_MAX_BREAKER_NAME)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker name is too long"),
				 errdetail("The name is %d bytes; the limit is %d bytes.",
						   len, FENCE_MAX_BREAKER_NAME),
				 errhint("Use a shorter name, for example the dependency's host without its domain.")));
	memset(key, 0, sizeof(*key));
	key->dbid = MyDatabaseId;
	memcpy(key->name, VARDATA_ANY(t), len);
	*namelen = len;
}

static char *
interval_string(Interval *iv)
{
	return DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(iv)));
}

static int64 get_duration(FunctionCallInfo fcinfo, int argno,
						  const char *param, bool allow_zero);

/*
 * A positive duration in microseconds.  "param" is the SQL parameter's name
 * (an identifier, not prose).
 */
static int64
get_positive_duration(FunctionCallInfo fcinfo, int argno, const char *param)
{
	return get_duration(fcinfo, argno, param, false);
}

/* A duration in microseconds: positive, or with allow_zero, zero or more. */
static int64
get_duration(FunctionCallInfo fcinfo, int argno, const char *param,
			 bool allow_zero)
{
	Interval   *iv;
	int64		usecs;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker parameter \"%s\" must not be NULL", param),
				 errhint("Omit it to use its default.")));
	iv = PG_GETARG_INTERVAL_P(argno);
#ifdef INTERVAL_NOT_FINITE
	/* 'infinity' (PostgreSQL 17 and later) is out of range, '-infinity' negative. */
	if (INTERVAL_NOT_FINITE(iv))
		usecs = INTERVAL_IS_NOEND(iv) ? PG_INT64_MAX : PG_INT64_MIN;
	else
#endif
	{
		if (iv->month != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("breaker parameter \"%s\" cannot be given in months or years", param),
					 errdetail("The value given was %s; a month has no fixed length.",
							   interval_string(iv)),
					 errhint("Give it in days, hours, minutes or seconds.")));
		if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &usecs) ||
			pg_add_s64_overflow(usecs, iv->time, &usecs))
			usecs = PG_INT64_MAX;
	}
	if (usecs > (int64) INT_MAX * USECS_PER_SEC)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker parameter \"%s\" is out of range", param),
				 errdetail("The value given was %s.", interval_string(iv))));
	if (allow_zero && usecs < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker parameter \"%s\" must not be negative", param),
				 errdetail("The value given was %s.", interval_string(iv))));
	if (!allow_zero && usecs <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker parameter \"%s\" must be greater than zero", param),
				 errdetail("The value given was %s.", interval_string(iv))));
	return usecs;
}

static int32
get_int_in_range(FunctionCallInfo fcinfo, int argno, const char *param,
				 int32 min, int32 max)
{
	int32		value;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker parameter \"%s\" must not be NULL", param),
				 errhint("Omit it to use its default.")));
	value = PG_GETARG_INT32(argno);
	if (value < min || value > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker parameter \"%s\" is out of range", param),
				 errdetail("The value given was %d; it must be between %d and %d.",
						   value, min, max)));
	return value;
}

/*
 * fence_breaker_allow's settings: failure_threshold 1, failure_rate 2,
 * window_size 3, open_for 4, max_open_for 5, probe_ttl 6.
 */
static void
get_config(FunctionCallInfo fcinfo, BreakerConfig *config)
{
	double		rate;

	config->failure_threshold = get_int_in_range(fcinfo, 1, "failure_threshold",
												 1, 1000000);
	/* NULL turns the rate rule off: only consecutive failures trip. */
	rate = PG_ARGISNULL(2) ? 0.0 : PG_GETARG_FLOAT8(2);
	if (!PG_ARGISNULL(2) && (isnan(rate) || rate <= 0.0 || rate > 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker parameter \"%s\" is out of range", "failure_rate"),
				 errdetail("The value given was %g; it must be greater than 0 and at most 1.",
						   rate),
				 errhint("Pass NULL to trip on consecutive failures only.")));
	config->failure_rate = rate;
	config->window_size = get_int_in_range(fcinfo, 3, "window_size",
										   1, BREAKER_MAX_WINDOW);
	config->open_for = get_positive_duration(fcinfo, 4, "open_for");
	/* NULL: ten minutes, or open_for if that is longer. */
	if (PG_ARGISNULL(5))
		config->max_open_for = Max(config->open_for, 600 * USECS_PER_SEC);
	else
		config->max_open_for = get_positive_duration(fcinfo, 5, "max_open_for");
	config->probe_ttl = get_positive_duration(fcinfo, 6, "probe_ttl");
	/* Only fence_breaker_define sets these: a full window, no slow calls. */
	config->min_calls = config->window_size;
	config->half_open_trials = 1;
	config->slow_call = 0;
	config->slow_call_rate = 0.0;
	if (config->max_open_for < config->open_for)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker parameter \"%s\" must not be less than \"%s\"",
						"max_open_for", "open_for"),
				 errdetail("open_for is %s; max_open_for is %s.",
						   interval_string(PG_GETARG_INTERVAL_P(4)),
						   interval_string(PG_GETARG_INTERVAL_P(5)))));
	if (config->probe_ttl > (int64) fence_max_ttl_s * USECS_PER_SEC)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker parameter \"%s\" exceeds fence.max_ttl", "probe_ttl"),
				 errdetail("The value given was %s; fence.max_ttl is %s.",
						   interval_string(PG_GETARG_INTERVAL_P(6)),
						   GetConfigOptionByName("fence.max_ttl", NULL, false)),
				 errhint("A probe lease is a lease: its TTL obeys the same limit.")));
}

static void
default_config(BreakerConfig *config)
{
	config->failure_threshold = 5;
	config->failure_rate = 0.5;
	config->window_size = 20;
	config->open_for = 30 * USECS_PER_SEC;
	config->max_open_for = 600 * USECS_PER_SEC;
	config->probe_ttl = 30 * USECS_PER_SEC;
	config->min_calls = config->window_size;
	config->half_open_trials = 1;
	config->slow_call = 0;
	config->slow_call_rate = 0.0;
}

/* ---------- the state machine (breaker lock held, must not ERROR) ---------- */

static const char *
state_name(uint8 state)
{
	switch ((BreakerState) state)
	{
		case BREAKER_CLOSED:
			return "closed";
		case BREAKER_OPEN:
			return "open";
		case BREAKER_HALF_OPEN:
			return "half_open";
		case BREAKER_FORCED_OPEN:
			return "forced_open";
		case BREAKER_DISABLED:
			return "disabled";
	}
	return "unknown";
}

static TimestampTz
add_usecs(TimestampTz t, int64 usecs)
{
	TimestampTz result;

	if (pg_add_s64_overflow(t, usecs, &result) || !IS_VALID_TIMESTAMP(result))
		return DT_NOEND;
	return result;
}

/*
 * A change of state, noted under the lock and sent as a notification once
 * the lock is released (send_events).  One SQL call changes a breaker's
 * state at most once; two are kept to be safe.
 */
typedef struct BreakerEvent
{
	uint8		from;
	uint8		to;
	TimestampTz at;
	const char *reason;			/* a constant: no palloc under the lock */
} BreakerEvent;

static BreakerEvent pending_events[2];
static int	n_pending_events = 0;

/* Under the lock: change the state, count it, and keep its event. */
static void
change_state(Breaker *b, uint8 to, TimestampTz now, const char *reason)
{
	if (b->state == to)
		return;
	if (n_pending_events < (int) lengthof(pending_events))
	{
		BreakerEvent *e = &pending_events[n_pending_events++];

		e->from = b->state;
		e->to = to;
		e->at = now;
		e->reason = reason;
	}
	b->state_changes++;
	b->state = to;
	b->changed_at = now;
}

static void
clear_window(Breaker *b)
{
	b->consecutive_failures = 0;
	b->window_bits = 0;
	b->window_slow_bits = 0;
	b->window_len = 0;
	b->window_pos = 0;
}

static int
window_failures(const Breaker *b)
{
	return pg_popcount64(b->window_bits);
}

/*
 * Leave the half-open state's bookkeeping.  The permits of the trials still
 * recorded are the caller's to release (take_trials), or already gone.
 */
static void
clear_trials(Breaker *b)
{
	b->trials_needed = 0;
	b->trials_ok = 0;
	memset(b->trials, 0, sizeof(b->trials));
}

/* The tokens of the trials recorded, into out; clears them.  How many. */
static int
take_trials(Breaker *b, FenceToken *out)
{
	int			n = 0;

	for (int i = 0; i < BREAKER_MAX_TRIALS; i++)
	{
		if (b->trials[i].token != 0)
			out[n++] = b->trials[i].token;
	}
	clear_trials(b);
	return n;
}

/* The slot of the trial with this token, or -1. */
static int
find_trial(const Breaker *b, FenceToken token)
{
	for (int i = 0; i < b->trials_needed; i++)
	{
		if (b->trials[i].token == token)
			return i;
	}
	return -1;
}

/* The latest trial's slot (largest token), or -1. */
static int
latest_trial(const Breaker *b)
{
	int			latest = -1;

	for (int i = 0; i < b->trials_needed; i++)
	{
		if (b->trials[i].token != 0 &&
			(latest < 0 || b->trials[i].token > b->trials[latest].token))
			latest = i;
	}
	return latest;
}

/* Trials whose permits are live at now, and the earliest to expire. */
static int
live_trials(const Breaker *b, TimestampTz now, TimestampTz *earliest)
{
	int			live = 0;

	for (int i = 0; i < b->trials_needed; i++)
	{
		const BreakerTrial *t = &b->trials[i];

		if (t->token == 0 || t->expires_at <= now)
			continue;
		if (live++ == 0 || t->expires_at < *earliest)
			*earliest = t->expires_at;
	}
	return live;
}

/*
 * A slot for a new trial: a free one, else the one whose permit expired
 * first (that trial is given up: its late report is stale); -1 if every
 * trial is live.
 */
static int
free_trial_slot(const Breaker *b, TimestampTz now)
{
	int			oldest = -1;

	for (int i = 0; i < b->trials_needed; i++)
	{
		const BreakerTrial *t = &b->trials[i];

		if (t->token == 0)
			return i;
		if (t->expires_at <= now &&
			(oldest < 0 || t->expires_at < b->trials[oldest].expires_at))
			oldest = i;
	}
	return oldest;
}

static void
open_breaker(Breaker *b, TimestampTz now, int64 period, const char *reason)
{
	change_state(b, BREAKER_OPEN, now, reason);
	b->open_period = Min(period, b->config.max_open_for);
	b->opened_at = now;
	b->open_until = add_usecs(now, b->open_period);
	clear_trials(b);
	clear_window(b);
}

/*
 * A counted outcome of a call made while closed; may trip the breaker.  A
 * slow call counts against the slow-call rate, whether or not it failed.
 */
static void
record_closed_outcome(Breaker *b, bool success, bool slow, TimestampTz now)
{
	uint64		bit = UINT64CONST(1) << b->window_pos;
	int			size = b->config.window_size;
	bool		judged;
	const char *reason = NULL;

	/* The window may have shrunk since the last call: start it afresh. */
	if (b->window_len > size || b->window_pos >= size)
	{
		b->window_bits = 0;
		b->window_slow_bits = 0;
		b->window_len = 0;
		b->window_pos = 0;
		bit = 1;
	}
	if (slow)
		b->window_slow_bits |= bit;
	else
		b->window_slow_bits &= ~bit;
	if (success)
	{
		b->window_bits &= ~bit;
		b->consecutive_failures = 0;
	}
	else
	{
		b->window_bits |= bit;
		b->consecutive_failures++;
	}
	if (b->window_len < size)
		b->window_len++;
	b->window_pos = (b->window_pos + 1) % size;

	/* The rate rules judge the window once it holds min_calls outcomes. */
	judged = b->window_len >= Min(b->config.min_calls, size);
	if (!success && b->consecutive_failures >= b->config.failure_threshold)
		reason = "failure_threshold";
	else if (!success && b->config.failure_rate > 0.0 && judged &&
			 (double) window_failures(b) >= b->config.failure_rate * b->window_len)
		reason = "failure_rate";
	else if (slow && judged && b->config.slow_call_rate > 0.0 &&
			 (double) pg_popcount64(b->window_slow_bits) >=
			 b->config.slow_call_rate * b->window_len)
		reason = "slow_call_rate";
	if (reason != NULL)
	{
		b->trips++;
		open_breaker(b, now, b->config.open_for, reason);
	}
}

static void
init_breaker(Breaker *b, int namelen, const BreakerConfig *config,
			 TimestampTz now)
{
	b->roleid = GetUserId();
	b->manager_role = InvalidOid;
	b->caller_role = InvalidOid;
	b->defined = false;
	b->state = BREAKER_CLOSED;
	b->namelen = (uint8) namelen;
	clear_window(b);
	b->config = *config;
	b->open_period = 0;
	b->opened_at = 0;
	b->open_until = 0;
	b->changed_at = now;
	clear_trials(b);
	b->trips = 0;
	b->fast_failures = 0;
	b->successes = 0;
	b->failures = 0;
	b->slow_calls = 0;
	b->state_changes = 0;
}

/*
 * Find the breaker, or create it (closed).  With the lock held exclusively;
 * when the table is full, returns NULL and the caller reports it after
 * releasing the lock.
 */
static Breaker *
find_or_create(const BreakerKey *key, int namelen, const BreakerConfig *config,
			   TimestampTz now)
{
	Breaker    *b;
	bool		found;

	b = hash_search(breaker_hash, key, HASH_FIND, NULL);
	if (b)
		return b;
	if (breaker_shared->count >= fence_max_breakers)
		return NULL;
	b = hash_search(breaker_hash, key, HASH_ENTER_NULL, &found);
	if (b == NULL)
		return NULL;
	Assert(!found);
	breaker_shared->count++;
	init_breaker(b, namelen, config, now);
	return b;
}

/*
 * The databases that have breakers, each once, into a palloc'd array;
 * returns how many.
 */
int
FenceBreakerDatabases(Oid **dbids)
{
	int			n = 0;

	if (breaker_shared == NULL)
	{
		*dbids = palloc(sizeof(Oid));
		return 0;
	}

	/* No palloc under the lock: sized as in fence_breakers_all. */
	for (;;)
	{
		int			room = breaker_shared->count + 16;
		HASH_SEQ_STATUS seq;
		Breaker    *b;

		*dbids = palloc(sizeof(Oid) * room);
		LWLockAcquire(breaker_shared->lock, LW_SHARED);
		if (breaker_shared->count <= room)
		{
			hash_seq_init(&seq, breaker_hash);
			while ((b = hash_seq_search(&seq)) != NULL)
				(*dbids)[n++] = b->key.dbid;
			LWLockRelease(breaker_shared->lock);
			break;
		}
		LWLockRelease(breaker_shared->lock);
		pfree(*dbids);
		CHECK_FOR_INTERRUPTS();
	}
	if (n > 1)
	{
		qsort(*dbids, n, sizeof(Oid), oid_cmp);
		n = qunique(*dbids, n, sizeof(Oid), oid_cmp);
	}
	return n;
}

/*
 * Free every breaker of database dbid, which the caller found dropped;
 * returns how many.  Their probe leases are the lease table's to free, with
 * the database's other leases.
 */
int
FenceBreakerForgetDatabase(Oid dbid)
{
	HASH_SEQ_STATUS seq;
	Breaker    *b;
	int			n = 0;

	if (breaker_shared == NULL)
		return 0;
	LWLockAcquire(breaker_shared->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, breaker_hash);
	while ((b = hash_seq_search(&seq)) != NULL)
	{
		/* A scan may remove the entry it has just returned. */
		if (b->key.dbid == dbid &&
			hash_search(breaker_hash, &b->key, HASH_REMOVE, NULL) != NULL)
			n++;
	}
	breaker_shared->count -= n;
	LWLockRelease(breaker_shared->lock);
	return n;
}

static void
report_table_full(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("the fence breaker table is full"),
			 errdetail("All %d breaker slots (fence.max_breakers) are in use.",
					   fence_max_breakers),
			 errhint("Reset breakers that are no longer used with fence_breaker_reset(), or raise fence.max_breakers and restart the server.")));
}

/*
 * Lock the table and find the breaker, or create it (see find_or_create);
 * with config NULL, only find it (NULL if it does not exist).
 * Returns with the lock held exclusively, and *now read under it.  A full
 * table first has the sweep of dropped databases free their breakers (and
 * leases), with no lock held: nothing else ever would (fence_breaker_reset
 * works in the caller's database only).
 */
static Breaker *
lock_breaker(const BreakerKey *key, int namelen, const BreakerConfig *config,
			 TimestampTz *now)
{
	bool		swept = false;

	/* Events a failed call noted but never sent are not this call's. */
	n_pending_events = 0;
	for (;;)
	{
		Breaker    *b;

		LWLockAcquire(breaker_shared->lock, LW_EXCLUSIVE);
		*now = FenceNow();
		if (config == NULL)
			return hash_search(breaker_hash, key, HASH_FIND, NULL);
		b = find_or_create(key, namelen, config, *now);
		if (b != NULL)
			return b;
		LWLockRelease(breaker_shared->lock);
		if (swept)
			report_table_full();
		/* The lease table's sweep frees their breakers (through dbstate.c). */
		(void) FenceLeaseForgetDroppedDatabases();
		swept = true;
	}
}

/* ---------- who may ---------- */

typedef enum BreakerRight
{
	RIGHT_CALL,					/* ask and report */
	RIGHT_MANAGE				/* define, force, clear, reset */
} BreakerRight;

/* A breaker's roles, copied under the lock to be checked without it. */
typedef struct BreakerRoles
{
	Oid			owner;
	Oid			manager;
	Oid			caller;
} BreakerRoles;

/*
 * A breaker's owner is the role that defined it first.  Asking, reporting
 * or forcing makes none: were the first asker the owner, a worker's role
 * would own every breaker the workers use, and the operators' role, which
 * was granted EXECUTE on the management functions for the purpose, could
 * neither define nor force nor reset it.  A breaker nobody defined has no
 * owner (InvalidOid), no manager role and no caller role: everyone may use
 * it, and everyone who may run the management functions may manage it.
 */
static inline Oid
breaker_owner(const Breaker *b)
{
	return b->defined ? b->roleid : InvalidOid;
}

static void
copy_roles(const Breaker *b, BreakerRoles *roles)
{
	roles->owner = breaker_owner(b);
	roles->manager = b->manager_role;
	roles->caller = b->caller_role;
}

static bool
same_roles(const Breaker *b, const BreakerRoles *roles)
{
	return breaker_owner(b) == roles->owner &&
		b->manager_role == roles->manager &&
		b->caller_role == roles->caller;
}

/*
 * Can the right be granted with no catalog lookup?  (Under the lock, which
 * a catalog lookup must not be made under.)  The owner may do anything; a
 * breaker with no owner may be managed by anyone who may run the function
 * (its EXECUTE privilege is the check), and one with no caller role may be
 * used by anyone.
 */
static bool
right_is_plain(const Breaker *b, BreakerRight need)
{
	Oid			owner = breaker_owner(b);

	if (!OidIsValid(owner))
		return true;
	if (owner == GetUserId())
		return true;
	return need == RIGHT_CALL && b->caller_role == InvalidOid;
}

static bool
may_manage(const BreakerRoles *roles)
{
	return superuser() ||
		!OidIsValid(roles->owner) ||
		has_privs_of_role(GetUserId(), roles->owner) ||
		(OidIsValid(roles->manager) &&
		 has_privs_of_role(GetUserId(), roles->manager));
}

static char *
role_name(Oid roleid)
{
	char	   *name = GetUserNameFromId(roleid, true);

	return name ? name : psprintf("%u", roleid);
}

/* With no lock held: ERROR unless the current user has the right. */
static void
check_right(const BreakerKey *key, int namelen, const BreakerRoles *roles,
			BreakerRight need)
{
	char	   *name = pnstrdup(key->name, namelen);

	if (may_manage(roles))
		return;
	if (need == RIGHT_CALL &&
		has_privs_of_role(GetUserId(), roles->caller))
		return;
	if (need == RIGHT_CALL)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to use breaker \"%s\"", name),
				 errdetail("Breaker \"%s\" is defined for the members of role \"%s\": only they and those who may manage it may ask it and report to it.",
						   name, role_name(roles->caller)),
				 errhint("Ask an administrator to grant you role \"%s\", or use another breaker.",
						 role_name(roles->caller))));
	if (OidIsValid(roles->manager))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to manage breaker \"%s\"", name),
				 errdetail("Only a superuser, a member of role \"%s\" (which defined it) or a member of its manager role \"%s\" may define, force, clear or reset it.",
						   role_name(roles->owner), role_name(roles->manager)),
				 errhint("Ask a member of role \"%s\" to do it, or to grant you that role.",
						 role_name(roles->manager))));
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to manage breaker \"%s\"", name),
			 errdetail("Only a superuser or a member of role \"%s\" (which defined it) may define, force, clear or reset it.",
					   role_name(roles->owner)),
			 errhint("Ask a member of role \"%s\" to do it, or to name a manager role with fence_breaker_define().",
					 role_name(roles->owner))));
}

/*
 * lock_breaker(), once the current user's right to act on the breaker is
 * checked.  A breaker this call creates has no owner until it is defined.
 * Privileges are looked up with the lock released (they read the catalogs),
 * and the breaker is locked again: should its roles have changed meanwhile,
 * they are checked again.
 */
static Breaker *
lock_breaker_as(const BreakerKey *key, int namelen, const BreakerConfig *config,
				TimestampTz *now, BreakerRight need)
{
	BreakerRoles checked = {0};
	bool		have_checked = false;

	for (;;)
	{
		Breaker    *b = lock_breaker(key, namelen, config, now);
		BreakerRoles roles;

		if (b == NULL || right_is_plain(b, need) ||
			(have_checked && same_roles(b, &checked)))
			return b;
		copy_roles(b, &roles);
		LWLockRelease(breaker_shared->lock);
		check_right(key, namelen, &roles, need);
		checked = roles;
		have_checked = true;
		CHECK_FOR_INTERRUPTS();
	}
}

static void
probe_key(const BreakerKey *key, int namelen, char *buf, int *keylen)
{
	memcpy(buf, FENCE_BREAKER_KEY_PREFIX, FENCE_BREAKER_KEY_PREFIX_LEN);
	memcpy(buf + FENCE_BREAKER_KEY_PREFIX_LEN, key->name, namelen);
	*keylen = FENCE_BREAKER_KEY_PREFIX_LEN + namelen;
	buf[*keylen] = '\0';
}

/*
 * With no lock held: send the state changes that change_state() noted, as
 * notifications on channel fence_breaker, with a JSON payload.  PostgreSQL
 * delivers them when this transaction commits, and drops them if it rolls
 * back (the state change itself stays: breakers are not transactional).
 * A standby cannot notify: there the changes are only counted.
 */
static void
send_events(const BreakerKey *key, int namelen)
{
	int			n = n_pending_events;
	char	   *name;

	n_pending_events = 0;
	if (n == 0 || RecoveryInProgress())
		return;
	name = pnstrdup(key->name, namelen);
	for (int i = 0; i < n; i++)
	{
		BreakerEvent *e = &pending_events[i];
		StringInfoData buf;
		char		at[MAXDATELEN + 1];
		int			utc = 0;

		initStringInfo(&buf);
		appendStringInfoString(&buf, "{\"breaker\": ");
		escape_json(&buf, name);
		appendStringInfo(&buf, ", \"from\": \"%s\", \"to\": \"%s\", \"at\": \"%s\", \"reason\": \"%s\"}",
						 state_name(e->from), state_name(e->to),
						 JsonEncodeDateTime(at, TimestampTzGetDatum(e->at),
											TIMESTAMPTZOID, &utc),
						 e->reason);
		Async_Notify(BREAKER_EVENT_CHANNEL, buf.data);
		pfree(buf.data);
	}
}

/* With no lock held: free the permits of these trials, by token. */
static void
release_trials(const BreakerKey *key, int namelen, const FenceToken *tokens,
			   int n)
{
	char		lease_key[FENCE_MAX_KEY_LEN + 1];
	int			keylen;

	if (n == 0)
		return;
	probe_key(key, namelen, lease_key, &keylen);
	for (int i = 0; i < n; i++)
		(void) FenceLeaseReleaseToken(lease_key, keylen, tokens[i]);
}

/* ---------- fence_breaker_allow ---------- */

typedef enum BreakerDecision
{
	DECIDE_CALL,
	DECIDE_PROBE,
	DECIDE_FAIL_FAST,
	DECIDE_TRY_PROBE			/* a probe is due: try to take its lease */
} BreakerDecision;

/* Under the lock: what to tell the caller now, with no probe taken. */
static BreakerDecision
decide(Breaker *b, TimestampTz now, TimestampTz *retry_at)
{
	switch ((BreakerState) b->state)
	{
		case BREAKER_CLOSED:
			return DECIDE_CALL;
		case BREAKER_OPEN:
			if (now < b->open_until)
			{
				*retry_at = b->open_until;
				return DECIDE_FAIL_FAST;
			}
			return DECIDE_TRY_PROBE;
		case BREAKER_HALF_OPEN:

			/*
			 * As many trials as still need to succeed may run at once.  A
			 * trial whose permit ran out before it reported leaves its turn
			 * to the next caller.
			 */
			if (live_trials(b, now, retry_at) >= b->trials_needed - b->trials_ok)
				return DECIDE_FAIL_FAST;
			return DECIDE_TRY_PROBE;
		case BREAKER_FORCED_OPEN:
			/* Until an operator clears it: no time to retry is known. */
			*retry_at = DT_NOEND;
			return DECIDE_FAIL_FAST;
		case BREAKER_DISABLED:
			return DECIDE_CALL;
	}
	return DECIDE_CALL;
}

/*
 * Under the lock: make the granted permit a trial, opening a half-open
 * period if the breaker is open.  False if it cannot be one: the period
 * needs another number of permits (it began meanwhile with other settings),
 * or every trial is live.
 */
static bool
record_trial(Breaker *b, TimestampTz now, int permits,
			 const FenceLeaseGrant *grant)
{
	int			slot;

	if (b->state == BREAKER_OPEN)
	{
		change_state(b, BREAKER_HALF_OPEN, now, "probe");
		clear_trials(b);
		b->trials_needed = permits;
	}
	if (b->trials_needed != permits)
		return false;
	slot = free_trial_slot(b, now);
	if (slot < 0)
		return false;
	b->trials[slot].token = grant->token;
	b->trials[slot].expires_at = grant->expires_at;
	return true;
}

/*
 * A trial's permit can outlive the expiry the breaker saw: the trial
 * renewed it, or its backend asked again and had it extended.  While it is
 * live the trial is still running, and taking its slot would let more
 * trials run than permits allow (the lease table would refuse) -- or, had
 * the slot's permit been extended by this very request, keep a dead
 * trial alive for ever.  So look at the trials that seem to have run out
 * (tokens "seen", with no lock held), and fail fast while any of them is
 * still live and no other slot is free.  Returns DECIDE_TRY_PROBE or
 * DECIDE_FAIL_FAST (with *retry_at).
 */
static BreakerDecision
recheck_trials(const BreakerKey *key, int namelen, const FenceToken *seen,
			   int nseen, TimestampTz *retry_at)
{
	char		lease_key[FENCE_MAX_KEY_LEN + 1];
	int			keylen;
	TimestampTz held_until[BREAKER_MAX_TRIALS];
	bool		any_held = false;
	BreakerDecision decision = DECIDE_TRY_PROBE;
	Breaker    *b;

	probe_key(key, namelen, lease_key, &keylen);
	for (int i = 0; i < nseen; i++)
	{
		FenceLeaseStamp stamp;

		held_until[i] = 0;
		if (FenceLeaseGetStatus(MyDatabaseId, lease_key, keylen, seen[i],
								&stamp) == FENCE_LEASE_HELD)
		{
			held_until[i] = stamp.expires_at;
			any_held = true;
		}
	}
	if (!any_held)
		return decision;

	LWLockAcquire(breaker_shared->lock, LW_EXCLUSIVE);
	b = hash_search(breaker_hash, key, HASH_FIND, NULL);
	if (b != NULL && b->state == BREAKER_HALF_OPEN)
	{
		for (int i = 0; i < nseen; i++)
		{
			int			slot = find_trial(b, seen[i]);

			if (slot >= 0)
				b->trials[slot].expires_at = Max(b->trials[slot].expires_at,
												 held_until[i]);
		}
		decision = decide(b, FenceNow(), retry_at);
		if (decision == DECIDE_FAIL_FAST)
			b->fast_failures++;
	}
	LWLockRelease(breaker_shared->lock);
	return decision;
}

PG_FUNCTION_INFO_V1(fence_breaker_allow);
Datum
fence_breaker_allow(PG_FUNCTION_ARGS)
{
	BreakerKey	key;
	int			namelen;
	BreakerConfig config;
	Breaker    *b;
	BreakerDecision decision;
	TimestampTz retry_at = 0;
	FenceToken	token = 0;
	FenceToken	seen[BREAKER_MAX_TRIALS];
	int			nseen = 0;
	int			permits = 0;
	TimestampTz now;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[3];
	bool		nulls[3] = {0};

	FenceRequirePreload();
	get_name(fcinfo, 0, &key, &namelen);
	get_config(fcinfo, &config);

	/*
	 * One row, returned as a set (RETURNS TABLE).  The result set is made
	 * before anything changes, so that little is left to fail between
	 * granting a probe and handing its token to the caller.
	 */
	InitMaterializedSRF(fcinfo, 0);

	b = lock_breaker_as(&key, namelen, &config, &now, RIGHT_CALL);
	/* A defined breaker keeps its definition: the call's settings are ignored. */
	if (!b->defined)
		b->config = config;
	else
		config = b->config;
	decision = decide(b, now, &retry_at);
	if (decision == DECIDE_FAIL_FAST)
		b->fast_failures++;
	if (decision == DECIDE_TRY_PROBE)
	{
		/* A new half-open period takes the settings' number of trials. */
		permits = (b->state == BREAKER_HALF_OPEN) ?
			b->trials_needed : config.half_open_trials;
		for (int i = 0; i < b->trials_needed; i++)
		{
			if (b->trials[i].token != 0 && b->trials[i].expires_at <= now)
				seen[nseen++] = b->trials[i].token;
		}
	}
	LWLockRelease(breaker_shared->lock);

	if (decision == DECIDE_TRY_PROBE && nseen > 0)
		decision = recheck_trials(&key, namelen, seen, nseen, &retry_at);

	if (decision == DECIDE_TRY_PROBE)
	{
		char		lease_key[FENCE_MAX_KEY_LEN + 1];
		char		owner[FENCE_MAX_OWNER_LEN + 1];
		FenceLeaseRequest req;
		FenceLeaseGrant grant;

		/* A probe's lease issues a durable token, as any grant does. */
		if (RecoveryInProgress() || XactReadOnly)
			ereport(ERROR,
					(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
					 errmsg("cannot take a breaker probe in a read-only transaction"),
					 errdetail("Breaker \"%s\" is due for a probe, and the probe's lease issues a fencing token, which is written to WAL.",
							   pnstrdup(key.name, namelen)),
					 errhint("Ask the breaker on the primary, in a read-write transaction.")));

		memset(&req, 0, sizeof(req));
		probe_key(&key, namelen, lease_key, &req.keylen);
		req.key = lease_key;
		if (permits == 1)
			strlcpy(owner, BREAKER_PROBE_OWNER, sizeof(owner));
		else
			snprintf(owner, sizeof(owner), BREAKER_TRIAL_OWNER_FMT, MyProcPid);
		req.owner = owner;
		req.ownerlen = strlen(owner);
		req.scope = FENCE_SCOPE_DETACHED;
		/* One probe is an ordinary lease, as it always was; N trials, N permits. */
		req.permits = (permits > 1) ? permits : 0;
		req.ttl = config.probe_ttl;
		req.wait = false;
		FenceLeaseAcquire(&req, &grant);

		LWLockAcquire(breaker_shared->lock, LW_EXCLUSIVE);
		b = hash_search(breaker_hash, &key, HASH_FIND, NULL);
		if (b == NULL)
		{
			/* Reset meanwhile: a forgotten breaker is a closed one. */
			decision = DECIDE_CALL;
		}
		else
		{
			now = FenceNow();
			decision = decide(b, now, &retry_at);
			if (decision == DECIDE_TRY_PROBE &&
				grant.outcome == FENCE_ACQUIRE_GRANTED &&
				record_trial(b, now, permits, &grant))
			{
				token = grant.token;
				decision = DECIDE_PROBE;
			}
			else if (decision == DECIDE_TRY_PROBE)
			{
				/*
				 * Other callers hold every permit but have not recorded
				 * their trials yet, this backend's own trial still runs (its
				 * permit was extended), or the restart grace period refuses
				 * every grant: it is not this caller's turn.
				 */
				decision = DECIDE_FAIL_FAST;
				retry_at = add_usecs(now, config.probe_ttl);
			}
			if (decision == DECIDE_FAIL_FAST)
				b->fast_failures++;
		}
		LWLockRelease(breaker_shared->lock);

		/* Granted but not needed any more: give the permit straight back. */
		if (grant.outcome == FENCE_ACQUIRE_GRANTED && decision != DECIDE_PROBE)
			(void) FenceLeaseRelease(lease_key, req.keylen, grant.token);
	}

	send_events(&key, namelen);

	switch (decision)
	{
		case DECIDE_CALL:
			values[0] = CStringGetTextDatum("call");
			nulls[1] = nulls[2] = true;
			break;
		case DECIDE_PROBE:
			values[0] = CStringGetTextDatum("probe");
			values[1] = FenceTokenGetDatum(token);
			nulls[2] = true;
			break;
		case DECIDE_FAIL_FAST:
		case DECIDE_TRY_PROBE:
			values[0] = CStringGetTextDatum("fail_fast");
			nulls[1] = true;
			values[2] = TimestampTzGetDatum(retry_at);
			break;
	}
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

/* ---------- fence_breaker_report ---------- */

typedef enum ReportOutcome
{
	REPORT_COUNTED,
	REPORT_NOT_COUNTED,			/* a plain call's late outcome, open breaker */
	REPORT_STALE_PROBE			/* a probe token that is not the current one */
} ReportOutcome;

PG_FUNCTION_INFO_V1(fence_breaker_report);
Datum
fence_breaker_report(PG_FUNCTION_ARGS)
{
	BreakerKey	key;
	int			namelen;
	bool		success;
	bool		has_token;
	FenceToken	token = 0;
	FenceToken	current_probe = 0;
	FenceToken	release[BREAKER_MAX_TRIALS];
	int			nrelease = 0;
	int			latest;
	BreakerConfig defaults;
	Breaker    *b;
	ReportOutcome outcome = REPORT_COUNTED;
	uint8		state;
	TimestampTz now;
	int64		duration = -1;	/* -1: not given */
	bool		slow;

	FenceRequirePreload();
	get_name(fcinfo, 0, &key, &namelen);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker call outcome must not be NULL"),
				 errhint("Pass true when the call succeeded, false when it failed.")));
	success = PG_GETARG_BOOL(1);
	has_token = !PG_ARGISNULL(2);
	if (has_token)
	{
		token = PG_GETARG_FENCE_TOKEN(2);
		if (token <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("probe token must be greater than zero"),
					 errhint("Pass the probe_token that fence_breaker_allow() returned, or NULL after a plain call.")));
	}
	/* 1.1's SQL function, before ALTER EXTENSION UPDATE, has no duration. */
	if (PG_NARGS() > 3 && !PG_ARGISNULL(3))
		duration = get_duration(fcinfo, 3, "duration", true);
	default_config(&defaults);

	b = lock_breaker_as(&key, namelen, &defaults, &now, RIGHT_CALL);
	latest = latest_trial(b);
	current_probe = (latest >= 0) ? b->trials[latest].token : 0;
	slow = b->config.slow_call > 0 && duration >= b->config.slow_call;

	if (has_token)
	{
		/*
		 * Only a trial the breaker waits for may move it.  A trial whose
		 * permit ran out and was taken over, a trial from before a reset, or
		 * one that already reported, is stale.  (A trial whose permit ran
		 * out with nobody taking over is still the breaker's trial: its
		 * news is the freshest there is.)
		 */
		int			slot = (b->state == BREAKER_HALF_OPEN) ? find_trial(b, token) : -1;

		if (slot < 0)
			outcome = REPORT_STALE_PROBE;
		else
		{
			release[nrelease++] = token;
			b->trials[slot].token = 0;
			/* A probe that succeeds slowly has not shown the dependency well. */
			if (success && !slow)
			{
				/* Enough trials succeeded: closed.  (Expired ones are given up.) */
				if (++b->trials_ok >= b->trials_needed)
				{
					nrelease += take_trials(b, release + nrelease);
					change_state(b, BREAKER_CLOSED, now, "probe_succeeded");
					b->open_period = 0;
					clear_window(b);
				}
			}
			else
			{
				int64		period;

				/* One failed trial reopens it: the others' news is moot. */
				nrelease += take_trials(b, release + nrelease);
				if (pg_mul_s64_overflow(Max(b->open_period, b->config.open_for),
										2, &period))
					period = b->config.max_open_for;
				open_breaker(b, now, period,
							 success ? "probe_slow" : "probe_failed");
			}
		}
	}
	else if (b->state == BREAKER_CLOSED)
		record_closed_outcome(b, success, slow, now);
	else if (b->state != BREAKER_DISABLED)
		outcome = REPORT_NOT_COUNTED;
	/* Disabled: counted in the totals, judged by nothing. */

	if (outcome == REPORT_COUNTED)
	{
		if (success)
			b->successes++;
		else
			b->failures++;
		if (slow)
			b->slow_calls++;
	}
	state = b->state;
	LWLockRelease(breaker_shared->lock);

	/*
	 * The probe is over: free its lease for the next one.  The reporter may
	 * be of another role than the probe's taker (any session that has the
	 * probe token may report, as above), and FenceLeaseRelease() would then
	 * refuse: the lease would stay until probe_ttl and keep the next probe
	 * out.  The breaker has already checked the token, and the release is a
	 * compare-and-delete by that token, so a newer probe's lease is safe.
	 * A breaker that left half-open frees the other trials' permits too.
	 */
	release_trials(&key, namelen, release, nrelease);
	send_events(&key, namelen);

	if (outcome == REPORT_STALE_PROBE)
	{
		if (current_probe != 0)
			ereport(NOTICE,
					(errmsg("stale probe report for breaker \"%s\" ignored",
							pnstrdup(key.name, namelen)),
					 errdetail("The report carries probe token %lld; the breaker is %s and waits for probe token %lld.",
							   (long long) token, state_name(state),
							   (long long) current_probe),
					 errhint("The probe's lease ran out before it reported, and another caller probed since.")));
		else
			ereport(NOTICE,
					(errmsg("stale probe report for breaker \"%s\" ignored",
							pnstrdup(key.name, namelen)),
					 errdetail("The report carries probe token %lld; the breaker is %s and waits for no probe.",
							   (long long) token, state_name(state)),
					 errhint("The probe already reported, its lease ran out and another probe decided, or the breaker was reset.")));
	}

	PG_RETURN_TEXT_P(cstring_to_text(state_name(state)));
}

/* ---------- fence_breaker_define ---------- */

/* fence_breaker_define's arguments after those it shares with allow. */
#define DEFINE_ARG_MIN_CALLS		7
#define DEFINE_ARG_SLOW_CALL		8
#define DEFINE_ARG_SLOW_CALL_RATE	9
#define DEFINE_ARG_HALF_OPEN_TRIALS	10
#define DEFINE_ARG_MANAGER_ROLE		11
#define DEFINE_ARG_CALLER_ROLE		12

/*
 * slow_call (NULL: slow calls are not counted) and slow_call_rate (NULL:
 * 1, every call of the window slow), which needs slow_call.
 */
static void
get_slow_call_config(FunctionCallInfo fcinfo, BreakerConfig *config)
{
	double		rate = 1.0;

	if (!PG_ARGISNULL(DEFINE_ARG_SLOW_CALL_RATE))
	{
		rate = PG_GETARG_FLOAT8(DEFINE_ARG_SLOW_CALL_RATE);
		if (isnan(rate) || rate <= 0.0 || rate > 1.0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("breaker parameter \"%s\" is out of range", "slow_call_rate"),
					 errdetail("The value given was %g; it must be greater than 0 and at most 1.",
							   rate)));
		if (PG_ARGISNULL(DEFINE_ARG_SLOW_CALL))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("breaker parameter \"%s\" needs \"%s\"",
							"slow_call_rate", "slow_call"),
					 errdetail("A call is slow when it takes slow_call or longer; without it no call is slow."),
					 errhint("Pass slow_call as well, for example slow_call => '2 seconds'.")));
	}
	if (PG_ARGISNULL(DEFINE_ARG_SLOW_CALL))
		return;
	config->slow_call = get_positive_duration(fcinfo, DEFINE_ARG_SLOW_CALL,
											  "slow_call");
	config->slow_call_rate = rate;
}

/* A regrole argument: NULL is none (InvalidOid); a role that must exist. */
static Oid
get_role(FunctionCallInfo fcinfo, int argno, const char *param)
{
	Oid			roleid;

	if (PG_ARGISNULL(argno))
		return InvalidOid;
	roleid = PG_GETARG_OID(argno);
	if (OidIsValid(roleid) &&
		!SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(roleid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role with OID %u does not exist", roleid),
				 errdetail("Breaker parameter \"%s\" names a role that does not exist.", param),
				 errhint("Name the role, for example %s => 'ops'.", param)));
	return roleid;
}

/*
 * Define a breaker, or change its definition: its settings are these from
 * now on, whatever fence_breaker_allow() callers pass.  The state, window
 * and counts are kept (a window that shrank starts afresh at its next
 * call).  Returns the breaker's state.
 */
PG_FUNCTION_INFO_V1(fence_breaker_define);
Datum
fence_breaker_define(PG_FUNCTION_ARGS)
{
	BreakerKey	key;
	int			namelen;
	BreakerConfig config;
	Oid			manager;
	Oid			caller;
	Breaker    *b;
	TimestampTz now;
	uint8		state;

	FenceRequirePreload();
	get_name(fcinfo, 0, &key, &namelen);
	get_config(fcinfo, &config);
	/* NULL: judge a full window only, as fence_breaker_allow's settings do. */
	if (!PG_ARGISNULL(DEFINE_ARG_MIN_CALLS))
		config.min_calls = get_int_in_range(fcinfo, DEFINE_ARG_MIN_CALLS,
											"min_calls", 1, config.window_size);
	get_slow_call_config(fcinfo, &config);
	config.half_open_trials = get_int_in_range(fcinfo, DEFINE_ARG_HALF_OPEN_TRIALS,
											   "half_open_trials", 1,
											   BREAKER_MAX_TRIALS);
	manager = get_role(fcinfo, DEFINE_ARG_MANAGER_ROLE, "manager_role");
	caller = get_role(fcinfo, DEFINE_ARG_CALLER_ROLE, "caller_role");

	b = lock_breaker_as(&key, namelen, &config, &now, RIGHT_MANAGE);
	if (!b->defined)
		b->roleid = GetUserId();
	b->defined = true;
	b->config = config;
	b->manager_role = manager;
	b->caller_role = caller;
	state = b->state;
	LWLockRelease(breaker_shared->lock);

	PG_RETURN_TEXT_P(cstring_to_text(state_name(state)));
}

/* ---------- fence_breaker_force, fence_breaker_unforce ---------- */

/*
 * Put the breaker (made if need be) into state "to", or, with to =
 * BREAKER_CLOSED, take it out of a forced state.  A probe in flight is
 * ended: its lease is freed and its late report is stale.  Returns the
 * state afterwards.
 */
static uint8
force_breaker(const BreakerKey *key, int namelen, uint8 to)
{
	BreakerConfig defaults;
	Breaker    *b;
	TimestampTz now;
	FenceToken	release[BREAKER_MAX_TRIALS];
	int			nrelease = 0;
	uint8		state;

	if (to == BREAKER_CLOSED)
	{
		/* Clearing makes no breaker: one that does not exist is closed. */
		b = lock_breaker_as(key, namelen, NULL, &now, RIGHT_MANAGE);
		if (b == NULL)
		{
			LWLockRelease(breaker_shared->lock);
			return BREAKER_CLOSED;
		}
	}
	else
	{
		default_config(&defaults);
		b = lock_breaker_as(key, namelen, &defaults, &now, RIGHT_MANAGE);
	}
	if (to != BREAKER_CLOSED ||
		b->state == BREAKER_FORCED_OPEN || b->state == BREAKER_DISABLED)
	{
		nrelease = take_trials(b, release);
		change_state(b, to, now,
					 to == BREAKER_CLOSED ? "unforced" : "forced");
		b->open_period = 0;
		b->open_until = 0;
		clear_window(b);
	}
	state = b->state;
	LWLockRelease(breaker_shared->lock);

	release_trials(key, namelen, release, nrelease);
	send_events(key, namelen);
	return state;
}

PG_FUNCTION_INFO_V1(fence_breaker_force);
Datum
fence_breaker_force(PG_FUNCTION_ARGS)
{
	BreakerKey	key;
	int			namelen;
	char	   *mode;
	uint8		to;

	FenceRequirePreload();
	get_name(fcinfo, 0, &key, &namelen);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker force mode must not be NULL"),
				 errhint("Pass 'open' or 'disabled'; fence_breaker_unforce() clears a forced state.")));
	mode = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (strcmp(mode, "open") == 0)
		to = BREAKER_FORCED_OPEN;
	else if (strcmp(mode, "disabled") == 0)
		to = BREAKER_DISABLED;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown breaker force mode \"%s\"", mode),
				 errdetail("The mode is 'open' (every caller fails fast) or 'disabled' (every caller calls, and nothing trips the breaker)."),
				 errhint("fence_breaker_unforce() clears a forced state.")));

	PG_RETURN_TEXT_P(cstring_to_text(state_name(force_breaker(&key, namelen, to))));
}

PG_FUNCTION_INFO_V1(fence_breaker_unforce);
Datum
fence_breaker_unforce(PG_FUNCTION_ARGS)
{
	BreakerKey	key;
	int			namelen;

	FenceRequirePreload();
	get_name(fcinfo, 0, &key, &namelen);
	PG_RETURN_TEXT_P(cstring_to_text(state_name(force_breaker(&key, namelen,
															  BREAKER_CLOSED))));
}

/* ---------- fence_breaker_reset ---------- */

/*
 * Admin: forget the breaker (it reads as closed until used again) and free
 * its probe lease, whoever holds it.  True if the breaker existed.
 */
PG_FUNCTION_INFO_V1(fence_breaker_reset);
Datum
fence_breaker_reset(PG_FUNCTION_ARGS)
{
	BreakerKey	key;
	int			namelen;
	bool		found;
	char		lease_key[FENCE_MAX_KEY_LEN + 1];
	int			keylen;
	FenceToken	broken;
	TimestampTz now;
	Breaker    *b;

	FenceRequirePreload();
	get_name(fcinfo, 0, &key, &namelen);

	b = lock_breaker_as(&key, namelen, NULL, &now, RIGHT_MANAGE);
	found = (b != NULL);
	if (found)
	{
		/* Forgotten, it reads as closed: say so, if it was not. */
		change_state(b, BREAKER_CLOSED, now, "reset");
		(void) hash_search(breaker_hash, &key, HASH_REMOVE, NULL);
		breaker_shared->count--;
	}
	LWLockRelease(breaker_shared->lock);

	probe_key(&key, namelen, lease_key, &keylen);
	(void) FenceLeaseBreak(lease_key, keylen, &broken);
	send_events(&key, namelen);
	PG_RETURN_BOOL(found);
}

/* ---------- the fence_breakers view ---------- */

static Interval *
usecs_interval(int64 usecs)
{
	Interval   *iv = palloc0(sizeof(Interval));

	iv->time = usecs;
	return iv;
}

/*
 * The same rule as fence_leases: another role's breaker names and probe
 * tokens are private.
 */
static bool
may_see_breaker(Oid roleid)
{
	return superuser() ||
		has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS) ||
		has_privs_of_role(GetUserId(), roleid);
}

/* A role's name for the view; NULL for none (or a dropped role). */
static Datum
role_datum(Oid roleid, bool *isnull)
{
	char	   *name = OidIsValid(roleid) ? GetUserNameFromId(roleid, true) : NULL;

	*isnull = (name == NULL);
	return name ? DirectFunctionCall1(namein, CStringGetDatum(name)) : (Datum) 0;
}

#define BREAKER_VIEW_COLS 31

PG_FUNCTION_INFO_V1(fence_breakers_all);
Datum
fence_breakers_all(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Breaker    *copy;
	int			n = 0;
	HASH_SEQ_STATUS seq;
	Breaker    *b;
	TimestampTz now;
	int			latest;

	FenceRequirePreload();
	InitMaterializedSRF(fcinfo, 0);
	now = FenceNow();

	/*
	 * The view of an older version, before ALTER EXTENSION UPDATE, has the
	 * first of these columns, in this order: it gets those.
	 */
	if (rsinfo->setDesc->natts > BREAKER_VIEW_COLS)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("fence_breakers_all() expects more columns than this fence library has"),
				 errdetail("The function returns %d columns; the library knows %d.",
						   rsinfo->setDesc->natts, BREAKER_VIEW_COLS),
				 errhint("Install the fence library of the extension's version and restart the server.")));

	/*
	 * Copy under the lock; look up names and privileges without it.  The
	 * copy is sized from an unlocked look at the count, and taken again in
	 * the rare case that breakers were added meanwhile (no palloc with the
	 * lock held).
	 */
	for (;;)
	{
		int			room = breaker_shared->count + 16;

		copy = palloc(sizeof(Breaker) * room);
		LWLockAcquire(breaker_shared->lock, LW_SHARED);
		if (breaker_shared->count <= room)
		{
			hash_seq_init(&seq, breaker_hash);
			while ((b = hash_seq_search(&seq)) != NULL)
				copy[n++] = *b;
			LWLockRelease(breaker_shared->lock);
			break;
		}
		LWLockRelease(breaker_shared->lock);
		pfree(copy);
		CHECK_FOR_INTERRUPTS();
	}

	for (int i = 0; i < n; i++)
	{
		Breaker    *c = &copy[i];
		Datum		values[BREAKER_VIEW_COLS];
		bool		nulls[BREAKER_VIEW_COLS] = {0};
		char	   *dbname = get_database_name(c->key.dbid);
		bool		visible;

		CHECK_FOR_INTERRUPTS();

		if (dbname == NULL)
			nulls[0] = true;
		else
			values[0] = DirectFunctionCall1(namein, CStringGetDatum(dbname));
		visible = may_see_breaker(c->roleid);
		if (visible)
			values[1] = PointerGetDatum(cstring_to_text_with_len(c->key.name, c->namelen));
		else
			nulls[1] = true;
		values[2] = CStringGetTextDatum(state_name(c->state));
		values[3] = Int32GetDatum(c->consecutive_failures);
		values[4] = Int32GetDatum(c->window_len);
		values[5] = Int32GetDatum(window_failures(c));
		values[6] = Int32GetDatum(c->config.failure_threshold);
		if (c->config.failure_rate > 0.0)
			values[7] = Float8GetDatum(c->config.failure_rate);
		else
			nulls[7] = true;
		values[8] = Int32GetDatum(c->config.window_size);
		if (c->opened_at != 0)
			values[9] = TimestampTzGetDatum(c->opened_at);
		else
			nulls[9] = true;
		if (c->state == BREAKER_OPEN || c->state == BREAKER_HALF_OPEN)
			values[10] = TimestampTzGetDatum(c->open_until);
		else
			nulls[10] = true;
		if (c->open_period != 0)
			values[11] = IntervalPGetDatum(usecs_interval(c->open_period));
		else
			nulls[11] = true;
		latest = latest_trial(c);
		if (latest >= 0 && visible)
		{
			values[12] = FenceTokenGetDatum(c->trials[latest].token);
			values[13] = TimestampTzGetDatum(c->trials[latest].expires_at);
		}
		else
			nulls[12] = nulls[13] = true;
		values[14] = TimestampTzGetDatum(c->changed_at);
		values[15] = Int64GetDatum(c->trips);
		values[16] = Int64GetDatum(c->fast_failures);
		values[17] = Int64GetDatum(c->successes);
		values[18] = Int64GetDatum(c->failures);
		values[19] = BoolGetDatum(c->defined);
		values[20] = role_datum(c->manager_role, &nulls[20]);
		values[21] = role_datum(c->caller_role, &nulls[21]);
		values[22] = Int32GetDatum(c->config.min_calls);
		if (c->config.slow_call > 0)
		{
			values[23] = IntervalPGetDatum(usecs_interval(c->config.slow_call));
			values[24] = Float8GetDatum(c->config.slow_call_rate);
		}
		else
			nulls[23] = nulls[24] = true;
		values[25] = Int32GetDatum(pg_popcount64(c->window_slow_bits));
		values[26] = Int64GetDatum(c->slow_calls);
		values[27] = Int32GetDatum(c->config.half_open_trials);
		if (c->state == BREAKER_HALF_OPEN)
		{
			TimestampTz earliest = 0;

			values[28] = Int32GetDatum(live_trials(c, now, &earliest));
			values[29] = Int32GetDatum(c->trials_ok);
		}
		else
			nulls[28] = nulls[29] = true;
		values[30] = Int64GetDatum(c->state_changes);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(copy);
	return (Datum) 0;
}
