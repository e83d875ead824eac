"""The sandbox layout, staged in the tool's own scratch folder.

```
<stage>/tests/                 a mirror of the task's tests folder
<stage>/tests/.ng/run_verifier.py   the runner (and nemo_gym/verifiers, vendored)
<stage>/app/                   a mirror of the workspace
<stage>/logs/verifier/         the reward folder, emptied before every run
<stage>/inputs/                a wrapped plain-text response, explain output
```

The user's files are only ever *read*: mirrors are private copies (never
hard links: a write through a link would change the original). A mirror is
updated incrementally: files whose size and mtime match what was copied last
time are left alone, so a re-run on an unchanged 10k-file workspace costs a
walk of stats, not a copy. After each run the mirror is checked again and
anything the verifier changed, added or deleted is repaired on the next sync.
"""

from __future__ import annotations

import _thread
import errno
import json
import os
import shutil
import stat
from pathlib import Path

from verifier_tui.engine.record import field, record
from verifier_tui.runner_source import runner_path

# Names never copied into a mirror: bytecode caches would only be stale.
_SKIP_NAMES = {"__pycache__"}
# Copy buffer for the sparse-aware copy.
_CHUNK = 1 << 20
# What a stage holds; anything else in it was left there by a verifier.
_STAGE_FOLDERS = {"tests", "app", "logs", "inputs"}


@record
class _Copied:
    """What we know of one mirrored entry: the source's stat when copied and
    the copy's stat right after, to notice changes on either side."""

    kind: str  # "file", "dir", "link"
    src_sig: tuple
    dst_sig: tuple


def _sig(st: os.stat_result) -> tuple:
    return (st.st_size, st.st_mtime_ns, st.st_mode)


def _dst_sig(st: os.stat_result) -> tuple:
    # ctime changes on any write, chmod or rename: the verifier cannot hide a change.
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)


