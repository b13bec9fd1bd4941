"""A minimal HTTP proxy on 127.0.0.1 for tests: CONNECT tunnels, and plain GETs in absolute form."""

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
            host, port = target.rsplit(":", 1)
            upstream = socket.create_connection((host, int(port)))
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            parts = urlsplit(target)
            upstream = socket.create_connection((parts.hostname, parts.port or 80))
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            kept = [h for h in headers if not h.lower().startswith(("connection:", "proxy-"))]
            head = "\r\n".join([f"{method} {path} HTTP/1.1", *kept, "Connection: close", "", ""])
            upstream.sendall(head.encode("latin-1"))
        self._relay(upstream)

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

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"

    def stop(self):
        self.shutdown()
        self.server_close()
