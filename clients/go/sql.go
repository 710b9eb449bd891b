package pgfence

import (
	"fmt"
	"time"
)

// The SQL pgfence sends.  Keys travel as text, tokens as bigint
// (fence_token has an implicit cast from int8, and ::bigint reads one back
// as an int64), durations as interval text.  A grant also returns the
// server's start time: a restart ends every lease, which the watchdog
// checks when it reconnects.
const (
	sqlTryLease = "SELECT fence_try_lease($1::text, $2::text::interval, owner => $3::text)::bigint, " +
		"pg_postmaster_start_time()"
	sqlLease = "SELECT fence_lease($1::text, $2::text::interval, $3::text::interval, owner => $4::text)::bigint, " +
		"pg_postmaster_start_time()"
	sqlNoLockTimeout = "SET lock_timeout = 0"
	// A connection outside the pool is made with the pool's configuration, but
	// none of its timeouts may cut the watchdog's wait short (a
	// statement_timeout would make it reconnect in a loop).  Each is set
	// only where it is not 0 already: a session setting made through a
	// transaction pooler would stay with the server connection.
	sqlOwnSettings = "SELECT " +
		"CASE WHEN current_setting('statement_timeout') <> '0' THEN set_config('statement_timeout', '0', false) END, " +
		"CASE WHEN current_setting('lock_timeout') <> '0' THEN set_config('lock_timeout', '0', false) END, " +
		"CASE WHEN current_setting('idle_in_transaction_session_timeout') <> '0' " +
		"THEN set_config('idle_in_transaction_session_timeout', '0', false) END"
	sqlRenew    = "SELECT fence_renew($1::text, $2::bigint, $3::text::interval)"
	sqlRelease  = "SELECT fence_release($1::text, $2::bigint)"
	sqlStatus   = "SELECT fence_lease_status($1::text, $2::bigint), pg_postmaster_start_time()"
	sqlWaitEnd  = "SELECT fence_wait_lease_end($1::text, $2::bigint, $3::text::interval)"
	sqlUseToken = "SELECT fence_use_token($1::bigint, $2::text)"
	// What the server has, asked once per Fence (both are fence 1.3's):
	// fence_wait_leases_end, for one watchdog of all the leases, and
	// fence_forget_token, for a grant on a pooled connection.  The second
	// is looked up in pg_proc, as it has a text and a bigint form, which
	// makes to_regproc answer NULL.
	sqlCapabilities = "SELECT to_regproc('fence_wait_leases_end') IS NOT NULL, " +
		"EXISTS (SELECT FROM pg_catalog.pg_proc WHERE proname = 'fence_forget_token' " +
		"AND pg_catalog.pg_function_is_visible(oid))"
	// A grant on a pooled connection, in one statement: the session that
	// takes the lease forgets its token at once (NULL, not granted, passes
	// through), so the connection goes back to the pool carrying none.
	sqlPooledTryLease = "SELECT t::bigint, pg_postmaster_start_time() FROM " +
		"fence_forget_token($1::text, fence_try_lease($1::text, $2::text::interval, owner => $3::text)) AS t"
	sqlWaitLeasesEnd = "SELECT key, token::bigint, status FROM fence_wait_leases_end($1::text[], $2::bigint[], $3::text::interval)"
	sqlServerStarted = "SELECT pg_postmaster_start_time()"
	// What this owner holds of the key after a grant whose answer never
	// came back (the wait or the statement was interrupted): released by
	// its token.  fence_leases_of (fence 1.3, as fence_forget_token is)
	// reads that key's leases only; fence_leases, for a server of fence
	// 1.2, reads every lease of the server.
	sqlReleaseOwnedOfKey = "SELECT count(fence_release(l.key, l.token)) FROM fence_leases_of($1::text) l " +
		"WHERE l.owner = $2::text"
	sqlReleaseOwned = "SELECT count(fence_release(l.key, l.token)) FROM fence_leases l " +
		"WHERE l.database = current_database() AND l.key = $1::text AND l.owner = $2::text"
)

// How long the watchdog's fence_wait_lease_end sleeps before it asks again:
// an answer of NULL (still held) also proves the connection is alive.
const watchdogPoll = 30 * time.Second

func interval(d time.Duration) string {
	return fmt.Sprintf("%d microseconds", d.Microseconds())
}

// serverHow: what fence_wait_lease_end or fence_lease_status says, as a
// How.  A release this process did not do is Broken to it.
func serverHow(status string) How {
	switch status {
	case "superseded":
		return Superseded
	case "released":
		return Broken
	}
	return Expired
}
