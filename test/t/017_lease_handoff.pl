# Hand-offs: the backend that releases a lease grants it to the head of the
# queue itself, and the waiter finds its grant ready when it wakes.
#
# Proven: a release grants the lease (or a released permit) to the head
# waiter even while that waiter cannot run (it is stopped with SIGSTOP): the
# lease shows the waiter as its holder and the waiter has left the queue.  A
# waiter cancelled (pg_cancel_backend, statement_timeout) or terminated
# (pg_terminate_backend) after such a grant landed, before it could return
# it, leaves no lease, no queue entry and no remembered token behind, and
# the next waiter gets the key.  A lease handed over this way is the
# waiter's own: fence_current_token names it, DISCARD ALL releases a session
# lease, and a transaction lease ends with the waiter's transaction.  A
# handed lease carries the waiter's own fence.lock_delay, and a key in its
# lock-delay is handed to nobody before the delay ends.  A lease that
# expires is handed to the head by whoever finds it expired first.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fence_node('handoff');

sub sq { return $node->safe_psql('postgres', $_[0]); }

# A background psql fed statement by statement.
sub session
{
	my ($name, $script) = @_;
	my $h = bg_start($node, 'postgres', $script // '', appname => $name);
	$h->{pid} = backend_pid_of($node, $name)
	  if wait_until(10, sub { backend_pid_of($node, $name) ne '' });
	return $h;
}

sub send_sql
{
	my ($h, $sql) = @_;
	$h->{in} .= $sql;
	return wait_until(10, sub { eval { $h->{run}->pump_nb; }; $h->{in} eq '' });
}

# Wait (up to 30 s) until the session's output matches; the first capture.
sub output_of
{
	my ($h, $re) = @_;
	my $got;
	wait_until(30, sub {
		eval { $h->{run}->pump_nb; };
		($got) = ($h->{out} . $h->{err}) =~ $re;
		return defined $got;
	});
	return $got;
}

sub queue_of
{
	my ($key) = @_;
	return sq("SELECT coalesce(string_agg(pid::text, ',' ORDER BY queue_position), '')
				 FROM fence_lease_waiters WHERE key = '$key'");
}

sub holder_of
{
	my ($key) = @_;
	return sq("SELECT coalesce(string_agg(pid || ' ' || scope || ' ' || waiters, ','), '')
				 FROM fence_leases WHERE key = '$key'");
}

# Queue w1 then w2 for $key, each with the blocking call $ask (w1 after
# $w1_setup).
sub queue_two
{
	my ($key, $ask, $w1_setup) = @_;
	my $w1 = session("w1_$key", ($w1_setup // '') . "SELECT 'W1=' || $ask;\n");
	ok(wait_until(10, sub { queue_of($key) eq $w1->{pid} }), "$key: w1 queues");
	my $w2 = session("w2_$key", "SELECT 'W2=' || $ask;\n");
	ok(wait_until(10, sub { queue_of($key) eq "$w1->{pid},$w2->{pid}" }),
		"$key: w2 queues behind it");
	return ($w1, $w2);
}

# Queue w1 then w2 behind a holder; stop w1 and have the holder release:
# the grant lands in w1 while it cannot run.  $ask is the blocking call,
# $free the holder's release.
sub granted_while_stopped
{
	my ($key, $holder, $free, $ask, $w1_setup) = @_;
	my ($w1, $w2) = queue_two($key, $ask, $w1_setup);

	kill 'STOP', $w1->{pid};
	send_sql($holder, "SELECT 'FREED=' || $free;\n");
	is(output_of($holder, qr/FREED=(\w+)/), 'true', "$key: the holder lets go");
	like(holder_of($key), qr/^$w1->{pid} session 1$/,
		"$key: the release granted the key to the stopped head waiter");
	is(queue_of($key), $w2->{pid}, "$key: ... which left the queue");
	return ($w1, $w2);
}

# After the stopped w1 was cancelled or terminated and let run: nothing of
# w1 is left, and w2 holds the key.
sub w1_left_nothing
{
	my ($key, $w1, $w2, $error) = @_;
	kill 'CONT', $w1->{pid};
	like(output_of($w1, qr/((?:ERROR|FATAL):[^\n]*)/) // '', $error,
		"$key: w1's wait ends in its error");
	ok(defined output_of($w2, qr/W2=(\d+)/), "$key: the next waiter gets the key");
	like(holder_of($key), qr/^$w2->{pid} session 0$/,
		"$key: w2 holds it; w1 holds nothing and nobody waits");
	is(queue_of($key), '', "$key: the queue is empty");
}

# 1. Cancelled after the grant landed.
my $holder = session('holder', "SELECT 'HELD=' || fence_try_lease('k-cancel', '1 hour');\n");
ok(defined output_of($holder, qr/HELD=(\d+)/), 'k-cancel: the holder takes it');
my ($w1, $w2) = granted_while_stopped('k-cancel', $holder,
	"fence_release('k-cancel', fence_current_token('k-cancel'))",
	"fence_lease('k-cancel', '1 hour')");
is(sq("SELECT pg_cancel_backend($w1->{pid})"), 't', 'k-cancel: cancel w1');
w1_left_nothing('k-cancel', $w1, $w2, qr/canceling statement due to user request/);
send_sql($w1, "SELECT 'W1TOKEN=' || coalesce(fence_current_token('k-cancel')::text, 'none');\n");
is(output_of($w1, qr/W1TOKEN=(\w+)/), 'none', 'k-cancel: w1 remembers no token for the key');

# The waiter's bookkeeping for a lease another backend granted it: w2 was
# handed the key by the cancelled w1's clean-up.
my $w2_token = output_of($w2, qr/W2=(\d+)/);
send_sql($w2, "SELECT 'W2CURRENT=' || fence_current_token('k-cancel');\n");
is(output_of($w2, qr/W2CURRENT=(\d+)/), $w2_token,
	'k-cancel: the token w2 was handed is its current token for the key');
send_sql($w2, "DISCARD ALL;\nSELECT 'W2DISCARDED';\n");
ok(defined output_of($w2, qr/(W2DISCARDED)/), 'k-cancel: w2 runs DISCARD ALL');
is(holder_of('k-cancel'), '', 'k-cancel: DISCARD ALL released the handed session lease');
bg_finish($_) for ($w1, $w2);

# 2. Terminated after the grant landed: the exit callback releases it.
send_sql($holder, "SELECT 'HELD2=' || fence_try_lease('k-kill', '1 hour');\n");
ok(defined output_of($holder, qr/HELD2=(\d+)/), 'k-kill: the holder takes it');
($w1, $w2) = granted_while_stopped('k-kill', $holder,
	"fence_release('k-kill', fence_current_token('k-kill'))",
	"fence_lease('k-kill', '1 hour')");
is(sq("SELECT pg_terminate_backend($w1->{pid})"), 't', 'k-kill: terminate w1');
w1_left_nothing('k-kill', $w1, $w2, qr/terminating connection due to administrator command/);
send_sql($w2, "SELECT 'RELEASED=' || fence_release('k-kill', fence_current_token('k-kill'));\n");
is(output_of($w2, qr/RELEASED=(\w+)/), 'true', 'k-kill: w2 releases it');
bg_finish($_) for ($w1, $w2);

# 3. statement_timeout passes while the stopped waiter has its grant.
send_sql($holder, "SELECT 'HELD3=' || fence_try_lease('k-timeout', '1 hour');\n");
ok(defined output_of($holder, qr/HELD3=(\d+)/), 'k-timeout: the holder takes it');
($w1, $w2) = granted_while_stopped('k-timeout', $holder,
	"fence_release('k-timeout', fence_current_token('k-timeout'))",
	"fence_lease('k-timeout', '1 hour')", "SET statement_timeout = '3s';\n");
sleep 4;
w1_left_nothing('k-timeout', $w1, $w2, qr/canceling statement due to statement timeout/);
bg_finish($_) for ($w1, $w2);

# 4. A released permit goes to the head waiter; cancelled, it goes on.
sq("SELECT fence_try_permit('k-permit', 2, '1 hour', owner => 'a')");
send_sql($holder, "SELECT 'HELD4=' || fence_try_permit('k-permit', 2, '1 hour');\n");
ok(defined output_of($holder, qr/HELD4=(\d+)/), 'k-permit: both permits are held');
($w1, $w2) = queue_two('k-permit', "fence_permit('k-permit', 2, '1 hour')");
kill 'STOP', $w1->{pid};
send_sql($holder, "SELECT 'FREED4=' || fence_release('k-permit', fence_current_token('k-permit'));\n");
is(output_of($holder, qr/FREED4=(\w+)/), 'true', 'k-permit: the holder releases its permit');
is(sq("SELECT count(*) FROM fence_leases WHERE key = 'k-permit' AND pid = $w1->{pid}"), '1',
	'k-permit: the released permit went to the stopped head waiter');
is(queue_of('k-permit'), $w2->{pid}, 'k-permit: ... which left the queue');
is(sq("SELECT pg_cancel_backend($w1->{pid})"), 't', 'k-permit: cancel w1');
kill 'CONT', $w1->{pid};
ok(defined output_of($w2, qr/W2=(\d+)/), 'k-permit: the next waiter gets the permit');
is(sq("SELECT string_agg(coalesce(pid::text, owner), ',' ORDER BY owner NULLS LAST)
		 FROM fence_leases WHERE key = 'k-permit'"), "a,$w2->{pid}",
	'k-permit: the permits are owner a\'s and w2\'s; w1 holds none');
is(queue_of('k-permit'), '', 'k-permit: the queue is empty');
bg_finish($_) for ($w1, $w2);

# 5. A transaction lease handed over ends with the waiter's transaction.
send_sql($holder, "SELECT 'HELD5=' || fence_try_lease('k-xact', '1 hour');\n");
ok(defined output_of($holder, qr/HELD5=(\d+)/), 'k-xact: the holder takes it');
$w1 = session('w1_k-xact', "BEGIN;\nSELECT 'W1=' || fence_xact_lease('k-xact', '1 hour');\n");
ok(wait_until(10, sub { queue_of('k-xact') eq $w1->{pid} }), 'k-xact: w1 queues');
kill 'STOP', $w1->{pid};
send_sql($holder, "SELECT 'FREED5=' || fence_release('k-xact', fence_current_token('k-xact'));\n");
is(output_of($holder, qr/FREED5=(\w+)/), 'true', 'k-xact: the holder releases it');
like(holder_of('k-xact'), qr/^$w1->{pid} transaction 0$/,
	'k-xact: the stopped waiter was granted a transaction lease');
kill 'CONT', $w1->{pid};
ok(defined output_of($w1, qr/W1=(\d+)/), 'k-xact: w1 returns its token');
send_sql($w1, "COMMIT;\nSELECT 'COMMITTED';\n");
ok(defined output_of($w1, qr/(COMMITTED)/), 'k-xact: w1 commits');
is(holder_of('k-xact'), '', 'k-xact: the handed transaction lease ended at COMMIT');
bg_finish($w1);

# 6. The lock-delay: a handed lease carries the waiter's own
# fence.lock_delay, and no hand-off passes over a delay.  w1 is handed the
# key by a release (no delay), then its session ends holding it: the lease
# is left expired in w1's 3 s delay, and w2, next in line, gets the key
# only once the delay has passed.
send_sql($holder, "SET fence.lock_delay = '1s';\nSELECT 'HELD6=' || fence_try_lease('k-delay', '1 hour');\n");
ok(defined output_of($holder, qr/HELD6=(\d+)/), 'k-delay: the holder takes it');
($w1, $w2) = queue_two('k-delay', "fence_lease('k-delay', '1 hour')",
	"SET fence.lock_delay = '3s';\n");
send_sql($holder, "SELECT 'FREED6=' || fence_release('k-delay', fence_current_token('k-delay'));\n");
is(output_of($holder, qr/FREED6=(\w+)/), 'true', 'k-delay: the holder releases it');
ok(defined output_of($w1, qr/W1=(\d+)/), 'k-delay: the release handed it to w1 at once');
is(sq("SELECT pg_terminate_backend($w1->{pid})"), 't', 'k-delay: w1\'s session ends');
ok( wait_until(10, sub {
		sq("SELECT count(*) FROM fence_leases WHERE key = 'k-delay' AND NOT live") eq '1' }),
	'k-delay: w1\'s lease is left expired');
my $ended = sq("SELECT expires_at FROM fence_leases WHERE key = 'k-delay'");
sleep 1;
is(queue_of('k-delay'), $w2->{pid}, 'k-delay: w2 still waits, a second into the delay');
ok(defined output_of($w2, qr/W2=(\d+)/), 'k-delay: w2 gets the key after the delay');
is(sq("SELECT granted_at >= '$ended'::timestamptz + '3 s' FROM fence_leases
		WHERE key = 'k-delay' AND pid = $w2->{pid}"), 't',
	'k-delay: not before w1\'s end plus w1\'s 3 s delay');
bg_finish($_) for ($w1, $w2);

# 7. A lease that expires goes to the head of the queue from whoever finds
# it expired first: here w2, whose timer fires at the expiry while the head,
# w1, is stopped.
send_sql($holder, "SELECT 'HELD7=' || fence_try_lease('k-expire', '2 seconds');\n");
ok(defined output_of($holder, qr/HELD7=(\d+)/), 'k-expire: the holder takes it for 2 s');
($w1, $w2) = queue_two('k-expire', "fence_lease('k-expire', '1 hour')");
kill 'STOP', $w1->{pid};
ok( wait_until(15, sub {
		holder_of('k-expire') eq "$w1->{pid} session 1" }),
	'k-expire: at the expiry, w2 handed the key to the stopped head waiter');
kill 'CONT', $w1->{pid};
ok(defined output_of($w1, qr/W1=(\d+)/), 'k-expire: w1 returns holding it');
is(queue_of('k-expire'), $w2->{pid}, 'k-expire: w2 still waits');
send_sql($w1, "SELECT 'RELEASED7=' || fence_release('k-expire', fence_current_token('k-expire'));\n");
ok(defined output_of($w2, qr/W2=(\d+)/), 'k-expire: w2 gets it when w1 releases');
bg_finish($_) for ($w1, $w2);

$holder->{run}->kill_kill;
unlike(slurp_file($node->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$node->stop;
done_testing();
