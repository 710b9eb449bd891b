/*-------------------------------------------------------------------------
 *
 * breaker_args.c
 *		The breaker functions' arguments: names, counts, rates and durations,
 *		checked before anything is locked.
 *
 * Each function here reads one argument (or a few that go together) of a
 * breaker SQL function and ERRORs, clearly, on a bad one; none takes a
 * lock, so the SQL functions call them first.
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

void
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
int64
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
				 errdetail("The value given was %s.", interval_string(iv)),
				 errhint("Give at most %lld seconds.", (long long) INT_MAX)));
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

int32
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
void
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

void
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

/*
 * slow_call (NULL: slow calls are not counted) and slow_call_rate (NULL:
 * 1, every call of the window slow), which needs slow_call.
 */
void
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
Oid
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
