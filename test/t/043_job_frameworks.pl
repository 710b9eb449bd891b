# The recipes of doc/jobs.md, run against the real job frameworks with a
# real process pause.
#
# The code blocks come from the document itself, so it cannot drift from
# what is tested: the block marked <!-- jobs-setup --> makes the table in a
# fresh database for each run, and each block marked <!-- jobs-test: FILE -->
# is written to FILE and run: pg-boss and graphile-worker (npm, the versions
# pinned in test/jobs/package.json, installed into a scratch directory
# beside the Node.js client, clients/node, packed with npm pack and
# installed from its tarball), Celery (Debian's python3-celery, with a
# redis-server started here on loopback, and the Python client,
# clients/python, on PYTHONPATH over Debian's psycopg) and a cron job (sh
# and psql, by hand).
#
# Each framework runs twice, with the same worker code: once on a table
# without fence's trigger (fence_unprotect), once with it.  Worker A takes
# the job and is frozen (SIGSTOP of its process group) during its last
# piece of work, after its last renewal; the framework gives the job to
# worker B once its expiry has passed; B writes; A is woken (SIGCONT) and
# goes on to write what it computed.  In both runs B getting the job while A
# is alive and mid-job is what the framework alone gives.  The hand-written
# cron job, checking its lease only by fence_renew before its last step,
# writes over B without the trigger.  The clients also learn of the loss
# from the server, and A may stop on that alone (LeaseLostError) before its
# write (as it does when the machine is not too busy), or its write may
# reach the server first: without the trigger either is accepted, and the
# note of each run says which (the client's own check is a race that only
# the trigger closes).  With the trigger A's late write never lands, A
# stops (the clients' LeaseLostError or StaleTokenError, the cron job's
# LF001), and B's result stands.
#
# graphile-worker's lock lasts 4 hours and cannot be shortened: the test
# moves its lock 4 hours back and fence's lease clock (fence.test_clock) 4
# hours forward instead of waiting.  The others run in real time, with
# expiries of a few seconds.
#
# The frameworks do what they do whatever the server version, so this runs
# on PostgreSQL 15 only (Debian's, in make test); elsewhere it skips.
use strict;
use warnings;

use FindBin;
use POSIX ();
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

my $major = $ENV{FENCE_PG_MAJOR} // ((`pg_config --version` =~ /PostgreSQL (\d+)/)[0] // '');
plan skip_all => "the job frameworks are tested on PostgreSQL 15 only (their behaviour "
  . "does not depend on the server), and this is PostgreSQL $major"
  if $major ne '15';

my $src = $ENV{FENCE_SRC} || "$FindBin::RealBin/../..";
my $doc = slurp_file("$src/doc/jobs.md");

my ($setup) = $doc =~ /<!-- jobs-setup -->\n```sql\n(.*?)```/s;
ok(defined $setup, 'the document has a setup block');
my %code;
while ($doc =~ /<!-- jobs-test: (\S+) -->\n```[a-z]*\n(.*?)```/sg)
{
	$code{$1} = $2;
}
is_deeply([ sort keys %code ],
	[ sort qw(pgboss-worker.js graphile-worker.js celery_reports.py report-job.sh) ],
	'the document has a recipe for each framework');

my $dir = PostgreSQL::Test::Utils::tempdir;
for my $file (keys %code)
{
	open(my $fh, '>', "$dir/$file") or die "$dir/$file: $!";
	print $fh $code{$file};
	close $fh;
}

# Every process this test starts leads its own process group; all of them
# are killed at the end, however the test ends.
my %procs;
my $redis_pid;

END
{
	kill 'KILL', -$_ for keys %procs;
	kill 'TERM', $redis_pid if $redis_pid;
}

sub spawn
{
	my ($log, @cmd) = @_;
	my $pid = fork // die "fork: $!";
	if ($pid == 0)
	{
		setpgrp(0, 0);
		chdir $dir or POSIX::_exit(126);
		open(STDIN, '<', '/dev/null');
		open(STDOUT, '>', $log) or POSIX::_exit(126);
		open(STDERR, '>&', \*STDOUT);
		# In a block, so that perl does not warn that the exit is never reached.
		{ exec @cmd; }
		POSIX::_exit(127);
	}
	$procs{$pid} = 1;
	return $pid;
}

sub reap
{
	for my $pid (@_)
	{
		kill 'KILL', -$pid;
		waitpid($pid, 0);
		delete $procs{$pid};
	}
}

