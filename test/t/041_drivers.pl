# The examples of doc/drivers.md, run with the real drivers.
#
# The code blocks come from the document itself, so it cannot drift from
# what is tested: the block marked <!-- drivers-setup --> is run in a fresh
# database for each example; each block marked <!-- drivers-test: FILE --> is
# written to FILE and run (Python with Debian's /usr/bin/python3 and its
# python3-psycopg, python3-psycopg-pool and python3-asyncpg; JavaScript with
# node, after npm installs test/drivers/package.json into a scratch
# directory); what it prints must
# equal the block marked <!-- drivers-output: FILE -->.  A missing driver, or
# an npm registry out of reach, is a failure, not a skip.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $src = $ENV{FENCE_SRC} || "$FindBin::RealBin/../..";
my $doc_path = "$src/doc/drivers.md";
my $doc = slurp_file($doc_path);

# The fenced code block right after each marker.
my ($setup) = $doc =~ /<!-- drivers-setup -->\n```sql\n(.*?)```/s;
ok(defined $setup, 'the document has a setup block');
my (%code, %output, @files);
while ($doc =~ /<!-- drivers-(test|output): (\S+) -->\n```[a-z]*\n(.*?)```/sg)
{
	my ($kind, $file, $text) = ($1, $2, $3);
	if ($kind eq 'test')
	{
		push @files, $file;
		$code{$file} = $text;
	}
	else
	{
		$output{$file} = $text;
	}
}
is_deeply([ sort @files ],
	[ sort qw(psycopg_example.py asyncpg_example.py node-pg.js postgres-js.js watchdog.py watchdog.js
		  pool_reset.py) ],
	'the document has an example for each driver, and the watchdogs');

my $node = fence_node('drivers');
my $dir = PostgreSQL::Test::Utils::tempdir;

local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGUSER} = scalar getpwuid($<);

# The JavaScript drivers, from the npm registry, into the scratch directory.
my $npm_ok = 1;
if (grep { /\.js$/ } @files)
{
	$npm_ok = npm_install($dir, "$FindBin::RealBin/../drivers/package.json",
		'pg and postgres');
	ok($npm_ok, 'npm installed pg and postgres');
}

for my $file (@files)
{
	my $db = 'drv_' . ($file =~ s/\W/_/gr);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, $setup);
	open(my $fh, '>', "$dir/$file") or die "$dir/$file: $!";
	print $fh $code{$file};
	close $fh;

	my @cmd = $file =~ /\.py$/ ? ('/usr/bin/python3', "$dir/$file") : ('node', "$dir/$file");
	if ($file =~ /\.js$/ && !$npm_ok)
	{
		fail("$file: not run, npm install failed");
		next;
	}
	my ($out, $err) = ('', '');
	local $ENV{PGDATABASE} = $db;
	my $ran = IPC::Run::run(\@cmd, '>', \$out, '2>', \$err,
		init => sub { chdir $dir or die "chdir $dir: $!" },
		IPC::Run::timeout(120));
	diag("$file: $err") if $err ne '';
	ok($ran, "$file exits 0");
	is($out, $output{$file}, "$file prints what the document says");
	# What the example did is in the database too.
	is( $node->safe_psql($db,
			'SELECT retention_days, fence FROM channels WHERE id = 7'),
		'30|33',
		"$file: its fenced write is there, and the rejected ones are not");
}

$node->stop;
done_testing();
