/*-------------------------------------------------------------------------
 *
 * breaker_sql.c
 *		The SQL functions of the circuit breakers: fence_breaker_allow,
 *		fence_breaker_report, define, force, unforce, reset, and the rows of
 *		the fence_breakers view.
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
 * Locks: each function takes the breaker lock through lock_breaker or
 * lock_breaker_as, with no other lock of fence held, and releases it
 * before it calls into the lease table, ereports, sends notifications or
 * builds its result.
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

#include "breaker_internal.h"

static void
probe_key(const BreakerKey *key, int namelen, char *buf, int *keylen)
{
	memcpy(buf, FENCE_BREAKER_KEY_PREFIX, FENCE_BREAKER_KEY_PREFIX_LEN);
	memcpy(buf + FENCE_BREAKER_KEY_PREFIX_LEN, key->name, namelen);
	*keylen = FENCE_BREAKER_KEY_PREFIX_LEN + namelen;
	buf[*keylen] = '\0';
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

/*
 * fence_breaker_allow's first look, under the breaker lock: the decision,
 * and for a probe that is due, how many permits its lease has (*permits)
 * and the trials that seem to have run out (seen, *nseen).  A defined
 * breaker keeps its definition: *config becomes its settings.
 */
static BreakerDecision
allow_first_look(const BreakerKey *key, int namelen, BreakerConfig *config,
				 TimestampTz *retry_at, int *permits, FenceToken *seen,
				 int *nseen)
{
	Breaker    *b;
	BreakerDecision decision;
	TimestampTz now;

	b = lock_breaker_as(key, namelen, config, &now, RIGHT_CALL);
	/* A defined breaker keeps its definition: the call's settings are ignored. */
	if (!b->defined)
		b->config = *config;
	else
		*config = b->config;
	decision = decide(b, now, retry_at);
	if (decision == DECIDE_FAIL_FAST)
		b->fast_failures++;
	if (decision == DECIDE_TRY_PROBE)
	{
		/* A new half-open period takes the settings' number of trials. */
		*permits = (b->state == BREAKER_HALF_OPEN) ?
			b->trials_needed : config->half_open_trials;
		for (int i = 0; i < b->trials_needed; i++)
		{
			if (b->trials[i].token != 0 && b->trials[i].expires_at <= now)
				seen[(*nseen)++] = b->trials[i].token;
		}
	}
	LWLockRelease(breaker_shared->lock);
	return decision;
}

/*
 * The lease request of a probe (permits 1) or of a trial (a permit of
 * permits), into req, whose key and owner point into lease_key and owner.
 * ERRORs where no token can be issued.
 */
static void
probe_request(const BreakerKey *key, int namelen,
			  const BreakerConfig *config, int permits, char *lease_key,
			  char *owner, FenceLeaseRequest *req)
{
	/* A probe's lease issues a durable token, as any grant does. */
	if (RecoveryInProgress() || XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot take a breaker probe in a read-only transaction"),
				 errdetail("Breaker \"%s\" is due for a probe, and the probe's lease issues a fencing token, which is written to WAL.",
						   pnstrdup(key->name, namelen)),
				 errhint("Ask the breaker on the primary, in a read-write transaction.")));

	memset(req, 0, sizeof(*req));
	probe_key(key, namelen, lease_key, &req->keylen);
	req->key = lease_key;
	if (permits == 1)
		strlcpy(owner, BREAKER_PROBE_OWNER, FENCE_MAX_OWNER_LEN + 1);
	else
		snprintf(owner, FENCE_MAX_OWNER_LEN + 1, BREAKER_TRIAL_OWNER_FMT,
				 MyProcPid);
	req->owner = owner;
	req->ownerlen = strlen(owner);
	req->scope = FENCE_SCOPE_DETACHED;
	/* One probe is an ordinary lease, as it always was; N trials, N permits. */
	req->permits = (permits > 1) ? permits : 0;
	req->ttl = config->probe_ttl;
	req->wait = false;
}

/*
 * Under the breaker lock again, with the probe's lease asked for: record
 * the grant as a trial if the breaker still wants one.  DECIDE_PROBE if it
 * did; else what to tell the caller.
 */
static BreakerDecision
record_probe(const BreakerKey *key, const BreakerConfig *config,
			 int permits, const FenceLeaseGrant *grant,
			 TimestampTz *retry_at)
{
	BreakerDecision decision;
	Breaker    *b;

	LWLockAcquire(breaker_shared->lock, LW_EXCLUSIVE);
	b = hash_search(breaker_hash, key, HASH_FIND, NULL);
	if (b == NULL)
	{
		/* Reset meanwhile: a forgotten breaker is a closed one. */
		decision = DECIDE_CALL;
	}
	else
	{
		TimestampTz now = FenceNow();

		decision = decide(b, now, retry_at);
		if (decision == DECIDE_TRY_PROBE &&
			grant->outcome == FENCE_ACQUIRE_GRANTED &&
			record_trial(b, now, permits, grant))
			decision = DECIDE_PROBE;
		else if (decision == DECIDE_TRY_PROBE)
		{
			/*
			 * Other callers hold every permit but have not recorded their
			 * trials yet, this backend's own trial still runs (its permit
			 * was extended), or the restart grace period refuses every
			 * grant: it is not this caller's turn.
			 */
			decision = DECIDE_FAIL_FAST;
			*retry_at = add_usecs(now, config->probe_ttl);
		}
		if (decision == DECIDE_FAIL_FAST)
			b->fast_failures++;
	}
	LWLockRelease(breaker_shared->lock);
	return decision;
}

