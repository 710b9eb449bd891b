# fence under Patroni: three PostgreSQL nodes managed by Patroni with a
# single-node etcd, all on 127.0.0.1, fence preloaded through Patroni's
# configuration, synchronous_mode and synchronous_mode_strict on, pg_rewind.
#
# Proven, for the token law and the fence:
#   - a SIGKILL of the leader's Patroni and postgres: the synchronous standby
#     is promoted; every token it hands out is above every token the old
#     leader handed out (committed, rolled back, in a transaction still
#     open); a lease holder that reconnects through libpq multi-host
#     (target_session_attrs=read-write) reaches the new primary, finds its
#     lease gone (released, not renewable; granted to the next holder once
#     fence.restart_grace has passed since the promotion), and its old-era
#     write after the new holder's is rejected (LF001);
#   - the killed node rejoins (pg_rewind) as a standby and refuses tokens;
#   - a planned switchover (Patroni's REST API): the same law;
#   - a frozen primary (SIGSTOP of its Patroni and postgres past the leader
#     TTL): a new leader is elected; resumed, the old primary takes a write
#     with an old-era token that its own rows still accept, but the commit
#     waits for a synchronous standby that no longer follows it and is never
#     acknowledged; the write never shows on the new leader; Patroni demotes
#     the old primary, rewinds it, and it follows the new leader without the
#     write.
#   - synchronous_mode_strict turned off with both standbys gone: the leader
#     hands out tokens no standby has; Patroni promotes no standby on its
#     own; promoting one by hand hands the same numbers out again, and
#     fence_advance_tokens past the highest fence in the tables (plus a
#     margin) restores the law (doc/ha.md).
#
# Skips when patroni or etcd is not installed (make test installs them as
# root).  Everything it starts (etcd, three Patronis, their postgres) is
# killed at the end, also when the test fails.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use HTTP::Tiny;
use IPC::Run;
use JSON::PP;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

for my $prog ('patroni', 'etcd')
{
	plan skip_all => "$prog is not installed (make test installs patroni and etcd-server as root)"
	  unless grep { -x "$_/$prog" } split /:/, $ENV{PATH};
}
my $bindir = `pg_config --bindir`;
chomp $bindir;
plan skip_all => 'pg_config --bindir gives no postgres' unless -x "$bindir/postgres";

# Patroni's DCS: etcd's v2 API by default.  FENCE_PATRONI_DCS=etcd3 runs the
# same test through the v3 API, where Patroni 3.0.2 (Debian 12) may let the
# frozen primary, resumed, take the leader key back from the new leader
# (see doc/ha.md): the frozen-primary step then fails (in one of two runs).
my $dcs = $ENV{FENCE_PATRONI_DCS} // 'etcd';
die "FENCE_PATRONI_DCS must be etcd or etcd3\n" unless $dcs =~ /^etcd3?$/;
my $t_start = time;
my $ttl = 10;    # leader key: a dead leader is replaced within about this
my $user = getpwuid($<);
my $http = HTTP::Tiny->new(timeout => 3);
my (@patroni_groups, @pg_pids, $etcd_pid);

# Kill everything this test started, however it ends: the process group of
# each Patroni, every postgres process of each node, and etcd.  SIGKILL works
# on stopped processes too.
END
{
	my $rc = $?;
	kill 'KILL', -$_ for @patroni_groups;
	kill 'KILL', $etcd_pid if $etcd_pid;
	eval { kill 'KILL', grep { ours($_) } @pg_pids, map { postgres_of($_) } nodes(); };
	$? = $rc;
}

# Is $pid still a postgres process of this test's user (not a reused pid)?
sub ours
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/status" or return 0;
	my $status = do { local $/; <$fh> };
	return $status =~ /^Name:\s+postgres$/m && $status =~ /^Uid:\s+$<\s/m;
}

# Start a program in a process group of its own, output appended to $log.
sub spawn
{
	my ($log, @cmd) = @_;
	my $pid = fork;
	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		POSIX::setpgid(0, 0);
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', $log or POSIX::_exit(1);
		open STDERR, '>&', \*STDOUT;
		exec @cmd or POSIX::_exit(1);
	}
	return $pid;
}

# --- etcd --------------------------------------------------------------------

