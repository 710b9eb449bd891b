/*-------------------------------------------------------------------------
 *
 * extension.c
 *		What every module may need to know about the extension as a whole:
 *		whether the library was loaded at server start, and the schema the
 *		extension was created in.
 *
 * This is the bottom of the module list in fence.h: it calls no other
 * module, so any module may call it.  init.c sets fence_preloaded from
 * _PG_init; nothing else writes it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "utils/fmgroids.h"

#include "fence.h"

/*
 * True in the postmaster and in every process it starts when the library
 * is in shared_preload_libraries: only then does the shared lease table
 * exist.
 */
bool		fence_preloaded = false;

/*
 * Lease functions call this first.  Without preloading, the fence_token
 * type and the fence_enforce() trigger work; leases cannot.
 */
void
FenceRequirePreload(void)
{
	if (!fence_preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("fence leases are not available"),
				 errdetail("The fence library was not loaded at server start, so the shared lease table does not exist."),
				 errhint("Add fence to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/*
 * The schema fence was created in, or InvalidOid if it is not installed in
 * this database.  PostgreSQL 15 does not export get_extension_schema(), so
 * read pg_extension here the way it does.
 */
Oid
FenceExtensionSchema(void)
{
	Oid			extoid = get_extension_oid("fence", true);
	Oid			result = InvalidOid;
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;

	if (!OidIsValid(extoid))
		return InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		result = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}
