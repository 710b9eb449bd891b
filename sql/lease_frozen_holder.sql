-- A holder frozen inside an open transaction keeps its row locks when its
-- lease passes on: the next holder waits on them, whatever the lease says,
-- until the frozen session's transaction ends.
-- idle_in_transaction_session_timeout ends it (the session is terminated,
-- its transaction rolled back, its session leases released).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;

CREATE TABLE lfh (id int PRIMARY KEY, v text, fence bigint NOT NULL DEFAULT 0);
INSERT INTO lfh VALUES (1, 'start');
SELECT fence_protect('lfh', lease => 'lfh:job');

-- Holder 1 writes in a transaction, then freezes with it open.
SELECT dblink_connect('lfh_h1', 'dbname=' || current_database() || ' application_name=lfh_h1');
SELECT dblink_exec('lfh_h1', 'SET idle_in_transaction_session_timeout = ''5s''');
SELECT * FROM dblink('lfh_h1',
  'SELECT fence_try_lease(''lfh:job'', ''10 seconds'') IS NOT NULL') AS t(holder_1 bool);
SELECT dblink_exec('lfh_h1', 'BEGIN');
SELECT dblink_exec('lfh_h1', 'UPDATE lfh SET v = ''holder 1'' WHERE id = 1');

-- Its lease runs out and holder 2 takes it over ...
SELECT fence_advance_clock('11 seconds') IS NOT NULL AS clock_moved;
SELECT fence_try_lease('lfh:job', '10 seconds') IS NOT NULL AS holder_2;
-- ... but waits on holder 1's row lock:
SET lock_timeout = '200ms';
UPDATE lfh SET v = 'holder 2' WHERE id = 1;
RESET lock_timeout;
-- until the timeout ends holder 1's session, which rolls its write back.
UPDATE lfh SET v = v || ', then holder 2' WHERE id = 1
  RETURNING v, fence = fence_current_token('lfh:job')::bigint AS fence_2;
DO $$
BEGIN
  FOR i IN 1..600 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN NOT EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 'lfh_h1');
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT count(*) AS holder_1_sessions FROM pg_stat_activity WHERE application_name = 'lfh_h1';

SELECT dblink_disconnect('lfh_h1');
SELECT fence_release('lfh:job', fence_current_token('lfh:job'));
DROP TABLE lfh;
