#!/usr/bin/env python3
"""Misbehaving clients for tests/suite-serve.sh: many loopback connections
that stall or trickle, to check that `fanjian serve` holds.

  serve-clients.py stall HOST PORT N LENGTH SEND HOLD
      N POSTs to /v1/convert declaring Content-Length LENGTH; each sends
      SEND bytes of its body, then nothing more.
  serve-clients.py trickle HOST PORT N HOLD
      N connections each sending a request's headers one byte a second.

Prints "ready" once every connection is open (and, for stall, its bytes are
sent or the server has answered), then watches them for HOLD seconds (less
when all are closed) and prints one line: "answered=A status503=S closed=C open=O" (answered: got any
HTTP answer; closed: closed or reset by the server without an answer;
open: still open at the end).
"""
import errno
import selectors
import socket
import sys
import time


class Client:
    def __init__(self, host, port, payload):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.sock.setblocking(False)
        self.out = payload
        self.answer = b""
        self.closed = False
        self.sent = 0
        self.head_sent_at = None


def main():
    mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    n = int(sys.argv[4])
    if mode == "stall":
        length, send, hold = int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
        head = ("POST /v1/convert HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
                "Content-Length: %d\r\n\r\n" % (host, port, length)).encode()
        payload = head + b"x" * send
        head_len = len(head)
    else:
        hold = float(sys.argv[5])
        payload = ("GET /healthz HTTP/1.1\r\nHost: %s:%d\r\n" % (host, port)).encode() * 100
    clients = []
    for _ in range(n):
        try:
            clients.append(Client(host, port, payload))
        except OSError:
            # Refused outright counts as closed.
            c = Client.__new__(Client)
            c.sock, c.out, c.answer, c.closed = None, b"", b"", True
            clients.append(c)
    sel = selectors.DefaultSelector()
    for c in clients:
        if c.sock:
            sel.register(c.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, c)

    def close(c):
        sel.unregister(c.sock)
        c.sock.close()
        c.sock = None
        c.closed = True

    start = time.monotonic()
    ready_printed = False
    next_trickle = start
    while time.monotonic() - start < hold and any(c.sock for c in clients):
        now = time.monotonic()
        if mode == "trickle" and now >= next_trickle:
            next_trickle = now + 1.0
            for c in clients:
                if c.sock and c.out:
                    try:
                        c.sock.send(c.out[:1])
                        c.out = c.out[1:]
                    except OSError:
                        close(c)
        if not ready_printed and (mode == "trickle" or
                                  all(not c.sock or not c.out or c.answer for c in clients)):
            print("ready", flush=True)
            ready_printed = True
        for key, events in sel.select(timeout=0.1):
            c = key.data
            if c.sock is None:
                continue
            if events & selectors.EVENT_READ:
                try:
                    data = c.sock.recv(65536)
                except OSError:
                    data = b""
                if data:
                    c.answer += data
                else:
                    close(c)
                    continue
            if events & selectors.EVENT_WRITE and mode == "stall":
                # The body only a moment after the headers, so that an early
                # answer (503) is read before the server closes on the rest.
                waiting = (c.sent >= head_len and c.head_sent_at is not None and
                           time.monotonic() - c.head_sent_at < 0.3)
                if c.out and not c.answer and not waiting:
                    try:
                        limit = head_len - c.sent if c.sent < head_len else 65536
                        k = c.sock.send(c.out[:limit])
                        c.out = c.out[k:]
                        c.sent += k
                        if c.sent >= head_len and c.head_sent_at is None:
                            c.head_sent_at = time.monotonic()
                    except OSError as e:
                        if e.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                            close(c)
                            continue
                if not c.out or c.answer:
                    sel.modify(c.sock, selectors.EVENT_READ, c)
            elif events & selectors.EVENT_WRITE:
                sel.modify(c.sock, selectors.EVENT_READ, c)
    answered = sum(1 for c in clients if c.answer)
    s503 = sum(1 for c in clients if c.answer.startswith(b"HTTP/1.1 503"))
    closed = sum(1 for c in clients if c.closed and not c.answer)
    still = sum(1 for c in clients if c.sock and not c.answer)
    if not ready_printed:
        print("ready", flush=True)
    print("answered=%d status503=%d closed=%d open=%d" % (answered, s503, closed, still), flush=True)


if __name__ == "__main__":
    main()
