# A fenced table replicated by logical replication.
#
# The publisher (fence not preloaded) and the subscriber each protect table
# jobs; the subscriber's trigger has require_token.  Proven: rows arrive with
# the publisher's fences, in the initial copy and in later changes; the
# subscriber's trigger does not fire on apply (the apply worker runs with
# session_replication_role = replica, and an ordinary trigger fires only in
# "origin" mode): a replicated DELETE carrying no token passes despite
# require_token, fence_stats counts no write, and a replicated write replaces
# a local one even with a lower fence.  A local stale write on the subscriber
# is rejected.  With ALTER TABLE ... ENABLE ALWAYS TRIGGER zz_fence_enforce
# the trigger judges applied rows too: a replicated UPDATE is checked with the
# fence it carries (the apply worker sets every column it received), a
# stale one stops the subscription (the apply worker fails with LF001 and
# retries) with every later change held back behind it, until the trigger is
# set back to ENABLE TRIGGER; a replicated DELETE carries no token, so
# require_token stops the subscription too (LF003).  fence_protect() again
# puts the trigger back to its default firing mode.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pub = fence_node('publisher', preload => 0, init => { allows_streaming => 'logical' });
my $sub = fence_node('subscriber', conf => "wal_retrieve_retry_interval = '200ms'\n");
my $table = 'CREATE TABLE jobs (id int PRIMARY KEY, payload text, fence fence_token NOT NULL DEFAULT 0)';
# Both databases store rows fenced by leases elsewhere (the tokens here are
# made up), so both take tokens their own counters never issued, as
# doc/scaling.md tells storage databases to; the subscriber's apply worker
# too, under ENABLE ALWAYS below.
for my $node ($pub, $sub)
{
	$node->safe_psql('postgres', 'ALTER DATABASE postgres SET fence.external_tokens = on');
}
$pub->safe_psql('postgres', "$table; SELECT fence_protect('jobs');");
$sub->safe_psql('postgres', "$table; SELECT fence_protect('jobs', require_token => true);");

# On the publisher, a writer under token $tok.
sub pub_write
{
	my ($tok, $sql) = @_;
	$pub->safe_psql('postgres', "BEGIN; SELECT fence_use_token($tok); $sql; COMMIT;");
	return;
}
sub rows { return $_[0]->safe_psql('postgres', 'SELECT id, payload, fence FROM jobs ORDER BY id'); }
# Writes the subscriber's trigger judged (fence_stats has no row for a
# database before its first count).
sub judged
{
	return $sub->safe_psql('postgres',
		"SELECT coalesce(sum(writes_accepted + writes_rejected), 0) FROM fence_stats WHERE database = 'postgres'");
}

pub_write(10, q{INSERT INTO jobs VALUES (1, 'a'), (2, 'b'), (3, 'c')});
$pub->safe_psql('postgres', q{UPDATE jobs SET payload = 'a2', fence = 12 WHERE id = 1});
$pub->safe_psql('postgres', 'CREATE PUBLICATION p FOR TABLE jobs');
my $connstr = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres', "CREATE SUBSCRIPTION s CONNECTION '$connstr' PUBLICATION p");
$sub->wait_for_subscription_sync($pub, 's');
is(rows($sub), "1|a2|12\n2|b|10\n3|c|10", 'the initial copy carries the fences');

pub_write(15, q{UPDATE jobs SET payload = 'b2' WHERE id = 2});
pub_write(16, q{DELETE FROM jobs WHERE id = 3});
$pub->wait_for_catchup('s');
is(rows($sub), "1|a2|12\n2|b2|15", 'later changes arrive with their fences');
is(judged(), 0, "the subscriber's trigger judged none of the applied rows");
# The apply worker holds no token: had the trigger fired, require_token
# would have refused the DELETE.

# Local writers on the subscriber are judged.
my ($state) = sql_state($sub, 'postgres',
	q{BEGIN; SELECT fence_use_token(11); UPDATE jobs SET payload = 'x' WHERE id = 1; COMMIT;});
