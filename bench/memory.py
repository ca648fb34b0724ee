"""Resident memory of a process, from /proc (Linux): now, and the peak since the last
reset. Resetting the peak (`clear_refs` 5) lets one run report the peak of each phase."""

from __future__ import annotations

from pathlib import Path

PROC = Path("/proc")


def _field(name: str, pid: int | str) -> float | None:
    """A `VmRSS:   123456 kB` line of /proc/<pid>/status, in MB."""
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith(name + ":"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def rss_mb(pid: int | str = "self") -> float | None:
    return _field("VmRSS", pid)


def peak_mb(pid: int | str = "self") -> float | None:
    """The peak resident size since the process started or since `reset_peak()`."""
    return _field("VmHWM", pid)


def reset_peak(pid: int | str = "self") -> bool:
    """Start a new peak from the current size; False where the kernel does not allow it."""
    try:
        (PROC / str(pid) / "clear_refs").write_text("5")
    except OSError:
        return False
    return True
