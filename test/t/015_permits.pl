# Leases with permits (bulkheads) against the server's limits and restarts.
#
# Proven:
# 1. Capacity: each permit held takes a slot of fence.max_leases, and the
#    key one more while any of its permits is held: with 16 slots, 15
#    permits of one key fit and the next grant of any kind fails with
#    53400; a released permit's slot serves another key; once every permit
#    of the key is gone, all 16 slots serve new leases again.
# 2. fence.max_leases_per_role counts detached permits with detached
#    leases: with a limit of 3, two detached permits and one detached lease
#    fill it, and the next detached permit or lease fails with 53400 (the
#    blocking form at once); session permits, re-asks by a holder and
#    expired permits do not count; a release makes room.
# 3. A restart, clean or immediate, forgets every permit: the old tokens
#    hold nothing (released, no renewal), the key is free for either kind,
#    and every token granted after it is above every token before it.
#    fence.restart_grace holds back permits as it holds back leases.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $max = 16;
my $node = fence_node('permits',
	conf => "fence.max_leases = $max\nfence.test_clock = on\n");

sub sq { return $node->safe_psql('postgres', $_[0]); }

# --- 1. capacity ------------------------------------------------------------------

my $n = $max - 1;
is( sq(qq{SELECT count(fence_try_permit('cap', 20, '1 hour', owner => 'o' || g))
  FROM generate_series(1, $n) g}),
	$n, "$n permits of one key fit in $max slots");
is(sq(q{SELECT count(*) FROM fence_leases WHERE key = 'cap' AND live}), $n,
	"fence_leases shows the $n permits");
my ($state, $err) = sql_state($node, 'postgres',
	q{SELECT fence_try_permit('cap', 20, '1 hour', owner => 'o-next')});
is($state, '53400', 'the next permit of the key: 53400 (its queue takes the last slot)');
like($err, qr/HINT:.*fence\.max_leases/, '... with a HINT naming fence.max_leases');
is(sql_state($node, 'postgres', q{SELECT fence_try_lease('other', '1 hour', owner => 'x')}),
	'53400', 'a lease of another key: 53400 too');
is(sql_state($node, 'postgres', q{SELECT fence_try_permit('other', 2, '1 hour')}),
	'53400', 'a permit of another key: 53400 too');
is(sq(q{SELECT fence_try_permit('cap', 20, '2 hours', owner => 'o1')
       = (SELECT token FROM fence_leases WHERE key = 'cap' AND owner = 'o1')}),
	't', 'a holder asking again needs no new slot: same token');
is(sq(q{SELECT fence_release('cap', token) FROM fence_leases WHERE key = 'cap' AND owner = 'o2'}),
	't', 'one permit released');
ok(sq(q{SELECT fence_try_lease('other', '1 hour', owner => 'x')}) > 0,
	"its slot serves another key's lease");
is(sql_state($node, 'postgres', q{SELECT fence_try_permit('cap', 20, '1 hour', owner => 'o-next')}),
	'53400', 'and the table is full again');
ok(sq(q{SELECT fence_break('cap')}) > 0, 'fence_break frees every permit of the key');
is( sq(qq{SELECT count(fence_try_lease('free-' || g, '1 hour', owner => 'x'))
  FROM generate_series(1, $max - 1) g}),
	$max - 1, "then, with the other lease, $max leases fit: the key's queue slot is free too");
sq(q{SELECT fence_break(key) FROM fence_leases});
is(sq(q{SELECT count(*) FROM fence_leases}), 0, 'all ended');

# --- 2. fence.max_leases_per_role -------------------------------------------------

$node->safe_psql('postgres', q{
CREATE ROLE regress_plain LOGIN;
ALTER ROLE regress_plain SET fence.max_leases_per_role = 3;
});

# Run SQL as the plain role: its output, SQLSTATE ('' on success) and stderr.
sub as_plain
{
	my ($sql) = @_;
	my ($r, $o, $e) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		connstr => $node->connstr('postgres') . ' user=regress_plain');
	my ($s) = $e =~ /ERROR:\s+([0-9A-Z]{5}):/;
	return ($o, $s // '', $e);
}

my ($q1) = as_plain(q{SELECT fence_try_permit('pool', 5, '1 hour', owner => 'q1')});
my ($q2) = as_plain(q{SELECT fence_try_permit('pool', 5, '1 hour', owner => 'q2')});
my ($l1) = as_plain(q{SELECT fence_try_lease('solo', '1 hour', owner => 'q')});
ok($q1 > 0 && $q2 > 0 && $l1 > 0,
	'the plain role holds two detached permits and one detached lease');
my (undef, $qstate, $qerr) =
  as_plain(q{SELECT fence_try_permit('pool', 5, '1 hour', owner => 'q3')});
is($qstate, '53400', 'a third detached permit is a fourth detached lease: 53400');
like($qerr, qr/DETAIL:.*3 detached or lock-delayed leases.*fence\.max_leases_per_role is 3/,
	'... whose detail gives the count and the limit');
is((as_plain(q{SELECT fence_try_lease('solo-2', '1 hour', owner => 'q')}))[1], '53400',
	'a detached lease of another key: 53400 too');
my $asked = time;
is((as_plain(q{SELECT fence_permit('pool', 5, '1 hour', timeout => '5 s', owner => 'q3')}))[1],
	'53400', 'the blocking form fails the same ...');
