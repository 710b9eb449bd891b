-- Two round trips with nothing in them: the floor of breaker_two.sql.
\set n random(1, :names)
SELECT 1;
SELECT 1;
