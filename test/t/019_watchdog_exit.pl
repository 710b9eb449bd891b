# A watchdog (fence_wait_lease_end) that does not return normally.
#
# A session sleeping in fence_wait_lease_end is counted in its lease
# partition, so that whoever ends a lease there wakes it; the count must go
# down however the sleep ends.  A cancel is an ERROR, which unwinds; a
# pg_terminate_backend is a FATAL, which does not, and used to leave the
# count raised for the server's life (every release and renewal in that
# partition then broadcast to nobody).  The count is read from the
# watchdog's own DEBUG2 line, which says how many sessions wait in its
# partition once it is counted.
#
# The same holds for a watchdog of several leases (fence_wait_leases_end),
# which is counted server-wide instead, so that whoever ends a lease
# anywhere wakes it while such a session exists.
#
# Proven, for both: after a watchdog is terminated, and after one is
# cancelled, the next watchdog is the only one counted; a watchdog still
# returns when its lease is released.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fence_node('watchdog');

sub sq { return $node->safe_psql('postgres', $_[0]); }

sub gone
{
	my ($pid) = @_;
	return wait_until(10, sub {
		sq("SELECT count(*) FROM pg_stat_activity WHERE pid = $pid") eq '0';
	});
}

# The two kinds of watchdog: the SQL it runs (of the held lease's token),
# the DEBUG2 line that gives its count, and what it prints when the lease
# of that token is released.
my %kinds = (
	one => {
		sql => q{SELECT 'ENDED=' || fence_wait_lease_end('job-w', TOKEN)},
		counted =>
		  qr/fence: (\d+) sessions now wait for a lease of partition \d+ to end/,
		ended => qr/ENDED=released/,
	},
	several => {
		sql => q{SELECT 'ENDED=' || key || ':' || status FROM fence_wait_leases_end(
		  ARRAY['job-w-other', 'job-w'], ARRAY[OTHER, TOKEN]::fence_token[])},
		counted => qr/fence: (\d+) sessions now wait for one of several leases to end/,
		ended => qr/ENDED=job-w:released/,
	});

# A detached holder, which outlives the sessions below; a second lease,
# which the watchdog of several leases watches too and nothing ends.
my $other = sq(q{SELECT fence_try_lease('job-w-other', '1 hour', 'holder')::bigint});
my $n = 0;
for my $kind (sort keys %kinds)
{
	my $k = $kinds{$kind};
	my $tok = sq(q{SELECT fence_try_lease('job-w', '1 hour', 'holder')::bigint});
	ok($tok > 0, "$kind: the lease is held");
	(my $sql = $k->{sql}) =~ s/TOKEN/$tok/;
	$sql =~ s/OTHER/$other/;

	# Start a watchdog; return its handle, pid and the count its DEBUG2
	# line gives.
	my $watchdog = sub {
		my $app = 'watchdog' . ++$n;
		my $offset = -s $node->logfile;
		my $h = bg_start($node, 'postgres', qq{
SET log_min_messages = debug2;
$sql;
}, appname => $app);
		my $count;
		wait_until(10, sub {
			my $log = substr(slurp_file($node->logfile), $offset);
			($count) = $log =~ $k->{counted};
			defined $count;
		});
		return ($h, backend_pid_of($node, $app), $count);
	};

	my ($h, $pid, $count) = $watchdog->();
	is($count, 1, "$kind: the first watchdog is the only one counted");

	sq("SELECT pg_terminate_backend($pid)");
	ok(gone($pid), "$kind: the terminated watchdog is gone");
	bg_finish($h);
	($h, $pid, $count) = $watchdog->();
	is($count, 1, "$kind: after a terminated watchdog, the next is the only one counted");

	sq("SELECT pg_cancel_backend($pid)");
	ok(wait_until(10, sub { bg_tokens($h); $h->{err} =~ /canceling statement/ }),
		"$kind: the cancelled watchdog stopped waiting");
	bg_finish($h);
	ok(gone($pid), "$kind: the cancelled watchdog is gone");
	($h, $pid, $count) = $watchdog->();
	is($count, 1, "$kind: after a cancelled watchdog, the next is the only one counted");

	is(sq(qq{SELECT fence_release('job-w', $tok)}), 't', "$kind: the holder releases");
	ok(wait_until(10, sub { bg_tokens($h); $h->{out} =~ $k->{ended} }),
		"$kind: the watchdog returns: released");
	bg_finish($h);
}

unlike(slurp_file($node->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$node->stop;
done_testing();
