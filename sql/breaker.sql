-- Shared circuit breakers: every transition on the virtual clock, the
-- probe lease, a stale probe's late report, reset, capacity, bad input.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

-- Tokens are compared to a base, since other tests use the same counter;
-- the notices about stale probes name whole tokens, so start at a round one
-- (below the one the counter test moves to).
SELECT fence_advance_tokens(500000)::text::bigint AS base \gset
CREATE TEMP TABLE base AS SELECT :base AS b;
CREATE FUNCTION pg_temp.rel(t fence_token) RETURNS bigint
	LANGUAGE sql AS $$ SELECT t::text::bigint - b FROM base $$;
CREATE VIEW pg_temp.b AS
	SELECT breaker, state, consecutive_failures AS consec, window_calls AS wcalls,
	       window_failures AS wfails, opened_at, open_until, open_for,
	       pg_temp.rel(probe_token) AS probe, probe_expires_at, trips,
	       fast_failures AS fast, successes, failures
	  FROM fence_breakers WHERE database = current_database();
-- The probe lease of a breaker, as fence_leases shows it.
CREATE VIEW pg_temp.probe_lease AS
	SELECT key, pg_temp.rel(token) AS token, scope, owner = 'breaker probe' AS probe_owner,
	       expires_at, live
	  FROM fence_leases WHERE key LIKE 'breaker:%' AND database = current_database();

SELECT fence_set_clock('2024-03-01 09:00:00+00');

-- A breaker never asked about is created closed; the call goes through.
SELECT * FROM fence_breaker_allow('prov', failure_threshold => 3, window_size => 10, failure_rate => 1);
SELECT * FROM pg_temp.b;

-- Closed: failures are counted; a success resets the consecutive count.
SELECT fence_breaker_report('prov', false);
SELECT fence_breaker_report('prov', false);
SELECT fence_breaker_report('prov', true);
SELECT breaker, state, consec, wcalls, wfails FROM pg_temp.b;

-- Three failures in a row trip it: open for open_for (30 s).
SELECT fence_breaker_report('prov', false);
SELECT fence_breaker_report('prov', false);
SELECT fence_breaker_report('prov', false);
SELECT * FROM pg_temp.b;

-- Open: callers fail fast until open_until, which they are told.
SELECT * FROM fence_breaker_allow('prov', failure_threshold => 3, window_size => 10, failure_rate => 1);
SELECT fence_advance_clock('29.999999 seconds');
SELECT * FROM fence_breaker_allow('prov', failure_threshold => 3, window_size => 10, failure_rate => 1);
-- A late plain report (a call allowed before the trip) is not counted.
SELECT fence_breaker_report('prov', true);
SELECT state, successes, failures FROM pg_temp.b;

-- At open_until exactly, one caller becomes the probe: its right is a
-- detached lease on 'breaker:prov' with the probe TTL (30 s).
SELECT fence_advance_clock('0.000001 seconds');
SELECT decision, pg_temp.rel(probe_token) AS probe_token, retry_at
  FROM fence_breaker_allow('prov', failure_threshold => 3, window_size => 10, failure_rate => 1) \gset p1_
SELECT :'p1_decision' AS decision, :p1_probe_token AS probe_token;
SELECT * FROM pg_temp.probe_lease;
SELECT state, probe, probe_expires_at FROM pg_temp.b;
-- Everyone else fails fast until the probe's lease would run out.
SELECT * FROM fence_breaker_allow('prov', failure_threshold => 3, window_size => 10, failure_rate => 1);
-- Half-open: plain reports are not counted either.
SELECT fence_breaker_report('prov', false);

-- The probe fails: open again for twice as long (60 s); its lease is freed.
SELECT fence_breaker_report('prov', false, (:p1_probe_token + :base)::text::fence_token);
SELECT state, opened_at, open_until, open_for, probe, trips FROM pg_temp.b;
SELECT count(*) AS probe_leases FROM pg_temp.probe_lease;
-- Its token is spent: reporting it again is ignored, and says so.
SELECT fence_breaker_report('prov', true, (:p1_probe_token + :base)::text::fence_token);

-- After 60 s a new probe, with a larger token, succeeds: closed.
SELECT fence_advance_clock('60 seconds');
SELECT decision, pg_temp.rel(probe_token) AS probe_token
  FROM fence_breaker_allow('prov', failure_threshold => 3, window_size => 10, failure_rate => 1) \gset p2_
