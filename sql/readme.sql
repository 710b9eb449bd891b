-- The README's "Getting started" example, run exactly as the README shows it,
-- in a database of its own so that its tokens are 1 and 2 as the README says,
-- and then pasted again as it is (tokens 3 and 4), which must work too.  The
-- lines between each pair of markers must equal the README's SQL block: the
-- docs suite (test/docs/check.py) compares them.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
SELECT fence_set_clock(NULL) IS NOT NULL AS real_time;	-- whatever an earlier test left
CREATE DATABASE readme_example;
\c readme_example
-- getting-started: begin
CREATE EXTENSION IF NOT EXISTS fence;
DROP TABLE IF EXISTS jobs;
CREATE TABLE jobs (id int PRIMARY KEY, result text, fence fence_token NOT NULL DEFAULT 0);
INSERT INTO jobs VALUES (1, 'pending');
SELECT fence_protect('jobs');
-- Worker A takes a 2-second lease on job 1 and writes with its token.
SELECT fence_try_lease('job:1', '2 seconds', owner => 'worker-a') AS a \gset
UPDATE jobs SET result = 'started by A', fence = :a WHERE id = 1;
-- A stalls past its lease; worker B takes the lease over, with a larger token.
SELECT pg_sleep(2.5);
SELECT fence_try_lease('job:1', '30 seconds', owner => 'worker-b') AS b \gset
UPDATE jobs SET result = 'done by B', fence = :b WHERE id = 1;
-- A wakes up and writes what it computed: rejected.
UPDATE jobs SET result = 'done by A', fence = :a WHERE id = 1;
SELECT * FROM jobs;
-- B is done and releases its lease.
SELECT fence_release('job:1', :b);
-- getting-started: end
-- The second paste: the table is made anew, and the lease B released is
-- free for A.
-- getting-started: begin
CREATE EXTENSION IF NOT EXISTS fence;
DROP TABLE IF EXISTS jobs;
CREATE TABLE jobs (id int PRIMARY KEY, result text, fence fence_token NOT NULL DEFAULT 0);
INSERT INTO jobs VALUES (1, 'pending');
SELECT fence_protect('jobs');
-- Worker A takes a 2-second lease on job 1 and writes with its token.
SELECT fence_try_lease('job:1', '2 seconds', owner => 'worker-a') AS a \gset
UPDATE jobs SET result = 'started by A', fence = :a WHERE id = 1;
-- A stalls past its lease; worker B takes the lease over, with a larger token.
SELECT pg_sleep(2.5);
SELECT fence_try_lease('job:1', '30 seconds', owner => 'worker-b') AS b \gset
UPDATE jobs SET result = 'done by B', fence = :b WHERE id = 1;
-- A wakes up and writes what it computed: rejected.
UPDATE jobs SET result = 'done by A', fence = :a WHERE id = 1;
SELECT * FROM jobs;
-- B is done and releases its lease.
SELECT fence_release('job:1', :b);
-- getting-started: end
\c contrib_regression
DROP DATABASE readme_example;
