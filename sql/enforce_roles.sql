-- Who may put a token in effect for whose writes.  A fence_use_token
-- setting counts only for writes made as the role that set it: a caller's
-- never reaches the writes of a SECURITY DEFINER function, which takes its
-- own lease.  fence.carried_tokens counts only as Citus sends it (here,
-- without Citus, never), and cannot be a default of a role or database.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
-- Tokens from elsewhere are accepted in this file, so that a caller can
-- choose any token: what is tested is whose choice counts.
SET fence.external_tokens = on;

CREATE ROLE regress_fence_owner;
CREATE ROLE regress_fence_caller;
GRANT CREATE ON SCHEMA public TO regress_fence_owner;
SET ROLE regress_fence_owner;
CREATE TABLE enf_ro (id int PRIMARY KEY, v text, fence bigint NOT NULL DEFAULT 0);
INSERT INTO enf_ro VALUES (1, 'a', 0);
SELECT fence_protect('enf_ro', lease => 'enfro', require_token => true);
-- The owner's job: take the lease, write, release.  The caller has no
-- UPDATE right on enf_ro, only EXECUTE on this.
CREATE FUNCTION enf_ro_job(val text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
DECLARE t fence_token;
BEGIN
	t := fence_try_lease('enfro', '1 min');
	UPDATE enf_ro SET v = val WHERE id = 1;
	PERFORM fence_release('enfro', t);
	RETURN t::text::bigint;
END $$;
REVOKE ALL ON FUNCTION enf_ro_job(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION enf_ro_job(text) TO regress_fence_caller;
RESET ROLE;

-- The caller chooses the largest token, for the lease and for any; the
-- function's write still carries the token of the function's own lease.
SET ROLE regress_fence_caller;
BEGIN;
SELECT fence_use_token(9223372036854775807);
SELECT fence_use_token(9223372036854775807, 'enfro');
SELECT enf_ro_job('by the job') AS job_token \gset
-- Back as the caller, its own setting is in effect again.
SELECT fence_current_token('enfro') AS callers_token;
COMMIT;
RESET ROLE;
SELECT v, fence = :job_token AS stamped_with_the_jobs_token FROM enf_ro;

-- And the other way round: what the function set is not in effect for
-- the caller after it returns.
SET ROLE regress_fence_owner;
CREATE FUNCTION enf_ro_sets() RETURNS void
LANGUAGE sql SECURITY DEFINER AS $$ SELECT fence_use_token(12345) $$;
GRANT EXECUTE ON FUNCTION enf_ro_sets() TO regress_fence_caller;
RESET ROLE;
SET ROLE regress_fence_caller;
BEGIN;
SELECT enf_ro_sets();
SELECT fence_current_token() IS NULL AS nothing_in_effect_for_the_caller;
COMMIT;
RESET ROLE;

-- fence.carried_tokens: refused as a default and with token 0, not in
-- effect without Citus, in a transaction or out of it.
\set VERBOSITY terse
ALTER ROLE regress_fence_caller SET fence.carried_tokens = 'U9223372036854775807;';
ALTER DATABASE contrib_regression SET fence.carried_tokens = 'U9223372036854775807;';
\set VERBOSITY default
SET fence.carried_tokens = 'U0;';
SET fence.carried_tokens = 'U9223372036854775807;';
SELECT fence_current_token() IS NULL AS not_in_effect;
BEGIN;
SET LOCAL fence.carried_tokens = 'U9223372036854775807;';
SELECT fence_current_token() IS NULL AS not_in_effect;
COMMIT;
RESET fence.carried_tokens;
UPDATE enf_ro SET v = 'tokenless';
\echo :SQLSTATE
SELECT v, fence = :job_token AS unchanged FROM enf_ro;

DROP FUNCTION enf_ro_job(text), enf_ro_sets();
DROP TABLE enf_ro;
REVOKE CREATE ON SCHEMA public FROM regress_fence_owner;
DROP ROLE regress_fence_owner, regress_fence_caller;
RESET fence.external_tokens;
