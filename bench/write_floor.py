#!/usr/bin/env python3
"""The write floor: writes BYTES bytes into OUT/data the way mobius writes its data files
(src/package/writer.cpp DataWriter): the file's blocks allocated first with fallocate, 256 KiB
pwrite calls from one reused buffer, the disk writes started every 64 MiB (sync_file_range,
SYNC_FILE_RANGE_WRITE) and the file synced (fsync) before it is closed, and nothing else: no
reading, no conversion. bench_build.py runs it with the byte count of mobius's output, so its time
is what writing that output alone, as durably, costs on this machine.

    python3 bench/write_floor.py OUT BYTES
"""

import ctypes
import os
import sys
from pathlib import Path

CHUNK = 256 << 10  # as mobius writes (src/package/writer.cpp, kWriteBytes)
WRITEBACK = 64 << 20  # kWritebackBytes there
SYNC_FILE_RANGE_WRITE = 2  # <fcntl.h>

libc = ctypes.CDLL(None, use_errno=True)
libc.sync_file_range.argtypes = [ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_uint]


def main() -> int:
    out, total = Path(sys.argv[1]), int(sys.argv[2])
    out.mkdir(parents=True)
    fd = os.open(out / "data", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.posix_fallocate(fd, 0, total)
        buf = memoryview(bytes(range(256)) * (CHUNK // 256))
        unstarted = 0
        for off in range(0, total, CHUNK):
            n = min(CHUNK, total - off)
            done = 0
            while done < n:
                done += os.pwrite(fd, buf[done:n], off + done)
            unstarted += n
            if unstarted >= WRITEBACK:
                libc.sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE)
                unstarted = 0
        os.fsync(fd)
    finally:
        os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
