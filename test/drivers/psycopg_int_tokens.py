"""Python int tokens through psycopg 3, in text and in binary.

psycopg 3 sends a Python int as the smallest integer type that holds it:
smallint below 32768, integer, then bigint.  Every token of a fresh
database is a smallint for a long while, so fence must take a token as a
smallint wherever it takes one as an integer or a bigint.

Run by test/t/040_psycopg_tokens.pl with libpq's PG* environment pointing
at a server with fence preloaded.  One database per placeholder kind
(argv[1..]): each starts a fresh token counter.  Prints one line per check;
exits non-zero on the first failure (with the server's SQLSTATE).
"""
import sys

import psycopg

TOKENS = (33, 40000, 3000000000)


def check(label, got, want):
    if got != want:
        print(f"FAIL {label}: got {got!r}, want {want!r}")
        sys.exit(1)
    print(f"ok {label}")


def run(dbname, ph, binary):
    # %s lets psycopg choose the format, %t forces text, %b binary; a binary
    # cursor also reads results in binary.
    with psycopg.connect(dbname=dbname, autocommit=True) as conn:
        cur = conn.cursor(binary=binary)
        cur.execute("CREATE TABLE channels (id int PRIMARY KEY, retention_days int,"
                    " fence fence_token NOT NULL DEFAULT 0)")
        cur.execute("INSERT INTO channels VALUES (7, 7, 0)")
        for tok in TOKENS:
            tag = f"{dbname} {tok}"
            # The counter's next grant is exactly tok.
            cur.execute("SELECT fence_advance_tokens(%s - 1)" % ph, (tok,))
            cur.execute("SELECT fence_try_lease('channel:7', '1 minute')::text")
            check(f"{tag} granted", cur.fetchone()[0], str(tok))

            update = ("UPDATE channels SET retention_days = {0}, fence = {0}"
                      " WHERE id = {0} AND fence <= {0}").format(ph)
            cur.execute(update, (30, tok, 7, tok))
            check(f"{tag} fenced update writes", cur.rowcount, 1)
            cur.execute(update, (90, tok - 1, 7, tok - 1))
            check(f"{tag} stale update writes nothing", cur.rowcount, 0)
            cur.execute("SELECT fence::text, retention_days FROM channels WHERE id = 7")
            check(f"{tag} row", cur.fetchone(), (str(tok), 30))

            # Compared with the column on the left and on the right.
            cur.execute("SELECT count(*) FROM channels WHERE fence = %s AND %s >= fence"
                        .replace("%s", ph), (tok, tok))
            check(f"{tag} comparisons", cur.fetchone()[0], 1)

            with conn.transaction():
                cur.execute("SELECT fence_use_token(%s)" % ph, (tok,))
                cur.execute("SELECT fence_current_token()::text")
                check(f"{tag} token in effect", cur.fetchone()[0], str(tok))

            cur.execute("SELECT fence_release('channel:7', %s)" % ph, (tok,))
            check(f"{tag} released", cur.fetchone()[0], True)


def main():
    for dbname in sys.argv[1:]:
        kind = dbname.rsplit("_", 1)[-1]
        ph, binary = {"auto": ("%s", False), "text": ("%t", False),
                      "binary": ("%b", True)}[kind]
        try:
            run(dbname, ph, binary)
        except psycopg.Error as e:
            print(f"FAIL {dbname}: SQLSTATE {e.sqlstate}: {e}")
            sys.exit(1)
    print("done")


main()
