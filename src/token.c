/*-------------------------------------------------------------------------
 *
 * token.c
 *		The fence_token type: a non-negative 64-bit fencing token, shown as
 *		plain decimal text.  0 means "never fenced".
 *
 * A token is stored like an int8 (8 bytes, by value) and sent like one on
 * the wire, but it is a type of its own so that it can only be compared,
 * never computed with, and so that a negative value can never get in.  It
 * compares with int8, int4 and int2 on either side, so an integer parameter
 * of any width works against a fence_token column without a cast
 * (src/sql/token.sql has the operators, operator classes, casts and
 * aggregates).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "catalog/pg_type.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/sortsupport.h"
#include "utils/syscache.h"

#include "fence.h"

/* A token from an integer: negative values are an error. */
FenceToken
FenceTokenFromInt64(int64 value)
{
	if (value < 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("fencing token cannot be negative"),
				 errdetail("The value is %lld.", (long long) value),
				 errhint("Fencing tokens are 0 or greater; 0 means \"never fenced\".")));
	return (FenceToken) value;
}

/* The OID of fence_token in this database, or InvalidOid. */
Oid
FenceTokenTypeOid(void)
{
	Oid			nspoid = FenceExtensionSchema();

	if (!OidIsValid(nspoid))
		return InvalidOid;
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
						   CStringGetDatum("fence_token"),
						   ObjectIdGetDatum(nspoid));
}

/*
 * Text input.  The accepted forms are int8's (surrounding white space, an
 * optional sign, decimal digits) restricted to 0 .. 2^63-1: "+5" and "-0"
 * are fine, "-1" is out of range, and anything else is a syntax error.  The
 * overflow test comes before each step, so no digit string can wrap around.
 */
PG_FUNCTION_INFO_V1(fence_token_in);
Datum
fence_token_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	const char *p = str;
	bool		negative = false;
	bool		any_digit = false;
	uint64		magnitude = 0;

	while (isspace((unsigned char) *p))
		p++;
	if (*p == '+' || *p == '-')
		negative = (*p++ == '-');
	for (; isdigit((unsigned char) *p); p++)
	{
		int			digit = *p - '0';

		if (magnitude > ((uint64) PG_INT64_MAX - digit) / 10)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("value \"%s\" is out of range for type fence_token", str),
					 errhint("A fencing token is a whole number from 0 to 9223372036854775807.")));
		magnitude = magnitude * 10 + digit;
		any_digit = true;
	}
	while (isspace((unsigned char) *p))
		p++;
	if (!any_digit || *p != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type fence_token: \"%s\"", str),
				 errhint("A fencing token is a whole number from 0 to 9223372036854775807.")));
	if (negative && magnitude != 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("value \"%s\" is out of range for type fence_token", str),
				 errhint("A fencing token is a whole number from 0 to 9223372036854775807.")));
	PG_RETURN_FENCE_TOKEN((FenceToken) magnitude);
}

PG_FUNCTION_INFO_V1(fence_token_out);
Datum
fence_token_out(PG_FUNCTION_ARGS)
{
	FenceToken	token = PG_GETARG_FENCE_TOKEN(0);
	char		buf[MAXINT8LEN + 1];

	pg_lltoa(token, buf);
	PG_RETURN_CSTRING(pstrdup(buf));
}

/*
 * Binary input: exactly 8 bytes, big-endian, as int8 sends them, and not
 * negative.  The callers (COPY, Bind, array_recv, record_recv) hand us a
 * buffer holding just this value, so its length must be 8.
 */
PG_FUNCTION_INFO_V1(fence_token_recv);
Datum
fence_token_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			nbytes = buf->len - buf->cursor;

	if (nbytes != (int) sizeof(int64))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid binary data for type fence_token"),
				 errdetail("A fence_token is sent as 8 bytes, not %d.", nbytes)));
	PG_RETURN_FENCE_TOKEN(FenceTokenFromInt64(pq_getmsgint64(buf)));
}

/* Binary output: 8 bytes, big-endian, the same as int8. */
PG_FUNCTION_INFO_V1(fence_token_send);
Datum
fence_token_send(PG_FUNCTION_ARGS)
{
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, PG_GETARG_FENCE_TOKEN(0));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* The implicit casts from int8, int4 and int2. */
PG_FUNCTION_INFO_V1(fence_token_from_int8);
Datum
fence_token_from_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_FENCE_TOKEN(FenceTokenFromInt64(PG_GETARG_INT64(0)));
}

PG_FUNCTION_INFO_V1(fence_token_from_int4);
Datum
fence_token_from_int4(PG_FUNCTION_ARGS)
{
	PG_RETURN_FENCE_TOKEN(FenceTokenFromInt64((int64) PG_GETARG_INT32(0)));
}

PG_FUNCTION_INFO_V1(fence_token_from_int2);
Datum
fence_token_from_int2(PG_FUNCTION_ARGS)
{
	PG_RETURN_FENCE_TOKEN(FenceTokenFromInt64((int64) PG_GETARG_INT16(0)));
}

