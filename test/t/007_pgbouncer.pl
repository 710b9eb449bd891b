# Through a real PgBouncer, in transaction pooling mode, then in session
# pooling mode.
#
# PgBouncer listens on 127.0.0.1 and pools every client onto ONE server
# connection (default_pool_size = 1), so anything a server connection
# remembers is shared by all clients.  Proven in transaction mode:
# - detached leases (owner => ...) and fence_use_token in each writing
#   transaction work: the holder writes, a second worker is refused, takes
#   over after expiry, and the old holder's write is rejected as stale even
#   though it runs on the very connection that took the newer token;
# - a transaction lease ends at COMMIT, so it never leaks to the next client;
# - 8 pgbench clients on 2 server connections doing detached lease, fenced
#   write and release cycles never see a stale-write error, and every row
#   ends with the fence of its last writer;
# - and why session scope is not pooler-safe: a session lease (and the
#   token the session remembers) belongs to the server connection, so it
#   outlives the client that took it and is visible to the next client
#   (transaction mode runs no server_reset_query between clients).
# In session mode, with PgBouncer's default server_reset_query (DISCARD ALL):
# - a client's session lease and permit end when it disconnects: the next
#   client, on the very same backend, holds nothing and has no token in
#   effect, and anyone can take the lease at once; a detached lease stays.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

plan skip_all => 'pgbouncer is not installed (make test installs it as root)'
  unless pgbouncer_binary();

my $node = fence_node('pooled', conf => "fence.test_clock = on\n");
$node->safe_psql('postgres', q{
CREATE TABLE exports (id int PRIMARY KEY, state text, fence fence_token NOT NULL DEFAULT 0);
INSERT INTO exports (id, state) SELECT g, 'new' FROM generate_series(1, 4) g;
SELECT fence_protect('exports', column_name => 'fence');
});

# --- PgBouncer -------------------------------------------------------------

my ($bouncer, $dir, $conn) = start_pgbouncer($node, 'pgbouncer', 'transaction');

