"""The server's malloc arena limit (``server/native_memory.py``), observed in glibc's own
report (``malloc_info``) of a fresh process whose threads all allocate."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")

_PROGRAM = textwrap.dedent(
    """
    import ctypes, ctypes.util, os, sys, tempfile, threading
    from spark_replica.server.native_memory import limit_malloc_arenas

    limited = limit_malloc_arenas() if sys.argv[1] == "limit" else None
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.malloc.restype = ctypes.c_void_p
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = (ctypes.c_char_p, ctypes.c_char_p)
    libc.malloc_info.argtypes = (ctypes.c_int, ctypes.c_void_p)
    libc.fclose.argtypes = (ctypes.c_void_p,)
    ready = threading.Barrier(8)

    def allocate():
        ready.wait()  # every thread alive at once: each asks for an arena
        libc.malloc(4096)
        ready.wait()

    threads = [threading.Thread(target=allocate) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    path = os.path.join(tempfile.mkdtemp(), "info.xml")
    report = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, report)
    libc.fclose(report)
    print(limited, open(path).read().count("<heap nr="))
    """
)


def _arenas(mode: str, **env: str) -> tuple[str, int]:
    environment = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"} | env
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, mode],
        capture_output=True, text=True, check=True, env=environment, timeout=60,
    )  # fmt: skip
    limited, arenas = done.stdout.split()
    return limited, int(arenas)


def test_the_server_process_allocates_from_two_arenas_whatever_its_threads() -> None:
    assert _arenas("limit") == ("True", 2)
    limited, unlimited = _arenas("default")
    assert limited == "None"
    assert unlimited > 2  # glibc's default: an arena per thread, up to eight per core


def test_an_operators_malloc_arena_max_is_left_as_it_is() -> None:
    assert _arenas("limit", MALLOC_ARENA_MAX="3") == ("False", 3)


_TRIM_PROGRAM = textwrap.dedent(
    """
    import ctypes, ctypes.util
    from spark_replica.server.native_memory import trim_heap

    def resident() -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * 4096

    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = (ctypes.c_size_t,)
    libc.free.argtypes = (ctypes.c_void_p,)
    blocks = [libc.malloc(2048) for _ in range(100_000)]  # about 200 MB, below the top
    for block in blocks:
        ctypes.memset(block, 1, 2048)
    keep = blocks[-1]  # the arena's top stays in use: free() alone returns nothing
    for block in blocks[:-1]:
        libc.free(block)
    before = resident()
    released = trim_heap()
    print(released, before - resident())
    """
)


def test_trimming_gives_freed_pages_below_the_heaps_top_back() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _TRIM_PROGRAM],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    released, returned = done.stdout.split()
    assert released == "True"
    assert int(returned) > 150 * 2**20
