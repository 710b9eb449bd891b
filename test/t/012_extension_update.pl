# ALTER EXTENSION fence UPDATE from every older version.
#
# Database "old" installs fence 1.0 (the frozen script, as it shipped),
# protects tables, takes leases of every scope and writes fenced rows; then
# the server restarts (the procedure doc/upgrading.md gives:
# install the new files, restart, ALTER EXTENSION fence UPDATE) and the
# extension is updated, through every version in between.  Databases "old11"
# and "old12" install fence 1.1 and 1.2 (their frozen scripts) and are
# updated the same way.
# Database "fresh" installs the current version.
# Proven:
#  (a) every member object of each updated extension is defined exactly as
#      in the fresh install: functions with all their flags, types,
#      operators, operator classes and families, casts, views, the counter
#      sequence, their comments and privileges;
#  (b) fences, the counter and the protected tables' triggers survive: the
#      rows keep their fences, a stale holder is still rejected, a new
#      holder writes, and no token is handed out twice across the update;
#  (c) an update from a version that does not exist fails with PostgreSQL's
#      own error.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fence_node('update', conf => "fence.test_clock = on\nmax_prepared_transactions = 2\n");
my $current = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'fence'});
my @versions = split /\n/, $node->safe_psql('postgres',
	q{SELECT version FROM pg_available_extension_versions WHERE name = 'fence' ORDER BY version});
for my $v ('1.0', '1.1', '1.2')
{
	ok((grep { $_ eq $v } @versions), "$v is installable beside $current");
}