is($state, 'LF001', 'a local stale write on the subscriber is rejected');
is(sql_state($sub, 'postgres', q{UPDATE jobs SET payload = 'x' WHERE id = 1}),
	'LF003', 'a local write without a token is rejected (require_token)');
$sub->safe_psql('postgres',
	q{BEGIN; SELECT fence_use_token(50); UPDATE jobs SET payload = 'local' WHERE id = 2; COMMIT;});
pub_write(20, q{UPDATE jobs SET payload = 'b3' WHERE id = 2});
$pub->wait_for_catchup('s');
is($sub->safe_psql('postgres', 'SELECT payload, fence FROM jobs WHERE id = 2'), 'b3|20',
	'a replicated write replaces a local one, even with a lower fence: the publisher decides');

# ENABLE ALWAYS: the trigger fires in the apply worker too.
$sub->safe_psql('postgres', 'ALTER TABLE jobs ENABLE ALWAYS TRIGGER zz_fence_enforce');
my $before = judged();
pub_write(30, q{UPDATE jobs SET payload = 'a3' WHERE id = 1});
$pub->wait_for_catchup('s');
is($sub->safe_psql('postgres', 'SELECT payload, fence FROM jobs WHERE id = 1'), 'a3|30',
	'ENABLE ALWAYS: a replicated write with a newer fence is applied');
is(judged(), $before + 1, '... and the trigger judged it');

# A replicated write below the subscriber's fence stops the subscription.
$sub->safe_psql('postgres',
	q{BEGIN; SELECT fence_use_token(60); UPDATE jobs SET payload = 'local' WHERE id = 2; COMMIT;});
my $offset = -s $sub->logfile;
pub_write(40, q{UPDATE jobs SET payload = 'b4' WHERE id = 2});
pub_write(41, q{UPDATE jobs SET payload = 'a4' WHERE id = 1});
$offset = $sub->wait_for_log(
	qr/stale fencing token for table "jobs"\n[^\n]*DETAIL:[^\n]*token 40, and a writer with token 60 has written/,
	$offset);
$sub->wait_for_log(qr/DETAIL:[^\n]*token 40, and a writer with token 60 has written/, $offset);
is(rows($sub), "1|a3|30\n2|local|60",
	'ENABLE ALWAYS: a stale replicated write fails in the apply worker, again at each retry, and holds back later changes');
$sub->safe_psql('postgres', 'ALTER TABLE jobs ENABLE TRIGGER zz_fence_enforce');
$pub->wait_for_catchup('s');
is(rows($sub), "1|a4|41\n2|b4|40", 'back to ENABLE TRIGGER, the subscription catches up');

# A replicated DELETE carries no token.
$sub->safe_psql('postgres', 'ALTER TABLE jobs ENABLE ALWAYS TRIGGER zz_fence_enforce');
$offset = -s $sub->logfile;
pub_write(42, q{DELETE FROM jobs WHERE id = 1});
$sub->wait_for_log(qr/write to table "jobs" carries no fencing token/, $offset);
is(rows($sub), "1|a4|41\n2|b4|40", 'ENABLE ALWAYS with require_token: a replicated DELETE fails (LF003)');

# fence_protect() re-creates the trigger in its default mode.
$sub->safe_psql('postgres', q{SELECT fence_protect('jobs')});
is($sub->safe_psql('postgres',
		q{SELECT tgenabled FROM pg_trigger WHERE tgname = 'zz_fence_enforce' AND tgrelid = 'jobs'::regclass}),
	'O', 'fence_protect() puts the trigger back to firing in origin mode only');
$pub->wait_for_catchup('s');
is(rows($sub), "2|b4|40", '... and the DELETE is applied');

for my $n ($sub, $pub)
{
	unlike(slurp_file($n->logfile), qr/TRAP|terminated by signal/, $n->name . ': no crash');
	$n->stop;
}
done_testing();
