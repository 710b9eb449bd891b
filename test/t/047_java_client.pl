# The Java client library, clients/java (dev.pgfence), against a real node.
#
# A scratch copy of clients/java is built with its Makefile (javac, from
# Debian's openjdk-17-jdk-headless, libpostgresql-jdbc-java and junit5: no
# build tool, no repository), and its JUnit 5 tests run with the console
# launcher against this node, which listens on 127.0.0.1 for pgJDBC
# (PGFENCE_TEST_URL, a superuser's JDBC URL; PGFENCE_TEST_RESTART, a pg_ctl
# restart of the node, for the restart test, which runs last;
# PGFENCE_TEST_PGBOUNCER_URL, the JDBC URL of a PgBouncer in transaction mode
# with one server connection in front of it).  Each test in
# JUnit's XML report is one TAP line.  A missing package or a skipped test is
# a failure, not a skip: make test installs what the suite needs.
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

# A scratch copy: the build writes beside the sources.
my ($out, $err) = ('', '');
ok(IPC::Run::run([ 'cp', '-R', "$src/clients/java", "$dir/java" ], '>', \$out, '2>', \$err),
	'copied clients/java')
  or diag($err);
for my $jar (qw(postgresql junit-platform-console-standalone junit-jupiter-api))
{
	ok(-f "/usr/share/java/$jar.jar", "/usr/share/java/$jar.jar is installed");
}

# pgJDBC sends extra_float_digits at connection start, which PgBouncer
# refuses unless told to ignore it.
my ($node, $bouncer, $bouncer_dsn) = client_test_node('javaclient', 'pgfence_test',
	conf => "listen_addresses = '127.0.0.1'\n",
	bouncer_settings => "ignore_startup_parameters = extra_float_digits\n");
my $user = getpwuid($<);
local $ENV{PGFENCE_TEST_URL} =
  'jdbc:postgresql://127.0.0.1:' . $node->port . "/pgfence_test?user=$user";
my ($bouncer_port) = $bouncer_dsn =~ /\bport=(\d+)/;
local $ENV{PGFENCE_TEST_PGBOUNCER_URL} =
  "jdbc:postgresql://127.0.0.1:$bouncer_port/fencedb?user=$user";
# The restart test's command: pg_ctl restart of this node.
local $ENV{PGFENCE_TEST_RESTART} = restart_command($node);
($out, $err) = ('', '');
my $ran = IPC::Run::run([ 'make', '-C', "$dir/java", 'test' ],
	'>', \$out, '2>', \$err, IPC::Run::timeout(900));
ok($ran, 'make test in clients/java exits 0') or diag("$out$err");

# One TAP line per test case of JUnit's report.
my $xml = '';
my $report = "$dir/java/build/test-reports/TEST-junit-jupiter.xml";
$xml = slurp_file($report) if -f $report;
ok($xml ne '', 'JUnit wrote its report');
my @cases;
while ($xml =~ m{<testcase\s+name="([^"]*)"\s+classname="([^"]*)"[^>]*?(/>|>(.*?)</testcase>)}sg)
{
	my ($name, $class, $body) = ($1, $2, $4 // '');
	push @cases, $name;
	if ($body =~ /<(failure|error|skipped)\b/)
	{
		fail("junit: $class.$name: $1");
	}
	else
	{
		pass("junit: $class.$name");
	}
}
diag("$out$err") if $ran && $xml =~ /<(failure|error)\b/;
is_deeply(
	[ sort @cases ],
	[
		sort qw(breakCancelsTheRunningStatement() failedRenewalsSuspendUntilTheDeadline()
		  frozenHolderIsFencedOut() twentyLeasesOneWatchdog() newLeaseIsWatchedAtOnce()
		  eachLeaseWatchesItselfWithoutTheSetWait()
		  killedHoldersLeaseExpires() leaseThroughTransactionPooling()
		  poolTimeoutsDoNotReachTheWatchdog() pooledConnectionCarriesNoToken()
		  renewalKeepsAShortLease() serverRestartLosesTheLease()
		  grantOnAFreeKeyOpensNoConnection() leaseBrokenEarlyIsStillLost()
		  shortLeasesLeaveTheWatchdogAlone() leaseOnAHeldKeyWaits()
		  grantWhoseAnswerIsLostIsReleased() releaseOfALostGrantReadsOneKeyWithFence13()
		  cancelledGrantIsGivenBackOnItsOwnSession())
	],
	'every test ran');
# Which way the frozen holder learnt it (the loss, or LF001 from its write).
note($1) if $out =~ /(frozen holder said: [^\n]*)/;
# The launcher's own summary, as it printed it.
my ($found) = $out =~ /\[\s*(\d+) tests found\s*\]/;
my ($good) = $out =~ /\[\s*(\d+) tests successful\s*\]/;
my ($bad) = $out =~ /\[\s*(\d+) tests failed\s*\]/;
is($found, 19, 'the launcher found 19 tests');
is($good, 19, 'the launcher reports 19 tests successful');
is($bad, 0, 'and 0 failed');

IPC::Run::signal($bouncer, 'TERM');
$bouncer->finish;
$node->stop;
done_testing();
