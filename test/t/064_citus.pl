# fence on a Citus cluster: a coordinator and two workers on loopback, fence
# and Citus preloaded on all three ('citus,fence'), leases on the
# coordinator, a hash-distributed table protected with fence_protect.  The
# token in effect of a coordinator session (fence_use_token, session,
# transaction and detached leases) reaches the shards that a statement
# writes, and the trigger there judges it as on one server, once each
# worker has fence.external_tokens on (refused before); outside a
# transaction block such a write is refused, never passed unchecked; strict
# mode and triggers without citus.enable_unsafe_triggers are refused by
# fence_protect; reference and Citus local tables; shard moves and the
# rebalancer keep every fence, and the stale writer stays rejected.
#
# test/run builds Citus and installs it into the PostgreSQL under test
# (fence_citus_stage in test/lib/setup.sh) and says so in FENCE_CITUS.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $citus = $ENV{FENCE_CITUS} // '';
plan skip_all => $1 if $citus =~ /^skip: (.*)/;
if ($citus ne 'installed')
{
	fail($citus =~ /^fail: (.*)/ ? $1
		: 'FENCE_CITUS is not set: run this test through make test, which builds Citus');
	done_testing();
	exit;
}

my $conf = <<'EOF';
shared_preload_libraries = 'citus,fence'
listen_addresses = '127.0.0.1'
citus.enable_unsafe_triggers = on
citus.shard_count = 4
citus.shard_replication_factor = 1
max_prepared_transactions = 10
wal_level = logical
max_replication_slots = 10
max_wal_senders = 10
EOF

my @nodes;
for my $name ('coord', 'w1', 'w2')
{
	my $node = fence_node($name, conf => $conf);
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	push @nodes, $node;
}
my ($coord, $w1, $w2) = @nodes;
$coord->safe_psql('postgres', qq{
SELECT citus_set_coordinator_host('127.0.0.1', ${\ $coord->port});
SELECT citus_add_node('127.0.0.1', ${\ $w1->port});
SELECT citus_add_node('127.0.0.1', ${\ $w2->port});
CREATE TABLE jobs (id int PRIMARY KEY, result text, fence fence_token NOT NULL DEFAULT 0);
SELECT create_distributed_table('jobs', 'id');
INSERT INTO jobs SELECT g, 'new' FROM generate_series(1, 20) g;
});

# A psql session on the coordinator that keeps its state (its leases).
sub session
{
	my $s = $coord->background_psql('postgres', on_error_stop => 0);
	$s->query_safe('\set VERBOSITY verbose');
	return $s;
}