/*
 * A probe is due: take its lease with no lock held, and record it.  On
 * DECIDE_PROBE, *token is the probe's; a grant not needed any more is given
 * straight back.
 */
static BreakerDecision
try_probe(const BreakerKey *key, int namelen, const BreakerConfig *config,
		  int permits, TimestampTz *retry_at, FenceToken *token)
{
	char		lease_key[FENCE_MAX_KEY_LEN + 1];
	char		owner[FENCE_MAX_OWNER_LEN + 1];
	FenceLeaseRequest req;
	FenceLeaseGrant grant;
	BreakerDecision decision;

	probe_request(key, namelen, config, permits, lease_key, owner, &req);
	FenceLeaseAcquire(&req, &grant);
	decision = record_probe(key, config, permits, &grant, retry_at);
	if (decision == DECIDE_PROBE)
		*token = grant.token;

	/* Granted but not needed any more: give the permit straight back. */
	if (grant.outcome == FENCE_ACQUIRE_GRANTED && decision != DECIDE_PROBE)
		(void) FenceLeaseRelease(lease_key, req.keylen, grant.token);
	return decision;
}

/* fence_breaker_allow's one row: what to do, the probe token, the retry. */
static void
allow_result(FunctionCallInfo fcinfo, BreakerDecision decision,
			 FenceToken token, TimestampTz retry_at)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[3];
	bool		nulls[3] = {0};

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
}

PG_FUNCTION_INFO_V1(fence_breaker_allow);
Datum
fence_breaker_allow(PG_FUNCTION_ARGS)
{
	BreakerKey	key;
	int			namelen;
	BreakerConfig config;
	BreakerDecision decision;
	TimestampTz retry_at = 0;
	FenceToken	token = 0;
	FenceToken	seen[BREAKER_MAX_TRIALS];
	int			nseen = 0;
	int			permits = 0;

	FenceRequirePreload();
	get_name(fcinfo, 0, &key, &namelen);
	get_config(fcinfo, &config);

	/*
	 * One row, returned as a set (RETURNS TABLE).  The result set is made
	 * before anything changes, so that little is left to fail between
	 * granting a probe and handing its token to the caller.
	 */
	InitMaterializedSRF(fcinfo, 0);

	decision = allow_first_look(&key, namelen, &config, &retry_at, &permits,
								seen, &nseen);
	if (decision == DECIDE_TRY_PROBE && nseen > 0)
		decision = recheck_trials(&key, namelen, seen, nseen, &retry_at);
	if (decision == DECIDE_TRY_PROBE)
		decision = try_probe(&key, namelen, &config, permits, &retry_at,
							 &token);

	send_events(&key, namelen);
	allow_result(fcinfo, decision, token, retry_at);
	return (Datum) 0;
}

typedef enum ReportOutcome
{
	REPORT_COUNTED,
	REPORT_NOT_COUNTED,			/* a plain call's late outcome, open breaker */
	REPORT_STALE_PROBE			/* a probe token that is not the current one */
} ReportOutcome;

/*
 * fence_breaker_report's outcome and probe token (0: a plain call's
 * report), and its duration in microseconds (-1: not given).
 */
static void
report_args(FunctionCallInfo fcinfo, bool *success, FenceToken *token,
			int64 *duration)
{
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("breaker call outcome must not be NULL"),
				 errhint("Pass true when the call succeeded, false when it failed.")));
	*success = PG_GETARG_BOOL(1);
	*token = 0;
	if (!PG_ARGISNULL(2))
	{
		*token = PG_GETARG_FENCE_TOKEN(2);
		if (*token <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("probe token must be greater than zero"),
					 errhint("Pass the probe_token that fence_breaker_allow() returned, or NULL after a plain call.")));
	}
	*duration = -1;
	/* 1.1's SQL function, before ALTER EXTENSION UPDATE, has no duration. */
	if (PG_NARGS() > 3 && !PG_ARGISNULL(3))
		*duration = get_duration(fcinfo, 3, "duration", true);
}

/*
 * Under the breaker lock: the report of trial "token".  Only a trial the
 * breaker waits for may move it.  A trial whose permit ran out and was
 * taken over, a trial from before a reset, or one that already reported,
 * is stale.  (A trial whose permit ran out with nobody taking over is still
 * the breaker's trial: its news is the freshest there is.)  The permits to
 * free once the lock is released are added to release[*nrelease].
 */
