-- Who may: a breaker's owner (who defined it first, or made it by asking),
-- members of its manager role and superusers may define, force, clear and
-- reset it; with a caller role, only its members (and those) may ask it and
-- report to it.  Refusals are 42501 and change nothing.
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

-- A breaker made by asking is its asker's: another role may not reset,
-- force or define it, and the detail names no manager role.
SET ROLE brk_app;
SELECT decision FROM fence_breaker_allow('role:b');
RESET ROLE;
SET ROLE brk_other;
\set VERBOSITY default
SELECT fence_breaker_reset('role:b');
\set VERBOSITY terse
SELECT fence_breaker_define('role:b');
RESET ROLE;
-- A member of the asker's role may.
SET ROLE brk_member;
SELECT fence_breaker_define('role:b', failure_threshold => 9);
RESET ROLE;
SELECT breaker, defined, failure_threshold FROM pg_temp.b WHERE breaker = 'role:b';

-- Forcing a breaker that does not exist makes it the forcer's own.
SET ROLE brk_other;
SELECT fence_breaker_force('role:c', 'open');
SELECT fence_breaker_unforce('role:c');
SELECT fence_breaker_reset('role:c');
RESET ROLE;

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
