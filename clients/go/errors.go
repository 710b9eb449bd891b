package pgfence

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgconn"
)

// fence's own SQLSTATEs (class LF), and PostgreSQL's "lock not available",
// which fence_lease raises when its timeout passes.
const (
	SQLStateStaleToken     = "LF001"
	SQLStateLeaseNotHeld   = "LF002"
	SQLStateTokenRequired  = "LF003"
	sqlStateLockNotAvail   = "55P03"
	sqlStateQueryCancelled = "57014"
)

// How says how a lease ended (LeaseLostError.How).
type How string

const (
	// Expired: its expiry passed on the server.
	Expired How = "expired"
	// Superseded: another holder took it over.
	Superseded How = "superseded"
	// Released: this process released it (the end of Do, or Release).
	Released How = "released"
	// Broken: someone else ended it: fence_break, or a release with its token.
	Broken How = "broken"
	// Connection: the server restarted, and every lease ended with it.
	Connection How = "connection"
	// Deadline: no renewal succeeded before the local deadline (the last
	// successful renewal's send time plus the TTL).
	Deadline How = "deadline"
)

// StaleTokenError is SQLSTATE LF001: a newer holder has written the row;
// stop.  It unwraps to the *pgconn.PgError.
type StaleTokenError struct{ Err error }

func (e *StaleTokenError) Error() string { return "pgfence: stale fencing token: " + pgMessage(e.Err) }
func (e *StaleTokenError) Unwrap() error { return e.Err }

// LeaseNotHeldError is SQLSTATE LF002: the token is not the current live
// token of its lease.  Returned from a lease's Tx, it also marks the lease
// lost.  It unwraps to the *pgconn.PgError.
type LeaseNotHeldError struct{ Err error }

func (e *LeaseNotHeldError) Error() string { return "pgfence: lease not held: " + pgMessage(e.Err) }
func (e *LeaseNotHeldError) Unwrap() error { return e.Err }

// TokenRequiredError is SQLSTATE LF003: a protected table requires a token
// and the write carried none.  It unwraps to the *pgconn.PgError.
type TokenRequiredError struct{ Err error }

func (e *TokenRequiredError) Error() string {
	return "pgfence: fencing token required: " + pgMessage(e.Err)
}
func (e *TokenRequiredError) Unwrap() error { return e.Err }

// LeaseUnavailableError says that the lease was not granted: at once
// (Wait 0), or within Wait.  After a timed wait it unwraps to the server's
// error (SQLSTATE 55P03).
type LeaseUnavailableError struct {
	Key  string
	Wait time.Duration
	Err  error
}

func (e *LeaseUnavailableError) Error() string {
	if e.Wait == 0 {
		return fmt.Sprintf("pgfence: lease %q is held by another owner", e.Key)
	}
	return fmt.Sprintf("pgfence: lease %q was not granted within %s", e.Key, e.Wait)
}
func (e *LeaseUnavailableError) Unwrap() error { return e.Err }

// LeaseLostError says that the lease ended while this process held it, and
// How.  Err is the error that told it, if one did (a *pgconn.PgError, or the
// error of a statement that was cancelled because of the loss).
type LeaseLostError struct {
	Key   string
	Token int64
	How   How
	Err   error
}

func (e *LeaseLostError) Error() string {
	return fmt.Sprintf("pgfence: lease %q (token %d) was lost: %s", e.Key, e.Token, e.How)
}
func (e *LeaseLostError) Unwrap() error { return e.Err }

// Classify returns the pgfence error that a database error means: a
// *StaleTokenError, *LeaseNotHeldError or *TokenRequiredError wrapping err
// when err carries SQLSTATE LF001, LF002 or LF003; err itself otherwise
// (nil for nil).  Use it on errors of statements run outside Lease.Tx.
func Classify(err error) error {
	if fe, ok := classify(err); ok {
		return fe
	}
	return err
}

// classify: the pgfence error err means, and true, if it carries one of
// fence's SQLSTATEs and is not one already.
func classify(err error) (error, bool) {
	if err == nil {
		return nil, false
	}
	var (
		stale *StaleTokenError
		held  *LeaseNotHeldError
		need  *TokenRequiredError
		lost  *LeaseLostError
	)
	if errors.As(err, &stale) || errors.As(err, &held) || errors.As(err, &need) || errors.As(err, &lost) {
		return err, false
	}
	switch sqlState(err) {
	case SQLStateStaleToken:
		return &StaleTokenError{Err: err}, true
	case SQLStateLeaseNotHeld:
		return &LeaseNotHeldError{Err: err}, true
	case SQLStateTokenRequired:
		return &TokenRequiredError{Err: err}, true
	}
	return err, false
}

// isFenceError: is err (or what it wraps) one of fence's SQLSTATEs?
func isFenceError(err error) bool {
	switch sqlState(err) {
	case SQLStateStaleToken, SQLStateLeaseNotHeld, SQLStateTokenRequired:
		return true
	}
	return false
}

func sqlState(err error) string {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code
	}
	return ""
}

func pgMessage(err error) string {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Message
	}
	if err == nil {
		return "(no error)"
	}
	return err.Error()
}