# One description line per member object of the extension in this
# database: everything CREATE/ALTER can set on it.  Objects are named by
# pg_describe_object and by their signature, never by OID.
my $describe = q{
WITH members AS (
	SELECT d.classid, d.objid
	  FROM pg_depend d
	 WHERE d.refclassid = 'pg_extension'::regclass
	   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'fence')
	   AND d.deptype = 'e'
)
SELECT line FROM (
	SELECT 'function ' || p.oid::regprocedure::text || ' returns ' || pg_get_function_result(p.oid)
	       || ' volatile=' || p.provolatile::text || ' parallel=' || p.proparallel::text
	       || ' strict=' || p.proisstrict || ' secdef=' || p.prosecdef
	       || ' leakproof=' || p.proleakproof || ' cost=' || p.procost
	       || ' rows=' || p.prorows || ' kind=' || p.prokind::text
	       || ' config=' || coalesce(p.proconfig::text, '-')
	       || ' acl=' || coalesce(p.proacl::text, '-')
	       || ' lang=' || l.lanname
	       || ' body=' || CASE WHEN l.lanname = 'c' THEN p.probin || ':' || p.prosrc
	                           WHEN p.prokind = 'a' THEN (
	                               SELECT a.aggtransfn::text || ' ' || a.aggfinalfn::text || ' '
	                                      || a.aggcombinefn::text || ' '
	                                      || a.aggsortop::regoperator::text || ' '
	                                      || a.aggtranstype::regtype::text
	                                 FROM pg_aggregate a WHERE a.aggfnoid = p.oid)
	                           ELSE md5(pg_get_functiondef(p.oid)) END
	       || ' comment=' || coalesce(obj_description(p.oid, 'pg_proc'), '-') AS line
	  FROM members m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
	  JOIN pg_language l ON l.oid = p.prolang
	UNION ALL
	SELECT 'type ' || t.oid::regtype::text || ' len=' || t.typlen || ' byval=' || t.typbyval
	       || ' type=' || t.typtype::text || ' category=' || t.typcategory::text
	       || ' preferred=' || t.typispreferred || ' align=' || t.typalign::text
	       || ' storage=' || t.typstorage::text
	       || ' io=' || t.typinput::text || '/' || t.typoutput::text || '/'
	       || t.typreceive::text || '/' || t.typsend::text
	       || ' comment=' || coalesce(obj_description(t.oid, 'pg_type'), '-')
	  FROM members m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
	UNION ALL
	SELECT 'operator ' || o.oid::regoperator::text || ' returns ' || o.oprresult::regtype::text
	       || ' code=' || o.oprcode::text || ' com=' || o.oprcom::regoperator::text
	       || ' negate=' || o.oprnegate::regoperator::text
	       || ' rest=' || o.oprrest::text || ' join=' || o.oprjoin::text
	       || ' merges=' || o.oprcanmerge || ' hashes=' || o.oprcanhash
	       || ' comment=' || coalesce(obj_description(o.oid, 'pg_operator'), '-')
	  FROM members m JOIN pg_operator o ON m.classid = 'pg_operator'::regclass AND o.oid = m.objid
	UNION ALL
	SELECT 'cast ' || c.castsource::regtype::text || ' as ' || c.casttarget::regtype::text
	       || ' func=' || c.castfunc::regprocedure::text || ' context=' || c.castcontext::text
	       || ' method=' || c.castmethod::text
	       || ' comment=' || coalesce(obj_description(c.oid, 'pg_cast'), '-')
	  FROM members m JOIN pg_cast c ON m.classid = 'pg_cast'::regclass AND c.oid = m.objid
	UNION ALL
	SELECT 'opclass ' || pg_describe_object('pg_opclass'::regclass, oc.oid, 0)
	       || ' type=' || oc.opcintype::regtype::text || ' default=' || oc.opcdefault
	       || ' family=' || pg_describe_object('pg_opfamily'::regclass, oc.opcfamily, 0)
	       || ' comment=' || coalesce(obj_description(oc.oid, 'pg_opclass'), '-')
	  FROM members m JOIN pg_opclass oc ON m.classid = 'pg_opclass'::regclass AND oc.oid = m.objid
	UNION ALL
	SELECT 'opfamily ' || pg_describe_object('pg_opfamily'::regclass, f.oid, 0) || ': '
	       || coalesce((SELECT string_agg('op ' || ao.amopstrategy || ' '
	                                      || ao.amoplefttype::regtype::text || ','
	                                      || ao.amoprighttype::regtype::text || ' '
	                                      || ao.amopopr::regoperator::text || ' purpose='
	                                      || ao.amoppurpose::text || ' '
	                                      || coalesce((SELECT 'in ' || pg_describe_object('pg_opclass'::regclass, d.refobjid, 0)
	                                                     FROM pg_depend d
	                                                    WHERE d.classid = 'pg_amop'::regclass AND d.objid = ao.oid
	                                                      AND d.refclassid = 'pg_opclass'::regclass), 'loose'), '; '
	                                      ORDER BY ao.amopstrategy, ao.amoplefttype::regtype::text,
	                                               ao.amoprighttype::regtype::text)
	                     FROM pg_amop ao WHERE ao.amopfamily = f.oid), '-')
	       || ' | '
	       || coalesce((SELECT string_agg('proc ' || ap.amprocnum || ' '
	                                      || ap.amproclefttype::regtype::text || ','
	                                      || ap.amprocrighttype::regtype::text || ' '
	                                      || ap.amproc::regprocedure::text || ' '
	                                      || coalesce((SELECT 'in ' || pg_describe_object('pg_opclass'::regclass, d.refobjid, 0)
	                                                     FROM pg_depend d
	                                                    WHERE d.classid = 'pg_amproc'::regclass AND d.objid = ap.oid
	                                                      AND d.refclassid = 'pg_opclass'::regclass), 'loose'), '; '
	                                      ORDER BY ap.amprocnum, ap.amproclefttype::regtype::text,
	                                               ap.amprocrighttype::regtype::text)
	                     FROM pg_amproc ap WHERE ap.amprocfamily = f.oid), '-')
	       || ' comment=' || coalesce(obj_description(f.oid, 'pg_opfamily'), '-')
	  FROM members m JOIN pg_opfamily f ON m.classid = 'pg_opfamily'::regclass AND f.oid = m.objid
	UNION ALL
	SELECT 'relation ' || c.oid::regclass::text || ' kind=' || c.relkind::text
	       || ' acl=' || coalesce(c.relacl::text, '-')
	       || ' options=' || coalesce(c.reloptions::text, '-')
	       || ' def=' || CASE WHEN c.relkind::text = 'v' THEN pg_get_viewdef(c.oid)
	                          WHEN c.relkind::text = 'S' THEN (
	                              SELECT s.seqtypid::regtype::text || ' ' || s.seqstart || ' '
	                                     || s.seqincrement || ' ' || s.seqmin || ' ' || s.seqmax
	                                     || ' ' || s.seqcache || ' ' || s.seqcycle
	                                FROM pg_sequence s WHERE s.seqrelid = c.oid)
	                          ELSE '-' END
	       || ' columns=' || coalesce((SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
	                                     FROM pg_attribute a
	                                    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '-')
	       || ' comment=' || coalesce(obj_description(c.oid, 'pg_class'), '-')
	  FROM members m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
	UNION ALL
	SELECT 'other ' || pg_describe_object(m.classid, m.objid, 0)
	  FROM members m
	 WHERE m.classid NOT IN ('pg_proc'::regclass, 'pg_type'::regclass, 'pg_operator'::regclass,
	                         'pg_cast'::regclass, 'pg_opclass'::regclass,
	                         'pg_opfamily'::regclass, 'pg_class'::regclass)
) lines ORDER BY line COLLATE "C"};

