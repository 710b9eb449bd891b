-- A comment on every object of the extension (what \dx+, \df+, \dT+ and
-- \do+ show), in the order of the pieces before this one.  The regression
-- test "extension" lists any object left without one.

-- token.sql
COMMENT ON TYPE @extschema@.fence_token IS 'fencing token: a whole number from 0 to 2^63-1, compared but never computed with';
COMMENT ON FUNCTION @extschema@.fence_token_in(pg_catalog.cstring) IS 'I/O';
COMMENT ON FUNCTION @extschema@.fence_token_out(@extschema@.fence_token) IS 'I/O';
COMMENT ON FUNCTION @extschema@.fence_token_recv(pg_catalog.internal) IS 'I/O';
COMMENT ON FUNCTION @extschema@.fence_token_send(@extschema@.fence_token) IS 'I/O';
COMMENT ON FUNCTION @extschema@.fence_token(pg_catalog.int8) IS 'convert bigint to fence_token; a negative value is an error';
COMMENT ON FUNCTION @extschema@.fence_token(pg_catalog.int4) IS 'convert integer to fence_token; a negative value is an error';
COMMENT ON CAST (pg_catalog.int8 AS @extschema@.fence_token) IS 'implicit: an integer parameter or literal is accepted where a token is expected';
COMMENT ON CAST (pg_catalog.int4 AS @extschema@.fence_token) IS 'implicit: an integer parameter or literal is accepted where a token is expected';
COMMENT ON CAST (@extschema@.fence_token AS pg_catalog.int8) IS 'explicit only, so that no integer arithmetic applies to a token';

-- (fence_token, fence_token)
COMMENT ON FUNCTION @extschema@.fence_token_eq(@extschema@.fence_token, @extschema@.fence_token) IS 'implementation of = operator';
COMMENT ON FUNCTION @extschema@.fence_token_ne(@extschema@.fence_token, @extschema@.fence_token) IS 'implementation of <> operator';
COMMENT ON FUNCTION @extschema@.fence_token_lt(@extschema@.fence_token, @extschema@.fence_token) IS 'implementation of < operator';
COMMENT ON FUNCTION @extschema@.fence_token_le(@extschema@.fence_token, @extschema@.fence_token) IS 'implementation of <= operator';
COMMENT ON FUNCTION @extschema@.fence_token_gt(@extschema@.fence_token, @extschema@.fence_token) IS 'implementation of > operator';
COMMENT ON FUNCTION @extschema@.fence_token_ge(@extschema@.fence_token, @extschema@.fence_token) IS 'implementation of >= operator';
COMMENT ON FUNCTION @extschema@.fence_token_cmp(@extschema@.fence_token, @extschema@.fence_token) IS 'less-equal-greater';
COMMENT ON OPERATOR @extschema@.= (@extschema@.fence_token, @extschema@.fence_token) IS 'equal';
COMMENT ON OPERATOR @extschema@.<> (@extschema@.fence_token, @extschema@.fence_token) IS 'not equal';
COMMENT ON OPERATOR @extschema@.< (@extschema@.fence_token, @extschema@.fence_token) IS 'less than';
COMMENT ON OPERATOR @extschema@.<= (@extschema@.fence_token, @extschema@.fence_token) IS 'less than or equal';
COMMENT ON OPERATOR @extschema@.> (@extschema@.fence_token, @extschema@.fence_token) IS 'greater than';
COMMENT ON OPERATOR @extschema@.>= (@extschema@.fence_token, @extschema@.fence_token) IS 'greater than or equal';

