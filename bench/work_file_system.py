"""The file system a path is on, as bench/bench.py records it and
bench/file_churn.py prints it."""

import os
import subprocess


def work_file_system(path):
    """{"type", "source"} of the file system `path` is on, and, for ext4,
    "journal": whether it has one; None when findmnt cannot tell. ext4
    without a journal skips, at every file creation, each free inode of the
    group freed in the last minute (six while its block is dirty:
    fs/ext4/ialloc.c, find_inode_bit), so what runner's per-job files cost
    there depends on what was deleted before."""
    r = subprocess.run(["findmnt", "-n", "-o", "FSTYPE,SOURCE", "-T", path],
                       capture_output=True, text=True)
    # A path under a file system mounted twice is listed once per mount.
    fields = r.stdout.split("\n")[0].split()
    if r.returncode != 0 or len(fields) != 2:
        return None
    kind, source = fields
    found = {"type": kind, "source": source}
    if kind == "ext4":
        try:
            with open(f"/sys/fs/ext4/{os.path.basename(source)}/journal_task") as f:
                found["journal"] = f.read().strip() != "<none>"
        except OSError:
            pass
    return found
