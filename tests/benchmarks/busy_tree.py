"""A runner for tests/benchmarks/test_monitor.py: it starts a server process that outlives it (as
a fork server does), and the server forks 8 workers in turn, each burning 0.12 s of CPU and living
less than one of the monitor's samples. Prints the runner's result line, then exits first."""
import os
import sys
import time

from benchmarks.harness import RESULT_MARK

BURN_S = 0.12
WORKERS = 8


def burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


if __name__ == "__main__":
    r, w = os.pipe()
    if os.fork() == 0:  # the server
        os.close(w)
        os.read(r, 1)  # until the runner has gone: EOF
        for _ in range(WORKERS):
            pid = os.fork()
            if pid == 0:
                burn(BURN_S)
                os._exit(0)
            os.waitpid(pid, 0)
        os._exit(0)
    os.close(r)
    print(RESULT_MARK + '{"status": "ok"}', flush=True)
    sys.stdout.close()
    os._exit(0)  # the server reads EOF now and works on, orphaned