# One client: a fresh psql connection to PgBouncer running $sql (through
# the transaction-mode PgBouncer unless $at names another).
sub client
{
	my ($sql, $at) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[ 'psql', '-X', '-A', '-t', '-q', '-v', 'VERBOSITY=verbose', '-d', $at // $conn, '-c', $sql ],
		'>', \$out, '2>', \$err);
	chomp $out;
	my ($state) = $err =~ /ERROR:\s+([0-9A-Z]{5}):/;
	return wantarray ? ($out, $state // '', $err) : $out;
}

ok(wait_until(10, sub { client('SELECT 1') eq '1' }), 'PgBouncer is up');
my $pid1 = client('SELECT pg_backend_pid()');
my $pid2 = client('SELECT pg_backend_pid()');
is($pid1, $pid2, 'two clients are served by the same server connection');

# --- detached leases + fence_use_token -----------------------------------------

my $tA = client(q{SELECT fence_try_lease('export-1', '30 s', owner => 'worker-A')});
ok($tA > 0, "worker A holds export-1 (token $tA)");
is(client(q{SELECT fence_try_lease('export-1', '30 s', owner => 'worker-B') IS NULL}),
	't', 'worker B is refused while A holds it');
is(client(qq{BEGIN; SELECT fence_use_token($tA); UPDATE exports SET state = 'A' WHERE id = 1; COMMIT;}),
	'', 'A writes under its token');
$node->safe_psql('postgres', q{SELECT fence_advance_clock('31 s')});
my $tB = client(q{SELECT fence_try_lease('export-1', '30 s', owner => 'worker-B')});
cmp_ok($tB, '>', $tA, "after A's lease expired, B takes over with a higher token ($tB)");
my (undef, $state) = client(
	qq{BEGIN; SELECT fence_use_token($tB); UPDATE exports SET state = 'B' WHERE id = 1; COMMIT;});
is($state, '', 'B writes under its token');
(undef, $state) = client(
	qq{BEGIN; SELECT fence_use_token($tA); UPDATE exports SET state = 'A again' WHERE id = 1; COMMIT;});
is($state, 'LF001',
	"A's stale write is rejected, on the connection that remembers B's newer token");
is(client(q{SELECT state, fence FROM exports WHERE id = 1}), "B|$tB", "the row keeps B's write");
is(client(qq{SELECT fence_lease_status('export-1', $tA)}), 'superseded',
	"A learns through the pooler that it was superseded");
is(client(qq{SELECT fence_release('export-1', $tA)}), 'f', "A's release does nothing");
is(client(qq{SELECT fence_release('export-1', $tB)}), 't',
	"B's release works from any client (the token is the capability)");

# --- transaction scope ----------------------------------------------------------

my (undef, $xs) = client(q{BEGIN;
SELECT fence_try_xact_lease('export-2', '1 min');
UPDATE exports SET state = 'xact' WHERE id = 2;
COMMIT;});
is($xs, '', 'a transaction lease and a fenced write in one pooled transaction');
ok(client(q{SELECT fence_try_lease('export-2', '1 min', owner => 'worker-C') > 0}) eq 't',
	'the transaction lease ended at COMMIT: the next client gets the key');
client(q{SELECT fence_break('export-2')});

# --- concurrent pooled workers ---------------------------------------------------

$node->safe_psql('postgres', q{SELECT fence_set_clock(NULL)});
my $script = "$dir/cycle.sql";
append_to_file($script, q{
\set k random(1, 4)
SELECT coalesce(fence_try_lease('pool-' || :k, '1 min', owner => 'c' || :client_id)::bigint, 0) AS tok \gset
\if :tok > 0
BEGIN;
SELECT fence_use_token(:tok);
UPDATE exports SET state = 'c' || :client_id || ' ' || :tok WHERE id = :k;
COMMIT;
SELECT fence_release('pool-' || :k, :tok) AS released \gset
\endif
});
# Two server connections for 8 clients.
PostgreSQL::Test::Utils::system_or_bail('sed', '-i', 's/default_pool_size = 1/default_pool_size = 2/',
	"$dir/pgbouncer.ini");
IPC::Run::signal($bouncer, 'HUP');
usleep(300_000);
my ($p_out, $p_err) = ('', '');
my $ok = IPC::Run::run(
	[ 'pgbench', '-n', '-c', '8', '-j', '2', '-T', '4', '-f', $script, $conn ],
	'>', \$p_out, '2>', \$p_err);
ok($ok, 'pgbench through PgBouncer: no client failed (no stale write, no error)')
  or diag($p_err);
my ($tx) = $p_out =~ /number of transactions actually processed: (\d+)/;
cmp_ok($tx // 0, '>=', 200, "pgbench ran many cycles (" . ($tx // 0) . ")");
is( client(q{SELECT count(*) FROM exports
 WHERE id BETWEEN 1 AND 4 AND state LIKE 'c% %' AND split_part(state, ' ', 2)::bigint <> fence::bigint}),
	'0', "every row's fence is its last writer's token");
is(client(q{SELECT count(*) FROM fence_leases WHERE key LIKE 'pool-%' AND live}), '0',
	'every pooled lease was released');

# --- why session scope is not pooler-safe ---------------------------------------

$node->safe_psql('postgres', q{SELECT fence_break('session-1')});
my $tS = client(q{SELECT fence_try_lease('session-1', '1 min')});
ok($tS > 0, 'a client takes a session lease through the pooler and disconnects');
is(client(q{SELECT live FROM fence_leases WHERE key = 'session-1'}), 't',
	'... the lease outlives that client: it belongs to the server connection');
is(client(q{SELECT fence_current_token()}), $tS,
	"... and the next client on that connection inherits its token in effect");

IPC::Run::signal($bouncer, 'TERM');
$bouncer->finish;

# --- session pooling: DISCARD ALL between clients -------------------------------

# A second PgBouncer in session mode, one server connection, and the
# default server_reset_query (DISCARD ALL): not set on purpose.
my ($sbouncer, undef, $sconn) = start_pgbouncer($node, 'pgbouncer-session', 'session');
ok(wait_until(10, sub { client('SELECT 1', $sconn) eq '1' }), 'session-mode PgBouncer is up');

my ($c1) = client(q{SELECT pg_backend_pid(), fence_try_lease('sp-lease', '1 hour'),
 fence_try_permit('sp-permit', 1, '1 hour'), fence_try_lease('sp-detached', '1 hour', owner => 'keeper')},
	$sconn);
my ($spid1, $tL, $tP, $tD) = split /\|/, $c1;
ok($tL > 0 && $tP > 0 && $tD > 0,
	"client 1 takes a session lease ($tL), a permit ($tP) and a detached lease ($tD), and disconnects");
my ($c2) = client(q{SELECT pg_backend_pid(),
 (SELECT count(*) FROM fence_leases WHERE pid = pg_backend_pid()),
 fence_current_token() IS NULL, fence_current_token('sp-lease') IS NULL}, $sconn);
my ($spid2, $held2, $no_token, $no_token_for_lease) = split /\|/, $c2;
is($spid2, $spid1, 'client 2 gets the same backend');
is($held2, '0', '... which holds no lease any more (DISCARD ALL released them)');
is("$no_token|$no_token_for_lease", 't|t', '... and has no token in effect');
is($node->safe_psql('postgres',
		q{SELECT fence_try_lease('sp-lease', '1 hour', owner => 'next') IS NOT NULL,
		         fence_try_permit('sp-permit', 1, '1 hour', owner => 'next') IS NOT NULL}),
	't|t', 'another client takes the lease and the permit at once');
is($node->safe_psql('postgres',
		qq{SELECT fence_lease_status('sp-lease', $tL), fence_lease_status('sp-detached', $tD)}),
	'superseded|held', "client 1's session lease is over; its detached lease stays");
is( $node->safe_psql('postgres',
		q{SELECT fence_break('sp-lease') IS NOT NULL, fence_break('sp-permit') IS NOT NULL,
		         fence_break('sp-detached') IS NOT NULL}),
	't|t|t', 'clean up');

IPC::Run::signal($sbouncer, 'TERM');
$sbouncer->finish;
$node->stop;
done_testing();
