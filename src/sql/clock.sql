
-- The lease clock (src/clock.c, controls in src/lease_sql.c).