# Run SQL in a session: its output, and the SQLSTATE of its error ('' if none).
sub run
{
	my ($s, $sql) = @_;
	$s->{stderr} = '';
	my $out = $s->query($sql);
	my ($state) = $s->{stderr} =~ /ERROR:\s+([0-9A-Z]{5}):/;
	return ($out, $state // '');
}

sub fence_of
{
	my ($id) = @_;
	return $coord->safe_psql('postgres', "SELECT fence::text FROM jobs WHERE id = $id");
}

sub all_fences
{
	return $coord->safe_psql('postgres', 'SELECT string_agg(id || \'=\' || fence::text, \',\' ORDER BY id) FROM jobs');
}

# fence_protect: fence's own errors first.
my ($state, $err) = sql_state($coord, 'postgres',
	"SET citus.enable_unsafe_triggers = off; SELECT fence_protect('jobs')");
is($state, '55000', 'fence_protect refuses a distributed table while citus.enable_unsafe_triggers is off');
like($err, qr/cannot protect distributed table "jobs" while citus.enable_unsafe_triggers is off.*HINT:.*enable_unsafe_triggers = on/s,
	'fence\'s message and hint, not Citus\'s');
($state, $err) = sql_state($coord, 'postgres',
	"SELECT fence_protect('jobs', lease => 'job:{id}', strict => true)");
is($state, '0A000', 'strict mode is refused on a distributed table');
like($err, qr/strict mode is not supported on distributed table "jobs".*HINT:.*fence_assert_current/s,
	'the hint names the alternative');

$coord->safe_psql('postgres', "SELECT fence_protect('jobs')");
for my $w ($w1, $w2)
{
	cmp_ok($w->safe_psql('postgres',
		"SET citus.override_table_visibility = off;
		 SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
		 WHERE t.tgfoid = 'fence_enforce'::regproc AND c.relname LIKE 'jobs\\_%'"),
		'>=', 1, 'the trigger is on the shards of ' . $w->name);
}

# A worker's database stores shards and never grants: its counter has issued
# no token, so it refuses every token, the coordinator's too, until a
# superuser says its tables take tokens from leases on another server.
my $early = session();
my ($t5) = run($early, "SELECT fence_try_lease('job:5', '5 min')");
(undef, $state) = run($early, "BEGIN; UPDATE jobs SET result = 'early' WHERE id = 5; COMMIT;");
is($state, '22023', 'a worker without fence.external_tokens refuses the coordinator\'s token');
like($early->{stderr}, qr/has issued no token yet.*fence\.external_tokens = on/s,
	'... and its hint names the setting');
run($early, "SELECT fence_release('job:5', $t5)");
$early->quit;
is(fence_of(5), '0', '... and row 5 kept its fence');
# Citus refuses ALTER DATABASE on a worker: the setting goes in the worker's
# postgresql.conf, where a reload brings it to the open sessions too.
($state) = sql_state($w1, 'postgres', 'ALTER DATABASE postgres SET fence.external_tokens = on');
isnt($state, '', 'Citus refuses ALTER DATABASE ... SET on a worker');
for my $w ($w1, $w2)
{
	$w->append_conf('postgresql.conf', "fence.external_tokens = on\n");
	$w->reload;
	ok(wait_until(30, sub { $w->safe_psql('postgres', 'SHOW fence.external_tokens') eq 'on' }),
		'fence.external_tokens is on for ' . $w->name);
}
# The coordinator, which issues the tokens, still refuses one it never issued.
(undef, $state) = run(session(), "SELECT fence_use_token(1000000000)");
is($state, '22023', 'the coordinator refuses a token its counter never issued');

# The token in effect of a session lease reaches the shard.
my $a = session();
my ($ta) = run($a, "SELECT fence_try_lease('job:7', '5 min')");
my ($out) = run($a, "BEGIN; UPDATE jobs SET result = 'a' WHERE id = 7; COMMIT;");
is(fence_of(7), $ta, 'a write under a session lease, in a transaction block, is stamped with its token on the worker');

# Outside a transaction block Citus sends the write bare: refused, not unchecked.
(undef, $state) = run($a, "UPDATE jobs SET result = 'a2' WHERE id = 7");
is($state, '25P01', 'a write under a token in effect outside a transaction block is refused');

# The lease passes on; the new holder writes.
$coord->safe_psql('postgres', "SELECT fence_break('job:7')");
my $b = session();
my ($tb) = run($b, "SELECT fence_try_lease('job:7', '5 min')");
cmp_ok($tb, '>', $ta, 'the new holder has a newer token');
(undef, $state) = run($b, "BEGIN; UPDATE jobs SET result = 'b' WHERE id = 7; COMMIT;");
is($state, '', 'the new holder writes');
is(fence_of(7), $tb, 'row 7 carries the new token');

# The stale holder, in every way of writing through the coordinator.
(undef, $state) = run($a, "BEGIN; UPDATE jobs SET result = 'stale' WHERE id = 7; COMMIT;");
is($state, 'LF001', 'stale session lease: single-shard UPDATE rejected on the worker');
(undef, $state) = run($a, "BEGIN; DELETE FROM jobs WHERE id = 7; COMMIT;");
is($state, 'LF001', 'stale session lease: DELETE rejected on the worker');
(undef, $state) = run($a, "BEGIN; UPDATE jobs SET result = 'stale'; COMMIT;");
is($state, 'LF001', 'stale session lease: multi-shard UPDATE rejected');
my $c = session();
(undef, $state) = run($c, "UPDATE jobs SET result = 'stale', fence = $ta WHERE id = 7");
is($state, 'LF001', 'a stale token in the statement is rejected on the worker, in autocommit');
(undef, $state) = run($c, "BEGIN; SELECT fence_use_token($ta); UPDATE jobs SET result = 'stale' WHERE id = 7; COMMIT;");
is($state, 'LF001', 'stale fence_use_token: rejected on the worker');
(undef, $state) = run($c, "BEGIN; UPDATE jobs SET result = 'c' WHERE id = 8; SELECT fence_use_token($ta); UPDATE jobs SET result = 'stale' WHERE id = 7; COMMIT;");
is($state, 'LF001', 'a token set after the transaction reached the worker is sent to it too');
(undef, $state) = run($c, "BEGIN; SELECT fence_use_token($tb); UPDATE jobs SET result = 'c' WHERE id = 7; SAVEPOINT s; SELECT fence_use_token($ta); ROLLBACK TO SAVEPOINT s; UPDATE jobs SET result = 'c2' WHERE id = 7; COMMIT;");
is($state, '', 'a token rolled back with its savepoint is undone on the worker too');
is($coord->safe_psql('postgres', 'SELECT result FROM jobs WHERE id = 7'), 'c2', '... and the write went through');
(undef, $state) = run($b, "BEGIN; COPY jobs (id, result) FROM PROGRAM 'echo 21,copied' WITH (FORMAT csv); COMMIT;");
is($state, '', 'COPY FROM under a lease');
is(fence_of(21), $tb, '... is stamped with the token in effect');

# A transaction lease and a detached lease.
(undef, $state) = run($c, "BEGIN; SELECT fence_try_xact_lease('job:9', '1 min'); UPDATE jobs SET result = 'x' WHERE id = 9; COMMIT;");
is($state, '', 'a write under a transaction lease');
my $t9 = fence_of(9);
cmp_ok($t9, '>', $tb, '... is stamped with its token');
my $d = session();
my ($td) = run($d, "SELECT fence_try_lease('job:10', '1 min', owner => 'worker-10')");
run($d, "BEGIN; UPDATE jobs SET result = 'd' WHERE id = 10; COMMIT;");
is(fence_of(10), $td, 'a write under a detached lease is stamped with its token');

# One token per lease name: the shard's trigger picks the lease's token, as on one server.
$coord->safe_psql('postgres', "SELECT fence_protect('jobs', lease => 'job:{id}')");
my $e = session();
my ($t11) = run($e, "SELECT fence_try_lease('job:11', '5 min')");
my ($t12) = run($e, "SELECT fence_try_lease('job:12', '5 min')");
$coord->safe_psql('postgres', "BEGIN; SELECT fence_use_token($t12); UPDATE jobs SET result = 'other' WHERE id = 11; COMMIT;");
(undef, $state) = run($e, "BEGIN; UPDATE jobs SET result = 'e' WHERE id = 12; COMMIT;");
is($state, '', 'the holder of job:12 writes row 12');
(undef, $state) = run($e, "BEGIN; UPDATE jobs SET result = 'e' WHERE id = 11; COMMIT;");
is($state, 'LF001', 'row 11 is judged with the token of job:11, not the session\'s latest');

# require_token works: the worker sees the carried token, or none.
$coord->safe_psql('postgres', "SELECT fence_protect('jobs', require_token => true)");
(undef, $state) = run(session(), "BEGIN; UPDATE jobs SET result = 'anon' WHERE id = 3; COMMIT;");
is($state, 'LF003', 'require_token: a write without a token is rejected on the worker');
(undef, $state) = run($b, "BEGIN; DELETE FROM jobs WHERE id = 21; COMMIT;");
is($state, '', 'require_token: a DELETE under a lease passes');
$coord->safe_psql('postgres', "SELECT fence_protect('jobs')");

# A client on a worker writing a shard directly has no carried token.
is($w1->safe_psql('postgres', "SHOW fence.carried_tokens"), '', 'a direct session on a worker carries nothing');

# Reference tables and Citus local tables.
$coord->safe_psql('postgres', q{
CREATE TABLE refs (id int PRIMARY KEY, v text, fence fence_token NOT NULL DEFAULT 0);
SELECT create_reference_table('refs');
INSERT INTO refs VALUES (1, 'r');
CREATE TABLE loc (id int PRIMARY KEY, v text, fence fence_token NOT NULL DEFAULT 0);
SELECT citus_add_local_table_to_metadata('loc');
INSERT INTO loc VALUES (1, 'l');
});
($state) = sql_state($coord, 'postgres', "SELECT fence_protect('refs', lease => 'r', strict => true)");
is($state, '0A000', 'strict mode is refused on a reference table');
$coord->safe_psql('postgres', "SELECT fence_protect('refs'); SELECT fence_protect('loc', lease => 'job:{id}', strict => true)");
(undef, $state) = run($b, "BEGIN; UPDATE refs SET v = 'b' WHERE id = 1; COMMIT;");
is($state, '', 'a reference table is written under a lease');
(undef, $state) = run($a, "BEGIN; UPDATE refs SET v = 'stale' WHERE id = 1; COMMIT;");
is($state, 'LF001', 'a stale write to a reference table is rejected');
my ($tl) = run($d, "SELECT fence_try_lease('job:1', '1 min')");
(undef, $state) = run($d, "BEGIN; UPDATE loc SET v = 'd' WHERE id = 1; COMMIT;");
is($state, '', 'a Citus local table in strict mode: the holder writes');
# A newer token, granted for another key: it passes the fence but does not
# hold job:1.
my $f = session();
my ($other) = run($f, "SELECT fence_try_lease('job:other', '1 min')");
(undef, $state) = run($a, "BEGIN; SELECT fence_use_token($other); UPDATE loc SET v = 'late' WHERE id = 1; COMMIT;");
is($state, 'LF002', 'a Citus local table in strict mode: a token that does not hold the lease is rejected');

# Shard moves and the rebalancer keep every fence, and the stale holder out.
my $before = all_fences();
my ($shardid, $from) = split /\|/, $coord->safe_psql('postgres',
	"SELECT s.shardid, p.nodeport FROM pg_dist_shard s JOIN pg_dist_placement pl USING (shardid)
	 JOIN pg_dist_node p ON p.groupid = pl.groupid
	 WHERE s.logicalrelid = 'jobs'::regclass AND get_shard_id_for_distribution_column('jobs', 7) = s.shardid");
my $to = $from == $w1->port ? $w2->port : $w1->port;
$coord->safe_psql('postgres', "SET statement_timeout = '90s';
	SELECT citus_move_shard_placement($shardid, '127.0.0.1', $from, '127.0.0.1', $to)", timeout => 120);
is(all_fences(), $before, 'a shard move (logical replication) keeps every fence');
(undef, $state) = run($a, "BEGIN; UPDATE jobs SET result = 'stale' WHERE id = 7; COMMIT;");
is($state, 'LF001', 'after the move, the stale holder is rejected');
$coord->safe_psql('postgres', "SET statement_timeout = '90s';
	SELECT citus_rebalance_start(shard_transfer_mode => 'block_writes');
	SELECT citus_rebalance_wait()", timeout => 120);
is($coord->safe_psql('postgres', "SELECT count(*) FROM pg_dist_background_job WHERE state NOT IN ('finished')"),
	'0', 'the rebalance finished');
is(all_fences(), $before, 'the rebalancer keeps every fence');
(undef, $state) = run($a, "BEGIN; UPDATE jobs SET result = 'stale' WHERE id = 7; COMMIT;");
is($state, 'LF001', 'after the rebalance, the stale holder is rejected');
(undef, $state) = run($b, "BEGIN; UPDATE jobs SET result = 'b2' WHERE id = 7; COMMIT;");
is($state, '', '... and the current holder writes');

$_->quit for ($a, $b, $c, $d, $e, $f);
done_testing();
