/*-------------------------------------------------------------------------
 *
 * breaker_state.c
 *		A breaker's state machine: the outcomes it counts, when it trips,
 *		its trials while half-open, and what it tells a caller.
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
 * Locks: every function here runs with the breaker lock held exclusively
 * (breaker.c's lock_breaker) and must not ERROR: no palloc, no catalog
 * access, no ereport.
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

TimestampTz
add_usecs(TimestampTz t, int64 usecs)
{
	TimestampTz result;

	if (pg_add_s64_overflow(t, usecs, &result) || !IS_VALID_TIMESTAMP(result))
		return DT_NOEND;
	return result;
}

int
window_failures(const Breaker *b)
{
	return pg_popcount64(b->window_bits);
}

/* The tokens of the trials recorded, into out; clears them.  How many. */
int
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
int
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
int
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
int
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

void
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
void
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

/* Under the lock: what to tell the caller now, with no probe taken. */
BreakerDecision
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
bool
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
