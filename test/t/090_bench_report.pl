# The report of make bench (test/bench/report) on samples made up here, so
# that what it judges is known in advance.  No server.  Proven:
#  (a) fence's best form is one form for the whole run (the highest job rates
#      overall), not the luckiest form of each row;
#  (b) its ratios against Redis are judged where the goals say (throughput
#      at every client count; p50 and p99 latency at 1 and 8 clients only),
#      and a miss is listed with its median ratio;
#  (c) the trigger is judged against the no-op C trigger: over 1.02 is a
#      miss, over 1.10 past the hard limit too, for bulk and single-row;
#  (d) a contender that could not run is reported as skipped, with why;
#  (e) with --svg, both charts are written, one line per contender, every
#      tag closed; without it, none;
#  (f) the breaker section: a rate per contender and row, the ratios of time
#      per call against SELECT 1 in as many round trips (reported, not
#      judged), and shared memory per breaker from the two readings;
#  (g) the permits section: a rate per contender for each n, the ratios of
#      time per cycle, permit against lease, at 1 and 8 clients (reported,
#      not judged), and the memory said in words, not measured;
#  (h) etcd, ZooKeeper and the lock-free limit in the job: fence's best form
#      judged against etcd and ZooKeeper (>= 1.5x the jobs/s; a lower p99 at
#      1 and 8 clients, p50 reported only) and against the limit (>= 0.9x);
#      each in the charts' legend;
#  (i) the queue section: the fenced claim with the lease in WHERE judged
#      by its time against the unfenced one (goal <= 1.10), the lease-in-FROM
#      form reported;
#  (j) the signal section: p50 and p99 per contender, ratios reported, not
#      judged;
#  (l) the client section: the job through pgfence judged against the same
#      job in hand-written SQL (at least 0.95x its jobs/s, per client count),
#      the grant on a new connection reported;
#  (k) the growth curves: each with its section, the growth of its cost
#      from point to point (against its reference, where it has one; the
#      scrape judged: at most 3x from 1,000 to 1,000,000 leases), a chart
#      each with a line per contender and a point per measurement on a log
#      x axis; shared memory per lease slot and what a setting takes.
use strict;
use warnings;

use File::Temp qw(tempdir);
use Test::More;

