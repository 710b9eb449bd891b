# fence without shared_preload_libraries.
#
# Proven: CREATE EXTENSION works; the fence_token type and the plain
# trigger work (tokens given in the row, or set with fence_use_token as an
# outside lock service would); every function that needs the shared lease
# table fails with SQLSTATE 55000 and a HINT naming
# shared_preload_libraries; nothing crashes.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fence_node('plain', preload => 0);
is($node->safe_psql('postgres', q{SHOW shared_preload_libraries}), '',
	'fence is not preloaded');

# The type.
is( $node->safe_psql('postgres',
		q{SELECT '33'::fence_token < 34, '33'::fence_token = 33::bigint, max(t) FROM (VALUES ('5'::fence_token), ('7')) v(t)}),
	't|t|7', 'the fence_token type works');
is(sql_state($node, 'postgres', q{SELECT 'abc'::fence_token}), '22P02',
	'and rejects bad input');

# Without preload this server grants no lease, so its counter issues no
# token: its tables take tokens from elsewhere (an outside lock service, a
# lease server), and it refuses every token until a superuser says so with
# fence.external_tokens, as doc/scaling.md tells users.
is(sql_state($node, 'postgres', q{SELECT fence_use_token(33)}), '22023',
	'a token is refused before fence.external_tokens is on');
$node->safe_psql('postgres', q{ALTER DATABASE postgres SET fence.external_tokens = on});

# The plain trigger: tokens carried in the row, or set for the transaction.
$node->safe_psql('postgres', q{
CREATE TABLE channels (id int PRIMARY KEY, retention int, fence fence_token NOT NULL DEFAULT 0);
SELECT fence_protect('channels', column_name => 'fence');
INSERT INTO channels VALUES (1, 30, 33);
UPDATE channels SET retention = 90, fence = 34 WHERE id = 1;
});
is(sql_state($node, 'postgres', q{UPDATE channels SET retention = 30, fence = 33 WHERE id = 1}),
	'LF001', 'the trigger rejects a write with a stale token in the row');
is(sql_state($node, 'postgres',
		q{BEGIN; SELECT fence_use_token(33); UPDATE channels SET retention = 30 WHERE id = 1; COMMIT;}),
	'LF001', 'and a write under a stale token set with fence_use_token');
is($node->psql('postgres',
		q{BEGIN; SELECT fence_use_token(35); UPDATE channels SET retention = 60 WHERE id = 1; COMMIT;}),
	0, 'a newer token set with fence_use_token is accepted');
is($node->safe_psql('postgres', 'SELECT retention, fence FROM channels'),
	'60|35', 'the row has the newest write and its token');
# Everything that needs the lease table (the counter hands tokens out of a
# block in shared memory too).
for my $sql (
	q{SELECT fence_advance_tokens(100)},
	q{SELECT fence_try_lease('k', '1 min')},
	q{SELECT fence_try_lease('k', '1 min', owner => 'W1')},
	q{SELECT fence_try_lease(42, '1 min')},
	q{BEGIN; SELECT fence_try_xact_lease('k', '1 min'); COMMIT;},
	q{SELECT fence_lease('k', '1 min')},
	q{BEGIN; SELECT fence_xact_lease('k', '1 min'); COMMIT;},
	q{SELECT fence_release('k', 1)},
	q{SELECT fence_renew('k', 1, '1 min')},
	q{SELECT fence_lease_status('k', 1)},
	q{SELECT fence_assert_current('k', 1)},
	q{SELECT fence_break('k')},
	q{SELECT * FROM fence_leases},
	q{SELECT * FROM fence_stats},
	q{SELECT fence_set_clock(now())},
	q{SELECT fence_advance_clock('1 min')})
{
	my ($state, $err) = sql_state($node, 'postgres', $sql);
	ok($state eq '55000' && $err =~ /HINT:.*shared_preload_libraries/,
		"55000 with a hint naming shared_preload_libraries: $sql")
	  or diag($err);
}

# A strict trigger needs the lease table too.
$node->safe_psql('postgres', q{
CREATE TABLE exports (id int PRIMARY KEY, fence fence_token NOT NULL DEFAULT 0);
SELECT fence_protect('exports', lease => 'export-{id}', strict => true);
});
my ($state, $err) = sql_state($node, 'postgres', q{INSERT INTO exports VALUES (1, 5)});
ok($state eq '55000' && $err =~ /shared_preload_libraries/,
	'a strict trigger fails with 55000 naming shared_preload_libraries')
  or diag($err);

is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server is fine');
unlike(slurp_file($node->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$node->stop;
done_testing();
