# fence.restart_grace.
#
# The lease table lives in shared memory, so a restart forgets every lease,
# detached ones included, while their holders may still be working.  With
# fence.restart_grace set, no lease is granted for that long after the
# server starts, and after a crash-restart cycle (shared memory is
# reinitialized then too).  Proven for both: during the grace,
# fence_try_lease refuses (NULL) and a fence_lease shorter than the grace
# times out (55P03); a blocking fence_lease is granted only once the grace
# has passed, with a token above the lost holder's.  A session that waits
# during the grace is queued, so that when the grace ends it is served
# before a session that merely polls.  With the grace at 0, grants are
# immediate.  A promoted standby has its grace too, counted from the
# promotion.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $grace = 4;
my $node = fence_node('grace',
	conf => "restart_after_crash = on\nfence.restart_grace = '${grace}s'\n");

sub take
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', $sql);
}

# The first start has its grace too; wait it out.
ok( $node->poll_query_until('postgres',
		q{SELECT fence_try_lease('probe', '1 s') IS NOT NULL}),
	'grants begin after the first grace');

for my $how ('stop immediate', 'SIGKILL of a backend')
{
	my $t1 = take(q{SELECT fence_try_lease('job', '1 hour', owner => 'W1')});
	ok($t1 > 0, "$how: W1 holds a detached lease, token $t1");

	my $t0 = time;
	if ($how eq 'stop immediate')
	{
		$node->stop('immediate');
		$node->start;
	}
	else
	{
		my $bg = bg_start($node, 'postgres', "SELECT pg_sleep(60);\n",
			appname => 'grace_victim');
		wait_until(10, sub { backend_pid_of($node, 'grace_victim') ne '' });
		kill 'KILL', backend_pid_of($node, 'grace_victim');
		bg_finish($bg);
		ok(wait_for_server($node), "$how: the server is back after the crash-restart cycle");
	}

	my $refused = take(q{
SELECT fence_try_lease('job', '1 hour', owner => 'W2') IS NULL,
       fence_try_lease('fresh-key', '1 hour') IS NULL});
	my $elapsed = time - $t0;
	SKIP:
	{
		skip "restart took ${elapsed}s, too close to the grace", 2
		  if $elapsed > $grace - 1;
		is($refused, 't|t', "$how: during the grace, try_lease refuses every key");
		is(sql_state($node, 'postgres',
				q{SELECT fence_lease('job', '1 hour', timeout => '200 ms', owner => 'W2')}),
			'55P03', "$how: during the grace, a short fence_lease times out");
	}

	my $t2 = take(
		q{SELECT fence_lease('job', '1 hour', timeout => '30 s', owner => 'W2')});
	my $waited = time - $t0;
	cmp_ok($waited, '>=', $grace,
		"$how: the blocking fence_lease was granted only after the grace");
	cmp_ok($t2, '>', $t1, "$how: with a token ($t2) above the lost holder's ($t1)");
	take(qq{SELECT fence_release('job', $t2)});
}

# A session that waits during the grace is queued: when the grace ends it
# is first in line, and a session that polls with fence_try_lease does not
# take the key ahead of it.  The waiter's backend is stopped (SIGSTOP) over
# the end of the grace, so that the poller surely asks first.
$node->restart;
my $waiter = bg_start($node, 'postgres',
	"SELECT 'TOK=' || fence_lease('queued', '1 hour', timeout => '60 s');\n",
	appname => 'grace_waiter');
ok( wait_until(10, sub {
		$node->safe_psql('postgres',
			q{SELECT count(*) FROM pg_stat_activity
			   WHERE application_name = 'grace_waiter' AND wait_event_type = 'Extension'}) == 1;
	}),
	'a session waits for a key during the grace');
my $wpid = backend_pid_of($node, 'grace_waiter');
kill 'STOP', $wpid;
ok($node->poll_query_until('postgres',
		q{SELECT fence_try_lease('probe-2', '1 s') IS NOT NULL}),
	'the grace ends');
is($node->safe_psql('postgres',
		q{SELECT fence_try_lease('queued', '1 hour', owner => 'poller') IS NULL}),
	't', 'after the grace, a polling fence_try_lease does not take the key ahead of the waiter');
kill 'CONT', $wpid;
ok(wait_until(20, sub { my @t = bg_tokens($waiter); @t == 1 }),
	'the waiter that queued during the grace is granted the key');
bg_finish($waiter);

$node->safe_psql('postgres',
	'ALTER SYSTEM SET fence.restart_grace = 0; SELECT pg_reload_conf()');
$node->restart;
is(take(q{SELECT fence_try_lease('job', '1 hour') IS NOT NULL}), 't',
	'with fence.restart_grace = 0 a grant right after restart succeeds');
unlike(slurp_file($node->logfile), qr/TRAP|terminated by signal (?!9)/,
	'no assertion failure or unexpected signal in the server log');

$node->stop;

# A promotion: the standby's lease table is as empty as a restarted
# server's, so the grace counts from the promotion too.  The standby has
# run well past its own start's grace when it is promoted.
my $primary = fence_node('grace_primary', init => { allows_streaming => 1 },
	conf => "fence.restart_grace = '${grace}s'\n");
$primary->backup('grace_backup');
my $standby = PostgreSQL::Test::Cluster->new('grace_standby');
$standby->init_from_backup($primary, 'grace_backup', has_streaming => 1);
$standby->start;
ok( $primary->poll_query_until('postgres',
		q{SELECT fence_try_lease('failover-job', '1 hour', owner => 'W1') IS NOT NULL}),
	"promotion: the primary's own grace ends");
my $t_held = $primary->safe_psql('postgres',
	q{SELECT fence_try_lease('failover-job', '1 hour', owner => 'W1')});
ok($t_held > 0, "promotion: W1 holds a detached lease on the primary, token $t_held");
$primary->wait_for_catchup($standby, 'replay');
sleep($grace + 1);
$primary->stop('immediate');
my $t_promote = time;
$standby->promote;
my $refused_after_promotion = $standby->safe_psql('postgres',
	q{SELECT fence_try_lease('failover-job', '1 hour', owner => 'W2') IS NULL,
	         fence_try_lease('other-key', '1 hour') IS NULL});
my $since_promotion = time - $t_promote;
SKIP:
{
	skip "promotion took ${since_promotion}s, too close to the grace", 1
	  if $since_promotion > $grace - 1;
	is($refused_after_promotion, 't|t',
		'promotion: right after it, try_lease refuses every key (the grace counts from the promotion)');
}
my $t_new = $standby->safe_psql('postgres',
	q{SELECT fence_lease('failover-job', '1 hour', timeout => '30 s', owner => 'W2')});
cmp_ok(time - $t_promote, '>=', $grace - 1,
	'promotion: the blocking fence_lease was granted only after the grace');
cmp_ok($t_new, '>', $t_held, "promotion: with a token ($t_new) above the old primary's holder's ($t_held)");
like(slurp_file($standby->logfile), qr/promoted|archive recovery complete/,
	'the standby was promoted');
$standby->stop;
done_testing();
