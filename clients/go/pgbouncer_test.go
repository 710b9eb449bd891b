package pgfence_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"fence/pgfence"

	"github.com/jackc/pgconn"
	"github.com/jackc/pgx/v4"
	"github.com/jackc/pgx/v4/pgxpool"
)

// PGFENCE_TEST_PGBOUNCER_DSN: a PgBouncer in transaction mode in front of
// the test database, with one server connection for all its clients
// (test/t/046_go_client.pl starts it).  Without it the test skips, which
// the TAP test counts as a failure.
var bouncerDSN = os.Getenv("PGFENCE_TEST_PGBOUNCER_DSN")

// A lease through PgBouncer in transaction mode: the grant (fence 1.3),
// renewals, Tx and the release go through it, where every pooled
// connection shares one server connection; the watchdog goes straight to
// the server.  Each way of keeping pgx v4 off named prepared
// statements is tried: PgBouncer 1.18 keeps none.
func TestLeaseThroughTransactionPooling(t *testing.T) {
	if dsn == "" || bouncerDSN == "" {
		t.Skip("PGFENCE_TEST_DSN or PGFENCE_TEST_PGBOUNCER_DSN is not set")
	}
	direct, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	admin := newPool(t, 2)
	for _, mode := range []string{"prefer_simple_protocol=true", "statement_cache_mode=describe"} {
		mode := mode
		t.Run(nonWord.ReplaceAllString(mode, "_"), func(t *testing.T) {
			cfg, err := pgxpool.ParseConfig(bouncerDSN + " " + mode)
			if err != nil {
				t.Fatal(err)
			}
			cfg.MaxConns = 3
			pool, err := pgxpool.ConnectConfig(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			table := protectedTable(t, admin, ", require_token => true")
			key := "job:" + name(t)
			fx := pgfence.New(pool, pgfence.WithConnConfig(direct), pgfence.WithLogger(t.Logf))
			backends := map[int32]bool{}
			var token int64
			err = fx.Do(context.Background(), key, pgfence.Options{TTL: time.Second}, func(ctx context.Context, l *pgfence.Lease) error {
				token = l.Token()
				start := l.Deadline()
				for i := 0; i < 6; i++ {
					select {
					case <-ctx.Done():
						return pgfence.Cause(ctx)
					case <-time.After(400 * time.Millisecond):
					}
					err := l.Tx(ctx, func(tx pgx.Tx) error {
						var pid int32
						if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
							return err
						}
						backends[pid] = true
						return update(ctx, table, "pooled "+strconv.Itoa(i))(tx)
					})
					if err != nil {
						return err
					}
				}
				// 2.4 s of a 1 s lease: renewals through PgBouncer kept it.
				return stillHeld(ctx, t, admin, l, start, time.Second, "2.4 s")
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(backends) != 1 {
				t.Errorf("the transactions ran on %d server connections, want PgBouncer's one", len(backends))
			}
			var status string
			if err := admin.QueryRow(context.Background(), "SELECT fence_lease_status($1, $2)", key, token).Scan(&status); err != nil || status != "released" {
				t.Errorf("status after Do: %q (%v), want released", status, err)
			}
			if result, fence := row(t, admin, table); result != "pooled 5" || fence != token {
				t.Errorf("row: %q with fence %d, want \"pooled 5\" with %d", result, fence, token)
			}

			// The next transaction on the pool, on the same server
			// connection, carries no token: its write is refused.
			ctx := context.Background()
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(ctx) }()
			var pid int32
			var cur *int64
			if err := tx.QueryRow(ctx, "SELECT pg_backend_pid(), fence_current_token()::bigint").Scan(&pid, &cur); err != nil {
				t.Fatal(err)
			}
			if !backends[pid] {
				t.Errorf("the next transaction ran on server connection %d, not on PgBouncer's one", pid)
			}
			if cur != nil {
				t.Errorf("the next transaction carries token %d", *cur)
			}
			_, err = tx.Exec(ctx, "UPDATE "+table+" SET result = $1 WHERE id = 1", "no token")
			var need *pgfence.TokenRequiredError
			var pg *pgconn.PgError
			if err = pgfence.Classify(err); !errors.As(err, &need) || !errors.As(err, &pg) || pg.Code != "LF003" {
				t.Errorf("a write after the release: %v, want TokenRequiredError (LF003)", err)
			}
		})
	}
}
