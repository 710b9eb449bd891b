# FenceStorage: helpers for the tests where leases come from one server and
# the fenced rows live on others (050, 051).
#
# storage_node() makes a server that holds fenced rows; install_writer()
# gives a lease server a way to write to them (dblink stands in for the
# worker's own connection to each storage server: the storage server's
# trigger never calls back).  The checks read what each storage server
# logged of its accepted writes.
package FenceStorage;

use strict;
use warnings;

use Exporter 'import';
use FenceTAP;
use PostgreSQL::Test::Cluster;
use Test::More;

our @EXPORT = qw(storage_node install_writer check_storage stale_probe sync_standby);

# A server with fence installed (fence_node options pass through: preload =>
# 0 leaves the library out) and table jobs: rows 1..$rows, protected by the
# plain trigger.  Its database takes tokens from the lease server's leases,
# so it says so, as doc/scaling.md tells users: fence.external_tokens = on
# (its own counter never issues one, and refuses every token otherwise).  An AFTER trigger logs every accepted UPDATE as (id, old
# fence, new fence) in jobs_versions, in order.
sub storage_node
{
	my ($name, $rows, %opt) = @_;
	my $node = fence_node($name, %opt);
	$node->safe_psql('postgres', qq{
CREATE TABLE jobs (id int PRIMARY KEY, payload text, writes bigint NOT NULL DEFAULT 0,
                   fence fence_token NOT NULL DEFAULT 0);
INSERT INTO jobs (id) SELECT generate_series(1, $rows);
SELECT fence_protect('jobs');
ALTER DATABASE postgres SET fence.external_tokens = on;
CREATE TABLE jobs_versions (seq bigserial, id int, old_fence bigint, new_fence bigint);
CREATE FUNCTION log_version() RETURNS trigger LANGUAGE plpgsql AS \$\$
BEGIN
	INSERT INTO jobs_versions (id, old_fence, new_fence)
	VALUES (NEW.id, OLD.fence::bigint, NEW.fence::bigint);
	RETURN NULL;
END \$\$;
CREATE TRIGGER jobs_log AFTER UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION log_version();

-- What a stale holder would do: one write per token, each in its own
-- subtransaction, half with fence_use_token and half with the token in
-- the row.  Returns how each write ended (its SQLSTATE, or 'accepted').
CREATE FUNCTION stale_probe(p_id int, toks bigint[])
	RETURNS TABLE (tok bigint, outcome text) LANGUAGE plpgsql AS \$\$
DECLARE i int := 0;
BEGIN
	FOREACH tok IN ARRAY toks LOOP
		i := i + 1;
		BEGIN
			IF i % 2 = 0 THEN
				UPDATE jobs SET payload = 'stale', fence = tok WHERE id = p_id;
			ELSE
				PERFORM fence_use_token(tok);
				UPDATE jobs SET payload = 'stale' WHERE id = p_id;
			END IF;
			outcome := 'accepted';
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS outcome = RETURNED_SQLSTATE;
		END;
		RETURN NEXT;
	END LOOP;
END \$\$;
});
	return $node;
}

# On the lease server: dblink, the storage servers' addresses, and
# store_write(server, id, token, in_row), which writes row id on that server
# as a worker holding that token would (with fence_use_token, or with the
# token in the row when in_row) and records the outcome in attempts.
# Returns NULL when accepted, else the SQLSTATE.
sub install_writer
{
	my ($lease, %servers) = @_;
	my $values = join ', ', map {
		(my $cs = $servers{$_}->connstr('postgres')) =~ s/'/''/g;
		"('$_', '$cs')"
	} sort keys %servers;
	$lease->safe_psql('postgres', qq{
CREATE EXTENSION dblink;
CREATE TABLE storage_servers (name text PRIMARY KEY, connstr text NOT NULL);
INSERT INTO storage_servers VALUES $values;
CREATE TABLE attempts (server text, id int, tok bigint, accepted bool, message text);
CREATE FUNCTION store_write(srv text, p_id int, p_tok bigint, in_row bool)
	RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE
	st text;
	msg text;
	detail text;
BEGIN
	IF NOT srv = ANY (coalesce(dblink_get_connections(), '{}')) THEN
		PERFORM dblink_connect(srv, (SELECT connstr FROM storage_servers WHERE name = srv));
	END IF;
	BEGIN
		IF in_row THEN
			PERFORM dblink_exec(srv, format(
				'UPDATE jobs SET writes = writes + 1, payload = %L, fence = %s WHERE id = %s',
				'w' || p_tok, p_tok, p_id));
		ELSE
			PERFORM dblink_exec(srv, format(
				'SELECT fence_use_token(%s); UPDATE jobs SET writes = writes + 1, payload = %L WHERE id = %s',
				p_tok, 'w' || p_tok, p_id));
		END IF;
		INSERT INTO attempts VALUES (srv, p_id, p_tok, true, NULL);
		RETURN NULL;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
			detail = PG_EXCEPTION_DETAIL;
		INSERT INTO attempts VALUES (srv, p_id, p_tok, false, msg || coalesce(' ' || detail, ''));
		RETURN st;
	END;
END \$\$;
});
	return;
}

