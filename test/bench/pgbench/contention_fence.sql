-- Contention: every client waits for the same key with the blocking
-- fence_lease (served in arrival order), then releases it.
SELECT fence_lease(1::bigint, '30 s') AS t \gset
SELECT fence_release(1::bigint, :t);
