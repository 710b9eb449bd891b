# Capacity of the lease table.
#
# fence.max_leases = 16.  Proven: exactly 16 live leases fit; the next grant
# fails with SQLSTATE 53400 and a HINT naming fence.max_leases, in every
# scope; the server keeps serving (queries, status, renewals and re-acquires
# of the leases it holds); a released lease's slot, the slots of a session
# that ended, and expired leases' slots are reclaimed for new keys.  With
# fence.max_leases_per_role left at its default, a role that is not a
# superuser gets only a share of so small a table: it cannot fill it, and the
# other roles still get leases.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $max = 16;
my $node = fence_node('capacity',
	conf => "fence.max_leases = $max\nfence.test_clock = on\n");

sub sq { return $node->safe_psql('postgres', $_[0]); }

is(sq("SHOW fence.max_leases"), $max, "fence.max_leases = $max");

my $granted = sq(qq{
SELECT count(fence_try_lease('cap-' || g, '1 min', owner => 'filler'))
  FROM generate_series(1, $max) g});
is($granted, $max, "$max detached leases fit");

my ($state, $err) = sql_state($node, 'postgres',
	q{SELECT fence_try_lease('one-too-many', '1 min', owner => 'filler')});
is($state, '53400', 'the next grant: 53400');
like($err, qr/HINT:.*fence\.max_leases/, '... with a HINT naming fence.max_leases');
is(sql_state($node, 'postgres', q{SELECT fence_try_lease('one-too-many', '1 min')}),
	'53400', 'full for session leases too');
is(sql_state($node, 'postgres',
		q{BEGIN; SELECT fence_try_xact_lease('one-too-many', '1 min'); COMMIT;}),
	'53400', 'full for transaction leases too');
is(sql_state($node, 'postgres',
		q{SELECT fence_lease('one-too-many', '1 min', timeout => '1 s')}),
	'53400', 'a blocking fence_lease on a full table fails at once');

# Still serving.
is(sq('SELECT 1'), '1', 'the server keeps serving');
is(sq(q{SELECT count(*) FROM fence_leases WHERE live}), $max, "fence_leases shows the $max leases");
my $t3 = sq(q{SELECT token FROM fence_leases WHERE key = 'cap-3'});
is(sq(qq{SELECT fence_lease_status('cap-3', $t3)}), 'held', 'status of a held lease');
is(sq(qq{SELECT fence_renew('cap-3', $t3, '2 min')}), 't', 'a renewal works');
is(sq(q{SELECT fence_try_lease('cap-4', '2 min', owner => 'filler')}),
	sq(q{SELECT token FROM fence_leases WHERE key = 'cap-4'}),
	're-acquire by the holder works (same token, no new slot)');

# Released slots are reused.
is(sq(qq{SELECT fence_release('cap-3', $t3)}), 't', 'release one lease');
ok(sq(q{SELECT fence_try_lease('new-1', '1 min', owner => 'filler')}) > 0,
	'its slot serves a new key');
is(sql_state($node, 'postgres', q{SELECT fence_try_lease('new-2', '1 min', owner => 'filler')}),
	'53400', 'and the table is full again');

# Everything released: every slot is reused.
sq(q{SELECT fence_release(key, token) FROM fence_leases});
is(sq(q{SELECT count(*) FROM fence_leases}), 0, 'all released');
is( sq(qq{SELECT count(fence_try_lease('again-' || g, '1 min', owner => 'filler'))
  FROM generate_series(1, $max) g}),
	$max, "released slots are reclaimed: $max new keys");

# Expired leases: their slots are reclaimed once past expiry.
sq(q{SELECT fence_advance_clock('2 min')});
is(sq(q{SELECT count(*) FROM fence_leases WHERE live}), 0, 'all expired');
is( sq(qq{SELECT count(fence_try_lease('after-expiry-' || g, '1 min', owner => 'filler'))
  FROM generate_series(1, $max) g}),
	$max, "expired slots are reclaimed: $max new keys");
sq(q{SELECT fence_release(key, token) FROM fence_leases});

# A session's leases end with the session and free their slots.
is( sq(qq{SELECT count(fence_try_lease('session-' || g, '1 hour'))
  FROM generate_series(1, $max) g}),
	$max, "a session takes $max session leases and disconnects");
is( sq(qq{SELECT count(fence_try_lease('next-' || g, '1 hour', owner => 'filler'))
  FROM generate_series(1, $max) g}),
	$max, '... their slots serve the next session');

