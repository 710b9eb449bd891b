package pgfence

import (
	"context"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v4"
)

// One watchdog for every lease of a Fence, when the server has
// fence_wait_leases_end (fence 1.3): one connection sleeps in one call on
// the whole set, and the server answers the moment any lease of it ends.
//
// A lease joins the set once it has been held for watchdogJoinAfter (one
// released sooner never touches the watchdog); the call running then does
// not watch it, so the watchdog cancels that call (PostgreSQL's cancel
// request, which leaves the connection usable) and calls again with the new
// set: the new lease is watched within a round trip, not after a poll.  A cancel request that
// reaches the server before the call starts cancels nothing, so it is sent
// again while that call still runs.  A lease that leaves the set needs no
// cancel: its release ends the running call by itself.  Set changes keep
// one cancel request at most in flight (cancelCall).  With no lease left
// the goroutine ends and closes its connection.  On a server without the
// function (fence 1.2), each lease watches itself on a connection of its
// own (Lease.watch).
type watchdog struct {
	f *Fence

	mu         sync.Mutex
	leases     map[*Lease]struct{}
	added      int64     // leases added so far
	issued     int64     // the added count the running call watches, or -1
	cancelling bool      // a cancelCall is at work
	conn       *pgx.Conn // the watchdog's connection, while it has one
	running    bool

	calls          atomic.Int64 // calls issued so far (for the tests)
	cancelRequests atomic.Int64 // cancel requests sent so far (for the tests)
}

// fence_wait_leases_end watches at most this many leases in one call; the
// others rely on their renewals.
const maxWatched = 10000

// Pauses between cancel requests for one call that goes on.
var cancelRetries = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond,
	200 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second}

// watchdogFor: the fence's watchdog of all its leases (the server has
// fence_wait_leases_end).
func (f *Fence) watchdogFor() *watchdog {
	f.dogMu.Lock()
	defer f.dogMu.Unlock()
	if f.dog == nil {
		f.dog = &watchdog{f: f, leases: map[*Lease]struct{}{}, issued: -1}
	}
	return f.dog
}

func (w *watchdog) add(l *Lease) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.leases[l] = struct{}{}
	w.added++
	if !w.running {
		w.running = true
		go w.run()
	} else if w.issued >= 0 && !w.cancelling && w.conn != nil {
		w.cancelling = true
		go w.cancelCall(w.conn)
	}
}

func (w *watchdog) remove(l *Lease) {
	w.mu.Lock()
	delete(w.leases, l)
	w.mu.Unlock()
}

// cancelCall cancels the running call on conn until one runs that watches
// every lease added (or conn is no longer the watchdog's), pausing between
// requests: one that reaches the server before the call starts cancels
// nothing.  One such loop at most is at work (w.cancelling): the leases
// added meanwhile are served by it, so one cancel request at a time is in
// flight however many leases join.  Whether to go on and the end of
// w.cancelling are decided in one step under w.mu, so that a lease added
// then either sees the loop still at work, which then sees that lease, or
// starts a new one.
func (w *watchdog) cancelCall(conn *pgx.Conn) {
	for i, pause := range cancelRetries {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = conn.PgConn().CancelRequest(ctx)
		cancel()
		w.cancelRequests.Add(1)
		time.Sleep(pause)
		w.mu.Lock()
		if w.conn != conn || w.issued < 0 || w.issued == w.added || i == len(cancelRetries)-1 {
			w.cancelling = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
	}
}

func (w *watchdog) retry() {
	time.Sleep(500*time.Millisecond + time.Duration(rand.Int63n(int64(500*time.Millisecond))))
}

func (w *watchdog) run() {
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			_ = conn.Close(context.Background())
		}
	}()
	for {
		w.mu.Lock()
		if len(w.leases) == 0 {
			w.running = false
			w.issued = -1
			w.conn = nil
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		if conn == nil {
			if conn = w.open(); conn == nil {
				w.retry()
			}
			continue
		}
		w.mu.Lock()
		watched := make([]*Lease, 0, len(w.leases))
		keys := make([]string, 0, len(w.leases))
		tokens := make([]int64, 0, len(w.leases))
		for l := range w.leases {
			if len(watched) == maxWatched {
				break
			}
			watched = append(watched, l)
			keys = append(keys, l.key)
			tokens = append(tokens, l.token)
		}
		w.issued = w.added
		w.calls.Add(1)
		w.mu.Unlock()
		ended, err := waitLeasesEnd(conn, keys, tokens)
		w.mu.Lock()
		w.issued = -1
		w.mu.Unlock()
		if err != nil {
			if sqlState(err) == sqlStateQueryCancelled {
				continue // a lease was added: ask again
			}
			w.f.logf("pgfence: watchdog connection failed (%v); reconnecting", err)
			w.mu.Lock()
			w.conn = nil
			w.mu.Unlock()
			_ = conn.Close(context.Background())
			conn = nil
			w.retry()
			continue
		}
		for _, e := range ended {
			for _, l := range watched {
				if l.key != e.key || l.token != e.token {
					continue
				}
				w.mu.Lock()
				_, still := w.leases[l]
				delete(w.leases, l)
				w.mu.Unlock()
				if still && l.stopCtx.Err() == nil {
					l.lose(serverHow(e.status), nil)
				}
			}
		}
	}
}

type endedLease struct {
	key    string
	token  int64
	status string
}

func waitLeasesEnd(conn *pgx.Conn, keys []string, tokens []int64) ([]endedLease, error) {
	rows, err := conn.Query(context.Background(), sqlWaitLeasesEnd, keys, tokens, interval(watchdogPoll))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ended []endedLease
	for rows.Next() {
		var e endedLease
		if err := rows.Scan(&e.key, &e.token, &e.status); err != nil {
			return nil, err
		}
		ended = append(ended, e)
	}
	return ended, rows.Err()
}

// open: a new watchdog connection; the leases of a server that restarted
// since their grant are lost.
func (w *watchdog) open() *pgx.Conn {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := w.f.connectOwn(ctx)
	if err != nil {
		return nil
	}
	var started time.Time
	if err := conn.QueryRow(ctx, sqlServerStarted).Scan(&started); err != nil {
		_ = conn.Close(context.Background())
		return nil
	}
	w.mu.Lock()
	var gone []*Lease
	for l := range w.leases {
		if !started.Equal(l.serverStart) {
			gone = append(gone, l)
			delete(w.leases, l)
		}
	}
	w.conn = conn
	w.mu.Unlock()
	for _, l := range gone {
		l.lose(Connection, nil)
	}
	return conn
}
