package pgfence_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"fence/pgfence"

	"github.com/jackc/pgconn"
	"github.com/jackc/pgx/v4"
	"github.com/jackc/pgx/v4/pgxpool"
)

func update(ctx context.Context, table, result string) func(pgx.Tx) error {
	return func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE "+table+" SET result = $1 WHERE id = 1", result)
		return err
	}
}

// The frozen holder: A's process is stopped past its TTL, B takes the lease
// over and writes; A, resumed, writes what it computed: the write never
// lands, and A learns that its lease is gone.
func TestFrozenHolder(t *testing.T) {
	pool := newPool(t, 4)
	table := protectedTable(t, pool, "")
	key := "job:" + name(t)
	a := startWorker(t, "frozen", "PGFENCE_TEST_KEY="+key, "PGFENCE_TEST_TABLE="+table)
	tokenA, err := strconv.ParseInt(a.line(t, "token "), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()

	fx := pgfence.New(pool)
	var tokenB int64
	err = fx.Do(context.Background(), key, pgfence.Options{TTL: 30 * time.Second, Wait: 10 * time.Second},
		func(ctx context.Context, l *pgfence.Lease) error {
			tokenB = l.Token()
			return l.Tx(ctx, update(ctx, table, "done by B"))
		})
	if err != nil {
		t.Fatalf("B: %v", err)
	}
	if tokenB <= tokenA {
		t.Fatalf("B's token %d is not above A's %d", tokenB, tokenA)
	}
	// A stays frozen well past its 1 s TTL.
	time.Sleep(time.Until(frozen.Add(2500 * time.Millisecond)))
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	a.send(t, "go")
	tx := a.line(t, "tx ")
	do := a.line(t, "do ")
	if tx != "stale" && tx != "lost expired" && tx != "lost superseded" && tx != "lost deadline" {
		t.Errorf("A's late write: %s, want stale or lost", tx)
	}
	if do != tx {
		t.Errorf("A's Do returned %q, its Tx %q", do, tx)
	}
	if result, fence := row(t, pool, table); result != "done by B" || fence != tokenB {
		t.Errorf("row: %q with fence %d, want \"done by B\" with %d", result, fence, tokenB)
	}
	t.Logf("A (token %d): %s; B's token %d", tokenA, tx, tokenB)
}

// Renewal keeps a 1 s lease through 4 s of work.
func TestRenewalKeepsLease(t *testing.T) {
	pool := newPool(t, 4)
	table := protectedTable(t, pool, ", strict => true, lease => 'job:"+name(t)+"'")
	key := "job:" + name(t)
	fx := pgfence.New(pool)
	err := fx.Do(context.Background(), key, pgfence.Options{TTL: time.Second}, func(ctx context.Context, l *pgfence.Lease) error {
		start := l.Deadline()
		for i := 0; i < 8; i++ {
			// strict: each write also checks that the token is the live one.
			if err := l.Tx(ctx, update(ctx, table, "step "+strconv.Itoa(i))); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
				return pgfence.Cause(ctx)
			case <-time.After(500 * time.Millisecond):
			}
		}
		return stillHeld(ctx, t, pool, l, start, 3*time.Second, "4 s")
	})
	if err != nil {
		t.Fatal(err)
	}
	if result, _ := row(t, pool, table); result != "step 7" {
		t.Errorf("row: %q", result)
	}
}

// fence_break by a superuser cancels the holder's ctx within a second, and
// Cause, Err and Do say it was broken.
func TestBreakCancelsContext(t *testing.T) {
	pool, key, fx := setup(t, 4)
	var broke time.Time
	var lease *pgfence.Lease
	err := fx.Do(context.Background(), key, pgfence.Options{TTL: 30 * time.Second}, func(ctx context.Context, l *pgfence.Lease) error {
		lease = l
		time.Sleep(200 * time.Millisecond)
		broke = time.Now()
		exec1(t, pool, "SELECT fence_break($1)", key)
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("ctx not cancelled 5 s after fence_break")
		}
		if took := time.Since(broke); took > time.Second {
			t.Errorf("ctx cancelled %s after fence_break", took)
		}
		wantLost(t, "Cause(ctx)", pgfence.Cause(ctx), pgfence.Broken)
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("ctx.Err() = %v", ctx.Err())
		}
		wantLost(t, "l.Err()", l.Err(), pgfence.Broken)
		select {
		case <-l.Done():
		default:
			t.Error("Done() is not closed")
		}
		wantLost(t, "Tx after the loss", l.Tx(ctx, func(pgx.Tx) error { return nil }), pgfence.Broken)
		return ctx.Err()
	})
	if lost := wantLost(t, "Do", err, pgfence.Broken); lost != nil && lost.Token != lease.Token() {
		t.Errorf("Do's error names token %d, the lease's is %d", lost.Token, lease.Token())
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Do's error does not unwrap to context.Canceled: %v", err)
	}
}

