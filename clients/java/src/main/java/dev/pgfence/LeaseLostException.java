package dev.pgfence;

import java.util.Locale;

/**
 * The lease ended while this process believed it held it. Its SQLSTATE is LF002 (lease not
 * held), so code that matches on the SQLSTATE treats both alike; {@link #how()} says why.
 */
public class LeaseLostException extends FenceException {
    private static final long serialVersionUID = 1L;

    /** How a lease was lost. */
    public enum How {
        /** Its expiry passed on the server (no renewal came in time). */
        EXPIRED,
        /** Another holder took it over. */
        SUPERSEDED,
        /** This process released it ({@link Lease#close()}). */
        RELEASED,
        /** Someone else ended it: fence_break, or a release with its token from elsewhere. */
        BROKEN,
        /** The server restarted while it was held: a restart ends every lease. */
        CONNECTION,
        /** No renewal succeeded before the local deadline (the last renewal's send time plus the TTL). */
        DEADLINE;

        /** The lower-case name: expired, superseded, released, broken, connection, deadline. */
        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** How the server says a lease ended (fence_wait_lease_end, fence_lease_status). */
        static How fromServer(String status) {
            if ("superseded".equals(status)) {
                return SUPERSEDED;
            }
            if ("released".equals(status)) {
                // A release this process did not do.
                return BROKEN;
            }
            return EXPIRED;
        }
    }

    private final String key;
    private final long token;
    private final How how;

    public LeaseLostException(String key, long token, How how, Throwable cause) {
        super("lease \"" + key + "\" (token " + token + ") was lost: " + how, LEASE_NOT_HELD, cause);
        this.key = key;
        this.token = token;
        this.how = how;
    }

    /** Why the lease ended. */
    public How how() {
        return how;
    }

    /** The lease's key. */
    public String key() {
        return key;
    }

    /** The token the lease had. */
    public long token() {
        return token;
    }
}
