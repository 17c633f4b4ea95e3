"""The play server as ``python -m c4jax.play`` in a subprocess, for the tests of the HTTP API and
of the page in a browser (an in-process server is :mod:`playserver`)."""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
import time

from scripts import ROOT


class PlayServer:
    """``python -m c4jax.play --port 0`` in a subprocess; ``url`` is what it printed."""

    def __init__(self, *args: str, timeout: float = 300.0):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "c4jax.play", "--port", "0", *args],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
        )
        self.lines: list[str] = []
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, args=(lines,), daemon=True).start()
        deadline = time.monotonic() + timeout
        self.url = None
        while self.url is None:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the play server did not start:\n" + "".join(self.lines))
            m = re.search(r"serving on (http://127\.0\.0\.1:(\d+)/)", line)
            if m:
                self.url, self.port = m.group(1), int(m.group(2))

    def _pump(self, lines: queue.Queue) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)
            lines.put(line)
        lines.put(None)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
