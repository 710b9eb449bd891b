# Databases that come and go, and leases left by a dropped database.
#
# Each database that uses fence takes one of fence.max_databases slots of
# shared memory (its statistics and token high-water mark).  Proven with
# fence.max_databases = 3: more databases than that can be created, used
# and dropped in turn, because a dropped database's slot is reused by the
# next one that needs one; a database's slot stays while it exists (the
# error when every slot is in use names the setting); the detached leases
# and the breakers (with fence.max_breakers = 16) a dropped database left
# are freed as DROP DATABASE commits, and a live database's are kept;
# fence_break_dropped_databases() (an administrator's function) then finds
# nothing.  fence_advance_tokens() in a database without a slot gets one as
# a grant does, and fails with 54000 only when every slot belongs to a
# database that exists.  A sweep whose catalog snapshot predates a CREATE
# DATABASE leaves the new database's slot and leases alone.  A new database
# that gets a dropped one's OID (forced with pg_resetwal) inherits none of
# its leases, breakers or counter.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fence_node('dbslots',
	conf => "fence.max_databases = 3\nfence.max_leases = 16\nfence.max_breakers = 16\n");

sub sq { my ($db, $sql) = @_; return $node->safe_psql($db, $sql); }

is(sq('postgres', 'SHOW fence.max_databases'), '3', 'fence.max_databases = 3');
sq('postgres', q{SELECT fence_try_lease('main-job', '1 hour', owner => 'main')});

# Eight databases, one after the other, each taking leases and then dropped
# with a detached lease still held.
my $ok = 0;
for my $i (1 .. 8)
{
	sq('postgres', "CREATE DATABASE churn$i");
	my ($state, $err, $out) = sql_state($node, "churn$i", q{
CREATE EXTENSION fence;
SELECT fence_try_lease('job', '1 hour') IS NOT NULL AS session_lease;
SELECT fence_try_lease('nightly', '1 hour', owner => 'cron') IS NOT NULL AS detached_lease;});
	$ok++ if $state eq '' && $out =~ /^t\nt$/m;
	diag("churn$i: $state $err") if $state ne '';
	sq('postgres', "DROP DATABASE churn$i");
}
is($ok, 8, 'eight databases in turn take leases with only three slots');

is(sq('postgres', q{SELECT count(*) FROM fence_leases WHERE database IS NULL}),
	'0', 'DROP DATABASE freed the detached leases each database left');

# The administrator's sweep finds nothing left.
my ($state) = sql_state($node, 'postgres', q{
CREATE ROLE regress_dbslots LOGIN;
SET ROLE regress_dbslots;
SELECT fence_break_dropped_databases();});
is($state, '42501', 'fence_break_dropped_databases is not for every role');
is(sq('postgres', 'SELECT fence_break_dropped_databases()'), '0',
	'fence_break_dropped_databases finds no lease to free');
is(sq('postgres', q{SELECT count(*) FROM fence_leases WHERE key = 'main-job' AND live}),
	'1', "a live database's lease is untouched");

# Slots of databases that still exist are kept: with three in use, a fourth
# database's grant fails and the error says why.
sq('postgres', 'CREATE DATABASE keep1; CREATE DATABASE keep2; CREATE DATABASE keep3');
for my $db ('keep1', 'keep2')
{
	sq($db, q{CREATE EXTENSION fence; SELECT fence_try_lease('k', '1 min')});
}
sq('keep3', 'CREATE EXTENSION fence');
my $err;
($state, $err) = sql_state($node, 'keep3', q{SELECT fence_try_lease('k', '1 min')});
is($state, '54000', 'a fourth database that exists next to three others: 54000');
like($err, qr/HINT:.*fence\.max_databases/, '... with a hint naming fence.max_databases');
sq('postgres', 'DROP DATABASE keep2');
is(sq('keep3', q{SELECT fence_try_lease('k', '1 min') IS NOT NULL}), 't',
	'once one of them is dropped, its slot serves the fourth');
is(sq('keep1', q{SELECT count(*) FROM fence_stats WHERE database = 'keep1'}), '1',
	'the databases that remain keep their statistics');

# A full lease table frees a dropped database's leases before it fails.
sq('postgres', 'DROP DATABASE keep1; CREATE DATABASE filler');
sq('filler', q{CREATE EXTENSION fence;
SELECT count(fence_try_lease('f-' || g, '1 hour', owner => 'filler')) FROM generate_series(1, 12) g});
my $free = sq('postgres', q{SELECT 16 - count(*) FROM fence_leases});
sq('postgres', 'DROP DATABASE filler');
is(sq('postgres', qq{SELECT count(fence_try_lease('fill-' || g, '1 hour', owner => 'x'))
  FROM generate_series(1, $free + 12) g}), $free + 12,
	'a full table reuses the slots of the dropped database\'s leases');

