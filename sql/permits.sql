-- Leases with permits (bulkheads): at most n live holders of one key, each
-- with its own token.  One session plays every holder here, as detached
-- permits under several owner names; waiting and queue order across
-- sessions are in the isolation suite (permits_fifo, permits_expiry), the
-- per-role limit and restarts in test/t/015_permits.pl.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

-- Tokens are compared to a base, since other tests use the same counter.
SELECT fence_advance_tokens(0)::text::bigint AS base \gset
CREATE TEMP TABLE base AS SELECT :base AS b;
CREATE FUNCTION pg_temp.rel(t fence_token) RETURNS bigint
	LANGUAGE sql AS $$ SELECT t::text::bigint - b FROM base $$;
-- Each holder's token, kept under its name: keep() stores and shows it
-- (relative to the base), tk() gives it back.
CREATE TEMP TABLE tok (name text PRIMARY KEY, t fence_token);
CREATE FUNCTION pg_temp.keep(n text, t fence_token) RETURNS bigint
	LANGUAGE sql AS $$ INSERT INTO tok VALUES (n, t)
	                   ON CONFLICT (name) DO UPDATE SET t = excluded.t;
	                   SELECT pg_temp.rel(t) $$;
CREATE FUNCTION pg_temp.tk(n text) RETURNS fence_token
	LANGUAGE sql AS $$ SELECT t FROM tok WHERE name = n $$;
-- The rows of one key in fence_leases.
CREATE FUNCTION pg_temp.held(k text)
	RETURNS TABLE (owner text, token bigint, scope text, expires_at timestamptz,
	               live bool, waiters int, permits int)
	LANGUAGE sql AS $$ SELECT owner, pg_temp.rel(token), scope, expires_at, live, waiters, permits
	                     FROM fence_leases WHERE key = k ORDER BY token $$;

-- Times in UTC, as the comments give them.
SET TimeZone = 'UTC';
SELECT fence_set_clock('2024-07-01 10:00:00+00') IS NOT NULL AS clock_set;

-- fence_leases has a last column, permits.
SELECT attnum, attname, format_type(atttypid, atttypmod) AS type
  FROM pg_attribute WHERE attrelid = 'fence_leases'::regclass AND attnum > 0 ORDER BY attnum;

-- Three permits for three owners, each with its own, larger token ...
SELECT pg_temp.keep('w1', fence_try_permit('bh:api', 3, '30 seconds', owner => 'W1')) AS w1;
SELECT pg_temp.keep('w2', fence_try_permit('bh:api', 3, '30 seconds', owner => 'W2')) AS w2;
SELECT pg_temp.keep('w3', fence_try_permit('bh:api', 3, '30 seconds', owner => 'W3')) AS w3;
SELECT key, pg_temp.rel(token) AS token, scope, owner, pid, granted_at, expires_at, live,
       waiters, permits
  FROM fence_leases WHERE key = 'bh:api' ORDER BY token;
-- ... and a fourth asker is refused, whoever it is; a short wait times out.
SELECT fence_try_permit('bh:api', 3, '30 seconds', owner => 'W4') AS w4_refused;
SELECT fence_permit('bh:api', 3, '30 seconds', timeout => '10 ms', owner => 'W4');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS rows, count(*) FILTER (WHERE live) AS live, max(waiters) AS waiters
  FROM fence_leases WHERE key = 'bh:api';

-- A holder asking again keeps its token and extends its expiry ...
SELECT fence_advance_clock('10 seconds') IS NOT NULL AS at_10_00_10;
SELECT pg_temp.rel(fence_try_permit('bh:api', 3, '30 seconds', owner => 'W2')) AS w2_again;
-- ... never shortens it (the blocking form returns at once) ...
SELECT pg_temp.rel(fence_permit('bh:api', 3, '1 second', owner => 'W2')) AS w2_blocking_call;
-- ... and takes no other permit.
SELECT * FROM pg_temp.held('bh:api');

-- fence_assert_current passes for every held permit, not only the newest.
SELECT fence_lease_status('bh:api', pg_temp.tk('w1')) AS w1_status;
SELECT fence_assert_current('bh:api', pg_temp.tk('w1')) AS w1_assert;

