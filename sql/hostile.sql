-- Hostile input: every malformed argument at every function, each with its
-- documented SQLSTATE, and the server still standing at
-- the end.  NULL in each position, empty, over-long (201 bytes) and
-- 10,000-byte keys and owners, absurd intervals, tokens at 0, -1 and
-- 2^63-1, wrong trigger definitions and arguments.  Results that depend on
-- the counter are shown as booleans.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
-- A detached lease lives in shared memory: if any backend crashed, the
-- server would reinitialize it and this lease would be gone at the end.
SELECT fence_try_lease('hostile-sentinel', '1 hour', owner => 'hostile') IS NOT NULL AS sentinel;


-- fence_try_lease(key, ttl, owner)
SELECT fence_try_lease(NULL::text, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease(repeat('k', 201), '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease(repeat('k', 10000), '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease(NULL::bigint, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('hostile', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('hostile', '0');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('hostile', '-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('hostile', '1 month');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('hostile', '25 hours');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('hostile', '-178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('hostile', '178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('hostile', '-100000000 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('hostile', '100000000 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('hostile', '1 minute', owner => '');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('hostile', '1 minute', owner => repeat('o', 49));
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('hostile', '1 minute', owner => repeat('o', 10000));
\echo :LAST_ERROR_SQLSTATE
-- Edge values that are fine: a 1-byte and a 200-byte key, a NULL owner (session
-- scope), a 48-byte owner, a 1-microsecond TTL, a negative bigint key.
SELECT fence_release('k', fence_try_lease('k', '1 minute')) AS ok;
SELECT fence_release(repeat('k', 200), fence_try_lease(repeat('k', 200), '1 minute')) AS ok;
SELECT fence_release('hostile', fence_try_lease('hostile', '1 minute', owner => NULL)) AS ok;
SELECT fence_release('hostile', fence_try_lease('hostile', '1 minute', owner => repeat('o', 48))) AS ok;
SELECT fence_try_lease('hostile-us', '1 microsecond') IS NOT NULL AS granted;
SELECT fence_release(-42, fence_try_lease(-42, '1 minute')) AS ok;

-- fence_try_xact_lease(key, ttl)
SELECT fence_try_xact_lease(NULL::text, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease('', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease(repeat('k', 201), '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease(repeat('k', 10000), '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease(NULL::bigint, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease('hostile', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease('hostile', '0');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease('hostile', '-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease('hostile', '1 month');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease('hostile', '25 hours');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease('hostile', '-178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease('hostile', '178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease('hostile', '-100000000 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease('hostile', '100000000 days');
\echo :LAST_ERROR_SQLSTATE

-- fence_lease(key, ttl, timeout, owner): the key is free, so nothing waits.
SELECT fence_lease(NULL::text, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease(repeat('k', 201), '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease(repeat('k', 10000), '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease(NULL::bigint, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', '0');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', '-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', '1 month');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', '25 hours');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', '-178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', '178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', '-100000000 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', '100000000 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', '1 minute', owner => '');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', '1 minute', owner => repeat('o', 49));
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', '1 minute', owner => repeat('o', 10000));
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', '1 minute', timeout => '-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('hostile', '1 minute', timeout => '-178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_release('hostile', fence_lease('hostile', '1 minute', timeout => NULL)) AS ok;
SELECT fence_release('hostile', fence_lease('hostile', '1 minute', timeout => '0')) AS ok;
SELECT fence_lease('hostile', '1 minute', timeout => '178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_release('hostile', fence_lease('hostile', '1 minute', timeout => '100000000 days')) AS ok;

-- fence_xact_lease(key, ttl, timeout)
SELECT fence_xact_lease(NULL::text, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease(repeat('k', 201), '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease(repeat('k', 10000), '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease(NULL::bigint, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('hostile', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('hostile', '0');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('hostile', '-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('hostile', '1 month');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('hostile', '25 hours');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('hostile', '-178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('hostile', '178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('hostile', '-100000000 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('hostile', '100000000 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('hostile', '1 minute', '-1 second');
\echo :LAST_ERROR_SQLSTATE

-- fence_release(key, token)
SELECT fence_release(NULL::text, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_release('', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_release(repeat('k', 201), 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_release(repeat('k', 10000), 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_release(NULL::bigint, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_release('hostile', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_release('hostile', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_release('hostile', '');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_release('hostile', 0) AS released_0, fence_release('hostile', 9223372036854775807) AS released_max;

-- fence_renew(key, token, ttl)
SELECT fence_renew(NULL::text, 1, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('', 1, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew(repeat('k', 201), 1, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew(repeat('k', 10000), 1, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew(NULL::bigint, 1, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile', NULL, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile', -1, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile', '', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile', 1, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile', 1, '0');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile', 1, '-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile', 1, '1 month');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile', 1, '25 hours');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile', 1, '-178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile', 1, '178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile', 1, '-100000000 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile', 1, '100000000 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile', 0, '1 minute') AS renewed_0, fence_renew('hostile', 9223372036854775807, '1 minute') AS renewed_max;
-- A bad TTL is an error even for the holder's own, current token.
SELECT fence_try_lease('hostile-held', '1 minute') IS NOT NULL AS granted;
SELECT fence_renew('hostile-held', fence_current_token('hostile-held'), '0');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('hostile-held', fence_current_token('hostile-held'), '25 hours');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_release('hostile-held', fence_current_token('hostile-held')) AS released;

-- fence_lease_status(key, token) and fence_assert_current(key, token)
SELECT fence_lease_status(NULL::text, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease_status('', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease_status(repeat('k', 201), 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease_status(repeat('k', 10000), 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease_status(NULL::bigint, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease_status('hostile', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease_status('hostile', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease_status('hostile', '');
\echo :LAST_ERROR_SQLSTATE
-- The extreme tokens, against a released key and against a held one.
SELECT fence_lease_status('hostile', 0) AS status_0, fence_lease_status('hostile', 9223372036854775807) AS status_max;
SELECT fence_lease_status('hostile-sentinel', 0) AS held_status_0, fence_lease_status('hostile-sentinel', 9223372036854775807) AS held_status_max;
SELECT fence_assert_current(NULL::text, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_assert_current('', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_assert_current(repeat('k', 201), 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_assert_current(repeat('k', 10000), 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_assert_current(NULL::bigint, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_assert_current('hostile', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_assert_current('hostile', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_assert_current('hostile', '');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_assert_current('hostile', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_assert_current('hostile', 9223372036854775807);
\echo :LAST_ERROR_SQLSTATE

-- fence_current_token(lease) and fence_use_token(token, key)
SELECT fence_current_token('');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_current_token(repeat('k', 201));
\echo :LAST_ERROR_SQLSTATE
SELECT fence_current_token(repeat('k', 10000));
\echo :LAST_ERROR_SQLSTATE
SELECT fence_current_token(NULL::text) IS NOT NULL AS most_recent_in_effect;
SELECT fence_use_token(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_use_token(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_use_token('');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_use_token(1, '');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_use_token(1, repeat('k', 201));
\echo :LAST_ERROR_SQLSTATE
SELECT fence_use_token(1, repeat('k', 10000));
\echo :LAST_ERROR_SQLSTATE
-- 0 is no token (it marks a row never fenced); 2^63-1 is one, in effect
-- only for the transaction.
SELECT fence_use_token(0);
\echo :LAST_ERROR_SQLSTATE
-- A token this database's counter never issued is refused, unless a
-- superuser says its tokens may come from elsewhere.
\set VERBOSITY terse
SELECT fence_use_token(9223372036854775807);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
CREATE ROLE regress_fence_hostile;
SET ROLE regress_fence_hostile;
SET fence.external_tokens = on;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE regress_fence_hostile;
SET fence.external_tokens = on;
BEGIN;
SELECT fence_use_token(9223372036854775807);
SELECT fence_current_token() AS in_effect;
SELECT fence_use_token(1, 'hostile');
SELECT fence_current_token('hostile') AS in_effect_for_key;
COMMIT;
RESET fence.external_tokens;
SELECT fence_current_token() <> 9223372036854775807 AS override_gone_after_commit;

-- A database whose counter has issued no token yet refuses every token,
-- through fence_use_token and through the fence column: before its first
-- grant, a forged one would fence out every real holder until the counter
-- got there.  A database whose tables take tokens from leases on another
-- server says so with fence.external_tokens.  After the first grant, the
-- bound is the highest token issued.
CREATE DATABASE regress_hostile_fresh;
\c regress_hostile_fresh
SET client_min_messages = warning;
CREATE EXTENSION fence;
RESET client_min_messages;
CREATE TABLE fresh_t (id int PRIMARY KEY, fence fence_token NOT NULL DEFAULT 0);
INSERT INTO fresh_t VALUES (1), (2);
SELECT fence_protect('fresh_t') IS NOT NULL AS protected;
SELECT fence_use_token(1000000);
\echo :SQLSTATE
\set VERBOSITY terse
SELECT fence_use_token(1);
\echo :SQLSTATE
INSERT INTO fresh_t VALUES (3, 1000000);
\echo :SQLSTATE
UPDATE fresh_t SET fence = 1000000 WHERE id = 1;
\echo :SQLSTATE
\set VERBOSITY default
SELECT id, fence FROM fresh_t ORDER BY id;
SET fence.external_tokens = on;
BEGIN;
SELECT fence_use_token(1000000);
UPDATE fresh_t SET id = id WHERE id = 1;
COMMIT;
INSERT INTO fresh_t VALUES (3, 1000001);
UPDATE fresh_t SET fence = 1000002 WHERE id = 2;
SELECT id, fence FROM fresh_t ORDER BY id;
RESET fence.external_tokens;
SELECT fence_try_lease('fresh', '1 minute') AS fresh_token \gset
SELECT fence_use_token(:fresh_token);
SELECT fence_use_token(:fresh_token + 1);
\echo :SQLSTATE
\set VERBOSITY terse
UPDATE fresh_t SET fence = 1000003 WHERE id = 3;
\echo :SQLSTATE
\set VERBOSITY default
SELECT fence_release('fresh', :fresh_token) AS released;
\c contrib_regression
DROP DATABASE regress_hostile_fresh;

-- fence_break(key) (admin)
SELECT fence_break(NULL::text);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_break('');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_break(repeat('k', 201));
\echo :LAST_ERROR_SQLSTATE
SELECT fence_break(repeat('k', 10000));
\echo :LAST_ERROR_SQLSTATE
SELECT fence_break(NULL::bigint);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_break('hostile-never-taken') IS NULL AS nothing_to_break;

-- fence_advance_tokens(at_least) (admin); 2^63-1 is tried in a database of
-- its own below, since it exhausts the counter.
SELECT fence_advance_tokens(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_tokens(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_tokens(-9223372036854775808);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_tokens(0) > 0 AS moved;

-- The clock controls (superuser, fence.test_clock = on).
SELECT fence_advance_clock(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_clock('-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_clock('-178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_set_clock('2000-01-01 00:00:00+00') AS set;
SELECT fence_advance_clock('178000000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_clock('100000000 days') IS NOT NULL AS far_future;
SELECT fence_advance_clock('100000000 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_set_clock('infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_set_clock('-infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_set_clock('4714-11-24 00:00:00+00 BC') IS NOT NULL AS earliest;
SELECT fence_release('hostile', fence_try_lease('hostile', '1 minute')) AS ok_at_the_earliest_time;
SELECT fence_set_clock('294276-12-31 23:59:59+00');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_set_clock('294000-01-01 00:00:00+00') IS NOT NULL AS latest;
SELECT fence_release('hostile', fence_try_lease('hostile', '1 day')) AS ok_at_the_latest_time;
SELECT fence_set_clock(NULL) IS NOT NULL AS back_to_real_time;
SELECT abs(extract(epoch FROM fence_now() - clock_timestamp())) < 60 AS real_time;

-- fence_token input and arithmetic.
SELECT ''::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT ' '::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '-1'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '1.5'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '1e3'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT 'abc'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '12abc'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '9223372036854775808'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '99999999999999999999999'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '0'::fence_token AS zero, '+1'::fence_token AS plus_one, ' 9223372036854775807 '::fence_token AS max;
SELECT (-1)::bigint::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT (-1)::integer::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '1'::fence_token + 1;
\echo :LAST_ERROR_SQLSTATE
SELECT -('1'::fence_token);
\echo :LAST_ERROR_SQLSTATE

-- fence_protect / fence_unprotect and the trigger itself.
CREATE TABLE hostile_t (id int PRIMARY KEY, fence fence_token NOT NULL DEFAULT 0, note text, small smallint);
CREATE VIEW hostile_v AS SELECT * FROM hostile_t;
SELECT fence_protect(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_missing');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_v');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_t', column_name => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_t', column_name => '');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_t', column_name => 'missing');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_t', column_name => 'note');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_t', column_name => 'small');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_t', on_stale => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_t', on_stale => 'ignore');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_t', lease => '');
\echo :LAST_ERROR_SQLSTATE
-- (the DETAIL quotes only the start of the name)
SELECT fence_protect('hostile_t', lease => repeat('k', 10000));
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_t', lease => 'lock:{missing}');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_t', lease => 'lock:{id');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_t', strict => true);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_t', strict => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('hostile_t', require_token => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_unprotect(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_unprotect('hostile_t') AS had_one;
SELECT fence_enforce();
\echo :LAST_ERROR_SQLSTATE
-- Hand-made triggers with wrong arguments or the wrong kind: a clear error
-- when created or at the first write.
INSERT INTO hostile_t (id) VALUES (1);
CREATE TRIGGER hostile_empty_column BEFORE UPDATE ON hostile_t FOR EACH ROW EXECUTE FUNCTION fence_enforce('');
UPDATE hostile_t SET note = 'x';
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER IF EXISTS hostile_empty_column ON hostile_t;
CREATE TRIGGER hostile_missing_column BEFORE UPDATE ON hostile_t FOR EACH ROW EXECUTE FUNCTION fence_enforce('missing');
UPDATE hostile_t SET note = 'x';
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER IF EXISTS hostile_missing_column ON hostile_t;
CREATE TRIGGER hostile_text_column BEFORE UPDATE ON hostile_t FOR EACH ROW EXECUTE FUNCTION fence_enforce('note');
UPDATE hostile_t SET note = 'x';
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER IF EXISTS hostile_text_column ON hostile_t;
CREATE TRIGGER hostile_bad_option BEFORE UPDATE ON hostile_t FOR EACH ROW EXECUTE FUNCTION fence_enforce('fence', 'on_stale=maybe');
UPDATE hostile_t SET note = 'x';
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER IF EXISTS hostile_bad_option ON hostile_t;
CREATE TRIGGER hostile_unknown_option BEFORE UPDATE ON hostile_t FOR EACH ROW EXECUTE FUNCTION fence_enforce('fence', 'frobnicate');
UPDATE hostile_t SET note = 'x';
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER IF EXISTS hostile_unknown_option ON hostile_t;
CREATE TRIGGER hostile_empty_lease BEFORE UPDATE ON hostile_t FOR EACH ROW EXECUTE FUNCTION fence_enforce('fence', 'lease=');
UPDATE hostile_t SET note = 'x';
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER IF EXISTS hostile_empty_lease ON hostile_t;
CREATE TRIGGER hostile_after AFTER UPDATE ON hostile_t FOR EACH ROW EXECUTE FUNCTION fence_enforce('fence');
UPDATE hostile_t SET note = 'x';
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER IF EXISTS hostile_after ON hostile_t;
CREATE TRIGGER hostile_statement BEFORE UPDATE ON hostile_t FOR EACH STATEMENT EXECUTE FUNCTION fence_enforce('fence');
UPDATE hostile_t SET note = 'x';
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER IF EXISTS hostile_statement ON hostile_t;
CREATE TRIGGER hostile_truncate BEFORE TRUNCATE ON hostile_t FOR EACH STATEMENT EXECUTE FUNCTION fence_enforce('fence');
TRUNCATE hostile_t;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER IF EXISTS hostile_truncate ON hostile_t;
-- No arguments: the column defaults to "fence", as for fence_protect().
CREATE TRIGGER hostile_no_args BEFORE UPDATE ON hostile_t FOR EACH ROW EXECUTE FUNCTION fence_enforce();
UPDATE hostile_t SET fence = 5;
UPDATE hostile_t SET fence = 4;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER hostile_no_args ON hostile_t;
-- With the real trigger: a token at 2^63-1 that this database never issued
-- is refused; as a token from elsewhere it is accepted, nothing is above
-- it, and a negative fence cannot be written.
SELECT fence_protect('hostile_t') IS NOT NULL AS protected;
\set VERBOSITY terse
UPDATE hostile_t SET fence = 9223372036854775807;
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SET fence.external_tokens = on;
UPDATE hostile_t SET fence = 9223372036854775807;
UPDATE hostile_t SET fence = 9223372036854775806;
\echo :LAST_ERROR_SQLSTATE
UPDATE hostile_t SET fence = -1;
\echo :LAST_ERROR_SQLSTATE
SELECT fence FROM hostile_t;
RESET fence.external_tokens;
DROP VIEW hostile_v;
DROP TABLE hostile_t;

-- A counter at 2^63-1: advancing and reading it are fine, the next token is
-- a clear error.
CREATE DATABASE regress_hostile_counter;
\c regress_hostile_counter
SET client_min_messages = warning;
CREATE EXTENSION fence;
RESET client_min_messages;
SELECT fence_advance_tokens(9223372036854775807) AS at_max;
SELECT fence_advance_tokens(0) AS still_at_max;
SELECT fence_try_lease('hostile', '1 minute');
\echo :LAST_ERROR_SQLSTATE
\c contrib_regression
DROP DATABASE regress_hostile_counter;

-- The server is standing and was never reset: the sentinel is still held.
SELECT fence_lease_status(key, token) AS sentinel FROM fence_leases WHERE key = 'hostile-sentinel';
SELECT fence_release(key, token) AS released FROM fence_leases WHERE key = 'hostile-sentinel';
SELECT count(*) AS hostile_leases_left FROM fence_leases WHERE key LIKE 'hostile%' AND live;
