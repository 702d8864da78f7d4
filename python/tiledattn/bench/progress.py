"""A progress bar for the sweep: tqdm when it is installed, else a small
stderr bar (the GPU machine has no network to install tqdm)."""

import sys
import time


class SimpleBar:
    """Minimal tqdm stand-in: update(), set_description(), close()."""

    def __init__(self, total, desc="", stream=None, width=30):
        self.total = max(1, total)
        self.n = 0
        self.desc = desc
        self.stream = stream or sys.stderr
        self.width = width
        self.start = time.monotonic()
        self._draw()

    def _draw(self):
        done = int(self.width * self.n / self.total)
        elapsed = time.monotonic() - self.start
        eta = elapsed / self.n * (self.total - self.n) if self.n else float("nan")
        eta_text = f"eta {eta:4.0f}s" if self.n else "eta   ?"
        self.stream.write(
            f"\r[{'#' * done}{'.' * (self.width - done)}] {self.n}/{self.total} "
            f"{elapsed:4.0f}s {eta_text} {self.desc}"[:160].ljust(100)
        )
        self.stream.flush()

    def set_description(self, desc):
        self.desc = desc
        self._draw()

    def update(self, n=1):
        self.n = min(self.total, self.n + n)
        self._draw()

    def close(self):
        self.stream.write("\n")
        self.stream.flush()


def progress_bar(total, desc="", use_tqdm=True, stream=None):
    if use_tqdm:
        try:
            from tqdm import tqdm

            return tqdm(total=total, desc=desc, file=stream or sys.stderr)
        except ImportError:
            pass
    return SimpleBar(total, desc, stream)
