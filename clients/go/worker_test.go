package pgfence_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"fence/pgfence"

	"github.com/jackc/pgx/v4"
	"github.com/jackc/pgx/v4/pgxpool"
)

// worker runs in a child process (PGFENCE_TEST_WORKER=mode); it prints
// what it sees, one "word value" line at a time, and returns the exit
// status.
func worker(mode string) int {
	ctx := context.Background()
	pool, err := pgxpool.Connect(ctx, os.Getenv("PGFENCE_TEST_DSN"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	defer pool.Close()
	fx := pgfence.New(pool)
	key := os.Getenv("PGFENCE_TEST_KEY")
	table := os.Getenv("PGFENCE_TEST_TABLE")
	stdin := bufio.NewReader(os.Stdin)

	switch mode {
	case "frozen":
		// Holder A: writes with its token, waits for "go" (the test freezes
		// it meanwhile), then writes what it computed.
		err = fx.Do(ctx, key, pgfence.Options{TTL: time.Second}, func(ctx context.Context, l *pgfence.Lease) error {
			if err := l.Tx(ctx, func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, "UPDATE "+table+" SET result = 'started by A' WHERE id = 1")
				return err
			}); err != nil {
				return err
			}
			fmt.Printf("token %d\n", l.Token())
			if _, err := stdin.ReadString('\n'); err != nil {
				return err
			}
			err := l.Tx(ctx, func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, "UPDATE "+table+" SET result = 'done by A' WHERE id = 1")
				return err
			})
			fmt.Printf("tx %s\n", describe(err))
			return err
		})
		fmt.Printf("do %s\n", describe(err))
		return 0
	case "hold":
		// Takes a lease with a TTL of 2 s, says its token, and keeps it
		// (renewing) until the test kills it.
		l, err := fx.Acquire(ctx, key, pgfence.Options{TTL: 2 * time.Second})
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			return 1
		}
		fmt.Printf("token %d\n", l.Token())
		<-l.Done()
		return 1
	}
	fmt.Fprintln(os.Stderr, "worker: no mode", mode)
	return 2
}

// describe: how an error reads to a holder: written, stale, lost <how>,
// or other <error>.
func describe(err error) string {
	var stale *pgfence.StaleTokenError
	var lost *pgfence.LeaseLostError
	switch {
	case err == nil:
		return "written"
	case errors.As(err, &stale):
		return "stale"
	case errors.As(err, &lost):
		return "lost " + string(lost.How)
	}
	return "other " + err.Error()
}
