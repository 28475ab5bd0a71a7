"""``headrace cache`` (and ``cache_admin``): manage the host's dataset cache with MindSpore's flags.

There is no server: the cache is files in /dev/shm and a spill directory that every process maps
(see ``headrace/_engine/cache_store.py``). So ``--start`` prepares the shared area and records
its settings (``-s`` spill directory, ``-m`` memory cap ratio, ``-w`` workers, ``-p`` port,
``-l`` log level; the last three are kept for ``--server_info`` only), ``--stop`` removes every
session's rows (refusing, and removing nothing, while another live process uses a session, unless
``--force``: headrace's own flag), ``-g`` creates a session, ``-d ID`` destroys one, ``--list_sessions`` shows the
cached rows per session (memory and disk rows, average row size, hit rate) and ``--server_info``
the settings. ``MS_CACHE_PORT`` gives the default port and ``MS_CACHE_HOST`` the default host
(which must be this one), as for MindSpore's client; ``HEADRACE_CACHE_SHM`` and
``HEADRACE_CACHE_SPILL`` move the two tiers.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from headrace._engine import cache_sessions, cache_store

DEFAULT_PORT = 50052
_LOCAL = ("127.0.0.1", "localhost", "::1")


def _parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, add_help=False, description="Manage the host's dataset cache "
                                "(no daemon: files every process maps).")
    act = p.add_mutually_exclusive_group()
    act.add_argument("--start", action="store_true", help="prepare the shared area and record the settings")
    act.add_argument("--stop", action="store_true", help="remove every session's cached rows (not while another "
                     "process uses a session, unless --force)")
    act.add_argument("-g", "--generate_session", action="store_true", help="create a session; prints its id")
    act.add_argument("-d", "--destroy_session", type=int, metavar="ID", help="remove a session and its rows")
    act.add_argument("--list_sessions", action="store_true", help="rows cached per session and hit rates")
    act.add_argument("--server_info", action="store_true", help="the settings and the places of the tiers")
    act.add_argument("--help", action="store_true", help="show this help")
    p.add_argument("-h", "--hostname", default=os.environ.get("MS_CACHE_HOST"), help="must be this host")
    p.add_argument("-p", "--port", type=int, default=None, help="kept for MindSpore scripts (1025-65535)")
    p.add_argument("-w", "--workers", type=int, default=None, help="kept for MindSpore scripts (1-100)")
    p.add_argument("-s", "--spilldir", default=None, help="the spill directory for rows past the memory cap")
    p.add_argument("-m", "--memory_cap_ratio", type=float, default=None,
                   help="share of the host's RAM a session may use when DatasetCache(size=0) (0 < m <= 1)")
    p.add_argument("-l", "--loglevel", type=int, default=None, help="kept for MindSpore scripts (0-4)")
    p.add_argument("--force", action="store_true", help="with --stop: remove sessions that live processes use too")
    return p


def _check(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    if args.hostname is not None and args.hostname not in _LOCAL:
        parser.error(f"-h/--hostname {args.hostname!r}: the cache is this host's; use 127.0.0.1")
    if args.port is not None and not 1025 <= args.port <= 65535:
        parser.error(f"-p/--port must be between 1025 and 65535, but got {args.port}")
    if args.workers is not None and not 1 <= args.workers <= 100:
        parser.error(f"-w/--workers must be between 1 and 100, but got {args.workers}")
    if args.memory_cap_ratio is not None and not 0 < args.memory_cap_ratio <= 1:
        parser.error(f"-m/--memory_cap_ratio must be in (0, 1], but got {args.memory_cap_ratio}")
    if args.loglevel is not None and not 0 <= args.loglevel <= 4:
        parser.error(f"-l/--loglevel must be between 0 and 4, but got {args.loglevel}")
    if args.force and not args.stop:
        parser.error("--force only applies to --stop")
    if args.spilldir is not None and not os.path.isdir(args.spilldir):
        parser.error(f"-s/--spilldir {args.spilldir!r} is not a directory")


def _port(args: argparse.Namespace) -> int:
    if args.port is not None:
        return args.port
    env = os.environ.get("MS_CACHE_PORT", "")
    return int(env) if env.isdigit() else int(cache_sessions.settings().get("port") or DEFAULT_PORT)


def main(argv: Sequence[str] | None = None, prog: str = "headrace cache") -> int:
    parser = _parser(prog)
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    _check(args, parser)
    port = _port(args)
    if args.help:
        parser.print_help()
        return 0
    if args.start:
        spill = os.path.abspath(args.spilldir) if args.spilldir else None
        cache_sessions.start(spill_dir=spill, memory_cap_ratio=args.memory_cap_ratio, workers=args.workers,
                             port=args.port, loglevel=args.loglevel)
        removed = cache_sessions.clean_stale()
        print(f"Cache ready on this host (no server process; port {port} is not used): memory tier "
              f"{cache_store.memory_root()}, spill directory {cache_store.spill_root(spill)}"
              + (f"; removed {len(removed)} stale file(s) of dead processes" if removed else "") + ".")
        return 0
    if args.stop:
        try:
            n = cache_sessions.stop(force=args.force)
        except cache_sessions.SessionsInUse as e:
            print(f"{prog} --stop: refused, nothing removed: {e}. Stop those processes first, or give "
                  f"--stop --force to remove the sessions anyway (their pipelines go on, computing the rows "
                  f"they can no longer read from the cache).", file=sys.stderr)
            return 1
        print(f"Cache on this host stopped: {n} session(s) and their rows removed.")
        return 0
    if args.generate_session:
        sid = cache_sessions.generate_session()
        print(f"Session created for server on port {port}: {sid}")
        return 0
    if args.destroy_session is not None:
        if not cache_sessions.destroy_session(args.destroy_session):
            print(f"Session {args.destroy_session} not found.", file=sys.stderr)
            return 1
        print(f"Drop session successfully for server on port {port}")
        return 0
    if args.list_sessions:
        _list_sessions(port)
        return 0
    if args.server_info:
        _server_info(port)
        return 0
    parser.print_usage(sys.stderr)
    print(f"{prog}: give one of --start, --stop, -g, -d ID, --list_sessions, --server_info", file=sys.stderr)
    return 2


def _list_sessions(port: int) -> None:
    ids = cache_sessions.sessions()
    if not ids:
        print(f"No active sessions for the cache on port {port}.")
        return
    print(f"Listing sessions for the cache on port {port}\n")
    header = ("Session", "Cache Id", "Mem cached", "Disk cached", "Avg cache size", "Hit rate", "Pipeline")
    lines = [header]
    for sid in ids:
        rows = cache_sessions.key_rows(sid)
        if not rows:
            lines.append((str(sid), "n/a", "n/a", "n/a", "n/a", "n/a", ""))
        for r in rows:
            looked = r["hits"] + r["misses"]
            rate = f"{100 * r['hits'] / looked:.1f}%" if looked else "n/a"
            what = " > ".join([r["source"] or "?"] + list(r["maps"]))
            lines.append((str(sid), r["key"][:12], str(r["mem_cached"]), str(r["disk_cached"]), str(r["avg_size"]),
                          rate, what))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip())


def _server_info(port: int) -> None:
    s = cache_sessions.settings()
    spill = s.get("spill_dir")
    print("Cache Server Configuration:")
    print("----------------------------------------")
    for name, value in (("config name", "value"), ("hostname", "127.0.0.1"), ("port", port),
                        ("number of workers", s.get("workers") or "n/a (no server process)"),
                        ("log level", s.get("loglevel", 1)),
                        ("spill", spill if spill else f"default: {cache_store.spill_root(None)}"),
                        ("memory tier", cache_store.memory_root()),
                        ("memory cap ratio", s.get("memory_cap_ratio") or 0.5)):
        print(f"{name:<20}{value}")
    print("----------------------------------------")
    print(f"Active sessions: {cache_sessions.sessions()}")


def admin_main() -> int:
    """The ``cache_admin`` console script (MindSpore's name for the same tool)."""
    return main(prog="cache_admin")


if __name__ == "__main__":
    sys.exit(admin_main())
