# Mutual exclusion under load, in real time.
#
# 1. try/release: 16 pgbench clients for a few seconds, each cycle picking
#    one of 4 keys, fence_try_lease, holding it briefly across statements,
#    then logging its hold interval [t0, t1] (read after the grant returned
#    and before the release was called) and releasing.  Proven: on each key
#    no two hold intervals overlap, the tokens grow with the grants, no token
#    is handed out twice, and every release by its holder succeeds.
# 2. blocking fence_lease: 16 clients hammer one key.  Proven: intervals do
#    not overlap, every client is served many times (no starvation), and no
#    client that asked well before another was served after it.
# 3. FIFO, deterministically: waiters enqueued one by one behind a holder are
#    served in arrival order, woken by a release, and again by an expiry.
# 4. Permits: the same with 3 permits per key (fence_try_permit on 2 keys,
#    then blocking fence_permit on one).  Proven: never more than 3 hold
#    intervals of a key share an instant, yet several do; no token twice;
#    every release succeeds; every client is served.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $clients = 16;
my $node = fence_node('mutex', conf => "max_connections = 40\nlog_statement = none\n");
$node->safe_psql('postgres', q{
CREATE UNLOGGED TABLE holds (key text, tok bigint, t_req bigint, t0 bigint,
                             t1 bigint, pid int, released bool);
CREATE FUNCTION usec() RETURNS bigint LANGUAGE sql VOLATILE
	AS 'SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint';
});

# Checks over the logged holds of one kind.
sub check_holds
{
	my ($what) = @_;
	my $n = $node->safe_psql('postgres', 'SELECT count(*) FROM holds');
	my $overlaps = $node->safe_psql('postgres', q{
SELECT count(*) FROM (
	SELECT t0, lag(t1) OVER w AS prev_t1, tok, lag(tok) OVER w AS prev_tok
	  FROM holds WINDOW w AS (PARTITION BY key ORDER BY t0)) s
 WHERE prev_t1 >= t0});
	my $backwards = $node->safe_psql('postgres', q{
SELECT count(*) FROM (
	SELECT tok, lag(tok) OVER (PARTITION BY key ORDER BY t0) AS prev_tok
	  FROM holds) s
 WHERE prev_tok >= tok});
	my $dups = $node->safe_psql('postgres',
		'SELECT count(*) - count(DISTINCT tok) FROM holds');
	my $failed_releases = $node->safe_psql('postgres',
		'SELECT count(*) FROM holds WHERE NOT released');
	is($overlaps, 0, "$what: no two hold intervals on a key overlap ($n holds)");
	is($backwards, 0, "$what: tokens grow with the grants on each key");
	is($dups, 0, "$what: no token handed out twice");
	is($failed_releases, 0, "$what: every holder's release succeeded");
	return $n;
}

# --- 1. try/release ----------------------------------------------------------

$node->pgbench(
	"-n -c $clients -j 2 -T 6",
	0, [qr/processed/], [qr/^$/],
	'try/release torture',
	{
		'try_release' => q{
\set k random(1, 4)
SELECT coalesce(fence_try_lease('mx-' || :k, '1 min')::bigint, 0) AS tok, usec() AS t0 \gset
\if :tok > 0
SELECT pg_sleep(0.0002);
SELECT usec() AS t1 \gset
INSERT INTO holds VALUES (:k, :tok, 0, :t0, :t1, pg_backend_pid(), fence_release('mx-' || :k, :tok));
\endif
}
	});
my $n = check_holds('try/release');
cmp_ok($n, '>=', 1000, "try/release: thousands of grants ($n)");
my $refused = $node->safe_psql('postgres',
	"SELECT refusals > 0 FROM fence_stats WHERE database = 'postgres'");
is($refused, 't', 'try/release: the keys were contended (refusals happened)');
is($node->safe_psql('postgres', q{SELECT count(*) FROM fence_leases WHERE key LIKE 'mx-%' AND live}),
	0, 'try/release: no lease left behind');

# --- 2. blocking fence_lease on one hot key ------------------------------------

$node->safe_psql('postgres', 'TRUNCATE holds');
$node->pgbench(
	"-n -c $clients -j 2 -T 6",
	0, [qr/processed/], [qr/^$/],
	'blocking fence_lease torture',
	{
		'blocking' => q{
SELECT usec() AS treq, fence_lease('hot', '1 min', timeout => '30 s')::bigint AS tok, usec() AS t0 \gset
SELECT pg_sleep(0.0002);
SELECT usec() AS t1 \gset
INSERT INTO holds VALUES ('hot', :tok, :treq, :t0, :t1, pg_backend_pid(), fence_release('hot', :tok));
}
	});
$n = check_holds('blocking');
my ($min, $max, $pids) = split /\|/, $node->safe_psql('postgres', q{
SELECT min(c), max(c), count(*) FROM (SELECT pid, count(*) c FROM holds GROUP BY pid) s});
is($pids, $clients, "blocking: every one of the $clients clients was served");
cmp_ok($min, '>=', $max / 3,
	"blocking: no starvation (per client: min $min, max $max holds)");
# Overtaking: B asked 250 ms after A yet was granted before A (the margin
# absorbs scheduling delays between reading the clock and queueing).
my $overtaken = $node->safe_psql('postgres', q{
SELECT count(*) FROM holds a JOIN holds b
    ON b.t_req > a.t_req + 250000 AND b.t0 < a.t0});
is($overtaken, 0, 'blocking: nobody is overtaken by a client that asked 250 ms later')
  or diag($node->safe_psql('postgres', q{
SELECT a.pid, a.t_req, a.t0, a.tok, b.pid, b.t_req, b.t0, b.tok FROM holds a JOIN holds b
    ON b.t_req > a.t_req + 250000 AND b.t0 < a.t0 LIMIT 5}));

