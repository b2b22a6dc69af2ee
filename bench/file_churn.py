"""What runner's files cost per job in a directory: for each job, the queue
lock is created and removed, the queue's new text is written to a new file
that replaces the old one (freeing its inode), and the job's log is created.
Prints the microseconds per job for each block of jobs, and the file system.

    python3 bench/file_churn.py DIRECTORY [JOBS] [BLOCK]

On ext4 without a journal, a new file skips every free inode of its group
that was freed in the last minute (six, while its block of the inode table
is dirty), one lookup each (fs/ext4/ialloc.c, find_inode_bit): what a job
costs there depends on what was deleted before. Run it twice in a row to
see it."""

import os
import shutil
import sys
import tempfile
import time

from work_file_system import work_file_system


def churn(directory, jobs, block):
    logs = os.path.join(directory, "logs")
    os.makedirs(logs)
    queue, lock, new = (os.path.join(directory, name) for name in ("q", "q.lock", ".q.tmp"))
    with open(queue, "w") as f:
        f.write("x")
    costs = []
    for first in range(0, jobs, block):
        start = time.perf_counter()
        for job in range(first, min(jobs, first + block)):
            os.close(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, b"x")
            os.close(fd)
            os.rename(new, queue)
            os.unlink(lock)
            os.close(os.open(os.path.join(logs, f"{job}.log"),
                             os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
        costs.append(1e6 * (time.perf_counter() - start) / (min(jobs, first + block) - first))
    return costs


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 6000
    block = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    found = work_file_system(sys.argv[1]) or {"type": "?", "source": "?"}
    directory = tempfile.mkdtemp(prefix="file-churn.", dir=sys.argv[1])
    try:
        costs = churn(directory, jobs, block)
    finally:
        shutil.rmtree(directory)
    print(f"{found['type']} {found['source']}: µs per job, per {block} jobs: "
          + " ".join(f"{cost:.0f}" for cost in costs))


if __name__ == "__main__":
    main()
