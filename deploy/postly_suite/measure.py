"""Figures from a run: percentiles, and a process's CPU time and memory read from /proc.

    python3 -m postly_suite.measure SECONDS
prints where the machine's CPU goes for SECONDS: the CPU time of every process, summed by
program name (each postly service, all of PostgreSQL's processes, nginx's, tansu, wrk; a
process started meanwhile counts from its start), in cores.
"""
import collections
import json
import os
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def wrk_result(text):
    """The figures a bench's Lua script prints after wrk's own (its `BENCH_RESULT {json}`
    line: requests, duration_us, p50_us, p99_us, errors), or None when there is none."""
    line = next((line for line in text.splitlines() if line.startswith("BENCH_RESULT ")), None)
    return json.loads(line[len("BENCH_RESULT "):]) if line else None


def program_and_ticks(pid):
    """(program name, CPU ticks so far, user and system) of a process."""
    with open(f"/proc/{pid}/stat") as f:
        head, tail = f.read().rsplit(")", 1)
    fields = tail.split()
    return head.split("(", 1)[1], int(fields[11]) + int(fields[12])


def with_children(parent):
    """A process and its children (PostgreSQL's postmaster and its backends, nginx's master and
    its workers)."""
    def parent_of(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:  # gone meanwhile
            return None
    return [parent, *(int(pid) for pid in os.listdir("/proc") if pid.isdigit() and parent_of(pid) == parent)]


def process_sample(pid):
    """(CPU seconds so far, resident MiB) of a process."""
    _, ticks = program_and_ticks(pid)
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return ticks / TICKS, rss / 1024


def cpu_ticks(pids):
    """CPU ticks so far of the processes that are still there among `pids`, summed."""
    total = 0
    for pid in pids:
        try:
            total += program_and_ticks(pid)[1]
        except OSError:  # gone meanwhile
            continue
    return total


def cpu_by_process():
    """{pid: (program name, CPU ticks so far)} of every process."""
    processes = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            processes[pid] = program_and_ticks(pid)
        except OSError:  # gone meanwhile
            continue
    return processes


def cpu_seconds_by_program(before, after):
    """CPU seconds each program used between two `cpu_by_process()` samples."""
    used = collections.Counter()
    for pid, (name, ticks) in after.items():
        # Kernel threads change their names with their work: summed under "kernel".
        program = "kernel" if name.startswith("kworker") else name
        used[program] += (ticks - before.get(pid, (name, 0))[1]) / TICKS
    return used


def cpu_shares(seconds):
    """The line of where the CPU went during the next `seconds`, in cores by program."""
    before = cpu_by_process()
    time.sleep(seconds)
    used = cpu_seconds_by_program(before, cpu_by_process())
    shares = {name: seconds_used / seconds for name, seconds_used in used.items()}
    busy = sorted(((share, name) for name, share in shares.items() if share >= 0.01), reverse=True)
    return ("CPU, cores: " + ", ".join(f"{name} {share:.2f}" for share, name in busy)
            + f" (of {os.cpu_count()}, {sum(shares.values()):.2f} in all)")


if __name__ == "__main__":
    print(cpu_shares(float(sys.argv[1])))
