package pgfence

import (
	"context"
	"errors"
	"math/rand"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v4"
	"github.com/jackc/pgx/v4/pgxpool"
)

// Lease is a held lease.  Its methods are safe for concurrent use.
type Lease struct {
	f     *Fence
	key   string
	owner string
	ttl   time.Duration
	wait  time.Duration

	renewEvery time.Duration // a third of the TTL
	tryTimeout time.Duration // bound of one renewal, status or release try
	retryEvery time.Duration // after a failed try

	token       int64
	serverStart time.Time
	own         *pgx.Conn // the lease's own connection, if it has one; its watchdog's once started
	dog         *watchdog // the fence's watchdog, when it watches this lease

	ctx       context.Context    // Context(): ends with the lease
	stop      context.CancelFunc // stops the renewer and the watchdog
	stopCtx   context.Context
	wg        sync.WaitGroup
	released  sync.Once
	relErr    error           // the release's error, if the server could not be told
	lostFirst *LeaseLostError // the loss before the release, if any

	mu        sync.Mutex
	deadline  time.Time // last successful renewal's send time + TTL (monotonic)
	suspended bool
	end       *LeaseLostError // how it ended: lost, or Released
	hooks     map[int]func(error)
	nextHook  int
	done      chan struct{}
	joinTimer *time.Timer // adds the lease to the watchdog (watchdogJoinAfter)
	leaving   bool        // the release has begun: it must not join
}

func newLease(f *Fence, key, owner string, ttl, wait time.Duration) *Lease {
	l := &Lease{f: f, key: key, owner: owner, ttl: ttl, wait: wait,
		hooks: map[int]func(error){}, done: make(chan struct{})}
	l.renewEvery = ttl / 3
	l.tryTimeout = f.renewTimeout
	if l.tryTimeout <= 0 {
		l.tryTimeout = maxDuration(l.renewEvery, 50*time.Millisecond)
	}
	l.retryEvery = minDuration(maxDuration(ttl/10, 20*time.Millisecond), time.Second)
	return l
}

// Key is the lease's key.
func (l *Lease) Key() string { return l.key }

// Token is the lease's fencing token.
func (l *Lease) Token() int64 { return l.token }

// Owner is the name that owns the detached lease.
func (l *Lease) Owner() string { return l.owner }

// Done is closed when the lease ends: lost, or released.  By then the
// contexts of Context, Do and a running Tx are cancelled.
func (l *Lease) Done() <-chan struct{} { return l.done }

// Context is cancelled when the lease ends; Cause(ctx) is then its
// *LeaseLostError.  For work done after Acquire; Do passes its own.
func (l *Lease) Context() context.Context { return l.ctx }

// Err is nil while the lease is held; then the *LeaseLostError that says
// how it ended (How is Released after Release or the end of Do).
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.end == nil {
		return nil
	}
	return l.end
}

// Suspended is true while renewals fail for want of the server: the lease
// still counts as held until its local deadline, and is lost then unless a
// renewal succeeds.
func (l *Lease) Suspended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.suspended && l.end == nil
}

