# The SQL examples of the documentation, run (the docs suite's "examples").
#
# Every ```sql block of doc/*.md is run with psql, page by page, in a fresh
# database for each page with fence created in it (the blocks of a page in
# order, in one psql session, so that a later block may use what an earlier
# one set), on a node with fence preloaded and the test clock on.  So an
# example cannot drift from what fence does:
#
#   - a block followed by <!-- output --> and a fenced block must print
#     exactly that block (what psql prints in a terminal, less the
#     commands: results, command tags, notices and errors);
#   - any other block must run without an ERROR;
#   - <!-- example-setup: SQL --> runs SQL, hidden from the rendered page,
#     before the blocks that follow it on that page (a table the page's
#     example assumes, say); the database of each page is otherwise empty.
#
# What each block printed is kept in TESTDIR/examples/PAGE-LINE.out.  The
# README's example is sql/readme.sql (compared by test/docs/check.py);
# doc/drivers.md's driver examples run in test/t/041_drivers.pl.
use strict;
use warnings;

use File::Basename;
use FindBin;
use lib "$FindBin::RealBin/../t";
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $src = $ENV{FENCE_SRC} || "$FindBin::RealBin/../..";
my @pages = map { "doc/" . basename($_) } sort glob("$src/doc/*.md");
my $results = ($ENV{TESTDIR} || PostgreSQL::Test::Utils::tempdir) . "/examples";
mkdir $results;

# The pieces of a page, in order: setups and SQL blocks, each block with
# the output the page states for it (undef: none stated).
sub pieces
{
	my ($text) = @_;
	my @out;
	while ($text =~ /<!-- example-setup: (.*?) -->|^([ ]*)```sql\n(.*?)^\2```\n(?:\s*<!-- output -->\n([ ]*)```[a-z]*\n(.*?)^\4```\n)?/msg)
	{
		if (defined $1)
		{
			push @out, { setup => $1 };
			next;
		}
		my ($indent, $sql, $oindent, $output) = ($2, $3, $4, $5);
		my $line = 1 + (substr($text, 0, $-[0]) =~ tr/\n//);
		# A block in a list item is indented: so are its lines.
		$sql =~ s/^$indent//mg;
		$output =~ s/^$oindent//mg if defined $output;
		push @out, { sql => $sql, output => $output, line => $line };
	}
	return @out;
}

my $node = fence_node('examples', conf => "fence.test_clock = on\n");
my $n = 0;

for my $page (@pages)
{
	my @pieces = pieces(slurp_file("$src/$page"));
	my @blocks = grep { defined $_->{sql} } @pieces;
	next unless @blocks;
	my $db = 'doc_' . (lc(basename($page)) =~ s/\W/_/gr);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION fence");

	# One script for the page: each block's output starts after a mark.
	my $script = '';
	my $i = 0;
	for my $p (@pieces)
	{
		if (defined $p->{setup})
		{
			$script .= "\\o /dev/null\n$p->{setup}\n\\o\n";
			next;
		}
		$script .= "\\echo '<<<example " . $i++ . ">>>'\n$p->{sql}";
	}
	my $out = '';
	IPC::Run::run(
		[ 'psql', '-X', '-d', $node->connstr($db) ],
		'<', \$script, '>&', \$out,
		IPC::Run::timeout(120));
	# psql names its input in messages: keep only the message.
	$out =~ s/^psql:<stdin>:\d+: //mg;
	my @outputs = split /^<<<example \d+>>>\n/m, $out, -1;
	my $before = shift @outputs;
	is($before, '', "$page: the setup runs without a message");
	for my $p (@blocks)
	{
		my $got = shift @outputs;
		$got = '(no output: psql stopped)' unless defined $got;
		$n++;
		my $name = basename($page, '.md') . "-$p->{line}.out";
		open(my $fh, '>', "$results/$name") or die "$results/$name: $!";
		print $fh $got;
		close $fh;
		if (defined $p->{output})
		{
			is($got, $p->{output}, "$page, line $p->{line}: prints what the page says");
		}
		else
		{
			unlike($got, qr/^(ERROR|FATAL|PANIC):/m,
				"$page, line $p->{line}: runs without an error");
			diag($got) if $got =~ /^(ERROR|FATAL|PANIC):/m;
		}
	}
}
ok($n > 0, "$n SQL blocks were run");

$node->stop;
done_testing();