# Breakers of a dropped database.  These databases only ask breakers, so
# they take no database slot: the breaker table knows them by itself.
sq('postgres', q{
SELECT fence_breaker_allow('keep-open', failure_threshold => 1, open_for => '1 hour');
SELECT fence_breaker_report('keep-open', false);
SELECT count(*) FROM generate_series(1, 3) g, LATERAL fence_breaker_allow('keep-' || g);});
sq('postgres', 'CREATE DATABASE breakers1');
sq('breakers1', q{CREATE EXTENSION fence;
SELECT fence_breaker_allow('gone-open', failure_threshold => 1);
SELECT fence_breaker_report('gone-open', false);
SELECT count(*) FROM generate_series(1, 4) g, LATERAL fence_breaker_allow('gone-' || g);});
sq('postgres', 'DROP DATABASE breakers1');
is(sq('postgres', q{SELECT count(*) FROM fence_breakers WHERE database IS NULL}),
	'0', "DROP DATABASE freed the dropped database's breakers");
is(sq('postgres', q{SELECT string_agg(breaker || '=' || state, ',' ORDER BY breaker) FROM fence_breakers}),
	'keep-1=closed,keep-2=closed,keep-3=closed,keep-open=open',
	"a live database's breakers are untouched");

# A database that fills the breaker table and is dropped leaves it free.
sq('postgres', 'CREATE DATABASE breakers2');
sq('breakers2', q{CREATE EXTENSION fence;
SELECT count(*) FROM generate_series(1, 12) g, LATERAL fence_breaker_allow('gone-' || g);});
is(sq('postgres', q{SELECT count(*) FROM fence_breakers}), '16',
	'the breaker table is full, 12 of it from another database');
sq('postgres', 'DROP DATABASE breakers2');
is(sq('postgres', q{SELECT count(*) FROM generate_series(1, 12) g,
  LATERAL fence_breaker_allow('new-' || g) a WHERE a.decision = 'call'}), '12',
	'once it is dropped, new breakers take its breakers\' slots');
is(sq('postgres', q{SELECT state FROM fence_breakers WHERE breaker = 'keep-open'}),
	'open', "a live database's open breaker stays open");
($state, $err) = sql_state($node, 'postgres', q{SELECT fence_breaker_allow('one too many')});
is($state, '53400', 'with only live databases\' breakers left, a full table still fails with 53400');
like($err, qr/HINT:.*fence\.max_breakers/, '... with a hint naming fence.max_breakers');

unlike(slurp_file($node->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$node->stop;

# --- Every path that needs a slot frees dropped databases' slots first ---
# fence_advance_tokens() in a database without a slot, with every slot
# taken: 54000 while the databases holding them exist, success once one of
# them is dropped, like a grant.
my $n2 = fence_node('dbslots2', conf => "fence.max_databases = 3\n");
sub sq2 { my ($db, $sql) = @_; return $n2->safe_psql($db, $sql); }

sq2('postgres', q{CREATE DATABASE tmpl_fence});
sq2('tmpl_fence', q{CREATE EXTENSION fence});
sq2('postgres', q{SELECT fence_try_lease('p', '1 hour', owner => 'p')});
for my $db ('full1', 'full2')
{
	sq2('postgres', "CREATE DATABASE $db TEMPLATE tmpl_fence");
	sq2($db, q{SELECT fence_try_lease('f', '1 hour', owner => 'f')});
}
sq2('postgres', q{CREATE DATABASE adv TEMPLATE tmpl_fence});
($state, $err) = sql_state($n2, 'adv', q{SELECT fence_advance_tokens(0)});
is($state, '54000', 'fence_advance_tokens with every slot held by a live database: 54000');
like($err, qr/DETAIL:.*still exists/, '... whose detail says why');
sq2('postgres', q{DROP DATABASE full1});
($state, $err) = sql_state($n2, 'adv', q{SELECT fence_advance_tokens(0) >= 0});
is($state, '', "fence_advance_tokens takes a dropped database's slot")
  or diag($err);
is(sq2('adv', q{SELECT fence_try_lease('a', '1 hour', owner => 'a') > 0}), 't',
	'... and the database then takes leases');

# --- A sweep whose catalog snapshot predates a CREATE DATABASE ---
# The sweeper's repeatable-read transaction looks at pg_database once, then
# waits on an advisory lock while a database is created and takes a lease;
# its second sweep must not take the new database for a dropped one.
sq2('postgres', q{DROP DATABASE full2; DROP DATABASE adv});
sq2('postgres', q{SELECT fence_break_dropped_databases()});
sq2('postgres', q{CREATE DATABASE bystander TEMPLATE tmpl_fence});
sq2('bystander', q{SELECT fence_try_lease('b', '1 hour', owner => 'b')});
my $gate = bg_start($n2, 'postgres',
	"SELECT pg_advisory_lock(4242);\nSELECT pg_sleep(600);\n", appname => 'gate');
ok(wait_until(30, sub { sq2('postgres',
	q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND granted}) eq '1' }),
	'the gate holds its lock');
my $sweeper = bg_start($n2, 'postgres', q{
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT 'first=' || fence_break_dropped_databases();
SELECT pg_advisory_lock(4242);
SELECT 'second=' || fence_break_dropped_databases();
COMMIT;
}, appname => 'sweeper');
ok(wait_until(30, sub { sq2('postgres',
	q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND NOT granted}) eq '1' }),
	'the sweeper has swept once and waits');
