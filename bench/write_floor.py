#!/usr/bin/env python3
"""The page-cache write floor: writes BYTES bytes into OUT/data the way a fast builder can (the
file's blocks allocated first with fallocate, then 256 KiB pwrite calls from one reused buffer), and
nothing else: no reading, no conversion. bench_build.py runs it with the byte count of mobius's
output, so its time is what writing that output alone costs on this machine.

    python3 bench/write_floor.py OUT BYTES
"""

import os
import sys
from pathlib import Path

CHUNK = 256 << 10  # as mobius writes (src/package/writer.cpp, kWriteBytes)


def main() -> int:
    out, total = Path(sys.argv[1]), int(sys.argv[2])
    out.mkdir(parents=True)
    fd = os.open(out / "data", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.posix_fallocate(fd, 0, total)
        buf = memoryview(bytes(range(256)) * (CHUNK // 256))
        for off in range(0, total, CHUNK):
            n = min(CHUNK, total - off)
            done = 0
            while done < n:
                done += os.pwrite(fd, buf[done:n], off + done)
    finally:
        os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
