package pgfence_test

import (
	"context"
	"errors"
	"strconv"
	"syscall"
	"testing"
	"time"

	"fence/pgfence"

	"github.com/jackc/pgconn"
	"github.com/jackc/pgx/v4"
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
		if l.Err() != nil || ctx.Err() != nil || l.Suspended() {
			t.Errorf("after 4 s: Err %v, ctx %v, suspended %v", l.Err(), ctx.Err(), l.Suspended())
		}
		if !l.Deadline().After(start.Add(3 * time.Second)) {
			t.Errorf("the local deadline moved from %v to %v only", start, l.Deadline())
		}
		var status string
		if err := pool.QueryRow(ctx, "SELECT fence_lease_status($1, $2)", key, l.Token()).Scan(&status); err != nil {
			return err
		}
		if status != "held" {
			t.Errorf("status after 4 s: %s", status)
		}
		return nil
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
		err := l.Tx(ctx, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "SELECT pg_sleep(30)")
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
