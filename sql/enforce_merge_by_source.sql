-- MERGE ... WHEN NOT MATCHED BY SOURCE (PostgreSQL 17 and later): target
-- rows that no source row matches are updated or deleted, and each of those
-- row writes is judged like any other, with the same rule for the token it
-- carries (see enforce_write_token).  Before 17 the test stops here
-- (expected/enforce_merge_by_source_1.out).
SELECT current_setting('server_version_num')::int < 170000 AS before_17 \gset
\if :before_17
\quit
\endif
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

CREATE TABLE enf_ms (id int PRIMARY KEY, v text, fence bigint);
INSERT INTO enf_ms VALUES (1, 'a', 50), (2, 'b', 50), (3, 'c', 50);
SELECT fence_protect('enf_ms');

-- A stale token in effect: the unmatched rows' UPDATE and DELETE are
-- rejected, and nothing changes.
BEGIN;
SELECT fence_use_token(7);
MERGE INTO enf_ms t USING (VALUES (1, 'x')) s(id, v) ON t.id = s.id
  WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 'orphan';
ROLLBACK;
BEGIN;
SELECT fence_use_token(7);
MERGE INTO enf_ms t USING (VALUES (1, 'x')) s(id, v) ON t.id = s.id
  WHEN NOT MATCHED BY SOURCE THEN DELETE;
ROLLBACK;
-- A token in effect that is not stale: the unmatched rows are stamped
-- with it, the matched one with the token its action sets.
BEGIN;
SELECT fence_use_token(60);
MERGE INTO enf_ms t USING (VALUES (1, 'x', 70::bigint)) s(id, v, tok) ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET v = s.v, fence = s.tok
  WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 'orphan'
  RETURNING merge_action(), t.*;
ROLLBACK;
-- The BY SOURCE action copies the fence while the MATCHED one sets it:
-- PostgreSQL hands the BEFORE UPDATE trigger the columns of every UPDATE
-- action, so the unmatched rows look as if they set the fence to the
-- stored 50.  That is no token while one is in effect: the stale token in
-- effect (7) is rejected.
BEGIN;
SELECT fence_use_token(7);
MERGE INTO enf_ms t USING (VALUES (1, 'x', 70::bigint)) s(id, v, tok) ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET v = s.v, fence = s.tok
  WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 'orphan', fence = t.fence;
ROLLBACK;
-- A token set by the BY SOURCE action itself is checked: below the
-- stored fence, stale even with no token in effect.
MERGE INTO enf_ms t USING (VALUES (1, 'x')) s(id, v) ON t.id = s.id
  WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 'orphan', fence = 40;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM enf_ms ORDER BY id;
-- With on_stale=skip the stale rows are left out, the others written.
UPDATE enf_ms SET fence = 80 WHERE id = 3;
SELECT fence_protect('enf_ms', on_stale => 'skip');
MERGE INTO enf_ms t USING (VALUES (1, 'x')) s(id, v) ON t.id = s.id
  WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 'orphan', fence = 60
  RETURNING merge_action(), t.*;
-- With require_token, a BY SOURCE DELETE without a token is refused.
SELECT fence_protect('enf_ms', require_token => true);
MERGE INTO enf_ms t USING (VALUES (1, 'x')) s(id, v) ON t.id = s.id
  WHEN NOT MATCHED BY SOURCE THEN DELETE;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM enf_ms ORDER BY id;
DROP TABLE enf_ms;
