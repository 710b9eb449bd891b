# The module list at the top of src/fence.h is a layering: a module calls
# only modules below it.  Every function and variable fence.h declares
# belongs to the module whose "/* name.c */" section declares it; a C file
# that uses one declared by a module above it in the list fails here.
# Needs no server.
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

# Which module declares each extern function or variable.
my (%owner, $section);
for my $line (split /\n/, $header)
{
	if ($line =~ m{^/\* (\w+\.c) \*/})
	{
		$section = $1;
		next;
	}
	next unless defined $section;
	$owner{$1} = $section if $line =~ /^extern\s[^(;]*?\**\b(\w+)\s*[(;]/;
}
cmp_ok(scalar(keys %owner), '>=', 20, 'fence.h declares the modules\' functions');

for my $file (sort @files)
{
	next unless defined $rank{$file};
	my $code = slurp("$dir/$file");
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
