/*-------------------------------------------------------------------------
 *
 * guc.c
 *		The fence.* settings.  The "fence" prefix is reserved, so a typo such
 *		as fence.max_lease is reported instead of silently accepted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "fence.h"

int			fence_max_leases = 65536;
int			fence_max_ttl_s = 86400;
bool		fence_test_clock = false;
int			fence_restart_grace_ms = 0;
int			fence_lock_delay_ms = 0;
int			fence_max_lock_delay_ms = 60000;
int			fence_max_databases = 1024;
int			fence_max_leases_per_role = -1;
bool		fence_external_tokens = false;
bool		fence_log_lease_waits = false;
int			fence_max_breakers = 1024;
char	   *fence_carried_tokens = NULL;
static const FenceCarried *fence_carried = NULL;
static LocalTransactionId carried_lxid = InvalidLocalTransactionId;
static Oid	carried_userid = InvalidOid;

static bool check_carried_tokens(char **newval, void **extra, GucSource source);
static void assign_carried_tokens(const char *newval, void *extra);

/*
 * fence.carried_tokens: the token in effect of a Citus coordinator's
 * session, as its worker nodes receive it (citus.c sets and sends it;
 * session.c reads it where the session has no token of its own).  The value
 * is a list of items, each ended by ';':
 *
 *	U<token>				the latest fence_use_token() of the transaction
 *	u<token>				the latest fence_use_token() without a lease name
 *	k<token>,<len>:<key>	the latest fence_use_token(token, key) of a key
 *	l<token>,<len>:<key>	a lease the session remembers, and its token
 *
 * Lease names are any text, so they go by length.  The parsed list is the
 * setting's "extra": PostgreSQL keeps it with the value, and restores both
 * at ROLLBACK TO SAVEPOINT and at transaction end, so what the trigger reads
 * is always the value in effect, at the cost of a pointer read per row.
 *
 * It counts only as Citus propagates it: with Citus loaded, for the
 * transaction that set it (Citus sends SET LOCAL in each remote
 * transaction) and the role that set it.  A value set in an earlier
 * transaction, one given as a default (ALTER ROLE or DATABASE ... SET,
 * PGOPTIONS: refused by the check), or one that a role set before a SECURITY
 * DEFINER function switched to its owner, is not in effect: otherwise a
 * database owner could give every tokenless write of other roles, an
 * operator's manual fix, a token of their choosing.
 */

/* Append one item to a carried_tokens value. */
void
FenceCarriedAppend(StringInfo buf, char kind, FenceToken token,
				   const char *key, int keylen)
{
	appendStringInfo(buf, "%c%lld", kind, (long long) token);
	if (key != NULL)
	{
		appendStringInfo(buf, ",%d:", keylen);
		appendBinaryStringInfo(buf, key, keylen);
	}
	appendStringInfoChar(buf, ';');
}

/* A decimal number at *p, at most max; advances *p.  False if none. */
static bool
parse_number(const char **p, int64 max, int64 *result)
{
	int64		v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9')
	{
		if (v > (max - (*s - '0')) / 10)
			return false;
		v = v * 10 + (*s - '0');
		s++;
	}
	*p = s;
	*result = v;
	return true;
}

