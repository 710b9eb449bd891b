-- strict with one lease per row: an UPDATE that changes the row's lease
-- name (a column of the lease name) must hold the lease of the row as it is
-- as well as the lease it becomes; else a holder of one lease could take
-- another's row by rewriting the column.  Tokens of real leases are
-- compared, never printed.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;

-- Tokens from here on are above 100, so that token 1, used below for a
-- message, is never a live lease's token, whichever tests ran before.
SELECT fence_advance_tokens(100) >= 100 AS counter_past_100;
CREATE TABLE enf_lc (id int PRIMARY KEY, tenant int, v text, fence bigint NOT NULL DEFAULT 0);
INSERT INTO enf_lc VALUES (1, 1, 'tenant 1', 0), (2, 2, 'tenant 2', 0);
SELECT fence_protect('enf_lc', lease => 'enflc:t{tenant}', strict => true);

-- Another worker holds tenant 1's lease; this session holds tenant 2's.
SELECT dblink_connect('enf_w1', 'dbname=' || current_database());
SELECT w1 FROM dblink('enf_w1', 'SELECT fence_try_lease(''enflc:t1'', ''1 minute'')::bigint')
  AS r(w1 bigint) \gset
SELECT fence_try_lease('enflc:t2', '1 minute')::bigint AS t2 \gset
-- Tenant 1's row, directly: refused.  Taken over by changing its tenant:
-- refused too, whether the token is in effect or in the statement.
\set VERBOSITY sqlstate
UPDATE enf_lc SET v = 'mine now' WHERE id = 1;
UPDATE enf_lc SET tenant = 2, v = 'mine now' WHERE id = 1;
UPDATE enf_lc SET tenant = 2, v = 'mine now', fence = :t2 WHERE id = 1;
\set VERBOSITY default
-- The message in full, with a token of our own choosing for tenant 1.
BEGIN;
SELECT fence_use_token(1, 'enflc:t1');
UPDATE enf_lc SET tenant = 2, v = 'mine now' WHERE id = 1;
ROLLBACK;
SELECT id, tenant, v, fence = 0 AS untouched FROM enf_lc ORDER BY id;
-- With on_stale=skip the row is left out.
SELECT fence_protect('enf_lc', lease => 'enflc:t{tenant}', strict => true, on_stale => 'skip');
UPDATE enf_lc SET tenant = 2, v = 'mine now' WHERE id = 1 RETURNING id;
SELECT fence_protect('enf_lc', lease => 'enflc:t{tenant}', strict => true);
-- Changing the tenant of a row whose lease this session holds, to a
-- tenant whose lease it does not hold: refused by the new lease, as before.
\set VERBOSITY sqlstate
UPDATE enf_lc SET tenant = 1, v = 'given away' WHERE id = 2;
\set VERBOSITY default

-- The other worker lets go; this session takes tenant 1's lease as well,
-- and with both the row changes tenant, stamped with the new lease's token.
SELECT released FROM dblink('enf_w1', 'SELECT fence_release(''enflc:t1'', ' || :w1 || ')')
  AS r(released bool);
SELECT fence_try_lease('enflc:t1', '1 minute')::bigint AS t1 \gset
UPDATE enf_lc SET tenant = 2, v = 'moved to tenant 2' WHERE id = 1
  RETURNING id, tenant, v, fence = :t2 AS stamped;
-- One token in effect without a lease name counts for both leases, so it
-- holds only one of them: refused.  Named per lease, both are held.
BEGIN;
SELECT fence_use_token(:t2);
\set VERBOSITY sqlstate
UPDATE enf_lc SET tenant = 1, v = 'back' WHERE id = 1;
\set VERBOSITY default
ROLLBACK;
BEGIN;
SELECT fence_use_token(:t1, 'enflc:t1');
SELECT fence_use_token(:t2, 'enflc:t2');
UPDATE enf_lc SET tenant = 1, v = 'back' WHERE id = 1
  RETURNING id, tenant, v, fence = :t1 AS stamped;
ROLLBACK;
-- Both leases are checked again at COMMIT: the old one lost before COMMIT
-- rolls the change back.
BEGIN;
UPDATE enf_lc SET tenant = 1, v = 'back' WHERE id = 1;
SELECT fence_release('enflc:t2', :t2);
\set VERBOSITY sqlstate
COMMIT;
\set VERBOSITY default
SELECT id, tenant, v, fence = :t2 AS stamped FROM enf_lc ORDER BY id;

-- DELETE and INSERT write under one lease each: unchanged.
SELECT fence_try_lease('enflc:t2', '1 minute')::bigint AS t2 \gset
DELETE FROM enf_lc WHERE id = 1 RETURNING id;
INSERT INTO enf_lc VALUES (1, 1, 'again', 0) RETURNING id, fence = :t1 AS stamped;

SELECT fence_release('enflc:t1', :t1), fence_release('enflc:t2', :t2);
SELECT dblink_disconnect('enf_w1');
DROP TABLE enf_lc;