-- A release by token frees one permit; the others stay.
SELECT fence_release('bh:api', pg_temp.tk('w3')) AS w3_released;
SELECT fence_lease_status('bh:api', pg_temp.tk('w3')) AS w3_status;
SELECT fence_release('bh:api', pg_temp.tk('w3')) AS w3_twice;
SELECT owner, pg_temp.rel(token) AS token, live FROM fence_leases WHERE key = 'bh:api' ORDER BY token;
-- The freed permit goes to the next asker, with a new token.
SELECT pg_temp.keep('w4', fence_try_permit('bh:api', 3, '30 seconds', owner => 'W4')) AS w4;
SELECT fence_try_permit('bh:api', 3, '30 seconds', owner => 'W5') AS w5_refused;
-- A release with a token that holds no permit of the key changes nothing.
SELECT fence_release('bh:api', '9223372036854775807') AS never_granted;
SELECT fence_release('bh:other', pg_temp.tk('w1')) AS other_key;
SELECT fence_renew('bh:api', pg_temp.tk('w3'), '30 seconds') AS w3_renewed;
SELECT count(*) AS live_permits FROM fence_leases WHERE key = 'bh:api' AND live;

-- Renewal: expires_at := now + ttl for a held permit, as for a lease.
SELECT fence_renew('bh:api', pg_temp.tk('w4'), '1 minute') AS w4_renewed;
SELECT * FROM pg_temp.held('bh:api');

-- Expiry.  At 10:00:30 W1's permit runs out (W2's lasts to 10:00:40, W4's
-- to 10:01:10): W1 holds nothing any more ...
SELECT fence_advance_clock('20 seconds') IS NOT NULL AS at_10_00_30;
SELECT owner, pg_temp.rel(token) AS token, live FROM fence_leases WHERE key = 'bh:api' ORDER BY token;
SELECT fence_lease_status('bh:api', pg_temp.tk('w1')) AS w1_status;
SELECT fence_renew('bh:api', pg_temp.tk('w1'), '30 seconds') AS w1_renewed;
\set VERBOSITY terse
SELECT fence_assert_current('bh:api', pg_temp.tk('w1'));
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
-- ... and the next asker takes the permit over with a new token; W1 is
-- superseded, and still cannot renew, release or assert.
SELECT pg_temp.keep('w5', fence_try_permit('bh:api', 3, '30 seconds', owner => 'W5')) AS w5;
SELECT fence_lease_status('bh:api', pg_temp.tk('w1')) AS w1_status;
SELECT fence_renew('bh:api', pg_temp.tk('w1'), '30 seconds') AS w1_renewed;
SELECT fence_release('bh:api', pg_temp.tk('w1')) AS w1_released;
\set VERBOSITY terse
SELECT fence_assert_current('bh:api', pg_temp.tk('w1'));
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
-- W1 asking again is a new asker: refused while three permits are live.
SELECT fence_try_permit('bh:api', 3, '30 seconds', owner => 'W1') AS w1_asks_again;
SELECT owner, pg_temp.rel(token) AS token, live FROM fence_leases WHERE key = 'bh:api' ORDER BY token;

-- A fenced table.  W5 writes row 1 with its token; W1's lost token is
-- below the row's fence now: LF001.  (The details of these errors give
-- tokens as they are, not relative to the base: terse.)
CREATE TABLE bh_calls (id int PRIMARY KEY, result text, fence fence_token NOT NULL DEFAULT 0);
INSERT INTO bh_calls VALUES (1, 'pending'), (2, 'pending'), (3, 'pending');
SELECT fence_protect('bh_calls');
UPDATE bh_calls SET result = 'by W5', fence = pg_temp.tk('w5') WHERE id = 1;
\set VERBOSITY terse
UPDATE bh_calls SET result = 'by W1', fence = pg_temp.tk('w1') WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
-- strict, naming the permit key: a write must carry a held permit's token.
-- W2's (older than W5's, but held) is accepted ...
SELECT fence_protect('bh_calls', lease => 'bh:api', strict => true) IS NOT NULL AS strict;
BEGIN;
SELECT fence_use_token(pg_temp.tk('w2'));
UPDATE bh_calls SET result = 'by W2' WHERE id = 2;
COMMIT;
SELECT id, result, CASE WHEN fence = 0 THEN 'none' ELSE 'token ' || pg_temp.rel(fence) END AS fence
  FROM bh_calls ORDER BY id;
-- ... W1's lost one is not, even on a row that no token has written.
\set VERBOSITY terse
UPDATE bh_calls SET result = 'by W1', fence = pg_temp.tk('w1') WHERE id = 3;
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
-- At 10:00:40 W2's permit has expired too: strict rejects it before anyone
-- has taken it over.
SELECT fence_advance_clock('10 seconds') IS NOT NULL AS at_10_00_40;
SELECT fence_lease_status('bh:api', pg_temp.tk('w2')) AS w2_status;
BEGIN;
SELECT fence_use_token(pg_temp.tk('w2'));
\set VERBOSITY terse
UPDATE bh_calls SET result = 'by W2 again' WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
ROLLBACK;
UPDATE bh_calls SET result = 'by W4', fence = pg_temp.tk('w4') WHERE id = 2;
SELECT id, result, CASE WHEN fence = 0 THEN 'none' ELSE 'token ' || pg_temp.rel(fence) END AS fence
  FROM bh_calls ORDER BY id;
