"""Linux's ``/proc``, read the one way the engine reads it: every read is
bounded, and a process that is gone (or not ours) is an empty answer, never
an error. Where there is no ``/proc`` (macOS) every answer is empty. A
process's command line is shown the one way too (:func:`shown_command`), on
one line as a shell would take it back.

(The view's init lists its strays itself, in ``sh``: see
engine/sandbox/isolation.py.)
"""

from __future__ import annotations

import os
import re

ARGS_BYTES = 1 << 23
"""How much of a command line or an environment is read: more than the
kernel lets them hold under the usual 8 MiB stack limit (a quarter of it)."""

_SMALL = 1 << 16  # stat, status, a task's children: a few hundred bytes


def pids() -> list[int]:
    """The processes this process can see."""
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def read(pid: int | str, name: str, limit: int = _SMALL) -> bytes | None:
    """At most ``limit`` bytes of ``/proc/PID/NAME``; None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/{name}", "rb") as handle:
            return handle.read(limit)
    except OSError:
        return None


def stat(pid: int | str) -> list[bytes] | None:
    """``/proc/PID/stat``'s fields after the command name (whose parentheses
    may hold anything): the state first, then the parent, the group, ... so
    ``stat(pid)[1]`` is the parent's pid. None where it cannot be read."""
    raw = read(pid, "stat")
    if raw is None or b")" not in raw:
        return None
    return raw.rsplit(b")", 1)[1].split()


def status_field(pid: int | str, field: str) -> str | None:
    """The value of ``/proc/PID/status``'s line ``FIELD:`` (``Umask``, ``SigCgt``...)."""
    return status_fields(pid, (field,)).get(field)


def status_fields(pid: int | str, fields: tuple[str, ...]) -> dict[str, str]:
    """The values of ``/proc/PID/status``'s lines ``FIELD:`` of ``fields`` found, in one read."""
    out: dict[str, str] = {}
    raw = read(pid, "status")
    for line in (raw or b"").decode("ascii", errors="replace").splitlines():
        name, _, value = line.partition(":")
        if name in fields and name not in out:
            out[name] = value.strip()
    return out


