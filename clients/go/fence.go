// Package pgfence takes leases with fencing tokens from the fence
// PostgreSQL extension, keeps them (renewal through the pool, a watchdog
// that the server wakes the moment the lease ends), cancels the work when
// one is lost, and passes the token to every transaction that writes under
// it.
//
// Each lease is detached (owned by a name made for it, not by a
// connection), so that any pooled connection may renew and release it.
// With fence 1.3 a free key is taken in one statement on a pooled
// connection, which forgets the token at once (fence_forget_token); only a
// wait for a held key opens a connection of the lease's own.  One watchdog
// connection of the Fence sleeps in fence_wait_leases_end on all its leases
// held for more than 100 ms.  With fence 1.2 a connection of the lease's
// own takes it, and then sleeps in fence_wait_lease_end on it.
package pgfence

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v4"
	"github.com/jackc/pgx/v4/pgxpool"
)

// Pool is what pgfence needs from a connection pool: *pgxpool.Pool and
// *pgx.Conn have both methods.  Grants of free keys (fence 1.3), renewals,
// releases and Lease.Tx go through it; a wait for a held key does not.
type Pool interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	QueryRow(ctx context.Context, sql string, args ...interface{}) pgx.Row
}

// Connector opens the connections pgfence keeps outside the pool: the
// Fence's watchdog, a lease's own while it waits for a held key, and with
// fence 1.2 each lease's.  It must not come from the pool: a watchdog sleeps
// in fence_wait_leases_end (fence_wait_lease_end) while leases are held.
type Connector func(ctx context.Context) (*pgx.Conn, error)

// Fence hands out leases on one database.
type Fence struct {
	pool         Pool
	connect      Connector
	renewTimeout time.Duration
	logf         func(format string, args ...interface{})

	dogMu sync.Mutex
	caps  serverCaps // what the server has, once asked
	dog   *watchdog  // the watchdog of all the leases, when it has fence_wait_leases_end
}

// serverCaps: what the server has of fence 1.3, asked once per Fence.
type serverCaps struct {
	asked  bool
	multi  bool // fence_wait_leases_end: one watchdog for all the leases
	forget bool // fence_forget_token: a grant on a pooled connection
}

// capabilities asks the server, through the pool, the first time.
func (f *Fence) capabilities(ctx context.Context) (serverCaps, error) {
	f.dogMu.Lock()
	defer f.dogMu.Unlock()
	if !f.caps.asked {
		var multi, forget bool
		if err := f.pool.QueryRow(ctx, sqlCapabilities).Scan(&multi, &forget); err != nil {
			return serverCaps{}, err // asked again with the next lease
		}
		f.caps = serverCaps{asked: true, multi: multi, forget: forget}
	}
	return f.caps, nil
}

// releaseOwnedSQL: what gives back this owner's grant of a key whose answer
// was lost.  With fence_forget_token (fence 1.3) it reads only that key's
// leases; otherwise (fence 1.2, or not asked yet) every lease of the server.
func (f *Fence) releaseOwnedSQL() string {
	f.dogMu.Lock()
	defer f.dogMu.Unlock()
	if f.caps.asked && f.caps.forget {
		return sqlReleaseOwnedOfKey
	}
	return sqlReleaseOwned
}

// Option configures a Fence.
type Option func(*Fence)

// WithConnector sets how the connections outside the pool are opened (the
// watchdog's, a waiting lease's; see Connector).  The
// default opens one with the pool's configuration (pool.Config()), which
// *pgxpool.Pool and *pgx.Conn have; give one for another Pool, or to send
// the watchdog past a transaction pooler, straight to the server.
func WithConnector(c Connector) Option { return func(f *Fence) { f.connect = c } }

// WithConnConfig opens the connections outside the pool with cfg.
func WithConnConfig(cfg *pgx.ConnConfig) Option {
	return WithConnector(func(ctx context.Context) (*pgx.Conn, error) {
		return pgx.ConnectConfig(ctx, cfg.Copy())
	})
}

// WithRenewTimeout bounds each renewal try (default: a third of the TTL).
func WithRenewTimeout(d time.Duration) Option { return func(f *Fence) { f.renewTimeout = d } }

// WithLogger receives pgfence's log lines: a lease suspended, lost, or not
// released (the default discards them).  log.Printf fits.
func WithLogger(logf func(format string, args ...interface{})) Option {
	return func(f *Fence) { f.logf = logf }
}