# The first match of $re in the log within $secs seconds (its first group
# that matched, if it has groups), or undef.
sub wait_line
{
	my ($log, $re, $secs) = @_;
	my $deadline = time + $secs;
	while (1)
	{
		my $text = -e $log ? slurp_file($log) : '';
		return (grep { defined } @{^CAPTURE})[0] // $& if $text =~ $re;
		return undef if time > $deadline;
		usleep(100_000);
	}
}

sub show_log
{
	my ($log) = @_;
	diag("$log:\n" . (-e $log ? slurp_file($log) : '(none)'));
}

# The Node.js client, packed as it would be published (from a scratch copy,
# without anything installed beside its sources), then the npm packages and
# that tarball, into the scratch directory.
my ($out, $err) = ('', '');
my $packed = IPC::Run::run([ 'cp', '-R', "$src/clients/node", "$dir/pgfence-src" ],
	'>', \$out, '2>', \$err)
  && IPC::Run::run(
	[
		'npm', 'pack', '--silent', '--pack-destination', $dir,
		"--cache=$dir/npm-cache", "$dir/pgfence-src"
	],
	'>', \$out, '2>', \$err,
	IPC::Run::timeout(120));
chomp $out;
ok($packed && -f "$dir/$out", 'npm pack made the Node.js client\'s tarball')
  or diag("$out$err");