// Deadline is the local deadline: the send time of the last successful
// renewal (or of the grant) plus the TTL.  The server's expiry is not
// before it.
func (l *Lease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// Tx runs fn in a transaction on a pooled connection that writes with the
// lease's token: it calls fence_use_token(token, key) first, for this
// transaction only, so the connection goes back to the pool carrying no
// token.  fn's error, or the commit's, rolls back and is returned
// (classified as Classify does; LF002 also marks the lease lost).  If the
// lease is lost while the transaction runs, its context is cancelled and
// the server is asked to cancel its running statement, and Tx returns a
// *LeaseLostError that wraps the statement's error.  A commit is not tried
// once the lease is lost.
// Tx on a lease that has ended returns its Err at once.
func (l *Lease) Tx(ctx context.Context, fn func(pgx.Tx) error) error {
	if err := l.Err(); err != nil {
		return err
	}
	// Registered before Begin, so that a wait for a pooled connection ends
	// with the lease too.
	txCtx, end := withLeaseEnd(ctx)
	defer end(nil)
	remove, held := l.addHook(end)
	defer remove()
	if !held {
		return l.Err()
	}
	err := l.runTx(txCtx, fn)
	if err == nil {
		return nil
	}
	if fe, ok := classify(err); ok {
		if _, notHeld := fe.(*LeaseNotHeldError); notHeld {
			l.lose(l.statusHow(), err)
		}
		return fe
	}
	if lost := l.lostErr(); lost != nil {
		return lost.wrapping(err)
	}
	return err
}

// runTx: the transaction, on a context that the lease's end cancels.
// The server is also asked then to cancel the statement running on its
// connection, whatever context that statement was given.
func (l *Lease) runTx(ctx context.Context, fn func(pgx.Tx) error) (err error) {
	tx, err := l.f.pool.Begin(ctx)
	if err != nil {
		return err
	}
	var (
		mu      sync.Mutex
		quiet   bool
		pending chan struct{}
	)
	remove, held := l.addHook(func(error) {
		mu.Lock()
		defer mu.Unlock()
		if quiet {
			return
		}
		done := make(chan struct{})
		pending = done
		go func() {
			defer close(done)
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = tx.Conn().PgConn().CancelRequest(cctx)
		}()
	})
	// quiesce: from here on no cancel request is sent, and one sent before
	// has been handled, so that none reaches the connection's next user.
	quiesce := func() {
		mu.Lock()
		quiet = true
		p := pending
		mu.Unlock()
		if p != nil {
			<-p
		}
	}
	defer remove()
	defer func() {
		quiesce()
		if err != nil {
			rctx, cancel := context.WithTimeout(context.Background(), maxDuration(l.tryTimeout, time.Second))
			_ = tx.Rollback(rctx)
			cancel()
		}
	}()
	if !held {
		return l.Err()
	}
	if _, err = tx.Exec(ctx, sqlUseToken, l.token, l.key); err != nil {
		return err
	}
	if err = fn(tx); err != nil {
		return err
	}
	if err = l.Err(); err != nil {
		return err
	}
	quiesce()
	return tx.Commit(ctx)
}

// Release gives the lease back (fence_release with its token) and stops
// its renewal and watchdog; it is for leases taken with Acquire, and may be
// called more than once (each call returns what the first did).  It returns
// nil if the lease was held to the end; its *LeaseLostError if it had been
// lost; the release's error if the server could not be told (the lease
// then ends by its TTL).
func (l *Lease) Release(ctx context.Context) error {
	l.releaseWith(ctx)
	if l.lostFirst != nil && l.lostFirst.How != Released {
		return l.lostFirst
	}
	return l.relErr
}

func (l *Lease) release() { l.releaseWith(context.Background()) }

func (l *Lease) releaseWith(ctx context.Context) {
	l.released.Do(func() {
		l.lostFirst = l.lostErr()
		l.stop()
		l.wg.Wait()
		if l.dog != nil {
			l.mu.Lock()
			l.leaving = true
			if l.joinTimer != nil {
				l.joinTimer.Stop()
			}
			l.mu.Unlock()
			l.dog.remove(l) // its release ends the running wait
		}
		if l.own != nil { // not started: closed here
			_ = l.own.Close(context.Background())
			l.own = nil
		}
		var ok bool
		rctx, cancel := context.WithTimeout(ctx, maxDuration(l.tryTimeout, time.Second))
		err := l.f.pool.QueryRow(rctx, sqlRelease, l.key, l.token).Scan(&ok)
		cancel()
		if err != nil && ctx.Err() == nil {
			// The pool may be what failed: once more on a connection of its own.
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if conn, cerr := l.f.connectOwn(cctx); cerr == nil {
				err = conn.QueryRow(cctx, sqlRelease, l.key, l.token).Scan(&ok)
				_ = conn.Close(context.Background())
			}
			cancel()
		}
		if err != nil {
			l.f.logf("pgfence: could not release lease %q (token %d): %v; it ends by its TTL", l.key, l.token, err)
			l.relErr = err
		}
		l.finish(Released, nil)
	})
}

// outcome is what Do returns: fn's error, classified, or the loss.
func (l *Lease) outcome(ferr error, lost *LeaseLostError) error {
	if lost != nil && lost.How == Released {
		lost = nil // fn called Release itself
	}
	if ferr == nil {
		if lost == nil {
			return nil
		}
		return lost
	}
	var ll *LeaseLostError
	if errors.As(ferr, &ll) {
		return ferr
	}
	if fe, ok := classify(ferr); ok {
		return fe
	}
	if lost != nil {
		return lost.wrapping(ferr)
	}
	return ferr
}

func (e *LeaseLostError) wrapping(err error) *LeaseLostError {
	c := *e
	if err != nil {
		c.Err = err
	}
	return &c
}

func (l *Lease) lostErr() *LeaseLostError {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.end
}

// addHook: call h with the lease's end; false if it has ended already.
func (l *Lease) addHook(h func(error)) (remove func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.end != nil {
		return func() {}, false
	}
	id := l.nextHook
	l.nextHook++
	l.hooks[id] = h
	return func() {
		l.mu.Lock()
		delete(l.hooks, id)
		l.mu.Unlock()
	}, true
}

func (l *Lease) onEnd(h func(error)) bool {
	_, ok := l.addHook(h)
	return ok
}

// lose declares the lease lost (the first word of it counts): the
// contexts of Do, Context and running Tx calls are cancelled, Done closes.
func (l *Lease) lose(how How, cause error) {
	if l.finish(how, cause) {
		l.f.logf("pgfence: lost lease %q (token %d): %s", l.key, l.token, how)
	}
}

func (l *Lease) finish(how How, cause error) bool {
	l.mu.Lock()
	if l.end != nil {
		l.mu.Unlock()
		return false
	}
	l.end = &LeaseLostError{Key: l.key, Token: l.token, How: how, Err: cause}
	hooks := l.hooks
	l.hooks = nil
	e := l.end
	l.mu.Unlock()
	if l.stop != nil {
		l.stop()
	}
	// The hooks (each cancels a context: Context's, Do's, a running Tx's,
	// or sends a cancel request from a goroutine of its own) run before Done
	// closes, so that whoever wakes on Done finds them cancelled, with
	// Cause set.
	for _, h := range hooks {
		h(e)
	}
	close(l.done)
	return true
}

func (l *Lease) renewed(sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d := sent.Add(l.ttl); d.After(l.deadline) {
		l.deadline = d
	}
	if l.suspended && l.end == nil {
		l.f.logf("pgfence: lease %q renewed again after a suspension", l.key)
	}
	l.suspended = false
}

func (l *Lease) suspend(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.suspended || l.end != nil {
		return
	}
	l.suspended = true
	l.f.logf("pgfence: lease %q suspended: renewal failed (%v); lost in %s unless a renewal succeeds",
		l.key, err, time.Until(l.deadline).Round(time.Millisecond))
}

// watchdogJoinAfter: a lease joins its Fence's watchdog only once it has
// been held this long.  Most leases are over sooner, and one that joined
// would make the watchdog cancel its running call (a cancel request: a
// connection to the postmaster) and call again, which costs more than such
// a job.  A loss within this time is still reported, when the lease joins:
// the call made then returns at once, as the lease is no longer held.
// Renewals stay the fallback, as always.
const watchdogJoinAfter = 100 * time.Millisecond

// rowQuerier: a pool, a pooled connection, or a connection of its own.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...interface{}) pgx.Row
}

