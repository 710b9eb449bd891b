-- The same transaction as curve_tables.sql on :tables unprotected tables
-- (curve_u1 ... curve_uN): what PostgreSQL costs without the triggers.
BEGIN;
SELECT fence_try_xact_lease('curve-tables-plain', '1 min');
SELECT curve_write('curve_u', :tables);
COMMIT;
