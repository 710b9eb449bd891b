//go:build go1.20

package pgfence

import "context"

// Go 1.20 and later: the context carries the cause itself, so that
// context.Cause(ctx) returns the *LeaseLostError too.
func withCancelCause(parent context.Context) (context.Context, func(error)) {
	ctx, cancel := context.WithCancelCause(parent)
	return ctx, cancel
}