-- (fence_token, bigint)
COMMENT ON FUNCTION @extschema@.fence_token_int8_eq(@extschema@.fence_token, pg_catalog.int8) IS 'implementation of = operator';
COMMENT ON FUNCTION @extschema@.fence_token_int8_ne(@extschema@.fence_token, pg_catalog.int8) IS 'implementation of <> operator';
COMMENT ON FUNCTION @extschema@.fence_token_int8_lt(@extschema@.fence_token, pg_catalog.int8) IS 'implementation of < operator';
COMMENT ON FUNCTION @extschema@.fence_token_int8_le(@extschema@.fence_token, pg_catalog.int8) IS 'implementation of <= operator';
COMMENT ON FUNCTION @extschema@.fence_token_int8_gt(@extschema@.fence_token, pg_catalog.int8) IS 'implementation of > operator';
COMMENT ON FUNCTION @extschema@.fence_token_int8_ge(@extschema@.fence_token, pg_catalog.int8) IS 'implementation of >= operator';
COMMENT ON FUNCTION @extschema@.fence_token_int8_cmp(@extschema@.fence_token, pg_catalog.int8) IS 'less-equal-greater';
COMMENT ON OPERATOR @extschema@.= (@extschema@.fence_token, pg_catalog.int8) IS 'equal';
COMMENT ON OPERATOR @extschema@.<> (@extschema@.fence_token, pg_catalog.int8) IS 'not equal';
COMMENT ON OPERATOR @extschema@.< (@extschema@.fence_token, pg_catalog.int8) IS 'less than';
COMMENT ON OPERATOR @extschema@.<= (@extschema@.fence_token, pg_catalog.int8) IS 'less than or equal';
COMMENT ON OPERATOR @extschema@.> (@extschema@.fence_token, pg_catalog.int8) IS 'greater than';
COMMENT ON OPERATOR @extschema@.>= (@extschema@.fence_token, pg_catalog.int8) IS 'greater than or equal';

-- (bigint, fence_token)
COMMENT ON FUNCTION @extschema@.int8_fence_token_eq(pg_catalog.int8, @extschema@.fence_token) IS 'implementation of = operator';
COMMENT ON FUNCTION @extschema@.int8_fence_token_ne(pg_catalog.int8, @extschema@.fence_token) IS 'implementation of <> operator';
COMMENT ON FUNCTION @extschema@.int8_fence_token_lt(pg_catalog.int8, @extschema@.fence_token) IS 'implementation of < operator';
COMMENT ON FUNCTION @extschema@.int8_fence_token_le(pg_catalog.int8, @extschema@.fence_token) IS 'implementation of <= operator';
COMMENT ON FUNCTION @extschema@.int8_fence_token_gt(pg_catalog.int8, @extschema@.fence_token) IS 'implementation of > operator';
COMMENT ON FUNCTION @extschema@.int8_fence_token_ge(pg_catalog.int8, @extschema@.fence_token) IS 'implementation of >= operator';
COMMENT ON FUNCTION @extschema@.int8_fence_token_cmp(pg_catalog.int8, @extschema@.fence_token) IS 'less-equal-greater';
COMMENT ON OPERATOR @extschema@.= (pg_catalog.int8, @extschema@.fence_token) IS 'equal';
COMMENT ON OPERATOR @extschema@.<> (pg_catalog.int8, @extschema@.fence_token) IS 'not equal';
COMMENT ON OPERATOR @extschema@.< (pg_catalog.int8, @extschema@.fence_token) IS 'less than';
COMMENT ON OPERATOR @extschema@.<= (pg_catalog.int8, @extschema@.fence_token) IS 'less than or equal';
COMMENT ON OPERATOR @extschema@.> (pg_catalog.int8, @extschema@.fence_token) IS 'greater than';
COMMENT ON OPERATOR @extschema@.>= (pg_catalog.int8, @extschema@.fence_token) IS 'greater than or equal';

-- (fence_token, integer)
COMMENT ON FUNCTION @extschema@.fence_token_int4_eq(@extschema@.fence_token, pg_catalog.int4) IS 'implementation of = operator';
COMMENT ON FUNCTION @extschema@.fence_token_int4_ne(@extschema@.fence_token, pg_catalog.int4) IS 'implementation of <> operator';
COMMENT ON FUNCTION @extschema@.fence_token_int4_lt(@extschema@.fence_token, pg_catalog.int4) IS 'implementation of < operator';
COMMENT ON FUNCTION @extschema@.fence_token_int4_le(@extschema@.fence_token, pg_catalog.int4) IS 'implementation of <= operator';
COMMENT ON FUNCTION @extschema@.fence_token_int4_gt(@extschema@.fence_token, pg_catalog.int4) IS 'implementation of > operator';
COMMENT ON FUNCTION @extschema@.fence_token_int4_ge(@extschema@.fence_token, pg_catalog.int4) IS 'implementation of >= operator';
COMMENT ON FUNCTION @extschema@.fence_token_int4_cmp(@extschema@.fence_token, pg_catalog.int4) IS 'less-equal-greater';
COMMENT ON OPERATOR @extschema@.= (@extschema@.fence_token, pg_catalog.int4) IS 'equal';
COMMENT ON OPERATOR @extschema@.<> (@extschema@.fence_token, pg_catalog.int4) IS 'not equal';
COMMENT ON OPERATOR @extschema@.< (@extschema@.fence_token, pg_catalog.int4) IS 'less than';
COMMENT ON OPERATOR @extschema@.<= (@extschema@.fence_token, pg_catalog.int4) IS 'less than or equal';
COMMENT ON OPERATOR @extschema@.> (@extschema@.fence_token, pg_catalog.int4) IS 'greater than';
COMMENT ON OPERATOR @extschema@.>= (@extschema@.fence_token, pg_catalog.int4) IS 'greater than or equal';