# --- 3. FIFO order, woken by release and by expiry ---------------------------

$node->safe_psql('postgres',
	'CREATE TABLE fifo_log (seq serial, round text, who int, tok bigint)');
for my $round ('release', 'expiry')
{
	my $key = "fifo-$round";
	my $ttl = $round eq 'expiry' ? '6 s' : '1 min';
	my $htok = $node->safe_psql('postgres',
		"SELECT fence_try_lease('$key', '$ttl', owner => 'holder')");
	ok($htok > 0, "$round: a detached holder has '$key'");
	my @w;
	for my $i (1 .. 6)
	{
		push @w, bg_start($node, 'postgres', qq{
SELECT fence_lease('$key', '1 min', timeout => '60 s')::bigint AS tok \\gset
INSERT INTO fifo_log (round, who, tok) VALUES ('$round', $i, :tok);
SELECT fence_release('$key', :tok);
});
		ok( wait_until(10, sub {
				$node->safe_psql('postgres',
					"SELECT waiters FROM fence_leases WHERE key = '$key'") == $i }),
			"$round: waiter $i is queued");
	}
	is( $node->safe_psql('postgres', "SELECT fence_release('$key', $htok)"),
		't', "release: the holder releases") if $round eq 'release';
	bg_finish($_) for @w;
	is( $node->safe_psql('postgres',
			"SELECT string_agg(who::text, ',' ORDER BY seq) FROM fifo_log WHERE round = '$round'"),
		'1,2,3,4,5,6',
		"$round: waiters served in arrival order");
	is( $node->safe_psql('postgres', qq{
SELECT bool_and(tok > prev) FROM (
	SELECT tok, lag(tok) OVER (ORDER BY seq) prev FROM fifo_log WHERE round = '$round') s
 WHERE prev IS NOT NULL}),
		't', "$round: each with a higher token");
}

# --- 4. permits: at most n holders at once ----------------------------------

# The most intervals of one key that contain a common instant: the greatest
# number of holders seen at once (each interval lies inside its real hold).
sub max_at_once
{
	return $node->safe_psql('postgres', q{
SELECT coalesce(max(c), 0) FROM (
	SELECT a.key, a.tok, count(*) AS c FROM holds a JOIN holds b
	    ON b.key = a.key AND b.t0 <= a.t0 AND a.t0 < b.t1
	 GROUP BY a.key, a.tok) s});
}

$node->safe_psql('postgres', 'TRUNCATE holds');
$node->pgbench(
	"-n -c $clients -j 2 -T 6",
	0, [qr/processed/], [qr/^$/],
	'try_permit/release torture',
	{
		'try_permit' => q{
\set k random(1, 2)
SELECT coalesce(fence_try_permit('px-' || :k, 3, '1 min')::bigint, 0) AS tok, usec() AS t0 \gset
\if :tok > 0
SELECT pg_sleep(0.0005);
SELECT usec() AS t1 \gset
INSERT INTO holds VALUES (:k, :tok, 0, :t0, :t1, pg_backend_pid(), fence_release('px-' || :k, :tok));
\endif
}
	});
$n = $node->safe_psql('postgres', 'SELECT count(*) FROM holds');
cmp_ok($n, '>=', 1000, "try_permit: thousands of permits ($n)");
is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT tok) FROM holds'),
	0, 'try_permit: no token handed out twice');
is($node->safe_psql('postgres', 'SELECT count(*) FROM holds WHERE NOT released'),
	0, "try_permit: every holder's release succeeded");
my $most = max_at_once();
cmp_ok($most, '<=', 3, "try_permit: never more than 3 holders of a key at once (most: $most)");
cmp_ok($most, '>=', 2, "try_permit: a key had several holders at once (most: $most)");

$node->safe_psql('postgres', 'TRUNCATE holds');
$node->pgbench(
	"-n -c $clients -j 2 -T 6",
	0, [qr/processed/], [qr/^$/],
	'blocking fence_permit torture',
	{
		'permit' => q{
SELECT usec() AS treq, fence_permit('pool', 3, '1 min', timeout => '30 s')::bigint AS tok, usec() AS t0 \gset
SELECT pg_sleep(0.001);
SELECT usec() AS t1 \gset
INSERT INTO holds VALUES ('pool', :tok, :treq, :t0, :t1, pg_backend_pid(), fence_release('pool', :tok));
}
	});
$n = $node->safe_psql('postgres', 'SELECT count(*) FROM holds');
is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT tok) FROM holds'),
	0, "fence_permit: no token handed out twice ($n permits)");
is($node->safe_psql('postgres', 'SELECT count(*) FROM holds WHERE NOT released'),
	0, "fence_permit: every holder's release succeeded");
$most = max_at_once();
cmp_ok($most, '<=', 3, "fence_permit: never more than 3 holders at once (most: $most)");
cmp_ok($most, '>=', 2, "fence_permit: several holders at once (most: $most)");
($min, $max, $pids) = split /\|/, $node->safe_psql('postgres', q{
SELECT min(c), max(c), count(*) FROM (SELECT pid, count(*) c FROM holds GROUP BY pid) s});
is($pids, $clients, "fence_permit: every one of the $clients clients was served");
cmp_ok($min, '>=', $max / 3,
	"fence_permit: no starvation (per client: min $min, max $max permits)");
is($node->safe_psql('postgres', q{SELECT count(*) FROM fence_leases WHERE key IN ('pool', 'px-1', 'px-2')}),
	0, 'permits: none left behind');

unlike(slurp_file($node->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$node->stop;
done_testing();
