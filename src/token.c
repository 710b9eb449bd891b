/*-------------------------------------------------------------------------
 *
 * token.c
 *		The fence_token type: a non-negative 64-bit fencing token, shown as
 *		plain decimal text.  0 means "never fenced".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "fence.h"

/* A token from an integer: negative values are an error. */
FenceToken
FenceTokenFromInt64(int64 value)
{
	if (value < 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("fencing token cannot be negative: " INT64_FORMAT, value),
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

PG_FUNCTION_INFO_V1(fence_token_in);
Datum
fence_token_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	const char *p = str;
	uint64		value = 0;

	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (*p < '0' || *p > '9')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type fence_token: \"%s\"", str),
				 errhint("A fencing token is a whole number from 0 to 9223372036854775807.")));
	for (; *p >= '0' && *p <= '9'; p++)
	{
		value = value * 10 + (*p - '0');
		if (value > (uint64) PG_INT64_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("value \"%s\" is out of range for type fence_token", str),
					 errhint("A fencing token is a whole number from 0 to 9223372036854775807.")));
	}
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (*p != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type fence_token: \"%s\"", str),
				 errhint("A fencing token is a whole number from 0 to 9223372036854775807.")));
	PG_RETURN_FENCE_TOKEN((FenceToken) value);
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
