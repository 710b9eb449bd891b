# The Go client library, clients/go (package pgfence), against a real node.
#
# It builds offline, as toolchains allow here: Debian's golang-go with
# golang-github-jackc-pgx-v4-dev, in GOPATH mode (GO111MODULE=off), the
# package copied under a scratch GOPATH whose second entry is Debian's
# /usr/share/gocode.  go vet and go test -v run against this node
# (PGFENCE_TEST_DSN, a superuser's conninfo of a database with fence;
# PGFENCE_TEST_RESTART, a pg_ctl restart of the node;
# PGFENCE_TEST_PGBOUNCER_DSN, a PgBouncer in transaction mode with one
# server connection in front of it), with the race detector on, and each test's outcome is reported as one TAP line.  A missing package or a
# skipped test is a failure, not a skip: make test installs what it needs.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $src = $ENV{FENCE_SRC} || "$FindBin::RealBin/../..";
my $dir = PostgreSQL::Test::Utils::tempdir;
my $pkg = "$dir/gopath/src/fence/pgfence";

sub run_ok
{
	my ($cmd, $name, %opt) = @_;
	my ($o, $e) = ('', '');
	my $ok = IPC::Run::run($cmd, '>', \$o, '2>', \$e,
		init => sub { chdir($opt{cwd} || $dir) or die "chdir: $!" },
		IPC::Run::timeout($opt{timeout} || 300));
	ok($ok, $name) or diag("$o$e");
	return ($ok, $o, $e);
}

run_ok([ 'mkdir', '-p', "$dir/gopath/src/fence" ], 'a scratch GOPATH');
run_ok([ 'cp', '-R', "$src/clients/go", $pkg ], 'copied clients/go into it');
ok(-d '/usr/share/gocode/src/github.com/jackc/pgx/v4',
	'pgx v4 is installed (golang-github-jackc-pgx-v4-dev)');

# GOPATH mode, offline: nothing is fetched, everything comes from the two
# GOPATH entries.
local $ENV{GO111MODULE} = 'off';
local $ENV{GOPATH} = "$dir/gopath:/usr/share/gocode";
local $ENV{GOCACHE} = "$dir/gocache";
local $ENV{GOFLAGS} = '';
local $ENV{GOPROXY} = 'off';
local $ENV{HOME} = $dir;

run_ok([ 'go', 'version' ], 'go is installed');
run_ok([ 'go', 'vet', '.' ], 'go vet', cwd => $pkg);

my ($node, $bouncer, $bouncer_dsn) = client_test_node('goclient', 'pgfence_go');

local $ENV{PGFENCE_TEST_DSN} = $node->connstr('pgfence_go');
local $ENV{PGFENCE_TEST_PGBOUNCER_DSN} = $bouncer_dsn;
local $ENV{PGFENCE_TEST_RESTART} = restart_command($node);

my ($ran, $report, $stderr) = run_ok(
	[ 'go', 'test', '-race', '-count=1', '-v', '-timeout', '600s', '.' ],
	'go test exits 0',
	cwd => $pkg,
	timeout => 900);

# One TAP line per test (and subtest) outcome of go test -v.
my ($passed, $others) = (0, 0);
my %ran;
for my $line (split /\n/, $report)
{
	next unless $line =~ /^\s*--- (PASS|FAIL|SKIP): (\S+)/;
	my ($outcome, $what) = ($1, $2);
	$ran{$what} = 1;
	if ($outcome eq 'PASS')
	{
		pass("go test: $what");
		$passed++;
	}
	else
	{
		fail("go test: $outcome $what");
		$others++;
	}
}
diag("$report$stderr") if $others || !$ran;
note($_) for grep { /^\s+pgfence_test\.go:\d+: / } split /\n/, $report;
for my $t (
	qw(TestFrozenHolder TestRenewalKeepsLease TestBreakCancelsContext
	TestLossCancelsRunningStatement TestPooledConnectionCarriesNoToken
	TestKilledHolderExpires TestStallSuspendsLease TestStallPastDeadlineLosesLease
	TestUnavailable TestAcquireRelease TestDoReleasesOnErrorAndPanic TestStaleTokenError TestServerRestart
	TestWaiterGetsReleasedLease TestPoolStatementTimeoutSparesWatchdog
	TestTwentyLeasesOneWatchdog TestNewLeaseWatchedAtOnce TestPerLeaseWatchdog
	TestGrantOnPoolOpensNoConnection TestEarlyBreakStillLost
	TestShortLeasesLeaveWatchdogAlone TestInterruptedPoolGrantReleased
	TestReleaseOwnedReadsOneKey TestJoinsShareCancelRequests TestContextCancelledWhenDoneCloses
	TestLeaseThroughTransactionPooling
	TestLeaseThroughTransactionPooling/prefer_simple_protocol_true
	TestLeaseThroughTransactionPooling/statement_cache_mode_describe))
{
	ok($ran{$t}, "go test: $t ran");
}
cmp_ok($passed, ">=", 28, "go test: $passed tests passed");

IPC::Run::signal($bouncer, 'TERM');
$bouncer->finish;
$node->stop;
done_testing();
