# Token law across crashes.
#
# Four rounds.  In each, clients take tokens while the server is killed
# under them: one rolls back every few tokens, one keeps a transaction open,
# and in rounds 1 and 2 also one commits after every token and one runs
# plain autocommit statements.  Every token reaches its client as a NOTICE the moment it is
# handed out, so the client's record includes the tokens of statements and
# transactions that never finished.  Rounds 1 and 3 end with
# stop('immediate'); rounds 2 and 4 with SIGKILL of one backend, which makes
# the postmaster kill every backend, reinitialize shared memory and recover
# (restart_after_crash).  Proven after every round: no token was ever handed
# out twice, each client saw its tokens strictly increasing, and every token
# handed out after the crash is above every token handed out before it.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# The WAL writer flushes in the background at most every 10 s, so only the
# counter's own flush makes a token durable; and in rounds 3 and 4 no client
# commits, so no commit flushes WAL for the counter either.
my $node = fence_node('crash',
	conf => "restart_after_crash = on\nmax_connections = 20\n"
	  . "wal_writer_delay = '10s'\nautovacuum = off\n");
install_token_helpers($node, 'postgres');
my $leases = has_function($node, 'fence_try_lease');
note $leases
  ? 'tokens come from the counter and from lease grants'
  : 'lease functions not installed: tokens come from the counter only';

my @all;     # every token any client saw, all rounds
my $max_before = 0;

for my $round (1 .. 4)
{
	my $how = $round % 2 ? 'stop immediate' : 'SIGKILL of a backend';
	my $committers = $round <= 2;
	my %s;
	$s{rollback} = bg_start($node, 'postgres', "CALL take_loop(100000, 0, 7);\n",
		appname => 'crash_rollback');
	$s{open_xact} = bg_start($node, 'postgres',
		"BEGIN;\nCALL take_loop(100000, 0, 0);\n",
		appname => 'crash_open');
	if ($committers)
	{
		$s{commit} = bg_start($node, 'postgres',
			"CALL take_loop(100000, 1, 0);\n",
			appname => 'crash_commit');
		$s{autocommit} = bg_start($node, 'postgres',
			"SELECT take_counter_token(), pg_sleep(0.001);\n" x 20000,
			appname => 'crash_auto');
	}

	# Let every client take tokens, then crash in the middle of it.
	my $busy = wait_until(60,
		sub { !grep { scalar(bg_tokens($_)) < 40 } values %s });
	ok($busy, "round $round: every client is taking tokens");

	if ($round % 2)
	{
		$node->stop('immediate');
	}
	else
	{
		my $pid = backend_pid_of($node, 'crash_rollback');
		ok(kill('KILL', $pid), "round $round: SIGKILL backend $pid");
	}

	my %got;
	$got{$_} = [ bg_finish($s{$_}) ] for keys %s;

	if ($round % 2)
	{
		$node->start;
	}
	else
	{
		ok(wait_for_server($node),
			"round $round: server back after the crash-restart cycle");
		like(
			slurp_file($node->logfile),
			qr/all server processes terminated; reinitializing/,
			"round $round: postmaster reinitialized shared memory");
	}

	my @round;
	for my $name (sort keys %got)
	{
		my @t = @{ $got{$name} };
		push @round, @t;
		my $increasing = 1;
		for my $i (1 .. $#t)
		{
			$increasing = 0 unless $t[$i] > $t[ $i - 1 ];
		}
		ok($increasing,
			"round $round: client '$name' saw its " . scalar(@t) . " tokens strictly increasing");
	}
	cmp_ok(min_of(@round), '>', $max_before,
		"round $round ($how): tokens above every token of earlier rounds");

	push @all, @round;
	$max_before = max_of(@all);

	# Right after recovery: new tokens from the counter and from grants.
	my $after = $node->safe_psql('postgres',
		'SELECT take_counter_token() FROM generate_series(1, 5)');
	my @after = split /\n/, $after;
	if ($leases)
	{
		push @after, split /\n/, $node->safe_psql('postgres',
			"SELECT take_lease_token('after-$round-' || g) FROM generate_series(1, 5) g");
	}
	cmp_ok(min_of(@after), '>', $max_before,
		"round $round ($how): every token after restart is above all "
		  . scalar(@all) . " tokens handed out before");
	push @all, @after;
	$max_before = max_of(@all);

	my @dups = check_unique(@all);
	is(scalar(@dups), 0,
		"round $round: no token handed out twice (of " . scalar(@all) . ")")
	  or diag("tokens handed out twice: @dups[0 .. ($#dups > 9 ? 9 : $#dups)]");
}

$node->stop;
done_testing();
