package pgfence

import (
	"context"
	"sync"
)

// A context that a lease cancels when it ends records why, so that Cause
// can tell a lease's end from its parent's cancellation or deadline.
type causeKey struct{}

type causeBox struct {
	mu    sync.Mutex
	cause error
}

// withLeaseEnd returns a child of parent that end(err) cancels, remembering
// err as the cause unless parent ended it first.
func withLeaseEnd(parent context.Context) (ctx context.Context, end func(error)) {
	box := &causeBox{}
	inner, cancel := withCancelCause(parent)
	ctx = context.WithValue(inner, causeKey{}, box)
	end = func(err error) {
		box.mu.Lock()
		if box.cause == nil && inner.Err() == nil {
			box.cause = err
		}
		box.mu.Unlock()
		cancel(err)
	}
	return ctx, end
}

// Cause returns why ctx was cancelled: the *LeaseLostError of the lease
// that ended it (How is Released when the lease ended because Do returned
// or Release was called), else ctx.Err(), or nil while ctx is not done.
// It works for the context Do passes, Lease.Context and Lease.Tx's, and for
// contexts derived from them.  ctx.Err() itself is context.Canceled, as the
// context package promises; on Go 1.20 and later context.Cause(ctx) also
// returns the *LeaseLostError.
func Cause(ctx context.Context) error {
	err := ctx.Err()
	if err == nil {
		return nil
	}
	if box, ok := ctx.Value(causeKey{}).(*causeBox); ok {
		box.mu.Lock()
		cause := box.cause
		box.mu.Unlock()
		if cause != nil {
			return cause
		}
	}
	return err
}
