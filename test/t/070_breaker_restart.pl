# Circuit breakers across a restart, and their capacity (070: the breaker
# tests).  Needs fence.max_breakers, a postmaster setting.
#
# Breakers live in shared memory only.  Proven: after a clean restart and
# after an immediate stop, every breaker is gone: an open one answers
# "call" again (it starts closed), and a probe's lease is gone with it.
# With fence.max_breakers = 16, exactly 16 breakers fit; the next one fails
# with SQLSTATE 53400 and a HINT naming fence.max_breakers, both when asked
# and when reported to, and creates nothing; a reset breaker's slot is
# free for a new name.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $max = 16;
my $node = fence_node('breakers',
	conf => "fence.max_breakers = $max\nfence.test_clock = on\n");

sub sq { return $node->safe_psql('postgres', $_[0]); }

is(sq("SHOW fence.max_breakers"), $max, "fence.max_breakers = $max");

for my $how ('fast', 'immediate')
{
	sq(q{
SELECT fence_set_clock('2024-01-01 09:00:00+00');
SELECT fence_breaker_allow('down', failure_threshold => 1, open_for => '1 hour');
SELECT fence_breaker_report('down', false);
SELECT fence_breaker_allow('probing', failure_threshold => 1, open_for => '1 minute');
SELECT fence_breaker_report('probing', false);
SELECT fence_advance_clock('1 minute');
SELECT fence_breaker_allow('probing', failure_threshold => 1, open_for => '1 minute');
});
	is( sq(q{SELECT string_agg(breaker || '=' || state, ',' ORDER BY breaker) FROM fence_breakers}),
		'down=open,probing=half_open',
		"$how: before the restart, one breaker is open and one half-open");
	is(sq(q{SELECT decision FROM fence_breaker_allow('down', failure_threshold => 1, open_for => '1 hour')}),
		'fail_fast', "$how: the open breaker fails fast");
	is(sq(q{SELECT count(*) FROM fence_leases WHERE key = 'breaker:probing'}),
		'1', "$how: the probe holds its lease");

	$node->stop($how);
	$node->start;

	is(sq(q{SELECT count(*) FROM fence_breakers}), '0',
		"$how: after the restart, no breaker is left");
	is(sq(q{SELECT count(*) FROM fence_leases WHERE key LIKE 'breaker:%'}),
		'0', "$how: nor any probe lease");
	is(sq(q{SELECT decision FROM fence_breaker_allow('down', failure_threshold => 1, open_for => '1 hour')}),
		'call', "$how: the breaker that was open starts closed");
	is(sq(q{SELECT state FROM fence_breakers WHERE breaker = 'down'}),
		'closed', "$how: and the view says so");
	sq(q{SELECT fence_breaker_reset('down')});
}

# Capacity.
is( sq(qq{
SELECT count(*) FROM generate_series(1, $max) g,
       LATERAL fence_breaker_allow('cap-' || g) a WHERE a.decision = 'call'}),
	$max, "$max breakers fit");
for my $sql (q{SELECT fence_breaker_allow('one too many')},
	q{SELECT fence_breaker_report('one too many', false)})
{
	my ($state, $err) = sql_state($node, 'postgres', $sql);
	is($state, '53400', "full table: $sql fails with 53400");
	like($err, qr/HINT:.*fence\.max_breakers/, '... with a hint naming fence.max_breakers');
}
is(sq(q{SELECT count(*) FROM fence_breakers}), $max,
	'the refused breaker was not created');
is(sq(q{SELECT fence_breaker_reset('cap-1')}), 't', 'reset frees a slot');
is(sq(q{SELECT decision FROM fence_breaker_allow('one too many')}),
	'call', 'which a new breaker takes');
is(sq(q{SELECT count(*) FROM fence_breakers}), $max, 'still at most the capacity');

done_testing();
