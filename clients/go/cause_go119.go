//go:build !go1.20

package pgfence

import "context"

// Before Go 1.20 (no context.WithCancelCause): a plain cancel; Cause reads
// the cause that withLeaseEnd keeps beside it.
func withCancelCause(parent context.Context) (context.Context, func(error)) {
	ctx, cancel := context.WithCancel(parent)
	return ctx, func(error) { cancel() }
}
