"""A one-line progress bar over a sweep's points, with the running count of failures (on stderr)."""

from __future__ import annotations

import sys
import time


class SweepProgress:
    def __init__(self, total: int, enabled: bool = True, every_s: float = 1.0):
        self.total, self.enabled, self.every_s = total, enabled, every_s
        self.tty = sys.stderr.isatty()
        self.last_text = ""
        self.last_time = 0.0

    def update(self, done: int, failed: int, running: int) -> None:
        if not self.enabled:
            return
        share = done / self.total if self.total else 1.0
        text = (f"[{'#' * int(share * 30):<30}] {done}/{self.total} points, {failed} failed, "
                f"{running} running")
        now = time.monotonic()
        if text == self.last_text or (not self.tty and now - self.last_time < self.every_s and done < self.total):
            return
        self.last_text, self.last_time = text, now
        sys.stderr.write(("\r" + text) if self.tty else (text + "\n"))
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.tty and self.last_text:
            sys.stderr.write("\n")
            self.last_text = ""