static ReportOutcome
record_trial_report(Breaker *b, FenceToken token, bool success, bool slow,
					TimestampTz now, FenceToken *release, int *nrelease)
{
	int			slot = (b->state == BREAKER_HALF_OPEN) ? find_trial(b, token) : -1;

	if (slot < 0)
		return REPORT_STALE_PROBE;
	release[(*nrelease)++] = token;
	b->trials[slot].token = 0;
	/* A probe that succeeds slowly has not shown the dependency well. */
	if (success && !slow)
	{
		/* Enough trials succeeded: closed.  (Expired ones are given up.) */
		if (++b->trials_ok >= b->trials_needed)
		{
			*nrelease += take_trials(b, release + *nrelease);
			change_state(b, BREAKER_CLOSED, now, "probe_succeeded");
			b->open_period = 0;
			clear_window(b);
		}
	}
	else
	{
		int64		period;

		/* One failed trial reopens it: the others' news is moot. */
		*nrelease += take_trials(b, release + *nrelease);
		if (pg_mul_s64_overflow(Max(b->open_period, b->config.open_for),
								2, &period))
			period = b->config.max_open_for;
		open_breaker(b, now, period,
					 success ? "probe_slow" : "probe_failed");
	}
	return REPORT_COUNTED;
}

/* A stale probe's report changed nothing: say so, and why it may be. */
static void
notice_stale_report(const BreakerKey *key, int namelen, FenceToken token,
					uint8 state, FenceToken current_probe)
{
	if (current_probe != 0)
		ereport(NOTICE,
				(errmsg("stale probe report for breaker \"%s\" ignored",
						pnstrdup(key->name, namelen)),
				 errdetail("The report carries probe token %lld; the breaker is %s and waits for probe token %lld.",
						   (long long) token, state_name(state),
						   (long long) current_probe),
				 errhint("The probe's lease ran out before it reported, and another caller probed since.")));
	else
		ereport(NOTICE,
				(errmsg("stale probe report for breaker \"%s\" ignored",
						pnstrdup(key->name, namelen)),
				 errdetail("The report carries probe token %lld; the breaker is %s and waits for no probe.",
						   (long long) token, state_name(state)),
				 errhint("The probe already reported, its lease ran out and another probe decided, or the breaker was reset.")));
}

PG_FUNCTION_INFO_V1(fence_breaker_report);
Datum
fence_breaker_report(PG_FUNCTION_ARGS)
{
	BreakerKey	key;
	int			namelen;
	bool		success;
	FenceToken	token;
	FenceToken	current_probe = 0;
	FenceToken	release[BREAKER_MAX_TRIALS];
	int			nrelease = 0;
	int			latest;
	BreakerConfig defaults;
	Breaker    *b;
	ReportOutcome outcome = REPORT_COUNTED;
	uint8		state;
	TimestampTz now;
	int64		duration;
	bool		slow;

	FenceRequirePreload();
	get_name(fcinfo, 0, &key, &namelen);
	report_args(fcinfo, &success, &token, &duration);
	default_config(&defaults);

	b = lock_breaker_as(&key, namelen, &defaults, &now, RIGHT_CALL);
	latest = latest_trial(b);
	current_probe = (latest >= 0) ? b->trials[latest].token : 0;
	slow = b->config.slow_call > 0 && duration >= b->config.slow_call;

	if (token != 0)
		outcome = record_trial_report(b, token, success, slow, now, release,
									  &nrelease);
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
		notice_stale_report(&key, namelen, token, state, current_probe);

	PG_RETURN_TEXT_P(cstring_to_text(state_name(state)));
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

/*
 * A copy of every breaker, palloc'd, and how many there are (*n).  Copied
 * under the lock; names and privileges are looked up without it.  The copy
 * is sized from an unlocked look at the count, and taken again in the rare
 * case that breakers were added meanwhile (no palloc with the lock held).
 */
static Breaker *
copy_breakers(int *n)
{
	Breaker    *copy;
	HASH_SEQ_STATUS seq;
	Breaker    *b;

	*n = 0;
	for (;;)
	{
		int			room = breaker_shared->count + 16;

		copy = palloc(sizeof(Breaker) * room);
		LWLockAcquire(breaker_shared->lock, LW_SHARED);
		if (breaker_shared->count <= room)
		{
			hash_seq_init(&seq, breaker_hash);
			while ((b = hash_seq_search(&seq)) != NULL)
				copy[(*n)++] = *b;
			LWLockRelease(breaker_shared->lock);
			return copy;
		}
		LWLockRelease(breaker_shared->lock);
		pfree(copy);
		CHECK_FOR_INTERRUPTS();
	}
}

/* The fence_breakers row of breaker copy c, at lease-clock time now. */
static void
breaker_row(const Breaker *c, TimestampTz now, Datum *values, bool *nulls)
{
	char	   *dbname = get_database_name(c->key.dbid);
	bool		visible;
	int			latest;

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
}

PG_FUNCTION_INFO_V1(fence_breakers_all);
Datum
fence_breakers_all(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Breaker    *copy;
	int			n;
	TimestampTz now;

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

	copy = copy_breakers(&n);
	for (int i = 0; i < n; i++)
	{
		Datum		values[BREAKER_VIEW_COLS];
		bool		nulls[BREAKER_VIEW_COLS] = {0};

		CHECK_FOR_INTERRUPTS();
		breaker_row(&copy[i], now, values, nulls);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(copy);
	return (Datum) 0;
}
