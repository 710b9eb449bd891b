# The fault test (test/chaos/): random lease operations and fenced writes
# from four client processes while a nemesis pauses, kills, crashes,
# partitions, fails over and moves the lease clock, and a checker of the
# safety properties over the whole history.  See doc/reliability.md.
#
# Here: the checker's self-test (a hand-made bad history per property, each
# caught, and a good one accepted); a run with the trigger left out, which
# the checker must fail; and a seeded short run of the whole schedule
# (FENCE_CHAOS_SEED changes the seed), which must pass and reach its
# minimum counts.  With FENCE_CHAOS=full (make chaos) the run is the full
# schedule of about 20 minutes instead, and FENCE_CHAOS_SECONDS sets its
# length.  A failed run keeps its seed, history, checker report and the
# servers' logs in the directory it prints.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use File::Basename qw(dirname);
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

my $python = '/usr/bin/python3';
my $dir = "$FindBin::RealBin/../chaos";
my ($bindir) = grep { -x "$_/pg_ctl" } split /:/, $ENV{PATH};
die "no pg_ctl in PATH" unless $bindir;
my $full = ($ENV{FENCE_CHAOS} // '') eq 'full';

sub run_py
{
	my ($name, @args) = @_;
	my $out = '';
	my $ok = IPC::Run::run([ $python, @args ], '>&', \$out);
	note $out;
	return ($ok, $out);
}

my ($ok, $out) = run_py('selftest', "$dir/selftest.py");
ok($ok, 'checker self-test: every hand-made bad history is caught, the good one passes');
is(scalar(() = $out =~ /^ok p\d_/mg), 9, 'checker self-test: one bad history per property');

SKIP:
{
	skip 'make chaos: the full run only', 2 if $full;
	($ok, $out) = run_py('unprotected', "$dir/run.py", '--bindir', $bindir,
		'--unprotected', '--no-faults', '--seconds', '25', '--seed', '7',
		'--workdir', "$PostgreSQL::Test::Utils::tmp_check/chaos-unprotected");
	ok($ok, 'without fence_protect the checker reports violations');
	like($out, qr/^\s+P[34] .*VIOLATED/m,
		'... of the row logs (stale or forged tokens written)');
}

my @run = ('--profile', $full ? 'full' : 'short',
	'--seed', $ENV{FENCE_CHAOS_SEED} // ($full ? int(rand(1 << 30)) : 20261203),
	'--workdir', "$PostgreSQL::Test::Utils::tmp_check/chaos-run");
push @run, '--seconds', $ENV{FENCE_CHAOS_SECONDS} if $ENV{FENCE_CHAOS_SECONDS};
($ok, $out) = run_py('run', "$dir/run.py", '--bindir', $bindir, @run);
diag(join "\n", grep { /^chaos: / } split /\n/, $out);
ok($ok, 'the fault schedule: no violation, and at least the minimum counts');
like($out, qr/^\s+violations: none$/m, '... the checker found no violation');
unlike($out, qr/below the minimum counts/, '... and the run exercised enough');

done_testing();
