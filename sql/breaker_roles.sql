-- Who may: a breaker's owner (who defined it first; asking makes none),
-- members of its manager role and superusers may define, force, clear and
-- reset it; with a caller role, only its members (and those) may ask it and
-- report to it.  Refusals are 42501 and change nothing.  The probe leases'
-- keys are reserved (42939).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
SELECT fence_set_clock('2024-05-03 09:00:00+00');
CREATE ROLE brk_owner;
CREATE ROLE brk_ops;
CREATE ROLE brk_app;
CREATE ROLE brk_other;
CREATE ROLE brk_member IN ROLE brk_app;
-- Every role may run the functions: the breaker's own rule is tested.
GRANT EXECUTE ON FUNCTION fence_breaker_define, fence_breaker_force, fence_breaker_unforce,
	fence_breaker_reset TO brk_owner, brk_ops, brk_app, brk_other, brk_member;
CREATE VIEW pg_temp.b AS
	SELECT breaker, state, defined, failure_threshold, manager_role, caller_role,
	       successes, failures
	  FROM fence_breakers WHERE database = current_database() AND breaker LIKE 'role:%';
GRANT SELECT ON pg_temp.b TO PUBLIC;

SET ROLE brk_owner;
SELECT fence_breaker_define('role:a', failure_threshold => 3,
                            manager_role => 'brk_ops', caller_role => 'brk_app');
RESET ROLE;
SELECT * FROM pg_temp.b;

-- Another role may neither use nor manage it.
\set VERBOSITY default
SET ROLE brk_other;
SELECT decision FROM fence_breaker_allow('role:a');
SELECT fence_breaker_report('role:a', false);
SELECT fence_breaker_force('role:a', 'open');
SELECT fence_breaker_unforce('role:a');
SELECT fence_breaker_define('role:a', failure_threshold => 1);
SELECT fence_breaker_reset('role:a');
RESET ROLE;
\set VERBOSITY terse
SELECT * FROM pg_temp.b;

-- Members of the caller role ask and report, but do not manage.
SET ROLE brk_member;
SELECT decision FROM fence_breaker_allow('role:a');
SELECT fence_breaker_report('role:a', true);
\set VERBOSITY default
SELECT fence_breaker_force('role:a', 'disabled');
\set VERBOSITY terse
RESET ROLE;

-- Members of the manager role manage it; the owner stays the owner.
SET ROLE brk_ops;
SELECT fence_breaker_force('role:a', 'open');
SELECT fence_breaker_unforce('role:a');
SELECT fence_breaker_define('role:a', failure_threshold => 2, manager_role => 'brk_ops',
                            caller_role => 'brk_app');
SELECT decision FROM fence_breaker_allow('role:a');	-- a manager may use it too
RESET ROLE;
SELECT * FROM pg_temp.b;
SET ROLE brk_owner;
SELECT fence_breaker_force('role:a', 'disabled');
SELECT fence_breaker_unforce('role:a');
RESET ROLE;

-- A definition without a caller role opens it to everyone again.
SELECT fence_breaker_define('role:a', failure_threshold => 2);
SET ROLE brk_other;
SELECT decision FROM fence_breaker_allow('role:a');
SELECT fence_breaker_report('role:a', true);
RESET ROLE;
SELECT * FROM pg_temp.b;

-- Asking makes no owner.  A breaker nobody defined may be managed by every
-- role allowed to run the management functions (EXECUTE, which is revoked
-- from PUBLIC); the first definition makes its definer the owner.  So the
-- operators' role may take over a breaker that the workers made by asking.
SET ROLE brk_app;
SELECT decision FROM fence_breaker_allow('role:b');
SELECT fence_breaker_report('role:b', false);
RESET ROLE;
SET ROLE brk_ops;
SELECT fence_breaker_force('role:b', 'open');
SELECT fence_breaker_unforce('role:b');
SELECT fence_breaker_define('role:b', failure_threshold => 9);
RESET ROLE;
SELECT breaker, defined, failure_threshold, successes, failures FROM pg_temp.b WHERE breaker = 'role:b';
-- Defined, it is brk_ops's: the asker may no longer manage it, and the
-- hint names the role that may.
SET ROLE brk_app;
\set VERBOSITY default
SELECT fence_breaker_reset('role:b');
\set VERBOSITY terse
SELECT fence_breaker_define('role:b');
RESET ROLE;