-- (integer, fence_token)
COMMENT ON FUNCTION @extschema@.int4_fence_token_eq(pg_catalog.int4, @extschema@.fence_token) IS 'implementation of = operator';
COMMENT ON FUNCTION @extschema@.int4_fence_token_ne(pg_catalog.int4, @extschema@.fence_token) IS 'implementation of <> operator';
COMMENT ON FUNCTION @extschema@.int4_fence_token_lt(pg_catalog.int4, @extschema@.fence_token) IS 'implementation of < operator';
COMMENT ON FUNCTION @extschema@.int4_fence_token_le(pg_catalog.int4, @extschema@.fence_token) IS 'implementation of <= operator';
COMMENT ON FUNCTION @extschema@.int4_fence_token_gt(pg_catalog.int4, @extschema@.fence_token) IS 'implementation of > operator';
COMMENT ON FUNCTION @extschema@.int4_fence_token_ge(pg_catalog.int4, @extschema@.fence_token) IS 'implementation of >= operator';
COMMENT ON FUNCTION @extschema@.int4_fence_token_cmp(pg_catalog.int4, @extschema@.fence_token) IS 'less-equal-greater';
COMMENT ON OPERATOR @extschema@.= (pg_catalog.int4, @extschema@.fence_token) IS 'equal';
COMMENT ON OPERATOR @extschema@.<> (pg_catalog.int4, @extschema@.fence_token) IS 'not equal';
COMMENT ON OPERATOR @extschema@.< (pg_catalog.int4, @extschema@.fence_token) IS 'less than';
COMMENT ON OPERATOR @extschema@.<= (pg_catalog.int4, @extschema@.fence_token) IS 'less than or equal';
COMMENT ON OPERATOR @extschema@.> (pg_catalog.int4, @extschema@.fence_token) IS 'greater than';
COMMENT ON OPERATOR @extschema@.>= (pg_catalog.int4, @extschema@.fence_token) IS 'greater than or equal';

COMMENT ON FUNCTION @extschema@.fence_token_sortsupport(pg_catalog.internal) IS 'sort support';
COMMENT ON OPERATOR FAMILY @extschema@.fence_token_ops USING btree IS 'fence_token, compared with itself, bigint, integer and smallint, and those integers with each other';
COMMENT ON OPERATOR CLASS @extschema@.fence_token_ops USING btree IS 'default btree operator class for fence_token';
COMMENT ON FUNCTION @extschema@.fence_token_hash(@extschema@.fence_token) IS 'hash, the same as bigint''s for the equal value';
COMMENT ON FUNCTION @extschema@.fence_token_hash_extended(@extschema@.fence_token, pg_catalog.int8) IS 'hash, the same as bigint''s for the equal value';
COMMENT ON OPERATOR FAMILY @extschema@.fence_token_ops USING hash IS 'fence_token, equal to itself, bigint, integer and smallint, and those integers to each other';
COMMENT ON OPERATOR CLASS @extschema@.fence_token_ops USING hash IS 'default hash operator class for fence_token';
COMMENT ON FUNCTION @extschema@.fence_token_smaller(@extschema@.fence_token, @extschema@.fence_token) IS 'smaller of two';
COMMENT ON FUNCTION @extschema@.fence_token_larger(@extschema@.fence_token, @extschema@.fence_token) IS 'larger of two';
COMMENT ON AGGREGATE @extschema@.min(@extschema@.fence_token) IS 'minimum value of all fence_token input values';
COMMENT ON AGGREGATE @extschema@.max(@extschema@.fence_token) IS 'maximum value of all fence_token input values';

-- counter.sql
COMMENT ON SEQUENCE @extschema@.fence_token_counter IS 'the durable token counter of this database: the last token reserved; only fence advances it';
COMMENT ON FUNCTION @extschema@.fence_advance_tokens(bigint) IS 'admin: move the token counter so that every later token is above at_least; returns the last token handed out';