# The default per-role limit caps a small table too: a quarter of it here.
sq(q{SELECT fence_release(key, token) FROM fence_leases});
is(sq('SHOW fence.max_leases_per_role'), '-1', 'fence.max_leases_per_role is -1 by default');
sq(q{CREATE ROLE regress_capacity_a; CREATE ROLE regress_capacity_b});
my $share = $max / 4;
my $plain = 0;
for my $g (1 .. $max)
{
	my ($st, $er) = sql_state($node, 'postgres',
		qq{SET ROLE regress_capacity_a; SELECT fence_try_lease('plain-$g', '1 hour', owner => 'a')});
	if ($st ne '')
	{
		is($st, '53400', "a plain role's grant past its share: 53400");
		like($er, qr/DETAIL:.*$share detached or lock-delayed leases.*fence\.max_leases_per_role.*-1.*$share/,
			'... whose detail gives the count and the limit the default allows');
		last;
	}
	$plain++;
}
is($plain, $share, "a plain role holds at most $share of the $max slots by default");
is( sq(qq{SET ROLE regress_capacity_b;
  SELECT count(fence_try_lease('other-' || g, '1 hour', owner => 'b')) FROM generate_series(1, $share) g}),
	$share, 'another plain role still gets its share');
is( sq(qq{SELECT count(fence_try_lease('su-' || g, '1 hour', owner => 'su'))
  FROM generate_series(1, $max - 2 * $share) g}),
	$max - 2 * $share, 'superusers are not limited');
sq(q{SELECT fence_release(key, token) FROM fence_leases});

# Lock-delay cannot fill the table.  A lease taken with fence.lock_delay
# outlives its session (the key waits out the delay), so it counts against
# its role's share from its grant, as a detached lease does, until its
# entry is freed; and a plain role's delay is bounded by fence.max_lock_delay,
# which only a superuser sets.  Each sq() below is a session of its own that
# takes 1-second session leases and disconnects.
sq(q{SELECT fence_break(key) FROM fence_leases});
my $delayed = 0;
for my $g (1 .. $max)
{
	my ($st, $er) = sql_state($node, 'postgres',
		qq{SET ROLE regress_capacity_a; SET fence.lock_delay = '30s';
		   SELECT fence_try_lease('delay-$g', '1 s')});
	if ($st ne '')
	{
		is($st, '53400', "a plain role's lock-delayed grant past its share: 53400");
		like($er, qr/DETAIL:.*$share detached or lock-delayed leases/,
			'... whose detail counts the lock-delayed leases');
		last;
	}
	$delayed++;
}
is($delayed, $share,
	"a plain role leaves at most $share lock-delayed leases behind its sessions");
is(sq(q{SELECT count(*) FROM fence_leases WHERE key LIKE 'delay-%' AND pid IS NULL}),
	$share, '... each in the table, holderless, its key in its delay');
sq(q{SELECT fence_advance_clock('2 seconds')});
is((sql_state($node, 'postgres',
		q{SET ROLE regress_capacity_a; SET fence.lock_delay = '30s';
		  SELECT fence_try_lease('delay-more', '1 s')}))[0],
	'53400', 'expired but in their delay, they still count');
is((sql_state($node, 'postgres',
		q{SET ROLE regress_capacity_a; SET fence.lock_delay = '30s';
		  SELECT fence_try_permit('delay-permit', 2, '1 s')}))[0],
	'53400', 'a lock-delayed permit counts too');
is( sq(qq{SET ROLE regress_capacity_b;
  SELECT count(fence_try_lease('other-delay-' || g, '1 hour', owner => 'b')) FROM generate_series(1, $share) g}),
	$share, 'another plain role still gets its share');
sq(q{SELECT fence_break(key) FROM fence_leases WHERE key LIKE 'other-delay-%'});

# Only a superuser may allow a longer delay than fence.max_lock_delay.
is(sq('SHOW fence.max_lock_delay'), '1min', 'fence.max_lock_delay is 1 minute by default');
is((sql_state($node, 'postgres',
		q{SET ROLE regress_capacity_a; SET fence.max_lock_delay = '1h'}))[0],
	'42501', 'a plain role cannot raise fence.max_lock_delay');
my ($dst, $derr) = sql_state($node, 'postgres',
	q{SET ROLE regress_capacity_a; SET fence.lock_delay = '24d';
	  SELECT fence_try_lease('delay-long', '1 s')});
