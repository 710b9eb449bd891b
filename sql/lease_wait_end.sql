-- fence_wait_lease_end: what it returns at once, and bad input.  Its waits
-- (woken by a release, a break, expiry, not by a renewal) are in the
-- isolation suite (lease_wait_end).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

-- Not held: returns at once.
SELECT fence_wait_lease_end('wait-end:never', 5);
SELECT fence_try_lease('wait-end:a', '30 seconds')::bigint AS t \gset
SELECT fence_wait_lease_end('wait-end:a', :t + 1) AS other_token;
-- Held, with a timeout that has passed: NULL, and the lease stays.
SELECT fence_wait_lease_end('wait-end:a', :t, timeout => '0') IS NULL AS timed_out;
SELECT fence_lease_status('wait-end:a', :t);
-- A bigint key.
SELECT fence_try_lease(424242, '30 seconds')::bigint AS n \gset
SELECT fence_wait_lease_end(424242, :n, timeout => '10 ms') IS NULL AS timed_out;
SELECT fence_release(424242, :n);
SELECT fence_wait_lease_end(424242, :n);
-- Bad input: a clear error, and the lease is untouched.
SELECT fence_wait_lease_end('wait-end:a', :t, timeout => '-1 second');
SELECT fence_wait_lease_end('wait-end:a', :t, timeout => '1 month');
SELECT fence_wait_lease_end('', :t);
SELECT fence_lease_status('wait-end:a', :t);
SELECT fence_release('wait-end:a', :t);
SELECT fence_wait_lease_end('wait-end:a', :t);