-- clock.sql
COMMENT ON FUNCTION @extschema@.fence_now() IS 'the lease clock: real time, or the virtual test clock when it is set';
COMMENT ON FUNCTION @extschema@.fence_set_clock(pg_catalog.timestamptz) IS 'test servers only: set the virtual lease clock; NULL returns to real time';
COMMENT ON FUNCTION @extschema@.fence_advance_clock(pg_catalog.interval) IS 'test servers only: move the virtual lease clock forward';

-- lease.sql
COMMENT ON FUNCTION @extschema@.fence_try_lease(pg_catalog.text, pg_catalog.interval, pg_catalog.text) IS 'take a lease now and return its token, or NULL if another live holder has it; with owner, a detached lease';
COMMENT ON FUNCTION @extschema@.fence_try_xact_lease(pg_catalog.text, pg_catalog.interval) IS 'take a lease until the end of the transaction, or NULL if another live holder has it';
COMMENT ON FUNCTION @extschema@.fence_lease(pg_catalog.text, pg_catalog.interval, pg_catalog.interval, pg_catalog.text) IS 'wait until the lease is granted (first come, first served) and return its token';
COMMENT ON FUNCTION @extschema@.fence_xact_lease(pg_catalog.text, pg_catalog.interval, pg_catalog.interval) IS 'wait until the lease is granted, until the end of the transaction';
COMMENT ON FUNCTION @extschema@.fence_release(pg_catalog.text, @extschema@.fence_token) IS 'free the lease if token is its current token';
COMMENT ON FUNCTION @extschema@.fence_forget_token(pg_catalog.text, @extschema@.fence_token) IS 'this session forgets the detached lease it took with token (its token is no longer in effect here); the lease stays held; returns token';
COMMENT ON FUNCTION @extschema@.fence_renew(pg_catalog.text, @extschema@.fence_token, pg_catalog.interval) IS 'extend the lease to now + ttl if token is its current live token';
COMMENT ON FUNCTION @extschema@.fence_lease_status(pg_catalog.text, @extschema@.fence_token) IS 'held, expired, superseded or released';
COMMENT ON FUNCTION @extschema@.fence_wait_lease_end(pg_catalog.text, @extschema@.fence_token, pg_catalog.interval) IS 'wait until the lease with this token is no longer held and return its status then (expired, superseded or released), or NULL after timeout';
COMMENT ON FUNCTION @extschema@.fence_assert_current(pg_catalog.text, @extschema@.fence_token) IS 'raise SQLSTATE LF002 unless token is the lease''s current live token';
COMMENT ON FUNCTION @extschema@.fence_break(pg_catalog.text) IS 'admin: free the lease whoever holds it; returns the token it ended';
COMMENT ON FUNCTION @extschema@.fence_try_lease(pg_catalog.int8, pg_catalog.interval, pg_catalog.text) IS 'take a lease now and return its token, or NULL if another live holder has it; with owner, a detached lease';
COMMENT ON FUNCTION @extschema@.fence_try_xact_lease(pg_catalog.int8, pg_catalog.interval) IS 'take a lease until the end of the transaction, or NULL if another live holder has it';
COMMENT ON FUNCTION @extschema@.fence_lease(pg_catalog.int8, pg_catalog.interval, pg_catalog.interval, pg_catalog.text) IS 'wait until the lease is granted (first come, first served) and return its token';
COMMENT ON FUNCTION @extschema@.fence_xact_lease(pg_catalog.int8, pg_catalog.interval, pg_catalog.interval) IS 'wait until the lease is granted, until the end of the transaction';
COMMENT ON FUNCTION @extschema@.fence_release(pg_catalog.int8, @extschema@.fence_token) IS 'free the lease if token is its current token';
COMMENT ON FUNCTION @extschema@.fence_forget_token(pg_catalog.int8, @extschema@.fence_token) IS 'this session forgets the detached lease it took with token (its token is no longer in effect here); the lease stays held; returns token';
COMMENT ON FUNCTION @extschema@.fence_renew(pg_catalog.int8, @extschema@.fence_token, pg_catalog.interval) IS 'extend the lease to now + ttl if token is its current live token';
COMMENT ON FUNCTION @extschema@.fence_lease_status(pg_catalog.int8, @extschema@.fence_token) IS 'held, expired, superseded or released';
COMMENT ON FUNCTION @extschema@.fence_wait_lease_end(pg_catalog.int8, @extschema@.fence_token, pg_catalog.interval) IS 'wait until the lease with this token is no longer held and return its status then (expired, superseded or released), or NULL after timeout';
COMMENT ON FUNCTION @extschema@.fence_wait_leases_end(pg_catalog.text[], @extschema@.fence_token[], pg_catalog.interval) IS 'wait until any of the leases (keys[i], tokens[i]) is no longer held and return a row for each that has ended (expired, superseded or released), or no row after timeout';
COMMENT ON FUNCTION @extschema@.fence_assert_current(pg_catalog.int8, @extschema@.fence_token) IS 'raise SQLSTATE LF002 unless token is the lease''s current live token';
COMMENT ON FUNCTION @extschema@.fence_break(pg_catalog.int8) IS 'admin: free the lease whoever holds it; returns the token it ended';
COMMENT ON FUNCTION @extschema@.fence_current_token(pg_catalog.text) IS 'the token in effect in this transaction; with a lease key, for a trigger that names that lease';
COMMENT ON FUNCTION @extschema@.fence_current_token(pg_catalog.int8) IS 'the token in effect in this transaction for a trigger that names this lease';
COMMENT ON FUNCTION @extschema@.fence_use_token(@extschema@.fence_token, pg_catalog.text) IS 'set the token in effect for the rest of the transaction; with a lease key, for that lease only';
COMMENT ON FUNCTION @extschema@.fence_use_token(@extschema@.fence_token, pg_catalog.int8) IS 'set the token in effect for the rest of the transaction, for this lease only';
COMMENT ON FUNCTION @extschema@.fence_leases_all() IS 'every held lease and permit of the server, live or expired (the fence_leases view)';
COMMENT ON VIEW @extschema@.fence_leases IS 'every held lease and permit of the server, live or expired; the key and owner of another role''s lease are hidden';
COMMENT ON FUNCTION @extschema@.fence_leases_of(pg_catalog.text) IS 'the rows of fence_leases for one key of this database, found without reading the whole table';
COMMENT ON FUNCTION @extschema@.fence_leases_of(pg_catalog.int8) IS 'the rows of fence_leases for one bigint key of this database, found without reading the whole table';
COMMENT ON FUNCTION @extschema@.fence_lease_waiters_of(pg_catalog.text) IS 'the rows of fence_lease_waiters for one key of this database, found without reading the whole table';
COMMENT ON FUNCTION @extschema@.fence_lease_waiters_of(pg_catalog.int8) IS 'the rows of fence_lease_waiters for one bigint key of this database, found without reading the whole table';
COMMENT ON FUNCTION @extschema@.fence_lease_blockers_of(pg_catalog.text) IS 'what a session asking for this key would wait for: its live holders and the sessions queued for it, as fence_blocking_pids shows them';
COMMENT ON FUNCTION @extschema@.fence_lease_blockers_of(pg_catalog.int8) IS 'what a session asking for this bigint key would wait for: its live holders and the sessions queued for it, as fence_blocking_pids shows them';

-- stats.sql
COMMENT ON FUNCTION @extschema@.fence_stats_all() IS 'per-database lease and trigger counts since server start (the fence_stats view)';
COMMENT ON VIEW @extschema@.fence_stats IS 'per-database lease and trigger counts since server start';
COMMENT ON FUNCTION @extschema@.fence_lease_counts_all() IS 'leases and permits held per database, scope, kind and state, without reading the lease table (the fence_lease_counts view)';
COMMENT ON VIEW @extschema@.fence_lease_counts IS 'leases and permits held per database, scope (session, transaction, detached), kind (lease, permit) and state (live, expired): the counts of fence_leases'' rows, kept as leases change';

-- enforce.sql
COMMENT ON FUNCTION @extschema@.fence_enforce() IS 'trigger: reject a write whose fencing token is below the row''s fence';
COMMENT ON FUNCTION @extschema@.fence_protect(pg_catalog.regclass, pg_catalog.name, pg_catalog.text, pg_catalog.text, pg_catalog.bool, pg_catalog.bool) IS 'create or replace the fence_enforce trigger on a table; returns its name';
COMMENT ON FUNCTION @extschema@.fence_unprotect(pg_catalog.regclass) IS 'drop the trigger fence_protect made; false if there was none';
