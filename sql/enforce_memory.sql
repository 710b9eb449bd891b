-- The trigger's per-backend cache keeps one small memory context per fence
-- trigger this backend fired.  A dropped trigger's entry is freed at the
-- end of the transaction that saw it go, so a session that creates,
-- protects, writes and drops tables over and over does not grow.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

CREATE TEMP VIEW enf_contexts AS
  SELECT count(*) AS n FROM pg_backend_memory_contexts WHERE name = 'fence trigger';
SELECT n AS before FROM enf_contexts \gset
DO $$
BEGIN
  FOR i IN 1..50 LOOP
    CREATE TABLE enf_mem (id int, fence bigint);
    PERFORM fence_protect('enf_mem');
    INSERT INTO enf_mem VALUES (1, 1);
    DROP TABLE enf_mem;
  END LOOP;
END $$;
SELECT n - :before AS left_behind FROM enf_contexts;
-- The same in separate transactions, with a table that stays protected
-- and written in between: its entry stays, and keeps working.
CREATE TABLE enf_keep (id int, fence bigint);
SELECT fence_protect('enf_keep');
INSERT INTO enf_keep VALUES (1, 1);
CREATE TABLE enf_mem (id int, fence bigint);
SELECT fence_protect('enf_mem');
INSERT INTO enf_mem VALUES (1, 1);
DROP TABLE enf_mem;
CREATE TABLE enf_mem (id int, fence bigint);
SELECT fence_protect('enf_mem');
INSERT INTO enf_mem VALUES (1, 1);
DROP TABLE enf_mem;
UPDATE enf_keep SET fence = 2 WHERE id = 1;
SELECT n - :before AS entries FROM enf_contexts;
DROP TABLE enf_keep;
SELECT n - :before AS entries FROM enf_contexts;
