-- Single-row UPDATE of a random row of the table with the no-op C trigger
-- (the floor of any BEFORE ROW UPDATE trigger).
\set id random(1, :rows)
UPDATE bulk_noop SET v = v + 1 WHERE id = :id;
