-- The {column} placeholders of a lease name: a row must name the same lease
-- in every session and at every write, so a placeholder takes only a
-- column whose value the trigger sees (not a generated one) and whose text
-- does not depend on session settings.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

-- A stored generated column is computed after BEFORE triggers: refused,
-- by fence_protect and at the first write of a trigger written by hand.
CREATE TABLE enf_lg (id int, slot text GENERATED ALWAYS AS ('t' || id) STORED,
                     fence bigint NOT NULL DEFAULT 0);
SELECT fence_protect('enf_lg', lease => 'enfl:{slot}', strict => true);
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'enf_lg'::regclass;
CREATE TRIGGER zz_fence_enforce BEFORE INSERT OR UPDATE OR DELETE ON enf_lg
  FOR EACH ROW EXECUTE FUNCTION fence_enforce('fence', 'lease=enfl:{slot}');
INSERT INTO enf_lg (id) VALUES (1);
DROP TABLE enf_lg;

-- A timestamptz renders the same under every TimeZone and DateStyle: in
-- ISO form, in UTC, so sessions in two time zones name one lease.
CREATE TABLE enf_lt (id int PRIMARY KEY, at timestamptz NOT NULL, d date, ts timestamp,
                     fence bigint NOT NULL DEFAULT 0);
SELECT fence_protect('enf_lt', lease => 'enfl:{at}/{d}/{ts}', strict => true);
SELECT fence_try_lease('enfl:2026-12-01 09:00:00.5+00/2026-12-01/2026-12-01 09:00:00',
                       '1 minute')::bigint AS tl \gset
SET TimeZone = 'UTC';
INSERT INTO enf_lt VALUES (1, '2026-12-01 09:00:00.5+00', '2026-12-01', '2026-12-01 09:00:00')
  RETURNING id, at, fence = :tl AS stamped;
SET TimeZone = 'Europe/Paris';
SET DateStyle = 'SQL, DMY';
SET extra_float_digits = 3;
UPDATE enf_lt SET id = 1 WHERE id = 1 RETURNING id, at, fence = :tl AS stamped;
RESET TimeZone;
RESET DateStyle;
RESET extra_float_digits;
SELECT fence_release('enfl:2026-12-01 09:00:00.5+00/2026-12-01/2026-12-01 09:00:00', :tl);
-- Infinities render as their names.  (Not strict: the token in effect
-- for the lease the row names is the one stamped.)
SELECT fence_protect('enf_lt', lease => 'enfl:{at}/{d}/{ts}');
BEGIN;
SELECT fence_use_token(62, 'enfl:infinity/-infinity/infinity');
INSERT INTO enf_lt VALUES (2, 'infinity', '-infinity', 'infinity') RETURNING fence;
ROLLBACK;
DROP TABLE enf_lt;

-- Types whose text form is stable: rendered by their output function.
CREATE TYPE enf_mood AS ENUM ('calm', 'busy');
CREATE TABLE enf_ls (b bool, n numeric, u uuid, m enf_mood, c char(3), fence bigint NOT NULL DEFAULT 0);
SELECT fence_protect('enf_ls', lease => 'enfl:{b}/{n}/{u}/{m}/{c}');
BEGIN;
SELECT fence_use_token(61, 'enfl:t/1.50/00000000-0000-0000-0000-000000000001/busy/ab ');
INSERT INTO enf_ls VALUES (true, 1.50, '00000000-0000-0000-0000-000000000001', 'busy', 'ab')
  RETURNING fence;
ROLLBACK;
DROP TABLE enf_ls;
DROP TYPE enf_mood;

-- Types whose text form depends on session settings (extra_float_digits,
-- IntervalStyle, lc_monetary, bytea_output, ...) or that fence cannot vouch
-- for: refused.
CREATE TABLE enf_lx (f8 float8, iv interval, mo money, by bytea, ar int[], tz timetz,
                     fence bigint);
SELECT fence_protect('enf_lx', lease => 'enfl:{f8}');
SELECT fence_protect('enf_lx', lease => 'enfl:{iv}');
SELECT fence_protect('enf_lx', lease => 'enfl:{mo}');
SELECT fence_protect('enf_lx', lease => 'enfl:{by}');
SELECT fence_protect('enf_lx', lease => 'enfl:{ar}');
SELECT fence_protect('enf_lx', lease => 'enfl:{tz}');
-- A domain over a stable type is that type.
CREATE DOMAIN enf_code AS text CHECK (VALUE <> '');
ALTER TABLE enf_lx ADD COLUMN code enf_code;
SELECT fence_protect('enf_lx', lease => 'enfl:{code}');
DROP TABLE enf_lx;
DROP DOMAIN enf_code;
