# The end of the token range under concurrency.
#
# The counter is moved to 50000 below 2^63-1; four clients, each in one
# long transaction (the worst case for the sequence's locks: every
# reservation's lock is held to the end of its transaction), take tokens
# until there are none left.  Proven: every client ends with the counter's
# own exhaustion error (2200H), never with nextval's error or a deadlock;
# no token is handed out twice; 2^63-1 itself is handed out.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FenceTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = fence_node('end', conf => "max_connections = 20\ndeadlock_timeout = 100ms\n");
install_token_helpers($node, 'postgres');
$node->safe_psql('postgres', 'SELECT fence_advance_tokens(9223372036854775807 - 50000)');

my $loop = q{
BEGIN;
DO $$
BEGIN
	LOOP
		PERFORM take_lease_token('end-' || pg_backend_pid());
	END LOOP;
END $$;
ROLLBACK;
};
my @clients = map { bg_start($node, 'postgres', $loop, timeout => 300) } 1 .. 4;

# Read every client's output as it comes (a client whose notices are not
# read would stop), until each has reached its error.
my $deadline = time + 300;
my @running = @clients;
while (@running && time < $deadline)
{
	eval { $_->{run}->pump_nb } for @running;
	@running = grep { $_->{err} !~ /ERROR:/ } @running;
	usleep(10_000) if @running;
}
my @tokens;
my $i = 0;
for my $h (@clients)
{
	$i++;
	push @tokens, bg_finish($h);
	like($h->{err}, qr/the fencing token counter of database "postgres" is exhausted/,
		"client $i ends when the counter is exhausted");
	unlike($h->{err}, qr/deadlock|nextval|reached maximum/,
		"client $i sees no deadlock and no error from nextval");
}

my @dups = check_unique(@tokens);
is(scalar(@dups), 0, 'no token handed out twice') or diag("duplicates: @dups[0..9]");
ok((grep { $_ eq '9223372036854775807' } @tokens), '2^63-1 is handed out');
# Every token is one of the last 100000 (19 digits, compared as strings).
is(scalar(grep { length($_) != 19 || $_ le '9223372036854725807' } @tokens), 0,
	'every token is above the point the counter was moved to');
# Tokens may have gaps (a block two clients reserved at once is used by
# one of them), but not many.
cmp_ok(scalar(@tokens), '>', 25000, 'most of the last 50000 tokens were handed out')
  or diag(scalar(@tokens) . ' tokens');
is($node->safe_psql('postgres', 'SELECT fence_advance_tokens(0)'),
	'9223372036854775807', 'the counter is at 2^63-1');

$node->stop;
done_testing();
