-- test/lib/timeline.sql: the player behind the timelines sql/timeline_*.sql
-- (the incidents of doc/incidents.md, and illustrations of other pages of
-- doc/) and make demo (test/demo).  Each timeline file
-- includes it with \i, echo off, so its expected output shows the timeline,
-- not this machinery.
--
-- A timeline is a script: rows of (time, worker, action, SQL today, SQL with
-- fence), in the order the incident tells them.  start() makes one fresh
-- database per variant ("today", "fenced", and any other), so that in each
-- of them the token counter is at 32, exactly as in the incidents:
-- CREATE EXTENSION fence, then fence_advance_tokens(32), so the first two
-- grants are 33 and 34.  play() replays the script once per variant, in that
-- variant's database; every worker is its own connection (dblink), so its own
-- session, named by application_name.  Before each row the lease clock is set
-- to the row's time with fence_set_clock('<day> <time>+00').  The narrator
-- (the session running the file) only sets the clock and drives the workers.
--
-- The SQL of a row runs on the worker's connection as the worker would send
-- it.  Its result is recorded as text: the single value a SELECT returns
-- ("NULL" when NULL, "ok" for a void function), the command tag otherwise
-- ("UPDATE 1"), or "ERROR <sqlstate>: <message>".  A row whose SQL is NULL
-- for a variant does not happen in it (the worker stopped earlier, or the
-- step exists only in the other design); the story shows "-".  "{pid:W}" in
-- a row's SQL is replaced by the backend pid of worker W's connection in the
-- same variant, and "{token:W}" by the token worker W was last granted in
-- that variant (the result of its latest step that takes a lock, lease or
-- permit and returned a token; an error if it has none), as a worker keeps
-- the token it was given to renew, check or release its lease with.  The
-- file then records its checks in the table verdict (claim, ok), which make
-- demo reads.
--
-- The databases are named regression_<timeline>_<variant>; finish() drops
-- them and puts the lease clock back on real time.
--
-- In every variant database, besides fence:
--   redis(command)  a model of the Redis commands the incidents use: SET key value
--                   [NX] [PX ms], GET, DEL, INCR.  Keys live in a table; a key
--                   with a PX expiry is gone once fence_now() reaches it (the
--                   lease clock stands in for Redis's clock); each command
--                   runs alone (Redis is single-threaded).  Replies: 'OK', a
--                   value, an integer, or NULL for Redis's nil.
--   set_token(x), my_token()   a worker's memory of the token it was given
--                   (the incidents' "$2"); a session setting of the worker.
--   send(what)      an effect outside the database (an e-mailed digest, a
--                   sent export), recorded in the table sent.

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
CREATE EXTENSION IF NOT EXISTS dblink;
DROP SCHEMA IF EXISTS timeline CASCADE;
CREATE SCHEMA timeline;
RESET client_min_messages;
SET search_path = timeline, public;

CREATE TABLE timeline.about (
	name text PRIMARY KEY,
	title text NOT NULL,
	day date NOT NULL,
	variants text[] NOT NULL,
	intro text NOT NULL,
	lesson text NOT NULL,
	doc text NOT NULL			-- the page whose outcomes the checks are
);

CREATE TABLE timeline.script (
	seq int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at time NOT NULL,
	worker text NOT NULL,
	action text NOT NULL,
	today text,
	fenced text
);

CREATE TABLE timeline.result (
	seq int NOT NULL REFERENCES timeline.script,
	variant text NOT NULL,
	result text,
	PRIMARY KEY (seq, variant)
);

CREATE TABLE timeline.worker (
	variant text NOT NULL,
	worker text NOT NULL,
	pid int NOT NULL,
	PRIMARY KEY (variant, worker)
);

-- When a worker is frozen or paused, or waits for a call to time out: a
-- fact of the incident, recorded for the pictures (the SQL of the script
-- already leaves the gap).  In one variant only, or (variant NULL) in every
-- one.  how: 'paused' (pause()) or 'waits' (wait()), drawn differently.
CREATE TABLE timeline.pause (
	worker text NOT NULL,
	from_at time NOT NULL,
	to_at time NOT NULL,
	what text NOT NULL,
	variant text,
	how text NOT NULL DEFAULT 'paused' CHECK (how IN ('paused', 'waits'))
);

-- What the replay saw, for the pictures (record()): after each step, every
-- lock or lease held in the variant's database and by whom (hold), and before
-- each write or effect, the token the worker carried (carried).  The
-- breakers seen after each step are in timeline.breaker.
CREATE TABLE timeline.hold (
	seq int NOT NULL,
	variant text NOT NULL,
	worker text NOT NULL,
	lock text NOT NULL,
	token bigint,
	expires_at text,
	permits int					-- a lease with permits: the key's number of them
);

-- After each step, every circuit breaker of the variant's database as
-- fence_breakers shows it (for the pictures: the breaker's state over time).
CREATE TABLE timeline.breaker (
	seq int NOT NULL,
	variant text NOT NULL,
	breaker text NOT NULL,
	state text NOT NULL,
	changed_at text,
	open_until text,
	probe_token bigint
);

CREATE TABLE timeline.carried (
	seq int NOT NULL,
	variant text NOT NULL,
	token text,
	PRIMARY KEY (seq, variant)
);

CREATE TABLE timeline.verdict (
	n int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	side text NOT NULL CHECK (side IN ('today', 'with fence')),
	claim text NOT NULL,
	ok boolean
);

-- A libpq connection string to this server.
CREATE FUNCTION timeline.conninfo(dbname text, app text) RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT format('host=%s port=%s dbname=%s user=%s application_name=%s',
				  quote_literal(split_part(current_setting('unix_socket_directories'), ',', 1)),
				  current_setting('port'),
				  quote_literal(dbname), quote_literal(current_user), quote_literal(app))
$$;

CREATE FUNCTION timeline.dbname(variant text) RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT 'regression_' || name || '_' || variant FROM timeline.about
$$;

-- The connection of a worker in a variant, opened on first use.
CREATE FUNCTION timeline.conn(variant text, who text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	name text := variant || '/' || who;
	pid int;
BEGIN
	IF NOT name = ANY (coalesce(dblink_get_connections(), '{}')) THEN
		PERFORM dblink_connect(name, timeline.conninfo(timeline.dbname(variant), who));
		SELECT p INTO pid FROM dblink(name, 'SELECT pg_backend_pid()') AS t(p int);
		INSERT INTO timeline.worker VALUES (variant, who, pid)
			ON CONFLICT ON CONSTRAINT worker_pkey DO UPDATE SET pid = excluded.pid;
	END IF;
	RETURN name;
END
$$;

-- What every variant database has besides the timeline's own tables.
CREATE FUNCTION timeline.common_sql() RETURNS text
LANGUAGE sql IMMUTABLE AS $common$ SELECT $$
SET client_min_messages = warning;
CREATE EXTENSION fence;
SELECT fence_advance_tokens(32);

-- The Redis model (see test/lib/timeline.sql).
CREATE TABLE redis_keys (
	key text PRIMARY KEY,
	value text NOT NULL,
	expires_at timestamptz
);
CREATE FUNCTION redis(command text) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
	arg text[] := regexp_split_to_array(btrim(command), '\s+');
	op text := upper(arg[1]);
	i int;
	nx boolean := false;
	px bigint;
	n bigint;
	cur text;
BEGIN
	LOCK TABLE redis_keys IN EXCLUSIVE MODE;
	DELETE FROM redis_keys WHERE expires_at <= fence_now();
	IF op = 'SET' THEN
		i := 4;
		WHILE i <= cardinality(arg) LOOP
			CASE upper(arg[i])
				WHEN 'NX' THEN nx := true; i := i + 1;
				WHEN 'PX' THEN px := arg[i + 1]::bigint; i := i + 2;
				ELSE RAISE EXCEPTION 'redis model: unsupported SET option %', arg[i];
			END CASE;
		END LOOP;
		IF nx AND EXISTS (SELECT FROM redis_keys WHERE key = arg[2]) THEN
			RETURN NULL;
		END IF;
		INSERT INTO redis_keys VALUES (arg[2], arg[3],
				fence_now() + px * interval '1 millisecond')
			ON CONFLICT (key) DO UPDATE SET value = excluded.value,
				expires_at = excluded.expires_at;
		RETURN 'OK';
	ELSIF op = 'GET' THEN
		RETURN (SELECT value FROM redis_keys WHERE key = arg[2]);
	ELSIF op = 'DEL' THEN
		DELETE FROM redis_keys WHERE key = ANY (arg[2:]);
		GET DIAGNOSTICS n = ROW_COUNT;
		RETURN n::text;
	ELSIF op = 'INCR' THEN
		SELECT value INTO cur FROM redis_keys WHERE key = arg[2];
		IF cur IS NOT NULL AND cur !~ '^-?[0-9]+$' THEN
			RAISE EXCEPTION 'ERR value is not an integer or out of range';
		END IF;
		INSERT INTO redis_keys VALUES (arg[2], '1', NULL)
			ON CONFLICT (key) DO UPDATE SET value = (redis_keys.value::bigint + 1)::text
			RETURNING value INTO cur;
		RETURN cur;
	END IF;
	RAISE EXCEPTION 'redis model: unsupported command %', op;
END
$fn$;

-- A worker's memory of its token.
CREATE FUNCTION set_token(anyelement) RETURNS anyelement
LANGUAGE sql AS $fn$
	SELECT set_config('worker.token', coalesce($1::text, ''), false);
	SELECT $1
$fn$;
CREATE FUNCTION my_token() RETURNS bigint
LANGUAGE sql STABLE AS $fn$
	SELECT nullif(current_setting('worker.token', true), '')::bigint
$fn$;

-- Effects outside the database.
CREATE TABLE sent (
	n int GENERATED ALWAYS AS IDENTITY,
	at time NOT NULL,
	worker text NOT NULL,
	what text NOT NULL
);
CREATE FUNCTION send(what text) RETURNS text
LANGUAGE sql AS $fn$
	INSERT INTO sent (at, worker, what)
		VALUES ((fence_now() AT TIME ZONE 'UTC')::time,
				current_setting('application_name'), what);
	SELECT 'sent'
$fn$;
RESET client_min_messages;
$$ $common$;

-- start(): a fresh database per variant, with the common objects.
CREATE FUNCTION timeline.start(name text, title text, day date, intro text,
							   lesson text, variants text[] DEFAULT '{today,fenced}',
							   doc text DEFAULT 'doc/incidents.md')
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	v text;
	self text := timeline.conninfo(current_database(), 'narrator');
	counters text[] := '{}';
BEGIN
	INSERT INTO timeline.about VALUES (name, title, day, variants, intro, lesson, doc);
	FOREACH v IN ARRAY variants LOOP
		PERFORM dblink_exec(self, format('DROP DATABASE IF EXISTS %I WITH (FORCE)', timeline.dbname(v)));
		PERFORM dblink_exec(self, format('CREATE DATABASE %I', timeline.dbname(v)));
		PERFORM dblink_exec(timeline.conn(v, 'setup'), timeline.common_sql());
		counters := counters || (v || ' ' || timeline.run(timeline.conn(v, 'setup'),
								 'SELECT fence_advance_tokens(0)'));
	END LOOP;
	RETURN format('%s: token counter at %s', title, array_to_string(counters, ', '));
END
$$;

-- setup(): the timeline's own schema, in some or all variant databases.
CREATE FUNCTION timeline.setup(sql text, variants text[] DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	v text;
BEGIN
	FOREACH v IN ARRAY coalesce(variants, (SELECT a.variants FROM timeline.about a)) LOOP
		PERFORM timeline.run(timeline.conn(v, 'setup'), sql);
	END LOOP;
	RETURN 'ok';
END
$$;

-- The lease clock, set to a time of the timeline's day (UTC).
CREATE FUNCTION timeline.clock(at time) RETURNS void
LANGUAGE sql AS $$
	SELECT fence_set_clock(((SELECT day FROM timeline.about) + at) AT TIME ZONE 'UTC')
$$;

-- Run one statement (or a ;-separated few) on a connection; the result as
-- text.  run() raises the statement's error, exec() returns it as text.
CREATE FUNCTION timeline.run(conn text, sql text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	last_stmt text := regexp_replace(rtrim(sql, E' \n\t;'), '^.*;', '', 's');
	vals text[];
BEGIN
	IF last_stmt ~* '^\s*(select|values|table|show|with)\M' THEN
		SELECT array_agg(v) INTO vals FROM dblink(conn, sql) AS t(v text);
		IF vals IS NULL THEN
			RETURN '(no rows)';
		ELSIF cardinality(vals) = 1 AND vals[1] = '' THEN
			RETURN 'ok';
		END IF;
		RETURN array_to_string(vals, ', ', 'NULL');
	END IF;
	RETURN dblink_exec(conn, sql);
END
$$;

CREATE FUNCTION timeline.exec(conn text, sql text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	RETURN timeline.run(conn, sql);
EXCEPTION WHEN OTHERS THEN
	RETURN format('ERROR %s: %s', SQLSTATE, SQLERRM);
END
$$;

-- pause(): a worker is frozen from one time to another, in every variant or
-- in one.
CREATE FUNCTION timeline.pause(worker text, from_at time, to_at time,
							   what text DEFAULT 'paused', variant text DEFAULT NULL)
RETURNS text
LANGUAGE sql AS $$
	INSERT INTO timeline.pause VALUES (worker, from_at, to_at, what, variant);
	SELECT 'ok'
$$;

-- wait(): a worker waits for a call to time out, in every variant or in one.
CREATE FUNCTION timeline.wait(worker text, from_at time, to_at time,
							  what text, variant text DEFAULT NULL)
RETURNS text
LANGUAGE sql AS $$
	INSERT INTO timeline.pause VALUES (worker, from_at, to_at, what, variant, 'waits');
	SELECT 'ok'
$$;

-- What kind of step a statement is, for the pictures: a write to a table, an
-- effect outside the database (send), taking, renewing or giving back a lock
-- or lease, a check of a lease, ending another session, a transaction
-- boundary, or a read.
CREATE FUNCTION timeline.kind(sql text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE
		WHEN sql IS NULL THEN NULL
		WHEN sql ~* '^\s*(update|insert|delete|merge)\M' THEN 'write'
		WHEN sql ~* '\m(send|export_send)\s*\(' THEN 'effect'
		WHEN sql ~* '(pg_try_advisory\w*|fence_try_lease|fence_try_xact_lease|fence_lease|fence_xact_lease|fence_try_permit|fence_try_xact_permit|fence_permit|fence_xact_permit)\s*\('
			 OR sql ~* 'redis\(''SET \S+ \S+ NX' THEN 'acquire'
		WHEN sql ~* 'fence_renew\s*\(' THEN 'renew'
		WHEN sql ~* '(fence_release|pg_advisory_unlock)\s*\(' OR sql ~* 'redis\(''DEL ' THEN 'release'
		WHEN sql ~* 'pg_terminate_backend\s*\(' THEN 'terminate'
		WHEN sql ~* 'fence_assert_current\s*\(' THEN 'check'
		WHEN sql ~* '^\s*(begin|commit|rollback)\M' THEN 'transaction'
		WHEN sql ~* 'redis\(''INCR ' THEN 'token'
		ELSE 'read'
	END
$$;

-- The locks and leases held in a variant's database: fence's leases and
-- permits (by backend pid, or by owner for a detached one), the Redis model's keys that
-- have an expiry (the locks, not the token counters), and advisory locks.
CREATE FUNCTION timeline.holds_sql() RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT $q$
	SELECT key, coalesce(owner, pid::text), token::bigint,
		   to_char(expires_at AT TIME ZONE 'UTC', 'HH24:MI:SS'), permits
	  FROM fence_leases WHERE database = current_database()
	UNION ALL
	SELECT key, value, NULL, to_char(expires_at AT TIME ZONE 'UTC', 'HH24:MI:SS'), NULL
	  FROM redis_keys WHERE expires_at IS NOT NULL
	UNION ALL
	SELECT 'advisory lock ' || objid, pid::text, NULL, NULL, NULL
	  FROM pg_locks
	 WHERE locktype = 'advisory' AND granted
	   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
$q$ $$;

-- The circuit breakers of a variant's database, as its fence_breakers view
-- shows them.
CREATE FUNCTION timeline.breakers_sql() RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT $q$
	SELECT breaker, state, to_char(changed_at AT TIME ZONE 'UTC', 'HH24:MI:SS'),
		   to_char(open_until AT TIME ZONE 'UTC', 'HH24:MI:SS'), probe_token::bigint
	  FROM fence_breakers WHERE database = current_database()
$q$ $$;

-- One variant's replay of the script.
CREATE FUNCTION timeline.play_variant(variant text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	s record;
	sql text;
	w record;
	who text;
	tok text;
BEGIN
	FOR s IN SELECT * FROM timeline.script ORDER BY seq LOOP
		sql := CASE WHEN variant = 'today' THEN s.today ELSE s.fenced END;
		CONTINUE WHEN sql IS NULL;
		PERFORM timeline.clock(s.at);
		FOR w IN SELECT * FROM timeline.worker WHERE worker.variant = play_variant.variant LOOP
			sql := replace(sql, '{pid:' || w.worker || '}', w.pid::text);
		END LOOP;
		LOOP
			who := substring(sql FROM '\{token:([^}]+)\}');
			EXIT WHEN who IS NULL;
			SELECT r.result INTO tok
			  FROM timeline.result r
			  JOIN timeline.script p ON p.seq = r.seq
			 WHERE r.variant = play_variant.variant AND p.worker = who
			   AND timeline.kind(CASE WHEN play_variant.variant = 'today' THEN p.today
									  ELSE p.fenced END) = 'acquire'
			   AND r.result ~ '^[0-9]+$'
			 ORDER BY r.seq DESC
			 LIMIT 1;
			IF tok IS NULL THEN
				RAISE EXCEPTION 'timeline: step % of %: {token:%}: % was granted no token in %',
					s.seq, s.worker, who, who, play_variant.variant;
			END IF;
			sql := replace(sql, '{token:' || who || '}', tok);
		END LOOP;
		IF timeline.kind(sql) IN ('write', 'effect') THEN
			INSERT INTO timeline.carried VALUES (s.seq, variant,
				timeline.exec(timeline.conn(variant, s.worker),
							  'SELECT coalesce(fence_current_token()::bigint, my_token())'));
		END IF;
		INSERT INTO timeline.result
			VALUES (s.seq, variant, timeline.exec(timeline.conn(variant, s.worker), sql));
		INSERT INTO timeline.hold
			SELECT s.seq, play_variant.variant, coalesce(tw.worker, h.who), h.lock, h.token,
				   h.expires_at, h.permits
			  FROM dblink(timeline.conn(play_variant.variant, 'setup'), timeline.holds_sql())
				   AS h(lock text, who text, token bigint, expires_at text, permits int)
			  LEFT JOIN timeline.worker tw
					 ON tw.variant = play_variant.variant AND tw.pid::text = h.who;
		INSERT INTO timeline.breaker
			SELECT s.seq, play_variant.variant, b.*
			  FROM dblink(timeline.conn(play_variant.variant, 'setup'), timeline.breakers_sql())
				   AS b(breaker text, state text, changed_at text, open_until text,
						probe_token bigint);
	END LOOP;
END
$$;

-- The story: what happened at each instant, today beside with fence.
CREATE VIEW timeline.story AS
	SELECT to_char(s.at, 'HH24:MI:SS') AS time, s.worker, s.action,
		   CASE WHEN s.today IS NULL THEN '-' ELSE coalesce(t.result, '(not run)') END AS today,
		   CASE WHEN s.fenced IS NULL THEN '-' ELSE coalesce(f.result, '(not run)') END AS "with fence"
	  FROM timeline.script s
	  LEFT JOIN timeline.result t ON t.seq = s.seq AND t.variant = 'today'
	  LEFT JOIN timeline.result f ON f.seq = s.seq AND f.variant = 'fenced'
	 ORDER BY s.seq;

-- play(): every variant in turn, then the story.
CREATE FUNCTION timeline.play() RETURNS SETOF timeline.story
LANGUAGE plpgsql AS $$
DECLARE
	v text;
BEGIN
	FOREACH v IN ARRAY (SELECT variants FROM timeline.about) LOOP
		PERFORM timeline.play_variant(v);
	END LOOP;
	RETURN QUERY SELECT * FROM timeline.story;
END
$$;

-- The results of one more variant (beyond today and fenced), by step.
CREATE FUNCTION timeline.results(variant text)
RETURNS TABLE ("time" text, worker text, action text, result text)
LANGUAGE sql AS $$
	SELECT to_char(s.at, 'HH24:MI:SS'), s.worker, s.action, r.result
	  FROM timeline.script s
	  JOIN timeline.result r ON r.seq = s.seq AND r.variant = results.variant
	 ORDER BY s.seq
$$;

-- The result of the step a worker took at a time (action: a LIKE pattern,
-- needed when the worker took several steps at that time).
CREATE FUNCTION timeline.outcome(variant text, at time, who text, action text DEFAULT '%')
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r text[];
BEGIN
	SELECT array_agg(coalesce(res.result, '(not run)')) INTO r
	  FROM timeline.script s
	  LEFT JOIN timeline.result res ON res.seq = s.seq AND res.variant = outcome.variant
	 WHERE s.at = outcome.at AND s.worker = who AND s.action LIKE outcome.action;
	IF cardinality(r) IS DISTINCT FROM 1 THEN
		RAISE EXCEPTION 'outcome(%, %, %, %): % steps match', variant, at, who, action,
			coalesce(cardinality(r), 0);
	END IF;
	RETURN r[1];
END
$$;

-- One value from a query in a variant's database, after the replay.
CREATE FUNCTION timeline.ask(variant text, sql text) RETURNS text
LANGUAGE sql AS $$
	SELECT string_agg(v, ', ') FROM dblink(timeline.conn(variant, 'setup'), sql) AS t(v text)
$$;

-- The rows of a query in every variant's database, as JSON.
CREATE FUNCTION timeline.rows(sql text)
RETURNS TABLE (variant text, "row" text)
LANGUAGE sql AS $$
	SELECT v, r
	  FROM unnest((SELECT variants FROM timeline.about)) WITH ORDINALITY AS a(v, i),
		   LATERAL dblink(timeline.conn(v, 'setup'),
						  format('SELECT row_to_json(q)::text FROM (%s) q', sql)) AS t(r text)
	 ORDER BY i
$$;

-- For make demo's pictures: everything the replay recorded, as one JSON
-- document (deterministic: no pids, no real time, keys and arrays in a fixed
-- order).  test/lib/pictures.py draws it.
CREATE FUNCTION timeline.record() RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT jsonb_pretty(jsonb_build_object(
		'name', a.name, 'title', a.title, 'day', a.day::text, 'doc', a.doc,
		'intro', a.intro, 'lesson', a.lesson, 'variants', to_jsonb(a.variants),
		'steps', (SELECT jsonb_agg(jsonb_build_object(
					'seq', s.seq, 'at', to_char(s.at, 'HH24:MI:SS'),
					'worker', s.worker, 'action', s.action,
					'runs', (SELECT jsonb_object_agg(r.variant, jsonb_build_object(
								'kind', timeline.kind(CASE WHEN r.variant = 'today'
														   THEN s.today ELSE s.fenced END),
								'result', r.result, 'token', c.token))
							   FROM timeline.result r
							   LEFT JOIN timeline.carried c
									  ON c.seq = r.seq AND c.variant = r.variant
							  WHERE r.seq = s.seq))
					ORDER BY s.seq)
					FROM timeline.script s),
		'holds', coalesce((SELECT jsonb_agg(jsonb_build_object(
					'seq', h.seq, 'variant', h.variant, 'worker', h.worker,
					'lock', h.lock, 'token', h.token, 'expires_at', h.expires_at,
					'permits', h.permits)
					ORDER BY h.seq, h.variant, h.lock, h.worker, h.token)
					FROM timeline.hold h), '[]'),
		'pauses', coalesce((SELECT jsonb_agg(jsonb_build_object(
					'worker', p.worker, 'from', to_char(p.from_at, 'HH24:MI:SS'),
					'to', to_char(p.to_at, 'HH24:MI:SS'), 'what', p.what,
					'variant', p.variant, 'how', p.how)
					ORDER BY p.worker, p.from_at, p.variant)
					FROM timeline.pause p), '[]'),
		'breakers', coalesce((SELECT jsonb_agg(jsonb_build_object(
					'seq', b.seq, 'variant', b.variant, 'breaker', b.breaker,
					'state', b.state, 'changed_at', b.changed_at,
					'open_until', b.open_until, 'probe_token', b.probe_token)
					ORDER BY b.seq, b.variant, b.breaker)
					FROM timeline.breaker b), '[]'),
		'checks', coalesce((SELECT jsonb_agg(jsonb_build_object(
					'side', v.side, 'claim', v.claim, 'ok', v.ok) ORDER BY v.n)
					FROM timeline.verdict v), '[]')))
	  FROM timeline.about a
$$;

-- For make demo: the story with a result column per variant, as a query.
-- An error shows as its SQLSTATE; errors() lists the messages.
CREATE FUNCTION timeline.story_sql() RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT format($q$SELECT to_char(s.at, 'HH24:MI:SS') AS time, s.worker, s.action%s
					   FROM timeline.script s ORDER BY s.seq$q$,
				  string_agg(format($c$, CASE WHEN s.%I IS NULL THEN '-' ELSE
							  coalesce((SELECT coalesce(substring(r.result FROM '^(ERROR [0-9A-Z]{5}):')
														|| ' (see below)', r.result)
										  FROM timeline.result r
										 WHERE r.seq = s.seq AND r.variant = %L), '(not run)')
							  END AS %I$c$,
							 CASE WHEN v = 'today' THEN 'today' ELSE 'fenced' END, v,
							 CASE v WHEN 'today' THEN 'result today'
									WHEN 'fenced' THEN 'result with fence'
									ELSE 'result with fence, ' || v END),
							 '' ORDER BY i))
	  FROM timeline.about, unnest(variants) WITH ORDINALITY AS u(v, i)
$$;

-- For make demo: the error messages of the story, each once.
CREATE FUNCTION timeline.errors() RETURNS SETOF text
LANGUAGE sql STABLE AS $$
	SELECT result FROM timeline.result WHERE result LIKE 'ERROR %'
	 GROUP BY result ORDER BY min(seq), result
$$;

-- For make demo: a paragraph wrapped at a width.
CREATE FUNCTION timeline.wrap(para text, width int) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	word text;
	line text := '';
	lines text[] := '{}';
BEGIN
	FOREACH word IN ARRAY regexp_split_to_array(btrim(para), '\s+') LOOP
		IF line <> '' AND length(line) + 1 + length(word) > width THEN
			lines := lines || line;
			line := word;
		ELSE
			line := CASE WHEN line = '' THEN word ELSE line || ' ' || word END;
		END IF;
	END LOOP;
	RETURN array_to_string(lines || line, E'\n');
END
$$;

-- finish(): close every connection, drop the variant databases, let the lease
-- clock follow real time again.  The narrator's tables stay for make demo.
CREATE FUNCTION timeline.finish() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	c text;
	v text;
	self text := timeline.conninfo(current_database(), 'narrator');
BEGIN
	FOREACH c IN ARRAY coalesce(dblink_get_connections(), '{}') LOOP
		PERFORM dblink_disconnect(c);
	END LOOP;
	FOREACH v IN ARRAY (SELECT variants FROM timeline.about) LOOP
		PERFORM dblink_exec(self, format('DROP DATABASE IF EXISTS %I WITH (FORCE)', timeline.dbname(v)));
	END LOOP;
	PERFORM fence_set_clock(NULL);
	RETURN format('%s checks, %s failed',
				  (SELECT count(*) FROM timeline.verdict),
				  (SELECT count(*) FROM timeline.verdict WHERE ok IS NOT TRUE));
END
$$;