my $report = ($ENV{FENCE_SRC} // "$ENV{PWD}/..") . '/test/bench/report';
ok(-f $report, "the report script is at $report");
my $dir = tempdir(CLEANUP => 1);

# samples FILE, LINES: a samples.tsv, one tab-separated record per line
sub samples
{
	my ($name, @lines) = @_;
	my $path = "$dir/$name";
	open my $fh, '>', $path or die "$path: $!";
	print $fh join("\t", @$_), "\n" for @lines;
	close $fh or die "$path: $!";
	return $path;
}

# run_report ARGS: (exit code, stdout)
sub run_report
{
	my $out = `perl "$report" @_ 2>&1`;
	return ($? >> 8, $out);
}

# rate_samples GROUP, ROWS, RATES: the same rates of rounds 1 and 2 for
# every row (RATES: contender => [round 1, round 2])
sub rate_samples
{
	my ($group, $rows, $rates) = @_;
	my @s;
	for my $row (@$rows)
	{
		for my $who (sort keys %$rates)
		{
			push @s, [ 'sample', $group, $row, $who, $_, $rates->{$who}[ $_ - 1 ] ] for 1, 2;
		}
	}
	return @s;
}

my @meta = (
	[ 'meta', 'mode', 'quick' ],
	[ 'meta', 'started', '2026-12-01 00:00 UTC' ],
	[ 'meta', 'rounds', '2' ],
	[ 'meta', 'seconds', '1' ],
	[ 'meta', 'load_start', '0.10 0.20 0.30' ],
	[ 'meta', 'load_end', '0.40 0.50 0.60' ],
);

# job rates: rounds 1 and 2 of each contender at 1, 8 and 32 clients
my %rate = (
	fence_pipeline => [ 200, 3000, 5000 ],
	fence_xact => [ 100, 1000, 1000 ],
	# the best row of 8 clients, but lower everywhere else
	fence_session => [ 150, 3500, 2000 ],
	advisory => [ 120, 1500, 1500 ],
	redis => [ 190, 2000, 6000 ],
	# (h) 1.6x / 1.4x / 1.1x the best form's jobs/s against etcd
	etcd => [ 125, 2143, 4546 ],
	zookeeper => [ 100, 1000, 1000 ],
	# the best form at 0.95x, 0.6x and 0.5x of the limit
	limit => [ 210.6, 5000, 10000 ],
);
my %p50 = (
	fence_pipeline => [ 2.0, 0.5, 9.0 ],
	fence_xact => [ 3, 3, 3 ],
	fence_session => [ 3, 0.1, 3 ],
	advisory => [ 3, 3, 3 ],
	redis => [ 1.0, 1.0, 1.0 ],
	# the best form's p50 and p99 are 2.0, 0.5 and 9.0 (x10)
	etcd => [ 1.0, 1.0, 1.0 ],
	zookeeper => [ 4.0, 4.0, 4.0 ],
	limit => [ 0.5, 0.5, 0.5 ],
);
my @rows = ('1 client', '8 clients', '32 clients');
my @job;
for my $who (sort keys %rate)
{
	for my $i (0 .. 2)
	{
		for my $r (1, 2)
		{
			push @job, [ 'sample', 'job_on', $rows[$i], $who, $r, $rate{$who}[$i] ];
			push @job, [ 'sample', 'job_on_p50', $rows[$i], $who, $r, $p50{$who}[$i] ];
			push @job, [ 'sample', 'job_on_p99', $rows[$i], $who, $r, 10 * $p50{$who}[$i] ];
			push @job, [ 'sample', "job_on_$_", $rows[$i], $who, $r, 5 * $p50{$who}[$i] ] for qw(p90 p999);
		}
	}
}
my @trigger;
for my $r (1, 2)
{
	push @trigger,
	  [ 'sample', 'bulk', '100,000 rows', 'plain', $r, 1.00 ],
	  [ 'sample', 'bulk', '100,000 rows', 'noop', $r, 1.20 ],
	  [ 'sample', 'bulk', '100,000 rows', 'fence', $r, 1.26 ],
	  [ 'sample', 'bulk_wide', '25,000 rows', 'plain', $r, 2.00 ],
	  [ 'sample', 'bulk_wide', '25,000 rows', 'noop', $r, 2.10 ],
	  [ 'sample', 'bulk_wide', '25,000 rows', 'fence', $r, 2.12 ],
	  [ 'sample', 'single', '8 clients', 'plain', $r, 1100 ],
	  [ 'sample', 'single', '8 clients', 'noop', $r, 1000 ],
	  [ 'sample', 'single', '8 clients', 'fence', $r, 880 ];
}

my $full = samples('full.tsv', @meta, @job, @trigger);
my ($rc, $out) = run_report('--svg', $dir, $full);
is($rc, 0, 'the report runs');

# (a)
like($out, qr/fence, best form: fence xact, pipelined \(/, 'the best form is the pipelined one over the whole run');
unlike($out, qr/best form: fence session/, 'not fence session, though it leads at 8 clients');

# (b)
my ($missed) = $out =~ /^Goals missed.*?\n(.*)\z/ms;
$missed //= '';
like($missed, qr/job_on: best: fence xact, pipelined \/ Redis \+ PG at 32 clients: 0\.83x/,
	'throughput below Redis at 32 clients is a miss');
unlike($missed, qr/job_on: .* \/ Redis \+ PG at (1 client|8 clients):/, 'throughput at 1 and 8 clients meets the goal');
like($missed, qr/job_on_p50: best: fence xact, pipelined \/ Redis \+ PG at 1 client: 2\.00x/,
	'a higher p50 than Redis at 1 client is a miss');
like($missed, qr/job_on_p99: best: .* at 1 client: 2\.00x/, 'so is a higher p99');
unlike($missed, qr/job_on_p50: .* at 8 clients/, 'a lower p50 at 8 clients is not');
unlike($missed, qr/job_on_p(50|99): .* at 32 clients/, 'latency at 32 clients is reported, not judged');
like($out, qr/best: fence xact, pipelined \/ Redis \+ PG\s+1\.05x \[1\.05-1\.05\] ok/,
	'the judged throughput row shows the per-round ratio and its verdict');

# (c)
like($missed, qr/bulk: fence_enforce \/ no-op C trigger at 100,000 rows: 1\.05x \[1\.05-1\.05\] \(goal <= 1\.02 \(must <= 1\.10\)\)\n/,
	'1.05x the no-op trigger misses the goal but not the hard limit');
unlike($missed, qr/bulk_wide:/, 'wide rows at 1.01x meet it');
like($missed, qr/single: no-op C trigger \/ fence_enforce at 8 clients: 1\.14x .* MISS!/,
	'single-row UPDATEs taking 1.14x as long are past the hard limit');
like($out, qr/fence_enforce \/ unprotected\s+1\.26x \[1\.26-1\.26\]\s+reported, not judged/,
	'fenced / unprotected is reported, not judged');

# chart NAME: the text of $dir/NAME after the checks every chart must pass
# (written, an SVG document closed last, every tag closed in order, no bare
# ampersand, every frame, bar and legend key inside the picture); undef if
# it is not there
sub chart
{
	my ($svg) = @_;
	my $path = "$dir/$svg";
	ok(-s $path, "$svg written");
	open my $fh, '<', $path or return undef;
	my $text = do { local $/; <$fh> };
	like($text, qr/\A<\?xml [^>]*\?>\n<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/, "$svg is an SVG document");
	like($text, qr/<\/svg>\n\z/, "$svg ends with its closing tag");
	# every element either closes itself or is closed, in order
	my @open;
	my $balanced = 1;
	while ($text =~ /<(\/?)([a-z]+)[^>]*?(\/?)>/g)
	{
		if ($1) { $balanced = 0 unless @open && pop(@open) eq $2; }
		elsif (!$3) { push @open, $2; }
	}
	ok($balanced && !@open, "$svg: every tag is closed, in order");
	unlike($text, qr/&(?!amp;|lt;|gt;)/, "$svg: no unescaped ampersand");
	my ($width, $height) = $text =~ /<svg [^>]*width="(\d+)" height="(\d+)"/;
	my @past = grep { $_->[0] + $_->[1] > $width }
	  map { [ /x="([\d.]+)"/, /width="([\d.]+)"/ ] } $text =~ /<rect x="[^>]*>/g;
	is(scalar @past, 0, "$svg: every frame, bar and legend key inside the picture");
	my @below = grep { $_ > $height } $text =~ /<text x="[\d.]+" y="([\d.]+)"/g;
	is(scalar @below, 0, "$svg: every text above the bottom edge");
	return $text;
}

# (e)
for my $svg ('job-throughput.svg', 'job-latency.svg')
{
	my $text = chart($svg) // next;
	like($text, qr/>Redis \+ PG</, "$svg: Redis is in the legend");
	like($text, qr/>$_</, "$svg: $_ is in the legend") for 'etcd \+ PG', 'ZooKeeper \+ PG', 'no lock \(the limit\)';
	if ($svg eq 'job-throughput.svg')
	{
		my $lines = () = $text =~ /<polyline /g;
		is($lines, 8, 'one line per contender (one pass measured)');
		like($text, qr/<polyline [^>]*stroke="#000000"[^>]*stroke-dasharray=/, 'the limit is a dashed line');
	}
}

ok(!glob("$dir/curve-*.svg"), 'no growth curve without its samples');

# (h)
like($out, qr/best: fence xact, pipelined \/ etcd \+ PG\s+1\.60x \[1\.60-1\.60\] ok\s+1\.40x \[1\.40-1\.40\] MISS\s+1\.10x \[1\.10-1\.10\] MISS\s+goal >= 1\.5$/m,
	'the best form against etcd: judged at every client count, goal 1.5');
like($missed, qr/^  - job_on: best: fence xact, pipelined \/ etcd \+ PG at 8 clients: 1\.40x .*\(goal >= 1\.5\)$/m,
	'1.4x etcd is a miss');
like($out, qr/best: fence xact, pipelined \/ ZooKeeper \+ PG\s+2\.00x \[2\.00-2\.00\] ok\s+3\.00x \[3\.00-3\.00\] ok\s+5\.00x \[5\.00-5\.00\] ok/,
	'and against ZooKeeper');
like($out, qr/best: fence xact, pipelined \/ no lock \(the limit\)\s+0\.95x \[0\.95-0\.95\] ok\s+0\.60x \[0\.60-0\.60\] MISS\s+0\.50x \[0\.50-0\.50\] MISS\s+goal >= 0\.9: what the lock costs$/m,
	'and against the limit, goal 0.9');
like($missed, qr/^  - job_on_p99: best: fence xact, pipelined \/ etcd \+ PG at 1 client: 2\.00x/m,
	'a higher p99 than etcd at 1 client is a miss');
unlike($missed, qr/job_on_p99: .* \/ ZooKeeper \+ PG/, 'a lower p99 than ZooKeeper is not');
unlike($missed, qr/job_on_p50: .* \/ (etcd|ZooKeeper) \+ PG/, 'p50 against etcd and ZooKeeper is reported, not judged');
unlike($missed, qr/job_on_p99: .* \/ etcd \+ PG at 32 clients/, 'nor p99 at 32 clients');

# (d) no Redis: skipped and said so; nothing judged against it
unlink glob("$dir/*.svg");
my $noredis = samples('noredis.tsv', @meta,
	(grep { $_->[3] ne 'redis' } @job),
	[ 'skip', 'job_on', 'redis', 'Redis not available (redis-server and libhiredis-dev are needed) or left out' ]);
($rc, $out) = run_report($noredis);
is($rc, 0, 'the report runs without Redis samples');
like($out, qr/skipped Redis \+ PG: Redis not available \(redis-server and libhiredis-dev are needed\) or left out/,
	'the skipped Redis contender is reported with the reason');
unlike($out, qr/\/ Redis \+ PG/, 'no ratio against Redis');
ok(!-e "$dir/job-throughput.svg" && !-e "$dir/job-latency.svg", 'without --svg no chart is written');

# (f) the breaker section alone: the four rows, each with a rate per
# contender; the ratios; memory per breaker
unlike($out, qr/Circuit breakers|per breaker/, 'a run without the breaker section prints none');
my %brate = (
	select1 => [ 10000, 12400 ],
	breaker_one => [ 8000, 8000 ],
	select2 => [ 5000, 5000 ],
	breaker_two => [ 4000, 2500 ],
);
my @brows = ('1 client, 1,000 names', '8 clients, 1,000 names', '1 client, 1 name', '8 clients, 1 name');
my @breaker = rate_samples('breaker', \@brows, \%brate);
my $bfile = samples('breaker.tsv', @meta, @breaker,
	[ 'meta', 'breaker_shmem:fence breaker table', '9000' ],
	[ 'meta', 'breaker_shmem:fence breakers', '128' ],
	[ 'meta', 'breaker_mem', '1024 300000 4096 1040000' ]);
($rc, $out) = run_report($bfile);
is($rc, 0, 'the report runs on breaker samples alone');
my ($bsec) = $out =~ /^(Circuit breakers: .*?)^Shared memory per breaker/ms;
ok(defined $bsec, 'the breaker section is printed, before the memory per breaker');
$bsec //= '';
like($bsec, qr/^  \s+SELECT 1\s+allow \+ report, 1 statement\s+SELECT 1, twice\s+allow, then report$/m,
	'one column per contender, in order');
for my $row (@brows)
{
	like($bsec, qr/^  \Q$row\E\s+11,200 \[10,000-12,400\]\s+8,000\s+5,000\s+3,250 \[2,500-4,000\]$/m,
		"$row: the median rate of each contender, with its spread");
}
my $cells = join '\s+', ('1\.40x \[1\.25-1\.55\]') x 4;
like($bsec, qr/^  SELECT 1 \/ allow \+ report, 1 statement\s+$cells\s+time per call, 1 round trip: reported, not judged$/m,
	'allow + report in one statement against SELECT 1: the median per-round ratio and its spread, every row');
$cells = join '\s+', ('1\.62x \[1\.25-2\.00\]') x 4;
like($bsec, qr/^  SELECT 1, twice \/ allow, then report\s+$cells\s+time per call, 2 round trips: reported, not judged$/m,
	'two round trips against two SELECT 1s');
unlike($bsec, qr/\b(ok|MISS!?)\b/, 'no verdict in the breaker section');
like($out, qr/^Shared memory per breaker \(pg_shmem_allocations, fence\.max_breakers = 1,024\)\n  fence breaker table\s+9,000 B\n  fence breakers\s+128 B\n/m,
	'the breaker allocations at the setting');
like($out, qr/^  per breaker: 740,000 B \/ 3,072 breakers = 240\.9 B \(reported, not judged\)$/m,
	'memory per breaker: what the allocations grew by, per breaker added');
like($out, qr/^Goals: none judged in this run$/m, 'nothing judged');
unlike($out, qr/Leases with permits/, 'a run without the permits section prints none');

# (g) the permits section alone
my %prate = (
	lease_c1 => [ 10000, 12000 ],
	permit_c1 => [ 8000, 8000 ],
	lease_c8 => [ 30000, 30000 ],
	permit_c8 => [ 20000, 15000 ],
);
my @prows = ('n = 1', 'n = 10', 'n = 100', 'n = 1,000');
my @permits = rate_samples('permits', \@prows, \%prate);
($rc, $out) = run_report(samples('permits.tsv', @meta, @permits));
is($rc, 0, 'the report runs on permits samples alone');
my ($psec) = $out =~ /^(Leases with permits: .*?)^Goals/ms;
ok(defined $psec, 'the permits section is printed');
$psec //= '';
like($psec, qr/^  \s+lease, 1 client\s+permit, 1 client\s+lease, 8 clients\s+permit, 8 clients$/m,
	'one column per contender, in order');
for my $row (@prows)
{
	like($psec, qr/^  \Q$row\E\s+11,000 \[10,000-12,000\]\s+8,000\s+30,000\s+17,500 \[15,000-20,000\]$/m,
		"$row: the median rate of each contender, with its spread");
}
$cells = join '\s+', ('1\.38x \[1\.25-1\.50\]') x 4;
like($psec, qr/^  lease, 1 client \/ permit, 1 client\s+$cells\s+time per cycle, 1 client: reported, not judged$/m,
	'permit against lease at 1 client: the median per-round ratio and its spread, every n');
$cells = join '\s+', ('1\.75x \[1\.50-2\.00\]') x 4;
like($psec, qr/^  lease, 8 clients \/ permit, 8 clients\s+$cells\s+time per cycle, 8 clients: reported, not judged$/m,
	'and at 8 clients');
like($psec, qr/^  Memory: nothing new to measure\.  A permit is a lease slot/m, 'memory is said, not measured');
unlike($psec, qr/\b(ok|MISS!?)\b/, 'no verdict in the permits section');
like($out, qr/^Goals: none judged in this run$/m, 'nothing judged');

# (l) the client section alone: pgfence at 0.975x the hand-written SQL with
# 1 process (met) and 0.92x with 4 (missed); the CPU per job beside it
my @crows = ('1 process', '4 processes');
my @client = (
	rate_samples('client', [ $crows[0] ], { pgfence => [ 97, 98 ], sql => [ 100, 100 ] }),
	rate_samples('client', [ $crows[1] ], { pgfence => [ 90, 94 ], sql => [ 100, 100 ] }),
	rate_samples('client_cpu', [ $crows[0] ], { pgfence => [ 440, 460 ], sql => [ 400, 400 ] }),
	rate_samples('client_cpu', [ $crows[1] ], { pgfence => [ 500, 500 ], sql => [ 400, 400 ] }),
);
($rc, $out) = run_report(samples('client.tsv', @meta, @client));
is($rc, 0, 'the report runs on client samples alone');
my ($csec) = $out =~ /^(The client: .*?)^The client \(detail\)/ms;
ok(defined $csec, 'the client section is printed');
$csec //= '';
like($csec, qr/^  \s+pgfence\s+hand-written SQL$/m, 'one column per contender, in order');
like($csec, qr/^  4 processes\s+92 \[90-94\]\s+100$/m, 'the median rate of each contender, with its spread');
like($csec, qr/^  pgfence \/ hand-written SQL\s+0\.97x \[0\.97-0\.98\] ok\s+0\.92x \[0\.90-0\.94\] MISS\s+goal >= 0\.95/m,
	'pgfence judged against the hand-written SQL per client count');
my ($cpu) = $out =~ /^(The client \(detail\): .*?)^Goals/ms;
ok(defined $cpu, 'the CPU per job is printed after it');
$cpu //= '';
like($cpu, qr/^  1 process\s+450\.0 \[440\.0-460\.0\]\s+400\.0$/m, 'the median CPU per job of each contender');
like($cpu, qr/^  pgfence \/ hand-written SQL\s+1\.12x \[1\.10-1\.15\]\s+1\.25x \[1\.25-1\.25\]\s+what the client adds/m,
	'pgfence against the hand-written SQL, reported, not judged');
unlike($cpu, qr/\b(ok|MISS!?)\b/, 'no verdict on the CPU');
like($out, qr/^  - client: pgfence \/ hand-written SQL at 4 processes: 0\.92x \[0\.90-0\.94\]/m, 'the miss is listed');
unlike($out, qr/^  - client: .* at 1 process:/m, 'not the goal met');

# (i) the queue alone: fenced claims (lease in WHERE) at 1.05x and 1.25x the
# time of unfenced ones; the lease-in-FROM form at 2x, reported only
my @queue = rate_samples('queue', [ '1 client' ],
	{ plain => [ 1050, 1050 ], noop => [ 1050, 1050 ], fence_stmt => [ 1000, 1000 ], fence => [ 525, 525 ] });
push @queue, rate_samples('queue', [ '8 clients' ],
	{ plain => [ 5000, 5000 ], noop => [ 4400, 4400 ], fence_stmt => [ 4000, 4000 ], fence => [ 2500, 2500 ] });
($rc, $out) = run_report(samples('queue.tsv', @meta, @queue));
is($rc, 0, 'the report runs on queue samples alone');
like($out, qr/^  claim, unfenced \/ fenced, lease in WHERE\s+1\.05x \[1\.05-1\.05\] ok\s+1\.25x \[1\.25-1\.25\] MISS\s+time per claim, fenced \/ unfenced: goal <= 1\.10$/m,
	'the fenced claim is judged by its time against the unfenced one');
like($out, qr/^  - queue: .* at 8 clients: 1\.25x/m, 'and 1.25x is a miss');
like($out, qr/^  claim, unfenced \/ fenced, lease in FROM\s+2\.00x \[2\.00-2\.00\]\s+2\.00x \[2\.00-2\.00\]\s+the same, the lease in FROM: reported, not judged$/m,
	'the lease-in-FROM form is reported, not judged');
unlike($out, qr/^  - queue: .*lease in FROM/m, 'and is no goal missed');
like($out, qr/^  claim, unfenced \/ unfenced, no-op trigger\s+1\.00x \[1\.00-1\.00\]\s+1\.14x \[1\.14-1\.14\]\s+the no-op C trigger: the floor of any row trigger$/m,
	'the floor of any row trigger against the bare claim');
like($out, qr/^  unfenced, no-op trigger \/ fenced, lease in WHERE\s+1\.05x \[1\.05-1\.05\]\s+1\.10x \[1\.10-1\.10\]\s+fenced, lease in WHERE, against that floor$/m,
	'and the fenced claim against that floor, reported only');

# (i') the same claim with synchronous_commit off: reported, never judged,
# however far apart
my @queue_off = rate_samples('queue_off', [ '1 client', '8 clients' ],
	{ plain => [ 2000, 2000 ], noop => [ 2000, 2000 ], fence_stmt => [ 1000, 1000 ], fence => [ 1000, 1000 ] });
($rc, $out) = run_report(samples('queue_off.tsv', @meta, @queue, @queue_off));
is($rc, 0, 'the report runs on both queue passes');
like($out, qr/^Queue: .*marked active, synchronous_commit off \(CPU, not the disk\)$/m, 'the off pass has a section of its own');
like($out, qr/^  claim, unfenced \/ fenced, lease in WHERE\s+2\.00x \[2\.00-2\.00\]\s+2\.00x \[2\.00-2\.00\]\s+time per claim, fenced \/ unfenced: reported, not judged$/m,
	'where the fenced claim is reported');
my @missed = $out =~ /^  - (queue\S*):/mg;
is("@missed", 'queue', 'and only the on pass can miss its goal');

# (j) the signal alone
my @signal = rate_samples('signal', [ 'p50', 'p99' ],
	{ fence_break => [ 0.1, 0.3 ], fence_release => [ 0.2, 0.2 ], advisory => [ 0.1, 0.1 ], notify => [ 0.05, 0.05 ] });
($rc, $out) = run_report(samples('signal.tsv', @meta, @signal));
is($rc, 0, 'the report runs on signal samples alone');
my ($ssec) = $out =~ /^(Signal: .*?)^Goals/ms;
ok(defined $ssec, 'the signal section is printed');
$ssec //= '';
like($ssec, qr/^  p50\s+0\.200 \[0\.100-0\.300\]\s+0\.200\s+0\.100\s+0\.050$/m, 'p50 of each contender');
like($ssec, qr/^  fence_break \/ advisory unlock\s+2\.00x \[1\.00-3\.00\]\s+2\.00x \[1\.00-3\.00\]\s+reported, not judged$/m,
	'the ratio against the advisory lock, reported');
unlike($ssec, qr/\b(ok|MISS!?)\b/, 'no verdict in the signal section');

# (k) the growth curves: a section, the growth between points (against
# the reference where there is one; the scrape judged, goal 3x from 1,000
# to 1,000,000 leases) and a chart each; the shared memory readings, the
# growth per lease slot and the sizing table
unlink glob("$dir/*.svg");
my @lx = ('1', '1,000', '1,000,000');
my @curves = (
	# the lease cycle halves, the reference does not: 2x
	map({ [ 'sample', 'curve_leases', $lx[$_], 'cycle', 1, (10000, 10000, 5000)[$_] ],
		  [ 'sample', 'curve_leases', $lx[$_], 'advisory', 1, 10000 ] } 0 .. 2),
	# the scrape: 5, 10 and 40 ms, 4x from 1,000 to 1,000,000: a miss
	map({ [ 'sample', 'curve_scrape', $lx[$_], 'scrape', 1, (5, 10, 40)[$_] ] } 0 .. 2),
	# both slow down by half at 1,000 waiters: flat against the reference
	map({ [ 'sample', 'curve_waiters', $_->[0], 'cycle', 1, $_->[1] ],
		  [ 'sample', 'curve_waiters', $_->[0], 'advisory', 1, $_->[1] * 1.25 ] } [ '1', 8000 ], [ '1,000', 4000 ]),
	map({ [ 'sample', 'curve_permits', $_->[0], 'permit', 1, $_->[1] ],
		  [ 'sample', 'curve_permits', $_->[0], 'lease', 1, 8000 ] } [ '1', 8000 ], [ '10', 8000 ], [ '1,000', 6000 ]),
	# protected tables 1.1x from 1,000 to 10,000, unprotected 1.1x too
	map({ [ 'sample', 'curve_tables', $_->[0], 'write', 1, $_->[1] ], [ 'sample', 'curve_tables', $_->[0], 'plain', 1, $_->[2] ] }
		[ '1', 600, 500 ], [ '10', 90, 80 ], [ '1,000', 50, 40 ], [ '10,000', 55, 44 ]),
	map({ [ 'sample', 'curve_databases', $_, 'cycle', 1, 8000 ], [ 'sample', 'curve_databases', $_, 'advisory', 1, 8000 ] }
		'1', '3', '10'),
	[ 'meta', 'curve_settings', '3 1 1100000 1100 100' ],
	[ 'meta', 'curve_shmem:10000', '3111432 3119032' ],
	[ 'meta', 'curve_shmem:100000', '30700808 30708408' ],
	[ 'meta', 'curve_shmem:1100000', '338632968 338640568' ],
	[ 'meta', 'curve_fill:900000', '2000' ],
);
($rc, $out) = run_report('--svg', $dir, samples('curves.tsv', @meta, @curves));
is($rc, 0, 'the report runs on curve samples alone');
like($out, qr/^Growth: the bare lease cycle against leases held\n/m, 'the leases curve has a section');
like($out, qr/^  1,000,000\s+5,000\s+10,000$/m, 'a row per point, a column per contender');
like($out, qr/^  advisory lock cycle \(reference\) \/ lease cycle\s+1\.00x \[1\.00-1\.00\]\s+1\.00x \[1\.00-1\.00\]\s+2\.00x \[2\.00-2\.00\]\s+time per cycle, lease \/ advisory lock$/m,
	'the time per cycle against the reference at every point');
like($out, qr/^  cost at 1,000,000 \/ at 1: 2\.00x \[2\.00-2\.00\]; against the reference: 2\.00x \[2\.00-2\.00\]   reported, not judged$/m,
	'the growth from the first point to the last, and against the reference');
like($out, qr/^  cost at 1,000 \/ at 1: 2\.00x \[2\.00-2\.00\]; against the reference: 1\.00x \[1\.00-1\.00\]   /m,
	'a slowdown of both is not growth against the reference');
like($out, qr/^  cost at 1,000 \/ at 1: 1\.33x \[1\.33-1\.33\]; against the reference: 1\.33x \[1\.33-1\.33\]/m,
	'the permits grow 1.33x');
like($out, qr/^  cost at 1,000,000 \/ at 1,000: 4\.00x \[4\.00-4\.00\] MISS   goal <= 3\.0$/m, 'the scrape is judged');
like($out, qr/^  - curve_scrape: cost at 1,000,000 \/ at 1,000: 4\.00x/m, 'and its miss is listed');
like($out, qr/^  cost at 1,000,000 \/ at 1: 8\.00x \[8\.00-8\.00\]   reported, not judged$/m, 'a time grows as its ratio');
like($out, qr/^  cost at 10,000 \/ at 1,000: 1\.10x \[1\.10-1\.10\]; against the reference: 1\.00x \[1\.00-1\.00\]   flat past the fixed costs: 1\.0$/m,
	'the tables: per table written, past the fixed costs, and against unprotected tables');
like($out, qr/^  protected tables \/ unprotected tables \(reference\)\s+1\.20x \[1\.20-1\.20\]\s+1\.12x \[1\.12-1\.12\]\s+1\.25x \[1\.25-1\.25\]\s+1\.25x \[1\.25-1\.25\]\s+time per table, protected \/ unprotected$/m,
	'and the time per table against the unprotected one at every point');
like($out, qr/^  per lease slot, 100,000 to 1,100,000: 307\.9 B /m, 'shared memory per slot, from the two largest readings');
like($out, qr/^  100,000\s+29\.3 MiB\s+measured$/m, 'a measured setting is stated as measured');
like($out, qr/^  10,000,000\s+2936\.6 MiB\s+extrapolated$/m, 'a larger one is extrapolated from the growth per slot');
like($out, qr/^  the largest fill of the curves: 900,000 detached leases in one statement in 2,000 ms \(450,000 grants\/s\)$/m,
	'the fill rate');
my %files = (
	'curve-leases.svg' => [ 3, 2, 'leases held' ],
	'curve-scrape.svg' => [ 3, 1, 'leases held' ],
	'curve-waiters.svg' => [ 2, 2, 'sessions waiting on one key' ],
	'curve-permits.svg' => [ 3, 2, 'permits of the key' ],
	'curve-tables.svg' => [ 4, 2, 'protected tables written in one transaction' ],
	'curve-databases.svg' => [ 3, 2, 'databases using fence' ],
);
for my $svg (sort keys %files)
{
	my ($npoints, $nlines, $xlabel) = @{ $files{$svg} };
	my $text = chart($svg) // next;
	my @lines = $text =~ /<polyline points="([^"]*)"/g;
	is(scalar @lines, $nlines, "$svg: a line per contender");
	is(scalar(() = $_ =~ /[\d.]+,[\d.]+/g), $npoints, "$svg: a point per measurement") for @lines;
	like($text, qr/>\Q$xlabel\E \(log scale\)</, "$svg: the x axis says what it counts, log scale");
	my @x = map { [ split /,/ ] } split ' ', $lines[0] // '';
	ok(!grep({ $x[$_][0] <= $x[ $_ - 1 ][0] } 1 .. $#x), "$svg: the points from left to right");
	if ($nlines == 2)
	{
		like($text, qr/<polyline [^>]*stroke="#7f7f7f"[^>]*stroke-dasharray=/, "$svg: the reference is a grey dashed line");
		like($text, qr/>[^<]*\(reference\)</, "$svg: and in the legend");
	}
}
my $lt = chart('curve-leases.svg') // '';
like($lt, qr/>1,000,000</, 'the x axis labels its points with their counts');
my @ty = map { 0 + $_ } (chart('curve-scrape.svg') // '') =~ /<circle cx="[\d.]+" cy="([\d.]+)"/g;
# on a log axis 5 to 10 ms is half the height of 10 to 40 ms (log 2 against log 4)
ok(@ty == 3 && abs(($ty[0] - $ty[1]) / ($ty[1] - $ty[2]) - 0.5) < 0.01, 'the scrape times on a log axis');

# a curve not measured has no chart
unlink glob("$dir/*.svg");
($rc, $out) = run_report('--svg', $dir, samples('curves-part.tsv', @meta, grep { $_->[1] ne 'curve_tables' } @curves));
ok(-e "$dir/curve-leases.svg" && !-e "$dir/curve-tables.svg", 'no chart for a curve without samples');

done_testing();