SELECT :'p2_decision' AS decision, :p2_probe_token > :p1_probe_token AS larger_token;
SELECT fence_breaker_report('prov', true, (:p2_probe_token + :base)::text::fence_token);
SELECT * FROM pg_temp.b;
SELECT count(*) AS probe_leases FROM pg_temp.probe_lease;
SELECT * FROM fence_breaker_allow('prov', failure_threshold => 3, window_size => 10, failure_rate => 1);

-- The open time doubles with each failed probe, up to max_open_for.
SELECT fence_set_clock('2024-03-01 10:00:00+00');
SELECT decision FROM fence_breaker_allow('cap', failure_threshold => 1, open_for => '30 seconds', max_open_for => '100 seconds');
SELECT fence_breaker_report('cap', false);
CREATE FUNCTION pg_temp.probe_fails(wait interval) RETURNS TABLE (state text, open_for interval, open_until timestamptz)
	LANGUAGE plpgsql AS $$
DECLARE
	a record;
BEGIN
	PERFORM fence_advance_clock(wait);
	SELECT * INTO a FROM fence_breaker_allow('cap', failure_threshold => 1, open_for => '30 seconds', max_open_for => '100 seconds');
	IF a.decision <> 'probe' THEN
		RAISE EXCEPTION 'expected a probe, got %', a.decision;
	END IF;
	PERFORM fence_breaker_report('cap', false, a.probe_token);
	RETURN QUERY SELECT b.state, b.open_for, b.open_until FROM pg_temp.b WHERE breaker = 'cap';
END $$;
SELECT state, open_for, open_until FROM pg_temp.b WHERE breaker = 'cap';
SELECT * FROM pg_temp.probe_fails('30 seconds');
SELECT * FROM pg_temp.probe_fails('60 seconds');
SELECT * FROM pg_temp.probe_fails('100 seconds');
\set VERBOSITY terse
SELECT * FROM pg_temp.probe_fails('99 seconds');	-- too early: not a probe
\set VERBOSITY default

-- Without max_open_for, the cap is 10 minutes, or open_for if longer.
SELECT decision FROM fence_breaker_allow('long', failure_threshold => 1, open_for => '1 hour');
SELECT fence_breaker_report('long', false);
SELECT fence_advance_clock('1 hour');
SELECT pg_temp.rel(probe_token) AS l FROM fence_breaker_allow('long', failure_threshold => 1, open_for => '1 hour') \gset
SELECT fence_breaker_report('long', false, (:l + :base)::text::fence_token);
SELECT state, open_for FROM pg_temp.b WHERE breaker = 'long';
SELECT decision FROM fence_breaker_allow('short', failure_threshold => 1, open_for => '8 minutes');
SELECT fence_breaker_report('short', false);
SELECT fence_advance_clock('8 minutes');
SELECT pg_temp.rel(probe_token) AS s FROM fence_breaker_allow('short', failure_threshold => 1, open_for => '8 minutes') \gset
SELECT fence_breaker_report('short', false, (:s + :base)::text::fence_token);
SELECT state, open_for FROM pg_temp.b WHERE breaker = 'short';

-- A probe that stalls past its TTL: its lease runs out, the next caller
-- probes with a larger token and the dependency is still down, so the
-- breaker reopens.  The first probe's call then returns and reports
-- success with its old token: ignored, and the breaker stays open.
SELECT fence_set_clock('2024-03-01 11:00:00+00');
SELECT decision FROM fence_breaker_allow('slow', failure_threshold => 1, probe_ttl => '10 seconds');
SELECT fence_breaker_report('slow', false);
SELECT fence_advance_clock('30 seconds');
SELECT pg_temp.rel(probe_token) AS a FROM fence_breaker_allow('slow', failure_threshold => 1, probe_ttl => '10 seconds') \gset
SELECT fence_advance_clock('10 seconds');
SELECT * FROM pg_temp.probe_lease;
SELECT decision, pg_temp.rel(probe_token) AS b FROM fence_breaker_allow('slow', failure_threshold => 1, probe_ttl => '10 seconds') \gset
SELECT :'decision' AS decision, :b > :a AS larger_token;
-- While B's probe runs, A's late report is ignored ...
SELECT fence_breaker_report('slow', true, (:a + :base)::text::fence_token);
SELECT state, probe = :b AS waits_for_b FROM pg_temp.b WHERE breaker = 'slow';
-- ... and after B's failure reopened it, too.
SELECT fence_breaker_report('slow', false, (:b + :base)::text::fence_token);
SELECT fence_breaker_report('slow', true, (:a + :base)::text::fence_token);
SELECT state, open_until, successes, failures FROM pg_temp.b WHERE breaker = 'slow';