/*
 * Comparisons.  Every argument is widened to int64 and compared signed: a
 * token is never negative, so a negative integer comes out below every
 * token, which is the right answer (a cast to fence_token would instead
 * raise an error).  One macro makes the six operators and the btree
 * comparison function for one pair of argument types.
 */
#define ARG_TOKEN(n)	((int64) PG_GETARG_FENCE_TOKEN(n))
#define ARG_INT8(n)		PG_GETARG_INT64(n)
#define ARG_INT4(n)		((int64) PG_GETARG_INT32(n))
#define ARG_INT2(n)		((int64) PG_GETARG_INT16(n))

#define FENCE_COMPARISON(name, op, ARG_LEFT, ARG_RIGHT) \
PG_FUNCTION_INFO_V1(name); \
Datum \
name(PG_FUNCTION_ARGS) \
{ \
	PG_RETURN_BOOL(ARG_LEFT(0) op ARG_RIGHT(1)); \
}

#define FENCE_COMPARISONS(prefix, ARG_LEFT, ARG_RIGHT) \
FENCE_COMPARISON(prefix##_eq, ==, ARG_LEFT, ARG_RIGHT) \
FENCE_COMPARISON(prefix##_ne, !=, ARG_LEFT, ARG_RIGHT) \
FENCE_COMPARISON(prefix##_lt, <, ARG_LEFT, ARG_RIGHT) \
FENCE_COMPARISON(prefix##_le, <=, ARG_LEFT, ARG_RIGHT) \
FENCE_COMPARISON(prefix##_gt, >, ARG_LEFT, ARG_RIGHT) \
FENCE_COMPARISON(prefix##_ge, >=, ARG_LEFT, ARG_RIGHT) \
PG_FUNCTION_INFO_V1(prefix##_cmp); \
Datum \
prefix##_cmp(PG_FUNCTION_ARGS) \
{ \
	int64		left = ARG_LEFT(0); \
	int64		right = ARG_RIGHT(1); \
\
	PG_RETURN_INT32((left > right) - (left < right)); \
}

FENCE_COMPARISONS(fence_token, ARG_TOKEN, ARG_TOKEN)
FENCE_COMPARISONS(fence_token_int8, ARG_TOKEN, ARG_INT8)
FENCE_COMPARISONS(int8_fence_token, ARG_INT8, ARG_TOKEN)
FENCE_COMPARISONS(fence_token_int4, ARG_TOKEN, ARG_INT4)
FENCE_COMPARISONS(int4_fence_token, ARG_INT4, ARG_TOKEN)
FENCE_COMPARISONS(fence_token_int2, ARG_TOKEN, ARG_INT2)
FENCE_COMPARISONS(int2_fence_token, ARG_INT2, ARG_TOKEN)

#if SIZEOF_DATUM < 8
static int
fence_token_fastcmp(Datum x, Datum y, SortSupport ssup)
{
	FenceToken	a = DatumGetFenceToken(x);
	FenceToken	b = DatumGetFenceToken(y);

	return (a > b) - (a < b);
}
#endif

/* Sort support: PostgreSQL 15 sorts signed 8-byte datums fastest itself. */
PG_FUNCTION_INFO_V1(fence_token_sortsupport);
Datum
fence_token_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

#if SIZEOF_DATUM >= 8
	ssup->comparator = ssup_datum_signed_cmp;
#else
	ssup->comparator = fence_token_fastcmp;
#endif
	PG_RETURN_VOID();
}

/*
 * Hashing is int8's, so that a token hashes like the equal int8 (and, by
 * int8's own design, like the equal int4): the hash operator family can then
 * hold the cross-type = operators, for hash joins and hash indexes with an
 * integer on the other side.
 */
PG_FUNCTION_INFO_V1(fence_token_hash);
Datum
fence_token_hash(PG_FUNCTION_ARGS)
{
	return DirectFunctionCall1(hashint8, PG_GETARG_DATUM(0));
}

PG_FUNCTION_INFO_V1(fence_token_hash_extended);
Datum
fence_token_hash_extended(PG_FUNCTION_ARGS)
{
	return DirectFunctionCall2(hashint8extended,
							   PG_GETARG_DATUM(0), PG_GETARG_DATUM(1));
}

/* The transition functions of min() and max(). */
PG_FUNCTION_INFO_V1(fence_token_smaller);
Datum
fence_token_smaller(PG_FUNCTION_ARGS)
{
	FenceToken	a = PG_GETARG_FENCE_TOKEN(0);
	FenceToken	b = PG_GETARG_FENCE_TOKEN(1);

	PG_RETURN_FENCE_TOKEN(a < b ? a : b);
}

PG_FUNCTION_INFO_V1(fence_token_larger);
Datum
fence_token_larger(PG_FUNCTION_ARGS)
{
	FenceToken	a = PG_GETARG_FENCE_TOKEN(0);
	FenceToken	b = PG_GETARG_FENCE_TOKEN(1);

	PG_RETURN_FENCE_TOKEN(a > b ? a : b);
}
