package pgfence

import "sync"

// PerLeaseWatchdog makes f take and watch each lease on a connection of its
// own, as with a server without fence_wait_leases_end and
// fence_forget_token (fence 1.2).  For the tests.
func PerLeaseWatchdog(f *Fence) {
	f.dogMu.Lock()
	f.caps = serverCaps{asked: true}
	f.dogMu.Unlock()
}

// WatchdogCounts: how many calls f's watchdog has made, and how many
// cancel requests it has sent (0, 0 before it has a lease).  For the tests.
func WatchdogCounts(f *Fence) (calls, cancels int64) {
	f.dogMu.Lock()
	w := f.dog
	f.dogMu.Unlock()
	if w == nil {
		return 0, 0
	}
	return w.calls.Load(), w.cancelRequests.Load()
}

// ServerHas makes f take the server to have (or lack) fence_wait_leases_end
// (multi) and fence_forget_token (forget), as such a server answers.  For
// the tests.
func ServerHas(f *Fence, multi, forget bool) {
	f.dogMu.Lock()
	f.caps = serverCaps{asked: true, multi: multi, forget: forget}
	f.dogMu.Unlock()
}

// ReleaseOwned gives back what owner holds of key through f's pool, as
// after a grant whose answer was lost, and returns the statement it ran.
// For the tests.
func ReleaseOwned(f *Fence, key, owner string) string {
	(&Lease{f: f, key: key, owner: owner}).releaseOwned(nil)
	return f.releaseOwnedSQL()
}

// DoneClosedAtEnd registers a call at l's end, as Context, Do and Tx do,
// and returns what it saw: whether Done was already closed when it ran
// (nil until it has run).  For the tests.
func DoneClosedAtEnd(l *Lease) func() *bool {
	var mu sync.Mutex
	var seen *bool
	l.onEnd(func(error) {
		closed := false
		select {
		case <-l.done:
			closed = true
		default:
		}
		mu.Lock()
		seen = &closed
		mu.Unlock()
	})
	return func() *bool {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}