sq2('postgres', q{CREATE DATABASE fresh TEMPLATE tmpl_fence});
my $fresh_token = sq2('fresh', q{SELECT fence_try_lease('live', '1 hour', owner => 'fresh')});
sq2('postgres', q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gate'});
bg_finish($gate);
bg_finish($sweeper);
like($sweeper->{out}, qr/second=/, 'the sweeper swept again') or diag($sweeper->{err});
is(sq2('fresh', q{SELECT count(*) FROM fence_leases WHERE database = current_database() AND key = 'live'}),
	'1', "the new database's lease is still there");
is(sq2('fresh', q{SELECT count(*) FROM fence_stats WHERE database = current_database()}),
	'1', '... and so is its slot');
cmp_ok(sq2('fresh', q{SELECT fence_try_lease('live2', '1 hour', owner => 'fresh')}), '>', $fresh_token,
	'... and its counter goes on');

unlike(slurp_file($n2->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$n2->stop;

# --- A dropped database's OID reused by a new one ---
# OIDs are forced to wrap (pg_resetwal -o 1 on the stopped cluster: the next
# OID is then the first normal one), so that a database created from the
# same template as a dropped one gets the dropped one's OID, and even the
# same counter sequence OID.  The new database must start from scratch: no
# lease, no breaker, no counter block of the old one.
my $n3 = fence_node('oidreuse', conf => "fence.max_databases = 8\nfence.max_breakers = 16\n");
sub sq3 { my ($db, $sql) = @_; return $n3->safe_psql($db, $sql); }
sub wrap_oids
{
	$n3->stop;
	command_ok([ 'pg_resetwal', '-o', '1', $n3->data_dir ], 'pg_resetwal -o 1');
	$n3->start;
}
sq3('postgres', q{CREATE DATABASE tmpl_reuse});
sq3('tmpl_reuse', q{CREATE EXTENSION fence});
wrap_oids();
sq3('postgres', q{CREATE DATABASE old_db TEMPLATE tmpl_reuse});
my $old_oid = sq3('postgres', q{SELECT oid FROM pg_database WHERE datname = 'old_db'});
wrap_oids();
sq3('old_db', q{
SELECT fence_try_lease('inherit-me', '1 hour', owner => 'old');
SELECT fence_breaker_allow('old-breaker', failure_threshold => 1, open_for => '1 hour');
SELECT fence_breaker_report('old-breaker', false);
SELECT fence_advance_tokens(1000000);});
sq3('postgres', q{DROP DATABASE old_db});
sq3('postgres', q{VACUUM pg_database});
sq3('postgres', q{CREATE DATABASE new_db TEMPLATE tmpl_reuse});
is(sq3('postgres', q{SELECT oid FROM pg_database WHERE datname = 'new_db'}), $old_oid,
	'the new database got the dropped one\'s OID');
is(sq3('new_db', q{SELECT count(*) FROM fence_leases WHERE database = current_database()}),
	'0', 'it inherits no lease');
is(sq3('new_db', q{SELECT count(*) FROM fence_breakers WHERE database = current_database()}),
	'0', 'it inherits no breaker');
cmp_ok(sq3('new_db', q{SELECT fence_advance_tokens(0)}), '<', 1000000,
	"its counter is its own, not the dropped database's");
cmp_ok(sq3('new_db', q{SELECT fence_try_lease('mine', '1 hour', owner => 'new')}), '<', 1000000,
	'... and so are its tokens');
unlike(slurp_file($n3->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$n3->stop;
done_testing();