my $jobs_json = slurp_file("$FindBin::RealBin/../jobs/package.json");
$jobs_json =~ s/("dependencies": \{\n)/$1    "pgfence": "file:$dir\/$out",\n/
  or die 'test/jobs/package.json has no dependencies';
open(my $pj, '>', "$dir/jobs.json") or die "$dir/jobs.json: $!";
print $pj $jobs_json;
close $pj;
my $npm_ok = npm_install($dir, "$dir/jobs.json",
	'pg-boss and graphile-worker');
ok($npm_ok, 'npm installed pg-boss, graphile-worker and the packed pgfence');

# Redis for Celery, on loopback, without persistence.
my $redis_port = PostgreSQL::Test::Cluster::get_free_port();
$redis_pid = spawn("$dir/redis.log", 'redis-server', '--bind', '127.0.0.1',
	'--port', $redis_port, '--save', '', '--appendonly', 'no', '--dir', $dir);
delete $procs{$redis_pid};    # stopped last, by the END block
ok(defined wait_line("$dir/redis.log", qr/Ready to accept connections/, 30),
	'redis-server started') or show_log("$dir/redis.log");

my $node = fence_node('jobs', conf => "fence.test_clock = on\n");
$ENV{PGHOST} = $node->host;
$ENV{PGPORT} = $node->port;
$ENV{PGUSER} = scalar getpwuid($<);
$ENV{CELERY_BROKER_URL} = "redis://127.0.0.1:$redis_port/0";
$ENV{PYTHONPATH} = "$dir:$src/clients/python";

my @celery = ('/usr/bin/python3', '-m', 'celery', '-A', 'celery_reports', 'worker',
	'--pool=solo', '--without-gossip', '--without-mingle', '--without-heartbeat',
	'--loglevel=WARNING');

sub lease_ran_out
{
	my ($db) = @_;
	wait_until(30, sub {
		$node->safe_psql($db,
			"SELECT count(*) FROM fence_leases WHERE key = 'report:1' AND live") eq '0';
	});
}

# How each framework is driven: the command of a worker (or of a cron run),
# what puts the job on the queue (before or after worker A starts), and
# what stands for the time the frozen worker A loses.
my %frameworks = (
	'pg-boss' => {
		worker => [ 'node', 'pgboss-worker.js' ],
		send_before => [ 'node', 'pgboss-worker.js', 'send' ],
	},
	'graphile-worker' => {
		worker => [ 'node', 'graphile-worker.js' ],
		# Once worker A has installed graphile-worker's schema.
		send_after => sub {
			my ($db, $a_log) = @_;
			defined wait_line($a_log, qr/Worker connected and looking for jobs/, 60)
			  or return 0;
			$node->safe_psql($db,
				q{SELECT graphile_worker.add_job('build_report', '{"id": 1}')});
			return 1;
		},
		# 4 hours pass for graphile-worker's lock and for the lease.
		frozen => sub {
			my ($db) = @_;
			$node->safe_psql($db, q{
UPDATE graphile_worker._private_jobs SET locked_at = locked_at - interval '4 hours 1 second';
SELECT fence_advance_clock('4 hours 1 second');});
		},
	},
	'Celery' => {
		worker => \@celery,
		send_before => [
			'/usr/bin/python3', '-c',
			'import celery_reports; celery_reports.build_report.delay(1)'
		],
		# B starts once the visibility timeout (the lease's TTL) has passed:
		# kombu's Redis transport looks for overdue tasks when a worker starts
		# and then only every 100 seconds or so.
		frozen => \&lease_ran_out,
	},
	'cron' => {
		worker => [ 'sh', 'report-job.sh' ],
		# The next run of the timer comes after the stalled run's lease ran out.
		frozen => \&lease_ran_out,
	},
);

my $n = 0;
for my $fw ('pg-boss', 'graphile-worker', 'Celery', 'cron')
{
	my $f = $frameworks{$fw};
	for my $fenced (0, 1)
	{
		my $what = "$fw, " . ($fenced ? 'with fence' : 'without fence');
		if ($fw =~ /pg-boss|graphile/ && !$npm_ok)
		{
			fail("$what: not run, npm install failed");
			next;
		}
		my $db = 'jobs_' . ++$n;
		my $t0 = time;
		$node->safe_psql('postgres', "CREATE DATABASE $db");
		$node->safe_psql($db, 'CREATE EXTENSION fence');
		$node->safe_psql($db, $setup);
		$node->safe_psql($db, "SELECT fence_unprotect('reports')") unless $fenced;
		$node->safe_psql($db, 'SELECT fence_set_clock(NULL)');
		local $ENV{PGDATABASE} = $db;
		system('redis-cli', '-p', $redis_port, 'flushall') if $fw eq 'Celery';

		my ($a_log, $b_log) = ("$dir/$db-a.log", "$dir/$db-b.log");
		if ($f->{send_before})
		{
			my ($out, $err) = ('', '');
			my $sent = IPC::Run::run($f->{send_before}, '>', \$out, '2>', \$err,
				init => sub { chdir $dir or die "chdir $dir: $!" },
				IPC::Run::timeout(60));
			ok($sent, "$what: the job is queued") or diag("$out$err");
		}
		my $a = spawn($a_log, @{ $f->{worker} });
		if ($f->{send_after})
		{
			ok($f->{send_after}->($db, $a_log), "$what: the job is queued")
			  or show_log($a_log);
		}

		# A works on the job; freeze it during its last step.
		my $a_name = wait_line($a_log, qr/((?:worker|run) \d+) step 3 of report:1/, 60);
		ok(defined $a_name, "$what: worker A reaches its last step") or show_log($a_log);
		kill 'STOP', -$a;
		$f->{frozen}->($db) if $f->{frozen};

		# B gets the job once the framework's expiry has passed, and writes.
		my $b = spawn($b_log, @{ $f->{worker} });
		my $b_name = wait_line($b_log, qr/((?:worker|run) \d+) wrote report:1/, 60);
		ok(defined $b_name, "$what: worker B gets the job after A's expiry and writes")
		  or show_log($b_log);

		# A wakes up and writes what it computed.
		kill 'CONT', -$a;
		# "wrote", or how A stopped: "LF001" (by hand), or the client's error.
		my $a_end = wait_line($a_log,
			qr/(?:worker|run) \d+ (?:(wrote) report:1|(LF001) on report:1|lost report:1 \((\w+)\))/,
			30) // 'nothing';
		my $body = $node->safe_psql($db, 'SELECT body FROM reports WHERE id = 1');
		my $stops = $fw eq 'cron' ? qr/^LF001$/ : qr/^(LeaseLostError|StaleTokenError)$/;
		if ($fenced)
		{
			like($a_end, $stops, "$what: A's late write does not land, and A stops")
			  or show_log($a_log);
			is($body, "built by $b_name", "$what: B's result stands");
		}
		elsif ($fw eq 'cron')
		{
			is($a_end, 'wrote', "$what: A's late write succeeds") or show_log($a_log);
			is($body, "built by $a_name", "$what: A's result overwrote B's");
		}
		else
		{
			# The client's own check races A's write: either may win.
			like($a_end, qr/^(wrote|LeaseLostError)$/,
				"$what: A, woken, writes or stops on the client's check")
			  or show_log($a_log);
			is($body, 'built by ' . ($a_end eq 'wrote' ? $a_name : $b_name),
				"$what: the row holds the result of the last writer");
		}
		reap($a, $b);
		note(sprintf("%s: %.1f s, A: %s", $what, time - $t0, $a_end));
	}
}

$node->safe_psql('postgres', 'SELECT fence_set_clock(NULL)');
$node->stop;
done_testing();