# --- 1.0, in use --------------------------------------------------------------

$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', q{CREATE EXTENSION fence VERSION '1.0'});
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'fence'}),
	'1.0', 'database old runs fence 1.0');
$node->safe_psql('old', q{
CREATE TABLE jobs (id int PRIMARY KEY, state text, fence fence_token NOT NULL DEFAULT 0);
SELECT fence_protect('jobs');
CREATE TABLE seats (id int PRIMARY KEY, holder text, fence fence_token NOT NULL DEFAULT 0);
INSERT INTO seats VALUES (1, NULL, 0), (2, NULL, 0);
SELECT fence_protect('seats', lease => 'seat:{id}', strict => true);
});

# Session leases, each writing its job row.
my @before;
for my $id (1 .. 5)
{
	push @before, $node->safe_psql('old', qq{
SELECT fence_try_lease('job-$id', '1 min');
INSERT INTO jobs (id, state) VALUES ($id, 'v1');
});
}
# A transaction lease that writes a strict row, and one that rolls back.
push @before, split /\n/, $node->safe_psql('old', q{
BEGIN;
SELECT fence_try_xact_lease('seat:1', '1 min');
UPDATE seats SET holder = 'ana' WHERE id = 1;
COMMIT;
BEGIN;
SELECT fence_try_xact_lease('seat:2', '1 min');
ROLLBACK;
});
# A detached lease held across the update.
my $detached = $node->safe_psql('old',
	q{SELECT fence_try_lease('nightly', '1 hour', owner => 'cron-1')});
push @before, $detached;
my $stale = $node->safe_psql('old', 'SELECT fence FROM jobs WHERE id = 2');
# A newer holder of job-2 writes, so the old token $stale is stale on row 2.
push @before, split /\n/, $node->safe_psql('old', q{
SELECT fence_break('job-2');
SELECT fence_try_lease('job-2', '1 min');
UPDATE jobs SET state = 'v2' WHERE id = 2;
});
my $rows = $node->safe_psql('old', 'SELECT id, state, fence FROM jobs ORDER BY id');
my $seat_rows = $node->safe_psql('old', 'SELECT id, holder, fence FROM seats ORDER BY id');
my $max_before = $node->safe_psql('old', 'SELECT fence_advance_tokens(0)');
cmp_ok($max_before, '>=', max_of(grep { /^\d+$/ } @before),
	'the counter is at or above every token handed out under 1.0');

# --- 1.1 ---------------------------------------------------------------------

$node->safe_psql('postgres', 'CREATE DATABASE old11');
$node->safe_psql('old11', q{CREATE EXTENSION fence VERSION '1.1'});
is($node->safe_psql('old11', q{SELECT extversion FROM pg_extension WHERE extname = 'fence'}),
	'1.1', 'database old11 runs fence 1.1');

$node->safe_psql('postgres', 'CREATE DATABASE old12');
$node->safe_psql('old12', q{CREATE EXTENSION fence VERSION '1.2'});
is($node->safe_psql('old12', q{SELECT extversion FROM pg_extension WHERE extname = 'fence'}),
	'1.2', 'database old12 runs fence 1.2');

# --- restart, update ----------------------------------------------------------

$node->restart;

# A view of the user's own on fence_leases blocks the update (which makes
# that view again, with a new column): a clear error, and nothing changed.
$node->safe_psql('old', 'CREATE VIEW my_leases AS SELECT key, token FROM fence_leases');
my ($vret, $vout, $verr) = $node->psql('old', q{
\set VERBOSITY verbose
ALTER EXTENSION fence UPDATE});
isnt($vret, 0, 'a view built on fence_leases makes the update fail');
like($verr, qr/ERROR:\s+2BP01: cannot drop view fence_leases because other objects depend on it/,
	'... with SQLSTATE 2BP01 naming fence_leases');
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'fence'}),
	'1.0', '... and the extension is still 1.0');
