# pg_upgrade carries the token counter.
#
# A cluster with a fenced table and leases taken (some in transactions that
# rolled back) is upgraded with pg_upgrade into a fresh cluster (15 to 15:
# the same path a major upgrade takes for the extension's catalog and the
# counter sequence).  Proven: the rows keep their fences, every token the
# upgraded cluster hands out is above every token the old one handed out,
# and a holder from before the upgrade is stale on the upgraded rows.
use strict;
use warnings;

use Cwd;
use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $old = fence_node('old');
$old->safe_psql('postgres', 'CREATE DATABASE app');
$old->safe_psql('app', 'CREATE EXTENSION fence');
$old->safe_psql('app', q{
CREATE TABLE jobs (id int PRIMARY KEY, state text, fence fence_token NOT NULL DEFAULT 0);
SELECT fence_protect('jobs');
});
for my $id (1 .. 10)
{
	$old->safe_psql('app', qq{
SELECT fence_try_lease('job-$id', '1 min') IS NOT NULL;
INSERT INTO jobs (id, state) VALUES ($id, 'done');
});
}
my @rolled_back = split /\n/, $old->safe_psql('app', q{
BEGIN;
SELECT fence_try_lease('extra-' || g, '1 min') FROM generate_series(1, 40) g;
ROLLBACK;
});
my $old_max = max_of(@rolled_back);
my $rows = $old->safe_psql('app', 'SELECT id, state, fence FROM jobs ORDER BY id');
my $stale = $old->safe_psql('app', 'SELECT fence FROM jobs WHERE id = 3');
cmp_ok($old_max, '>', $old->safe_psql('app', 'SELECT max(fence) FROM jobs'),
	'old cluster: the counter is above every row fence');
$old->stop;

my $new = PostgreSQL::Test::Cluster->new('new');
$new->init;
$new->append_conf('postgresql.conf', "shared_preload_libraries = 'fence'\nlc_messages = 'C'\n");
my $bindir = $old->config_data('--bindir');
my $cwd = getcwd();
chdir $new->basedir;
$new->command_ok(
	[
		'pg_upgrade', '--no-sync', '-d', $old->data_dir, '-D', $new->data_dir,
		'-b', $bindir, '-B', $bindir, '-s', $new->host,
		'-p', $old->port, '-P', $new->port
	],
	'pg_upgrade');
chdir $cwd;
$new->start;

is($new->safe_psql('app', 'SELECT id, state, fence FROM jobs ORDER BY id'),
	$rows, 'the rows keep their fences');
my @next = split /\n/, $new->safe_psql('app',
	q{SELECT fence_try_lease('after-' || g, '1 min') FROM generate_series(1, 5) g});
cmp_ok(min_of(@next), '>', $old_max,
	"every token after the upgrade is above every token before it ($old_max)");
is(sql_state($new, 'app',
		"BEGIN; SELECT fence_use_token($stale); UPDATE jobs SET state = 'stale' WHERE id = 4; COMMIT;"),
	'LF001', 'a holder from before the upgrade is stale on upgraded rows');
is($new->psql('app', q{
SELECT fence_try_lease('job-4', '1 min') IS NOT NULL;
UPDATE jobs SET state = 'again' WHERE id = 4;}), 0, 'a new holder writes');

$new->stop;
done_testing();
