-- The permit cycle: a session permit of a key of :permits permits, one of
-- :keys bigint keys from :base, with its token in the same round trip, then
-- a release by that token.  The bench holds all but one permit of every key
-- under detached owners, so each grant walks :permits - 1 live permits.  A
-- refused take (another client holds the free permit) releases with token
-- 0: false, no change.
\set k :base + random(1, :keys)
SELECT coalesce(fence_try_permit(:k::bigint, :permits, '30 s'), 0) AS t \gset
SELECT fence_release(:k::bigint, :t);
