# pg_dump / pg_restore carry the token counter.
#
# A database with a fenced table: rows written under tokens, and more tokens
# taken in transactions that rolled back, so the counter is above every row.
# It is dumped in custom format (pg_restore) and in plain format (psql), and
# restored into fresh databases.  Proven: the rows keep their fences, and the
# next token in each restored database is above every fence in the rows and
# above every token the source database ever handed out.  Also shown: DROP
# EXTENSION loses the counter, and the recovery doc/counter.md gives, with
# fence_advance_tokens restores the law.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fence_node('dump');
my $leases = has_function($node, 'fence_try_lease');
my $trigger = has_function($node, 'fence_protect');

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', 'CREATE EXTENSION fence');
install_token_helpers($node, 'src');

$node->safe_psql('src', q{
CREATE TABLE jobs (id int PRIMARY KEY, state text, fence fence_token NOT NULL DEFAULT '0');
});
$node->safe_psql('src', q{SELECT fence_protect('jobs', column_name => 'fence')})
  if $trigger;

# Each row written by a holder of its own lease (or, until leases exist,
# under a token from the counter).
for my $id (1 .. 20)
{
	if ($leases && $trigger)
	{
		$node->safe_psql('src', qq{
SELECT fence_try_lease('job-$id', '1 min') IS NOT NULL;
INSERT INTO jobs (id, state) VALUES ($id, 'new');
UPDATE jobs SET state = 'done' WHERE id = $id;
});
	}
	else
	{
		$node->safe_psql('src', qq{
INSERT INTO jobs (id, state, fence)
VALUES ($id, 'done', take_counter_token()::text::fence_token);
});
	}
}

# Tokens handed out in transactions that rolled back: above every row.
my @rolled_back = split /\n/, $node->safe_psql('src', q{
BEGIN;
SELECT take_counter_token() FROM generate_series(1, 40);
ROLLBACK;
});
my $src_max = max_of(@rolled_back);
my $rows_max = $node->safe_psql('src', 'SELECT max(fence::text::bigint) FROM jobs');
cmp_ok($src_max, '>', $rows_max, 'source: counter is above every row fence');
my $src_rows = $node->safe_psql('src',
	'SELECT id, state, fence::text FROM jobs ORDER BY id');

my $dumpfile = $node->basedir . '/src.dump';
my $sqlfile = $node->basedir . '/src.sql';
$node->command_ok(
	[ 'pg_dump', '-Fc', '-f', $dumpfile, '-d', $node->connstr('src') ],
	'pg_dump -Fc');
$node->command_ok(
	[ 'pg_dump', '-Fp', '-f', $sqlfile, '-d', $node->connstr('src') ],
	'pg_dump -Fp');

$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $node->connstr('restored'), $dumpfile ],
	'pg_restore into a fresh database');
$node->safe_psql('postgres', 'CREATE DATABASE replayed');
$node->command_ok(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d',
		$node->connstr('replayed'), '-f', $sqlfile
	],
	'plain dump replayed with psql');

for my $db (qw(restored replayed))
{
	install_token_helpers($node, $db);
	is( $node->safe_psql($db,
			'SELECT id, state, fence::text FROM jobs ORDER BY id'),
		$src_rows, "$db: rows keep their fences");
	my $next = $node->safe_psql($db, 'SELECT take_counter_token()');
	cmp_ok($next, '>', $src_max,
		"$db: next token $next is above every token the source handed out ($src_max)");
	if ($leases)
	{
		my $grant = $node->safe_psql($db,
			q{SELECT fence_try_lease('job-1', '1 min')::text});
		cmp_ok($grant, '>', $rows_max,
			"$db: next lease token $grant is above every row fence ($rows_max)");
	}
	if ($leases && $trigger)
	{
		# The new holder's write is accepted, and a writer holding a
		# token from before the dump is stale.
		is( $node->psql($db, q{
SELECT fence_try_lease('job-2', '1 min') IS NOT NULL;
UPDATE jobs SET state = 'again' WHERE id = 2;}), 0,
			"$db: a new holder writes a restored row");
		my $old = (split /\n/, $src_rows)[2];
		my ($old_fence) = $old =~ /\|(\d+)$/;
		is( sql_state($node, $db,
				"BEGIN; SELECT fence_use_token($old_fence);"
				  . " UPDATE jobs SET state = 'stale' WHERE id = 2; COMMIT;"),
			'LF001',
			"$db: a token from before the dump is stale on restored rows");
	}
}

# DROP EXTENSION is the one way to lose the counter; the recovery doc/counter.md gives.
$node->safe_psql('postgres', 'CREATE DATABASE again');
$node->safe_psql('again', 'CREATE EXTENSION fence');
install_token_helpers($node, 'again');
$node->safe_psql('again', q{
CREATE TABLE channels (id int PRIMARY KEY, fence bigint NOT NULL);
SELECT fence_advance_tokens(5000);
INSERT INTO channels SELECT g, take_counter_token() FROM generate_series(1, 5) g;
});
my $chan_max = $node->safe_psql('again', 'SELECT max(fence) FROM channels');
$node->safe_psql('again', 'DROP EXTENSION fence CASCADE; CREATE EXTENSION fence');
install_token_helpers($node, 'again');
# While the server runs, fence remembers the highest token it granted in
# this database and refuses to grant below it; after a restart only the
# stored fences know.
my ($lost_state, $lost_err) = sql_state($node, 'again', 'SELECT take_counter_token()');
is($lost_state, '55000',
	'after DROP/CREATE EXTENSION a grant below earlier tokens is refused');
like($lost_err, qr/counter is behind tokens already granted/, '... saying why');
$node->restart;
my $lost = $node->safe_psql('again', 'SELECT take_counter_token()');
cmp_ok($lost, '<=', $chan_max,
	'after a restart the new counter starts over (documented)');
$node->safe_psql('again',
	'SELECT fence_advance_tokens((SELECT max(fence) FROM channels))');
my $recovered = $node->safe_psql('again', 'SELECT take_counter_token()');
cmp_ok($recovered, '>', $chan_max,
	"doc/counter.md's fence_advance_tokens recovery puts the next token ($recovered) above every fence");

$node->stop;
done_testing();
