# Fenced writes under load.
#
# 12 pgbench clients for a few seconds update 3 fenced rows.  Each cycle
# takes the row's lease with a 15 ms TTL, works for 0-30 ms (so leases
# routinely expire mid-work and other clients take over), then updates the
# row under the session's token in effect for that row's lease (the trigger
# names it, lease => 'item-{id}', since a client holds several items'
# leases).  An AFTER trigger records every accepted version of each row; a
# rejected write (LF001) records its error detail.  Proven: on every row
# the accepted fences never went backwards (each version's fence >= its
# predecessor's), every accepted version carries its writer's token, every
# rejected write was stale: its token was below a fence that the row really
# had, or below a token of the row's lease that was granted (the lease table
# knows the newer holder before it writes), the row's counter equals the number of accepted writes
# (nothing lost, nothing extra), and fence_stats agrees.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fence_node('writes', conf => "max_connections = 40\nlog_statement = none\n");
$node->safe_psql('postgres', q{
CREATE TABLE items (id int PRIMARY KEY, writes bigint NOT NULL DEFAULT 0,
                    fence fence_token NOT NULL DEFAULT 0);
INSERT INTO items (id) SELECT generate_series(1, 3);
SELECT fence_protect('items', column_name => 'fence', lease => 'item-{id}');

CREATE TABLE versions (seq bigserial, id int, old_fence bigint, new_fence bigint);
CREATE FUNCTION record_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO versions (id, old_fence, new_fence)
	VALUES (NEW.id, OLD.fence::bigint, NEW.fence::bigint);
	RETURN NULL;
END $$;
CREATE TRIGGER items_versions AFTER UPDATE ON items
	FOR EACH ROW EXECUTE FUNCTION record_version();

CREATE TABLE attempts (id int, tok bigint, accepted bool, message text);
CREATE TABLE grants (id int, tok bigint);
CREATE FUNCTION write_item(p_id int, p_tok bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE msg text;
BEGIN
	UPDATE items SET writes = writes + 1 WHERE id = p_id;
	INSERT INTO attempts VALUES (p_id, p_tok, true, NULL);
EXCEPTION WHEN SQLSTATE 'LF001' THEN
	GET STACKED DIAGNOSTICS msg = PG_EXCEPTION_DETAIL;
	INSERT INTO attempts VALUES (p_id, p_tok, false, msg);
END $$;
});

$node->pgbench(
	'-n -c 12 -j 2 -T 6',
	0, [qr/processed/], [qr/^$/],
	'fenced-write torture',
	{
		'writer' => q{
\set id random(1, 3)
SELECT coalesce(fence_try_lease('item-' || :id, '15 ms')::bigint, 0) AS tok \gset
\if :tok > 0
INSERT INTO grants VALUES (:id, :tok);
SELECT pg_sleep(random() * 0.03);
SELECT write_item(:id, :tok);
\endif
}
	});

my ($accepted, $rejected) = split /\|/, $node->safe_psql('postgres',
	'SELECT count(*) FILTER (WHERE accepted), count(*) FILTER (WHERE NOT accepted) FROM attempts');
note "accepted $accepted, rejected $rejected";
cmp_ok($accepted, '>=', 100, 'many writes were accepted');
cmp_ok($rejected, '>=', 10, 'many writes were rejected as stale (leases expired mid-work)');

is( $node->safe_psql('postgres', q{
SELECT count(*) FROM versions WHERE new_fence < old_fence}),
	0, 'no accepted write moved a fence backwards');
is( $node->safe_psql('postgres', q{
SELECT count(*) FROM (
	SELECT old_fence, lag(new_fence) OVER (PARTITION BY id ORDER BY seq) AS prev
	  FROM versions) s
 WHERE prev IS NOT NULL AND prev <> old_fence}),
	0, 'the versions of each row form one chain');
is( $node->safe_psql('postgres', q{
SELECT count(*) FROM versions v
 WHERE NOT EXISTS (SELECT 1 FROM attempts a
                    WHERE a.accepted AND a.id = v.id AND a.tok = v.new_fence)}),
	0, 'every accepted version carries the token of its writer');
is( $node->safe_psql('postgres', q{
SELECT count(*) FROM items i
 WHERE writes <> (SELECT count(*) FROM attempts a WHERE a.accepted AND a.id = i.id)}),
	0, 'each row counts exactly its accepted writes');

# Every rejection's detail names the row's fence, which must be above the rejected
# token and be a fence that row really had; or it says the row's lease was granted
# to a newer token, and one was.
my %had;
for (split /\n/, $node->safe_psql('postgres', 'SELECT id, new_fence FROM versions'))
{
	my ($id, $f) = split /\|/;
	$had{"$id/$f"} = 1;
}
my %newest;
for (split /\n/, $node->safe_psql('postgres', 'SELECT id, max(tok) FROM grants GROUP BY id'))
{
	my ($id, $t) = split /\|/;
	$newest{$id} = $t;
}
my ($not_stale, $superseded) = (0, 0);
my @examples;
for (split /\n/, $node->safe_psql('postgres',
		'SELECT id, tok, message FROM attempts WHERE NOT accepted'))
{
	my ($id, $tok, $msg) = split /\|/, $_, 3;
	if ($msg =~ /^The token in effect for this session is $tok, and lease "item-$id" has been granted to a newer token since\.$/)
	{
		$superseded++;
		next if $newest{$id} > $tok;
	}
	else
	{
		my @fences = grep { $_ > $tok && $had{"$id/$_"} } ($msg =~ /(\d+)/g);
		next if @fences;
	}
	$not_stale++;
	push @examples, "row $id token $tok: $msg" if @examples < 5;
}
note "rejected as superseded before the newer holder wrote: $superseded";
is($not_stale, 0, 'every rejected write was stale: a higher fence or token existed')
  or diag(join("\n", @examples));

my ($s_acc, $s_rej) = split /\|/, $node->safe_psql('postgres',
	"SELECT writes_accepted, writes_rejected FROM fence_stats WHERE database = 'postgres'");
cmp_ok($s_acc, '>=', $accepted, 'fence_stats counts the accepted writes');
is($s_rej, $rejected, 'fence_stats counts the rejected writes');

unlike(slurp_file($node->logfile), qr/TRAP|terminated by signal/,
	'no crash in the server log');
$node->stop;
done_testing();
