-- Single-row UPDATE of a random row of the unprotected table.
\set id random(1, :rows)
UPDATE bulk_plain SET v = v + 1 WHERE id = :id;
