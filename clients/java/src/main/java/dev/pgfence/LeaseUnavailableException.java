package dev.pgfence;

import java.sql.SQLException;
import java.time.Duration;

/**
 * The lease was not granted: another owner held it (a wait of zero), or the wait passed
 * (SQLSTATE 55P03, PostgreSQL's lock_not_available).
 */
public class LeaseUnavailableException extends FenceException {
    private static final long serialVersionUID = 1L;

    private final String key;
    private final Duration waited;

    public LeaseUnavailableException(String key, Duration wait, SQLException cause) {
        super(wait != null && wait.isZero()
                ? "lease \"" + key + "\" is held by another owner"
                : "lease \"" + key + "\" was not granted within " + describe(wait),
            LOCK_NOT_AVAILABLE, cause);
        this.key = key;
        this.waited = wait;
    }

    /** The key asked for. */
    public String key() {
        return key;
    }

    /** The wait asked for: zero for a single try, null for none (forever). */
    public Duration waited() {
        return waited;
    }

    private static String describe(Duration wait) {
        if (wait == null) {
            return "its wait";
        }
        return wait.toMillis() / 1000.0 + " seconds";
    }
}
