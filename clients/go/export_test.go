package pgfence

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
