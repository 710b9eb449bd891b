# The metrics operators scrape: Debian's postgres_exporter
# (prometheus-postgres-exporter) runs with contrib/postgres_exporter/fence.yaml
# against a node with fence preloaded, listening on 127.0.0.1, and its
# /metrics page must say what the node holds:
# - leases per database, scope, kind and state: two live detached leases
#   (one of them a takeover), one expired, one permit, one lease in a
#   second database; every other combination 0;
# - one session waiting, in session scope;
# - fence_stats as counters: 5 grants, 1 takeover, 2 writes rejected (one
#   LF001 stale token, one LF003 token required), also by SQLSTATE, 2
#   accepted;
# - one breaker open (state 2) after two failures, one closed (state 0) with
#   one failure; after the open time, a probe makes the first half-open (1);
# - every fence_ metric has HELP and the right TYPE, no label names a lease
#   key, and the exporter's scrape had no error;
# - after DROP DATABASE and after a crash restart, the queries still run and
#   the counts agree with fence_leases' rows.
# The metrics do not depend on the server version: this runs on PostgreSQL
# 15 only (Debian's, in make test), and says so elsewhere.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use HTTP::Tiny;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $exporter_bin = '/usr/bin/prometheus-postgres-exporter';
my $major = $ENV{FENCE_PG_MAJOR} // ((`pg_config --version` // '') =~ /(\d+)/)[0] // '?';
plan skip_all => "the metrics test runs on PostgreSQL 15 only (this is $major): "
  . 'the metrics do not depend on the server version'
  unless $major eq '15';
plan skip_all => "$exporter_bin is not installed (make test installs prometheus-postgres-exporter as root)"
  unless -x $exporter_bin;

my $queries = "$ENV{FENCE_SRC}/contrib/postgres_exporter/fence.yaml";
ok(-f $queries, 'the queries file is in the tree');

my $node = fence_node('metrics', conf => "fence.test_clock = on\nrestart_after_crash = on\n");
my ($exporter, $waiter);
END
{
	# Also when the test dies: no exporter or psql outlives it.
	eval { $exporter->kill_kill if $exporter; };
	eval { $waiter->{run}->kill_kill if $waiter; };
}

# --- the state to scrape ------------------------------------------------------

$node->safe_psql('postgres', q{
CREATE TABLE jobs (id int PRIMARY KEY, result text, fence fence_token NOT NULL DEFAULT 0);
INSERT INTO jobs VALUES (1, 'pending');
SELECT fence_protect('jobs');
CREATE TABLE audit (id int, fence fence_token);
SELECT fence_protect('audit', require_token => true);
});
my $a = $node->safe_psql('postgres',
	q{SELECT fence_try_lease('job:1', '10 s', owner => 'worker-a')});
$node->safe_psql('postgres', qq{UPDATE jobs SET result = 'A', fence = $a WHERE id = 1});
$node->safe_psql('postgres', q{SELECT fence_advance_clock('11 s')});
my $b = $node->safe_psql('postgres',
	q{SELECT fence_try_lease('job:1', '1 h', owner => 'worker-b')});
cmp_ok($b, '>', $a, 'worker B takes job:1 over from A');
$node->safe_psql('postgres', qq{UPDATE jobs SET result = 'B', fence = $b WHERE id = 1});
is(sql_state($node, 'postgres', qq{UPDATE jobs SET result = 'A late', fence = $a WHERE id = 1}),
	'LF001', "A's late write is rejected as stale");
is(sql_state($node, 'postgres', q{INSERT INTO audit (id) VALUES (1)}),
	'LF003', 'a write without a token is rejected where one is required');
$node->safe_psql('postgres', q{
SELECT fence_try_lease('job:2', '1 h', owner => 'worker-c');
SELECT fence_try_lease('job:3', '5 s', owner => 'worker-d');
SELECT fence_try_permit('provider:x', 3, '1 h', owner => 'caller-1');
SELECT fence_advance_clock('6 s');
});

$node->safe_psql('postgres', q{
CREATE DATABASE other;
\c other
CREATE EXTENSION fence;
SELECT fence_try_lease('report', '1 h', owner => 'reporter');
});