# What a storage server's log of accepted writes proves: on every row the
# fence never went backwards, in one chain of versions, and (when the
# writers' attempts are known, as a list of "id|token|accepted|message")
# each accepted version carries an accepted writer's token, each row counts
# exactly its accepted writes, and every rejected write was stale: its
# message's detail names a fence above its token that the row really had.
sub check_storage
{
	my ($node, $what, @attempts) = @_;
	# Each version starts from the fence the previous one left (one chain)
	# and does not lower it.
	my $broken = $node->safe_psql('postgres', q{
WITH v AS (
	SELECT id, seq, old_fence, new_fence,
	       lag(new_fence) OVER (PARTITION BY id ORDER BY seq) AS before
	  FROM jobs_versions)
SELECT string_agg(format('row %s: %s after %s to %s', id, new_fence, before, old_fence), '; ')
  FROM v WHERE new_fence < old_fence OR before <> old_fence});
	is($broken, '', "$what: on every row the accepted fences never go backwards, in one chain");
	return unless @attempts;

	my (%ok_tok, %ok_count, %had, @bad);
	for (@attempts)
	{
		my ($id, $tok, $acc) = split /\|/;
		next unless $acc eq 't';
		$ok_tok{"$id/$tok"} = 1;
		$ok_count{$id}++;
	}
	for (split /\n/, $node->safe_psql('postgres', 'SELECT id, new_fence FROM jobs_versions'))
	{
		my ($id, $f) = split /\|/;
		$had{"$id/$f"} = 1;
		push @bad, "version $id/$f has no accepted writer" unless $ok_tok{"$id/$f"};
	}
	for (split /\n/, $node->safe_psql('postgres', 'SELECT id, writes FROM jobs'))
	{
		my ($id, $w) = split /\|/;
		push @bad, "row $id counts $w writes" if $w != ($ok_count{$id} // 0);
	}
	for (@attempts)
	{
		my ($id, $tok, $acc, $msg) = split /\|/, $_, 4;
		next if $acc eq 't';
		push @bad, "row $id token $tok: $msg"
		  unless grep { $_ > $tok && $had{"$id/$_"} } ($msg =~ /(\d+)/g);
	}
	is(scalar(@bad), 0,
		"$what: every version has its writer, every write is counted once, every rejection was stale")
	  or diag(join("\n", @bad[ 0 .. ($#bad < 4 ? $#bad : 4) ]));
	return;
}

# Run stale_probe on a storage server for the tokens on row $id; returns a
# hash outcome => count.
sub stale_probe
{
	my ($node, $id, @toks) = @_;
	my %n;
	$n{$_}++ for split /\n/, $node->safe_psql('postgres',
		"SELECT outcome FROM stale_probe($id, ARRAY[" . join(',', @toks) . ']::bigint[])');
	return \%n;
}

# A streaming standby of $primary (initialized with allows_streaming), named
# $name, started, and made the primary's synchronous standby.
sub sync_standby
{
	my ($primary, $name) = @_;
	$primary->backup("${name}_base");
	my $standby = PostgreSQL::Test::Cluster->new($name);
	$standby->init_from_backup($primary, "${name}_base", has_streaming => 1);
	$standby->start;
	$primary->safe_psql('postgres',
		"ALTER SYSTEM SET synchronous_standby_names = '$name'; SELECT pg_reload_conf()");
	ok( $primary->poll_query_until('postgres',
			"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = '$name'"),
		"$name is a synchronous standby of " . $primary->name);
	return $standby;
}

1;