// acquire takes the lease: with fence 1.3 a free key in one statement on a
// pooled connection, and only a wait for a held key on a connection of the
// lease's own; with fence 1.2 always on a connection of its own.
func (l *Lease) acquire(ctx context.Context) error {
	caps, err := l.f.capabilities(ctx)
	if err != nil {
		return Classify(err)
	}
	var q rowQuerier = l.f.pool
	sent := time.Now()
	granted := false
	if caps.forget {
		if granted, err = l.grantPooled(ctx); err != nil {
			return err
		}
		if !granted && l.wait == 0 {
			return &LeaseUnavailableError{Key: l.key, Wait: l.wait}
		}
	}
	if !granted {
		sent = time.Now()
		if err := l.grantOwn(ctx); err != nil {
			return err
		}
		q = l.own
	}
	l.deadline = sent.Add(l.ttl)
	l.stopCtx, l.stop = context.WithCancel(context.Background())
	var end func(error)
	l.ctx, end = withLeaseEnd(context.Background())
	l.onEnd(end)
	if time.Since(sent) > l.renewEvery {
		// The grant came after a wait (for the key, or for a pooled
		// connection), when is unknown: renew now, to know a deadline that
		// cannot be late.
		sent = time.Now()
		var ok bool
		if err := q.QueryRow(ctx, sqlRenew, l.key, l.token, interval(l.ttl)).Scan(&ok); err != nil || !ok {
			l.release()
			if err == nil {
				return &LeaseLostError{Key: l.key, Token: l.token, How: Expired}
			}
			return Classify(err)
		}
		l.renewed(sent)
	}
	if caps.multi {
		// The fence's watchdog watches it: its own connection is done.
		if l.own != nil {
			_ = l.own.Close(context.Background())
			l.own = nil
		}
		l.dog = l.f.watchdogFor()
	}
	return nil
}

