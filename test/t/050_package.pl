# What a user or PGXN reads before installing: META.json is valid for PGXN
# and names the version fence.control defines, every install and update
# script carries the \echo guard, LICENSE and CHANGELOG.md are there and the
# changelog has an entry for this version.  Needs no server.
use strict;
use warnings;

use JSON::PP;
use Test::More;

my $src = $ENV{FENCE_SRC} or BAIL_OUT('FENCE_SRC is not set (run through make test)');

sub slurp
{
	my ($path) = @_;
	open(my $fh, '<', $path) or return undef;
	local $/;
	return <$fh>;
}

my $control = slurp("$src/fence.control");
ok(defined $control, 'fence.control exists');
my ($version) = ($control // '') =~ /^default_version = '([^']+)'$/m;
like($version // '', qr/^\d+\.\d+$/, 'fence.control defines default_version as MAJOR.MINOR');

# META.json: the fields the PGXN meta spec 1.0.0 requires, and the version.
my $meta = eval { decode_json(slurp("$src/META.json") // '') };
ok($meta, 'META.json is valid JSON') or diag($@);
$meta //= {};
for my $field (qw(name abstract version maintainer license provides meta-spec))
{
	ok(defined $meta->{$field}, "META.json has $field");
}
is($meta->{name}, 'fence', 'META.json name');
is($meta->{'meta-spec'}{version}, '1.0.0', 'META.json follows meta-spec 1.0.0');
is($meta->{license}, 'postgresql', 'META.json license is the PostgreSQL License');
like($meta->{version} // '', qr/^\d+\.\d+\.\d+$/, 'META.json version is a semantic version');
is($meta->{version}, "$version.0", 'META.json version is fence.control\'s default_version');
my $provides = $meta->{provides}{fence} // {};
is($provides->{version}, $meta->{version}, 'META.json provides fence at that version');
ok(defined $provides->{file} && -e "$src/$provides->{file}", 'META.json provides.fence.file exists');
is($meta->{prereqs}{runtime}{requires}{PostgreSQL}, '15.0.0',
	'META.json requires PostgreSQL 15 or later');

# Every script PostgreSQL may run is guarded against being run in psql.
my @scripts = (glob("$src/src/sql/fence--*.sql"), "$src/src/sql/install.sql");
cmp_ok(scalar(@scripts), '>=', 3, 'install and update scripts found');
for my $script (@scripts)
{
	my $text = slurp($script) // '';
	my $name = $script =~ s{.*/}{}r;
	my $command = $name =~ /--.*--/ ? 'ALTER EXTENSION fence UPDATE' : 'CREATE EXTENSION fence';
	like($text, qr/^\\echo Use "\Q$command\E[^"]*" to load this file\. \\quit$/m,
		"$name refuses to run outside $command");
}
my @to_version = glob("$src/src/sql/fence--*--$version.sql");
ok(@to_version || $version eq '1.0', "an update script to $version");

like(slurp("$src/LICENSE") // '', qr/^PostgreSQL License$/m, 'LICENSE is the PostgreSQL License');
like(slurp("$src/CHANGELOG.md") // '', qr/^## \Q$version\E\b/m, "CHANGELOG.md has an entry for $version");

done_testing();
