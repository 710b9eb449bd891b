# Security.
#
# 1. The install script resists search_path attacks: a lint of the built
#    install and update scripts finds every object it creates, every type in a
#    signature, and every function or operator it references qualified
#    with @extschema@ or pg_catalog (names of keyword types such as bigint
#    are resolved by the grammar and need no schema); functions written in
#    SQL or PL/pgSQL pin their search_path.  Then, with a hostile schema
#    first in search_path holding look-alikes of fence's functions and of
#    the built-ins, fence's views, functions and fence_protect still use
#    their own objects.
# 2. A plain role cannot release, renew or break another backend's session
#    lease, cannot advance or touch the token counter, cannot move the
#    clock; it sees other roles' leases in fence_leases only as much as
#    pg_stat_activity shows of other roles' sessions (no key, no owner, no
#    token).  A detached lease belongs to the role that took it: another
#    role using the same owner name cannot take, extend, renew or release
#    it, and fence_lease_status does not confirm another role's key.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fence_node('security', conf => "fence.test_clock = on\n");

# --- 1a. lint of the install script ----------------------------------------------

my $sharedir = $node->config_data('--sharedir');
my $version = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'fence'});
# The fresh install script of the current version and every update script
# (fence--1.0.sql is frozen as it shipped and was linted then).
my @updates = glob("$sharedir/extension/fence--*--*.sql");
my @scripts = ("$sharedir/extension/fence--$version.sql", sort @updates);
ok(scalar(@scripts) >= 2, 'the lint finds the install script and an update script');
my $script = join("\n;\n", map { slurp_file($_) } @scripts);

# Names the grammar resolves itself (SQL keyword types) and words of DDL
# syntax that may precede "(".
my %keyword_type = map { $_ => 1 }
  qw(bigint integer int smallint boolean real numeric interval decimal float
  double precision char character varchar timestamp time bit);
my %pg_type = map { $_ => 1 } split /\n/, $node->safe_psql('postgres',
	q{SELECT typname FROM pg_type WHERE typnamespace = 'pg_catalog'::regnamespace AND typname !~ '^_'});
my %pg_func = map { $_ => 1 } split /\n/, $node->safe_psql('postgres',
	q{SELECT DISTINCT proname FROM pg_proc WHERE pronamespace = 'pg_catalog'::regnamespace});
my %syntax = map { $_ => 1 }
  qw(cast operator function procedure aggregate values in out inout variadic
  returns table setof as on storage with grant revoke to from default
  coalesce nullif greatest least exists any all array row);

