/*-------------------------------------------------------------------------
 *
 * trigger.h
 *		What the trigger's files share: a trigger's parsed arguments and its
 *		cache entry.  Included by protect.c, enforce.c, enforce_commit.c and
 *		enforce_cache.c only; the functions they offer each other are
 *		declared in fence.h, whose module list orders them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FENCE_TRIGGER_H
#define FENCE_TRIGGER_H

#include "access/attnum.h"
#include "fmgr.h"
#include "lib/ilist.h"

#include "fence.h"

/* What kind of column holds the fence. */
typedef enum FenceColType
{
	FENCE_COL_TOKEN,			/* fence_token */
	FENCE_COL_INT8,				/* bigint */
	FENCE_COL_INT4				/* integer */
} FenceColType;

/* One piece of a lease name: literal text, or a {column} of the row. */
typedef enum LeasePartKind
{
	LEASE_PART_LITERAL,
	LEASE_PART_INT2,			/* smallint column: formatted without fmgr */
	LEASE_PART_INT4,			/* integer column: likewise */
	LEASE_PART_INT8,			/* bigint column: likewise */
	LEASE_PART_TEXT,			/* text or varchar column: its bytes */
	LEASE_PART_DATE,			/* date: ISO, whatever DateStyle says */
	LEASE_PART_TIMESTAMP,		/* timestamp: likewise */
	LEASE_PART_TIMESTAMPTZ,		/* timestamptz: likewise, and in UTC */
	LEASE_PART_OTHER			/* a type whose output function depends on
								 * no setting (see placeholder_kind) */
} LeasePartKind;

typedef struct LeasePart
{
	LeasePartKind kind;
	const char *text;			/* literal text, or the column's name */
	int			len;			/* length of a literal */
	AttrNumber	attnum;			/* a placeholder's column */
	FmgrInfo	outfunc;		/* LEASE_PART_OTHER: output function */
} LeasePart;

/* What a fence_enforce trigger's arguments say, checked against its table. */
struct EnforceConfig
{
	const char *colname;		/* the fence column */
	AttrNumber	attnum;
	FenceColType coltype;
	bool		skip;			/* on_stale=skip (else error) */
	bool		strict;
	bool		require_token;
	const char *lease;			/* lease name as written, or NULL */
	int			nparts;			/* lease name pieces */
	LeasePart  *parts;
	bool		lease_has_columns;	/* any {column} placeholders? */
	const char *static_key;		/* lease name without placeholders */
	int			static_keylen;
};

/* The cache entry of one trigger (one per partition for a partitioned table). */
struct EnforceTrigger
{
	Oid			tgoid;			/* hash key: pg_trigger OID */
	bool		valid;			/* false after a relcache invalidation */
	bool		linked;			/* in its table's list (rel_node) */
	dlist_node	rel_node;
	Oid			relid;
	MemoryContext cxt;			/* everything below lives here */
	EnforceConfig cfg;
	Oid			family;			/* root trigger of its protection (MoveMemo) */
	int			natts;			/* tuple width the arrays below fit */
	Datum	   *values;			/* scratch space for stamping a row */
	bool	   *isnull;
	uint64	   *colhash;		/* per column, a hash of its name */
};

/* The trigger name fence_protect() uses: sorts after other BEFORE triggers. */
#define FENCE_TRIGGER_NAME "zz_fence_enforce"


#endif							/* FENCE_TRIGGER_H */
