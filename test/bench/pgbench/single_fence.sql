-- Single-row UPDATE of a random row of the fence-protected table.  On its
-- first transaction each client takes the detached lease 'bench-single'
-- with the shared owner 'bench' (a re-acquire by the same owner returns the
-- same token), so every client writes with one token in effect and the
-- trigger compares and sets the fence of every row.  Run with -D tok=0.
-- (No ':' in the key: pgbench takes ':name' for a variable even inside
-- quotes.)
\set id random(1, :rows)
\if :tok = 0
SELECT fence_try_lease('bench-single', '1 hour', 'bench') AS tok \gset
\endif
UPDATE bulk_fence SET v = v + 1 WHERE id = :id;