# Breaker a opens after two failures; breaker b has one failure, closed.
$node->safe_psql('postgres', q{
SELECT fence_breaker_allow('provider:a', failure_threshold => 2);
SELECT fence_breaker_report('provider:a', false);
SELECT fence_breaker_report('provider:a', false);
SELECT fence_breaker_allow('provider:b', failure_threshold => 2);
SELECT fence_breaker_report('provider:b', false);
});
is($node->safe_psql('postgres',
	q{SELECT string_agg(breaker || '=' || state, ',' ORDER BY breaker) FROM fence_breakers}),
	'provider:a=open,provider:b=closed', 'breaker a is open, b closed');

# A session waits for job:2, which worker C holds; once granted, it keeps
# the lease (and its session) until the test ends.
$waiter = bg_start($node, 'postgres',
	"SELECT fence_lease('job:2', '1 min', timeout => '120 s');\nSELECT pg_sleep(300);\n",
	timeout => 330);
ok(wait_until(30, sub {
	$node->safe_psql('postgres', 'SELECT count(*) FROM fence_lease_waiters') eq '1' }),
	'one session waits for job:2')
  or diag("waiter: " . join(' ', bg_tokens($waiter)) . " $waiter->{out} $waiter->{err}");

# --- the exporter --------------------------------------------------------------

my $port = PostgreSQL::Test::Cluster::get_free_port();
my $user = getpwuid($<);
my $log = $node->basedir . '/exporter.log';
{
	local $ENV{DATA_SOURCE_NAME} = sprintf('host=%s port=%d user=%s dbname=postgres sslmode=disable',
		$node->host, $node->port, $user);
	$exporter = IPC::Run::start(
		[
			$exporter_bin, "--extend.query-path=$queries",
			'--disable-default-metrics', '--disable-settings-metrics',
			'--no-collector.database', '--no-collector.bgwriter',
			"--web.listen-address=127.0.0.1:$port", '--log.level=warn'
		],
		'<', '/dev/null', '>&', $log);
}

my $http = HTTP::Tiny->new(timeout => 10);
my $url = "http://127.0.0.1:$port/metrics";

