"""A real ``td2048 serve`` process for the tests (``python -m td2048.cli serve ... --port 0``, 127.0.0.1 only),
and plain-urllib requests to it."""

import json
import os
import queue
import signal
import subprocess
import threading
import urllib.error
import urllib.request

from commands import start_td2048

START_TIMEOUT = 300  # a cold kernel cache compiles the network's kernels first (tens of seconds on a loaded machine)


class Server:
    """``td2048 serve ARGS --port 0`` started, its URL read from its first line; stopped by :meth:`stop`."""

    def __init__(self, *args, env=None):
        self.process = start_td2048("serve", *args, "--port", "0", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, env=env or {**os.environ, "PYTHONUNBUFFERED": "1"})
        lines = queue.Queue()
        threading.Thread(target=lambda: lines.put(self.process.stdout.readline()), daemon=True).start()
        try:
            self.banner = lines.get(timeout=START_TIMEOUT)
        except queue.Empty:
            self.stop()
            raise AssertionError(f"td2048 serve did not start in {START_TIMEOUT} s") from None
        if not self.banner.startswith("td2048 serve: http://127.0.0.1:"):
            self.stop()
            raise AssertionError(f"td2048 serve did not start: {self.banner!r} {self.process.stderr.read()}")
        self.url = self.banner.split()[2].rstrip("/")

    def request(self, method, path, body=None, raw=None, headers=None):
        """(status, answer): the answer parsed as JSON when it is JSON, else text."""
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, kind, text = response.status, response.headers.get("content-type", ""), response.read()
        except urllib.error.HTTPError as e:
            status, kind, text = e.code, e.headers.get("content-type", ""), e.read()
        return status, json.loads(text) if kind.startswith("application/json") else text.decode()

    def post(self, path, body=None, **kwargs):
        return self.request("POST", path, body, **kwargs)

    def get(self, path, **kwargs):
        return self.request("GET", path, **kwargs)

    def ok(self, method, path, body=None):
        """The answer of a request that must succeed."""
        status, answer = self.request(method, path, body)
        assert 200 <= status < 300, (status, answer)
        return answer

    def stop(self):
        """Ctrl-C, as a user stops it; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def assert_refused(answer, status, expected_status, *fragments):
    """A 4xx with one line of JSON holding every fragment."""
    assert status == expected_status, (status, answer)
    assert isinstance(answer, dict) and list(answer) == ["error"], answer
    assert "\n" not in answer["error"], answer
    for fragment in fragments:
        assert fragment in answer["error"], answer
