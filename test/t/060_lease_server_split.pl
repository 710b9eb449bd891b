# One lease server, several storage servers.
#
# A grants the leases (fence preloaded).  B and C hold fenced rows: B without
# the library preloaded, C with it (as a storage server that happens to run
# its own leases too).  Workers take leases on A and write to B and C with
# fence_use_token or with the token in the row; B and C judge each write
# against their own rows and never ask A.
#
# Proven: a worker whose lease passed to another is rejected on B and on C
# once the new holder has written there, whichever server the stale write
# reaches first; a write that reaches a row before the new holder does is
# accepted (the storage server has not seen the newer token yet) and then
# overwritten, unless the new holder stamps its rows first.  A strict trigger
# on B fails with 55000, and on C it rejects even the live holder (LF002):
# strict mode checks the server's own lease table, which only A fills.  Under
# load, on every row of B and C the accepted fences never go backwards.
# A job that writes rows on B and on C: each server judges its own
# transaction, all or nothing, and without two-phase commit nothing spans
# the two (B keeps what a stale job committed there before C rejected it);
# with PREPARE TRANSACTION on each, the job can be undone everywhere.
# Tokens are per database.  A token of another lease server is just a number
# to B and C; fence_advance_tokens on a new lease server moves it past every
# fence stored on them.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use FenceStorage;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $conn = "max_connections = 30\nmax_prepared_transactions = 5\nlog_statement = none\n";
my $lease_a = fence_node('lease_a', conf => $conn . "fence.test_clock = on\n");
my $store_b = storage_node('store_b', 3, preload => 0, conf => $conn);
my $store_c = storage_node('store_c', 3, conf => $conn);
is($store_b->safe_psql('postgres', 'SHOW shared_preload_libraries'), '',
	'B does not preload fence');

# A worker's write, on its own connection to a storage server.
sub write_as
{
	my ($node, $tok, $id, $payload, $in_row) = @_;
	my $sql = $in_row
	  ? "UPDATE jobs SET payload = '$payload', fence = $tok WHERE id = $id;"
	  : "BEGIN; SELECT fence_use_token($tok); UPDATE jobs SET payload = '$payload' WHERE id = $id; COMMIT;";
	return scalar sql_state($node, 'postgres', $sql);
}

sub row { my ($node, $id) = @_;
	return $node->safe_psql('postgres', "SELECT payload, fence FROM jobs WHERE id = $id"); }

# --- a lease passes from W1 to W2 ---------------------------------------------
$lease_a->safe_psql('postgres', "SELECT fence_set_clock('2026-01-01 10:00:00+00')");
my $t1 = $lease_a->safe_psql('postgres', "SELECT fence_try_lease('job-1', '30 s', owner => 'W1')");
$lease_a->safe_psql('postgres', "SELECT fence_advance_clock('31 s')");
my $t2 = $lease_a->safe_psql('postgres', "SELECT fence_try_lease('job-1', '30 s', owner => 'W2')");
cmp_ok($t2, '>', $t1, "W1's lease expired and passed to W2 with a higher token ($t1, then $t2)");

for my $in_row (0, 1)
{
	my $how = $in_row ? 'token in the row' : 'fence_use_token';
	# W1 wrote on both servers while it held the lease.
	is(write_as($_, $t1, 1, 'W1 before', $in_row), '', "$how: W1 writes while it holds the lease")
	  for ($store_b, $store_c);

	# B sees W2 first, then W1: rejected.  C sees W1 first: accepted, since
	# C has not seen W2's token yet; W2's write then replaces it, and W1's
	# next write is rejected there too.
	is(write_as($store_b, $t2, 1, 'W2', $in_row), '', "$how: W2 writes on B");
	is(write_as($store_b, $t1, 1, 'W1 late', $in_row), 'LF001', "$how: B rejects W1 after W2 wrote there");
	is(write_as($store_c, $t1, 1, 'W1 late', $in_row), '',
		"$how: C accepts W1's write that arrives before W2's (it knows no newer token)");
	is(write_as($store_c, $t2, 1, 'W2', $in_row), '', "$how: W2 writes on C");
	is(write_as($store_c, $t1, 1, 'W1 later', $in_row), 'LF001', "$how: C rejects W1 after W2 wrote there");
	is(row($_, 1), "W2|$t2", "$how: the row holds W2's write") for ($store_b, $store_c);

	# Next round from a clean row: a token-less write by an operator does not
	# lower a fence, so drop the trigger for the reset.
	for my $n ($store_b, $store_c)
	{
		$n->safe_psql('postgres', q{
ALTER TABLE jobs DISABLE TRIGGER zz_fence_enforce;
UPDATE jobs SET fence = 0, payload = NULL WHERE id = 1;
ALTER TABLE jobs ENABLE TRIGGER zz_fence_enforce;});
	}
}

