"""A stand-in OTLP/HTTP profiles receiver on 127.0.0.1 for the tests: it
decodes each request with OpenTelemetry's own generated classes and checks
it as check.py does, appends what it got to a log (a JSON line a request),
and answers as a Collector does (an empty ExportProfilesServiceResponse).

    server.py LOG [--fail-first]

It prints its port on the first line of stdout, then serves until it is
ended. With --fail-first the first request is answered 503 with
Retry-After: 1, as an overloaded Collector answers, and logged as such.
"""

import gzip
import http.server
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402
from opentelemetry.proto.collector.profiles.v1development import profiles_service_pb2  # noqa: E402

LOG = sys.argv[1]
FAIL_FIRST = "--fail-first" in sys.argv
seen = {"n": 0}


def log(entry):
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        seen["n"] += 1
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        entry = {"path": self.path, "content_type": self.headers.get("Content-Type"),
                 "encoding": self.headers.get("Content-Encoding"),
                 "headers": {k.lower(): v for k, v in self.headers.items()}}
        if FAIL_FIRST and seen["n"] == 1:
            entry["answer"] = 503
            log(entry)
            self.send_response(503)
            self.send_header("Retry-After", "1")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        try:
            if entry["encoding"] == "gzip":
                body = gzip.decompress(body)
            entry["report"] = check.report(check.decode(body), "--tid" in sys.argv)
            entry["answer"] = 200
        except (Exception, SystemExit) as e:  # what the sender is told, and the log
            entry["answer"], entry["error"] = 400, str(e)
        log(entry)
        answer = profiles_service_pb2.ExportProfilesServiceResponse().SerializeToString()
        self.send_response(entry["answer"])
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
print(server.server_address[1], flush=True)
server.serve_forever()