cmp_ok(time - $asked, '<', 4, '... at once');
is((as_plain(q{SELECT fence_try_permit('pool', 5, '1 hour') IS NOT NULL}))[0], 't',
	'a session permit is not counted');
is((as_plain(q{BEGIN; SELECT fence_try_xact_permit('pool', 5, '1 hour') IS NOT NULL; COMMIT;}))[0],
	't', 'nor a transaction permit');
is((as_plain("SELECT fence_try_permit('pool', 5, '2 hours', owner => 'q1') = $q1"))[0], 't',
	'a holder asking again is not a new permit');
is( sq(q{SELECT count(*) FROM fence_leases WHERE key = 'pool'}), 2,
	'the key holds the two detached permits only');
is((as_plain("SELECT fence_release('pool', $q1)"))[0], 't', 'after a release ...');
ok((as_plain(q{SELECT fence_try_permit('pool', 5, '1 hour', owner => 'q3')}))[0] > 0,
	'... the role may take another permit');
sq(q{SELECT fence_set_clock(now() + interval '3 hours')});
is( (as_plain(q{SELECT count(fence_try_permit('pool-late', 5, '1 hour', owner => 'l' || g))
  FROM generate_series(1, 3) g}))[0],
	'3', 'expired detached permits do not count');
is((as_plain(q{SELECT fence_try_permit('pool-late', 5, '1 hour', owner => 'l4')}))[1], '53400',
	'... live ones do');
is( sq(q{SET fence.max_leases_per_role = 1;
  SELECT count(fence_try_permit('pool-su', 5, '1 hour', owner => 's' || g)) FROM generate_series(1, 3) g}),
	'3', 'superusers are not limited');
sq(q{SELECT fence_set_clock(NULL)});
sq(q{SELECT fence_break(key) FROM (SELECT DISTINCT key FROM fence_leases) k});

# --- 3. restarts -------------------------------------------------------------------

for my $how ('restart', 'stop immediate')
{
	my @before = split /\n/, sq(q{
SELECT fence_try_permit('rs', 3, '1 hour', owner => 'r1');
SELECT fence_try_permit('rs', 3, '1 hour', owner => 'r2');
SELECT fence_try_permit(77, 2, '1 hour', owner => 'r1');});
	is(scalar(grep { $_ > 0 } @before), 3, "$how: two permits of rs and one of 77 held");
	my $high = max_of(@before, sq('SELECT fence_advance_tokens(0)'));

	if ($how eq 'restart')
	{
		$node->restart;
	}
	else
	{
		$node->stop('immediate');
		$node->start;
	}

	is(sq(q{SELECT count(*) FROM fence_leases}), 0, "$how: no permit is left");
	is( sq(qq{SELECT fence_lease_status('rs', $before[0]), fence_renew('rs', $before[1], '1 hour'),
	               fence_release(77, $before[2])}),
		'released|f|f', "$how: the old tokens hold nothing: released, no renewal, no release");
	my $lease = sq(q{SELECT fence_try_lease('rs', '1 hour')});
	cmp_ok($lease, '>', $high, "$how: rs is free as an ordinary lease, with a larger token");
	sq(qq{SELECT fence_release('rs', $lease)});
	my @after = split /\n/, sq(q{
SELECT fence_try_permit('rs', 5, '1 hour', owner => 'r1');
SELECT fence_try_permit(77, 2, '1 hour', owner => 'r1');});
	cmp_ok(min_of(@after), '>', $high,
		"$how: new permits, of any count, get tokens above every token before ($high)");
	ok($after[1] > $after[0], "$how: and their tokens go on growing");
	sq(q{SELECT fence_break('rs'), fence_break(77)});
}

# fence.restart_grace holds permits back as it holds back leases.
my $grace = 4;
my $high = sq(q{SELECT fence_try_permit('gr', 2, '1 hour', owner => 'g1')});
sq(qq{ALTER SYSTEM SET fence.restart_grace = '${grace}s'});
my $t0 = time;
$node->restart;
my $refused = sq(q{
SELECT fence_try_permit('gr', 2, '1 hour', owner => 'g2') IS NULL,
       fence_try_permit('gr-fresh', 2, '1 hour') IS NULL});
my $elapsed = time - $t0;
SKIP:
{
	skip "restart took ${elapsed}s, too close to the grace", 2
	  if $elapsed > $grace - 1;
	is($refused, 't|t', 'during the grace, fence_try_permit refuses');
	is(sql_state($node, 'postgres',
			q{SELECT fence_permit('gr', 2, '1 hour', timeout => '200 ms', owner => 'g2')}),
		'55P03', 'during the grace, a short fence_permit times out');
}
my $t2 = sq(q{SELECT fence_permit('gr', 2, '1 hour', timeout => '30 s', owner => 'g2')});
cmp_ok(time - $t0, '>=', $grace, 'a blocking fence_permit is granted only after the grace');
cmp_ok($t2, '>', $high, "with a token ($t2) above the lost holder's ($high)");
sq(q{ALTER SYSTEM RESET fence.restart_grace; SELECT pg_reload_conf()});
sq(q{SELECT fence_break('gr')});

unlike(slurp_file($node->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$node->stop;
done_testing();
