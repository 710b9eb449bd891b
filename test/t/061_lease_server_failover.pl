# Failover of the lease server while workers write to storage servers.
#
# A grants the leases and has a synchronous standby A2; B (fence not
# preloaded) and C hold the fenced rows.  Three workers loop on A: take a
# 50 ms lease on one of 6 jobs, write the job's row on B, then on C, release.
# A dies mid-run (immediate stop) and A2 is promoted.
#
# Proven: while no lease server is up, B and C go on judging writes on their
# own; every token A2 grants is above every token A returned (tokens of
# transactions still in flight included); after A2 re-grants each job and its
# holders write, B and C reject every write of every token A granted for that
# job (with fence_use_token and with the token in the row); on every row of B
# and C the accepted fences never went backwards across the failover.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use FenceStorage;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $jobs = 6;
my $conf = "max_connections = 30\nlog_statement = none\n";
my $lease_a = fence_node('lease_a', init => { allows_streaming => 1 }, conf => $conf);
my $store_b = storage_node('store_b', $jobs, preload => 0, conf => $conf);
my $store_c = storage_node('store_c', $jobs, conf => $conf);
install_writer($lease_a, b => $store_b, c => $store_c);
$lease_a->safe_psql('postgres', qq{
CREATE PROCEDURE work_loop(n int) LANGUAGE plpgsql AS \$\$
DECLARE
	job int;
	t fence_token;
	deadline timestamptz := clock_timestamp() + interval '60 s';
BEGIN
	FOR i IN 1..n LOOP
		EXIT WHEN clock_timestamp() > deadline;
		job := 1 + floor(random() * $jobs)::int;
		t := fence_try_lease('job-' || job, '50 ms');
		IF t IS NOT NULL THEN
			RAISE NOTICE 'TOK=% JOB=%', t, job;
			PERFORM pg_sleep(random() * 0.06);
			PERFORM store_write('b', job, t::bigint, i % 2 = 0);
			PERFORM store_write('c', job, t::bigint, i % 2 = 0);
			PERFORM fence_release('job-' || job, t);
		END IF;
		COMMIT;
	END LOOP;
END \$\$;
});
my $standby = sync_standby($lease_a, 'lease_a2');

my @workers = map { bg_start($lease_a, 'postgres', "CALL work_loop(100000);\n") } 1 .. 3;
ok( wait_until(60, sub { !grep { scalar(my @t = bg_tokens($_)) < 20 } @workers }),
	'workers take leases on A and write to B and C');
$lease_a->stop('immediate');
my %old;    # job => tokens A granted for it
for my $w (@workers)
{
	bg_finish($w);
	my $said = $w->{out} . $w->{err};
	push @{ $old{$2} }, $1 while $said =~ /TOK=(\d+) JOB=(\d+)/g;
}
my @old = map { @$_ } values %old;
my $old_max = max_of(@old);
note 'A granted ' . scalar(@old) . " tokens, the highest $old_max";
is(scalar(check_unique(@old)), 0, 'A granted no token twice');

# No lease server: B and C still judge, from their own rows.
my ($row, $fence) = split /\|/, $store_b->safe_psql('postgres',
	'SELECT id, fence::bigint FROM jobs ORDER BY fence DESC LIMIT 1');
my $lower = max_of(grep { $_ < $fence } @old);
is(stale_probe($store_b, $row, $lower)->{LF001}, 1,
	"with A down and A2 not yet promoted, B rejects token $lower on a row fenced at $fence");

$standby->promote;
my @granted = split /\n/, $standby->safe_psql('postgres',
	"SELECT fence_try_lease('job-' || g, '1 min', owner => 'new-' || g) FROM generate_series(1, $jobs) g");
push @granted, split /\n/, $standby->safe_psql('postgres',
	"SELECT fence_try_lease('other-' || g, '1 min') FROM generate_series(1, 20) g");
is(scalar(grep { $_ ne '' } @granted), $jobs + 20, 'A2 grants every job again (its lease table starts empty)');
cmp_ok(min_of(@granted), '>', $old_max,
	'every token A2 grants is above every token A returned');

# The new holders write their rows on B and C.
for my $job (1 .. $jobs)
{
	my $t = $granted[ $job - 1 ];
	is( $standby->safe_psql('postgres',
			"SELECT coalesce(store_write('b', $job, $t, false), 'ok') || coalesce(store_write('c', $job, $t, true), 'ok')"),
		'okok', "job $job: A2's holder (token $t) writes on B and C");
}

# Every holder from A's era is stale now, on every job and on both servers.
for my $n ($store_b, $store_c)
{
	my ($stale, $total) = (0, 0);
	for my $job (sort keys %old)
	{
		my $out = stale_probe($n, $job, @{ $old{$job} });
		$stale += $out->{LF001} // 0;
		$total += scalar @{ $old{$job} };
	}
	is($stale, $total, $n->name . ": all $total writes of A's era are rejected (LF001)");
	check_storage($n, $n->name . ' across the failover');
}

for my $n ($standby, $store_b, $store_c)
{
	unlike(slurp_file($n->logfile), qr/TRAP|terminated by signal/, $n->name . ': no crash');
	$n->stop;
}
done_testing();
