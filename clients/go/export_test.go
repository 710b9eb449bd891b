package pgfence

// PerLeaseWatchdog makes f watch each lease on a connection of its own, as
// with a server without fence_wait_leases_end (fence 1.2).  For the tests.
func PerLeaseWatchdog(f *Fence) {
	f.dogMu.Lock()
	f.multi = 2
	f.dogMu.Unlock()
}
