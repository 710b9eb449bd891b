# FenceTAP: helpers shared by the TAP tests in test/t/*.pl.
#
# fence_node() makes a PostgreSQL::Test::Cluster node with fence preloaded;
# the token helpers collect every token a client ever saw, so that a test can
# check the token law over all of them: no token handed out twice, and every
# token taken after an event above every token seen before it.
package FenceTAP;

our $scripts = 0;

use strict;
use warnings;

use Exporter 'import';
use File::Copy ();
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

our @EXPORT = qw(fence_node has_function npm_install bg_start bg_tokens bg_finish
  tokens_in check_unique max_of min_of sql_state wait_until
  wait_for_server backend_pid_of install_token_helpers pgbouncer_binary
  start_pgbouncer pgbouncer_up client_test_node restart_command);

# A node with fence preloaded, started, CREATE EXTENSION fence done in the
# "postgres" database.  Options: init => {...} passed to init(), conf =>
# extra postgresql.conf text, preload => 0 to leave fence out of
# shared_preload_libraries, start => 0 to leave it stopped.
sub fence_node
{
	my ($name, %opt) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%{ $opt{init} || {} });
	my $conf = "lc_messages = 'C'\n";
	$conf .= "shared_preload_libraries = 'fence'\n"
	  unless defined $opt{preload} && !$opt{preload};
	$conf .= $opt{conf} if defined $opt{conf};
	$node->append_conf('postgresql.conf', $conf);
	return $node if defined $opt{start} && !$opt{start};
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION fence');
	return $node;
}

# Install the npm packages that $package_json lists into $dir, a scratch
# directory, with a cache of its own there.  Returns true if npm succeeded;
# otherwise says why in a diag ($what names the packages).
sub npm_install
{
	my ($dir, $package_json, $what) = @_;
	File::Copy::copy($package_json, "$dir/package.json")
	  or die "copy $package_json: $!";
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[
			'npm', 'install', '--no-audit', '--no-fund', '--no-package-lock',
			'--no-update-notifier', "--cache=$dir/npm-cache"
		],
		'>', \$out, '2>', \$err,
		init => sub { chdir $dir or die "chdir $dir: $!" },
		IPC::Run::timeout(300));
	diag("npm install failed; this test needs the npm registry, or an npm "
		  . "cache holding $what:\n$out$err")
	  unless $ok;
	return $ok;
}

# Does the installed fence have this function (by name)?  Used only to run
# the parts of a test whose code has landed.
sub has_function
{
	my ($node, $fn) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_proc WHERE proname = '$fn'") > 0;
}

