#!/usr/bin/env python3
"""Where a machine's CPU goes during a run: for SECONDS, the CPU time of every process, summed
by program name (each postly service, all of PostgreSQL's processes, nginx's, tansu, wrk; a
process started meanwhile counts from its start), printed in cores. Usage: cpu_shares.py SECONDS"""
import collections
import os
import sys
import time


def cpu_by_process():
    """{pid: (program name, CPU ticks so far)}"""
    processes = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                head, tail = f.read().rsplit(")", 1)
        except OSError:  # gone meanwhile
            continue
        fields = tail.split()
        processes[pid] = (head.split("(", 1)[1], int(fields[11]) + int(fields[12]))
    return processes


seconds = float(sys.argv[1])
before = cpu_by_process()
time.sleep(seconds)
ticks, shares = os.sysconf("SC_CLK_TCK"), collections.Counter()
for pid, (name, used) in cpu_by_process().items():
    # Kernel threads change their names with their work: summed under "kernel".
    program = "kernel" if name.startswith("kworker") else name
    shares[program] += (used - before.get(pid, (name, 0))[1]) / ticks / seconds
busy = sorted(((share, name) for name, share in shares.items() if share >= 0.01), reverse=True)
print("CPU, cores: " + ", ".join(f"{name} {share:.2f}" for share, name in busy)
      + f" (of {os.cpu_count()}, {sum(shares.values()):.2f} in all)")
