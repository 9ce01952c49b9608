"""The progress bar on stderr (tqdm when installed): the current case, cases done, elapsed and time left.
Without tqdm or a terminal on stderr, or with --no-progress, one '.. case' line per case instead."""
import shutil
import sys


class Progress:
    """tick(label) when a case starts; write(msg) prints a message without breaking the bar."""

    def __init__(self, total, enabled=True):
        self.total, self.n, self.bar = total, 0, None
        if enabled and sys.stderr.isatty():
            try:
                from tqdm import tqdm
                width = shutil.get_terminal_size((0, 0)).columns   # 0 on a terminal without a size
                self.bar = tqdm(total=total, file=sys.stderr, unit="case", leave=False,
                                dynamic_ncols=width > 0, ncols=None if width > 0 else 100,
                                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} cases [{elapsed}<{remaining}]")
            except ImportError:
                pass

    def tick(self, label):
        if self.bar is not None:
            if self.n:
                self.bar.update(1)
            self.bar.set_description_str(label[:40], refresh=True)
        else:
            print(f"  .. [{self.n + 1}/{self.total}] {label}", file=sys.stderr, flush=True)
        self.n += 1

    def echo(self, line):
        """Print a report line on stdout above the bar."""
        if self.bar is not None:
            self.bar.write(line, file=sys.stdout)
        else:
            print(line, flush=True)

    def write(self, msg):
        if self.bar is not None:
            self.bar.write(f"  .. {msg}", file=sys.stderr)
        else:
            print(f"  .. {msg}", file=sys.stderr, flush=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.update(self.total - self.bar.n)
            self.bar.close()