-- Forcing a breaker that does not exist makes no owner either: another
-- role that may run the functions clears and resets it.
SET ROLE brk_other;
SELECT fence_breaker_force('role:c', 'open');
RESET ROLE;
SET ROLE brk_app;
SELECT fence_breaker_unforce('role:c');
SELECT fence_breaker_reset('role:c');
RESET ROLE;

-- Keys beginning with "breaker:" are the breakers' probe leases, reserved:
-- no role, a superuser neither, takes or releases one with the lease
-- functions, in any scope or form, so a role that the caller role shuts
-- out cannot hold a breaker's probe lease and keep it from probing.
SELECT fence_breaker_define('role:p', failure_threshold => 1, open_for => '10 seconds',
                            caller_role => 'brk_app');
SET ROLE brk_member;
SELECT fence_breaker_report('role:p', false);
RESET ROLE;
SELECT fence_advance_clock('10 seconds') IS NOT NULL AS probe_due;
SET ROLE brk_other;
SET lock_timeout = '100ms';
\set VERBOSITY default
SELECT fence_try_lease('breaker:role:p', '1 hour', owner => 'squatter');
\set VERBOSITY terse
SELECT fence_lease('breaker:role:p', '1 hour', timeout => '1 s', owner => 'squatter');
SELECT fence_try_lease('breaker:role:p', '1 hour');
SELECT fence_lease('breaker:role:p', '1 hour');
BEGIN;
SELECT fence_try_xact_lease('breaker:role:p', '1 hour');
ROLLBACK;
BEGIN;
SELECT fence_xact_lease('breaker:role:p', '1 hour');
ROLLBACK;
SELECT fence_try_permit('breaker:role:p', 2, '1 hour', owner => 'squatter');
SELECT fence_permit('breaker:role:p', 2, '1 hour', owner => 'squatter');
BEGIN;
SELECT fence_try_xact_permit('breaker:role:p', 2, '1 hour');
ROLLBACK;
BEGIN;
SELECT fence_xact_permit('breaker:role:p', 2, '1 hour');
ROLLBACK;
SELECT fence_release('breaker:role:p', 1);
SELECT fence_try_lease('breaker:', '1 hour');
-- Reading is allowed: a probe lease is as visible as any lease.
SELECT fence_lease_status('breaker:role:p', 1);
RESET lock_timeout;
RESET ROLE;
SELECT fence_try_lease('breaker:role:p', '1 hour', owner => 'superuser');
SELECT count(*) AS squatted FROM fence_leases WHERE key LIKE 'breaker:%';
-- So the breaker probes when it is due.
SET ROLE brk_member;
SELECT decision FROM fence_breaker_allow('role:p');
RESET ROLE;
SELECT key, owner, live FROM fence_leases WHERE key LIKE 'breaker:%';
-- fence_break is refused on them too, for an administrator: the breaker
-- waits for its probe's report whatever becomes of the lease, and
-- fence_breaker_reset() is what frees a breaker and its probe.  The probe's
-- holder may renew it with its token (sql/breaker.sql).
\set VERBOSITY default
SELECT fence_break('breaker:role:p');
\set VERBOSITY terse
SELECT count(*) AS probe_leases FROM fence_leases WHERE key = 'breaker:role:p' AND live;

-- A role that does not exist (by OID) is refused: 42704, nothing made.
\set VERBOSITY default
SELECT fence_breaker_define('role:x', manager_role => 999999::oid::regrole);
\set VERBOSITY terse
SELECT count(*) FROM pg_temp.b WHERE breaker = 'role:x';

-- A superuser may do anything.
SELECT fence_breaker_reset(breaker) FROM pg_temp.b ORDER BY breaker;
DROP VIEW pg_temp.b;
REVOKE EXECUTE ON FUNCTION fence_breaker_define, fence_breaker_force, fence_breaker_unforce,
	fence_breaker_reset FROM brk_owner, brk_ops, brk_app, brk_other, brk_member;
DROP ROLE brk_member;
DROP ROLE brk_owner;
DROP ROLE brk_ops;
DROP ROLE brk_app;
DROP ROLE brk_other;
SELECT fence_set_clock(NULL) IS NOT NULL AS real_time;
