"""A TCP proxy in front of the test server, whose traffic a test can hold.

    with Proxy(dsn) as proxy:       # proxy.dsn goes through it
        proxy.hold()                # bytes stop flowing both ways (kept, not dropped)
        proxy.flow()                # and flow again

Held traffic looks like a network that stopped answering: statements hang,
nothing fails at once.  hold_replies() holds only what the server sends (it
gets the statements, their answers never come back); cut() then breaks every
connection made so far, as a network that fails does.
"""
import os
import select
import socket
import threading

from psycopg.conninfo import conninfo_to_dict, make_conninfo


class Proxy:
    def __init__(self, dsn):
        params = conninfo_to_dict(dsn)
        host = params.get("host") or os.environ.get("PGHOST") or "/tmp"
        port = int(params.get("port") or os.environ.get("PGPORT") or 5432)
        if host.startswith("/"):
            self._target = (socket.AF_UNIX, os.path.join(host, f".s.PGSQL.{port}"))
        else:
            self._target = (socket.AF_INET, (host, port))
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        params.update(host="127.0.0.1", port=str(self._listener.getsockname()[1]))
        params.pop("hostaddr", None)
        self.dsn = make_conninfo(**params)
        self._flowing = threading.Event()
        self._flowing.set()
        self._replies = threading.Event()
        self._replies.set()
        self._sockets = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def hold(self):
        self._flowing.clear()

    def flow(self):
        self._flowing.set()

    def hold_replies(self):
        self._replies.clear()

    def cut(self):
        for s in list(self._sockets):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._replies.set()

    def close(self):
        self._closed = True
        self._flowing.set()
        self._listener.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _accept(self):
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            family, address = self._target
            server = socket.socket(family, socket.SOCK_STREAM)
            server.connect(address)
            self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def _pump(self, a, b):
        peers = {a: b, b: a}
        try:
            while not self._closed:
                ready, _, _ = select.select([a, b], [], [], 0.1)
                for s in ready:
                    self._flowing.wait()
                    if s is b:
                        self._replies.wait()
                    data = s.recv(65536)
                    if not data:
                        return
                    peers[s].sendall(data)
        except OSError:
            pass
        finally:
            a.close()
            b.close()
