package pgfence_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"fence/pgfence"

	"github.com/jackc/pgx/v4/pgxpool"
)

// PGFENCE_TEST_DSN: a superuser's conninfo of a database with fence
// created (test/t/046_go_client.pl sets it).  Without it every test skips,
// which the TAP test counts as a failure.
var dsn = os.Getenv("PGFENCE_TEST_DSN")

func TestMain(m *testing.M) {
	// The test binary is also the worker that the process tests start.
	if mode := os.Getenv("PGFENCE_TEST_WORKER"); mode != "" {
		os.Exit(worker(mode))
	}
	os.Exit(m.Run())
}

func newPool(t *testing.T, maxConns int32) *pgxpool.Pool {
	t.Helper()
	return newPoolWith(t, maxConns, nil)
}

// newPoolWith: a pool whose connections (and the fence's own, made with its
// configuration) have these run-time parameters.
func newPoolWith(t *testing.T, maxConns int32, params map[string]string) *pgxpool.Pool {
	t.Helper()
	if dsn == "" {
		t.Skip("PGFENCE_TEST_DSN is not set")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = maxConns
	for k, v := range params {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	pool, err := pgxpool.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func exec1(t *testing.T, pool *pgxpool.Pool, sql string, args ...interface{}) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

var nonWord = regexp.MustCompile(`\W+`)

// name: a key and table name of the test's own.
func name(t *testing.T) string {
	return strings.ToLower(nonWord.ReplaceAllString(t.Name(), "_"))
}

// protectedTable makes a table with row 1, protected by the trigger.
func protectedTable(t *testing.T, pool *pgxpool.Pool, opts string) string {
	t.Helper()
	table := "t_" + name(t)
	exec1(t, pool, "DROP TABLE IF EXISTS "+table)
	exec1(t, pool, "CREATE TABLE "+table+" (id int PRIMARY KEY, result text, fence fence_token NOT NULL DEFAULT 0)")
	exec1(t, pool, "INSERT INTO "+table+" VALUES (1, 'pending')")
	exec1(t, pool, "SELECT fence_protect('"+table+"'"+opts+")")
	return table
}

func row(t *testing.T, pool *pgxpool.Pool, table string) (string, int64) {
	t.Helper()
	var result string
	var fence int64
	if err := pool.QueryRow(context.Background(),
		"SELECT result, fence::bigint FROM "+table+" WHERE id = 1").Scan(&result, &fence); err != nil {
		t.Fatal(err)
	}
	return result, fence
}

// A worker process: this test binary again, in the given mode.
type workerProc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func startWorker(t *testing.T, mode string, env ...string) *workerProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "PGFENCE_TEST_WORKER="+mode), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &workerProc{cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return w
}

// line: the worker's next line of output that starts with prefix.
func (w *workerProc) line(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				t.Fatalf("the worker exited before printing %q", prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return strings.TrimSpace(strings.TrimPrefix(l, prefix))
			}
		case <-timeout:
			t.Fatalf("the worker printed no %q within 30s", prefix)
		}
	}
}

func (w *workerProc) send(t *testing.T, s string) {
	t.Helper()
	if _, err := fmt.Fprintln(w.in, s); err != nil {
		t.Fatal(err)
	}
}

// wantLost: err is a *LeaseLostError that says how; nil (and an error
// reported) if not.
func wantLost(t *testing.T, what string, err error, how pgfence.How) *pgfence.LeaseLostError {
	t.Helper()
	var lost *pgfence.LeaseLostError
	if !errors.As(err, &lost) || lost.How != how {
		t.Errorf("%s: %v, want a LeaseLostError, %s", what, err, how)
		return nil
	}
	return lost
}

// setup: a pool, a key of the test's own, and a Fence on the pool.
func setup(t *testing.T, maxConns int32) (*pgxpool.Pool, string, *pgfence.Fence) {
	t.Helper()
	pool := newPool(t, maxConns)
	return pool, "job:" + name(t), pgfence.New(pool)
}

// stillHeld: after a while of work, the lease is held (not lost, not
// suspended, held on the server) and renewals moved its local deadline
// from start by more than moved.
func stillHeld(ctx context.Context, t *testing.T, pool *pgxpool.Pool, l *pgfence.Lease, start time.Time, moved time.Duration, after string) error {
	t.Helper()
	if l.Err() != nil || ctx.Err() != nil || l.Suspended() {
		t.Errorf("after %s: Err %v, ctx %v, suspended %v", after, l.Err(), ctx.Err(), l.Suspended())
	}
	if !l.Deadline().After(start.Add(moved)) {
		t.Errorf("the local deadline moved from %v to %v only", start, l.Deadline())
	}
	var status string
	if err := pool.QueryRow(ctx, "SELECT fence_lease_status($1, $2)", l.Key(), l.Token()).Scan(&status); err != nil {
		return err
	}
	if status != "held" {
		t.Errorf("status after %s: %s", after, status)
	}
	return nil
}
