-- The ordinary lease cycle beside permits_permit.sql, on keys of the same
-- kind: a session lease on one of :keys bigint keys from :base, with its
-- token in the same round trip, then a release by that token.  A refused
-- take (another client holds the key) releases with token 0: false, no
-- change.
\set k :base + random(1, :keys)
SELECT coalesce(fence_try_lease(:k::bigint, '30 s'), 0) AS t \gset
SELECT fence_release(:k::bigint, :t);