# Stamping first: W3 takes the lease and, before any work, stamps its token
# on the rows it owns on every storage server; W2, whose lease passed to W3,
# is then rejected everywhere, before W3 has written anything else.
$lease_a->safe_psql('postgres', "SELECT fence_advance_clock('31 s')");
my $t3 = $lease_a->safe_psql('postgres', "SELECT fence_try_lease('job-1', '30 s', owner => 'W3')");
is($store_b->safe_psql('postgres', "UPDATE jobs SET fence = $t3 WHERE id = 1 RETURNING fence"),
	$t3, 'W3 stamps its row on B');
is($store_c->safe_psql('postgres', "UPDATE jobs SET fence = $t3 WHERE id = 1 RETURNING fence"),
	$t3, 'W3 stamps its row on C');
is(write_as($_, $t2, 1, 'W2 late', 0), 'LF001', 'after the stamp, the previous holder is rejected')
  for ($store_b, $store_c);

# --- strict mode needs the lease table, which only A has ----------------------
for my $n ($store_b, $store_c)
{
	$n->safe_psql('postgres', q{
CREATE TABLE exports (id int PRIMARY KEY, fence fence_token NOT NULL DEFAULT 0);
INSERT INTO exports VALUES (1, 0);
SELECT fence_protect('exports', lease => 'job-{id}', strict => true);});
}
my ($state, $err) = sql_state($store_b, 'postgres',
	"BEGIN; SELECT fence_use_token($t3); UPDATE exports SET id = id WHERE id = 1; COMMIT;");
is($state, '55000', 'a strict trigger on B (not preloaded) fails with 55000');
like($err, qr/HINT:\s+Strict mode works only on the server that grants the leases.*protect the table without strict/,
	'and its hint says that strict mode works only on the lease server');
($state, $err) = sql_state($store_c, 'postgres',
	"BEGIN; SELECT fence_use_token($t3); UPDATE exports SET id = id WHERE id = 1; COMMIT;");
is($state, 'LF002', "a strict trigger on C rejects even the live holder of A's lease");
like($err, qr/whose status for this lease is "released"/, "... since C's own lease table does not have it");

# --- under load ---------------------------------------------------------------
# 8 workers for 4 seconds on the real clock: a 15 ms lease on one of 3 jobs,
# 0-30 ms of work (leases routinely expire mid-work), then the write to B,
# a pause, the write to C, each with fence_use_token or the token in the row.
$lease_a->safe_psql('postgres', 'SELECT fence_set_clock(NULL)');
install_writer($lease_a, b => $store_b, c => $store_c);
for my $n ($store_b, $store_c)
{
	$n->safe_psql('postgres', q{
ALTER TABLE jobs DISABLE TRIGGER zz_fence_enforce;
UPDATE jobs SET fence = 0, payload = NULL;
ALTER TABLE jobs ENABLE TRIGGER zz_fence_enforce;
TRUNCATE jobs_versions;});
}
$lease_a->pgbench(
	'-n -c 8 -j 2 -T 4',
	0, [qr/processed/], [qr/^$/],
	'workers take leases on A and write to B and C',
	{
		'worker' => q{
\set id random(1, 3)
\set in_row random(0, 1)
SELECT coalesce(fence_try_lease('job-' || :id, '15 ms')::bigint, 0) AS tok \gset
\if :tok > 0
SELECT pg_sleep(random() * 0.03);
SELECT store_write('b', :id, :tok, :in_row = 1);
SELECT pg_sleep(random() * 0.01);
SELECT store_write('c', :id, :tok, :in_row = 1);
\endif
}
	});
for my $srv ('b', 'c')
{
	my $n = $srv eq 'b' ? $store_b : $store_c;
	my @att = split /\n/, $lease_a->safe_psql('postgres',
		"SELECT id, tok, accepted, message FROM attempts WHERE server = '$srv'");
	my $rejected = grep { (split /\|/)[2] eq 'f' } @att;
	note "server $srv: " . scalar(@att) . " writes, $rejected rejected";
	cmp_ok(scalar(@att) - $rejected, '>=', 50, "load: many writes accepted on $srv");
	cmp_ok($rejected, '>=', 5, "load: stale writes were rejected on $srv");
	check_storage($n, "load on $srv", @att);
}

# A write judged on each server alone: the same stale token can reach C
# before the newer holder's write does and pass there, while B rejects it.
cmp_ok( $lease_a->safe_psql('postgres', q{
SELECT count(*) FROM attempts b JOIN attempts c USING (id, tok)
 WHERE b.server = 'b' AND c.server = 'c' AND b.accepted <> c.accepted}),
	'>', 0, 'load: some writes were accepted on one server and rejected on the other');