static bool
check_carried_tokens(char **newval, void **extra, GucSource source)
{
	const char *p = *newval;
	int			n = 0;
	Size		keybytes = 0;
	FenceCarried *carried;
	char	   *keys;

	if (p == NULL || *p == '\0')
		return true;			/* nothing carried: extra stays NULL */
	if (source != PGC_S_SESSION)
	{
		GUC_check_errdetail("fence sets fence.carried_tokens on a Citus coordinator's worker nodes, with SET LOCAL in each transaction; it cannot be a default.");
		return false;
	}

	/* First pass: check the syntax, and count. */
	while (*p != '\0')
	{
		char		kind = *p++;
		int64		v;

		if (kind != 'U' && kind != 'u' && kind != 'k' && kind != 'l')
			goto bad;
		if (!parse_number(&p, PG_INT64_MAX, &v) || v == 0)
			goto bad;			/* 0 is no token (see fence_use_token) */
		if (kind == 'k' || kind == 'l')
		{
			if (*p++ != ',' || !parse_number(&p, FENCE_MAX_KEY_LEN, &v) ||
				v < 1 || *p++ != ':' || strnlen(p, v) < (size_t) v)
				goto bad;
			p += v;
			keybytes += v;
		}
		if (*p++ != ';')
			goto bad;
		n++;
	}

#if PG_VERSION_NUM >= 160000
	carried = guc_malloc(LOG, offsetof(FenceCarried, items) +
						 n * sizeof(FenceCarriedItem) + keybytes);
#else
	carried = malloc(offsetof(FenceCarried, items) +
					 n * sizeof(FenceCarriedItem) + keybytes);
#endif
	if (carried == NULL)
		return false;
	keys = (char *) &carried->items[n];

	/* Second pass: fill it in. */
	carried->n = n;
	p = *newval;
	for (int i = 0; i < n; i++)
	{
		FenceCarriedItem *item = &carried->items[i];
		int64		v = 0;

		item->kind = *p++;
		(void) parse_number(&p, PG_INT64_MAX, &v);
		item->token = (FenceToken) v;
		item->key = NULL;
		item->keylen = 0;
		if (item->kind == 'k' || item->kind == 'l')
		{
			p++;
			(void) parse_number(&p, FENCE_MAX_KEY_LEN, &v);
			p++;
			memcpy(keys, p, v);
			item->key = keys;
			item->keylen = (int) v;
			keys += v;
			p += v;
		}
		p++;
	}
	*extra = carried;
	return true;

bad:
	GUC_check_errdetail("The value is set by fence on a Citus coordinator, as a list of tokens and lease names.");
	return false;
}

static LocalTransactionId
current_lxid(void)
{
	if (MyProc == NULL)
		return InvalidLocalTransactionId;
#if PG_VERSION_NUM >= 170000
	return MyProc->vxid.lxid;
#else
	return MyProc->lxid;
#endif
}

/* Citus's library is loaded (its settings are no placeholders). */
static bool
citus_library_loaded(void)
{
	return GetConfigOption("citus.propagate_set_commands", true, false) != NULL &&
		(GetConfigOptionFlags("citus.propagate_set_commands", true) &
		 GUC_CUSTOM_PLACEHOLDER) == 0;
}

static void
assign_carried_tokens(const char *newval, void *extra)
{
	fence_carried = (const FenceCarried *) extra;
	carried_lxid = InvalidLocalTransactionId;
	carried_userid = InvalidOid;
	if (fence_carried != NULL && citus_library_loaded())
	{
		carried_lxid = current_lxid();
		carried_userid = GetUserId();
	}
}

/*
 * The carried token in effect, if it counts now (see above): set in this
 * transaction, by the current user, with Citus loaded.  NULL otherwise.
 */
const FenceCarried *
FenceCarriedInEffect(void)
{
	if (fence_carried == NULL || carried_lxid == InvalidLocalTransactionId ||
		carried_lxid != current_lxid() || carried_userid != GetUserId())
		return NULL;
	return fence_carried;
}

