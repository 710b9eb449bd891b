-- The durable token counter: fence_advance_tokens moves it forward only.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

-- Jump well past anything other tests issue; the value comes back, and the
-- next token is the one after it.
SELECT fence_advance_tokens(1000000) AS advanced;
SELECT fence_try_lease('counter:a', '1 minute') AS next_token;
-- Never back: asking for less changes nothing and returns the counter's
-- value, the last token handed out.
SELECT fence_advance_tokens(5) AS unchanged;
SELECT fence_try_lease('counter:b', '1 minute') AS next_token;
-- Forward again, past the counter's block of 1024 reserved tokens.
SELECT fence_advance_tokens(1005000) AS advanced;
SELECT fence_try_lease('counter:c', '1 minute') AS next_token;
SELECT fence_release('counter:' || k, t)
  FROM (VALUES ('a', 1000001), ('b', 1000002), ('c', 1005001)) AS v(k, t);

-- The sequence behind it holds the end of the last reserved block, so a
-- dump carries a value at or above every token handed out.
SELECT last_value >= 1005001 AS dump_value_covers_tokens FROM fence_token_counter;

-- The next block is reserved ahead.  From a counter just moved to 2000000
-- (its block used up), the first grant reserves the block 2000001..2001024;
-- once fewer than 256 of it are left, a grant reserves 2001025..2002048
-- before it takes its token.  Tokens run on across the end of a block with
-- no gap, and the sequence is one block ahead of them.
SELECT fence_advance_tokens(2000000) AS advanced;
CREATE TEMP TABLE ahead AS
  SELECT g, fence_try_lease('counter:ahead:' || g, '1 minute')::text::bigint AS t
    FROM generate_series(1, 1100) AS g;
SELECT min(t) AS first, max(t) AS last, count(DISTINCT t) AS distinct_tokens,
       bool_and(t = 2000000 + g) AS consecutive_in_grant_order
  FROM ahead;
SELECT last_value AS reserved_up_to FROM fence_token_counter;
SELECT fence_advance_tokens(0) AS counter_value;
SELECT count(*) FILTER (WHERE fence_release('counter:ahead:' || g, t)) AS released
  FROM ahead;

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

-- The end of the range, in a database of its own (its counter is used up
-- at the end).  The sequence cannot take a whole block of 1024 past
-- 2^63-1024, yet every token up to 2^63-1 is handed out, and nothing fails
-- while tokens are left.  Tokens are shown as their distance below 2^63-1.
CREATE DATABASE regress_counter_end;
\c regress_counter_end
SET client_min_messages = warning;
CREATE EXTENSION fence;
RESET client_min_messages;
SELECT 9223372036854775807 - fence_advance_tokens(9223372036854775807 - 2000)::bigint
  AS advanced_to_below_max;
-- A whole block: the grants that reserve the next block ahead, which now
-- reaches past the maximum, must still get their tokens.
CREATE TEMP TABLE end1 AS
  SELECT g, 9223372036854775807 - fence_try_lease('end:' || g, '1 minute')::bigint AS below_max
    FROM generate_series(1, 1024) AS g;
SELECT max(below_max) AS first, min(below_max) AS last, count(DISTINCT below_max) AS distinct_tokens
  FROM end1;
-- Within one block of the maximum, the counter can still be moved forward.
SELECT 9223372036854775807 - fence_advance_tokens(9223372036854775807 - 500)::bigint
  AS advanced_to_below_max;
CREATE TEMP TABLE end2 AS
  SELECT g, 9223372036854775807 - fence_try_lease('end2:' || g, '1 minute')::bigint AS below_max
    FROM generate_series(1, 500) AS g;
SELECT max(below_max) AS first, min(below_max) AS last, count(DISTINCT below_max) AS distinct_tokens
  FROM end2;
-- Every token is issued: the next grant fails, and says why.
SELECT fence_try_lease('end:over', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_tokens(0) = 9223372036854775807 AS counter_at_max;
SELECT last_value = 9223372036854775807 AS sequence_at_max FROM fence_token_counter;
\c contrib_regression
DROP DATABASE regress_counter_end;

-- A counter altered to count down is refused on every grant, not only the
-- first one after the change, and is not moved: a refusal must not leave
-- the counter's checks skipped for the rest of the session.  In a database
-- of its own.
CREATE DATABASE regress_counter_down;
\c regress_counter_down
SET client_min_messages = warning;
CREATE EXTENSION fence;
RESET client_min_messages;
SELECT fence_advance_tokens(5000);
SELECT fence_try_lease('down:1', '1 minute');
ALTER SEQUENCE fence_token_counter INCREMENT BY -1;
SELECT last_value AS before FROM fence_token_counter \gset
SET statement_timeout = '5s';
SELECT fence_try_lease('down:2', '1 minute');
SELECT fence_advance_tokens(20000);
SELECT fence_try_lease('down:3', '1 minute');
RESET statement_timeout;
SELECT last_value = :before AS counter_unmoved FROM fence_token_counter;
\c contrib_regression
DROP DATABASE regress_counter_down;