// grantPooled tries the key once on a pooled connection (fence 1.3), which
// forgets the token in the same statement.  A grant whose answer never came
// back may still have been made: what this owner holds of the key is then
// released, on that connection if it is still usable, so that it forgets
// the token too should the statement have stopped between the two.
func (l *Lease) grantPooled(ctx context.Context) (bool, error) {
	var token *int64
	err := l.f.onPooled(ctx, func(conn rowQuerier) error {
		q := conn
		if q == nil {
			q = l.f.pool
		}
		err := q.QueryRow(ctx, sqlPooledTryLease, l.key, interval(l.ttl), l.owner).Scan(&token, &l.serverStart)
		if err != nil && mayHaveGranted(ctx, err) {
			l.releaseOwned(conn)
		}
		return err
	})
	if err != nil {
		return false, Classify(err)
	}
	if token == nil {
		return false, nil
	}
	l.token = *token
	return true, nil
}

// onPooled runs fn on one pooled connection: one acquired from a pgxpool,
// so that a clean-up after an error reaches the same session; with another
// Pool, nil, and the clean-up goes through the pool.
func (f *Fence) onPooled(ctx context.Context, fn func(conn rowQuerier) error) error {
	p, ok := f.pool.(interface {
		Acquire(ctx context.Context) (*pgxpool.Conn, error)
	})
	if !ok {
		return fn(nil)
	}
	conn, err := p.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	return fn(conn)
}

// mayHaveGranted: after a grant statement's error, may the lease have been
// granted all the same?  Yes when the answer did not come back (the
// connection, the context) or the server interrupted the statement (class
// 57: a cancel, a shutdown); no when the server refused it.
func mayHaveGranted(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	state := sqlState(err)
	return state == "" || strings.HasPrefix(state, "57")
}

// grantOwn takes the lease on a connection of its own: fence_try_lease
// with fence 1.2 and Wait 0, else a wait in fence_lease.
func (l *Lease) grantOwn(ctx context.Context) error {
	own, err := l.f.connectOwn(ctx)
	if err != nil {
		return err
	}
	var token *int64
	if l.wait == 0 {
		err = own.QueryRow(ctx, sqlTryLease, l.key, interval(l.ttl), l.owner).Scan(&token, &l.serverStart)
	} else {
		var timeout *string
		if l.wait > 0 {
			t := interval(l.wait)
			timeout = &t
		} else if _, err = own.Exec(ctx, sqlNoLockTimeout); err != nil {
			_ = own.Close(context.Background())
			return err
		}
		err = own.QueryRow(ctx, sqlLease, l.key, interval(l.ttl), timeout, l.owner).Scan(&token, &l.serverStart)
	}
	if err != nil {
		_ = own.Close(context.Background())
		if sqlState(err) == sqlStateLockNotAvail {
			return &LeaseUnavailableError{Key: l.key, Wait: l.wait, Err: err}
		}
		if ctx.Err() != nil {
			// Interrupted while waiting: a grant may have come just then.
			l.releaseOwned(nil)
		}
		return Classify(err)
	}
	if token == nil {
		_ = own.Close(context.Background())
		return &LeaseUnavailableError{Key: l.key, Wait: l.wait}
	}
	l.token = *token
	l.own = own
	return nil
}

// releaseOwned releases what this owner holds of the key: on conn first,
// if not nil, and through the pool if that fails.
func (l *Lease) releaseOwned(conn rowQuerier) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sql := l.f.releaseOwnedSQL()
	var n int64
	err := errors.New("no connection")
	if conn != nil {
		err = conn.QueryRow(ctx, sql, l.key, l.owner).Scan(&n)
	}
	if err != nil {
		err = l.f.pool.QueryRow(ctx, sql, l.key, l.owner).Scan(&n)
	}
	if err != nil {
		l.f.logf("pgfence: could not check lease %q after an interrupted grant: %v", l.key, err)
	}
}

func (l *Lease) start() {
	if l.dog != nil {
		l.wg.Add(1)
		go l.renewLoop()
		l.mu.Lock()
		l.joinTimer = time.AfterFunc(watchdogJoinAfter, l.join)
		l.mu.Unlock()
		return
	}
	l.wg.Add(2)
	go l.renewLoop()
	go l.watch()
}

