-- The durable token counter: fence_advance_tokens moves it forward only.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

-- Jump well past anything other tests issue; the value comes back.
SELECT fence_advance_tokens(1000000) AS advanced;
-- Never back: asking for less returns the next value, above the last one.
SELECT fence_advance_tokens(5)::bigint AS first \gset
SELECT :first > 1000000 AS moved_on;
SELECT fence_advance_tokens(5)::bigint > :first AS never_back;

-- Bad input.
SELECT fence_advance_tokens(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_tokens(-1);
\echo :LAST_ERROR_SQLSTATE

-- The counter is marked for pg_dump.
SELECT c.relname
  FROM pg_extension e, unnest(e.extconfig) AS cfg(oid)
  JOIN pg_class c ON c.oid = cfg.oid
 WHERE e.extname = 'fence';

-- Admin only: a plain role may not touch it.
CREATE ROLE regress_fence_plain;
SET ROLE regress_fence_plain;
SELECT fence_advance_tokens(10);
\echo :LAST_ERROR_SQLSTATE
SELECT nextval('fence_token_counter');
RESET ROLE;
DROP ROLE regress_fence_plain;

-- Read-only transactions cannot issue tokens.
BEGIN READ ONLY;
SELECT fence_advance_tokens(10);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
