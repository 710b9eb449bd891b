/*-------------------------------------------------------------------------
 *
 * breaker_access.c
 *		Who may use and who may manage a breaker.
 *
 * Who may manage or use a breaker is checked against its owner (who
 * defined it first; an undefined breaker has none), manager role and
 * caller role, with the breaker lock released (a privilege check reads the
 * catalogs).
 *
 * Locks: lock_breaker_as copies a breaker's roles under the breaker lock,
 * releases it to check them, and takes it again; it returns with the lock
 * held, as lock_breaker does.
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
Breaker *
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