-- A probe whose lease ran out but which nobody replaced is still the
-- breaker's probe: its report decides.
SELECT fence_advance_clock('60 seconds');
SELECT pg_temp.rel(probe_token) AS c FROM fence_breaker_allow('slow', failure_threshold => 1, probe_ttl => '10 seconds') \gset
SELECT fence_advance_clock('15 seconds');
SELECT fence_breaker_report('slow', true, (:c + :base)::text::fence_token);

-- The failure rate over a window of recent calls trips it too: with a
-- window of 4 and a rate of 0.5, two failures among the last four calls.
SELECT decision FROM fence_breaker_allow('rate', failure_threshold => 100, failure_rate => 0.5, window_size => 4);
SELECT fence_breaker_report('rate', true);
SELECT fence_breaker_report('rate', false);
SELECT fence_breaker_report('rate', true);
SELECT state, consec, wcalls, wfails FROM pg_temp.b WHERE breaker = 'rate';
SELECT fence_breaker_report('rate', false);
SELECT state, consec, wcalls, wfails, trips FROM pg_temp.b WHERE breaker = 'rate';

-- The window slides: the oldest outcome drops out.
SELECT fence_breaker_reset('rate');
SELECT decision FROM fence_breaker_allow('rate', failure_threshold => 100, failure_rate => 0.5, window_size => 4);
SELECT fence_breaker_report('rate', false);
SELECT fence_breaker_report('rate', true);
SELECT fence_breaker_report('rate', true);
SELECT fence_breaker_report('rate', true);
SELECT fence_breaker_report('rate', false);	-- the first failure is gone
SELECT state, consec, wcalls, wfails FROM pg_temp.b WHERE breaker = 'rate';

-- With failure_rate NULL the window rule is off: only consecutive
-- failures trip (a window of 2 at a rate of 0.5 would have tripped at once).
SELECT decision FROM fence_breaker_allow('norate', failure_threshold => 3, failure_rate => NULL, window_size => 2);
SELECT fence_breaker_report('norate', false);
SELECT fence_breaker_report('norate', false);
SELECT fence_breaker_report('norate', true);
SELECT fence_breaker_report('norate', false);
SELECT fence_breaker_report('norate', false);
SELECT state, consec, wcalls, wfails FROM pg_temp.b WHERE breaker = 'norate';
SELECT failure_rate IS NULL AS rate_off FROM fence_breakers WHERE breaker = 'norate';
SELECT fence_breaker_report('norate', false);

-- A probe token reported to a closed breaker is ignored and not counted.
SELECT fence_breaker_report('rate', false, '12345'::fence_token);
SELECT state, consec, wcalls, wfails, failures FROM pg_temp.b WHERE breaker = 'rate';
-- A name of the full 64 bytes is named whole in the notice.
SELECT fence_breaker_report(repeat('n', 63) || 'z', false, '777'::fence_token);
SELECT length(breaker) FROM fence_breakers WHERE breaker LIKE 'nnn%';
SELECT fence_breaker_reset(repeat('n', 63) || 'z');

-- Reset (admin only) forgets a breaker and frees its probe lease.
SELECT fence_advance_clock('10 minutes');
SELECT decision FROM fence_breaker_allow('slow', failure_threshold => 1, probe_ttl => '10 seconds');
SELECT fence_breaker_report('slow', false);
SELECT fence_advance_clock('1 minute');
SELECT decision FROM fence_breaker_allow('slow', failure_threshold => 1, probe_ttl => '10 seconds');
SELECT count(*) AS probe_leases FROM pg_temp.probe_lease;
SELECT fence_breaker_reset('slow');
SELECT count(*) AS probe_leases FROM pg_temp.probe_lease;
SELECT count(*) AS slow_breakers FROM pg_temp.b WHERE breaker = 'slow';
SELECT fence_breaker_reset('slow');
SELECT decision FROM fence_breaker_allow('slow');