// A statement running in Tx when the lease is lost is cancelled.
func TestLossCancelsRunningStatement(t *testing.T) {
	pool, key, fx := setup(t, 4)
	var took time.Duration
	err := fx.Do(context.Background(), key, pgfence.Options{TTL: 30 * time.Second}, func(ctx context.Context, l *pgfence.Lease) error {
		go func() {
			time.Sleep(500 * time.Millisecond)
			if _, err := pool.Exec(context.Background(), "SELECT fence_break($1)", key); err != nil {
				t.Error(err)
			}
		}()
		start := time.Now()
		// Another context than the lease's: the statement is cancelled all the same.
		err := l.Tx(context.Background(), func(tx pgx.Tx) error {
			_, err := tx.Exec(context.Background(), "SELECT pg_sleep(30)")
			return err
		})
		took = time.Since(start)
		return err
	})
	wantLost(t, "Do", err, pgfence.Broken)
	if took > 2*time.Second {
		t.Errorf("the statement ran %s", took)
	}
}

// Only Tx carries the token: a pooled connection has none afterwards, nor
// does a statement outside Tx while the lease is held.
func TestPooledConnectionCarriesNoToken(t *testing.T) {
	pool := newPool(t, 1) // one connection: Tx's is the one checked after
	table := protectedTable(t, pool, ", require_token => true")
	key := "job:" + name(t)
	fx := pgfence.New(pool)
	var token int64
	noToken := func(ctx context.Context, when string) {
		var cur *int64
		if err := pool.QueryRow(ctx, "SELECT fence_current_token()::bigint").Scan(&cur); err != nil {
			t.Fatal(err)
		}
		if cur != nil && *cur != 0 {
			t.Errorf("%s: the pooled connection carries token %d", when, *cur)
		}
		_, err := pool.Exec(ctx, "UPDATE "+table+" SET result = 'no token' WHERE id = 1")
		var need *pgfence.TokenRequiredError
		var pg *pgconn.PgError
		if err = pgfence.Classify(err); !errors.As(err, &need) || !errors.As(err, &pg) || pg.Code != "LF003" {
			t.Errorf("%s: a write without Tx: %v, want TokenRequiredError (LF003)", when, err)
		}
	}
	err := fx.Do(context.Background(), key, pgfence.Options{TTL: 10 * time.Second}, func(ctx context.Context, l *pgfence.Lease) error {
		token = l.Token()
		if err := l.Tx(ctx, update(ctx, table, "with token")); err != nil {
			return err
		}
		noToken(ctx, "while held")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	noToken(context.Background(), "after Do")
	if result, fence := row(t, pool, table); result != "with token" || fence != token {
		t.Errorf("row: %q with fence %d, want \"with token\" with %d", result, fence, token)
	}
}

// A killed holder's lease ends by its TTL: refused at once, granted to a
// waiter within the TTL, with a larger token.
func TestKilledHolderExpires(t *testing.T) {
	pool := newPool(t, 4)
	key := "job:" + name(t)
	w := startWorker(t, "hold", "PGFENCE_TEST_KEY="+key)
	old, err := strconv.ParseInt(w.line(t, "token "), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = w.cmd.Wait()
	killed := time.Now()
	fx := pgfence.New(pool)
	var unavailable *pgfence.LeaseUnavailableError
	err = fx.Do(context.Background(), key, pgfence.Options{}, func(context.Context, *pgfence.Lease) error { return nil })
	if !errors.As(err, &unavailable) || unavailable.Key != key {
		t.Fatalf("right after the kill: %v, want LeaseUnavailableError", err)
	}
	err = fx.Do(context.Background(), key, pgfence.Options{TTL: 5 * time.Second, Wait: 10 * time.Second},
		func(ctx context.Context, l *pgfence.Lease) error {
			took := time.Since(killed)
			if took > 3*time.Second {
				t.Errorf("granted %s after the kill; the TTL was 2 s", took)
			}
			if l.Token() <= old {
				t.Errorf("token %d after %d", l.Token(), old)
			}
			var status string
			if err := pool.QueryRow(ctx, "SELECT fence_lease_status($1, $2)", key, old).Scan(&status); err != nil {
				return err
			}
			if status != "superseded" {
				t.Errorf("the killed holder's token is %s", status)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

func poolThrough(t *testing.T, cfg *pgx.ConnConfig) *pgxpool.Pool {
	t.Helper()
	pcfg, err := pgxpool.ParseConfig("")
	if err != nil {
		t.Fatal(err)
	}
	pcfg.ConnConfig = cfg
	pcfg.MaxConns = 4
	pool, err := pgxpool.ConnectConfig(context.Background(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// A network that stalls for less than the TTL suspends the lease; the next
// renewal that gets through resumes it, and it was never lost.
func TestStallSuspendsLease(t *testing.T) {
	direct := newPool(t, 2)
	proxy := newStallProxy(t)
	pool := poolThrough(t, proxy.dsn(t))
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// Renewals through the stalled network, the watchdog straight to the server.
	fx := pgfence.New(pool, pgfence.WithConnConfig(cfg))
	key := "job:" + name(t)
	err = fx.Do(context.Background(), key, pgfence.Options{TTL: 3 * time.Second}, func(ctx context.Context, l *pgfence.Lease) error {
		proxy.stall(true)
		suspended := waitFor(3*time.Second, l.Suspended)
		proxy.stall(false)
		if !suspended {
			t.Error("the lease was not suspended while renewals could not get through")
		}
		if !waitFor(3*time.Second, func() bool { return !l.Suspended() }) {
			t.Error("the lease stayed suspended after the network came back")
		}
		if l.Err() != nil || ctx.Err() != nil {
			t.Errorf("after the stall: Err %v, ctx %v", l.Err(), ctx.Err())
		}
		var status string
		if err := direct.QueryRow(ctx, "SELECT fence_lease_status($1, $2)", key, l.Token()).Scan(&status); err != nil {
			return err
		}
		if status != "held" {
			t.Errorf("status after the stall: %s", status)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A network that stalls past the local deadline loses the lease there, on
// the holder's own clock, before any word from the server can get through.
func TestStallPastDeadlineLosesLease(t *testing.T) {
	proxy := newStallProxy(t)
	pool := poolThrough(t, proxy.dsn(t)) // the watchdog goes through it too
	fx := pgfence.New(pool)
	key := "job:" + name(t)
	err := fx.Do(context.Background(), key, pgfence.Options{TTL: time.Second}, func(ctx context.Context, l *pgfence.Lease) error {
		proxy.stall(true)
		defer proxy.stall(false)
		stalled := time.Now()
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the lease outlived a 5 s stall with a TTL of 1 s")
		}
		if took := time.Since(stalled); took > 1500*time.Millisecond {
			t.Errorf("lost %s after the stall began; the TTL is 1 s", took)
		}
		if d := l.Deadline(); time.Now().Before(d) {
			t.Errorf("lost before the local deadline %v", d)
		}
		return pgfence.Cause(ctx)
	})
	wantLost(t, "Do", err, pgfence.Deadline)
}

// Not granted: at once (Wait 0), or within Wait (55P03 underneath).
func TestUnavailable(t *testing.T) {
	_, key, fx := setup(t, 4)
	held, err := fx.Acquire(context.Background(), key, pgfence.Options{TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(context.Background())
	_, err = fx.Acquire(context.Background(), key, pgfence.Options{})
	var un *pgfence.LeaseUnavailableError
	if !errors.As(err, &un) || un.Wait != 0 {
		t.Errorf("Wait 0: %v", err)
	}
	start := time.Now()
	_, err = fx.Acquire(context.Background(), key, pgfence.Options{Wait: 300 * time.Millisecond})
	var pg *pgconn.PgError
	if !errors.As(err, &un) || !errors.As(err, &pg) || pg.Code != "55P03" {
		t.Errorf("Wait 300ms: %v, want LeaseUnavailableError over 55P03", err)
	}
	if took := time.Since(start); took < 250*time.Millisecond || took > 3*time.Second {
		t.Errorf("Wait 300ms took %s", took)
	}
	// A cancelled wait leaves nothing behind.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err = fx.Acquire(ctx, key, pgfence.Options{Wait: pgfence.WaitForever}); err == nil {
		t.Error("WaitForever with a 300ms context was granted")
	}
}

// Acquire and Release, for code without a callback: Done and Context end
// at the release, and the lease is free at once.
func TestAcquireRelease(t *testing.T) {
	pool, key, fx := setup(t, 4)
	l, err := fx.Acquire(context.Background(), key, pgfence.Options{TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if l.Key() != key || l.Token() <= 0 || l.Owner() == "" || l.Err() != nil {
		t.Fatalf("lease %q token %d owner %q err %v", l.Key(), l.Token(), l.Owner(), l.Err())
	}
	var owner string
	if err := pool.QueryRow(context.Background(), "SELECT owner FROM fence_leases WHERE key = $1", key).Scan(&owner); err != nil || owner != l.Owner() {
		t.Errorf("fence_leases says owner %q (%v), the lease %q", owner, err, l.Owner())
	}
	child, cancel := context.WithCancel(l.Context())
	defer cancel()
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Errorf("a second Release: %v", err)
	}
	select {
	case <-l.Done():
	default:
		t.Error("Done() is not closed after Release")
	}
	wantLost(t, "Cause of a child of Context()", pgfence.Cause(child), pgfence.Released)
	var status string
	if err := pool.QueryRow(context.Background(), "SELECT fence_lease_status($1, $2)", key, l.Token()).Scan(&status); err != nil || status != "released" {
		t.Errorf("status after Release: %s (%v)", status, err)
	}
}

// Do releases the lease whatever fn does: returns an error, or panics.
func TestDoReleasesOnErrorAndPanic(t *testing.T) {
	_, key, fx := setup(t, 4)
	opts := pgfence.Options{TTL: 30 * time.Second}
	mine := errors.New("mine")
	if err := fx.Do(context.Background(), key, opts, func(context.Context, *pgfence.Lease) error { return mine }); err != mine {
		t.Errorf("Do returned %v, want fn's error", err)
	}
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v", p)
			}
		}()
		_ = fx.Do(context.Background(), key, opts, func(context.Context, *pgfence.Lease) error { panic("boom") })
	}()
	// Wait 0: free at once, not at the end of a TTL.
	if err := fx.Do(context.Background(), key, opts, func(context.Context, *pgfence.Lease) error { return nil }); err != nil {
		t.Errorf("the lease is not free after an error and a panic: %v", err)
	}
}

// A stale write in Tx is a *StaleTokenError over the LF001 PgError: here
// a lease granted later, on another key, wrote the row first.
func TestStaleTokenError(t *testing.T) {
	pool, key, fx := setup(t, 4)
	table := protectedTable(t, pool, "")
	err := fx.Do(context.Background(), key, pgfence.Options{}, func(ctx context.Context, l *pgfence.Lease) error {
		if err := fx.Do(ctx, key+":later", pgfence.Options{}, func(ctx context.Context, later *pgfence.Lease) error {
			return later.Tx(ctx, update(ctx, table, "later"))
		}); err != nil {
			t.Fatal(err)
		}
		return l.Tx(ctx, update(ctx, table, "stale"))
	})
	var stale *pgfence.StaleTokenError
	var pg *pgconn.PgError
	if !errors.As(err, &stale) || !errors.As(err, &pg) || pg.Code != "LF001" {
		t.Fatalf("Do: %v, want StaleTokenError over LF001", err)
	}
	if result, _ := row(t, pool, table); result != "later" {
		t.Errorf("row: %q", result)
	}
}

func waitFor(d time.Duration, cond func() bool) bool {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

// A server restart ends every lease: the holder learns it as Connection
// (PGFENCE_TEST_RESTART: a shell command that restarts the server).
func TestServerRestart(t *testing.T) {
	restart := os.Getenv("PGFENCE_TEST_RESTART")
	if restart == "" {
		t.Skip("PGFENCE_TEST_RESTART is not set")
	}
	_, key, fx := setup(t, 4)
	l, err := fx.Acquire(context.Background(), key, pgfence.Options{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	if out, err := exec.Command("sh", "-c", restart).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", restart, err, out)
	}
	select {
	case <-l.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("the lease outlived a server restart by 15 s")
	}
	wantLost(t, "Err after a restart", l.Err(), pgfence.Connection)
	wantLost(t, "Cause of Context()", pgfence.Cause(l.Context()), pgfence.Connection)
}

// A waiter (WaitForever) is granted the lease when its holder releases it,
// and keeps it: the grant came after a wait longer than a third of its
// TTL, so it is renewed at once, and then as usual.  Its try on the pool
// found the key held, so it waited in fence_lease (queued on the server).
func TestWaiterGetsReleasedLease(t *testing.T) {
	pool, key, fx := setup(t, 4)
	a, err := fx.Acquire(context.Background(), key, pgfence.Options{TTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(500 * time.Millisecond)
		var waiters int
		if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM fence_lease_waiters WHERE key = $1", key).Scan(&waiters); err != nil {
			t.Error(err)
		} else if waiters != 1 {
			t.Errorf("%d waiters queued for the key, want 1", waiters)
		}
		if err := a.Release(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	start := time.Now()
	err = fx.Do(context.Background(), key, pgfence.Options{TTL: 600 * time.Millisecond, Wait: pgfence.WaitForever},
		func(ctx context.Context, l *pgfence.Lease) error {
			if took := time.Since(start); took < 400*time.Millisecond || took > 3*time.Second {
				t.Errorf("granted after %s; the holder released after 500ms", took)
			}
			if l.Token() <= a.Token() {
				t.Errorf("token %d after %d", l.Token(), a.Token())
			}
			select {
			case <-ctx.Done():
				return pgfence.Cause(ctx)
			case <-time.After(1500 * time.Millisecond): // 2.5 TTLs
			}
			return l.Err()
		})
	if err != nil {
		t.Fatal(err)
	}
}

// A pool whose connections time out after 100 ms: the lease's own
// connection does not inherit that, and its watchdog keeps one wait going
// for the 2 s the lease is held, then learns of a break within a second.
func TestPoolStatementTimeoutSparesWatchdog(t *testing.T) {
	admin, key, _ := setup(t, 2)
	app := "pgfence-test-" + name(t)
	pool := newPoolWith(t, 2, map[string]string{"application_name": app, "statement_timeout": "100",
		"lock_timeout": "100", "idle_in_transaction_session_timeout": "100"})
	fx := pgfence.New(pool)
	err := fx.Do(context.Background(), key, pgfence.Options{TTL: time.Second}, func(ctx context.Context, l *pgfence.Lease) error {
		time.Sleep(2 * time.Second)
		if l.Err() != nil {
			t.Fatalf("lost after 2 s: %v", l.Err())
		}
		var long bool
		if err := admin.QueryRow(context.Background(), "SELECT count(*) = 1 FROM pg_stat_activity "+
			"WHERE application_name = $1 AND state = 'active' AND query LIKE '%fence\\_wait\\_lease%\\_end(%' "+
			"AND now() - query_start > interval '1.5 seconds'", app).Scan(&long); err != nil {
			t.Fatal(err)
		}
		if !long {
			t.Error("the watchdog's wait did not last: the pool's statement_timeout reached it")
		}
		broke := time.Now()
		exec1(t, admin, "SELECT fence_break($1)", key)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
			t.Fatal("ctx not cancelled within a second of fence_break")
		}
		if took := time.Since(broke); took > time.Second {
			t.Errorf("ctx cancelled %s after fence_break", took)
		}
		return ctx.Err()
	})
	wantLost(t, "Do", err, pgfence.Broken)
}

// appPool: a pool with an application_name of the test's own.
func appPool(t *testing.T, maxConns int32) (*pgxpool.Pool, string) {
	t.Helper()
	app := "pgfence-test-" + name(t)
	return newPoolWith(t, maxConns, map[string]string{"application_name": app}), app
}

// count: the first column of sql's one row.
func count(t *testing.T, pool *pgxpool.Pool, sql string, args ...interface{}) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("not within 5 s: %s", what)
		}
	}
}

const waitsOf = "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' " +
	"AND query LIKE '%fence\\_wait\\_lease%\\_end(%'"

// Twenty leases of one Fence: one backend waits for all of them, and a
// break of any is pushed within a second.
func TestTwentyLeasesOneWatchdog(t *testing.T) {
	admin, key, _ := setup(t, 2)
	pool, app := appPool(t, 4)
	fx := pgfence.New(pool)
	var leases []*pgfence.Lease
	defer func() {
		for _, l := range leases {
			_ = l.Release(context.Background())
		}
	}()
	for i := 0; i < 20; i++ {
		l, err := fx.Acquire(context.Background(), fmt.Sprintf("%s:%d", key, i), pgfence.Options{TTL: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
	}
	eventually(t, "one backend waits for all twenty", func() bool { return count(t, admin, waitsOf, app) == 1 })
	eventually(t, "the pool's backends and the watchdog's, nothing per lease", func() bool {
		return count(t, admin, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", app) <= 4+1
	})
	for _, i := range []int{13, 19, 0} {
		broke := time.Now()
		exec1(t, admin, "SELECT fence_break($1)", leases[i].Key())
		select {
		case <-leases[i].Done():
		case <-time.After(time.Second):
			t.Fatalf("lease %d not lost within a second of fence_break", i)
		}
		if took := time.Since(broke); took > time.Second {
			t.Errorf("lease %d lost %s after fence_break", i, took)
		}
		wantLost(t, "Err()", leases[i].Err(), pgfence.Broken)
	}
	for i, l := range leases {
		if lost := l.Err() != nil; lost != (i == 0 || i == 13 || i == 19) {
			t.Errorf("lease %d: Err() = %v", i, l.Err())
		}
	}
	eventually(t, "the wait goes on with the others", func() bool { return count(t, admin, waitsOf, app) == 1 })
}

// watchedLease: a lease of fx on key, held until the test ends, that the
// watchdog sleeps on (the one wait of the backends of app).
func watchedLease(t *testing.T, fx *pgfence.Fence, admin *pgxpool.Pool, app, key string) *pgfence.Lease {
	t.Helper()
	l, err := fx.Acquire(context.Background(), key, pgfence.Options{TTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	eventually(t, "the watchdog waits", func() bool { return count(t, admin, waitsOf, app) == 1 })
	return l
}

// A lease taken while the watchdog sleeps on another is watched at once.
func TestNewLeaseWatchedAtOnce(t *testing.T) {
	admin, key, _ := setup(t, 2)
	pool, app := appPool(t, 2)
	fx := pgfence.New(pool)
	watchedLease(t, fx, admin, app, key+":first")
	l, err := fx.Acquire(context.Background(), key, pgfence.Options{TTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	exec1(t, admin, "SELECT fence_break($1)", key)
	select {
	case <-l.Done():
	case <-time.After(time.Second):
		t.Fatal("the new lease was not lost within a second of fence_break")
	}
	wantLost(t, "Release", l.Release(context.Background()), pgfence.Broken)
}

// As with fence 1.2: each lease watches itself on a connection of its own.
func TestPerLeaseWatchdog(t *testing.T) {
	admin, key, _ := setup(t, 2)
	pool, app := appPool(t, 2)
	fx := pgfence.New(pool)
	pgfence.PerLeaseWatchdog(fx)
	a, err := fx.Acquire(context.Background(), key+":a", pgfence.Options{TTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Release(context.Background()) }()
	b, err := fx.Acquire(context.Background(), key+":b", pgfence.Options{TTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "two watchdogs wait", func() bool {
		return count(t, admin, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 "+
			"AND state = 'active' AND query LIKE 'SELECT fence_wait_lease_end(%'", app) == 2
	})
	exec1(t, admin, "SELECT fence_break($1)", b.Key())
	select {
	case <-b.Done():
	case <-time.After(time.Second):
		t.Fatal("not lost within a second of fence_break")
	}
	if a.Err() != nil {
		t.Errorf("the other lease: %v", a.Err())
	}
	wantLost(t, "Release", b.Release(context.Background()), pgfence.Broken)
}

// counted: a pool of n connections, all open, with an application_name of
// the test's own, and a Fence on it whose connections outside the pool are
// counted too.  Returns how many of each were opened so far.
func counted(t *testing.T, n int32) (pool *pgxpool.Pool, app string, fx *pgfence.Fence, pooled, own func() int64) {
	t.Helper()
	if dsn == "" {
		t.Skip("PGFENCE_TEST_DSN is not set")
	}
	app = "pgfence-test-" + name(t)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = n
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	var p, o atomic.Int64
	cfg.AfterConnect = func(context.Context, *pgx.Conn) error { p.Add(1); return nil }
	if pool, err = pgxpool.ConnectConfig(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	var conns []*pgxpool.Conn
	for i := int32(0); i < n; i++ {
		c, err := pool.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}
	direct := pool.Config().ConnConfig
	fx = pgfence.New(pool, pgfence.WithConnector(func(ctx context.Context) (*pgx.Conn, error) {
		o.Add(1)
		return pgx.ConnectConfig(ctx, direct)
	}))
	return pool, app, fx, p.Load, o.Load
}

// A lease on a free key is taken in one statement on a pooled connection,
// with or without a Wait: no connection is opened for it, and while it is
// held no connection of the pool carries its token, the one that granted
// it included (it forgot the token in the same statement).
func TestGrantOnPoolOpensNoConnection(t *testing.T) {
	admin, key, _ := setup(t, 2)
	pool, app, fx, pooled, own := counted(t, 3)
	backends := "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1"
	if n := count(t, admin, backends, app); n != 3 {
		t.Fatalf("%d backends of the pool, want 3", n)
	}
	for _, wait := range []time.Duration{0, 5 * time.Second} {
		err := fx.Do(context.Background(), key, pgfence.Options{TTL: 30 * time.Second, Wait: wait},
			func(ctx context.Context, l *pgfence.Lease) error {
				// First, before the lease could join the watchdog (100 ms),
				// whose connection is the Fence's, not the lease's.
				if p, o := pooled(), own(); p != 3 || o != 0 {
					t.Errorf("Wait %s: %d pooled and %d other connections opened, want 3 and 0", wait, p, o)
				}
				if n := count(t, admin, backends, app); n != 3 {
					t.Errorf("Wait %s: %d backends of the test, want the pool's 3", wait, n)
				}
				var status string
				if err := admin.QueryRow(ctx, "SELECT fence_lease_status($1, $2)", key, l.Token()).Scan(&status); err != nil {
					return err
				}
				if status != "held" {
					t.Errorf("Wait %s: the lease is %s", wait, status)
				}
				idle := pool.AcquireAllIdle(ctx)
				defer func() {
					for _, c := range idle {
						c.Release()
					}
				}()
				if len(idle) != 3 {
					t.Errorf("Wait %s: %d idle connections in the pool, want 3", wait, len(idle))
				}
				for _, c := range idle {
					var none bool
					var pid int32
					if err := c.QueryRow(ctx, "SELECT fence_current_token() IS NULL, pg_backend_pid()").Scan(&none, &pid); err != nil {
						return err
					}
					if !none {
						t.Errorf("Wait %s: pooled connection %d carries a token", wait, pid)
					}
				}
				return nil
			})
		if err != nil {
			t.Fatalf("Wait %s: %v", wait, err)
		}
	}
}

// A lease broken within its first 100 ms, before it joins the watchdog, is
// still lost within a second (its renewal is 10 s away): the call made
// when it joins returns at once.  With the watchdog idle (the lease starts
// it), then asleep on another lease (the lease makes it call again).
func TestEarlyBreakStillLost(t *testing.T) {
	admin, key, _ := setup(t, 2)
	pool, app := appPool(t, 2)
	fx := pgfence.New(pool)
	for _, other := range []bool{false, true} {
		if other {
			watchedLease(t, fx, admin, app, key+":other")
		}
		l, err := fx.Acquire(context.Background(), key, pgfence.Options{TTL: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		granted := time.Now()
		exec1(t, admin, "SELECT fence_break($1)", key)
		broke := time.Now()
		if early := broke.Sub(granted); early >= 100*time.Millisecond {
			t.Errorf("with another lease %v: broken %s after the grant, not within 100 ms", other, early)
		}
		select {
		case <-l.Done():
		case <-time.After(time.Second):
			t.Fatalf("with another lease %v: not lost within a second of an early fence_break", other)
		}
		t.Logf("with another lease %v: lost %s after the break", other, time.Since(broke).Round(time.Millisecond))
		wantLost(t, "Release", l.Release(context.Background()), pgfence.Broken)
	}
}

// Leases released within their first 100 ms never reach the watchdog: its
// call goes on (no cancel request, no new call), and no connection is
// opened for them.
func TestShortLeasesLeaveWatchdogAlone(t *testing.T) {
	admin, key, _ := setup(t, 2)
	_, app, fx, pooled, own := counted(t, 2)
	watchedLease(t, fx, admin, app, key+":held")
	var started time.Time
	watchdogCall := "SELECT query_start FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' " +
		"AND query LIKE '%fence\\_wait\\_leases\\_end(%'"
	if err := admin.QueryRow(context.Background(), watchdogCall, app).Scan(&started); err != nil {
		t.Fatal(err)
	}
	calls, cancels := pgfence.WatchdogCounts(fx)
	p, o := pooled(), own()
	for i := 0; i < 20; i++ {
		err := fx.Do(context.Background(), key, pgfence.Options{TTL: 30 * time.Second}, func(ctx context.Context, l *pgfence.Lease) error {
			return l.Tx(ctx, func(tx pgx.Tx) error { return nil })
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond) // a join that was missed would come by then
	if c, x := pgfence.WatchdogCounts(fx); c != calls || x != cancels {
		t.Errorf("the watchdog made %d calls and sent %d cancel requests for 20 short leases", c-calls, x-cancels)
	}
	var still time.Time
	if err := admin.QueryRow(context.Background(), watchdogCall, app).Scan(&still); err != nil {
		t.Fatal(err)
	}
	if !still.Equal(started) {
		t.Errorf("the watchdog's call started at %v, then at %v", started, still)
	}
	if p2, o2 := pooled(), own(); p2 != p || o2 != o {
		t.Errorf("20 short leases opened %d pooled and %d other connections", p2-p, o2-o)
	}
}

// A grant on the pool whose answer never comes back (the server's replies
// are held, and the context ends) may have been made: it is released, and
// the key is free again at once, not after its TTL.
func TestInterruptedPoolGrantReleased(t *testing.T) {
	admin, key, _ := setup(t, 2)
	proxy := newStallProxy(t)
	pool := poolThrough(t, proxy.dsn(t))
	fx := pgfence.New(pool, pgfence.WithLogger(t.Logf))
	// The first lease asks what the server has; this one is normal.
	var first int64
	if err := fx.Do(context.Background(), key+":first", pgfence.Options{}, func(_ context.Context, l *pgfence.Lease) error {
		first = l.Token()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	owner := "pgfence-test-interrupted"
	proxy.stallReplies(true)
	go func() {
		time.Sleep(time.Second)
		proxy.stallReplies(false)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if l, err := fx.Acquire(ctx, key, pgfence.Options{TTL: time.Minute, Owner: owner}); err == nil {
		_ = l.Release(context.Background())
		t.Fatal("granted, though its answer was held")
	}
	// The grant was made on the server, then released.
	var granted int
	if err := admin.QueryRow(context.Background(), "SELECT count(*) FROM fence_leases WHERE key = $1", key).Scan(&granted); err != nil {
		t.Fatal(err)
	}
	if granted != 0 {
		t.Errorf("%d leases left on the key after the interrupted grant", granted)
	}
	var last *int64
	if err := admin.QueryRow(context.Background(),
		"SELECT fence_try_lease($1, '1 second', owner => 'someone else')::bigint", key).Scan(&last); err != nil {
		t.Fatal(err)
	}
	if last == nil {
		t.Fatal("the key is not free after the interrupted grant")
	}
	// Tokens of a database count up one a grant: the one between was the
	// interrupted grant's, made on the server.
	if *last != first+2 {
		t.Errorf("token %d after %d: the interrupted grant was not made, nothing was tested", *last, first)
	}
}

// The statement that gives back a grant whose answer was lost reads only
// that key's leases (fence_leases_of) when the server has fence 1.3's
// fence_forget_token, and fence_leases, every lease of the server,
// otherwise.  Each releases what the owner holds of the key, and nothing of
// another owner's.
func TestReleaseOwnedReadsOneKey(t *testing.T) {
	admin, key, _ := setup(t, 2)
	const ofKey = "SELECT count(fence_release(l.key, l.token)) FROM fence_leases_of($1::text) l " +
		"WHERE l.owner = $2::text"
	const ofAll = "SELECT count(fence_release(l.key, l.token)) FROM fence_leases l " +
		"WHERE l.database = current_database() AND l.key = $1::text AND l.owner = $2::text"
	const owner = "pgfence-test-lost-grant"
	for i, c := range []struct {
		what          string
		asked         bool
		multi, forget bool
		want          string
	}{
		{"fence 1.3", true, true, true, ofKey},
		{"fence 1.2", true, false, false, ofAll},
		{"fence 1.3 without fence_forget_token", true, true, false, ofAll},
		{"not asked yet", false, false, false, ofAll},
	} {
		fx := pgfence.New(admin, pgfence.WithLogger(t.Logf))
		if c.asked {
			pgfence.ServerHas(fx, c.multi, c.forget)
		}
		mine := fmt.Sprintf("%s:%d:mine", key, i)
		theirs := fmt.Sprintf("%s:%d:theirs", key, i)
		exec1(t, admin, "SELECT fence_forget_token($1::text, fence_try_lease($1::text, '30 s', owner => $2::text))", mine, owner)
		exec1(t, admin, "SELECT fence_forget_token($1::text, fence_try_lease($1::text, '30 s', owner => 'someone else'))", theirs)
		if got := pgfence.ReleaseOwned(fx, mine, owner); got != c.want {
			t.Errorf("%s: the release ran %q, want %q", c.what, got, c.want)
		}
		pgfence.ReleaseOwned(fx, theirs, owner)
		var held []string
		if err := admin.QueryRow(context.Background(),
			"SELECT coalesce(array_agg(key ORDER BY key), '{}') FROM fence_leases WHERE key = ANY($1::text[])",
			[]string{mine, theirs}).Scan(&held); err != nil {
			t.Fatal(err)
		}
		if len(held) != 1 || held[0] != theirs {
			t.Errorf("%s: held after the release: %v, want only %s", c.what, held, theirs)
		}
		exec1(t, admin, "SELECT fence_release(key, token) FROM fence_leases WHERE key = $1", theirs)
	}
}

// Twenty leases that join the watchdog at about the same time, while it
// sleeps on another, share its cancel requests: one at a time is in
// flight, and the call made next watches them all.
func TestJoinsShareCancelRequests(t *testing.T) {
	admin, key, _ := setup(t, 2)
	pool, app := appPool(t, 4)
	fx := pgfence.New(pool)
	watchedLease(t, fx, admin, app, key+":first")
	_, cancels := pgfence.WatchdogCounts(fx)
	leases := make([]*pgfence.Lease, 20)
	var wg sync.WaitGroup
	for i := range leases {
		i := i
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := fx.Acquire(context.Background(), fmt.Sprintf("%s:%d", key, i), pgfence.Options{TTL: 30 * time.Second})
			if err != nil {
				t.Error(err)
				return
			}
			leases[i] = l
		}()
	}
	wg.Wait()
	defer func() {
		for _, l := range leases {
			if l != nil {
				_ = l.Release(context.Background())
			}
		}
	}()
	if t.Failed() {
		return
	}
	time.Sleep(500 * time.Millisecond) // all joined, the cancel requests done
	_, after := pgfence.WatchdogCounts(fx)
	t.Logf("20 leases joining: %d cancel requests", after-cancels)
	if after-cancels > 5 {
		t.Errorf("20 leases joining made %d cancel requests", after-cancels)
	}
	broke := time.Now()
	exec1(t, admin, "SELECT fence_break($1)", leases[7].Key())
	select {
	case <-leases[7].Done():
	case <-time.After(time.Second):
		t.Fatal("a lease that joined with the others was not lost within a second of fence_break")
	}
	t.Logf("lost %s after the break", time.Since(broke).Round(time.Millisecond))
}

// When Done closes, the lease's Context (and Do's, and a running Tx's) is
// already cancelled with its cause: whoever wakes on Done reads
// Cause(Context()) at once.  The calls that cancel them run before Done
// closes, also when the loss is pushed from the watchdog's goroutine.
func TestContextCancelledWhenDoneCloses(t *testing.T) {
	pool, key, fx := setup(t, 4)
	ctx := context.Background()
	l, err := fx.Acquire(ctx, key, pgfence.Options{TTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	seen := pgfence.DoneClosedAtEnd(l)
	if _, err := pool.Exec(ctx, "SELECT fence_break($1::text)", key); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done did not close after fence_break")
	}
	wantLost(t, "Cause of Context() when Done closed", pgfence.Cause(l.Context()), pgfence.Broken)
	if s := seen(); s == nil {
		t.Error("the call at the lease's end did not run")
	} else if *s {
		t.Error("a call at the lease's end ran after Done closed")
	}
	_ = l.Release(ctx)
}
