-- The extension as installed: its version, and a comment on every object it
-- owns (what \dx+, \df+ and \dT+ show a user), casts, operator classes and
-- families included.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

SELECT extversion, extversion = (SELECT default_version FROM pg_available_extensions
                                 WHERE name = 'fence') AS is_default
FROM pg_extension WHERE extname = 'fence';

-- The versions installable: every older one as it shipped, and the default.
SELECT v.version, v.version = e.default_version AS is_default
FROM pg_available_extension_versions v JOIN pg_available_extensions e USING (name)
WHERE name = 'fence'
ORDER BY v.version;

-- Objects without a comment: none.  Newer PostgreSQL versions (18 here)
-- also record a type's array type and a view's row type as members; those
-- come with the type or view they belong to and get no comment of their own.
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS uncommented
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'fence')
  AND d.deptype = 'e'
  AND obj_description(d.objid, d.classid::regclass::text) IS NULL
  AND NOT EXISTS (SELECT 1 FROM pg_type t
                  WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
                    AND (t.typcategory = 'A' OR t.typrelid <> 0))
ORDER BY 1;

-- The query above sees every kind of object the extension has.
SELECT array_agg(DISTINCT d.classid::regclass::text ORDER BY d.classid::regclass::text) AS kinds
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'fence')
  AND d.deptype = 'e';