my $etcd_port = PostgreSQL::Test::Cluster::get_free_port();
my $peer_port = PostgreSQL::Test::Cluster::get_free_port();
my $dir = PostgreSQL::Test::Utils::tempdir('patroni');
$etcd_pid = spawn("$PostgreSQL::Test::Utils::log_path/063_patroni_etcd.log",
	'etcd', '--name', 'e1', '--data-dir', "$dir/etcd",
	'--listen-client-urls', "http://127.0.0.1:$etcd_port",
	'--advertise-client-urls', "http://127.0.0.1:$etcd_port",
	'--listen-peer-urls', "http://127.0.0.1:$peer_port",
	'--initial-advertise-peer-urls', "http://127.0.0.1:$peer_port",
	'--initial-cluster', "e1=http://127.0.0.1:$peer_port",
	'--initial-cluster-state', 'new', '--enable-v2=' . ($dcs eq 'etcd' ? 'true' : 'false'));
ok( wait_until(30, sub {
		my $r = $http->get("http://127.0.0.1:$etcd_port/health");
		$r->{success} && $r->{content} =~ /"health":\s*"true"/;
	}),
	'etcd is up on 127.0.0.1');

# --- three Patroni nodes -----------------------------------------------------

my %node;    # name => { pg => Cluster (for psql), api => port, cfg => file }
for my $name (qw(n1 n2 n3))
{
	my $pg = PostgreSQL::Test::Cluster->new($name);
	my $api = PostgreSQL::Test::Cluster::get_free_port();
	my ($port, $base, $sock) = ($pg->port, $pg->basedir, $pg->host);
	my $cfg = "$base/patroni.yml";
	# No replication slots: Patroni 3.0.2, just promoted in strict mode,
	# waits in its loop for a synchronous standby before it creates the
	# standbys' slots, and they cannot stream without them (seen on 18).
	PostgreSQL::Test::Utils::append_to_file($cfg, <<"EOF");
scope: fence063
name: $name
log:
  level: INFO
restapi:
  listen: 127.0.0.1:$api
  connect_address: 127.0.0.1:$api
$dcs:
  hosts: 127.0.0.1:$etcd_port
bootstrap:
  dcs:
    ttl: $ttl
    loop_wait: 2
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: true
    postgresql:
      use_pg_rewind: true
      use_slots: false
      parameters:
        wal_keep_size: 128MB
        shared_preload_libraries: fence
        fence.restart_grace: 5s
        wal_log_hints: 'on'
        max_connections: 30
        max_wal_senders: 10
  initdb:
    - encoding: UTF8
    - locale: C
postgresql:
  listen: 127.0.0.1:$port
  connect_address: 127.0.0.1:$port
  data_dir: ${\ $pg->data_dir }
  bin_dir: $bindir
  pgpass: $base/pgpass
  authentication:
    superuser:
      username: $user
    replication:
      username: $user
    rewind:
      username: $user
  parameters:
    unix_socket_directories: '$sock'
    lc_messages: C
    fsync: 'off'
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
EOF
	$node{$name} = { pg => $pg, api => $api, cfg => $cfg, name => $name };
}

sub nodes { return grep { $_->{pg} } values %node; }

# The postmaster of a node and its children (backends and auxiliary
# processes: each is a process group of its own, so a signal to the
# postmaster's group would not reach them).
sub postgres_of
{
	my ($n) = @_;
	open my $fh, '<', $n->{pg}->data_dir . '/postmaster.pid' or return;
	my $pm = <$fh>;
	close $fh;
	return unless defined $pm && $pm =~ /^(\d+)$/;
	$pm = $1;
	return unless ours($pm);
	my @pids = ($pm);
	for my $stat (glob '/proc/[0-9]*/stat')
	{
		open my $sf, '<', $stat or next;
		my $line = <$sf> // '';
		close $sf;
		# pid (comm) state ppid ...
		push @pids, $1 if $line =~ /^(\d+) \(.*\) \S (\d+) / && $2 == $pm;
	}
	return @pids;
}

sub start_patroni
{
	my ($n) = @_;
	$n->{patroni} = spawn($n->{pg}->logfile, 'patroni', $n->{cfg});
	push @patroni_groups, $n->{patroni};
	return;
}

# Send a signal to a node's Patroni and to every process of its postgres;
# returns those postgres processes.
sub signal_node
{
	my ($n, $sig) = @_;
	my @pids = postgres_of($n);
	push @pg_pids, @pids;
	kill $sig, -$n->{patroni};
	kill $sig, @pids;
	waitpid $n->{patroni}, 0 if $sig eq 'KILL';
	return @pids;
}