# The series of one scrape: { name => [ [ {labels}, value ], ... ] }, and
# the HELP and TYPE lines by name.
sub scrape
{
	my $res = $http->get($url);
	return undef unless $res->{success};
	my (%series, %help, %type);
	for my $line (split /\n/, $res->{content})
	{
		if ($line =~ /^# HELP (\S+) (.*)$/) { $help{$1} = $2; next; }
		if ($line =~ /^# TYPE (\S+) (\S+)$/) { $type{$1} = $2; next; }
		next if $line =~ /^#/ || $line !~ /\S/;
		my ($name, $labels, $value) = $line =~ /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? (\S+)$/
		  or die "unparsed line of /metrics: $line";
		my %l = ($labels // '') =~ /(\w+)="((?:[^"\\]|\\.)*)"/g;
		push @{ $series{$name} }, [ \%l, $value ];
	}
	return { series => \%series, help => \%help, type => \%type, text => $res->{content} };
}

# The value of the one series of $name whose labels include %want (other
# labels, such as the exporter's own "server", do not matter); undef if
# none, and a failure if several match.
sub value
{
	my ($m, $name, %want) = @_;
	my @hits = grep {
		my $l = $_->[0];
		!grep { ($l->{$_} // "\0") ne $want{$_} } keys %want
	} @{ $m->{series}{$name} // [] };
	return undef unless @hits;
	die "$name: " . scalar(@hits) . " series match" if @hits > 1;
	return $hits[0][1] + 0;
}

my $m;
ok(wait_until(30, sub { $m = scrape(); defined $m && exists $m->{series}{fence_stats_grants_total} }),
	'the exporter serves fence_ metrics')
  or diag('exporter log: ' . (-f $log ? slurp_file($log) : '(none)'));

is(value($m, 'pg_up'), 1, 'the exporter reaches the node');
is(value($m, 'pg_exporter_last_scrape_error'), 0, 'every query of fence.yaml ran without error')
  or diag(slurp_file($log));

# --- leases and waiters -------------------------------------------------------------

my %db = (database => 'postgres');
is(value($m, 'fence_leases_held', %db, scope => 'detached', kind => 'lease', state => 'live'),
	2, 'two live detached leases (job:1 taken over by B, job:2)');
is(value($m, 'fence_leases_held', %db, scope => 'detached', kind => 'lease', state => 'expired'),
	1, 'one expired lease still held (job:3)');
is(value($m, 'fence_leases_held', %db, scope => 'detached', kind => 'permit', state => 'live'),
	1, 'one live permit');
is(value($m, 'fence_leases_held', %db, scope => 'session', kind => 'lease', state => 'live'),
	0, 'no session lease: a combination with nothing held reads 0');
is(scalar(@{ $m->{series}{fence_leases_held} }), 2 * 12,
	'12 combinations of scope, kind and state for each of the two databases');
is(value($m, 'fence_leases_held', database => 'other', scope => 'detached', kind => 'lease',
	state => 'live'), 1, 'the lease of the other database is counted there');

is(value($m, 'fence_lease_waiters_count', %db, scope => 'session'), 1, 'one session waits');
is(value($m, 'fence_lease_waiters_count', database => 'other', scope => 'session'), 0,
	'none in the other database');
my $oldest = value($m, 'fence_lease_waiters_oldest_seconds', %db, scope => 'session');
ok(defined $oldest && $oldest > 0 && $oldest < 120, "the wait is timed ($oldest s)");

# --- fence_stats ---------------------------------------------------------------------------

is(value($m, 'fence_stats_grants_total', %db), 5, '5 grants: 4 leases and a permit');
is(value($m, 'fence_stats_takeovers_total', %db), 1, '1 takeover');
is(value($m, 'fence_stats_writes_rejected_total', %db), 2,
	'2 writes rejected: LF001 and LF003, counted together');
is(value($m, 'fence_writes_rejected_total', %db, sqlstate => 'LF001'), 1,
	'... by SQLSTATE: 1 LF001 (the stale write)');
is(value($m, 'fence_writes_rejected_total', %db, sqlstate => 'LF002'), 0, '... 0 LF002');
is(value($m, 'fence_writes_rejected_total', %db, sqlstate => 'LF003'), 1,
	'... 1 LF003 (the write without a token)');
is(value($m, 'fence_stats_writes_accepted_total', %db), 2, '2 writes accepted');
is(value($m, 'fence_stats_writes_skipped_total', %db), 0, 'none skipped');
is(value($m, 'fence_stats_grants_total', database => 'other'), 1, '1 grant in the other database');

# --- breakers ----------------------------------------------------------------------------------

my %ba = (%db, breaker => 'provider:a');
my %bb = (%db, breaker => 'provider:b');
is(value($m, 'fence_breakers_state', %ba), 2, 'breaker a: state 2, open');
is(value($m, 'fence_breakers_state', %bb), 0, 'breaker b: state 0, closed');
is(value($m, 'fence_breakers_consecutive_failures', %ba), 0,
	'breaker a: no failures in a row (counts start afresh when it opens)');
is(value($m, 'fence_breakers_consecutive_failures', %bb), 1, 'breaker b: 1 failure');
is(value($m, 'fence_breakers_trips_total', %ba), 1, 'breaker a tripped once');
is(value($m, 'fence_breakers_failures_total', %ba), 2, 'breaker a: 2 failures in all');

is(value($m, 'fence_settings_max_leases'),
	$node->safe_psql('postgres', 'SHOW fence.max_leases'), 'fence.max_leases');

# --- what every fence_ metric looks like ------------------------------------------------------

my @names = sort grep { /^fence_/ } keys %{ $m->{series} };
my @bad_type = grep {
	my $want = /_total$/ ? 'counter' : 'gauge';
	($m->{type}{$_} // '') ne $want
} @names;
is("@bad_type", '', 'counters (_total) are counters, the other fence_ metrics gauges');
my @no_help = grep { ($m->{help}{$_} // '') !~ /\w/ } @names;
is("@no_help", '', 'every fence_ metric has HELP text');
my @keyed = grep { /job:|provider:x|report"/ } split /\n/, $m->{text};
is("@keyed", '', 'no series is labelled with a lease key');

# --- the state moves -------------------------------------------------------------------------

# After the open time, the next caller probes: breaker a is half-open.
$node->safe_psql('postgres', q{
SELECT fence_advance_clock('31 s');
SELECT decision FROM fence_breaker_allow('provider:a', failure_threshold => 2);
SELECT fence_release('job:2', (SELECT token FROM fence_leases WHERE key = 'job:2'));
});
ok(wait_until(30, sub {
	$node->safe_psql('postgres', 'SELECT count(*) FROM fence_lease_waiters') eq '0' }),
	'the waiter got job:2');
$m = scrape();
is(value($m, 'fence_breakers_state', %ba), 1, 'breaker a: state 1, half-open');
is(value($m, 'fence_lease_waiters_count', %db, scope => 'session'), 0, 'no one waits now');
is(value($m, 'fence_leases_held', %db, scope => 'session', kind => 'lease', state => 'live'),
	1, "the waiter's session lease is held");
is(value($m, 'fence_stats_releases_total', %db), 1, '1 release');

$waiter->{run}->kill_kill;
$waiter = undef;

# --- a dropped database, then a crash restart -------------------------------------------

# fence_lease_counts (what fence_leases_held reads) against a count of
# fence_leases' rows grouped the same way: the combinations that disagree.
my $counts_wrong = q{
SELECT count(*) FROM fence_lease_counts c
  FULL JOIN (SELECT database, scope,
                    CASE WHEN permits IS NULL THEN 'lease' ELSE 'permit' END AS kind,
                    CASE WHEN live THEN 'live' ELSE 'expired' END AS state, count(*) AS n
               FROM fence_leases GROUP BY 1, 2, 3, 4) v
    ON v.database IS NOT DISTINCT FROM c.database AND v.scope = c.scope
       AND v.kind = c.kind AND v.state = c.state
 WHERE c.held IS DISTINCT FROM coalesce(v.n, 0)};
my %dl = (%db, scope => 'detached', kind => 'lease');

$node->safe_psql('postgres', 'DROP DATABASE other');
$m = scrape();
is(value($m, 'pg_exporter_last_scrape_error'), 0,
	'after DROP DATABASE, every query of fence.yaml runs without error');
is(scalar(grep { ($_->[0]{database} // '') ne 'postgres' } @{ $m->{series}{fence_leases_held} }),
	0, "the dropped database's lease series are gone (its lease went with it)");
is(value($m, 'fence_leases_held', %dl, state => 'live'), 2,
	"two live detached leases: job:1, and breaker a's probe");
is(value($m, 'fence_leases_held', %dl, state => 'expired'), 1, 'job:3 is still held, expired');
is($node->safe_psql('postgres', $counts_wrong), '0', 'the counts agree with fence_leases');

# A crash restart ends every lease, and the counts start again from 0.
my $victim = bg_start($node, 'postgres',
	"SELECT fence_try_lease('crash:s', '1 h');\nSELECT pg_sleep(300);\n",
	timeout => 330, appname => 'metrics_crash');
ok(wait_until(30, sub {
	$node->safe_psql('postgres', q{SELECT count(*) FROM fence_leases WHERE key = 'crash:s'}) eq '1' }),
	'a session holds crash:s');
my $victim_pid = backend_pid_of($node, 'metrics_crash');
ok(kill('KILL', $victim_pid), "SIGKILL backend $victim_pid");
eval { bg_finish($victim); };
ok(wait_for_server($node), 'the server is back after the crash-restart cycle');
$node->safe_psql('postgres', q{
SELECT fence_try_lease('after:1', '1 h', owner => 'worker-e');
SELECT fence_try_permit('after:p', 2, '1 h', owner => 'caller-2');
});
ok(wait_until(60, sub {
	$m = scrape();
	defined $m && (value($m, 'pg_up') // 0) == 1
	  && (value($m, 'pg_exporter_last_scrape_error') // 1) == 0
	  && defined value($m, 'fence_leases_held', %dl, state => 'live') }),
	'after the crash restart, the exporter scrapes fence again')
  or diag(slurp_file($log));
is(value($m, 'fence_leases_held', %dl, state => 'live'), 1,
	'one live detached lease: the one taken since the restart');
is(value($m, 'fence_leases_held', %dl, state => 'expired'), 0,
	'none expired: the restart ended job:3 with the rest');
is(value($m, 'fence_leases_held', %db, scope => 'detached', kind => 'permit', state => 'live'),
	1, 'one live permit');
is(value($m, 'fence_leases_held', %db, scope => 'session', kind => 'lease', state => 'live'),
	0, "the killed session's lease is not counted");
is($node->safe_psql('postgres', $counts_wrong), '0',
	'after the crash restart the counts agree with fence_leases');

$exporter->kill_kill;
$exporter = undef;

done_testing();
