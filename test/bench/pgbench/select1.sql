-- A round trip with nothing in it: the floor of any one-statement call.
-- The \set is there because the breaker scripts have it too.
\set n random(1, :names)
SELECT 1;