void
FenceGucInit(void)
{
	/*
	 * PostgreSQL accepts new PGC_POSTMASTER settings only from a library in
	 * shared_preload_libraries: loaded later, defining one is FATAL, which
	 * would make the type and the trigger unusable without preloading.  A
	 * library loaded on demand has no lease table and no virtual clock
	 * anyway, so it shows those two settings as fixed (PGC_INTERNAL).
	 */
	GucContext	startup_context = process_shared_preload_libraries_in_progress ?
		PGC_POSTMASTER : PGC_INTERNAL;

	DefineCustomIntVariable("fence.max_leases",
							"Capacity of the shared lease table.",
							"Each slot takes about 300 bytes of shared memory.",
							&fence_max_leases,
							65536,
							16,
							16 * 1024 * 1024,
							startup_context,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("fence.max_ttl",
							"Longest lease TTL a caller may ask for.",
							NULL,
							&fence_max_ttl_s,
							86400,
							1,
							INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("fence.test_clock",
							 "Allows the virtual lease clock (fence_set_clock, fence_advance_clock).",
							 "For tests that replay timelines; never turn it on in production.",
							 &fence_test_clock,
							 false,
							 startup_context,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("fence.restart_grace",
							"After server start or promotion, grant no lease for this long.",
							"Covers leases that were lost with shared memory, or that the old primary held.",
							&fence_restart_grace_ms,
							0,
							0,
							INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("fence.lock_delay",
							"After a lease taken with this setting ends without a release, grant its key to nobody for this long.",
							"A lease ends without a release when it expires or when its session ends while holding it.",
							&fence_lock_delay_ms,
							0,
							0,
							INT_MAX,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	/*
	 * A lease taken with a lock-delay keeps its key, and its slot of the
	 * lease table, for that long after its session is gone.  Any role may
	 * set fence.lock_delay, so the most it may be is an administrator's
	 * setting (per role with ALTER ROLE ... SET), checked when a lease is
	 * taken rather than by fence.lock_delay's own check hook: a check that
	 * read another setting would depend on the order the two are set in.
	 */
	DefineCustomIntVariable("fence.max_lock_delay",
							"Longest fence.lock_delay a lease may be taken with.",
							"A lease taken with a lock-delay holds its key and its lease table slot for that long after it ends unreleased.",
							&fence_max_lock_delay_ms,
							60000,
							0,
							INT_MAX,
							PGC_SUSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("fence.max_databases",
							"Number of databases that can use fence leases at the same time.",
							"A dropped database's slot is reused by the next database that needs one.",
							&fence_max_databases,
							1024,
							1,
							65536,
							startup_context,
							0,
							NULL, NULL, NULL);

	/*
	 * Superuser-settable, so that an administrator can give one role a
	 * different limit (ALTER ROLE ... SET) and a role cannot raise its own.
	 * The default, -1, follows fence.max_leases (FenceMaxLeasesPerRole): a
	 * fixed number would cap a large table but not a small one.
	 */
	DefineCustomIntVariable("fence.max_leases_per_role",
							"Most detached or lock-delayed leases one role may hold at a time (0: no limit; -1: 1000, or a quarter of fence.max_leases if less).",
							"Detached leases, and leases taken with fence.lock_delay, outlive their sessions; the limit keeps one role from filling the lease table.  Superusers are not limited.",
							&fence_max_leases_per_role,
							-1,
							-1,
							INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("fence.log_lease_waits",
							 "Logs a wait for a lease that lasts longer than deadlock_timeout, and its end.",
							 NULL,
							 &fence_log_lease_waits,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	/*
	 * Whether this database takes tokens its own counter never issued.  A
	 * superuser's decision, per database: the role that could turn it on
	 * could stamp rows with a number no holder has.  Without it, a database
	 * whose counter never issued a token refuses every token, so every
	 * storage database of a split deployment turns it on.
	 */
	DefineCustomBoolVariable("fence.external_tokens",
							 "Accepts fencing tokens above the highest this database's counter issued.",
							 "For a database whose fenced tables take tokens from leases on another server; without it, a database whose counter issued none refuses every token.",
							 &fence_external_tokens,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("fence.max_breakers",
							"Capacity of the shared circuit-breaker table.",
							"Each breaker takes about 232 bytes of shared memory.",
							&fence_max_breakers,
							1024,
							16,
							1024 * 1024,
							startup_context,
							0,
							NULL, NULL, NULL);

	/*
	 * Any role may set it, as any role may call fence_use_token(): it gives
	 * a session no token it could not give itself, and counts only where
	 * FenceCarriedInEffect() says.  Kept out of SHOW ALL and the sample
	 * file, since it is not a knob.
	 */
	DefineCustomStringVariable("fence.carried_tokens",
							   "The token in effect of a Citus coordinator's session, carried to the worker nodes.",
							   "Set by fence on the coordinator, for each distributed transaction; a fenced write on a worker uses it when its own session has no token.",
							   &fence_carried_tokens,
							   "",
							   PGC_USERSET,
							   GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE | GUC_DISALLOW_IN_FILE,
							   check_carried_tokens, assign_carried_tokens, NULL);

	MarkGUCPrefixReserved("fence");
}

/*
 * The number of detached leases one role may hold, fence.max_leases_per_role
 * resolved: 0 for no limit.  Its default, -1, is 1000, or a quarter of the
 * lease table when that is less, so that no single role can fill a table of
 * any size and every table leaves room for at least three other roles.
 */
int
FenceMaxLeasesPerRole(void)
{
	if (fence_max_leases_per_role >= 0)
		return fence_max_leases_per_role;
	return Min(1000, Max(fence_max_leases / 4, 1));
}
