"""The tool run as an ordinary user with an ordinary PATH, as most users run it.

Every check of containment once ran as root, whose PATH has ``/usr/sbin``;
Debian's default PATH for anyone else has not, and the sandbox was quietly
lost for them. Where the suite runs as root, :func:`ordinary_user` drops to
``nobody`` (``setpriv``) with Debian's PATH and a home of its own, running
this same verifier-tui from this interpreter's site-packages under the
system's Python of the same version (root's own interpreter may live where
``nobody`` cannot reach, ``/root/.pyenv``). Run by an ordinary user, the
suite runs the tool as it is, with that PATH.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from subprocess import CompletedProcess

import pytest

#: Debian's PATH for an ordinary user (/etc/profile): no /usr/sbin, no /sbin.
DEBIAN_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games"
NOBODY = 65534


class OrdinaryUser:
    """An ordinary user's folder (under ``/tmp``, theirs) and a way to run verifier-tui as them."""

    def __init__(self, root: Path, python: str, drop: list[str], pythonpath: str) -> None:
        self.root = root
        self.home = root / "home"
        self.python = python  # the user's python3, on their PATH
        self._drop = drop
        self._pythonpath = pythonpath

    def env(self, **more: str) -> dict[str, str]:
        env = {
            "PATH": DEBIAN_PATH,
            "HOME": str(self.home),
            "USER": "nobody" if self._drop else os.environ.get("USER", "user"),
            "LANG": "C.UTF-8",
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "TMPDIR": str(self.root / "tmp"),
        }
        if self._pythonpath:
            env["PYTHONPATH"] = self._pythonpath
        return env | more

    def own(self, path: Path) -> Path:
        """``path`` (made under :attr:`root`) given to the user."""
        if self._drop:
            for folder, _dirs, files in os.walk(path):
                for name in [folder, *(os.path.join(folder, f) for f in files)]:
                    os.chown(name, NOBODY, NOBODY, follow_symlinks=False)
        return path

    def run(
        self, *args: object, env: dict[str, str] | None = None, timeout: float = 120, around: tuple[str, ...] = ()
    ) -> CompletedProcess:
        """``verifier-tui ARGS`` as the user, from their home; inside ``around``
        (a command of root's that runs the rest, as :meth:`with_tun`'s) if given."""
        return self._run(["-m", "verifier_tui", *map(str, args)], env, timeout, around)

    def run_python(self, code: str, *args: object, timeout: float = 120) -> CompletedProcess:
        """``python -c CODE ARGS`` as the user, from their home: the engine
        itself, where what it does depends on who runs it (a folder it cannot open)."""
        return self._run(["-c", code, *map(str, args)], None, timeout)

    def with_tun(self) -> tuple[str, ...]:
        """What :meth:`run` runs inside (``around``) for the user to open
        ``/dev/net/tun``, as slirp4netns must; or a skip saying why not. Where
        the suite runs as root and the machine's node is root's alone (0600,
        Debian's default is 0666), a node of 0666 is bound over it in a mount
        namespace of the run's own: the machine's stays as it is."""
        around: tuple[str, ...] = ()
        if self._drop:
            node = self.root / "tun"
            os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(10, 200))
            os.chmod(node, 0o666)  # past the umask
            bind = 'mount --bind "$0" /dev/net/tun && exec "$@"'
            around = ("unshare", "--mount", "--propagation", "private", "sh", "-c", bind, str(node))
        opened = self._run(["-c", "import os; os.close(os.open('/dev/net/tun', os.O_RDWR))"], None, 60, around)
        if opened.returncode != 0:
            pytest.skip(f"/dev/net/tun cannot be opened by an ordinary user here: {opened.stderr.strip()[-200:]}")
        return around

    def _run(
        self, argv: list[str], env: dict[str, str] | None, timeout: float, around: tuple[str, ...] = ()
    ) -> CompletedProcess:
        """This interpreter's ``ARGV`` as the user, from their home, the user's files theirs first."""
        self.own(self.root)
        return subprocess.run(
            [*around, *self._drop, self.python, *argv],
            env=env or self.env(),
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )


@pytest.fixture
def ordinary_user():
    root = Path(tempfile.mkdtemp(prefix="vtui-user-", dir="/tmp"))
    os.chmod(root, 0o755)
    for sub in ("home", "tmp"):
        (root / sub).mkdir(mode=0o700)
    try:
        if os.geteuid() != 0:
            yield OrdinaryUser(root, sys.executable, [], "")
            return
        version = f"{sys.version_info[0]}.{sys.version_info[1]}"
        python = shutil.which(f"python{version}", path="/usr/bin:/bin")
        setpriv = shutil.which("setpriv", path="/usr/bin:/bin")
        if python is None or setpriv is None:
            pytest.skip(f"no system python{version} or setpriv to run the tool as an ordinary user")
        # This interpreter's import path less its own standard library: the
        # site-packages (and what their .pth files add, an editable install's folder).
        base = (sys.base_prefix, sys.base_exec_prefix)
        found = [p for p in sys.path if p and os.path.isdir(p) and not p.startswith(base)]
        user = OrdinaryUser(
            root,
            python,
            [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"],
            os.pathsep.join(dict.fromkeys(found)),
        )
        reach = user.run("--version")
        if reach.returncode != 0:
            pytest.skip(f"this verifier-tui cannot be run as nobody from here: {reach.stderr.strip()[-200:]}")
        yield user
    finally:
        shutil.rmtree(root, ignore_errors=True)
