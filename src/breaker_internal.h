/*-------------------------------------------------------------------------
 *
 * breaker_internal.h
 *		What the files of the circuit breakers share, and nothing else
 *		includes: a breaker's layout and settings, and each file's functions
 *		for the others.
 *
 * The breakers are one concern in fence.h's module list, split into files.
 * They are listed here top to bottom; a file calls only files below it
 * (test/t/051_layering.pl checks this list as it checks fence.h's):
 *
 *	breaker_sql.c	the SQL functions: allow, report, define, force, unforce,
 *					reset, and the rows of the fence_breakers view
 *	breaker_access.c	who may use and manage a breaker
 *	breaker_args.c	the SQL functions' arguments, checked
 *	breaker_state.c	the state machine: trips, trials, decisions
 *	breaker.c		the shared table, its lock, and the state changes it
 *					notes and sends
 *
 * Locks: the breaker lock ("fence_breakers"), whose place in the order
 * fence.h gives.  breaker.c says what it guards; every function of
 * breaker_state.c runs with it held exclusively and must not ERROR.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BREAKER_INTERNAL_H
#define BREAKER_INTERNAL_H

#include "fmgr.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#include "fence.h"

/*
 * Every function and variable below is the breakers' own: keep them out of
 * the library's exported symbols, so that a namesake elsewhere in the
 * server can never stand in for one.
 */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(hidden)
#endif

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

typedef enum BreakerRight
{
	RIGHT_CALL,					/* ask and report */
	RIGHT_MANAGE				/* define, force, clear, reset */
} BreakerRight;

typedef enum BreakerDecision
{
	DECIDE_CALL,
	DECIDE_PROBE,
	DECIDE_FAIL_FAST,
	DECIDE_TRY_PROBE			/* a probe is due: try to take its lease */
} BreakerDecision;

/* fence_breaker_define's arguments after those it shares with allow. */
#define DEFINE_ARG_MIN_CALLS		7
#define DEFINE_ARG_SLOW_CALL		8
#define DEFINE_ARG_SLOW_CALL_RATE	9
#define DEFINE_ARG_HALF_OPEN_TRIALS	10
#define DEFINE_ARG_MANAGER_ROLE		11
#define DEFINE_ARG_CALLER_ROLE		12

/* ---------- under the breaker lock ---------- */

static inline void
clear_window(Breaker *b)
{
	b->consecutive_failures = 0;
	b->window_bits = 0;
	b->window_slow_bits = 0;
	b->window_len = 0;
	b->window_pos = 0;
}

/*
 * Leave the half-open state's bookkeeping.  The permits of the trials still
 * recorded are the caller's to release (take_trials), or already gone.
 */
static inline void
clear_trials(Breaker *b)
{
	b->trials_needed = 0;
	b->trials_ok = 0;
	memset(b->trials, 0, sizeof(b->trials));
}

/* breaker_access.c */
extern Breaker *lock_breaker_as(const BreakerKey *key, int namelen, const BreakerConfig *config, TimestampTz *now, BreakerRight need);

/* breaker_args.c */
extern void get_name(FunctionCallInfo fcinfo, int argno, BreakerKey *key, int *namelen);
extern int64 get_duration(FunctionCallInfo fcinfo, int argno, const char *param, bool allow_zero);
extern int32 get_int_in_range(FunctionCallInfo fcinfo, int argno, const char *param, int32 min, int32 max);
extern void get_config(FunctionCallInfo fcinfo, BreakerConfig *config);
extern void default_config(BreakerConfig *config);
extern void get_slow_call_config(FunctionCallInfo fcinfo, BreakerConfig *config);
extern Oid get_role(FunctionCallInfo fcinfo, int argno, const char *param);

/* breaker_state.c */
extern TimestampTz add_usecs(TimestampTz t, int64 usecs);
extern int window_failures(const Breaker *b);
extern int take_trials(Breaker *b, FenceToken *out);
extern int find_trial(const Breaker *b, FenceToken token);
extern int latest_trial(const Breaker *b);
extern int live_trials(const Breaker *b, TimestampTz now, TimestampTz *earliest);
extern void open_breaker(Breaker *b, TimestampTz now, int64 period, const char *reason);
extern void record_closed_outcome(Breaker *b, bool success, bool slow, TimestampTz now);
extern BreakerDecision decide(Breaker *b, TimestampTz now, TimestampTz *retry_at);
extern bool record_trial(Breaker *b, TimestampTz now, int permits, const FenceLeaseGrant *grant);

/* breaker.c */
extern BreakerShared *breaker_shared;
extern HTAB *breaker_hash;
extern const char *state_name(uint8 state);
extern void change_state(Breaker *b, uint8 to, TimestampTz now, const char *reason);
extern Breaker *lock_breaker(const BreakerKey *key, int namelen, const BreakerConfig *config, TimestampTz *now);
extern void send_events(const BreakerKey *key, int namelen);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif

#endif							/* BREAKER_INTERNAL_H */
