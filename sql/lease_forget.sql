-- fence_forget_token: a session that takes a detached lease stops
-- remembering it, so that its token is no longer in effect there, while the
-- lease stays held by its owner name (renewable and releasable by token
-- from any session).  A client library takes leases this way on a pooled
-- connection, which must not hand the token to its next borrower.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

CREATE TABLE forget_rows (id int PRIMARY KEY, fence fence_token NOT NULL DEFAULT 0);
INSERT INTO forget_rows VALUES (1);
SELECT fence_protect('forget_rows', require_token => true);
CREATE FUNCTION forget_held(k text) RETURNS TABLE (scope text, owner text, live bool, mine bool)
	LANGUAGE sql AS $$ SELECT scope, owner, live, pid = pg_backend_pid() FROM fence_leases
	                    WHERE key = k ORDER BY token $$;

-- A detached lease taken here is in effect here, until it is forgotten.
SELECT fence_try_lease('forget:a', '1 hour', owner => 'worker-1') AS a_tok \gset
SELECT fence_current_token()::text = :'a_tok' AS a_in_effect;
SELECT fence_forget_token('forget:a', :'a_tok')::text = :'a_tok' AS returns_its_token;
SELECT fence_current_token() IS NULL AS nothing_in_effect;
SELECT fence_current_token('forget:a') IS NULL AS nothing_in_effect_for_a;
-- The lease itself is untouched: held, by its owner, renewable.
SELECT * FROM forget_held('forget:a');
SELECT fence_lease_status('forget:a', :'a_tok');
SELECT fence_renew('forget:a', :'a_tok', '1 hour') AS renewed;
-- Writes here now carry no token: the table requires one.
UPDATE forget_rows SET id = 1;
-- A transaction that names the token writes with it.
BEGIN;
SELECT fence_use_token(:'a_tok', 'forget:a');
UPDATE forget_rows SET id = 1 RETURNING fence::text = :'a_tok' AS written_with_a;
COMMIT;
-- Forgetting again, or a token this session does not remember, does
-- nothing and still returns the token.
SELECT fence_forget_token('forget:a', :'a_tok')::text = :'a_tok' AS again;
SELECT fence_forget_token('forget:none', 12345)::text AS not_remembered;
-- Release by token works from here as from any session.
SELECT fence_release('forget:a', :'a_tok') AS released;
SELECT count(*) AS rows_left FROM forget_held('forget:a');

-- Wrapped around a grant, in one statement: granted and forgotten at once.
SELECT fence_forget_token('forget:b', fence_try_lease('forget:b', '1 hour', owner => 'worker-1')) AS b_tok \gset
SELECT :'b_tok'::bigint > :'a_tok'::bigint AS b_is_newer;
SELECT fence_current_token() IS NULL AS b_not_in_effect;
SELECT * FROM forget_held('forget:b');
-- Not granted (another owner holds the key): NULL, as the grant's NULL.
SELECT fence_forget_token('forget:b', fence_try_lease('forget:b', '1 hour', owner => 'worker-2')) IS NULL AS not_granted;
SELECT fence_forget_token('forget:b', NULL) IS NULL AS null_token;
SELECT fence_forget_token(NULL::text, :'b_tok') IS NULL AS null_key;
-- The owner asking again, through the waiting form, has its lease
-- extended (the same token), and forgotten again.
SELECT fence_forget_token('forget:b', fence_lease('forget:b', '1 hour', '1 second', owner => 'worker-1')) AS b2_tok \gset
SELECT :'b2_tok'::bigint = :'b_tok'::bigint AS b2_is_b, fence_current_token() IS NULL AS b2_not_in_effect;
SELECT fence_release('forget:b', :'b2_tok') AS released;

-- What the session remembered before stays in effect: a session lease's
-- token, then a detached lease taken and forgotten.
SELECT fence_try_lease('forget:s', '1 hour') AS s_tok \gset
SELECT fence_forget_token('forget:c', fence_try_lease('forget:c', '1 hour', owner => 'worker-1')) AS c_tok \gset
SELECT fence_current_token()::text = :'s_tok' AS s_still_in_effect,
       fence_current_token('forget:c')::text = :'s_tok' AS s_in_effect_for_c;
-- Permits: a detached permit is forgotten the same way.
SELECT fence_forget_token('forget:p', fence_try_permit('forget:p', 2, '1 hour', owner => 'worker-1')) AS p_tok \gset
SELECT fence_current_token()::text = :'s_tok' AS s_still_in_effect_after_permit;
SELECT scope, owner, permits FROM fence_leases WHERE key = 'forget:p';
SELECT fence_release('forget:p', :'p_tok') AS released;

-- A session lease, or a transaction lease, cannot be forgotten: this
-- session ends those itself.  The refusal changes nothing.
SELECT fence_forget_token('forget:s', :'s_tok');
\set VERBOSITY sqlstate
SELECT fence_forget_token('forget:s', :'s_tok');
\set VERBOSITY default
SELECT fence_current_token()::text = :'s_tok' AS s_still_in_effect;
SELECT * FROM forget_held('forget:s');
BEGIN;
SELECT fence_try_xact_lease('forget:x', '1 hour') AS x_tok \gset
SELECT fence_forget_token('forget:x', :'x_tok');
ROLLBACK;
BEGIN;
SELECT fence_try_xact_lease('forget:x', '1 hour') AS x_tok \gset
\set VERBOSITY sqlstate
SELECT fence_forget_token('forget:x', :'x_tok');
\set VERBOSITY default
ROLLBACK;
SELECT count(*) AS x_rows_left FROM forget_held('forget:x');

-- bigint keys name the same lease as their decimal text.
SELECT fence_forget_token(4242, fence_try_lease(4242, '1 hour', owner => 'worker-1')) AS n_tok \gset
SELECT fence_current_token()::text = :'s_tok' AS s_still_in_effect;
SELECT scope, owner FROM fence_leases WHERE key = '4242';
SELECT fence_release(4242, :'n_tok') AS released;

-- The reserved breaker keys are refused, as by fence_release.
SELECT fence_forget_token('breaker:x', 1);

SELECT fence_release('forget:c', :'c_tok') AS c_released, fence_release('forget:s', :'s_tok') AS s_released;
DROP TABLE forget_rows;
DROP FUNCTION forget_held(text);
