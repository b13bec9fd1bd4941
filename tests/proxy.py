"""A minimal HTTP proxy on 127.0.0.1 for tests: CONNECT tunnels, and plain GETs in absolute form."""

import http
import socket
import socketserver
import threading
from urllib.parse import urlsplit


class _Handler(socketserver.StreamRequestHandler):
    rbufsize = 0  # unbuffered, so no byte meant for the tunnel is held back in a buffer

    def handle(self):
        request_line = self.rfile.readline(65537).decode("latin-1")
        headers = []
        while True:
            line = self.rfile.readline(65537).decode("latin-1")
            if line in ("\r\n", "\n", ""):
                break
            headers.append(line.rstrip("\r\n"))
        method, target, _ = request_line.split(" ", 2)
        self.server.seen.append((method, target, headers))
        if method == "CONNECT":
            refusal = self.server.refuse_connect
            if refusal is not None:
                self._refuse(refusal)
                return
            host, port = target.rsplit(":", 1)
            upstream = socket.create_connection((host, int(port)))
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            upstream = self._forward(method, target, headers)
        self._relay(upstream)

    def _refuse(self, status):
        """Answer ``status`` with an empty body and end the connection, forwarding nothing."""
        phrase = self.server.refuse_reason or http.HTTPStatus(status).phrase
        self.wfile.write(f"HTTP/1.1 {status} {phrase}\r\nContent-Length: 0\r\n"
                         "Connection: close\r\n\r\n".encode("latin-1"))

    def _forward(self, method, target, headers):
        """Send a request in absolute form on to its origin, as a request in origin form."""
        parts = urlsplit(target)
        upstream = socket.create_connection((parts.hostname, parts.port or 80))
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        kept = [h for h in headers if not h.lower().startswith(("connection:", "proxy-"))]
        head = "\r\n".join([f"{method} {path} HTTP/1.1", *kept, "Connection: close", "", ""])
        upstream.sendall(head.encode("latin-1"))
        return upstream

    def _relay(self, upstream):
        def pump(source, sink):
            try:
                while True:
                    data = source.recv(65536)
                    if not data:
                        break
                    sink.sendall(data)
            except OSError:
                pass
            finally:
                for end in (source, sink):
                    try:
                        end.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        back = threading.Thread(target=pump, args=(upstream, self.connection), daemon=True)
        back.start()
        pump(self.connection, upstream)
        back.join(5)
        upstream.close()


class Proxy(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, refuse_connect=None, refuse_reason=None):
        """With ``refuse_connect`` a status such as 403, every CONNECT is answered with it
        and an empty body, and the connection closed, as a proxy that forbids tunnels does;
        ``refuse_reason`` is the reason phrase it gives, its status's standard one if None."""
        super().__init__(("127.0.0.1", 0), _Handler)
        self.refuse_connect = refuse_connect
        self.refuse_reason = refuse_reason
        self.seen = []
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"

    def stop(self):
        self.shutdown()
        self.server_close()