// New returns a Fence whose leases renew, release and write through pool.
func New(pool Pool, opts ...Option) *Fence {
	f := &Fence{pool: pool, logf: func(string, ...interface{}) {}}
	switch p := pool.(type) {
	case interface{ Config() *pgxpool.Config }:
		f.connect = func(ctx context.Context) (*pgx.Conn, error) {
			return pgx.ConnectConfig(ctx, p.Config().ConnConfig)
		}
	case interface{ Config() *pgx.ConnConfig }:
		f.connect = func(ctx context.Context) (*pgx.Conn, error) {
			return pgx.ConnectConfig(ctx, p.Config())
		}
	}
	for _, o := range opts {
		o(f)
	}
	return f
}

// connectOwn opens a connection outside the pool (f.connect), without the
// pool's timeouts.
func (f *Fence) connectOwn(ctx context.Context) (*pgx.Conn, error) {
	conn, err := f.connect(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, sqlOwnSettings); err != nil {
		_ = conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// Options of one lease.
type Options struct {
	// TTL is the lease's time to live, renewed every third of it while it
	// is held (default 30 s).
	TTL time.Duration
	// Wait is how long to wait for the lease (first come, first served):
	// 0 tries once, a negative Wait (WaitForever) waits as long as it takes
	// or until ctx ends.  Then *LeaseUnavailableError.
	Wait time.Duration
	// Owner names the detached lease's owner (at most 48 bytes); empty: a
	// name made for it, unique to this lease.
	Owner string
}

// WaitForever, as Options.Wait, waits until the lease is granted or ctx ends.
const WaitForever time.Duration = -1

const (
	defaultTTL    = 30 * time.Second
	maxKeyBytes   = 200
	maxOwnerBytes = 48
)

// Do takes the lease on key, runs fn under it and releases it, whatever
// fn returns, also when it panics.  fn's ctx is cancelled the moment the
// lease is lost (or when ctx ends); Cause(ctx) and l.Err() then say how.
//
// Do returns fn's error, made a *StaleTokenError, *LeaseNotHeldError or
// *TokenRequiredError if it carries fence's SQLSTATE; if the lease was lost
// while fn ran, a *LeaseLostError (wrapping fn's error, if any); a
// *LeaseUnavailableError if the lease was not granted.
func (f *Fence) Do(ctx context.Context, key string, opts Options, fn func(ctx context.Context, l *Lease) error) (err error) {
	l, err := f.Acquire(ctx, key, opts)
	if err != nil {
		return err
	}
	fnCtx, end := withLeaseEnd(ctx)
	if !l.onEnd(end) {
		end(l.Err())
	}
	defer func() {
		if p := recover(); p != nil {
			l.release()
			panic(p)
		}
	}()
	ferr := fn(fnCtx, l)
	lost := l.lostErr() // before the release: nil while held
	l.release()
	return l.outcome(ferr, lost)
}

// Acquire takes the lease on key, for code that cannot use Do's callback;
// Release must follow (defer l.Release()).  ctx bounds the wait for the
// grant only: the lease is kept until Release, and l.Context() is the
// context to do its work with.
func (f *Fence) Acquire(ctx context.Context, key string, opts Options) (*Lease, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	ttl := opts.TTL
	if ttl == 0 {
		ttl = defaultTTL
	}
	if ttl < time.Millisecond {
		return nil, fmt.Errorf("pgfence: TTL must be at least 1ms, not %s", ttl)
	}
	owner := opts.Owner
	if owner == "" {
		owner = generatedOwner()
	} else if len(owner) > maxOwnerBytes {
		return nil, fmt.Errorf("pgfence: owner must be at most %d bytes", maxOwnerBytes)
	}
	if f.connect == nil {
		return nil, errors.New("pgfence: no way to open a connection outside the pool: give New WithConnector or WithConnConfig")
	}
	l := newLease(f, key, owner, ttl, opts.Wait)
	if err := l.acquire(ctx); err != nil {
		return nil, err
	}
	l.start()
	return l, nil
}

func checkKey(key string) error {
	if key == "" {
		return errors.New("pgfence: key must not be empty")
	}
	if len(key) > maxKeyBytes {
		return fmt.Errorf("pgfence: key must be at most %d bytes", maxKeyBytes)
	}
	return nil
}

// generatedOwner: host, pid and 48 random bits, within 48 bytes.
func generatedOwner() string {
	host, _ := os.Hostname()
	host = strings.SplitN(host, ".", 2)[0]
	if host == "" {
		host = "host"
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	tail := fmt.Sprintf(":%d:%s", os.Getpid(), hex.EncodeToString(b[:]))
	head := "pgfence:" + host
	if room := maxOwnerBytes - len(tail); len(head) > room {
		head = head[:room]
		for len(head) > 0 && !validUTF8Tail(head) {
			head = head[:len(head)-1]
		}
	}
	return head + tail
}

func validUTF8Tail(s string) bool {
	return strings.ToValidUTF8(s, "") == s
}
