-- Lease cycle: take a session lease on a random key, getting its fencing
-- token in the same round trip, then release it by that token
-- (compare-and-delete).  A refused take (NULL) releases with token 0, which
-- is false and changes nothing.
\set k random(1, :keys)
SELECT coalesce(fence_try_lease(:k::bigint, '30 s'), 0) AS t \gset
SELECT fence_release(:k::bigint, :t);
