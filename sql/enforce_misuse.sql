-- The fence_enforce trigger used wrongly, and fence_protect's up-front
-- checks: every error names the table, and the column where there is one.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

CREATE TABLE enf_m (id int PRIMARY KEY, note text, fence bigint);
INSERT INTO enf_m VALUES (1, 'a', 32);

-- Only BEFORE ... FOR EACH ROW on INSERT, UPDATE, DELETE.
CREATE TRIGGER enf_after AFTER UPDATE ON enf_m
  FOR EACH ROW EXECUTE FUNCTION fence_enforce('fence');
UPDATE enf_m SET note = 'b';
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER enf_after ON enf_m;
CREATE TRIGGER enf_stmt BEFORE UPDATE ON enf_m
  FOR EACH STATEMENT EXECUTE FUNCTION fence_enforce('fence');
UPDATE enf_m SET note = 'b';
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER enf_stmt ON enf_m;
CREATE TRIGGER enf_trunc BEFORE TRUNCATE ON enf_m
  FOR EACH STATEMENT EXECUTE FUNCTION fence_enforce();
TRUNCATE enf_m;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER enf_trunc ON enf_m;
CREATE VIEW enf_v AS SELECT * FROM enf_m;
CREATE TRIGGER enf_instead INSTEAD OF UPDATE ON enf_v
  FOR EACH ROW EXECUTE FUNCTION fence_enforce('fence');
UPDATE enf_v SET note = 'b';
\echo :LAST_ERROR_SQLSTATE
DROP VIEW enf_v;
-- A trigger function cannot be called directly at all.
SELECT fence_enforce();
\echo :LAST_ERROR_SQLSTATE

-- The column: it must exist, be fence_token, bigint or integer, and be
-- stored.  Errors come at the first write.
CREATE TRIGGER enf_t BEFORE INSERT OR UPDATE OR DELETE ON enf_m
  FOR EACH ROW EXECUTE FUNCTION fence_enforce('fencing');
UPDATE enf_m SET note = 'b';
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER enf_t ON enf_m;
CREATE TRIGGER enf_t BEFORE INSERT OR UPDATE OR DELETE ON enf_m
  FOR EACH ROW EXECUTE FUNCTION fence_enforce('note');
UPDATE enf_m SET note = 'b';
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER enf_t ON enf_m;
-- Column names are exact: "Fence" is not fence.
CREATE TRIGGER enf_t BEFORE INSERT OR UPDATE OR DELETE ON enf_m
  FOR EACH ROW EXECUTE FUNCTION fence_enforce('Fence');
UPDATE enf_m SET note = 'b';
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER enf_t ON enf_m;
CREATE TABLE enf_gen (id int, fence bigint GENERATED ALWAYS AS (id * 2) STORED);
CREATE TRIGGER enf_t BEFORE INSERT OR UPDATE OR DELETE ON enf_gen
  FOR EACH ROW EXECUTE FUNCTION fence_enforce();
INSERT INTO enf_gen VALUES (1);
\echo :LAST_ERROR_SQLSTATE
DROP TABLE enf_gen;

-- With no argument the column is "fence".
CREATE TRIGGER enf_t BEFORE INSERT OR UPDATE OR DELETE ON enf_m
  FOR EACH ROW EXECUTE FUNCTION fence_enforce();
UPDATE enf_m SET note = 'c', fence = 31;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER enf_t ON enf_m;

-- Options.
CREATE FUNCTION enf_try_args(VARIADIC args text[]) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TRIGGER enf_t BEFORE INSERT OR UPDATE OR DELETE ON enf_m
                  FOR EACH ROW EXECUTE FUNCTION fence_enforce(%s)',
                 (SELECT string_agg(quote_literal(a), ', ') FROM unnest(args) a));
  BEGIN
    UPDATE enf_m SET note = note;
  EXCEPTION WHEN OTHERS THEN
    DROP TRIGGER enf_t ON enf_m;
    RETURN SQLSTATE || ': ' || SQLERRM;
  END;
  DROP TRIGGER enf_t ON enf_m;
  RETURN 'ok';
