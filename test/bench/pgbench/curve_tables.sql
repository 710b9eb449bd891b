-- One transaction under a transaction lease that writes one row in each of
-- :tables protected tables (curve_write: an UPDATE of curve_t1 ...
-- curve_tN each; every fence_enforce trigger checks and stamps the token).
BEGIN;
SELECT fence_try_xact_lease('curve-tables', '1 min');
SELECT curve_write('curve_t', :tables);
COMMIT;
