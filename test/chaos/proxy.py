"""A TCP proxy between the clients and one PostgreSQL node, which the test
can cut and heal: the partitions of a chaos run, made without touching the
machine's network.

Modes while cut:
  stall   nothing passes either way; on heal the bytes held up are
          delivered late (a reply that sat in a buffer while the network
          was down)
  drop    nothing passes; on heal the connections are reset (the
          partition outlived TCP)
  oneway  requests reach the server, replies are thrown away; on heal the
          connections are reset (the client never learns what happened)
  refuse  every connection is reset at once and new ones are refused
"""

import select
import socket
import threading
import time


class Proxy:
    def __init__(self, listen_port, target_port, host="127.0.0.1"):
        self.host = host
        self.target_port = target_port
        self.mode = "ok"
        self.lock = threading.Lock()
        self.conns = []
        self.closing = False
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, listen_port))
        self.port = self.sock.getsockname()[1]
        self.sock.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closing:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            if self.mode == "refuse":
                self._reset(c)
                continue
            try:
                s = socket.create_connection((self.host, self.target_port), timeout=2)
                s.settimeout(None)
            except OSError:
                self._reset(c)
                continue
            pair = [c, s, False]
            with self.lock:
                self.conns.append(pair)
            threading.Thread(target=self._pump, args=(pair, c, s, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(pair, s, c, True), daemon=True).start()

    @staticmethod
    def _reset(sock):
        try:
            # An RST, as a broken network path ends up giving.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            sock.close()
        except OSError:
            pass

    def _pump(self, pair, src, dst, reply):
        try:
            while not pair[2]:
                if self.mode in ("stall", "drop"):
                    time.sleep(0.05)
                    continue
                r, _, _ = select.select([src], [], [], 0.2)
                if not r:
                    continue
                data = src.recv(65536)
                if not data:
                    break
                if self.mode == "oneway" and reply:
                    continue
                # Cut between the read and the send: hold it until the heal.
                while self.mode in ("stall", "drop") and not pair[2]:
                    time.sleep(0.05)
                if pair[2]:
                    break
                dst.sendall(data)
        except OSError:
            pass
        self._close(pair)

    def _close(self, pair):
        if not pair[2]:
            pair[2] = True
        for s in pair[:2]:
            self._reset(s)
        with self.lock:
            if pair in self.conns:
                self.conns.remove(pair)

    def cut(self, mode):
        assert mode in ("stall", "drop", "oneway", "refuse")
        self.mode = mode
        if mode == "refuse":
            self.reset_all()

    def heal(self):
        mode, self.mode = self.mode, "ok"
        if mode in ("drop", "oneway"):
            self.reset_all()

    def reset_all(self):
        with self.lock:
            pairs = list(self.conns)
        for p in pairs:
            self._close(p)

    def close(self):
        self.closing = True
        self.sock.close()
        self.reset_all()