# Helper functions for the crash and failover tests, in database $db:
#   take_counter_token()      a token from a grant of this backend's own
#                             detached lease "ctr-<pid>", released at once
#                             (fence_advance_tokens(0) only reads the counter)
#   take_lease_token(key)     a token from a grant of a fresh session lease,
#                             released at once (when leases exist)
#   take_loop(n, every_commit, every_rollback)
#                             a procedure taking n tokens (both kinds), 1 ms
#                             apart, committing or rolling back every so many
# Both RAISE NOTICE 'TOK=<n>' right after the token is returned to them, so
# a client sees each token the moment it is handed out, even if the server
# dies before the statement ends.
sub install_token_helpers
{
	my ($node, $db) = @_;
	$node->safe_psql($db, q{
CREATE OR REPLACE FUNCTION take_counter_token() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE t fence_token;
BEGIN
	t := fence_try_lease('ctr-' || pg_backend_pid(), '1 min', 'ctr');
	RAISE NOTICE 'TOK=%', t;
	PERFORM fence_release('ctr-' || pg_backend_pid(), t);
	RETURN t::text::bigint;
END $$;
});
	if (has_function($node, 'fence_try_lease'))
	{
		$node->safe_psql($db, q{
CREATE OR REPLACE FUNCTION take_lease_token(k text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE t fence_token;
BEGIN
	t := fence_try_lease(k, '1 min');
	IF t IS NULL THEN
		RAISE EXCEPTION 'lease % refused', k;
	END IF;
	RAISE NOTICE 'TOK=%', t;
	PERFORM fence_release(k, t);
	RETURN t::text::bigint;
END $$;
});
	}
	my $take = has_function($node, 'fence_try_lease')
	  ? q{PERFORM take_counter_token();
		PERFORM take_lease_token('loop-' || pg_backend_pid() || '-' || i);}
	  : q{PERFORM take_counter_token();};
	$node->safe_psql($db, qq{
CREATE OR REPLACE PROCEDURE take_loop(n int, every_commit int, every_rollback int)
LANGUAGE plpgsql AS \$\$
BEGIN
	FOR i IN 1..n LOOP
		$take
		IF every_commit > 0 AND i % every_commit = 0 THEN
			COMMIT;
		END IF;
		IF every_rollback > 0 AND i % every_rollback = 0 THEN
			ROLLBACK;
		END IF;
		PERFORM pg_sleep(0.001);
	END LOOP;
END \$\$;
});
	return;
}

# Start psql in the background on a script.  Its stdout and stderr are kept
# (notices go to stderr).  Returns a handle for bg_tokens / bg_finish.
sub bg_start
{
	my ($node, $db, $script, %opt) = @_;
	my $h = { out => '', err => '', in => $script };
	my $file = '-';
	# A long script goes through a file, so that psql need not be fed.
	if (length($script) > 4096)
	{
		$file = $node->basedir . "/bg_script_" . ++$FenceTAP::scripts . ".sql";
		PostgreSQL::Test::Utils::append_to_file($file, $script);
		$h->{in} = '';
	}
	local %ENV = %ENV;
	$ENV{PGAPPNAME} = $opt{appname} if defined $opt{appname};
	$h->{run} = IPC::Run::start(
		[
			'psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=0',
			'-d', $node->connstr($db), '-f', $file
		],
		'<', \$h->{in},
		'>', \$h->{out},
		'2>', \$h->{err},
		IPC::Run::timeout($opt{timeout} // $PostgreSQL::Test::Utils::timeout_default));
	# IPC::Run feeds stdin only while pumped: hand psql its script now.
	wait_until(10, sub { eval { $h->{run}->pump_nb; }; $h->{in} eq '' });
	return $h;
}

# Tokens this background psql has reported so far.
sub bg_tokens
{
	my ($h) = @_;
	eval { $h->{run}->pump_nb; };
	my @t = tokens_in($h->{out} . $h->{err});
	return @t;
}

# Wait for the background psql to end (it ends by itself when its server
# connection is lost); returns its tokens.
sub bg_finish
{
	my ($h) = @_;
	eval { $h->{run}->finish; };
	if ($@)
	{
		eval { $h->{run}->kill_kill; };
	}
	return tokens_in($h->{out} . $h->{err});
}

sub tokens_in
{
	my ($text) = @_;
	my @t = ($text =~ /TOK=(\d+)/g);
	return @t;
}

# The tokens that appear more than once in the list.
sub check_unique
{
	my %seen;
	my @dups;
	for my $t (@_)
	{
		push @dups, $t if $seen{$t}++ == 1;
	}
	return @dups;
}

sub max_of
{
	my $m;
	for (@_) { $m = $_ if !defined $m || $_ > $m; }
	return $m;
}

sub min_of
{
	my $m;
	for (@_) { $m = $_ if !defined $m || $_ < $m; }
	return $m;
}

# Run SQL that should fail; return its SQLSTATE ('' on success) and stderr.
sub sql_state
{
	my ($node, $db, $sql, %opt) = @_;
	my ($ret, $out, $err) = $node->psql(
		$db,
		"\\set VERBOSITY verbose\n$sql",
		extra_params => $opt{extra_params} // []);
	my ($state) = $err =~ /ERROR:\s+([0-9A-Z]{5}):/;
	return wantarray ? ($state // '', $err, $out) : ($state // '');
}

# Poll a Perl condition every 50 ms until true or $secs pass.
sub wait_until
{
	my ($secs, $cond) = @_;
	my $deadline = time + $secs;
	while (time < $deadline)
	{
		return 1 if $cond->();
		usleep(50_000);
	}
	return $cond->();
}

# Wait until the server answers a query again after a backend crash has
# made the postmaster restart every process.  Unlike poll_query_until, a
# connection that the restart cuts off (seen on 18: its psql died before
# reading the query, and writing it failed with a broken pipe) is one more
# failed attempt, not the end of the test.
sub wait_for_server
{
	my ($node, $secs) = @_;
	return wait_until($secs // 60, sub {
		my $out = eval { $node->safe_psql('postgres', 'SELECT true') };
		return defined $out && $out eq 't';
	});
}

# Debian's PgBouncer, or undef if it is not installed.
sub pgbouncer_binary
{
	return (grep { -x $_ } '/usr/sbin/pgbouncer', '/usr/bin/pgbouncer')[0];
}

# Start a PgBouncer in front of $node's database $db (default postgres), in
# pool_mode $mode, in its own directory $name under the node's, with one
# server connection per pool and everything else PgBouncer's default
# (server_reset_query is DISCARD ALL).  Its clients connect as the OS user
# to the database "fencedb" on 127.0.0.1.  $settings, if given, are more
# lines of its [pgbouncer] section.  Returns its IPC::Run handle, its
# directory and its clients' connection string.
sub start_pgbouncer
{
	my ($node, $name, $mode, $db, $settings) = @_;
	$db //= 'postgres';
	$settings //= '';
	my $user = getpwuid($<);
	my $dir = $node->basedir . "/$name";
	mkdir $dir;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my ($sock, $pgport) = ($node->host, $node->port);
	append_to_file("$dir/userlist.txt", qq{"$user" ""\n});
	append_to_file("$dir/pgbouncer.ini", <<"EOF");
[databases]
fencedb = host=$sock port=$pgport dbname=$db
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = $mode
default_pool_size = 1
max_client_conn = 50
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
$settings
EOF
	my ($out, $err) = ('', '');
	my $bouncer = IPC::Run::start([ pgbouncer_binary(), "$dir/pgbouncer.ini" ],
		'>', \$out, '2>', \$err);
	return ($bouncer, $dir, "host=127.0.0.1 port=$port dbname=fencedb user=$user");
}

# Does the PgBouncer at $dsn (start_pgbouncer's connection string) answer a
# query within $secs seconds (default 10)?
sub pgbouncer_up
{
	my ($dsn, $secs) = @_;
	return wait_until(
		$secs // 10,
		sub {
			my ($o, $e) = ('', '');
			IPC::Run::run([ 'psql', '-X', '-A', '-t', '-d', $dsn, '-c', 'SELECT 1' ],
				'>', \$o, '2>', \$e);
			return $o eq "1\n";
		});
}

# The server a client library's test suite runs against: a node with fence
# preloaded (conf => extra settings), database $db with the extension, and
# a transaction-mode PgBouncer in front of it (bouncer_settings => extra
# [pgbouncer] lines), each checked with an ok line.  Returns ($node,
# $bouncer, $bouncer_dsn); the caller stops $bouncer.
sub client_test_node
{
	my ($name, $db, %opt) = @_;
	my $node = fence_node($name, conf => $opt{conf} // '');
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION fence');
	ok(pgbouncer_binary(), 'PgBouncer is installed');
	my ($bouncer, undef, $bouncer_dsn) = start_pgbouncer($node, 'pgbouncer',
		'transaction', $db, $opt{bouncer_settings});
	ok(pgbouncer_up($bouncer_dsn), 'PgBouncer is up');
	return ($node, $bouncer, $bouncer_dsn);
}

# The shell command that restarts $node, for a client test that takes the
# server away under a held lease (PGFENCE_TEST_RESTART).
sub restart_command
{
	my ($node) = @_;
	return join(' ',
		'pg_ctl', '-w', '-m', 'fast', '-D', "'" . $node->data_dir . "'",
		'-l', "'" . $node->logfile . "'", 'restart');
}

sub backend_pid_of
{
	my ($node, $appname) = @_;
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE application_name = '$appname' ORDER BY backend_start LIMIT 1"
	);
}

1;