is($dst, '22023', 'a lock-delay over fence.max_lock_delay is refused: 22023');
like($derr, qr/DETAIL:.*fence\.lock_delay is 2073600000 ms; fence\.max_lock_delay is 60000 ms/,
	'... whose detail gives both');
is(sq(q{SELECT count(*) FROM fence_leases WHERE key = 'delay-long'}), '0',
	'... and nothing was granted');

# Asking again with a delay for a lease taken without one makes it a
# lock-delayed lease: it counts from then on.
my ($est, $eerr) = sql_state($node, 'postgres',
	qq{SET ROLE regress_capacity_b;
	   SELECT count(fence_try_lease('undelayed-' || g, '1 s')) FROM generate_series(1, $share + 1) g;
	   SET fence.lock_delay = '30s';
	   SELECT count(fence_try_lease('undelayed-' || g, '1 s')) FROM generate_series(1, $share + 1) g});
is($est, '53400', 'a delay added by asking again counts against the share');
is(sq(q{SELECT count(*) FROM fence_leases WHERE key LIKE 'undelayed-%' AND pid IS NULL}),
	$share, '... and the leases it extended wait out their delay');

# Past their delay, they are reclaimed and stop counting.
sq(q{SELECT fence_advance_clock('40 seconds')});
ok(sq(q{SET ROLE regress_capacity_a; SET fence.lock_delay = '30s';
		SELECT fence_try_lease('delay-more', '1 s')}) > 0,
	'once their delay has passed, the role gets lock-delayed leases again');

# A lease handed to a waiter by the backend that frees the key counts as
# one the waiter took itself.  Role a waits for a key with a delay; meanwhile
# its other sessions take the rest of its share; the key's release cannot
# hand it over then, and the waiter's own attempt says why.
sq(q{SELECT fence_try_lease('hand', '1 hour', owner => 'su')});
my $waiter = bg_start($node, 'postgres',
	qq{SET ROLE regress_capacity_a;
SET fence.lock_delay = '30s';
SELECT 'W=' || fence_lease('hand', '1 s', timeout => '60 s');
});
ok(wait_until(30, sub { sq(q{SELECT count(*) FROM fence_lease_waiters WHERE key = 'hand'}) eq '1' }),
	'role a waits for a key, with a delay');
for my $g (1 .. $share - 1)
{
	sq(qq{SET ROLE regress_capacity_a; SET fence.lock_delay = '30s';
		  SELECT fence_try_lease('fill-$g', '1 s')});
}
# The releasing session asks for the key first, as its holder (the same
# token): a backend hands a key over only with a token block at hand.
is(sq(q{SELECT fence_release('hand', fence_try_lease('hand', '1 hour', owner => 'su'))}),
	't', "the holder releases the key, while role a's share is full");
bg_finish($waiter);
unlike($waiter->{out}, qr/W=\d+/, 'a release does not hand the key to a waiter past its share');
like($waiter->{err}, qr/holds too many detached or lock-delayed leases/,
	'... whose wait ends with the role limit');
is(sq(q{SELECT count(*) FROM fence_leases WHERE key = 'hand'}), '0', '... and the key is free');

# A superuser is not limited, so it can still fill the table with leases in
# their delay; the error then says so.
sq(q{SELECT fence_advance_clock('1 minute')});
is( sq(qq{SET fence.lock_delay = '30s';
  SELECT count(fence_try_lease('su-delay-' || g, '1 s')) FROM generate_series(1, $max) g}),
	$max, "a superuser's session takes $max lock-delayed leases and disconnects");
sq(q{SELECT fence_advance_clock('2 seconds')});
my ($fst, $ferr) = sql_state($node, 'postgres',
	q{SELECT fence_try_lease('after-su-delay', '1 min')});
is($fst, '53400', 'a table full of leases in their delay: 53400');
like($ferr, qr/DETAIL:.*All $max slots hold live leases, leases in their fence\.lock_delay or leases with waiters/,
	'... whose detail names the delays');
like($ferr, qr/HINT:.*fence_break/, '... and whose hint names fence_break');
sq(q{SELECT fence_advance_clock('30 seconds')});
ok(sq(q{SELECT fence_try_lease('after-su-delay', '1 min')}) > 0,
	'once the delays have passed, their slots are reclaimed');
sq(q{SELECT fence_break(key) FROM fence_leases});

unlike(slurp_file($node->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$node->stop;
done_testing();