SELECT fence_unprotect('bh_calls');

-- fence_break frees every permit of the key, expired ones included, and
-- returns the highest token it ended.
SELECT * FROM pg_temp.held('bh:api');
SELECT pg_temp.rel(fence_break('bh:api')) AS broken;
SELECT count(*) AS rows_left FROM fence_leases WHERE key = 'bh:api';
SELECT fence_lease_status('bh:api', pg_temp.tk('w5')) AS w5_status;
SELECT fence_renew('bh:api', pg_temp.tk('w4'), '30 seconds') AS w4_renewed;
SELECT fence_break('bh:api') AS nothing_left;

-- Bad input is an error, never a quiet NULL, and changes nothing.
SELECT fence_advance_tokens(0)::text::bigint AS before_errors \gset
SELECT pg_temp.keep('e1', fence_try_permit('bh:err', 2, '1 minute', owner => 'E1')) > 0 AS e1;
-- permits: 1 to 1000.
SELECT fence_try_permit('bh:err', 0, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_permit('bh:err', -1, '1 minute', owner => 'E2');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_permit('bh:err', 1001, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_permit('bh:err', NULL, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_permit('bh:err', 0, '1 minute', timeout => '1 s');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_permit('bh:err', NULL, '1 minute', owner => 'E2');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_permit('bh:err', 1001, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_permit('bh:err', -1, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_permit(4300, 0, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_permit(4300, NULL, '1 minute');
\echo :LAST_ERROR_SQLSTATE
-- TTL: NULL, zero, negative, in months, over fence.max_ttl.
SELECT fence_try_permit('bh:err', 2, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_permit('bh:err', 2, '0', owner => 'E2');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_permit('bh:err', 2, '-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_permit('bh:err', 2, '1 month');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_permit('bh:err', 2, '1 day 1 microsecond');
\echo :LAST_ERROR_SQLSTATE
-- The holder's own re-ask with a bad TTL changes nothing either.
SELECT fence_try_permit('bh:err', 2, '0', owner => 'E1');
\echo :LAST_ERROR_SQLSTATE
-- Owner: empty, over 48 bytes.  Key: NULL, empty, over 200 bytes.
SELECT fence_try_permit('bh:err', 2, '1 minute', owner => '');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_permit('bh:err', 2, '1 minute', owner => repeat('o', 49));
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_permit(NULL::text, 2, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_permit(NULL::bigint, 2, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_permit('', 2, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_permit(repeat('k', 201), 2, '1 minute');
\echo :LAST_ERROR_SQLSTATE
-- Timeout: negative, in months.
SELECT fence_permit('bh:err', 2, '1 minute', timeout => '-1 ms');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_permit('bh:err', 2, '1 minute', timeout => '1 mon');
\echo :LAST_ERROR_SQLSTATE
-- Nothing was granted, nothing extended, no token taken but E1's.
SELECT owner, pg_temp.rel(token) AS token, expires_at, permits FROM fence_leases
 WHERE key IN ('bh:err', '4300') ORDER BY token;
SELECT fence_advance_tokens(0)::text::bigint - :before_errors AS tokens_taken;
-- 1 and 1000 are allowed.
SELECT fence_release('bh:one', fence_try_permit('bh:one', 1, '1 minute')) AS one_permit;
SELECT fence_release('bh:many', fence_try_permit('bh:many', 1000, '1 minute')) AS thousand_permits;
-- Taking a permit in a read-only transaction is refused, as for a lease.
BEGIN READ ONLY;
SELECT fence_try_permit('bh:err', 2, '1 minute', owner => 'E2');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

-- A key is a lease or a lease with permits while it is held: asking for it
-- as the other kind, or with another number of permits, is 55000 at once.
SELECT fence_try_lease('bh:err', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('bh:err', '1 minute', timeout => '5 s', owner => 'E2');
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence_try_xact_lease('bh:err', '1 minute');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT clock_timestamp() AS asked_at \gset
SELECT fence_permit('bh:err', 3, '1 minute', timeout => '5 s', owner => 'E2');
\echo :LAST_ERROR_SQLSTATE
SELECT clock_timestamp() - :'asked_at' < interval '1 s' AS at_once;
SELECT fence_try_permit('bh:err', 1, '1 minute', owner => 'E2');
\echo :LAST_ERROR_SQLSTATE
-- The holder too must ask with the key's number of permits.
SELECT fence_try_permit('bh:err', 3, '1 minute', owner => 'E1');
\echo :LAST_ERROR_SQLSTATE
SELECT pg_temp.rel(fence_try_lease('bh:plain', '1 minute')) > 0 AS plain_lease;
SELECT fence_try_permit('bh:plain', 2, '1 minute', owner => 'E2');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_permit('bh:plain', 2, '1 minute', timeout => '5 s');
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence_xact_permit('bh:plain', 2, '1 minute', timeout => '5 s');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- fence_leases tells the two kinds apart by permits.
SELECT key, scope, owner, permits FROM fence_leases WHERE key IN ('bh:err', 'bh:plain') ORDER BY key;

-- Once nothing is held any more, the key may be used either way again.
SELECT fence_release('bh:err', pg_temp.tk('e1')) AS e1_released;
SELECT fence_release('bh:plain', fence_try_lease('bh:plain', '1 minute')) AS plain_released;
SELECT pg_temp.keep('l1', fence_try_lease('bh:err', '1 minute')) > 0 AS err_as_lease;
SELECT fence_release('bh:err', pg_temp.tk('l1')) AS released;
SELECT pg_temp.keep('p1', fence_try_permit('bh:plain', 2, '1 minute', owner => 'E1')) > 0 AS plain_as_permits;
SELECT fence_release('bh:plain', pg_temp.tk('p1')) AS released;
SELECT pg_temp.keep('p2', fence_try_permit('bh:plain', 5, '1 minute', owner => 'E1')) > 0 AS five_permits_now;
SELECT key, permits FROM fence_leases WHERE key IN ('bh:err', 'bh:plain') ORDER BY key;
SELECT fence_release('bh:plain', pg_temp.tk('p2')) AS released;

-- Scopes.  A session permit belongs to this session; asking for the key in
-- another scope, or as a detached permit, is 55000.
SELECT pg_temp.keep('s1', fence_try_permit('bh:scope', 2, '1 minute')) AS s1;
SELECT scope, owner, pid = pg_backend_pid() AS mine, permits FROM fence_leases WHERE key = 'bh:scope';
SELECT pg_temp.rel(fence_permit('bh:scope', 2, '1 minute', timeout => '1 s')) AS s1_again;
SELECT fence_try_permit('bh:scope', 2, '1 minute', owner => 'D1');
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence_try_xact_permit('bh:scope', 2, '1 minute');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- A session permit survives COMMIT and ROLLBACK.
BEGIN;
SELECT pg_temp.rel(fence_try_permit('bh:scope', 2, '1 minute')) AS s1_in_xact;
ROLLBACK;
SELECT scope FROM fence_leases WHERE key = 'bh:scope';
SELECT fence_release('bh:scope', pg_temp.tk('s1')) AS s1_released;

-- Transaction permits end at COMMIT and at ROLLBACK ...
BEGIN;
SELECT pg_temp.keep('x1', fence_try_xact_permit('bh:x', 2, '1 minute')) AS x1;
SELECT pg_temp.rel(fence_xact_permit('bh:x', 2, '1 minute', timeout => '1 s')) AS x1_again;
SELECT owner, pg_temp.rel(token) AS token, scope, pid = pg_backend_pid() AS mine, permits
  FROM fence_leases WHERE key = 'bh:x' ORDER BY token;
COMMIT;
SELECT count(*) AS after_commit FROM fence_leases WHERE key = 'bh:x';
BEGIN;
SELECT pg_temp.rel(fence_xact_permit('bh:x', 2, '1 minute', timeout => '1 s')) > 0 AS x_taken;
ROLLBACK;
SELECT count(*) AS after_rollback FROM fence_leases WHERE key = 'bh:x';
-- ... and with a savepoint that rolls back; a session permit asked for
-- inside a transaction permit's transaction is the other scope: 55000.
BEGIN;
SAVEPOINT a;
SELECT fence_try_xact_permit('bh:x', 2, '1 minute') IS NOT NULL AS x_taken;
ROLLBACK TO SAVEPOINT a;
SELECT count(*) AS x_in_savepoint FROM fence_leases WHERE key = 'bh:x' AND scope = 'transaction';
SELECT fence_try_xact_permit('bh:x', 2, '1 minute') IS NOT NULL AS x_taken;
SELECT fence_try_permit('bh:x', 2, '1 minute');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT count(*) AS after_rollback FROM fence_leases WHERE key = 'bh:x';

-- A bigint key is the lease of its decimal text, with permits too.
SELECT pg_temp.keep('b1', fence_try_permit(4343, 2, '1 minute', owner => 'B1')) AS b1;
SELECT pg_temp.rel(fence_try_permit('4343', 2, '1 minute', owner => 'B1')) AS b1_as_text;
SELECT pg_temp.keep('b2', fence_permit(4343, 2, '1 minute', timeout => '1 s', owner => 'B2')) AS b2;
SELECT fence_try_permit(4343, 2, '1 minute', owner => 'B3') AS b3_refused;
SELECT fence_permit(4343, 2, '1 minute', timeout => '10 ms', owner => 'B3');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease(4343, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT key, owner, pg_temp.rel(token) AS token, permits FROM fence_leases WHERE key = '4343' ORDER BY token;
SELECT fence_lease_status(4343, pg_temp.tk('b2')) AS b2_status;
SELECT fence_assert_current(4343, pg_temp.tk('b1')) AS b1_assert;
SELECT fence_renew(4343, pg_temp.tk('b1'), '2 minutes') AS b1_renewed;
SELECT fence_release(4343, pg_temp.tk('b1')) AS b1_released;
SELECT pg_temp.rel(fence_break(4343)) = pg_temp.rel(pg_temp.tk('b2')) AS broke_b2;
BEGIN;
SELECT pg_temp.keep('bx', fence_try_xact_permit(4344, 2, '1 minute')) > 0 AS xact_taken;
SELECT fence_xact_permit(4344, 2, '1 minute', timeout => '1 s') = pg_temp.tk('bx') AS same_token;
SELECT key, scope, permits FROM fence_leases WHERE key = '4344';
COMMIT;
SELECT count(*) AS after_commit FROM fence_leases WHERE key = '4344';

-- A session that holds a session permit asks for a detached one of the key:
-- 55000, also when the owner's permit comes first in the key's chain (D2's
-- entry is newer; the session's took over D3's expired one).  Extending
-- D2's permit instead would leave the session's untracked, and held after
-- the session ends.
SELECT pg_temp.keep('d3', fence_try_permit('bh:scope', 3, '1 second', owner => 'D3')) > 0 AS d3;
SELECT pg_temp.keep('d2', fence_try_permit('bh:scope', 3, '1 minute', owner => 'D2')) > 0 AS d2;
SELECT fence_advance_clock('2 seconds') IS NOT NULL AS d3_expired;
SELECT pg_temp.keep('s2', fence_try_permit('bh:scope', 3, '1 minute')) > pg_temp.rel(pg_temp.tk('d2')) AS s2;
SELECT pg_temp.rel(fence_try_permit('bh:scope', 3, '1 minute', owner => 'D2')) AS d2_asked;
\echo :LAST_ERROR_SQLSTATE
SELECT fence_current_token('bh:scope') = pg_temp.tk('s2') AS s2_in_effect;
SELECT scope, owner, pg_temp.rel(token) - pg_temp.rel(pg_temp.tk('d2')) AS after_d2, live
  FROM fence_leases WHERE key = 'bh:scope' ORDER BY token;
SELECT pg_temp.rel(fence_break('bh:scope')) = pg_temp.rel(pg_temp.tk('s2')) AS broken;

-- An idle key taken with another number of permits: the expired permits of
-- the old number end then too (as when the key changes kind), so that the
-- key never has more permits than its number, live or expired.  A clock
-- moved back would otherwise make them live again: 3 holders of 1 permit.
SELECT fence_now() AS renum_at \gset
SELECT count(fence_try_permit('bh:renum', 3, '10 seconds', owner => 'R' || g)) AS three
  FROM generate_series(1, 3) g;
SELECT fence_advance_clock('11 seconds') IS NOT NULL AS all_expired;
SELECT pg_temp.keep('r9', fence_try_permit('bh:renum', 1, '1 minute', owner => 'R9')) > 0 AS one_permit_now;
SELECT owner, live, permits FROM fence_leases WHERE key = 'bh:renum' ORDER BY token;
SELECT fence_set_clock(:'renum_at') IS NOT NULL AS clock_moved_back;
SELECT count(*) AS permits_live FROM fence_leases WHERE key = 'bh:renum' AND live;
SELECT pg_temp.rel(fence_break('bh:renum')) = pg_temp.rel(pg_temp.tk('r9')) AS broken;

-- Clean up.
SELECT count(*) AS left_over FROM fence_leases WHERE key LIKE 'bh:%' OR key IN ('4300', '4343', '4344');
DROP TABLE bh_calls;
SELECT fence_set_clock(NULL) IS NOT NULL AS clock_cleared;
