# The module list at the top of src/fence.h is a layering: a module calls
# only modules below it.  Every function and variable fence.h declares
# belongs to the module whose "/* name.c */" section declares it; a C file
# that uses one declared by a module above it in the list fails here.  The
# files of the lease table share a private header, src/lease_internal.h,
# whose list of those files is theirs in fence.h, in the same order, and
# whose sections are read the same way; so do the breakers' files and
# src/breaker_internal.h.  Needs no server.
use strict;
use warnings;

use Test::More;

my $src = $ENV{FENCE_SRC} or BAIL_OUT('FENCE_SRC is not set (run through make test)');
my $dir = "$src/src";

sub slurp
{
	my ($path) = @_;
	open(my $fh, '<', $path) or die "$path: $!";
	local $/;
	return <$fh>;
}

my $header = slurp("$dir/fence.h");

# The module list, top to bottom: " *\tname.c\t\twhat it is".
my @modules = $header =~ /^ \*\t(\w+\.c)\t/mg;
my %rank;
@rank{@modules} = (0 .. $#modules);
cmp_ok(scalar(@modules), '>=', 5, 'fence.h lists the modules');
is($modules[0], 'init.c', 'init.c, the wiring, is at the top');

my @files = map { s{.*/}{}r } glob("$dir/*.c");
is_deeply([ sort @files ], [ sort @modules ], 'every C file is in the list, and only those');

# The files that share a private header (lease_internal.h, the lease
# table's; breaker_internal.h, the breakers'): each header lists them, in
# fence.h's order.  Not every lease_*.c file is one of the table's: the SQL
# faces (lease_sql.c, lease_watch_many.c) sit above it and lease_counts.c,
# with a header of its own, below it.
my %private = (
	'lease_internal.h' => qr/^lease_/,
	'breaker_internal.h' => qr/^breaker/);
my (%internal_text, %family);
for my $h (sort keys %private)
{
	$internal_text{$h} = slurp("$dir/$h");
	my @listed = $internal_text{$h} =~ /^ \*\t(\w+\.c)\t/mg;
	my %in = map { $_ => 1 } @listed;
	cmp_ok(scalar(@listed), '>=', 2, "$h lists its files");
	is_deeply([ grep { $_ !~ $private{$h} } @listed ], [],
		"$h lists only files of its family's name");
	is_deeply(\@listed, [ grep { $in{$_} } @modules ],
		"$h lists its files in fence.h's order");
	$family{$_} = $h for @listed;
}

# Which module declares each extern function or variable: fence.h's, and
# lease_internal.h's (those only the lease table's files can see).
sub owners
{
	my ($text) = @_;
	my (%owner, $section);
	for my $line (split /\n/, $text)
	{
		if ($line =~ m{^/\* (\w+\.c) \*/})
		{
			$section = $1;
			next;
		}
		next unless defined $section;
		$owner{$1} = $section
		  if $line =~ /^extern\s[^(;]*?\**\b(\w+)\s*[(;\[]/;
	}
	return %owner;
}
my %public = owners($header);
my %internal = map { $_ => { owners($internal_text{$_}) } } keys %private;
cmp_ok(scalar(keys %public), '>=', 20, 'fence.h declares the modules\' functions');
cmp_ok(scalar(keys %{ $internal{$_} }), '>=', 5, "$_ declares its files' functions")
  for sort keys %private;

# Only the files a private header lists include it.
for my $file (sort @files)
{
	my $code = slurp("$dir/$file");
	for my $h (sort keys %private)
	{
		my $includes = $code =~ /^#include "\Q$h\E"/m;
		ok(!$includes || ($family{$file} // '') eq $h,
			"$file includes $h only if it is one of its files");
	}
}

for my $file (sort @files)
{
	next unless defined $rank{$file};
	my $code = slurp("$dir/$file");
	my %owner = (%public, $family{$file} ? %{ $internal{ $family{$file} } } : ());
	$code =~ s{/\*.*?\*/}{}gs;	# comments may name anything
	my @up;
	for my $name (sort keys %owner)
	{
		my $owner = $owner{$name};
		next if $owner eq $file || !defined $rank{$owner};
		push @up, "$name ($owner)"
		  if $rank{$owner} < $rank{$file} && $code =~ /\b\Q$name\E\b/;
	}
	is(join(', ', @up), '', "$file calls no module above it");
}

done_testing();
