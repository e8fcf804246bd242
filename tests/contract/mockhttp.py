"""What the loopback model servers of the contract tests share (standard library only): a
request handler that reads JSON bodies and answers JSON or server-sent events, a log of one
JSON line a request, and the server itself on 127.0.0.1, its port written to a file once it
accepts connections."""
import http.server
import json
import os
import threading

LOG_LOCK = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply_json(self, obj, code=200):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_json(self):
        """The request's body as JSON, and the raw bytes; (None, raw) when it is not JSON."""
        size = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(size)
        try:
            return json.loads(raw or b"{}"), raw
        except ValueError:
            return None, raw

    def start_events(self):
        """Headers of a server-sent event stream that ends with the connection."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()

    def event(self, name, data):
        self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())


def append_log(path, record):
    with LOG_LOCK, open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def serve(handler, port, port_file):
    """Serve on 127.0.0.1:port (0: a port the kernel picks); the port goes to port_file (renamed
    into place, so a reader never sees half of it) once connections are accepted."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, port_file)
    server.serve_forever()
