# The Node.js client library, clients/node (pgfence), against a real node.
#
# The package is packed as it would be published (npm pack, whose tarball
# must be named after the extension's version in fence.control), then
# installed from that tarball, beside node-postgres from the npm registry
# (the version range of test/drivers/package.json) and TypeScript, into a
# scratch application directory, where tsc --strict checks the
# declarations against a program using them.  Its node --test suite runs
# there, so what it exercises is the installed package, against this node
# (the libpq environment variables, a superuser; fence.test_clock = on for
# pgfence/testing; PGFENCE_TEST_RESTART, a pg_ctl restart of the node;
# PGFENCE_TEST_PGBOUNCER_URL, a PgBouncer in transaction mode with one
# server connection in front of it), and each of node's results is reported as one TAP line.  An npm registry out
# of reach, or a skipped test, is a failure, not a skip.
use strict;
use warnings;

use File::Path ();
use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $src = $ENV{FENCE_SRC} || "$FindBin::RealBin/../..";
my $client = "$src/clients/node";
my $dir = PostgreSQL::Test::Utils::tempdir;

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

# The version npm pack must give the tarball: fence.control's, with PGXN's
# third digit.
my ($version) = slurp_file("$src/fence.control") =~ /^default_version = '([0-9.]+)'/m;
ok(defined $version, 'fence.control names a version');
$version .= '.0' if $version =~ /^\d+\.\d+$/;

# A scratch copy of the sources, without anything installed beside them.
run_ok([ 'cp', '-R', $client, "$dir/src" ], 'copied clients/node');
File::Path::remove_tree("$dir/src/node_modules");
unlink glob("$dir/src/*.tgz");

my (undef, $packed) = run_ok(
	[
		'npm', 'pack', '--silent', '--pack-destination', $dir,
		"--cache=$dir/npm-cache"
	],
	'npm pack',
	cwd => "$dir/src");
chomp $packed;
is($packed, "pgfence-$version.tgz", "the tarball is pgfence-$version.tgz");
my (undef, $listing) =
  run_ok([ 'tar', '-tzf', "$dir/pgfence-$version.tgz" ], 'the tarball lists');
for my $file (qw(package.json index.js index.d.ts testing.js testing.d.ts
	README.md LICENSE lib/fence.js lib/lease.js lib/errors.js))
{
	like($listing, qr{^package/\Q$file\E$}m, "the tarball has $file");
}
unlike($listing, qr{^package/test/}m, 'the tarball has no tests');

# The application: node-postgres from the registry, pgfence from the tarball.
my ($pg_range) = slurp_file("$FindBin::RealBin/../drivers/package.json") =~ /"pg": "([^"]+)"/;
mkdir "$dir/app" or die "mkdir: $!";
open(my $fh, '>', "$dir/app.json") or die "open: $!";
print $fh qq({\n  "name": "pgfence-node-test",\n  "private": true,\n  "dependencies": {\n)
  . qq(    "pg": "$pg_range",\n    "pgfence": "file:$dir/pgfence-$version.tgz",\n)
  . qq(    "typescript": "^5",\n    "\@types/pg": "^8",\n    "\@types/node": "^20"\n  }\n}\n);
close $fh;
my $npm_ok = npm_install("$dir/app", "$dir/app.json",
	"pg $pg_range, typescript 5, \@types/pg and \@types/node");
ok($npm_ok, 'npm installed pg, the packed pgfence and TypeScript');
ok(-f "$dir/app/node_modules/pgfence/index.d.ts", 'pgfence is installed, with its types');
run_ok([ 'cp', '-R', "$client/test", "$dir/app/test" ], 'copied the tests');

# The declarations describe the API as the README uses it: a program using
# all of it compiles with tsc --strict against the installed package.
run_ok(
	[
		"$dir/app/node_modules/.bin/tsc", '--noEmit', '--strict',
		'--module', 'nodenext', '--moduleResolution', 'nodenext',
		'--types', 'node', 'test/types-check.ts'
	],
	'index.d.ts and testing.d.ts type-check a program using them',
	cwd => "$dir/app");

my ($node, $bouncer, $bouncer_dsn) = client_test_node('nodeclient', 'pgfence_test',
	conf => "fence.test_clock = on\n");
my %bouncer = map { split /=/, $_, 2 } split / /, $bouncer_dsn;

local $ENV{PGFENCE_TEST_PGBOUNCER_URL} =
  "postgresql://$bouncer{user}\@$bouncer{host}:$bouncer{port}/$bouncer{dbname}";
local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGDATABASE} = 'pgfence_test';
local $ENV{PGUSER} = scalar getpwuid($<);
local $ENV{PGFENCE_TEST_RESTART} = restart_command($node);
my @files = map { "test/" . ($_ =~ s{.*/}{}r) } sort glob("$client/test/*.test.js");
my ($ran, $report) = run_ok(
	[ 'node', '--test', '--test-concurrency=1', '--test-reporter=tap', @files ],
	'node --test exits 0',
	cwd => "$dir/app",
	timeout => 600);

# One TAP line per top-level result of node's own TAP report; a skipped
# test is a failure (make test sets up everything the suite needs).
my ($passed, $others) = (0, 0);
for my $line (split /\n/, $report)
{
	next unless $line =~ /^(not ok|ok) \d+ - (.*)$/;
	if ($1 eq 'ok' && $2 !~ /# (SKIP|TODO)\b/)
	{
		pass("node: $2");
		$passed++;
	}
	else
	{
		fail("node: $2");
		$others++;
	}
}
diag($report) if $others || !$ran;
# Fewer than this means a file of tests went missing.
cmp_ok($passed, '>=', 38, "node: $passed tests passed");
like($report, qr/^ok \d+ - the frozen holder/m, 'node: the frozen holder ran');
like($report, qr/^ok \d+ - a killed holder/m, 'node: the killed holder ran');
like($report, qr/^ok \d+ - leases through a transaction pooler[^#]*$/m, 'node: the PgBouncer tests ran');
like($report, qr/^ok \d+ - a server restart loses the lease[^#]*$/m, 'node: the restart ran');

IPC::Run::signal($bouncer, 'TERM');
$bouncer->finish;
$node->stop;
done_testing();