// join adds the lease to the fence's watchdog, unless its release has
// begun (or it has ended): the check and the addition are one step under
// l.mu, which the release takes before it removes the lease from the set.
func (l *Lease) join() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.leaving || l.end != nil {
		return
	}
	l.dog.add(l)
}

// statusHow asks the server how the lease ended: a server that restarted
// since the grant ended it (Connection), whatever the status says now.
func (l *Lease) statusHow() How {
	ctx, cancel := context.WithTimeout(context.Background(), l.tryTimeout)
	defer cancel()
	var status string
	var started time.Time
	if err := l.f.pool.QueryRow(ctx, sqlStatus, l.key, l.token).Scan(&status, &started); err != nil {
		return Expired
	}
	if !started.Equal(l.serverStart) {
		return Connection
	}
	return serverHow(status)
}

// renewLoop renews through the pool every third of the TTL (less up to
// 20% jitter), each try bounded; a failed try suspends the lease, and the
// local deadline passing loses it.
func (l *Lease) renewLoop() {
	defer l.wg.Done()
	ctx := l.stopCtx
	delay := l.nextRenewal()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wake := minDuration(delay, time.Until(l.Deadline()))
		if wake < 0 {
			wake = 0
		}
		timer.Reset(wake)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if l.Err() != nil {
			return
		}
		if !time.Now().Before(l.Deadline()) {
			l.lose(Deadline, nil)
			return
		}
		sent := time.Now()
		tctx, cancel := context.WithTimeout(ctx, l.tryTimeout)
		var ok bool
		err := l.f.pool.QueryRow(tctx, sqlRenew, l.key, l.token, interval(l.ttl)).Scan(&ok)
		cancel()
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil && ok:
			l.renewed(sent)
			delay = l.nextRenewal()
		case err == nil || isFenceError(err):
			l.lose(l.statusHow(), err)
			return
		default:
			l.suspend(err)
			delay = l.nextRetry()
		}
	}
}

// watch sleeps in fence_wait_lease_end on the lease's own connection; the
// server answers the moment the lease ends.  A lost connection is
// reconnected once the lease is known to be still held (and the server not
// restarted); meanwhile the renewer's deadline is the fallback.
func (l *Lease) watch() {
	defer l.wg.Done()
	ctx := l.stopCtx
	conn := l.own
	l.own = nil
	defer func() {
		if conn != nil {
			_ = conn.Close(context.Background())
		}
	}()
	for ctx.Err() == nil && l.Err() == nil {
		if conn == nil {
			if conn = l.reconnect(ctx); conn == nil {
				return
			}
			continue
		}
		var how *string
		err := conn.QueryRow(ctx, sqlWaitEnd, l.key, l.token, interval(watchdogPoll)).Scan(&how)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			l.f.logf("pgfence: watchdog connection of lease %q failed (%v); reconnecting", l.key, err)
			_ = conn.Close(context.Background())
			conn = nil
			if !l.sleep(ctx, l.nextRetry()) {
				return
			}
			continue
		}
		if how != nil {
			l.lose(serverHow(*how), nil)
			return
		}
	}
}

func (l *Lease) reconnect(ctx context.Context) *pgx.Conn {
	for ctx.Err() == nil && l.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, maxDuration(l.tryTimeout, time.Second))
		conn, err := l.f.connectOwn(cctx)
		var status string
		var started time.Time
		if err == nil {
			err = conn.QueryRow(cctx, sqlStatus, l.key, l.token).Scan(&status, &started)
			if err != nil {
				_ = conn.Close(context.Background())
			}
		}
		cancel()
		if err != nil {
			if !l.sleep(ctx, l.nextRetry()) {
				return nil
			}
			continue
		}
		switch {
		case !started.Equal(l.serverStart):
			_ = conn.Close(context.Background())
			l.lose(Connection, nil)
			return nil
		case status != "held":
			_ = conn.Close(context.Background())
			l.lose(serverHow(status), nil)
			return nil
		}
		return conn
	}
	return nil
}

func (l *Lease) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (l *Lease) nextRenewal() time.Duration {
	return time.Duration(float64(l.renewEvery) * (0.8 + 0.2*rand.Float64()))
}

func (l *Lease) nextRetry() time.Duration {
	return time.Duration(float64(l.retryEvery) * (0.5 + 0.5*rand.Float64()))
}

func maxDuration(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

func minDuration(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}
