"""The loopback fake model (server.testing.fake_llm) for the editor-context e2e test: it answers
every call with a short text and prints each request it gets as one JSON line on stdout, after
its base URL, so that the test can read what the model was sent.

    PYTHONPATH=<repo> python recording_model.py
"""

from __future__ import annotations

import json
import signal
import threading

from server.testing.fake_llm import FakeModelServer, Reply


def main() -> None:
    server = FakeModelServer()
    server.script(*(Reply(text="Noted.") for _ in range(200)))
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with server:
        print(server.base_url, flush=True)
        printed = 0
        while not done.wait(0.05):
            for request in server.requests[printed:]:
                print(json.dumps({"path": request.path, "body": request.body}), flush=True)
                printed += 1


if __name__ == "__main__":
    main()