# --- one job, two storage servers, no two-phase commit -------------------------
# W4 writes rows 2 and 3 on B in one transaction and commits, then the same
# on C.  Between the two its lease passes to W5, which writes row 3 on C.
# Each server judges its own transaction, all or nothing: C rejects W4's
# whole transaction (row 2 there too, which W5 had not touched), while B keeps
# what W4 committed.  Nothing spans the servers: W5 must redo the job on
# both, and its higher token replaces W4's rows on B.
$lease_a->safe_psql('postgres', "SELECT fence_set_clock('2026-01-02 10:00:00+00')");
my $t4 = $lease_a->safe_psql('postgres', "SELECT fence_try_lease('job-2', '30 s', owner => 'W4')");
sub payloads_2_3
{
	return $_[0]->safe_psql('postgres',
		q{SELECT string_agg(payload, ',' ORDER BY id) FROM jobs WHERE id IN (2, 3)});
}
my $job = sub {
	my ($node, $tok, $who) = @_;
	return scalar sql_state($node, 'postgres', qq{
BEGIN;
SELECT fence_use_token($tok);
UPDATE jobs SET payload = '$who' WHERE id = 2;
UPDATE jobs SET payload = '$who' WHERE id = 3;
COMMIT;});
};
is($job->($store_b, $t4, 'W4'), '', 'W4 commits its job on B');
$lease_a->safe_psql('postgres', "SELECT fence_advance_clock('31 s')");
my $t5 = $lease_a->safe_psql('postgres', "SELECT fence_try_lease('job-2', '30 s', owner => 'W5')");
is(write_as($store_c, $t5, 3, 'W5', 0), '', 'the lease passed to W5, which writes row 3 on C');
my $c2 = row($store_c, 2);
is($job->($store_c, $t4, 'W4'), 'LF001', "C rejects W4's transaction");
is(row($store_c, 2), $c2, "... all of it: row 2 on C, which W5 had not written, is unchanged");
is(payloads_2_3($store_b),
	'W4,W4', 'B keeps what W4 committed there: no atomicity across servers');
is($job->($_, $t5, 'W5'), '', 'W5 redoes the job on ' . $_->name) for ($store_b, $store_c);
is($job->($_, $t4, 'W4'), 'LF001', 'and W4 is rejected on ' . $_->name) for ($store_b, $store_c);

# With two-phase commit the job is all or nothing across the servers: W5's
# lease passes to W6, which writes row 3 on C; W5 prepares its job on B,
# C rejects it, and W5 rolls back what it prepared on B.
$lease_a->safe_psql('postgres', "SELECT fence_advance_clock('31 s')");
my $t6 = $lease_a->safe_psql('postgres', "SELECT fence_try_lease('job-2', '30 s', owner => 'W6')");
is(write_as($store_c, $t6, 3, 'W6', 0), '', 'the lease passed to W6, which writes row 3 on C');
$store_b->safe_psql('postgres', qq{
BEGIN;
SELECT fence_use_token($t5);
UPDATE jobs SET payload = 'W5 2pc' WHERE id IN (2, 3);
PREPARE TRANSACTION 'job-on-b';});
is($job->($store_c, $t5, 'W5 2pc'), 'LF001', 'W5 prepared its job on B; C rejects it');
$store_b->safe_psql('postgres', "ROLLBACK PREPARED 'job-on-b'");
is(payloads_2_3($store_b),
	'W5,W5', 'W5 rolls back what it prepared on B: nothing of the stale job remains');
$lease_a->safe_psql('postgres', 'SELECT fence_set_clock(NULL)');

# --- token domains ------------------------------------------------------------
# Each database of a lease server has its own counter: tokens of database
# "other" on A have nothing to do with those of "postgres".
$lease_a->safe_psql('postgres', 'CREATE DATABASE other');
$lease_a->safe_psql('other', 'CREATE EXTENSION fence');
my $other = $lease_a->safe_psql('other', "SELECT fence_try_lease('job-1', '1 min')");
my $mine = $lease_a->safe_psql('postgres', "SELECT fence_advance_tokens(0)");
cmp_ok($other, '<', $mine, "database other starts its own counter ($other) below postgres's ($mine)");

# A new lease server D (the lease service moved) starts from 1: its token is
# just a number to B and C, below their fences, and its holder is rejected.
my $lease_d = fence_node('lease_d');
my $fresh = $lease_d->safe_psql('postgres', "SELECT fence_try_lease('job-1', '1 min', owner => 'D1')");
is(write_as($_, $fresh, 1, 'D1', 0), 'LF001', "a fresh lease server's token ($fresh) is stale on B and C")
  for ($store_b, $store_c);

# Moving it past every fence stored on B and C makes its holders current.
my $max = max_of(map { $_->safe_psql('postgres', 'SELECT max(fence)::bigint FROM jobs') } ($store_b, $store_c));
$lease_d->safe_psql('postgres', "SELECT fence_advance_tokens($max)");
my $next = $lease_d->safe_psql('postgres', "SELECT fence_try_lease('job-2', '1 min', owner => 'D2')");
cmp_ok($next, '>', $max, "fence_advance_tokens($max) on D: its next token $next is above every fence on B and C");
is(write_as($_, $next, 2, 'D2', 0), '', "D's holder is current on B and C")
  for ($store_b, $store_c);
my $probe = stale_probe($store_b, 2, $t1, $t2, $t3, $fresh);
is($probe->{LF001}, 4, "and every older token is stale on the row D's holder wrote");

for my $n ($lease_a, $store_b, $store_c, $lease_d)
{
	unlike(slurp_file($n->logfile), qr/TRAP|terminated by signal/, $n->name . ': no crash');
	$n->stop;
}
done_testing();