def machine_cpus() -> int:
    """The CPUs this machine gives this process, and so its runs: those it may
    run on (``taskset``, a cpuset), not all the machine has. A run's quota is
    time on them, its affinity some of them, and ``-j`` runs as many side by
    side: all count them here, so none says more than another."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def is_over(pid: int) -> bool:
    """Whether ``pid`` is gone or a zombie (over, not yet reaped)."""
    fields = stat(pid)
    return not fields or fields[0] in (b"Z", b"X")


def has_own_root(pid: int) -> bool:
    """Whether ``pid``'s root is no longer this machine's: a view's init once
    bwrap has made the view (until then it is still this machine's). Not told
    by its command line, which the run's user may rewrite (``/proc/1/mem``);
    no process without capabilities can change its root."""
    try:
        machine, root = os.stat("/"), os.stat(f"/proc/{pid}/root/")
    except OSError:
        return False
    return (root.st_dev, root.st_ino) != (machine.st_dev, machine.st_ino)


def children(pid: int) -> set[int]:
    """The direct children of ``pid`` (``/proc/PID/task/*/children``)."""
    found: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        raw = read(pid, f"task/{task}/children", 1 << 20)  # over 100,000 pids
        try:
            found.update(int(child) for child in (raw or b"").split())
        except ValueError:
            continue
    return found


def descendants(pid: int) -> set[int]:
    """``pid``'s descendants (a process whose parent died is found under its
    new parent: the PID namespace's init, in the view)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children(todo.pop()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes(pids: set[int]) -> int:
    """What ``pids`` hold resident together, counting a shared page once per
    process (``statm``): never less than :func:`memory_bytes` gives, for a
    read of a few bytes each."""
    total = 0
    for pid in pids:
        try:
            total += int((read(pid, "statm") or b"").split()[1]) * _PAGE
        except (IndexError, ValueError):
            continue
    return total


#: A thread's kernel stack: the kernel's THREAD_SIZE, 16 KB on x86-64 and arm64.
KERNEL_STACK_BYTES = 16 * 1024


def kernel_bytes(pids: set[int]) -> dict[int, int]:
    """The kernel memory of each process that a memory cgroup is charged for
    and no resident set shows: its page tables (``status``' ``VmPTE``: a page
    mapped 60,000 times 2 MB apart takes 235 MB of them, and 4 KB of resident
    set) and a kernel stack for each of its threads (``Threads``: 12,000
    threads idle in 64 KB stacks hold about 190 MB of them, beside 200 MB
    resident)."""
    out: dict[int, int] = {}
    for pid in pids:
        fields = status_fields(pid, ("VmPTE", "Threads"))
        tables = fields.get("VmPTE", "").split()[:1]  # "1234 kB"
        threads = fields.get("Threads", "")
        size = (int(tables[0]) * 1024 if tables and tables[0].isdigit() else 0) + (
            int(threads) * KERNEL_STACK_BYTES if threads.isdigit() else 0
        )
        if fields:
            out[pid] = size
    return out


def memfd_bytes(pids: set[int], *, whole: bool = False) -> dict[int, int]:
    """What each process holds in memory files (``memfd_create``) it keeps
    open, beyond what their mappings count in :func:`memory_bytes`: a memory
    cgroup charges every page of such a file (shmem), and a process's
    resident set shows only the pages it mapped and touched. Each file counts
    once, for its first holder. ``whole``: each file's every page, mapped or
    not, with no walk of the mappings (a process may map one 60,000 times)."""
    files: dict[int, tuple[int, int]] = {}  # inode: (holder, bytes)
    for pid in sorted(pids):
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            try:
                if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("/memfd:"):
                    continue
                st = os.stat(f"/proc/{pid}/fd/{name}")
            except OSError:
                continue
            files.setdefault(st.st_ino, (pid, st.st_blocks * 512))
    if not files:
        return {}
    mapped = {} if whole else _mapped_bytes(pids, set(files))
    out: dict[int, int] = {}
    for inode, (pid, size) in files.items():
        beyond = size - mapped.get(inode, 0)
        if beyond > 0:
            out[pid] = out.get(pid, 0) + beyond
    return out


def _mapped_bytes(pids: set[int], inodes: set[int]) -> dict[int, int]:
    """The proportional size of each of ``inodes``'s mappings, summed over
    ``pids`` (``smaps``' ``Pss``), read only where ``maps`` names one."""
    out: dict[int, int] = {}
    for pid in pids:
        maps = read(pid, "maps", 1 << 22) or b""
        if not any(b" %d " % inode in maps for inode in inodes):
            continue
        current = None
        for line in (read(pid, "smaps", 1 << 26) or b"").split(b"\n"):
            words = line.split()
            if len(words) >= 5 and not words[0].endswith(b":"):  # a mapping's first line
                current = int(words[4]) if words[4].isdigit() and int(words[4]) in inodes else None
            elif current is not None and words[:1] == [b"Pss:"]:
                out[current] = out.get(current, 0) + int(words[1]) * 1024
    return out


def memory_bytes(pids: set[int]) -> dict[int, int]:
    """Each process's share of the memory a memory cgroup would charge for
    it: its anonymous and shared memory (``smaps_rollup``'s ``Pss_Anon`` and
    ``Pss_Shmem``, so a page two processes share counts half to each, and
    ``mmap(-1, MAP_SHARED)`` counts at all), and what of it is swapped out.
    Where ``smaps_rollup`` has no such lines (before Linux 5.9), the resident
    memory less what is shared with files (``statm``)."""
    out: dict[int, int] = {}
    for pid in pids:
        raw = read(pid, "smaps_rollup")
        if raw is None:
            continue
        fields = {}
        for line in raw.split(b"\n")[1:]:
            name, _, rest = line.partition(b":")
            words = rest.split()
            if words and words[0].isdigit():
                fields[name] = int(words[0]) * 1024
        if b"Pss_Anon" in fields:
            out[pid] = fields[b"Pss_Anon"] + fields.get(b"Pss_Shmem", 0) + fields.get(b"SwapPss", 0)
            continue
        try:
            statm = (read(pid, "statm") or b"").split()
            out[pid] = (int(statm[1]) - int(statm[2])) * _PAGE
        except (IndexError, ValueError):
            continue
    return out


CMDLINE_BYTES = 1024
"""How much of a command line is read to show it: enough for the line a
stray is cut to (engine/sandbox/strays.py; the view's init reads as
much, engine/sandbox/isolation.py)."""


def command_line(pid: int) -> str:
    """A process's command line as :func:`shown_command` shows it (``pid N`` when it cannot be read)."""
    return shown_command(read(pid, "cmdline", CMDLINE_BYTES) or b"", pid)


def shown_command(raw: bytes, pid: int) -> str:
    """A command line (``/proc/PID/cmdline``'s bytes: words ended by NUL) on
    one line, as a shell would take it back: a word with spaces or quotes
    quoted, one with newlines, other control characters, bidi controls or
    bytes that are not UTF-8 written as ``$'...'`` with visible escapes
    (``python3 -c $'import os\\nwhile 1: ...'``). ``pid N`` for an empty
    one (a kernel thread, a process gone meanwhile)."""
    words = raw.split(b"\0")
    if words and not words[-1]:
        words.pop()  # the NUL that ends the last word
    if not words:
        return f"pid {pid}"
    return " ".join(shell_word(word.decode("utf-8", errors="surrogateescape")) for word in words)


_PLAIN = r"[\w@%+=:,./-]+"
# C0 and C1 controls, DEL, the bidi controls (they reorder what surrounds
# them), and the bytes that were not UTF-8 (as surrogateescape keeps them).
_ESCAPED = "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\udc80-\udcff]"  # compiled at first use
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", "'": "\\'"}


def shell_word(text: str) -> str:
    """One word as a shell takes it back, on one line and harmless to a
    terminal (quoted, or ``$'...'`` with visible escapes: see :func:`shown_command`)."""
    if re.fullmatch(_PLAIN, text):
        return text
    if not re.search(_ESCAPED, text):
        return "'" + text.replace("'", "'\\''") + "'"
    return "$'" + "".join(_NAMED.get(ch) or (_escape(ch) if re.match(_ESCAPED, ch) else ch) for ch in text) + "'"


def _escape(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"
