# Lease waits seen from outside: the wait event of a waiting fence_lease,
# and fence.log_lease_waits.
#
# Proven: a waiting session shows wait_event_type Extension in
# pg_stat_activity (the generic event before PostgreSQL 17; FenceLease, our
# own, from 17 on); with fence.log_lease_waits on, a wait longer than
# deadlock_timeout is logged once, naming the key, the holder (a pid, or a
# detached owner) and how long it has waited, and its end is logged again:
# acquired, or gave up (timeout, or cancel); a wait shorter than
# deadlock_timeout and any wait with the setting off log nothing.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fence_node('waits',
	conf => "deadlock_timeout = '200ms'\nfence.log_lease_waits = on\n");
my $pgver = $node->safe_psql('postgres', 'SHOW server_version_num');

sub sq { return $node->safe_psql('postgres', $_[0]); }

# A holder, and a waiter that is granted after the holder releases.
my $holder = bg_start($node, 'postgres', q{
SELECT 'TOK=' || fence_try_lease('job-1', '1 hour');
SELECT pg_sleep(4);
SELECT fence_release('job-1', fence_current_token('job-1'));
SELECT pg_sleep(60);
}, appname => 'holder');
ok(wait_until(10, sub { my @t = bg_tokens($holder); @t == 1 }), 'a session holds job-1');
my $hpid = backend_pid_of($node, 'holder');
my $offset = -s $node->logfile;
my $waiter = bg_start($node, 'postgres',
	"SELECT 'TOK=' || fence_lease('job-1', '1 hour', timeout => '30 s');\n",
	appname => 'waiter');
ok( wait_until(10, sub {
		sq(q{SELECT wait_event_type || '/' || wait_event FROM pg_stat_activity
			  WHERE application_name = 'waiter'}) eq
		  ($pgver >= 170000 ? 'Extension/FenceLease' : 'Extension/Extension');
	}),
	'a waiting fence_lease shows its wait event in pg_stat_activity');
my $wpid = backend_pid_of($node, 'waiter');
ok(wait_until(20, sub { my @t = bg_tokens($waiter); @t == 1 }), 'the waiter is granted');
my $log = substr(slurp_file($node->logfile), $offset);
like($log,
	qr/LOG:  process $wpid still waiting for lease "job-1" after \d+\.\d{3} ms\n.*DETAIL:  Process holding the lease: $hpid\./,
	'the wait is logged after deadlock_timeout, with the key and the holder\'s pid');
like($log, qr/LOG:  process $wpid acquired lease "job-1" after \d+\.\d{3} ms/,
	'... and its end: acquired');
my @still = ($log =~ /process $wpid still waiting/g);
is(scalar(@still), 1, '... logged once');
bg_finish($waiter);

# A detached holder; the waiter times out.
sq(q{SELECT fence_try_lease('job-2', '1 hour', owner => 'nightly')});
$offset = -s $node->logfile;
my ($state) = sql_state($node, 'postgres',
	q{SELECT fence_lease('job-2', '1 hour', timeout => '500 ms')});
is($state, '55P03', 'a waiter behind a detached holder times out');
$log = substr(slurp_file($node->logfile), $offset);
like($log,
	qr/still waiting for lease "job-2" after \d+\.\d{3} ms\n.*DETAIL:  The lease is held by detached owner "nightly"\./,
	'the log names the detached owner');
like($log,
	qr/gave up waiting for lease "job-2" after \d+\.\d{3} ms\n.*DETAIL:  Its timeout passed\./,
	'... and that the wait gave up at its timeout');

# A cancelled wait.
$offset = -s $node->logfile;
my $cancelled = bg_start($node, 'postgres',
	"SELECT fence_lease('job-2', '1 hour');\n", appname => 'cancelled');
ok( wait_until(10, sub {
		sq(q{SELECT count(*) FROM fence_lease_waiters WHERE key = 'job-2'}) == 1 }),
	'another waiter queues');
ok( wait_until(10, sub { substr(slurp_file($node->logfile), $offset) =~ /still waiting for lease "job-2"/ }),
	'... and is logged');
sq(q{SELECT pg_cancel_backend(pid) FROM fence_lease_waiters WHERE key = 'job-2'});
bg_finish($cancelled);
ok( wait_until(10, sub {
		substr(slurp_file($node->logfile), $offset) =~
		  /gave up waiting for lease "job-2" after \d+\.\d{3} ms\n.*DETAIL:  An error or a cancel request ended the wait\./;
	}),
	'a cancelled wait is logged as given up');

# Short waits, and the setting off, log nothing.
$offset = -s $node->logfile;
sql_state($node, 'postgres', q{SELECT fence_lease('job-2', '1 hour', timeout => '100 ms')});
sql_state($node, 'postgres',
	q{SET fence.log_lease_waits = off; SELECT fence_lease('job-2', '1 hour', timeout => '500 ms')});
unlike(substr(slurp_file($node->logfile), $offset), qr/waiting for lease/,
	'no log line for a wait shorter than deadlock_timeout, nor with the setting off');
is((sql_state($node, 'postgres',
		q{CREATE ROLE regress_waits LOGIN; SET ROLE regress_waits; SET fence.log_lease_waits = on}))[0],
	'42501', 'only a superuser sets fence.log_lease_waits');

$holder->{run}->kill_kill;
unlike(slurp_file($node->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$node->stop;
done_testing();