# The cluster as Patroni's REST API of any answering node tells it (from
# etcd): name => { role, state, timeline, ... }.
sub members
{
	for my $n (sort { $a->{name} cmp $b->{name} } grep { !$_->{down} } nodes())
	{
		my $r = $http->get("http://127.0.0.1:$n->{api}/cluster");
		next unless $r->{success};
		my $c = eval { decode_json($r->{content}) } or next;
		return { map { $_->{name} => $_ } @{ $c->{members} || [] } };
	}
	return {};
}

# On a failed wait: what each running node is doing, for the log.
sub diag_nodes
{
	for my $n (sort { $a->{name} cmp $b->{name} } grep { !$_->{down} } nodes())
	{
		my ($ret, $out, $err) = $n->{pg}->psql('postgres',
			q{SELECT pg_is_in_recovery(), current_setting('synchronous_standby_names'); SELECT pid, backend_type, state, wait_event_type, wait_event, left(query, 60) FROM pg_stat_activity WHERE pid <> pg_backend_pid(); SELECT application_name, state, sync_state FROM pg_stat_replication},
			extra_params => ['-F', ' | ']);
		diag("$n->{name}: " . ($out || $err));
	}
	my $m = members();
	diag(join "\n", map { "$_: $m->{$_}{role} $m->{$_}{state}" } sort keys %$m);
	return;
}

# A check of who leads after a wait; the test cannot go on without it.
sub expect_leader
{
	my ($got, $want, $what) = @_;
	return if is($got, $want, $what);
	diag_nodes();
	die "stopping: the cluster is not as expected\n";
}

