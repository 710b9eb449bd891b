# A session that only asks breakers, killed while it reserves the token
# counter's next block (071: the breaker tests).
#
# A probe's lease takes a token, and a grant reserves the counter's next
# block ahead while it has no lock, marking the database's block "being
# reserved" so that other sessions do not all reserve one.  A session that
# never took a lease any other way is killed in the middle of that
# reservation (it waits for the counter, which fence_advance_tokens holds
# locked in another session).  Proven: the mark does not outlive it, and
# the next grants of the database reserve the next block ahead again.  With
# the mark left behind, no block would be reserved ahead until a restart:
# each block would be reserved by the grant that finds the last one empty,
# which then waits for the flush in the middle of its grant.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fence_node('breaker_exit', conf => "fence.test_clock = on\n");

sub sq { return $node->safe_psql('postgres', $_[0]); }

# A breaker due for a probe; nothing so far has taken a token.
sq(q{
SELECT fence_set_clock('2024-01-01 09:00:00+00');
SELECT fence_breaker_allow('dep', failure_threshold => 1, open_for => '1 minute');
SELECT fence_breaker_report('dep', false);
SELECT fence_advance_clock('1 minute');
});
is(sq(q{SELECT is_called FROM fence_token_counter}), 'f',
	'no token has been taken yet');

# Hold the counter: fence_advance_tokens keeps its lock to the end of the
# transaction.
my $holder = bg_start($node, 'postgres', q{
BEGIN;
SELECT fence_advance_tokens(1000);
SELECT pg_sleep(300);
COMMIT;
}, appname => 'counter_holder');
ok( wait_until(30, sub {
		sq(q{SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
			  WHERE a.application_name = 'counter_holder'
			    AND l.relation = 'fence_token_counter'::regclass AND l.granted
			    AND l.mode = 'ShareRowExclusiveLock'}) eq '1' }),
	'another session holds the counter locked');

# The probe: its grant starts reserving the next block and waits.
my $prober = bg_start($node, 'postgres', q{
SELECT decision FROM fence_breaker_allow('dep', failure_threshold => 1, open_for => '1 minute');
}, appname => 'breaker_prober');
ok( wait_until(30, sub {
		sq(q{SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
			  WHERE a.application_name = 'breaker_prober'
			    AND l.relation = 'fence_token_counter'::regclass AND NOT l.granted}) eq '1' }),
	'the breaker-only session waits for the counter while it reserves a block');

my $pid = backend_pid_of($node, 'breaker_prober');
is(sq(qq{SELECT pg_terminate_backend($pid)}), 't', 'it is terminated');
ok( wait_until(30, sub {
		sq(qq{SELECT count(*) FROM pg_stat_activity WHERE pid = $pid}) eq '0' }),
	'... and gone');
bg_finish($prober);

my $hpid = backend_pid_of($node, 'counter_holder');
sq(qq{SELECT pg_cancel_backend($hpid)});
bg_finish($holder);
is(sq(q{SELECT last_value FROM fence_token_counter}), '1000',
	'the counter stands where fence_advance_tokens put it');

# The first grant takes a block; bring the block near its end without I/O;
# the next grant must reserve the following block ahead.
my $first = sq(q{SELECT fence_try_lease('k1', '1 minute')});
cmp_ok($first, '>', 1000, "a grant gets a token above the advance ($first)");
my $block_end = sq(q{SELECT last_value FROM fence_token_counter});
sq(qq{SELECT fence_advance_tokens($block_end - 100)});
sq(q{SELECT fence_try_lease('k2', '1 minute')});
cmp_ok(sq(q{SELECT last_value FROM fence_token_counter}), '>', $block_end,
	'near the end of its block, a grant reserves the next block ahead again');

unlike(slurp_file($node->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$node->stop;
done_testing();