my @problems;
my @bodies;
(my $text = $script) =~ s/--[^\n]*//g;            # comments
$text =~ s/^\\[^\n]*//mg;                          # psql's \echo ... \quit guard
$text =~ s/\$(\w*)\$(.*?)\$\1\$/push @bodies, $2; "''"/gse; # dollar-quoted bodies
$text =~ s/'(?:[^']|'')*'/''/g;                  # string literals
for my $stmt (split /;/, $text)
{
	(my $one = $stmt) =~ s/\s+/ /g;
	$one =~ s/^ //;
	next if $one eq '';
	my $head = substr($one, 0, 70);

	# Created, altered or granted objects.
	if ($one =~ /^(?:CREATE|ALTER|COMMENT ON|DROP)\s+(?:OR REPLACE\s+)?(?:DEFAULT\s+)?
			(FUNCTION|PROCEDURE|AGGREGATE|TYPE|VIEW|SEQUENCE|TABLE|OPERATOR\s+CLASS|OPERATOR\s+FAMILY|OPERATOR|SCHEMA|DOMAIN)\s+(\S+)/xi)
	{
		push @problems, "unqualified $1 name $2: $head"
		  unless $2 =~ /^(?:\@extschema\@|pg_catalog)\./;
	}
	if ($one =~ /^(?:GRANT|REVOKE)\b.*?\bON\s+(?:FUNCTION\s+|SEQUENCE\s+|TABLE\s+)?(\S+)/i)
	{
		push @problems, "unqualified grant target $1: $head"
		  unless $1 =~ /^(?:\@extschema\@|pg_catalog)\./;
	}

	# Every remaining bare word that names a built-in type, or a function
	# call, must be qualified.
	my $bare = $one;
	$bare =~ s/(?:\@extschema\@|pg_catalog)\.(?:"[^"]*"|\w+|[-+*\/<>=~!\@#%^&|`?]+)//g;
	while ($bare =~ /(?<![\w.\$])([A-Za-z_]\w*)(\s*\()?/g)
	{
		my ($word, $call) = (lc $1, $2);
		next if $keyword_type{$word};
		if ($call)
		{
			push @problems, "unqualified call $word(): $head"
			  if $pg_func{$word} && !$syntax{$word} && !$pg_type{$word};
			push @problems, "unqualified type $word: $head"
			  if $pg_type{$word} && !$syntax{$word};
			next;
		}
		push @problems, "unqualified type $word: $head"
		  if $pg_type{$word} && $word ne 'name' && $word ne 'char';
	}
	# "name" and "char" are common words; flag them where they are types.
	while ($bare =~ /\b(?:OUT|INOUT|RETURNS)\s+(?:\w+\s+)?(name|char)\b/gi)
	{
		push @problems, "unqualified type $1: $head";
	}

	# Operators outside operator definitions must be OPERATOR(schema.op).
	if ($one =~ /^CREATE\s+(?:OR REPLACE\s+)?VIEW/i)
	{
		push @problems, "bare operator in a view: $head"
		  if $bare =~ /[<>=!]/;
	}
}

my @types = grep { /^unqualified type / } @problems;
my @others = grep { !/^unqualified type / } @problems;
is(scalar(@others), 0,
	'no unqualified object name, function call or operator in the install script')
  or diag(join("\n", @others));
is(scalar(@types), 0, 'the install script qualifies every built-in type name')
  or diag(join("\n", @types));

my $unpinned = $node->safe_psql('postgres', q{
SELECT string_agg(p.oid::regprocedure::text, ', ')
  FROM pg_depend d JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  JOIN pg_language l ON l.oid = p.prolang
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'fence')
   AND d.deptype = 'e'
   AND l.lanname NOT IN ('c', 'internal')
   AND p.prosqlbody IS NULL
   AND NOT coalesce(p.proconfig::text[] && ARRAY(
         SELECT c FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%'), false)});
is($unpinned, '', 'every SQL or PL/pgSQL function of fence pins its search_path');

# --- 1b. a hostile search_path ---------------------------------------------------

$node->safe_psql('postgres', 'CREATE DATABASE hostile');
$node->safe_psql('hostile', q{
CREATE SCHEMA fence_ext;
CREATE EXTENSION fence SCHEMA fence_ext;
CREATE SCHEMA evil;
CREATE TABLE hijacks (what text);
-- Look-alikes of every fence function (same name and arguments) and of the
-- built-ins an install script or trigger could call.
DO $$
DECLARE f record;
BEGIN
	FOR f IN SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args,
	                pg_get_function_result(p.oid) AS res
	           FROM pg_proc p WHERE p.pronamespace = 'fence_ext'::regnamespace
	            AND p.prokind = 'f'
	            AND pg_get_function_result(p.oid) NOT IN ('trigger', 'cstring', 'internal')
	            AND pg_get_function_identity_arguments(p.oid) !~ 'internal|cstring'
	            AND pg_get_function_result(p.oid) NOT LIKE 'SETOF%'
	            AND pg_get_function_result(p.oid) NOT LIKE 'TABLE%'
	LOOP
		EXECUTE format('CREATE FUNCTION evil.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L',
			f.proname, f.args, f.res,
			'BEGIN INSERT INTO public.hijacks VALUES (' || quote_literal(f.proname) || '); '
			|| CASE WHEN f.res = 'void' THEN '' ELSE 'RETURN NULL; ' END || 'END');
	END LOOP;
END $$;
CREATE FUNCTION evil.fence_enforce() RETURNS trigger LANGUAGE plpgsql AS
	$$BEGIN INSERT INTO public.hijacks VALUES ('fence_enforce'); RETURN NEW; END$$;
CREATE FUNCTION evil.now() RETURNS timestamptz LANGUAGE sql AS $$SELECT 'epoch'::timestamptz$$;
CREATE TABLE docs (id int PRIMARY KEY, fence fence_ext.fence_token NOT NULL DEFAULT 0);
INSERT INTO docs VALUES (1, 0);
});
my $n_evil = $node->safe_psql('hostile',
	q{SELECT count(*) FROM pg_proc WHERE pronamespace = 'evil'::regnamespace});
cmp_ok($n_evil, '>=', 20, "$n_evil look-alike functions in schema evil");

my ($ret, $out, $err) = $node->psql('hostile', q{
SET search_path = evil, fence_ext, public;
SELECT fence_ext.fence_protect('docs', column_name => 'fence');
SELECT fence_ext.fence_try_lease('doc-1', '1 min') IS NOT NULL;
UPDATE docs SET id = 1 WHERE id = 1;
SELECT count(*) FROM fence_ext.fence_leases;
SELECT count(*) FROM fence_ext.fence_stats;
SELECT fence_ext.fence_release('doc-1', fence_ext.fence_current_token());
});
is($ret, 0, 'fence works with a hostile schema first in search_path') or diag($err);
is($node->safe_psql('hostile', 'SELECT count(*) FROM hijacks'), 0,
	'no look-alike was called');
is( $node->safe_psql('hostile', q{
SELECT p.pronamespace::regnamespace FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
 WHERE t.tgrelid = 'docs'::regclass AND NOT t.tgisinternal}),
	'fence_ext', "fence_protect's trigger calls fence's own fence_enforce");
ok($node->safe_psql('hostile', 'SELECT fence::bigint FROM docs') > 0,
	'the fenced write took the lease token');

# --- 2. privileges ----------------------------------------------------------------

$node->safe_psql('postgres', q{
CREATE ROLE regress_plain LOGIN;
CREATE ROLE regress_other LOGIN;
});

# A superuser session holds a session lease; a plain role's session too.
my $holder = bg_start($node, 'postgres', q{
SELECT 'TOK=' || fence_try_lease('sec-1', '1 hour');
SELECT pg_sleep(60);
}, appname => 'sec_holder');
ok(wait_until(10, sub { my @t = bg_tokens($holder); @t == 1 }), 'a superuser session holds sec-1');
my ($tS) = bg_tokens($holder);
my $expires = $node->safe_psql('postgres',
	q{SELECT expires_at FROM fence_leases WHERE key = 'sec-1'});

# Run SQL as a role: its output, SQLSTATE ('' on success) and stderr.
sub as_role
{
	my ($role, $sql) = @_;
	my ($r, $o, $e) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		connstr => $node->connstr('postgres') . " user=$role");
	my ($s) = $e =~ /ERROR:\s+([0-9A-Z]{5}):/;
	return ($o, $s // '', $e);
}
sub as_plain { return as_role('regress_plain', @_); }
sub as_other { return as_role('regress_other', @_); }

is((as_plain("SELECT fence_release('sec-1', $tS)"))[0], 'f',
	"a plain role cannot release another backend's session lease");
is((as_plain("SELECT fence_renew('sec-1', $tS, '2 hours')"))[0], 'f',
	"... nor renew it");
is((as_plain("SELECT fence_break('sec-1')"))[1], '42501', '... nor break it (42501)');
is((as_plain("SELECT fence_break(42)"))[1], '42501', 'fence_break(bigint) is admin-only too');
is( $node->safe_psql('postgres',
		qq{SELECT fence_lease_status('sec-1', $tS), expires_at = '$expires' FROM fence_leases WHERE key = 'sec-1'}),
	'held|t', 'the lease is still held, its expiry unchanged');
is((as_plain('SELECT fence_advance_tokens(1000000000)'))[1], '42501',
	'a plain role cannot advance the counter');
is((as_plain(q{SELECT nextval('fence_token_counter')}))[1], '42501', '... nor call nextval on it');
is((as_plain(q{SELECT setval('fence_token_counter', 1)}))[1], '42501', '... nor setval');
is((as_plain(q{ALTER SEQUENCE fence_token_counter RESTART}))[1], '42501', '... nor ALTER it');
is((as_plain(q{SELECT fence_set_clock(now() + interval '1 day')}))[1], '42501',
	'a plain role cannot set the clock');
is((as_plain(q{SELECT fence_advance_clock('1 day')}))[1], '42501', '... nor advance it');

# What a plain role sees of others' leases, next to pg_stat_activity.
my ($tP) = (as_plain(q{SELECT fence_try_lease('plain-own', '1 hour', owner => 'plain-worker')}))[0];
ok($tP > 0, 'a plain role takes its own detached lease');
is((as_plain(q{SELECT key, owner FROM fence_leases WHERE key = 'plain-own'}))[0],
	'plain-own|plain-worker', 'it sees its own lease in full');
my $pid = backend_pid_of($node, 'sec_holder');
is( (as_plain(qq{SELECT count(*), bool_and(key IS NULL AND owner IS NULL), bool_and(pid = $pid)
   FROM fence_leases WHERE pid = $pid}))[0],
	'1|t|t', "another role's lease: its row and pid are visible, its key and owner are not");
is( (as_plain(qq{SELECT query FROM pg_stat_activity WHERE pid = $pid}))[0],
	'<insufficient privilege>', '... as pg_stat_activity hides that session\'s query');
my ($r2, $o2) = $node->psql('postgres',
	qq{SELECT count(*) FILTER (WHERE key = 'plain-own' OR owner = 'plain-worker' OR token = $tP),
	          count(*) FILTER (WHERE key IS NULL AND owner IS NULL AND token IS NULL)
	     FROM fence_leases},
	connstr => $node->connstr('postgres') . ' user=regress_other');
is($o2, '0|2', "another plain role sees neither the plain role's key, nor its owner, nor its token");
$node->safe_psql('postgres', 'GRANT pg_read_all_stats TO regress_other');
($r2, $o2) = $node->psql('postgres',
	qq{SELECT key, owner FROM fence_leases WHERE token = $tP},
	connstr => $node->connstr('postgres') . ' user=regress_other');
is($o2, 'plain-own|plain-worker', 'a member of pg_read_all_stats sees it, as in pg_stat_activity');

# A detached lease belongs to the role that took it, not to its owner name
# alone: another role using the same owner name is another owner.
$node->safe_psql('postgres', 'REVOKE pg_read_all_stats FROM regress_other');
my ($tPay) = (as_plain(q{SELECT fence_try_lease('payroll', '1 hour', owner => 'payroll-worker')}))[0];
ok($tPay > 0, 'the plain role holds a detached lease as payroll-worker');
my $pay_expires = $node->safe_psql('postgres',
	q{SELECT expires_at FROM fence_leases WHERE key = 'payroll'});
is((as_other(q{SELECT fence_try_lease('payroll', '1 day', owner => 'payroll-worker') IS NULL}))[0],
	't', 'another role asking with the same owner name is refused, not handed the token');
is((as_other(q{SELECT fence_lease('payroll', '1 day', timeout => '100 ms', owner => 'payroll-worker')}))[1],
	'55P03', '... and waits like any other owner');
is((as_other("SELECT fence_release('payroll', $tPay)"))[0], 'f',
	'another role cannot release it with its token');
is((as_other("SELECT fence_renew('payroll', $tPay, '1 day')"))[0], 'f',
	'... nor renew it');
is( (as_other(qq{SELECT count(*), bool_and(key IS NULL AND owner IS NULL AND token IS NULL)
   FROM fence_leases WHERE expires_at = '$pay_expires'}))[0],
	'1|t', "another role sees the row but not the lease's key, owner or token");
is((as_other("SELECT fence_lease_status('payroll', $tPay)"))[0], 'released',
	'fence_lease_status does not confirm a guessed key of another role: released');
is((as_other("SELECT fence_lease_status('payroll', 1)"))[0], 'released',
	'... whatever the token');
is((as_other("SELECT fence_assert_current('payroll', $tPay)"))[1], 'LF002',
	'fence_assert_current: not held, as for a key never taken');
is((as_plain("SELECT fence_lease_status('payroll', $tPay)"))[0], 'held',
	'the owning role sees its lease held');
is( $node->safe_psql('postgres',
		qq{SELECT token = $tPay AND expires_at = '$pay_expires' FROM fence_leases WHERE key = 'payroll'}),
	't', 'the lease is unchanged: same token, same expiry');
is($node->safe_psql('postgres', "SELECT fence_release('payroll', $tPay)"), 'f',
	'a superuser as itself does not release another role\'s detached lease either');
is( $node->safe_psql('postgres',
		"SET ROLE regress_plain; SELECT fence_renew('payroll', $tPay, '2 hours')"),
	't', 'a superuser that sets the owning role renews it');
is((as_plain("SELECT fence_release('payroll', $tPay)"))[0], 't',
	'the owning role releases it');

# A limit on the detached leases of a role (fence.max_leases_per_role), set
# for one role by an administrator; a role cannot raise its own.
$node->safe_psql('postgres', 'ALTER ROLE regress_plain SET fence.max_leases_per_role = 3');
is((as_plain('SET fence.max_leases_per_role = 100'))[1], '42501',
	'a plain role cannot raise its own limit');
my @quota = map {
	(as_plain("SELECT fence_try_lease('quota-$_', '1 hour', owner => 'q')"))[0]
} 1 .. 2;
ok($quota[0] > 0 && $quota[1] > 0,
	'with plain-own, the plain role holds three detached leases');
my (undef, $qstate, $qerr) = as_plain(q{SELECT fence_try_lease('quota-3', '1 hour', owner => 'q')});
is($qstate, '53400', 'a fourth detached lease: 53400');
like($qerr, qr/DETAIL:.*3 detached or lock-delayed leases.*fence\.max_leases_per_role is 3/,
	'... whose detail gives the count and the limit');
like($qerr, qr/HINT:.*fence_release/, '... and whose hint says what to do');
is((as_plain(q{SELECT fence_lease('quota-3', '1 hour', timeout => '1 s', owner => 'q')}))[1],
	'53400', 'the blocking form fails the same, at once');
is((as_plain(q{SELECT fence_try_lease('quota-s', '1 hour') IS NOT NULL}))[0], 't',
	'a session lease is not limited (it ends with its session)');
is((as_plain("SELECT fence_try_lease('quota-1', '2 hours', owner => 'q') = $quota[0]"))[0], 't',
	'extending a lease it holds is not a new lease');
is((as_other(q{SELECT fence_try_lease('quota-o', '1 hour', owner => 'q') IS NOT NULL}))[0], 't',
	'another role has a limit of its own');
is( $node->safe_psql('postgres',
		q{SET fence.max_leases_per_role = 1;
		  SELECT count(fence_try_lease('quota-su-' || g, '1 hour', owner => 'su')) FROM generate_series(1, 3) g}),
	'3', 'superusers are not limited');
is((as_plain("SELECT fence_release('quota-1', $quota[0])"))[0], 't', 'after a release ...');
ok((as_plain(q{SELECT fence_try_lease('quota-3', '1 hour', owner => 'q')}))[0] > 0,
	'... the role may take another');
$node->safe_psql('postgres', q{SELECT fence_set_clock(now() + interval '3 hours')});
is( (as_plain(q{SELECT count(fence_try_lease('quota-late-' || g, '1 hour', owner => 'q')) FROM generate_series(1, 3) g}))[0],
	'3', 'expired detached leases do not count');
is((as_plain(q{SELECT fence_try_lease('quota-late-4', '1 hour', owner => 'q')}))[1], '53400',
	'... live ones do');
$node->safe_psql('postgres', q{SELECT fence_set_clock(NULL)});

$holder->{run}->kill_kill;
unlike(slurp_file($node->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$node->stop;
done_testing();