sub role_of
{
	my ($want) = @_;
	my $m = members();
	my ($name) = grep { ($m->{$_}{role} // '') eq $want } sort keys %$m;
	return $name;
}

# The leader (running, read-write) and its synchronous standby, once the
# synchronous standby and every other node named in @others stream from the
# leader (the standby as 'sync') on the leader's timeline.  The timeline is
# read on each standby: a former primary that Patroni restarted as a standby
# before rewinding it fetches its old timeline from the leader up to the fork
# and shows as 'streaming' in the leader's pg_stat_replication for a moment,
# with its late writes still in it (doc/ha.md).
sub wait_for_roles
{
	my ($secs, $others, $not) = @_;
	my @others = @{ $others || [] };
	my ($leader, $sync);
	my $ok = wait_until($secs, sub {
		my $m = members();
		($leader) = grep { $m->{$_}{role} eq 'leader' && $m->{$_}{state} eq 'running' } keys %$m;
		($sync) = grep { $m->{$_}{role} eq 'sync_standby' } keys %$m;
		return 0 unless $leader && $sync && (!$not || $leader ne $not);
		my %want = map { $_ => 'async' } grep { $_ ne $leader } @others;
		$want{$sync} = 'sync';
		my $repl = eval {
			$node{$leader}{pg}->safe_psql('postgres',
				"SELECT string_agg(application_name || '=' || sync_state, ',') FROM pg_stat_replication WHERE state = 'streaming' AND NOT pg_is_in_recovery()");
		} // '';
		my %got = map { split /=/ } split /,/, $repl;
		return 0 if grep { !$got{$_} || ($want{$_} eq 'sync' && $got{$_} ne 'sync') } keys %want;
		my $tli = eval {
			$node{$leader}{pg}->safe_psql('postgres',
				q{SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int});
		} // 'none';
		return !grep {
			(eval {
				$node{$_}{pg}->safe_psql('postgres',
					q{SELECT status || ' on ' || received_tli FROM pg_stat_wal_receiver});
			} // '') ne "streaming on $tli"
		} keys %want;
	});
	return $ok ? ($leader, $sync) : ();
}

# psql through libpq multi-host, as a client of the cluster would connect.
my $multi = 'host=' . join(',', ('127.0.0.1') x 3)
  . ' port=' . join(',', map { $node{$_}{pg}->port } qw(n1 n2 n3))
  . ' dbname=postgres connect_timeout=2 target_session_attrs=read-write';

sub mpsql
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[ 'psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', $multi ],
		'<', \"\\set VERBOSITY verbose\n$sql", '>', \$out, '2>', \$err,
		IPC::Run::timeout(60));
	chomp $out;
	my ($state) = $err =~ /ERROR:\s+([0-9A-Z]{5}):/;
	return wantarray ? ($out, $state // '', $err) : $out;
}

start_patroni($_) for map { $node{$_} } qw(n1 n2 n3);
my ($leader, $sync) = wait_for_roles(90, [qw(n1 n2 n3)]);
ok($leader && $sync, 'Patroni bootstrapped a leader and a synchronous standby, the third node streams')
  or BAIL_OUT('no Patroni cluster: see the logs of n1, n2, n3 and etcd');
note sprintf 'leader %s, synchronous standby %s (%.0f s)', $leader, $sync, time - $t_start;
my $L = $node{$leader}{pg};
like( $L->safe_psql('postgres', 'SHOW synchronous_standby_names'),
	qr/^"?$sync"?$/, 'the leader waits for its synchronous standby by name');
# Patroni starts the postgres of bin_dir: the PostgreSQL under test (make
# test PG_CONFIG=... runs this on another version than Debian's 15).
my ($pg_major) = `pg_config --version` =~ /^PostgreSQL (\d+)/;
is($L->safe_psql('postgres', q{SELECT current_setting('server_version_num')::int / 10000}),
	$pg_major, "the nodes run the PostgreSQL under test, $pg_major");

# The schema, on the leader; the standbys get it by replication.
$L->safe_psql('postgres', q{
CREATE EXTENSION fence;
CREATE TABLE jobs (id int PRIMARY KEY, result text, fence fence_token NOT NULL DEFAULT 0);
INSERT INTO jobs SELECT g, 'pending' FROM generate_series(1, 3) g;
SELECT fence_protect('jobs');
});
install_token_helpers($L, 'postgres');
ok($L->poll_query_until('postgres', q{SELECT fence_try_lease('probe', '1 s') IS NOT NULL}),
	'grants begin on the leader once its fence.restart_grace has passed');

my @seen;    # every token any client got, in order of eras

# A new leader grants leases once its fence.restart_grace has passed since
# its promotion.
sub grants_resume
{
	my ($pg, $what) = @_;
	ok($pg->poll_query_until('postgres',
			q{SELECT fence_try_lease('probe-' || pg_backend_pid(), '1 s') IS NOT NULL}),
		"$what: the new leader grants leases once its restart grace has passed");
	return;
}

# A worker's lease, through multi-host: a detached lease on $key, and its
# token written to $key's row.
sub hold
{
	my ($key, $id, $owner) = @_;
	my ($t) = mpsql(qq{
SELECT fence_try_lease('$key', '1 min', owner => '$owner') AS t \\gset
UPDATE jobs SET result = 'by $owner', fence = :t WHERE id = $id;
SELECT :t;});
	return $t;
}

# Clients taking tokens on the leader in every way, then the leader dies or
# is switched over; returns the tokens they saw.
sub clients_on
{
	my ($pg) = @_;
	my %s;
	$s{commit} = bg_start($pg, 'postgres', "CALL take_loop(100000, 5, 0);\n");
	$s{rollback} = bg_start($pg, 'postgres', "CALL take_loop(100000, 0, 5);\n");
	$s{open} = bg_start($pg, 'postgres', "BEGIN;\nCALL take_loop(100000, 0, 0);\n");
	ok(wait_until(60, sub { !grep { scalar(my @t = bg_tokens($_)) < 50 } values %s }),
		'clients take tokens on the leader (committing, rolling back, in an open transaction)');
	return \%s;
}

# The token law after an event: tokens the new leader hands out are all
# above every token seen before, none handed out twice.
sub check_law
{
	my ($pg, $what) = @_;
	my @new = split /\n/, $pg->safe_psql('postgres',
		"SELECT take_counter_token() FROM generate_series(1, 20); SELECT take_lease_token('after-' || g) FROM generate_series(1, 10) g");
	cmp_ok(min_of(@new), '>', max_of(@seen),
		"$what: every token of the new leader is above every token handed out before (" . max_of(@seen) . ')');
	is(scalar(check_unique(@seen, @new)), 0, "$what: no token handed out twice");
	push @seen, @new;
	return;
}

# --- 1. SIGKILL of the leader's node -----------------------------------------

my $t_a = hold('job:1', 1, 'worker-a');
ok($t_a > 0, "worker-a holds job:1 with token $t_a and wrote row 1 with it");
push @seen, $t_a;
# The synchronous standby has been up longer than fence.restart_grace.
ok( $node{$sync}{pg}->poll_query_until('postgres',
		q{SELECT now() - pg_postmaster_start_time() > interval '6 s'}),
	'the synchronous standby has run longer than fence.restart_grace');

my $clients = clients_on($L);
my $t_kill = time;
signal_node($node{$leader}, 'KILL');
$node{$leader}{down} = 1;
push @seen, bg_finish($_) for values %$clients;
note 'the old leader handed out ' . scalar(@seen) . ' tokens, the highest ' . max_of(@seen);

my ($leader2, $sync2) = wait_for_roles(60, [], $leader);
expect_leader($leader2, $sync, "SIGKILL: Patroni promoted the synchronous standby $sync");
note sprintf 'failover took %.1f s', time - $t_kill;
my $L2 = $node{$leader2}{pg};

# What worker-a sees: it reconnects through multi-host and lands on the new
# primary, where its lease is gone although its TTL is not over.
is(mpsql('SELECT inet_server_port()'), $L2->port,
	'multi-host with target_session_attrs=read-write reaches the new primary');
is( mpsql(qq{SELECT fence_lease_status('job:1', $t_a)}),
	'released', "worker-a's lease is gone from the new primary (released, not expired)");
is(mpsql(qq{SELECT count(*) FROM fence_leases WHERE key = 'job:1'}),
	'0', '... fence_leases has no row for job:1');
is(mpsql(qq{SELECT fence_renew('job:1', $t_a, '1 min')}), 'f', '... and it cannot renew it');
# The next worker is granted job:1 once fence.restart_grace has passed since
# the promotion, although the promoted standby started long before (the
# boundary itself is 002_restart_grace's).
grants_resume($L2, 'SIGKILL failover');
my $t_b = hold('job:1', 1, 'worker-b');
ok($t_b, "worker-b is granted job:1 after the promotion (token $t_b)");
cmp_ok($t_b, '>', $t_a, "... above worker-a's $t_a");
my ($r, $state) = mpsql(qq{UPDATE jobs SET result = 'late by worker-a', fence = $t_a WHERE id = 1});
is($state, 'LF001', "worker-a's old-era write after worker-b's is rejected (LF001)");
($r, $state) = mpsql(qq{BEGIN; SELECT fence_use_token($t_a); UPDATE jobs SET result = 'late by worker-a' WHERE id = 1; COMMIT;});
is($state, 'LF001', '... also with fence_use_token');
is(mpsql('SELECT result || fence FROM jobs WHERE id = 1'), "by worker-b$t_b", 'row 1 is worker-b\'s');
push @seen, $t_b;
check_law($L2, 'SIGKILL failover');

# --- 2. the killed node rejoins ----------------------------------------------

delete $node{$leader}{down};
start_patroni($node{$leader});
my ($l, $s) = wait_for_roles(90, [$leader]);
expect_leader($l, $leader2, "the killed node $leader rejoins as a standby (pg_rewind) and the leader stays");
is(sql_state($node{$leader}{pg}, 'postgres', 'SELECT fence_advance_tokens(0)'),
	'25006', '... it refuses tokens (25006)');
is( $node{$leader}{pg}->safe_psql('postgres', 'SELECT result || fence FROM jobs WHERE id = 1'),
	"by worker-b$t_b", '... and has worker-b\'s row');

# --- 3. planned switchover ---------------------------------------------------

($leader, $sync) = ($l, $s);
my $t_c = hold('job:2', 2, 'worker-c');
push @seen, $t_c;
$clients = clients_on($node{$leader}{pg});
my $res = HTTP::Tiny->new(timeout => 60)->post("http://127.0.0.1:$node{$leader}{api}/switchover", {
	headers => { 'Content-Type' => 'application/json' },
	content => encode_json({ leader => $leader, candidate => $sync }) });
push @seen, bg_finish($_) for values %$clients;
ok($res->{success}, "switchover from $leader to $sync accepted: $res->{content}");
($leader2, $sync2) = wait_for_roles(60, [$leader], $leader);
expect_leader($leader2, $sync, "switchover: $sync leads, and the old leader $leader follows");
$L2 = $node{$leader2}{pg};
ok($L2->poll_query_until('postgres', q{SELECT fence_try_lease('probe2', '1 s') IS NOT NULL}),
	'the new leader grants leases');
my $t_d = hold('job:2', 2, 'worker-d');
cmp_ok($t_d // 0, '>', $t_c, "worker-d takes job:2 above worker-c's $t_c");
($r, $state) = mpsql(qq{UPDATE jobs SET result = 'late by worker-c', fence = $t_c WHERE id = 2});
is($state, 'LF001', "switchover: worker-c's old-era write after worker-d's is rejected (LF001)");
push @seen, $t_d;
check_law($L2, 'switchover');

# --- 4. a frozen primary -----------------------------------------------------

($leader, $sync) = ($leader2, $sync2);
my $frozen = $node{$leader};
my $F = $frozen->{pg};
my $t_e = hold('job:3', 3, 'worker-e');
push @seen, $t_e;
my $t_freeze = time;
my @frozen = signal_node($frozen, 'STOP');
$frozen->{down} = 1;
($leader2, $sync2) = wait_for_roles(60, [], $leader);
expect_leader($leader2, $sync, "SIGSTOP past the TTL: $sync is elected while $leader is frozen");
note sprintf 'election took %.1f s', time - $t_freeze;
$L2 = $node{$leader2}{pg};
grants_resume($L2, 'frozen primary');
my $t_f = hold('job:3', 3, 'worker-f');
cmp_ok($t_f // 0, '>', $t_e, "worker-f takes job:3 on the new leader above worker-e's $t_e");
push @seen, $t_f;

# worker-e, connected to the frozen primary itself, writes with its token:
# the old primary never saw worker-f's write, so its fence lets it through.
my $late = { out => '', err => '' };
$late->{run} = IPC::Run::start(
	[ 'psql', '-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', $F->connstr('postgres'),
		'-c', "UPDATE jobs SET result = 'late by worker-e', fence = $t_e WHERE id = 3",
		'-c', q{SELECT 'ACKNOWLEDGED'} ],
	'<', \'', '>', \$late->{out}, '2>', \$late->{err}, IPC::Run::timeout(90));
# Resume postgres only, Patroni still stopped: the write runs and commits
# locally, and waits for the synchronous standby, which now leads.
kill 'CONT', @frozen;
ok( wait_until(30, sub {
		($F->safe_psql('postgres',
			q{SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND query LIKE 'UPDATE jobs%'}) // '') eq '1';
	}),
	'resumed, the old primary holds the late write waiting for a synchronous standby');
# A grant there still gets a token while its block lasts (reserved and
# confirmed by the synchronous standby before the freeze): below every token
# of the new leader.
my $zombie = bg_start($F, 'postgres', "SELECT take_counter_token();\n");
wait_until(3, sub { scalar(my @t = bg_tokens($zombie)) > 0 });
my @zombie = bg_tokens($zombie);
note 'a grant on the resumed old primary: ' . (@zombie ? "token @zombie" : 'none (it waits)');
cmp_ok(max_of(@zombie, 0), '<', $t_f,
	'a token the resumed old primary hands out is below the new leader\'s');
is( $L2->safe_psql('postgres', 'SELECT result || fence FROM jobs WHERE id = 3'),
	"by worker-f$t_f", 'the late write is not on the new leader');
kill 'CONT', -$frozen->{patroni};
delete $frozen->{down};
ok( wait_until(60, sub { eval { $late->{run}->pump_nb }; !$late->{run}->pumpable }),
	'Patroni wakes up and demotes the old primary: the late write ends');
eval { $late->{run}->finish; };
push @seen, bg_finish($zombie);
unlike($late->{out}, qr/ACKNOWLEDGED/, '... without its commit ever being acknowledged');
note 'the late writer saw: ' . ($late->{err} =~ s/\s+/ /gr);
($l, $s) = wait_for_roles(90, [$leader]);
expect_leader($l, $leader2, "the old primary $leader rejoins as a standby of $leader2, on its timeline");
is( $F->safe_psql('postgres', 'SELECT result || fence FROM jobs WHERE id = 3'),
	"by worker-f$t_f", '... rewound: the late write it committed locally is gone');
is( $L2->safe_psql('postgres', 'SELECT result || fence FROM jobs WHERE id = 3'),
	"by worker-f$t_f", 'and the new leader never had it');
check_law($L2, 'frozen primary');

# --- 5. synchronous_mode without strict --------------------------------------

($leader, $sync) = ($leader2, $sync2);
my $P = $node{$leader}{pg};
my @standbys = grep { $_ ne $leader } sort keys %node;
# Strict off first: Patroni 3.0.2 in strict mode with every standby gone
# stalls its own loop (it waits for a synchronous standby too).
my $patch = $http->request('PATCH', "http://127.0.0.1:$node{$leader}{api}/config", {
	headers => { 'Content-Type' => 'application/json' },
	content => encode_json({ synchronous_mode_strict => JSON::PP::false }) });
ok($patch->{success}, 'synchronous_mode_strict turned off through the REST API');
# The asynchronous standby goes first, then the synchronous one: had
# Patroni seen one still streaming, it could name it synchronous just as it
# dies, and 3.0.2 never looks at synchronous_standby_names again.
for my $name (sort { ($a eq $sync) <=> ($b eq $sync) } @standbys)
{
	signal_node($node{$name}, 'KILL');
	$node{$name}{down} = 1;
	wait_until(10, sub {
		$P->safe_psql('postgres', "SELECT count(*) FROM pg_stat_replication WHERE application_name = '$name'") eq '0';
	});
}
my $jump = max_of(@seen) + 1_000_000;
ok( wait_until(30, sub {
		($P->safe_psql('postgres', 'SHOW synchronous_standby_names') // 'x') eq '';
	}),
	'both standbys gone: Patroni lets the lone leader commit without a standby')
  or diag('synchronous_standby_names: ' . $P->safe_psql('postgres', 'SHOW synchronous_standby_names')
	. "\nconfig: " . $http->get("http://127.0.0.1:$node{$leader}{api}/config")->{content}
	. "\ncluster: " . $http->get("http://127.0.0.1:$node{$leader}{api}/cluster")->{content}
	. "\nreplication: " . $P->safe_psql('postgres', 'SELECT application_name, state, sync_state FROM pg_stat_replication'));
# A long window of asynchronous grants, in one step: the counter moves past
# what the lagging standbys have (fence_advance_tokens stands for the
# tokens of that window, as in 004_failover), and a worker writes with a
# grant above it.
is(sql_state($P, 'postgres', "SET statement_timeout = '2s'; SELECT fence_advance_tokens($jump)"),
	'', 'not strict: the leader hands out tokens that no standby has');
my $t_g = hold('job:1', 1, 'worker-g');
cmp_ok($t_g // 0, '>', $jump, "worker-g holds job:1 with token $t_g and wrote row 1");
push @seen, $t_g;
signal_node($node{$leader}, 'KILL');
$node{$leader}{down} = 1;
for my $name (@standbys)
{
	delete $node{$name}{down};
	start_patroni($node{$name});
}
ok( wait_until(60, sub {
		my $m = members();
		!grep({ $_->{role} eq 'leader' } values %$m)
		  && !grep { ($m->{$_}{state} // '') ne 'running' } @standbys;
	}),
	'the old leader dies; the two standbys are back, leaderless');
ok(!wait_until(3 * 2, sub { role_of('leader') }),
	'Patroni promotes neither: the synchronous state names no standby');
my $res2 = HTTP::Tiny->new(timeout => 60)->post("http://127.0.0.1:$node{$standbys[0]}{api}/failover", {
	headers => { 'Content-Type' => 'application/json' },
	content => encode_json({ candidate => $standbys[0] }) });
ok($res2->{success}, "a manual failover to $standbys[0]: $res2->{content}");
($leader2, $sync2) = wait_for_roles(60, [@standbys], $leader);
expect_leader($leader2, $standbys[0], "$standbys[0] leads, promoted without the tokens of the window");
$L2 = $node{$leader2}{pg};
grants_resume($L2, 'manual failover');
my @again = split /\n/, $L2->safe_psql('postgres', 'SELECT take_counter_token() FROM generate_series(1, 5)');
cmp_ok(max_of(@again), '<', $jump,
	'... and hands those numbers out again (the limit of an asynchronous promotion)');
isnt($L2->safe_psql('postgres', 'SELECT fence::bigint FROM jobs WHERE id = 1'),
	$t_g, "worker-g's write is lost with the old leader too, so the tables do not know its token");
$L2->safe_psql('postgres', q{SELECT fence_advance_tokens((SELECT max(fence)::bigint FROM jobs) + 10000000)});
my @after = split /\n/, $L2->safe_psql('postgres', 'SELECT take_counter_token() FROM generate_series(1, 5)');
cmp_ok(min_of(@after), '>', $t_g,
	'recovery: fence_advance_tokens past the highest fence plus a margin for the window');

note sprintf 'total %.0f s', time - $t_start;
done_testing();
