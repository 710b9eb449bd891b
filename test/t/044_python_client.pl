# The Python client library, clients/python (pgfence), against a real node.
#
# The package is installed as a user would, offline: into a venv that sees
# Debian's psycopg, psycopg_pool and pytest (python3 -m venv
# --system-site-packages, pip install --no-index --no-build-isolation), from
# a scratch copy of clients/python.  Then its pytest suite runs with that
# venv's interpreter against this node (PGFENCE_TEST_DSN, a superuser's
# conninfo; fence.test_clock = on for pgfence.testing; PGFENCE_TEST_RESTART,
# a pg_ctl restart of the node, for the restart test;
# PGFENCE_TEST_PGBOUNCER_DSN, a PgBouncer in transaction mode with one
# server connection in front of it), and each pytest
# outcome is reported as one TAP line.  A missing package or a skipped test
# is a failure, not a skip: make test installs what the suite needs.
use strict;
use warnings;

use File::Copy ();
use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $src = $ENV{FENCE_SRC} || "$FindBin::RealBin/../..";
my $client = "$src/clients/python";
my $dir = PostgreSQL::Test::Utils::tempdir;

# A scratch copy: pip and pytest write beside the sources.
my ($out, $err) = ('', '');
ok(IPC::Run::run([ 'cp', '-R', $client, "$dir/src" ], '>', \$out, '2>', \$err),
	'copied clients/python')
  or diag($err);

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

# Debian's interpreter, where python3-psycopg and the rest are installed.
run_ok([ '/usr/bin/python3', '-m', 'venv', '--system-site-packages', "$dir/venv" ],
	'a venv on Debian\'s python3');
my $py = "$dir/venv/bin/python";
run_ok(
	[
		$py, '-m', 'pip', 'install', '--quiet', '--no-index',
		'--no-build-isolation', "$dir/src"
	],
	'pip installs pgfence offline');
# -P: the working directory (the sources) is not on sys.path, so what is
# imported is what pip installed.
my (undef, $where) = run_ok(
	[
		$py, '-P', '-c',
		'import os, pgfence; d = os.path.dirname(pgfence.__file__); '
		  . 'print(d); print(os.path.exists(os.path.join(d, "py.typed")))'
	],
	'the installed pgfence imports',
	cwd => "$dir/src");
like($where, qr{^\Q$dir\E/venv/.*site-packages/pgfence\nTrue$}m,
	'it is the venv\'s copy, with py.typed');

my ($node, $bouncer, $bouncer_dsn) = client_test_node('pyclient', 'pgfence_test',
	conf => "fence.test_clock = on\n");

local $ENV{PGFENCE_TEST_DSN} = $node->connstr('pgfence_test');
local $ENV{PGFENCE_TEST_PGBOUNCER_DSN} = $bouncer_dsn;
local $ENV{PGFENCE_TEST_RESTART} = restart_command($node);
my ($ran, $report, $stderr) = run_ok(
	[ $py, '-P', '-m', 'pytest', '-p', 'no:cacheprovider', '-rA', '-q', 'tests' ],
	'pytest exits 0',
	cwd => "$dir/src",
	timeout => 900);

# One TAP line per pytest outcome in its short summary (-rA).
my ($passed, $others) = (0, 0);
for my $line (split /\n/, $report)
{
	next unless $line =~ /^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (.*)$/;
	my ($outcome, $what) = ($1, $2);
	if ($outcome eq 'PASSED')
	{
		pass("pytest: $what");
		$passed++;
	}
	else
	{
		fail("pytest: $outcome $what");
		$others++;
	}
}
diag($report) if $others || !$ran;
# Fewer than this means a file of tests went missing.
cmp_ok($passed, '>=', 45, "pytest: $passed tests passed");
like($report, qr/test_frozen_holder/, 'pytest: the frozen holder ran');
like($report, qr/test_server_restart_while_held/, 'pytest: the restart ran');
like($report, qr/test_lease_through_transaction_pooling/, 'pytest: the PgBouncer tests ran');

IPC::Run::signal($bouncer, 'TERM');
$bouncer->finish;
$node->stop;
done_testing();
