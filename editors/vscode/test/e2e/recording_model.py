"""The loopback fake model (server.testing.fake_llm) for the e2e tests: it answers every call
with a short text and prints each request it gets as one JSON line on stdout (its path, body and
the API key it came with), after its base URL, so that a test can read what the model was sent.
With --api-key it refuses any other key (401), as the services do.

    PYTHONPATH=<repo> python recording_model.py [--api-key KEY]
"""

from __future__ import annotations

import argparse
import json
import signal
import threading

from server.testing.fake_llm import FakeModelServer, Reply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-key", help="refuse requests with another key (401)")
    server = FakeModelServer(api_key=parser.parse_args().api_key)
    server.script(*(Reply(text="Noted.") for _ in range(200)))
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with server:
        print(server.base_url, flush=True)
        printed = 0
        while not done.wait(0.05):
            for request in server.requests[printed:]:
                key = request.headers.get("x-api-key") or request.headers.get(
                    "authorization", ""
                ).removeprefix("Bearer ")
                print(
                    json.dumps({"path": request.path, "body": request.body, "key": key}), flush=True
                )
                printed += 1


if __name__ == "__main__":
    main()
