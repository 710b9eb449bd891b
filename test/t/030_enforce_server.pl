# The fence trigger on a server where fence is not in
# shared_preload_libraries (the type and the plain trigger
# still work): the library is loaded on first use in each backend, the
# trigger's rule holds with tokens from the statement and from
# fence_use_token, and only strict mode, which needs the shared lease table,
# fails with 55000 and a hint that says where strict mode works.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fence_node('plain_trigger', preload => 0);
# It grants no lease, so it takes tokens from elsewhere (doc/scaling.md).
$node->safe_psql('postgres', q{ALTER DATABASE postgres SET fence.external_tokens = on});

$node->safe_psql('postgres', q{
	CREATE TABLE channels (id int PRIMARY KEY, retention_days int NOT NULL, fence bigint NOT NULL);
	INSERT INTO channels VALUES (7, 7, 32);
	SELECT fence_protect('channels');
});

# Tokens in the statement, as the seeds write them.
is($node->safe_psql('postgres',
		q{UPDATE channels SET retention_days = 30, fence = 33 WHERE id = 7 RETURNING fence}),
	'33', 'not preloaded: a newer token is accepted and stamped');
my ($state, $err) = sql_state($node, 'postgres',
	q{UPDATE channels SET retention_days = 1, fence = 32 WHERE id = 7;});
is($state, 'LF001', 'not preloaded: a stale token is rejected');
like($err, qr/stale fencing token for table "channels".*DETAIL:[^\n]*token 32, and a writer with token 33 has written/s,
	'not preloaded: the message names the table, the fence and the token');

# Tokens in effect, set with fence_use_token (session-local, no lease table).
is($node->safe_psql('postgres', q{
		BEGIN;
		SELECT fence_use_token(34);
		UPDATE channels SET retention_days = 90 WHERE id = 7 RETURNING fence;
		COMMIT;}),
	"\n34", 'not preloaded: the token in effect is used and stamped');
($state) = sql_state($node, 'postgres', q{
		BEGIN;
		SELECT fence_use_token(33);
		DELETE FROM channels WHERE id = 7;
		COMMIT;});
is($state, 'LF001', 'not preloaded: a stale DELETE is rejected');

# Skip mode.
$node->safe_psql('postgres', q{SELECT fence_protect('channels', on_stale => 'skip')});
is($node->safe_psql('postgres', q{
		BEGIN;
		SELECT fence_use_token(33);
		WITH d AS (DELETE FROM channels RETURNING 1) SELECT count(*) FROM d;
		COMMIT;}),
	"\n0", 'not preloaded: skip leaves the stale row out');

# strict needs the lease table.
$node->safe_psql('postgres',
	q{SELECT fence_protect('channels', lease => 'lock:retention', strict => true)});
($state, $err) = sql_state($node, 'postgres', q{
		BEGIN;
		SELECT fence_use_token(35);
		UPDATE channels SET retention_days = 91 WHERE id = 7;
		COMMIT;});
is($state, '55000', 'not preloaded: a strict write fails with 55000');
like($err, qr/HINT:\s+Strict mode works only on the server that grants the leases, with fence in shared_preload_libraries/,
	'not preloaded: and the hint says where strict mode works, naming the setting');

# Writes without a token are untouched; the row is as the accepted writes left it.
is($node->safe_psql('postgres', q{SELECT retention_days, fence FROM channels}),
	'90|34', 'not preloaded: the row holds the last accepted write');

$node->stop;
done_testing();
