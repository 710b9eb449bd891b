# Leases and the server's life: what only a
# node that can be started, stopped and crashed shows.
#
#  - Without shared_preload_libraries: CREATE EXTENSION, the type and the
#    session-local token functions work; every lease function fails with
#    55000 and a hint naming the setting.
#  - fence.test_clock off: the clock controls fail with 55000.
#  - fence.restart_grace: no lease is granted for that long after the server
#    starts, and again after a crash restart (shared memory, and with it
#    every lease, is gone); fence_lease waits the grace period out.
#  - A standby grants no lease (25006).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

# ---- not preloaded ----
my $plain = fence_node('plain', preload => 0);
# It grants no lease, so it takes tokens from elsewhere (doc/scaling.md).
$plain->safe_psql('postgres', q{ALTER DATABASE postgres SET fence.external_tokens = on});
is($plain->safe_psql('postgres', "SELECT '42'::fence_token > 41"),
	't', 'without preload: the type works');
for my $call ("fence_try_lease('k', '1 minute')",
	"fence_lease('k', '1 minute')",
	"fence_try_xact_lease('k', '1 minute')",
	"fence_release('k', 1)",
	"fence_renew('k', 1, '1 minute')",
	"fence_lease_status('k', 1)",
	"fence_assert_current('k', 1)",
	"fence_break('k')",
	"count(*) FROM fence_leases",
	"count(*) FROM fence_stats")
{
	my ($state, $err) = sql_state($plain, 'postgres', "SELECT $call;");
	is($state, '55000', "without preload: SELECT $call fails with 55000");
	like($err, qr/HINT:\s+Add fence to shared_preload_libraries/,
		"without preload: $call names the setting");
}
is( $plain->safe_psql(
		'postgres', "BEGIN;
		 SELECT fence_use_token(7, 'k');
		 SELECT fence_current_token('k')::text || ' ' || (fence_now() IS NOT NULL)::text;
		 COMMIT;"),
	"\n7 true",
	'without preload: fence_use_token, fence_current_token and fence_now work');
$plain->stop;

# ---- preloaded, virtual clock off ----
my $node = fence_node('grace',
	init => { allows_streaming => 1 },
	conf => "fence.test_clock = off\nfence.restart_grace = '4s'\n"
	  . "restart_after_crash = on\n");
is(sql_state($node, 'postgres', "SELECT fence_set_clock(now());"),
	'55000', 'test_clock off: fence_set_clock fails with 55000');
is(sql_state($node, 'postgres', "SELECT fence_advance_clock('1 second');"),
	'55000', 'test_clock off: fence_advance_clock fails with 55000');

# ---- restart grace ----
# Right after start (4 s of grace), grants are refused; a blocking call
# waits until the grace period is over.
sub grace_checks
{
	my ($when) = @_;
	is($node->safe_psql('postgres',
			"SELECT fence_try_lease('g', '1 minute') IS NULL"),
		't', "$when: fence_try_lease is refused during the grace period");
	is(sql_state($node, 'postgres',
			"SELECT fence_lease('g', '1 minute', timeout => '100 ms');"),
		'55P03', "$when: fence_lease times out during the grace period");
	my $start = time;
	is($node->safe_psql('postgres',
			"SELECT fence_lease('g', '1 minute', owner => 'W1') IS NOT NULL"),
		't', "$when: fence_lease is granted once the grace period is over");
	cmp_ok(time - $start, '>', 0.5, "$when: ... after waiting");
}
grace_checks('after start');

is($node->safe_psql('postgres',
		"SELECT scope || ' ' || owner FROM fence_leases WHERE key = 'g'"),
	'detached W1', 'a detached lease outlives its session');

# A crash restart (SIGKILL of a server process) loses every lease, and the
# grace period starts again.
my $pid = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'autovacuum launcher'");
ok($pid && kill('KILL', $pid), 'killed the autovacuum launcher');
# Until the restart is over, a query may fail in any way, a psql cut off
# before it read its query included (IPC::Run then dies of a broken pipe,
# as wait_for_server explains): each is one more attempt.
ok( wait_until(
		60,
		sub {
			my ($r, $out) = eval {
				$node->psql('postgres',
					"SELECT count(*) FROM fence_leases WHERE key = 'g'");
			};
			return defined $r && $r == 0 && $out eq '0';
		}),
	'after a crash restart the lease table is empty');
grace_checks('after a crash restart');

# ---- a standby grants no lease ----
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby);
is(sql_state($standby, 'postgres', "SELECT fence_try_lease('s', '1 minute');"),
	'25006', 'a standby refuses fence_try_lease with 25006');
is(sql_state($standby, 'postgres', "SELECT fence_lease('s', '1 minute', '0', 'W1');"),
	'25006', 'a standby refuses fence_lease with 25006');
is($standby->safe_psql('postgres', "SELECT fence_lease_status('s', 1)"),
	'released', 'a standby can still check a token');
$standby->stop;
$node->stop;

done_testing();
