# Databases that come and go, and leases left by a dropped database.
#
# Each database that uses fence takes one of fence.max_databases slots of
# shared memory (its statistics and token high-water mark).  Proven with
# fence.max_databases = 3: more databases than that can be created, used
# and dropped in turn, because a dropped database's slot is reused by the
# next one that needs one; a database's slot stays while it exists (the
# error when every slot is in use names the setting); detached leases left
# by a dropped database are shown with database NULL, are freed by
# fence_break_dropped_databases() (an administrator's function), and are
# freed anyway when the lease table or the slots run out.  Breakers of a
# dropped database (with fence.max_breakers = 16) go the same way: shown
# with database NULL, freed by fence_break_dropped_databases() and when the
# breaker table is full, before a 53400; a live database's are kept.
# fence_advance_tokens() in a database without a slot frees a dropped
# database's slot as a grant does, and fails with 54000 only when every slot
# belongs to a database that exists.
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

my $dropped = sq('postgres',
	q{SELECT count(*) FROM fence_leases WHERE database IS NULL});
cmp_ok($dropped, '>=', 1, "leases of dropped databases are shown with database NULL ($dropped)");
is(sq('postgres', q{SELECT count(*) FROM fence_leases WHERE database IS NULL AND scope <> 'detached'}),
	'0', '... only detached ones: session leases ended with their sessions');

# The administrator frees them.
my ($state) = sql_state($node, 'postgres', q{
CREATE ROLE regress_dbslots LOGIN;
SET ROLE regress_dbslots;
SELECT fence_break_dropped_databases();});
is($state, '42501', 'fence_break_dropped_databases is not for every role');
is(sq('postgres', 'SELECT fence_break_dropped_databases()'), $dropped,
	'fence_break_dropped_databases frees each of them and says how many');
is(sq('postgres', q{SELECT count(*) FROM fence_leases WHERE database IS NULL}),
	'0', 'none is left');
is(sq('postgres', q{SELECT count(*) FROM fence_leases WHERE key = 'main-job' AND live}),
	'1', "a live database's lease is untouched");
is(sq('postgres', 'SELECT fence_break_dropped_databases()'), '0',
	'a second call finds nothing');

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
	'5', "a dropped database's breakers are shown with database NULL");
is(sq('postgres', 'SELECT fence_break_dropped_databases()'), '0',
	'fence_break_dropped_databases ends no lease there ...');
is(sq('postgres', q{SELECT count(*) FROM fence_breakers WHERE database IS NULL}),
	'0', '... but frees its breakers');
is(sq('postgres', q{SELECT string_agg(breaker || '=' || state, ',' ORDER BY breaker) FROM fence_breakers}),
	'keep-1=closed,keep-2=closed,keep-3=closed,keep-open=open',
	"a live database's breakers are untouched");

# A full breaker table frees a dropped database's breakers before it fails.
sq('postgres', 'CREATE DATABASE breakers2');
sq('breakers2', q{CREATE EXTENSION fence;
SELECT count(*) FROM generate_series(1, 12) g, LATERAL fence_breaker_allow('gone-' || g);});
sq('postgres', 'DROP DATABASE breakers2');
is(sq('postgres', q{SELECT count(*) FROM fence_breakers}), '16',
	'the breaker table is full, 12 of it from the dropped database');
is(sq('postgres', q{SELECT count(*) FROM generate_series(1, 12) g,
  LATERAL fence_breaker_allow('new-' || g) a WHERE a.decision = 'call'}), '12',
	'new breakers take the slots of the dropped database\'s breakers');
is(sq('postgres', q{SELECT count(*) FROM fence_breakers WHERE database IS NULL}),
	'0', 'none of the dropped database is left');
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

unlike(slurp_file($n2->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$n2->stop;
done_testing();
