# Tokens as Python ints through psycopg 3 (Debian's python3-psycopg).
#
# psycopg 3 sends a Python int below 32768 as a smallint, so this is what
# every client of a fresh database sends for a long while.  The script
# test/drivers/psycopg_int_tokens.py takes tokens 33, 40000 and 3000000000
# (smallint, integer and bigint on the wire) through a fenced UPDATE,
# fence_use_token and fence_release, with psycopg choosing the format, in
# text and in binary, each in a database of its own.  A missing psycopg is a
# failure, not a skip: make test installs it.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# Debian's interpreter, where python3-psycopg is installed (not whatever
# python3 comes first in PATH).
my $python = '/usr/bin/python3';
my $script = "$FindBin::RealBin/../drivers/psycopg_int_tokens.py";

my $node = fence_node('psycopg');
my @dbs = map { "drv_$_" } qw(auto text binary);
for my $db (@dbs)
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION fence');
}

local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
my ($stdout, $stderr);
my $ok = IPC::Run::run([ $python, $script, @dbs ], '>', \$stdout, '2>', \$stderr);
print STDERR "$stdout$stderr" unless $ok;
ok($ok, 'psycopg: every token size, text and binary, exits 0');
unlike($stdout, qr/^FAIL/m, 'psycopg: no check failed');
like($stdout, qr/^done$/m, 'psycopg: the script ran to its end');
# One line per check: 7 checks per token, 3 tokens, 3 databases.
is(scalar(() = $stdout =~ /^ok /mg), 63, 'psycopg: all 63 checks ran');
like($stdout, qr/^ok drv_binary 33 fenced update writes$/m,
	'psycopg: a smallint token in binary writes');

$node->stop;
done_testing();