class Mirror:
    """A private, incrementally updated copy of a folder."""

    def __init__(self, source: Path, target: Path, keep: frozenset[str] = frozenset()) -> None:
        self.source = source
        self.target = target
        self.keep = keep  # relative paths in the target that belong to the stager, not the source
        self.index: dict[str, _Copied] = {}
        self.notes: list[str] = []
        self.files_copied = 0

    def sync(self) -> None:
        """Make the target equal to the source (repairing what a run changed)."""
        self.notes = []
        self.files_copied = 0
        # A verifier may have replaced its workspace (or the tests folder) by a
        # link to another folder: syncing through it would delete and write
        # there. Make it a real folder of ours again first.
        _real_dir(self.target)
        seen: set[str] = set()
        self._sync_dir(self.source, self.target, "", seen)
        for rel in [r for r in self.index if r not in seen]:
            del self.index[rel]

    def _kept(self, rel: str) -> bool:
        return rel in self.keep or any(k.startswith(rel + "/") for k in self.keep)

    def _sync_dir(self, src: Path, dst: Path, prefix: str, seen: set[str]) -> None:
        try:
            src_entries = {e.name: e for e in os.scandir(src)}
        except OSError as exc:
            self.notes.append(f"could not read {src}: {exc.strerror or exc}")
            src_entries = {}
        try:
            dst_entries = {e.name: e for e in os.scandir(dst)}
        except OSError:
            dst_entries = {}
        for name, dentry in dst_entries.items():
            rel = prefix + name
            if self._kept(rel):
                continue
            if name not in src_entries or name in _SKIP_NAMES:
                _remove(Path(dentry.path))
                self.index.pop(rel, None)
        for name, sentry in src_entries.items():
            if name in _SKIP_NAMES:
                continue
            rel = prefix + name
            if rel in self.keep:
                continue
            seen.add(rel)
            self._sync_entry(sentry, dst / name, rel, dst_entries.get(name), seen)

    def _sync_entry(self, sentry: os.DirEntry, dst: Path, rel: str, dentry, seen: set[str]) -> None:
        try:
            sst = sentry.stat(follow_symlinks=False)
        except OSError as exc:
            self.notes.append(f"skipped {rel}: {exc.strerror or exc}")
            return
        known = self.index.get(rel)
        if stat.S_ISLNK(sst.st_mode):
            self._sync_link(Path(sentry.path), dst, rel, sst, known, dentry, seen)
            return
        if stat.S_ISDIR(sst.st_mode):
            if dentry is None or not dentry.is_dir(follow_symlinks=False):
                if dentry is not None:
                    _remove(dst)
                dst.mkdir()
            try:
                # before syncing into it: the verifier may have made it unreadable or read-only
                os.chmod(dst, stat.S_IMODE(sst.st_mode) | stat.S_IRWXU)
            except OSError:
                pass
            self.index[rel] = _Copied("dir", (), ())
            self._sync_dir(Path(sentry.path), dst, rel + "/", seen)
            return
        if not stat.S_ISREG(sst.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(sst.st_mode) else "a socket" if stat.S_ISSOCK(sst.st_mode) else "a device"
            self.notes.append(f"skipped {rel}: it is {kind}, not a file")
            if dentry is not None:
                _remove(dst)
            return
        if known is not None and known.kind == "file" and known.src_sig == _sig(sst) and dentry is not None:
            try:
                if _dst_sig(dentry.stat(follow_symlinks=False)) == known.dst_sig:
                    return  # unchanged on both sides
            except OSError:
                pass
        self._copy_file(Path(sentry.path), dst, rel, sst)

    def _copy_file(self, src: Path, dst: Path, rel: str, sst: os.stat_result) -> None:
        tmp = dst.with_name(f".{dst.name}.vtui-tmp")
        try:
            _copy_contents(src, tmp, sst)
            os.chmod(tmp, stat.S_IMODE(sst.st_mode) | stat.S_IRUSR | stat.S_IWUSR)
            os.utime(tmp, ns=(sst.st_atime_ns, sst.st_mtime_ns))
            if dst.is_dir() and not dst.is_symlink():
                _rmtree(dst)
            os.replace(tmp, dst)
        except OSError as exc:
            _remove(tmp)
            self.notes.append(f"could not copy {rel}: {exc.strerror or exc}")
            self.index.pop(rel, None)
            return
        self.files_copied += 1
        self.index[rel] = _Copied("file", _sig(sst), _dst_sig(os.lstat(dst)))

    def _sync_link(self, src: Path, dst: Path, rel: str, sst, known, dentry, seen: set[str]) -> None:
        """A link inside the source tree is recreated as a link; one that leads
        outside is copied as a file (so the verifier cannot write through it to
        the user's files), and a link to an outside folder or to nothing is
        skipped with a note."""
        target = os.readlink(src)
        resolved = Path(os.path.realpath(src))
        root = Path(os.path.realpath(self.source))
        inside = resolved == root or root in resolved.parents
        if inside and os.path.exists(src):
            if dentry is not None:
                try:
                    if os.readlink(dst) == target:
                        self.index[rel] = _Copied("link", _sig(sst), ())
                        return
                except OSError:
                    pass
                _remove(dst)
            rel_target = os.path.relpath(resolved, os.path.realpath(src.parent))
            os.symlink(rel_target, dst)
            self.index[rel] = _Copied("link", _sig(sst), ())
            return
        if resolved.is_file():
            self.notes.append(f"{rel} links outside the workspace ({target}): copied as a file")
            if dentry is not None and dentry.is_symlink():
                _remove(dst)
            try:
                real = os.stat(resolved)
            except OSError:
                return
            known_file = self.index.get(rel)
            if known_file is not None and known_file.src_sig == _sig(real) and dentry is not None:
                try:
                    if _dst_sig(dentry.stat(follow_symlinks=False)) == known_file.dst_sig:
                        return
                except OSError:
                    pass
            self._copy_file(resolved, dst, rel, real)
            return
        what = "a folder outside the workspace" if resolved.is_dir() else "nothing (a dangling link)"
        self.notes.append(f"skipped {rel}: it links to {what} ({target})")
        if dentry is not None:
            _remove(dst)
        seen.discard(rel)


def _copy_contents(src: Path, dst: Path, sst: os.stat_result) -> None:
    """Copy a regular file; a sparse file keeps its holes (a 100 GB sparse
    file must not be read byte by byte)."""
    sparse = sst.st_size > _CHUNK and sst.st_blocks * 512 < sst.st_size // 2
    if not sparse or not hasattr(os, "SEEK_DATA"):
        shutil.copyfile(src, dst, follow_symlinks=True)
        return
    fd_in = os.open(src, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        fd_out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            offset = 0
            while offset < sst.st_size:
                try:
                    data_at = os.lseek(fd_in, offset, os.SEEK_DATA)
                except OSError as exc:
                    if exc.errno == errno.ENXIO:  # only a hole remains
                        break
                    raise
                hole_at = os.lseek(fd_in, data_at, os.SEEK_HOLE)
                os.lseek(fd_in, data_at, os.SEEK_SET)
                os.lseek(fd_out, data_at, os.SEEK_SET)
                remaining = hole_at - data_at
                while remaining > 0:
                    chunk = os.read(fd_in, min(_CHUNK, remaining))
                    if not chunk:
                        break
                    os.write(fd_out, chunk)
                    remaining -= len(chunk)
                offset = hole_at
            os.ftruncate(fd_out, sst.st_size)
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


def _rmtree(path: Path) -> None:
    """Remove a folder of ours, even one the verifier made unreadable or
    read-only inside (we own it: take the permissions back). Links inside are
    removed as links, never followed."""
    shutil.rmtree(path, ignore_errors=True)
    if not os.path.lexists(path):
        return
    try:
        os.chmod(path, stat.S_IRWXU)
    except OSError:
        pass
    for folder, dirs, _files in os.walk(path):
        for name in dirs:
            child = os.path.join(folder, name)
            if not os.path.islink(child):
                try:
                    os.chmod(child, stat.S_IRWXU)
                except OSError:
                    pass
    shutil.rmtree(path, ignore_errors=True)


def _real_dir(path: Path) -> None:
    """Make ``path`` a real, writable folder of ours. A link, a file or anything
    else put in its place is removed (a link as a link: what it points to is
    never touched)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        path.mkdir(parents=True)
        return
    if not stat.S_ISDIR(st.st_mode):
        _remove(path)
        path.mkdir(parents=True)
    elif st.st_mode & stat.S_IRWXU != stat.S_IRWXU:
        os.chmod(path, stat.S_IMODE(st.st_mode) | stat.S_IRWXU)


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            _rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        try:
            os.chmod(path.parent, stat.S_IRWXU)
            path.unlink()
        except OSError:
            pass


# ---------------------------------------------------------------------------
# nemo_gym: ask the chosen interpreter, once, and remember the answer.

_PROBE = (
    "import importlib.machinery as m, json, os, sys\n"
    "s = m.PathFinder.find_spec('nemo_gym', sys.path)\n"
    "loc = list(s.submodule_search_locations or []) if s else []\n"
    "v = [os.path.join(p, 'verifiers') for p in loc if os.path.isdir(os.path.join(p, 'verifiers'))]\n"
    "print(json.dumps({'verifiers': v[0] if v else None, 'path': [p for p in sys.path if p],"
    " 'version': '%d.%d.%d' % sys.version_info[:3], 'executable': sys.executable}))\n"
)
# The TUI stages from worker threads. _thread's lock, not threading's: importing
# threading costs ~0.5 ms of `run` start-up, which never starts a thread.
_probe_lock = _thread.allocate_lock()
_probe_memory: dict[str, dict] = {}


def _cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "verifier-tui" / "interpreters.json"


def _path_stamp(paths: list[str]) -> list:
    out = []
    for entry in paths:
        try:
            out.append(os.stat(entry).st_mtime_ns)
        except OSError:
            out.append(None)
    return out


@record(frozen=True)
class Interpreter:
    """What the chosen interpreter told us about itself."""

    command: str
    executable: str | None
    version: str | None
    nemo_gym_verifiers: Path | None
    error: str | None = None


def probe_interpreter(python: str, env: dict[str, str] | None = None) -> Interpreter:
    """Ask ``python`` where its ``nemo_gym/verifiers`` is (without importing
    nemo_gym). The answer is cached on disk, keyed by the interpreter and the
    modification times of its import path folders: installing or removing a
    package changes its site-packages folder, which asks again."""
    exe = shutil.which(python) if os.sep not in python else python
    if exe is None:
        return Interpreter(python, None, None, None, error=f"{python}: not found on PATH")
    # Keyed by the path as found, links unresolved: a virtual environment's
    # bin/python is a link to its base interpreter, but a different
    # interpreter (its own site-packages, maybe its own nemo_gym).
    key = os.path.abspath(exe)
    with _probe_lock:
        cached = _probe_memory.get(key) or _read_cache().get(key)
        if cached and cached.get("stamp") == _path_stamp(cached.get("path", [])):
            _probe_memory[key] = cached
            return _interpreter_from(python, cached)
        import subprocess  # only on a cache miss: it costs ~2 ms of `run` start-up

        try:
            done = subprocess.run(
                [exe, "-c", _PROBE], capture_output=True, text=True, timeout=30, env=env, stdin=subprocess.DEVNULL
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Interpreter(python, exe, None, None, error=f"{python}: {exc}")
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return Interpreter(python, exe, None, None, error=f"{python} failed to start: {last}")
        try:
            data = json.loads(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return Interpreter(python, exe, None, None, error=f"{python} gave an unreadable answer")
        data["stamp"] = _path_stamp(data.get("path", []))
        _probe_memory[key] = data
        _write_cache(key, data)
        return _interpreter_from(python, data)


def _interpreter_from(python: str, data: dict) -> Interpreter:
    verifiers = data.get("verifiers")
    return Interpreter(python, data.get("executable"), data.get("version"), Path(verifiers) if verifiers else None)


def _read_cache() -> dict:
    try:
        return json.loads(_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _write_cache(key: str, data: dict) -> None:
    path = _cache_file()
    try:
        cache = _read_cache()
        cache[key] = data
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(cache), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs a probe next time


# ---------------------------------------------------------------------------
# One staged layout.


@record
class Stage:
    """One staged sandbox layout, reused across re-runs of the same inputs."""

    root: Path
    tests: Mirror | None = None
    workspace: Mirror | None = None
    vendored_from: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def ng_dir(self) -> Path:
        return self.root / "tests" / ".ng"

    @property
    def app_dir(self) -> Path:
        return self.root / "app"

    @property
    def reward_dir(self) -> Path:
        return self.root / "logs" / "verifier"

    @property
    def inputs_dir(self) -> Path:
        return self.root / "inputs"

    def prepare(self, tests_source: Path, workspace: Path | None, nemo_gym_verifiers: Path | None) -> list[str]:
        """Bring the layout up to date for a run; returns notes for the user.

        The last run's verifier could reach this whole layout (``workspace.parent``
        is the stage): whatever it renamed, replaced by a link or left beside
        the four folders is put right first, and no link is ever followed."""
        notes: list[str] = []
        self._tidy_root()
        # The reward folder first: whatever happens next, no verdict of an
        # earlier run can be read as this one's.
        _real_dir(self.reward_dir.parent)
        if os.path.lexists(self.reward_dir):
            _remove(self.reward_dir)
        self.reward_dir.mkdir()
        if workspace is not None and not workspace.is_dir():
            raise StagingError(f"the workspace {workspace} is not there any more (deleted or moved?)")
        if self.tests is None or self.tests.source != tests_source:
            if os.path.lexists(self.tests_dir):
                _remove(self.tests_dir)
            self.tests = Mirror(
                tests_source, self.tests_dir, keep=frozenset({".ng/run_verifier.py", ".ng/nemo_gym", ".ng/verifier.py"})
            )
        self.tests.sync()
        notes += [f"tests: {n}" for n in self.tests.notes]
        _real_dir(self.ng_dir)
        self._place_runner()
        self._vendor(nemo_gym_verifiers)
        if workspace is None:
            self.workspace = None
            # An empty scratch workspace, emptied again if a verifier wrote into it.
            if os.path.lexists(self.app_dir):
                _remove(self.app_dir)
            self.app_dir.mkdir()
        else:
            if self.workspace is None or self.workspace.source != workspace:
                if os.path.lexists(self.app_dir):
                    _remove(self.app_dir)
                self.workspace = Mirror(workspace, self.app_dir)
            self.workspace.sync()
            notes += [f"workspace: {n}" for n in self.workspace.notes]
        _real_dir(self.inputs_dir)
        return notes

    def _tidy_root(self) -> None:
        _real_dir(self.root)
        for entry in os.scandir(self.root):
            if entry.name not in _STAGE_FOLDERS:
                _remove(Path(entry.path))

    def place_dataset_verifier(self, verifier: Path) -> None:
        shutil.copyfile(verifier, self.ng_dir / "verifier.py")

    def _place_runner(self) -> None:
        source = runner_path()
        target = self.ng_dir / "run_verifier.py"
        try:
            sst, tst = source.stat(), target.stat()
            if sst.st_size == tst.st_size and sst.st_mtime_ns == tst.st_mtime_ns:
                return
        except OSError:
            pass
        shutil.copy2(source, target)

    def _vendor(self, verifiers: Path | None) -> None:
        """Vendor nemo_gym/verifiers beside the runner, as the shim does."""
        package = self.ng_dir / "nemo_gym"
        if verifiers is None:
            if package.exists():
                shutil.rmtree(package, ignore_errors=True)
            self.vendored_from = None
            return
        if self.vendored_from == verifiers and package.is_dir():
            return
        shutil.rmtree(package, ignore_errors=True)
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("", encoding="utf-8")
        shutil.copytree(verifiers, package / "verifiers", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        self.vendored_from = verifiers


def _private_folder(prefix: str) -> Path:
    """A new folder only we can enter, in the temporary folder: what
    ``tempfile.mkdtemp`` does (TMPDIR, TEMP or TMP, else /tmp, /var/tmp,
    /usr/tmp), without importing tempfile and the random module it brings,
    which `verifier-tui run` would pay for at every start."""
    bases = [os.environ[name] for name in ("TMPDIR", "TEMP", "TMP") if os.environ.get(name)]
    bases += ["/tmp", "/var/tmp", "/usr/tmp"]
    last: OSError | None = None
    for base in bases:
        for _attempt in range(100):
            path = os.path.join(os.path.abspath(base), prefix + os.urandom(6).hex())
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                continue
            except OSError as exc:  # not there, not writable: the next candidate
                last = exc
                break
            return Path(path)
    raise last or FileExistsError(f"no unused name for a folder starting with {prefix!r}")


class StagingError(Exception):
    """The layout cannot be staged (the chosen workspace is gone): the run
    does not start, and this says why."""


class Scratch:
    """The tool's private scratch folder: one per session, removed on close."""

    def __init__(self) -> None:
        self.root = _private_folder("verifier-tui-")
        self._count = 0

    def new_stage(self) -> Stage:
        self._count += 1
        root = self.root / f"stage-{self._count}"
        root.mkdir()
        return Stage(root)

    def close(self) -> None:
        _rmtree(self.root)