-- Other roles may ask and report, but not reset, and see other roles'
-- breaker names as NULL (like fence_leases).
SELECT decision FROM fence_breaker_allow('secret', failure_threshold => 1);
SELECT fence_breaker_report('secret', false);
SELECT fence_advance_clock('30 seconds');
SELECT decision FROM fence_breaker_allow('secret', failure_threshold => 1);
SELECT state, probe IS NOT NULL AS has_probe_token FROM pg_temp.b WHERE breaker = 'secret';
CREATE ROLE breaker_user;
SET ROLE breaker_user;
SELECT decision FROM fence_breaker_allow('mine');
SELECT fence_breaker_report('mine', true);
SELECT breaker, state, probe_token FROM fence_breakers WHERE database = current_database() ORDER BY breaker NULLS LAST, state;
-- (the probe lease of 'secret' is another role's lease in fence_leases too)
SELECT key, token, owner, scope FROM fence_leases
 WHERE database = current_database() AND expires_at = '2024-03-01 11:13:55+00';
SELECT fence_breaker_reset('mine');
RESET ROLE;
SELECT fence_breaker_reset('mine');
SELECT fence_breaker_reset('secret');
DROP ROLE breaker_user;

-- A probe takes a lease, which issues a token: not in a read-only
-- transaction.  The refusal changes nothing.
SELECT decision FROM fence_breaker_allow('ro', failure_threshold => 1);
SELECT fence_breaker_report('ro', false);
SELECT fence_advance_clock('30 seconds');
BEGIN TRANSACTION READ ONLY;
SELECT decision FROM fence_breaker_allow('ro', failure_threshold => 1);
ROLLBACK;
SELECT state, probe, fast FROM pg_temp.b WHERE breaker = 'ro';
SELECT decision FROM fence_breaker_allow('ro', failure_threshold => 1);
SELECT fence_breaker_reset('ro');

-- A probe's lease may outlive probe_expires_at: the probe renewed it (or a
-- racing caller's request extended it).  Asking then must not extend it
-- again: callers coming more often than probe_ttl would keep a dead probe's
-- lease alive, and the breaker half-open, for ever.  Once the lease runs
-- out, the next caller probes.
SELECT decision FROM fence_breaker_allow('renewed', failure_threshold => 1, open_for => '10 s', probe_ttl => '30 s');
SELECT fence_breaker_report('renewed', false);
SELECT fence_advance_clock('10 seconds');
SELECT decision, probe_token AS first_probe
  FROM fence_breaker_allow('renewed', failure_threshold => 1, open_for => '10 s', probe_ttl => '30 s') \gset
SELECT :'decision' AS decision, pg_temp.rel(:'first_probe') AS probe;
SELECT fence_advance_clock('20 seconds');
SELECT fence_renew('breaker:renewed', :'first_probe', '30 seconds');
SELECT token, expires_at FROM pg_temp.probe_lease WHERE key = 'breaker:renewed';
SELECT fence_advance_clock('15 seconds');	-- past probe_expires_at, lease live
SELECT decision, retry_at FROM fence_breaker_allow('renewed', failure_threshold => 1, open_for => '10 s', probe_ttl => '30 s');
SELECT token, expires_at FROM pg_temp.probe_lease WHERE key = 'breaker:renewed';
SELECT fence_advance_clock('20 seconds');	-- the renewed lease has run out
SELECT decision, pg_temp.rel(probe_token) > pg_temp.rel(:'first_probe') AS newer
  FROM fence_breaker_allow('renewed', failure_threshold => 1, open_for => '10 s', probe_ttl => '30 s');
SELECT state, probe > pg_temp.rel(:'first_probe') AS newer_probe FROM pg_temp.b WHERE breaker = 'renewed';
SELECT fence_breaker_reset('renewed');

-- Whoever reports with the probe's token ends the probe, whichever role
-- took it: the probe's lease is freed at once, so that the next probe need
-- not wait for probe_ttl (an hour here) to run out.
SELECT fence_set_clock('2024-03-01 12:00:00+00');
SELECT decision FROM fence_breaker_allow('handoff', failure_threshold => 1, open_for => '10 s', probe_ttl => '1 hour');
SELECT fence_breaker_report('handoff', false);
SELECT fence_advance_clock('10 seconds');
CREATE ROLE breaker_prober;
CREATE ROLE breaker_reporter;
SET ROLE breaker_prober;
SELECT decision, probe_token AS handoff_probe
  FROM fence_breaker_allow('handoff', failure_threshold => 1, open_for => '10 s', probe_ttl => '1 hour') \gset
RESET ROLE;
SELECT :'decision' AS decision, token = pg_temp.rel(:'handoff_probe') AS probe_token, probe_owner, live
  FROM pg_temp.probe_lease WHERE key = 'breaker:handoff';
SET ROLE breaker_reporter;
SELECT fence_breaker_report('handoff', true, :'handoff_probe');
RESET ROLE;
SELECT count(*) AS probe_leases FROM pg_temp.probe_lease WHERE key = 'breaker:handoff';
-- It trips again; after open_for, a caller of either role probes.
SELECT fence_breaker_report('handoff', false);
SELECT fence_advance_clock('10 seconds');
SET ROLE breaker_reporter;
SELECT decision, probe_token > :'handoff_probe' AS newer_token
  FROM fence_breaker_allow('handoff', failure_threshold => 1, open_for => '10 s', probe_ttl => '1 hour');
RESET ROLE;
SELECT state, probe > pg_temp.rel(:'handoff_probe') AS newer_probe FROM pg_temp.b WHERE breaker = 'handoff';
SELECT fence_breaker_reset('handoff');
DROP ROLE breaker_prober;
DROP ROLE breaker_reporter;

-- Bad input: 22023, and nothing changes (not even the settings of an
-- existing breaker).
\set VERBOSITY default
SELECT fence_breaker_allow(NULL);
SELECT fence_breaker_allow('');
SELECT fence_breaker_allow(repeat('x', 65));
SELECT fence_breaker_allow('prov', failure_threshold => 0);
SELECT fence_breaker_allow('prov', failure_threshold => NULL);
SELECT fence_breaker_allow('prov', failure_rate => 0);
SELECT fence_breaker_allow('prov', failure_rate => 1.5);
SELECT fence_breaker_allow('prov', failure_rate => 'NaN');
SELECT fence_breaker_allow('prov', window_size => 0);
SELECT fence_breaker_allow('prov', window_size => 65);
SELECT fence_breaker_allow('prov', open_for => '0');
SELECT fence_breaker_allow('prov', open_for => '-1 second');
SELECT fence_breaker_allow('prov', open_for => '1 month');
SELECT fence_breaker_allow('prov', open_for => NULL);
SELECT fence_breaker_allow('prov', max_open_for => '0');
SELECT fence_breaker_allow('prov', open_for => '10 minutes', max_open_for => '5 minutes');
SELECT fence_breaker_allow('prov', probe_ttl => '2 days');
SELECT fence_breaker_allow('prov', open_for => '100000 days', max_open_for => '100000 days');
SELECT fence_breaker_report(NULL, true);
SELECT fence_breaker_report('prov', NULL);
SELECT fence_breaker_report('prov', true, '0'::fence_token);
SELECT fence_breaker_reset(NULL);
\set VERBOSITY terse
SELECT breaker, failure_threshold, failure_rate, window_size
  FROM fence_breakers WHERE database = current_database() ORDER BY breaker;

-- Capacity: fence.max_breakers entries, then 53400 (and nothing created).
SHOW fence.max_breakers;
\set VERBOSITY default
DO $$
DECLARE
	i int := 0;
BEGIN
	LOOP
		i := i + 1;
		PERFORM fence_breaker_allow('full:' || i);
	END LOOP;
EXCEPTION WHEN OTHERS THEN
	DECLARE
		msg text;
		detail text;
		hint text;
	BEGIN
		GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
		RAISE NOTICE 'SQLSTATE %: %', SQLSTATE, msg;
		RAISE NOTICE 'detail: %', detail;
		RAISE NOTICE 'hint: %', hint;
	END;
END $$;
\set VERBOSITY terse
SELECT count(*) = current_setting('fence.max_breakers')::int AS full FROM fence_breakers;
SELECT fence_breaker_report('one more', false);
SELECT count(*) FILTER (WHERE fence_breaker_reset(breaker)) > 0 AS emptied
  FROM fence_breakers WHERE breaker LIKE 'full:%';
SELECT decision FROM fence_breaker_allow('one more');

SELECT fence_breaker_reset(breaker) FROM fence_breakers
 WHERE database = current_database() ORDER BY breaker;
SELECT fence_set_clock(NULL) IS NOT NULL AS real_time;
