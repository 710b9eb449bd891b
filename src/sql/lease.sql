
-- Leases (src/lease_sql.c).