END $$;
SELECT enf_try_args('fence', 'on_stale=skip');
SELECT enf_try_args('fence', 'on_stale=ERROR');
SELECT enf_try_args('fence', 'on_stale=maybe');
SELECT enf_try_args('fence', 'on_stale');
SELECT enf_try_args('fence', 'on_stale=skip', 'on_stale=error');
SELECT enf_try_args('fence', 'strict');
SELECT enf_try_args('fence', 'strict=false');
SELECT enf_try_args('fence', 'strict=perhaps', 'lease=x');
SELECT enf_try_args('fence', 'require_token=on');
SELECT enf_try_args('fence', 'require_token', 'require_token');
SELECT enf_try_args('fence', 'colour=blue');
SELECT enf_try_args('fence', 'lease=');
SELECT enf_try_args('fence', 'lease');
SELECT enf_try_args('fence', 'lease=lock:m-{id}');
SELECT enf_try_args('fence', 'lease=lock:m-{{id}}');
SELECT enf_try_args('fence', 'lease=lock:m-{nope}');
SELECT enf_try_args('fence', 'lease=lock:m-{fence}');
SELECT enf_try_args('fence', 'lease=lock:m-{id');
SELECT enf_try_args('fence', 'lease=lock:m-}');
SELECT enf_try_args('fence', 'lease=lock:m-{}');
SELECT enf_try_args('fence', 'lease=' || repeat('x', 200));
SELECT enf_try_args('fence', 'lease=' || repeat('x', 201));
SELECT enf_try_args('fence', 'lease=a', 'lease=b');

-- The cache follows the table: a renamed column is missed at the next
-- write, and found again when it comes back; a new type is checked.
SELECT fence_protect('enf_m');
UPDATE enf_m SET note = 'd', fence = 33 RETURNING *;
ALTER TABLE enf_m RENAME COLUMN fence TO fence2;
UPDATE enf_m SET note = 'e';
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE enf_m RENAME COLUMN fence2 TO fence;
UPDATE enf_m SET note = 'e', fence = 32;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE enf_m ALTER COLUMN fence TYPE numeric;
UPDATE enf_m SET note = 'f';
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE enf_m ALTER COLUMN fence TYPE bigint;
-- Options replaced by fence_protect take effect at once in this session.
SELECT fence_protect('enf_m', on_stale => 'skip');
UPDATE enf_m SET note = 'g', fence = 32 RETURNING *;
SELECT fence_protect('enf_m');
UPDATE enf_m SET note = 'g', fence = 32 RETURNING *;
\echo :LAST_ERROR_SQLSTATE

-- fence_protect checks everything up front, and makes no trigger when a
-- check fails.
SELECT fence_unprotect('enf_m');
SELECT fence_protect('enf_m', column_name => 'fencing');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_m', column_name => 'note');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_m', on_stale => 'ignore');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_m', strict => true);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_m', lease => 'lock:m-{nope}');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_m', lease => '');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_m', column_name => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_m', on_stale => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_m', strict => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_m', require_token => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_nope');
\echo :LAST_ERROR_SQLSTATE
CREATE VIEW enf_v AS SELECT * FROM enf_m;
SELECT fence_protect('enf_v');
\echo :LAST_ERROR_SQLSTATE
CREATE SEQUENCE enf_seq;
SELECT fence_protect('enf_seq');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_unprotect(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'enf_m'::regclass;

-- The trigger fence_protect makes, with every option (quoted as needed).
SELECT fence_protect('enf_m', column_name => 'fence', on_stale => 'skip',
                     lease => 'lock:it''s-{id}', strict => true, require_token => true);
SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = 'enf_m'::regclass;
-- Calling it again replaces it: still one trigger.
SELECT fence_protect('enf_m');
SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = 'enf_m'::regclass;

-- Privileges: fence_protect needs the TRIGGER privilege on the table,
-- fence_unprotect ownership (as DROP TRIGGER does).
CREATE ROLE regress_enf_plain;
SET ROLE regress_enf_plain;
SELECT fence_protect('enf_m');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_unprotect('enf_m');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT TRIGGER ON enf_m TO regress_enf_plain;
SET ROLE regress_enf_plain;
SELECT fence_protect('enf_m', on_stale => 'skip');
RESET ROLE;

-- A quoted, mixed-case schema and table.
CREATE SCHEMA "Enf Schema";
CREATE TABLE "Enf Schema"."Odd ""Name""" (id int, "My Fence" integer);
SELECT fence_protect('"Enf Schema"."Odd ""Name"""', column_name => 'My Fence');
INSERT INTO "Enf Schema"."Odd ""Name""" VALUES (1, 5);
UPDATE "Enf Schema"."Odd ""Name""" SET "My Fence" = 4;
\echo :LAST_ERROR_SQLSTATE
SELECT fence_unprotect('"Enf Schema"."Odd ""Name"""');

DROP SCHEMA "Enf Schema" CASCADE;
DROP VIEW enf_v;
DROP SEQUENCE enf_seq;
DROP TABLE enf_m;
DROP FUNCTION enf_try_args(text[]);
DROP ROLE regress_enf_plain;