is($node->safe_psql('old', q{SELECT count(*) > 0 FROM pg_proc WHERE proname = 'fence_try_permit'}),
	'f', '... without any object of the update');
$node->safe_psql('old', 'DROP VIEW my_leases');

is($node->safe_psql('old', qq{
SELECT path FROM pg_extension_update_paths('fence') WHERE source = '1.0' AND target = '$current'}),
	"1.0--1.1--1.2--$current", "the update from 1.0 to $current runs through 1.1 and 1.2");
$node->safe_psql('old', 'ALTER EXTENSION fence UPDATE');
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'fence'}),
	$current, "database old updated to $current");
$node->safe_psql('old11', 'ALTER EXTENSION fence UPDATE');
is($node->safe_psql('old11', q{SELECT extversion FROM pg_extension WHERE extname = 'fence'}),
	$current, "database old11 updated to $current");
$node->safe_psql('old12', 'ALTER EXTENSION fence UPDATE');
is($node->safe_psql('old12', q{SELECT extversion FROM pg_extension WHERE extname = 'fence'}),
	$current, "database old12 updated to $current");

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION fence');

# (a) identical objects.
my $fresh = $node->safe_psql('fresh', $describe);
cmp_ok(scalar(split /\n/, $fresh), '>', 50, 'the description covers every member object');
for my $from (['old', '1.0'], ['old11', '1.1'], ['old12', '1.2'])
{
	my ($db, $version) = @$from;
	my $updated = $node->safe_psql($db, $describe);
	my $name = "every member object of the extension updated from $version is as in a fresh install";
	if ($updated eq $fresh)
	{
		pass($name);
	}
	else
	{
		my %u = map { $_ => 1 } split /\n/, $updated;
		my %f = map { $_ => 1 } split /\n/, $fresh;
		fail($name);
		diag("only after the update from $version: $_") for grep { !$f{$_} } sort keys %u;
		diag("only in a fresh install: $_") for grep { !$u{$_} } sort keys %f;
	}
}

# (b) fences, the counter and the triggers.
is($node->safe_psql('old', 'SELECT id, state, fence FROM jobs ORDER BY id'),
	$rows, 'the rows keep their fences');
is($node->safe_psql('old', 'SELECT id, holder, fence FROM seats ORDER BY id'),
	$seat_rows, 'the strict table keeps its fences');
is($node->safe_psql('old', q{
SELECT count(*) FROM pg_trigger
 WHERE tgrelid IN ('jobs'::regclass, 'seats'::regclass) AND NOT tgisinternal}),
	2, 'both protected tables keep their trigger');
is(sql_state($node, 'old',
		"BEGIN; SELECT fence_use_token($stale); UPDATE jobs SET state = 'stale' WHERE id = 2; COMMIT;"),
	'LF001', 'a holder from before the update is still rejected');
my @after = split /\n/, $node->safe_psql('old', q{
SELECT fence_try_lease('after-' || g, '1 min') FROM generate_series(1, 5) g});
cmp_ok(min_of(@after), '>', $max_before,
	'every token after the update is above every token before it');
is($node->psql('old', q{
SELECT fence_try_lease('job-2', '1 min') IS NOT NULL;
UPDATE jobs SET state = 'v3' WHERE id = 2;}), 0, 'a new holder writes');
cmp_ok($node->safe_psql('old', 'SELECT fence FROM jobs WHERE id = 2'), '>', $stale,
	'and its token is stamped on the row');
is(sql_state($node, 'old',
		q{BEGIN; SELECT fence_try_xact_lease('seat:1', '1 min'); UPDATE seats SET holder = 'bo' WHERE id = 1; COMMIT;}),
	'', 'the strict table accepts a holder of its lease');
my $released = $node->safe_psql('old', q{
SELECT fence_try_lease('seat:2', '1 min');
SELECT fence_release('seat:2', fence_current_token('seat:2'));}, );
($released) = split /\n/, $released;
is(sql_state($node, 'old',
		"BEGIN; SELECT fence_use_token($released); UPDATE seats SET holder = 'eve' WHERE id = 2; COMMIT;"),
	'LF002', 'and refuses a token whose lease was released');

# (c) an unknown version.
my ($ret, $out, $err) = $node->psql('old', q{ALTER EXTENSION fence UPDATE TO '0.9'});
isnt($ret, 0, 'an update to an unknown version fails');
like($err, qr/extension "fence" has no update path from version "\Q$current\E" to version "0.9"/,
	"with PostgreSQL's own message");

$node->stop;
done_testing();
