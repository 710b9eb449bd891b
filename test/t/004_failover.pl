# Failover: what synchronous replication guarantees for the
# token counter, and what asynchronous replication cannot.
#
# Synchronous: a primary with synchronous_standby_names naming its streaming
# standby.  Clients take tokens (in rolled-back and in open transactions)
# while the primary is killed; the standby is promoted.  Proven: every token
# the promoted standby hands out is above every token any client got from
# the old primary, and no token was handed out twice.  Also: a standby
# refuses to issue tokens (25006), and with the synchronous standby gone a
# token request that is cancelled fails (57014) instead of handing out a
# token the standby may not have.
#
# Asynchronous: caught up, a switchover keeps the law; but tokens handed out
# while the standby lagged are lost with the old primary and the promoted
# standby hands them out again.  fence_advance_tokens past the highest token
# known to be issued restores the law, as doc/replication.md says.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $leases;

# --- synchronous -----------------------------------------------------------

my $primary = fence_node('primary',
	init => { allows_streaming => 1 },
	conf => "max_connections = 20\nwal_writer_delay = '10s'\n");
install_token_helpers($primary, 'postgres');
$leases = has_function($primary, 'fence_try_lease');
$primary->backup('b1');
my $standby = PostgreSQL::Test::Cluster->new('standby_sync');
$standby->init_from_backup($primary, 'b1', has_streaming => 1);
$standby->start;
$primary->safe_psql('postgres',
	"ALTER SYSTEM SET synchronous_standby_names = 'standby_sync'; SELECT pg_reload_conf()");
ok( $primary->poll_query_until('postgres',
		"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'standby_sync'"),
	'the standby is synchronous');

is(sql_state($standby, 'postgres', 'SELECT fence_advance_tokens(0)'),
	'25006', 'a standby refuses to issue a token');
is(sql_state($standby, 'postgres', q{SELECT fence_try_lease('k', '1 min')}),
	'25006', 'a standby refuses a lease')
  if $leases;

# Synchronous standby down: a token request waits for it; cancelled (here by
# statement_timeout), it fails and hands out nothing.
my $before = $primary->safe_psql('postgres', 'SELECT take_counter_token()');
$standby->stop;
# Tokens come in blocks of 1024 reserved through the sequence, which logs 32
# blocks ahead; moving the counter past what was logged writes WAL that
# must reach the standby before any token above it is handed out.
my ($state, $err) = sql_state($primary, 'postgres',
	"SET statement_timeout = '1s'; SELECT fence_advance_tokens(100000000);");
is($state, '57014', 'no synchronous standby: a cancelled counter advance fails');
like($err, qr/canceled before the synchronous standby confirmed/,
	'... saying the standby did not confirm the token');
$standby->start;
ok( $primary->poll_query_until('postgres',
		"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'standby_sync'"),
	'the standby is back');

# Tokens in flight when the primary dies.
my @seen = ($before, tokens_in($err));
my %s;
$s{rollback} = bg_start($primary, 'postgres', "CALL take_loop(100000, 0, 5);\n");
$s{open} = bg_start($primary, 'postgres', "BEGIN;\nCALL take_loop(100000, 0, 0);\n");
ok(wait_until(60, sub { !grep { scalar(my @t = bg_tokens($_)) < 100 } values %s }),
	'clients are taking tokens on the primary');
$primary->stop('immediate');
push @seen, bg_finish($_) for values %s;
my $old_max = max_of(@seen);
note 'the old primary handed out ' . scalar(@seen) . " tokens, the highest $old_max";

$standby->promote;
my @new = split /\n/, $standby->safe_psql('postgres',
	'SELECT take_counter_token() FROM generate_series(1, 40)');
if ($leases)
{
	install_token_helpers($standby, 'postgres');
	push @new, split /\n/, $standby->safe_psql('postgres',
		"SELECT take_lease_token('after-fo-' || g) FROM generate_series(1, 10) g");
}
cmp_ok(min_of(@new), '>', $old_max,
	'synchronous failover: every token of the promoted standby is above every token of the old primary'
);
is(scalar(check_unique(@seen, @new)), 0, 'no token handed out twice');
$standby->stop;

# --- asynchronous ------------------------------------------------------------

my $aprimary = fence_node('async_primary',
	init => { allows_streaming => 1 },
	conf => "wal_writer_delay = '10s'\n");
install_token_helpers($aprimary, 'postgres');
$aprimary->backup('b2');
my $astandby = PostgreSQL::Test::Cluster->new('async_standby');
$astandby->init_from_backup($aprimary, 'b2', has_streaming => 1);
$astandby->start;

my @a1 = split /\n/, $aprimary->safe_psql('postgres',
	'SELECT take_counter_token() FROM generate_series(1, 50)');
$aprimary->wait_for_catchup($astandby, 'replay');
note 'caught up at token ' . max_of(@a1);

# The standby falls behind (here: it is down), the primary keeps issuing.
# The counter logs well ahead of its blocks, so a short lag costs nothing;
# fence_advance_tokens stands for a long one.
$astandby->stop;
my @a2 = split /\n/, $aprimary->safe_psql('postgres',
	'SELECT fence_advance_tokens(1000000); SELECT take_counter_token() FROM generate_series(1, 100)');
shift @a2;
my $a_max = max_of(@a1, @a2);
$aprimary->stop('immediate');
$astandby->start;
$astandby->promote;
my @a3 = split /\n/, $astandby->safe_psql('postgres',
	'SELECT take_counter_token() FROM generate_series(1, 5)');
cmp_ok(min_of(@a3), '>', max_of(@a1),
	'asynchronous: tokens replicated before the failover stay below the new ones');
cmp_ok(min_of(@a3), '<=', $a_max,
	'asynchronous: tokens the lagging standby never received are handed out again (the documented limit)'
);
is($astandby->safe_psql('postgres', "SELECT fence_advance_tokens($a_max + 1000)::text::bigint > $a_max"),
	't', 'recovery: fence_advance_tokens past the highest token known to be issued');
my $next = $astandby->safe_psql('postgres', 'SELECT take_counter_token()');
cmp_ok($next, '>', $a_max, '... and the law holds again');
$astandby->stop;

done_testing();
