# Installing a new fence.so while the server runs, as an upgrade does
# before its restart.  With fence in shared_preload_libraries the
# postmaster loaded the library at start, and every backend it starts
# inherits that copy: PostgreSQL's dfmgr.c finds "$libdir/fence" among the
# libraries already loaded (by name, then by inode) and never reads the
# file again.  So until the restart every new backend runs the code that
# laid out shared memory, and the lease table stays consistent.
#
# Proven here, on a server with leases held and fenced rows written:
#  - after fence.so on disk is replaced (the way install(1) and dpkg do it:
#    a new file renamed over the old name) by a file that is not fence at
#    all, new backends still take, renew and check leases, the trigger
#    still rejects a stale writer, and tokens keep growing;
#  - after the restart (with the file restored) the lease table starts
#    empty and every token is above every token handed out before it.
# Replacing the file in place (cp over it) instead would change the pages
# the running processes have mapped: the README says to use make install
# or the package manager.
use strict;
use warnings;

use File::Copy;
use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fence_node('swap', conf => "fence.test_clock = on\n");
my $pkglibdir = $node->config_data('--pkglibdir');
my $lib = "$pkglibdir/fence.so";
my $aside = "$lib.test-aside";
my $other = "$pkglibdir/dblink.so";
ok(-f $lib && -f $other, 'fence.so and another library (dblink.so) are installed');

$node->safe_psql('postgres', q{
CREATE TABLE jobs (id int PRIMARY KEY, state text, fence fence_token NOT NULL DEFAULT 0);
SELECT fence_protect('jobs');
INSERT INTO jobs VALUES (1, 'new'), (2, 'new');
});
# A token from a lease that was broken, below the one written to row 1.
my $stale = $node->safe_psql('postgres', q{
SELECT fence_try_lease('job-2', '1 min', owner => 'worker-b');
SELECT fence_break('job-2');});
($stale) = split /\n/, $stale;
my $held = $node->safe_psql('postgres',
	q{SELECT fence_try_lease('job-1', '1 hour', owner => 'worker-a')});
cmp_ok($held, '>', $stale, 'the held lease\'s token is above the broken one');
$node->safe_psql('postgres', qq{
BEGIN; SELECT fence_use_token($held); UPDATE jobs SET state = 'a' WHERE id = 1; COMMIT;});
my $before = $node->safe_psql('postgres', 'SELECT fence_advance_tokens(0)');

# Put a file that is not fence where fence.so was: the old file is renamed
# aside (its inode lives on, as it would once unlinked), the stranger is
# renamed into place.
my $restored = 0;
sub restore_library
{
	return if $restored;
	rename($aside, $lib) or die "restoring $lib: $!";
	$restored = 1;
}
END { restore_library() if -e $aside; }

my ($ret, $out, $err);
rename($lib, $aside) or die "moving $lib aside: $!";
copy($other, "$lib.new") or die "copying $other: $!";
rename("$lib.new", $lib) or die "renaming into $lib: $!";

# What is on disk now is not fence: reading the file afresh (under a path
# PostgreSQL has not loaded it by) finds none of fence's functions.
($ret, $out, $err) = $node->psql('postgres', qq{
CREATE FUNCTION probe_now() RETURNS timestamptz AS '$pkglibdir/./fence.so', 'fence_now' LANGUAGE C});
isnt($ret, 0, 'the file now at fence.so has no fence code');
like($err, qr/could not find function "fence_now"/, '... as loading it afresh reports');

# New backends, every one of them: the library on disk is never read.
($ret, $out, $err) = $node->psql('postgres', q{SELECT fence_now() IS NOT NULL});
is($ret, 0, 'a new backend calls fence after fence.so was replaced on disk')
  or diag($err);
is($node->safe_psql('postgres', qq{SELECT fence_lease_status('job-1', $held)}),
	'held', 'the lease held before is still held: same shared lease table');
is($node->safe_psql('postgres', q{SELECT fence_try_lease('job-1', '1 min', owner => 'worker-c')}),
	'', 'and another owner cannot take it');
is($node->safe_psql('postgres', qq{SELECT fence_renew('job-1', $held, '1 hour')}),
	't', 'its holder renews it');
my $during = $node->safe_psql('postgres', q{SELECT fence_try_lease('job-3', '1 min')});
cmp_ok($during, '>', $before, 'a new grant takes a token above every earlier one');
is(sql_state($node, 'postgres',
		"BEGIN; SELECT fence_use_token($stale); UPDATE jobs SET state = 'stale' WHERE id = 1; COMMIT;"),
	'LF001', 'the trigger still rejects a stale writer');

# The restart loads the file on disk: the original again.
restore_library();
my $last = $node->safe_psql('postgres', 'SELECT fence_advance_tokens(0)');
$node->restart;
is($node->safe_psql('postgres', 'SELECT count(*) FROM fence_leases'), '0',
	'after the restart the lease table starts empty');
my $after = $node->safe_psql('postgres', q{SELECT fence_try_lease('job-1', '1 min', owner => 'worker-c')});
cmp_ok($after, '>', $last, 'the first token after the restart is above every token before it');
cmp_ok($after, '>', $during, '... including those granted while the file was replaced');
is($node->safe_psql('postgres', 'SELECT id, state FROM jobs ORDER BY id'),
	"1|a\n2|new", 'the fenced rows are as they were written');

$node->stop;
done_testing();
