"""The hostile tour: what a verifier (or the agent's code a trial's test.sh
runs) tried against the user's machine, and what it gets now. The run must
see what a container would and nothing of the user's machine, and nothing a
task says may switch that off. Each test names the attack it repeats."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers.commands import TOOL, no_traceback, run_tool
from tests.helpers.processes import answering, bwrap_probes_that_fail, in_a_cgroup, wait_none_with
from tests.helpers.tasks import PY, make_task, nest


def run_json(env, *args) -> dict:
    done = run_tool(env, "run", "--json", *args, "--python", PY)
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


#: Tries each of its arguments' paths and says what it found: ``path: read N`` or ``path: Error``.
PROBE_FILES = """\
    import os, sys

    def verify(workspace):
        for path in {paths!r}:
            try:
                if os.path.isdir(path):
                    print(path + ":", "listed", sorted(os.listdir(path)))
                else:
                    with open(path, "rb") as handle:
                        print(path + ":", "read", len(handle.read()))
            except OSError as exc:
                print(path + ":", type(exc).__name__)
        print("/:", sorted(os.listdir("/")))
        return 1.0
"""


def said(stdout: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in stdout.splitlines() if ": " in line)


# ---------------------------------------------------------------------------
# 0. Switched off for most users: an ordinary user with Debian's PATH


def test_an_ordinary_user_with_debians_path_gets_the_sandboxs_view(ordinary_user):
    """``pivot_root`` lives in /usr/sbin, which an ordinary user's PATH lacks:
    every run fell back to the copy and the header said "no namespaces here"."""
    secret = ordinary_user.home / ".ssh" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("PRIVATE KEY")
    task = make_task(
        ordinary_user.root / "tasks" / "t",
        PROBE_FILES.format(paths=[str(secret), str(ordinary_user.home)]),
        cases={"only": {}},
    )
    done = ordinary_user.run("run", "--json", task)
    data = json.loads(done.stdout)
    assert data["sandbox"] == "namespace", data["sandbox_words"]
    assert data["rewards"] == {"reward": 1.0}, data["stderr"]
    seen = said(data["stdout"])
    assert seen[str(secret)] == "FileNotFoundError"
    assert seen[str(ordinary_user.home)] == "listed []"  # the home is an empty folder of the run's own


# ---------------------------------------------------------------------------
# 1. Switched off by the task


ESCAPES = """\
    import os, pathlib, socket, subprocess, sys

    def verify(workspace):
        for target in {targets!r}:
            try:
                pathlib.Path(target).write_text("pwned")
                print("wrote", target)
            except OSError as exc:
                print("refused", target, type(exc).__name__)
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", {token!r}], start_new_session=True)
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=2)
            print("network reached")
        except OSError:
            print("no network")
        print("workspace", workspace, sorted(os.listdir(workspace)))
        return 1.0
"""


@pytest.mark.parametrize("how", ["a workspace path this machine lacks", "a PATH of the task's"])
def test_nothing_the_task_says_turns_the_sandbox_off(tmp_path, env, namespace, listener, how):
    """A test.sh passing ``--workspace /srv/agentws``, or ``[verifier] env =
    { PATH = ... }``, made the view's set-up fail, and the run went on
    unconfined: it wrote the user's files, left a ``setsid`` process behind
    and reached the network under no-network."""
    token = f"vtui-stay-{os.getpid()}-{time.monotonic_ns()}"
    mine = tmp_path / "users-file.txt"
    mine.write_text("mine")
    own = tmp_path / "t" / "tests" / "verifier.py"
    toml = 'version = "1.0"\n[verifier]\nnetwork_mode = "no-network"\n'
    if how == "a PATH of the task's":
        toml += '[verifier.env]\nPATH = "/opt/venv/bin"\n'
    task = make_task(
        tmp_path / "t",
        ESCAPES.format(targets=[str(mine), str(own)], token=token, port=listener),
        toml=toml,
        cases={"only": {"a.txt": "a"}},
    )
    if how == "a workspace path this machine lacks":
        shim = (task / "tests" / "test.sh").read_text().replace("--workspace /app", "--workspace /srv/agentws")
        (task / "tests" / "test.sh").write_text(shim)
    source = own.read_text()
    data = run_json(env, task)
    assert data["sandbox"] == "namespace"
    assert data["rewards"] == {"reward": 1.0}, data["stderr"]
    lines = data["stdout"].splitlines()
    assert all(line.startswith("refused") for line in lines[:2]), lines
    assert mine.read_text() == "mine" and own.read_text() == source
    assert "no network" in lines
    where = "/srv/agentws" if how.startswith("a workspace") else "/app"
    assert data["limits"]["workspace"] == where
    assert any(token in stray for stray in data["strays"])  # listed, and ended with the namespace
    assert wait_none_with(token) == []


def test_a_loader_variable_of_the_tasks_never_runs_on_this_machine(tmp_path, env, namespace):
    """``[verifier] env = { LD_PRELOAD = ... }`` reached the shell and bwrap
    that build the view: the task's library ran on this machine, as the user,
    before any namespace existed. glibc's ``libmemusage.so`` shows it: loaded,
    it creates the file ``MEMUSAGE_OUTPUT`` names, which only a process on
    this machine's side can create (the view has no such folder)."""
    library = next(Path("/usr/lib").glob("*/libmemusage.so"), None) or next(Path("/lib").glob("*/libmemusage.so"), None)
    if library is None:
        pytest.skip("glibc's libmemusage.so is not installed here")
    trace = tmp_path / "host-side.dat"
    toml = f'version = "1.0"\n[verifier.env]\nLD_PRELOAD = "{library}"\nMEMUSAGE_OUTPUT = "{trace}"\n'
    task = make_task(tmp_path / "t", PROBE_FILES.format(paths=[]), toml=toml, cases={"only": {}})
    data = run_json(env, task)
    assert data["sandbox"] == "namespace" and data["rewards"] == {"reward": 1.0}, data["stderr"]
    assert not trace.exists()


@pytest.mark.parametrize(
    "home",
    [
        *("/proc/verifier-tui-home", "/dev/../proc/x", "/usr/x", "/dev/verifier-tui-home", "/dev/shm/x", "/sys/x"),
        *("//proc/x", "//dev/x", "//usr/x", "//sys/x"),
    ],
)
def test_a_home_the_view_cannot_make_is_a_variable_only(tmp_path, env, namespace, home):
    """``[verifier] env = { HOME = "/proc/x" }``: the view made the run's HOME
    folder wherever the variable said, so the run could not start ("bwrap:
    Can't mkdir /proc/x"). Such a HOME is now a variable only, as it is in a
    container whose image has no such folder. Under ``/dev`` (the view's
    tmpfs) and ``/sys`` the folder was made: a container mounts its own
    ``/dev`` and ``/sys`` over whatever its image held there, so no HOME a task
    sets is a folder there either. A HOME beginning ``//`` (which a path's
    normal form keeps) escaped the rule: made under ``/dev``, "bwrap: Can't
    mkdir //proc/x" under ``/proc``."""
    toml = f'version = "1.0"\n[verifier.env]\nHOME = "{home}"\n'
    task = make_task(tmp_path / "t", HOME_PROBE, toml=toml, cases={"only": {}})
    data = run_json(env, task)
    assert data["rewards"] == {"reward": 1.0}, (data["outcome_words"], data["stderr"])
    assert data["stdout"].startswith(f"{home} False"), data["stdout"]


HOME_PROBE = """\
    import os

    def verify(workspace):
        home = os.environ["HOME"]
        there = os.path.isdir(home)
        try:
            os.mkdir(os.path.join(home, ".cache"))
            written = "written"
        except OSError as exc:
            written = exc.strerror
        print(home, there, written)
        return 1.0
"""


def test_a_home_the_task_sets_is_an_empty_writable_folder_whoever_runs_it(ordinary_user):
    """``HOME = "/root"`` (Harbor's images run the verifier as root, whose home
    is there): run by root it was made, being root's own HOME, run by anyone
    else it was a variable only, and a verifier writing ``~/.cache`` failed."""
    toml = 'version = "1.0"\n[verifier.env]\nHOME = "/root"\n'
    task = make_task(ordinary_user.root / "tasks" / "t", HOME_PROBE, toml=toml, cases={"only": {}})
    data = json.loads(ordinary_user.run("run", "--json", task).stdout)
    assert data["stdout"] == "/root True written\n", (data["stdout"], data["notices"])


def test_a_workspace_path_the_view_cannot_make_is_one_line(tmp_path, env, namespace):
    task = make_task(tmp_path / "t", cases={"only": {}})
    shim = (task / "tests" / "test.sh").read_text().replace("--workspace /app", "--workspace /etc/hostname")
    (task / "tests" / "test.sh").write_text(shim)
    done = run_tool(env, "run", task, "--python", PY)
    assert done.returncode == 2
    line = next(line for line in done.stdout.splitlines() if line.startswith("could not start"))
    assert "--workspace /etc/hostname, inside this machine's read-only /etc" in line


@pytest.mark.parametrize(
    "where",
    ["/etc", "/tests", "/logs/verifier", "/logs", "/proc/self", "/.verifier-tui", "/dev"]
    # //etc is /etc to Linux and bwrap, but the check kept it apart (normpath keeps a leading //)
    + ["//etc", "//tests", "//proc", "//usr", "///logs/verifier"],
)
def test_a_workspace_path_on_a_folder_the_view_needs_is_one_line(tmp_path, env, namespace, where):
    """A test.sh passing ``--workspace /etc`` (or /tests, /logs/verifier, a
    path in /proc, ..., however many slashes lead it): the workspace was bound
    over the view's own folder, or the view's folder over the workspace,
    without a word (/etc held the workspace's files; /tests hid the workspace
    the verifier was told of)."""
    task = make_task(tmp_path / "t", cases={"only": {"a.txt": "a"}})
    shim = (task / "tests" / "test.sh").read_text().replace("--workspace /app", f"--workspace {where}")
    (task / "tests" / "test.sh").write_text(shim)
    done = run_tool(env, "run", task, "--python", PY)
    assert done.returncode == 2, done.stdout + done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("could not start"))
    assert f"tests/test.sh passes --workspace /{where.lstrip('/')}," in line
    assert "a folder the sandbox needs" in line


# ---------------------------------------------------------------------------
# 3. More than a container shows


def test_the_view_holds_nothing_of_the_users_home_or_the_machines_other_folders(tmp_path, env, namespace):
    home = tmp_path / "home"
    secrets = [".ssh/id_rsa", ".aws/credentials", ".bash_history", ".npmrc"]
    for rel in secrets:
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text("secret")
    paths = [str(home / rel) for rel in secrets] + ["/etc/shadow", "/var/tmp", "/run", "/mnt", "/srv", str(home)]
    task = make_task(tmp_path / "t", PROBE_FILES.format(paths=paths), cases={"only": {}})
    data = run_json(dict(env, HOME=str(home)), task)
    assert data["rewards"] == {"reward": 1.0}, data["stderr"]
    seen = said(data["stdout"])
    for rel in secrets:
        assert seen[str(home / rel)] == "FileNotFoundError"
    assert seen[str(home)] == "listed []"  # $HOME is there, empty: a container's /root
    assert seen["/etc/shadow"] in ("PermissionError", "FileNotFoundError")  # even to root
    for folder in ("/var/tmp", "/run", "/mnt", "/srv"):
        assert seen[folder] == "FileNotFoundError", folder
    top = set(eval(seen["/"]))
    assert {"app", "tests", "logs", "tmp", "proc", "dev", "usr", "etc"} <= top
    assert not top & {"var", "run", "mnt", "srv", "media", "boot", "opt", "sys"}


KEYRING = """\
    import ctypes, os, platform

    ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
    libc = ctypes.CDLL(None, use_errno=True)

    def verify(workspace):
        added = libc.syscall(ADD_KEY, b"user", b"planted-by-the-run", b"x", 1, -4)  # the user's keyring
        print("add_key:", added, os.strerror(ctypes.get_errno()))
        found = libc.syscall(KEYCTL, 0, -3, 0)  # KEYCTL_GET_KEYRING_ID of the session keyring
        print("keyctl:", found, os.strerror(ctypes.get_errno()))
        print("/proc/keys:", repr(open("/proc/keys").read()))
        return 1.0
"""


def test_a_run_of_roots_cannot_write_this_machines_kernel_settings(tmp_path, env, namespace):
    """Run by root, the view's user is this machine's root (uid 0 maps to 0),
    and a sysctl file asks only that: the run wrote ``/proc/sys/kernel/core_pattern``
    (a ``|program`` there runs as this machine's root at the next crash, outside
    every namespace) and could write ``/proc/bus/pci``. Docker keeps ``/proc/sys``,
    ``/proc/bus``, ``/proc/fs`` and ``/proc/irq`` read-only; so does the view. The
    test writes back the value it read, so the machine is left as it was."""
    if os.geteuid() != 0:
        pytest.skip("only root's run is this machine's root; an ordinary user's may not write these")
    task = make_task(
        tmp_path / "t",
        """\
        import os

        def verify(workspace):
            pattern = "/proc/sys/kernel/core_pattern"
            with open(pattern) as handle:
                value = handle.read()
            try:
                with open(pattern, "w") as handle:
                    handle.write(value)
                print(pattern, "written")
            except OSError as exc:
                print(pattern, "refused:", exc.strerror)
            files = [os.path.join(top, name) for top, _, names in os.walk("/proc/bus") for name in names]
            writable = [path for path in files if os.stat(path).st_mode & 0o200]  # a PCI device's config space
            for path in ["/proc/sys/vm/drop_caches", *writable[:1]]:
                try:
                    os.close(os.open(path, os.O_WRONLY))  # opened only: nothing is written
                    print(path, "opened for writing")
                except OSError as exc:
                    print(path, "refused:", exc.strerror)
            return 1.0
    """,
        cases={"only": {}},
    )
    data = run_json(env, task)
    assert data["rewards"] == {"reward": 1.0}, data["stderr"]
    lines = data["stdout"].splitlines()
    assert lines[0] == "/proc/sys/kernel/core_pattern refused: Read-only file system", lines
    assert not any("opened for writing" in line for line in lines), lines


def test_the_kernel_keyring_is_not_the_runs_to_read_or_write(tmp_path, env, namespace):
    """bwrap gives the run no session keyring of its own: it read the user's
    (Kerberos tickets and the like), wrote the user's keyring (a key that
    outlived the run) and listed the user's keys in /proc/keys. Docker's
    default seccomp profile refuses these calls and masks /proc/keys."""
    import platform

    if platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip("the test knows the keyring's calls on x86_64 and aarch64")
    task = make_task(tmp_path / "t", KEYRING, cases={"only": {}})
    data = run_json(env, task)
    assert data["rewards"] == {"reward": 1.0}, data["stderr"]
    seen = said(data["stdout"])
    assert seen["add_key"] == "-1 Operation not permitted"
    assert seen["keyctl"] == "-1 Operation not permitted"
    assert seen["/proc/keys"] == "''"


#: What Docker masks of /proc: moby's daemon/pkg/oci/defaults.go, ``defaultLinuxMaskedPaths``, at
#: commit 23f2c12c2adc85f48f1d7ba9b275a6f6239eb879 (/proc/interrupts since v28.0.2, GHSA-6fw5-f8r9-fgfm).
#: Copied, not read from isolation.PROC_MASKED: a name missing there would be missing here too.
DOCKER_MASKED_PROC = (
    "/proc/acpi",
    "/proc/asound",
    "/proc/interrupts",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/sched_debug",
    "/proc/scsi",
    "/proc/timer_list",
    "/proc/timer_stats",
)


def test_what_docker_masks_of_proc_shows_the_run_nothing(tmp_path, env, namespace):
    """A later tour, as root: the view's root read ``/proc/timer_list``
    (root's alone: this machine's timers) and listed ``/proc/acpi``, which a
    Docker container sees empty; a later review: the run read
    ``/proc/interrupts`` (each CPU's interrupt counts, a side channel Docker
    masks since v28.0.2)."""
    here = [path for path in DOCKER_MASKED_PROC if os.path.exists(path)]
    if not here:
        pytest.skip("this kernel has none of the files Docker masks")
    task = make_task(tmp_path / "t", PROBE_FILES.format(paths=here), cases={"only": {}})
    data = run_json(env, task)
    assert data["rewards"] == {"reward": 1.0}, data["stderr"]
    seen = said(data["stdout"])
    for path in here:
        assert seen[path] in ("read 0", "listed []", "PermissionError"), (path, seen[path])


# ---------------------------------------------------------------------------
# 4. Sockets of the user's machine


@pytest.fixture
def unix_listeners(tmp_path):
    """A UNIX socket that answers, in the user's home, in this machine's /tmp,
    and an abstract one: where an ssh agent, tmux, dbus or docker listen."""
    home = tmp_path / "home"
    home.mkdir()
    if len(os.fsencode(home / "agent.sock")) > 107:  # what AF_UNIX takes: nothing could connect to it
        pytest.skip("the temporary folder's path is too long for a UNIX socket's address")
    machine_tmp = Path(tempfile.mkdtemp(prefix="vtui-sock-", dir="/tmp"))
    abstract = f"\0vtui-{os.getpid()}-{time.monotonic_ns()}"
    addresses = [str(home / "agent.sock"), str(machine_tmp / "tmux-0"), abstract]
    servers = []
    for address in addresses:
        server = socket.socket(socket.AF_UNIX)
        server.bind(address)
        server.listen(4)
        servers.append(server)
    try:
        with answering(servers):
            yield home, addresses
    finally:
        shutil.rmtree(machine_tmp)


@pytest.mark.parametrize("toml", ["", '[verifier]\nnetwork_mode = "no-network"\n'])
def test_no_socket_of_the_machine_is_reachable(tmp_path, env, namespace, unix_listeners, toml):
    """Through the user's tmux socket a verifier ran ``tmux run-shell`` on
    the machine; docker.sock, dbus and agents were as close."""
    home, addresses = unix_listeners
    task = make_task(
        tmp_path / "t",
        f"""\
        import socket

        def verify(workspace):
            for address in {addresses!r}:
                try:
                    with socket.socket(socket.AF_UNIX) as client:
                        client.settimeout(2)
                        client.connect(address)
                        print(repr(address), "answered", client.recv(5))
                except OSError as exc:
                    print(repr(address), "no:", type(exc).__name__)
            return 1.0
    """,
        toml='version = "1.0"\n' + toml,
        cases={"only": {}},
    )
    data = run_json(dict(env, HOME=str(home)), task)
    assert data["rewards"] == {"reward": 1.0}, data["stderr"]
    assert "answered" not in data["stdout"], data["stdout"]
    assert data["stdout"].count(" no: ") == 3


def _venv_naming(root: Path, folder: str) -> Path:
    """A virtual environment whose ``.pth`` names ``folder``, as an editable install's does: its interpreter."""
    subprocess.run([PY, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    (site_packages,) = root.glob("lib/python3*/site-packages")
    (site_packages / "extra.pth").write_text(f"{folder}\n")
    return root / "bin" / "python"


@pytest.mark.parametrize("named", ["/tmp", "/run"])
def test_an_import_path_naming_a_folder_the_view_keeps_its_own_shows_nothing_of_it(
    tmp_path, env, namespace, unix_listeners, named
):
    """The chosen interpreter's import path is shown in the view, wherever it
    is: one whose ``.pth`` names ``/tmp`` (or ``/run``) bound this machine's
    over the view's own, and the run reached the user's tmux socket there
    (dbus, docker's). A folder that is or holds one the view keeps its own or
    leaves out (its ``/tmp``, ``/dev``, ``/proc``, ``/run``, the homes) is not
    shown; the interpreter's other folders are."""
    home, addresses = unix_listeners
    if not os.path.isdir(named):
        pytest.skip(f"this machine has no {named}")
    python = _venv_naming(tmp_path / "venv", named)
    task = make_task(
        tmp_path / "t",
        f"""\
        import os

        def verify(workspace):
            print(sorted(os.listdir("/tmp")), os.path.exists({addresses[1]!r}), os.path.exists("/run"))
            return 1.0
    """,
        cases={"only": {}},
    )
    done = run_tool(dict(env, HOME=str(home)), "run", "--json", task, "--python", python)
    data = json.loads(done.stdout)
    assert data["rewards"] == {"reward": 1.0}, data["stderr"]
    assert data["stdout"] == "[] False False\n", data["stdout"]


def _run_with_importable(
    tmp_path: Path, env: dict[str, str], folder: Path, server: socket.socket, address: Path, venv: Path | None = None
):
    """A run of an interpreter (its venv at ``venv``) whose import path names ``folder``, ``server`` answering
    meanwhile: its JSON. Its stdout says whether the view shows ``folder``, then whether a connect to
    ``address`` was answered."""
    python = _venv_naming(venv or tmp_path / "venv", str(folder))
    task = make_task(
        tmp_path / "t",
        f"""\
        import os, socket

        def verify(workspace):
            print(os.path.isdir({str(folder)!r}))
            with socket.socket(socket.AF_UNIX) as client:
                client.settimeout(2)
                try:
                    client.connect({str(address)!r})
                    print("answered", client.recv(5))
                except OSError as exc:
                    print("no:", type(exc).__name__)
            return 1.0
    """,
        cases={"only": {}},
    )
    with answering([server]):
        done = run_tool(env, "run", "--json", task, "--python", python)
    data = json.loads(done.stdout)
    assert data["rewards"] == {"reward": 1.0}, data["stderr"]
    return data


def _run_beside_a_socket(tmp_path: Path, env: dict[str, str], project: Path):
    """A run of a venv in ``project/.venv`` whose import path names ``project``, a server's socket in
    ``project`` answering meanwhile: its JSON (:func:`_run_with_importable`)."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(project / "dev.sock"))
    server.listen(4)
    return _run_with_importable(tmp_path, env, project, server, project / "dev.sock", project / ".venv")


@contextmanager
def _overlays(top: Path, layers: list[tuple[Path, str]]) -> Iterator[None]:
    """Each of ``layers`` (a mount point, its options: a relative layer is in ``top``) mounted as an overlay
    in turn, then unmounted, and ``top`` removed."""
    mounted: list[Path] = []
    try:
        for point, options in layers:
            subprocess.run(["mount", "-t", "overlay", "overlay", "-o", options, str(point)], check=True, cwd=top)
            mounted.append(point)
        yield
    finally:
        for point in reversed(mounted):
            subprocess.run(["umount", str(point)], check=True)
        shutil.rmtree(top)


@pytest.mark.parametrize("bound_as", ["the folder", "a link to it", "a name since renamed", "a name with a newline"])
def test_a_socket_in_a_folder_of_the_interpreters_import_path_is_not_reachable(tmp_path, env, namespace, bound_as):
    """An editable install's ``.pth`` put the user's project folder on the
    chosen interpreter's import path, so the view showed it, and a server's
    socket there (a dev database's, overmind's ``.overmind.sock``) answered
    the run: the view's own network namespace keeps out abstract sockets and
    the loopback, never a socket reached by its path. So did one the server
    bound through a link to the folder, one renamed since it was bound, and one
    whose name holds a newline: no listing of bound sockets names them as they are."""
    project = Path(tempfile.mkdtemp(prefix="vtui-proj-", dir="/tmp"))  # short: a socket's address is 107 bytes
    try:
        (project / "real").mkdir()
        (project / "link").symlink_to("real")
        name = "dev\n.sock" if bound_as == "a name with a newline" else "dev.sock"
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(project / ("link" if bound_as == "a link to it" else "real") / name))
        if bound_as == "a name since renamed":
            (project / "real" / name).rename(project / "real" / "db.sock")
            name = "db.sock"
        server.listen(4)
        data = _run_with_importable(tmp_path, env, project / "real", server, project / "real" / name)
        assert data["stdout"].startswith("True\nno: "), data["stdout"]  # the folder is shown, its socket is not
    finally:
        shutil.rmtree(project)


def test_a_folder_of_the_interpreters_import_path_past_a_page_of_overlay_options_is_bound_and_said(
    tmp_path, env, namespace
):
    """The kernel keeps a page of an overlay's mount options: over a folder of the interpreter's named
    by a path of ~4,000 characters bwrap's options were cut, and every run failed (or, a link where
    they were cut, showed another folder there). Such a folder is bound read-only, and said."""
    project = Path(tempfile.mkdtemp(prefix="vtui-long-", dir="/tmp"))
    try:
        folder = project.joinpath(*["d" * 200] * 20)
        folder.mkdir(parents=True)
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(project / "dev.sock"))
        server.listen(4)
        data = _run_with_importable(tmp_path, env, folder, server, project / "dev.sock")
        assert data["stdout"] == "True\nno: FileNotFoundError\n", data["stdout"]
        assert any(f"{folder} has a path longer than" in notice for notice in data["notices"]), data["notices"]
    finally:
        shutil.rmtree(project)


@pytest.mark.parametrize("length", [4_080, 4_090])
def test_a_folder_of_the_interpreters_import_path_near_path_max_is_left_out_and_said(tmp_path, env, namespace, length):
    """bwrap opens a bind's source as ``/oldroot`` and its path: from ~4,088 characters past PATH_MAX,
    and every run failed (``bwrap: Can't get type of source ...: File name too long``, a 4,000-character
    line). Such a folder is left out of the view, and a notice names it and says why."""
    project = Path(tempfile.mkdtemp(prefix="vtui-long-", dir="/tmp"))
    try:
        left = length - len(str(project)) - 1
        folder = project.joinpath(*["d" * 200] * (left // 201), "e" * (left % 201))
        folder.mkdir(parents=True)
        assert len(str(folder)) == length
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(project / "dev.sock"))
        server.listen(4)
        data = _run_with_importable(tmp_path, env, folder, server, project / "dev.sock")
        shown = length < 4_088
        assert data["stdout"] == f"{shown}\nno: FileNotFoundError\n", data["stdout"]
        left_out = [notice for notice in data["notices"] if "is left out of the view" in notice]
        if shown:
            assert not left_out, data["notices"]
        else:
            assert len(left_out) == 1 and len(left_out[0]) < 400, left_out
            assert str(folder)[:40] in left_out[0] and "PATH_MAX" in left_out[0], left_out
    finally:
        shutil.rmtree(project)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a folder takes root")
@pytest.mark.parametrize("mounted", ["data", ".venv"])
def test_a_folder_of_the_interpreters_import_path_holding_a_mount_is_bound_and_said(tmp_path, env, namespace, mounted):
    """The overlay that keeps a shown folder's sockets out cannot be laid over a folder holding a mount
    point in a user namespace (the kernel refuses it: EINVAL). Since fc669f53 such a folder was not shown,
    and with it the interpreter's own folder inside it: a venv on a volume mounted at the project's
    ``.venv`` (a devcontainer's), an editable install naming the project, failed every run (exit 127).
    Such a folder is bound read-only, as before, and the notices say a socket in it answers the run."""
    project = Path(tempfile.mkdtemp(prefix="vtui-proj-", dir="/tmp"))
    (project / mounted).mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(project / mounted)], check=True)
    try:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(project / "dev.sock"))
        server.listen(4)
        venv = project / ".venv" if mounted == ".venv" else None
        data = _run_with_importable(tmp_path, env, project, server, project / "dev.sock", venv)
        assert data["stdout"] == "True\nanswered b'hello'\n", data["stdout"]
        assert any(
            f"{project} holds a mount point ({project / mounted})" in notice and "socket" in notice
            for notice in data["notices"]
        ), data["notices"]
    finally:
        subprocess.run(["umount", str(project / mounted)], check=True)
        shutil.rmtree(project)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a folder takes root")
@pytest.mark.parametrize("lower", ["as it is", "through a link", "relative"])
def test_a_folder_of_the_interpreters_import_path_on_stacked_overlays_is_bound_and_said(
    tmp_path, env, namespace, lower
):
    """A folder on an overlay already stacked two deep cannot take the view's overlay over it (the kernel:
    maximum fs stacking depth exceeded), and every run failed with bwrap's line. A folder on an overlay whose
    lower layer is on an overlay, or may be (named through a link, as Docker's layers are, or relative, as
    Docker mounts them from the layers' folder), is bound read-only, and the notices say so."""
    top = Path(tempfile.mkdtemp(prefix="vtui-ovl-", dir="/tmp"))
    for name in ("l1/sub", "u1", "w1", "o1", "u2", "w2", "o2"):
        (top / name).mkdir(parents=True)
    (top / "link").symlink_to(top / "o1" / "sub")
    second = {"as it is": top / "o1" / "sub", "through a link": top / "link", "relative": Path("o1/sub")}[lower]
    layers = [
        (top / "o1", f"lowerdir={top / 'l1'},upperdir={top / 'u1'},workdir={top / 'w1'}"),
        (top / "o2", f"lowerdir={second},upperdir={top / 'u2'},workdir={top / 'w2'}"),
    ]
    project = top / "o2"
    with _overlays(top, layers):
        data = _run_beside_a_socket(tmp_path, env, project)
    assert data["stdout"] == "True\nanswered b'hello'\n", data["stdout"]
    # a relative layer cannot be told from here: the view's overlay is tried, and refused
    said = "where the kernel refused another (tried: Invalid argument)" if lower == "relative" else "stacked on another"
    assert any(f"{project} is on an overlay" in notice and said in notice for notice in data["notices"]), data[
        "notices"
    ]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting an overlay takes root")
def test_a_folder_of_the_interpreters_import_path_on_one_overlay_keeps_its_sockets_out(tmp_path, env, namespace):
    """A project on one overlay (a container's root, a devcontainer's /workspaces) was bound read-only as any
    folder on an overlay was, its socket answering the run, with a notice saying the kernel lays no overlay
    there; it does (two deep), and the view's overlay keeps the socket out."""
    top = Path(tempfile.mkdtemp(prefix="vtui-ovl1-", dir="/tmp"))
    for name in ("l1", "u1", "w1", "o1"):
        (top / name).mkdir(parents=True)
    point = top / "o1"
    with _overlays(top, [(point, f"lowerdir={top / 'l1'},upperdir={top / 'u1'},workdir={top / 'w1'}")]):
        data = _run_beside_a_socket(tmp_path, env, point)
    assert data["stdout"] == "True\nno: ConnectionRefusedError\n", data["stdout"]
    assert not any("overlay" in notice for notice in data["notices"]), data["notices"]


@contextmanager
def _overlay_whose_layers_are_gone(how: str) -> Iterator[Path]:
    """A folder on an overlay whose lower layer is not found here any more, as a container's root overlay's
    layers (the host's ``/var/lib/docker/...``) are not inside it: one overlay deep (``docker``, a container's
    root), or two (``stacked``: its lower layer is on an overlay, named through a link since removed)."""
    top = Path(tempfile.mkdtemp(prefix="vtui-gone-", dir="/tmp"))
    for name in ("l1/sub", "u1", "w1", "o1", "u2", "w2", "o2"):
        (top / name).mkdir(parents=True)
    (top / "link").symlink_to(top / "o1")
    layers = [(top / "o1", f"lowerdir={top / 'l1'},upperdir={top / 'u1'},workdir={top / 'w1'}")]
    if how == "stacked":
        layers.append((top / "o2", f"lowerdir={top / 'link' / 'sub'},upperdir={top / 'u2'},workdir={top / 'w2'}"))
    with _overlays(top, layers):
        (top / "l1").rename(top / "l1-moved")
        (top / "link").unlink()
        yield layers[-1][0]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting an overlay takes root")
def test_a_folder_on_an_overlay_whose_layers_are_not_found_here_keeps_its_sockets_out(tmp_path, env, namespace):
    """In a container whose root is an overlay (Docker's, a devcontainer's, a CI runner's), the layers its
    mount names are the host's, not found inside: every folder of the interpreter's the view showed there was
    bound read-only, a server's socket in it answering the run, with a notice that the kernel may lay no
    overlay, where it lays one. Whether it does is tried once per mount: the overlay is laid, no notice."""
    with _overlay_whose_layers_are_gone("docker") as point:
        data = _run_beside_a_socket(tmp_path, env, point)
    assert data["stdout"] == "True\nno: ConnectionRefusedError\n", data["stdout"]
    assert not any("overlay" in notice for notice in data["notices"]), data["notices"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting an overlay takes root")
def test_a_folder_on_stacked_overlays_whose_layers_are_not_found_here_is_bound_as_tried(tmp_path, env, namespace):
    """Where the layers cannot be told and the kernel does refuse the view's overlay (two deep already),
    the folder is bound read-only and the notice says the kernel refused it, in bwrap's words."""
    with _overlay_whose_layers_are_gone("stacked") as point:
        data = _run_beside_a_socket(tmp_path, env, point)
    assert data["stdout"] == "True\nanswered b'hello'\n", data["stdout"]
    assert any(
        f"{point} is on an overlay (mounted at {point}) where the kernel refused another" in notice
        and "Invalid argument" in notice
        and "socket" in notice
        for notice in data["notices"]
    ), data["notices"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting an overlay takes root")
def test_an_overlay_that_could_not_be_tried_binds_the_folder_and_says_so(tmp_path, env, namespace):
    """A try of the overlay that cannot be made (no process slot to spare, here) never stops the run: the
    folder is bound read-only, as where the kernel refuses the overlay, and the notice says why."""
    env = bwrap_probes_that_fail(env, tmp_path / "bin", probe="'--unshare-user --die-with-parent '*")
    with _overlay_whose_layers_are_gone("docker") as point:
        data = _run_beside_a_socket(tmp_path, env, point)
    assert data["stdout"] == "True\nanswered b'hello'\n", data["stdout"]
    assert any(
        f"{point} is on an overlay (mounted at {point}) whose layers cannot be told here, and another could "
        "not be tried there (bwrap: Creating new namespace failed: Resource temporarily unavailable)" in notice
        for notice in data["notices"]
    ), data["notices"]


def _cases_beside_a_socket(tmp_path: Path, env: dict[str, str], point: Path, cases: str, jobs: str) -> dict:
    """``test --json`` of a case for each letter of ``cases``, ``-j jobs``, with a venv in ``point/.venv``
    whose import path names ``point``, a server's socket in ``point`` answering meanwhile: a case passes
    where the socket is kept out."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(point / "dev.sock"))
    server.listen(4)
    python = _venv_naming(point / ".venv", str(point))
    task = make_task(
        tmp_path / "t",
        f"""\
        import socket

        def verify(workspace):
            with socket.socket(socket.AF_UNIX) as client:
                client.settimeout(2)
                return 0.0 if client.connect_ex({str(point / "dev.sock")!r}) == 0 else 1.0
    """,
        cases={name: {} for name in cases},
    )
    for name in cases:
        (task / "cases" / name / "expected.json").write_text('{"rewards": {"reward": 1.0}}')
    with answering([server]):
        done = run_tool(env, "test", "--json", task, "--python", python, "-j", jobs, timeout_s=300)
    return json.loads(done.stdout)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting an overlay takes root")
def test_the_overlay_is_tried_once_for_every_case_of_test(tmp_path, env, namespace):
    """``test``'s cases are contained side by side (a case's runner is started held while the one before it
    runs): each tried the overlay of its own at once, and where the second try failed, that case's folder
    was bound and its socket answered. The first try serves every case of the process."""
    env = bwrap_probes_that_fail(env, tmp_path / "bin", after=1, probe="'--unshare-user --die-with-parent '*")
    with _overlay_whose_layers_are_gone("docker") as point:
        data = _cases_beside_a_socket(tmp_path, env, point, "abcd", jobs="1")
    assert (data["passed"], data["failed"]) == (4, 0), [(case["case"], case["notices"]) for case in data["cases"]]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting an overlay takes root")
def test_a_try_of_the_overlay_that_does_not_answer_is_not_waited_for_by_every_case(tmp_path, env, namespace):
    """A try that did not answer was not remembered, and each case of ``test`` waited its 10 s in turn for a
    try of its own (3 cases, ``-j 2``: 31 s). As the sandbox's own probe, one that timed out is taken as
    timing out again for a moment: the cases waiting meanwhile bind the folder at once, and say so."""
    env = bwrap_probes_that_fail(
        env, tmp_path / "bin", probe="'--unshare-user --die-with-parent '*", fails="exec sleep 60"
    )
    with _overlay_whose_layers_are_gone("docker") as point:
        data = _cases_beside_a_socket(tmp_path, env, point, "abc", jobs="2")
    assert (tmp_path / "bin" / "probed").read_text().count("x") == 1
    for case in data["cases"]:
        assert any(
            "could not be tried there" in notice and "did not answer within 10 s" in notice
            for notice in case["notices"]
        ), case["notices"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting an overlay takes root")
def test_a_try_of_the_overlay_short_of_memory_is_not_taken_as_the_kernels_answer(tmp_path, env, namespace):
    """bwrap's "Can't make overlay mount ...: Cannot allocate memory" was kept as the kernel's answer for the
    mount: a moment short of memory bound the folder, its socket answering, for every later run of the
    process. A limit of the moment is a try that could not be made: that run binds, the next tries again."""
    said = "bwrap: Can't make overlay mount on /newroot/x with options lowerdir=/oldroot/x: Cannot allocate memory"
    probed = tmp_path / "bin" / "probed"
    fails = f'[ "$(wc -l < {probed})" -gt 1 ] || {{ echo "{said}" >&2; exit 1; }}'
    env = bwrap_probes_that_fail(env, tmp_path / "bin", probe="'--unshare-user --die-with-parent '*", fails=fails)
    with _overlay_whose_layers_are_gone("docker") as point:
        data = _cases_beside_a_socket(tmp_path, env, point, "abc", jobs="2")
    notices = [(case["case"], case["notices"]) for case in data["cases"]]
    assert (data["passed"], data["failed"]) == (2, 1), notices
    (failed,) = (case for case in data["cases"] if case["rewards"] != {"reward": 1.0})
    assert any("could not be tried there (Cannot allocate memory)" in notice for notice in failed["notices"]), notices


# ---------------------------------------------------------------------------
# 6. /tests is writable, as in Harbor's container


def test_a_trial_whose_verifier_keeps_a_cache_beside_itself_replays_as_harbor_scored_it(tmp_path, env, namespace):
    """A genuine trial scored 1.0 in Harbor and replayed as
    RewardFileNotFoundError (read-only file system), with advice to fix the verifier."""
    from tests.helpers.harbor import sandbox_trial

    task = make_task(
        tmp_path / "runs" / "tasks" / "cache",
        """\
        import json, pathlib

        def verify(workspace):
            cache = pathlib.Path(__file__).with_name("cache.json")
            cache.write_text(json.dumps({"seen": sorted(p.name for p in workspace.iterdir())}))
            return 1.0
    """,
        toml='version = "1.0"\nartifacts = ["/app"]\n',
    )
    trial = sandbox_trial(tmp_path / "runs" / "jobs" / "j", task, tmp_path, workspace={"a.txt": "a"}, capture=True)
    done = run_tool(env, "run", "--json", trial.path, "--python", PY, cwd=tmp_path)
    data = json.loads(done.stdout)
    assert data["same"] is True and data["local"]["rewards"] == {"reward": 1.0}, data["differences"]
    assert not (task / "tests" / "cache.json").exists()  # written in the run's /tests, never the task's


# ---------------------------------------------------------------------------
# 9. Limits as a container's


MEMORY = """\
    import mmap, os

    def verify(workspace):
        how = {how!r}
        written = 0
        chunk = b"x" * (1 << 20)
        try:
            if how == "shared anonymous memory":
                block = mmap.mmap(-1, 2 << 30, flags=mmap.MAP_SHARED)
                for offset in range(0, 2 << 30, 1 << 20):
                    block[offset : offset + (1 << 20)] = chunk
                    written += 1 << 20
            elif how.startswith("a memory file"):  # in no resident set: the fd holds it
                held = os.memfd_create("held")
                if how.endswith("one page mapped"):  # its mapping counts that page, not the file
                    os.ftruncate(held, 4096)
                    mapped = mmap.mmap(held, 4096)
                    mapped[0] = 1
                while written < 1 << 30:
                    os.write(held, chunk)
                    written += 1 << 20
            else:
                with open({place!r}, "wb") as handle:
                    while written < 1 << 30:
                        handle.write(chunk)
                        handle.flush()
                        written += 1 << 20
        except OSError as exc:
            print(type(exc).__name__, exc.errno)
        print("wrote MB", written >> 20)
        return 1.0 if written >= 1 << 30 else 0.0
"""


@pytest.mark.parametrize(
    ("how", "place"),
    [
        ("shared anonymous memory", None),
        ("a memory file held open", None),
        ("a memory file held open, one page mapped", None),
        ("/dev/shm", "/dev/shm/blob"),
        ("/tmp", "/tmp/blob"),
        ("/dev", "/dev/blob"),  # a later tour: bwrap's /dev is a tmpfs too, writable, uncounted
    ],
)
def test_memory_mb_counts_what_a_memory_cgroup_counts(tmp_path, env, namespace, how, place):
    """``memory_mb = 256`` stopped neither 2 GiB of shared anonymous memory
    nor 1 GiB written to /tmp or /dev/shm (each a tmpfs of half the machine):
    each scored 1.0."""
    task = make_task(
        tmp_path / "t",
        MEMORY.format(how=how, place=place),
        toml='version = "1.0"\n[environment]\nmemory_mb = 256\n',
        cases={"only": {}},
    )
    data = run_json(env, task)
    assert data["rewards"] != {"reward": 1.0}, data["stdout"]
    if how == "/dev/shm":  # Docker's 64 MB: full before the limit is near
        assert data["rewards"] == {"reward": 0.0} and "OSError 28" in data["stdout"], data["stdout"]
        assert int(data["stdout"].split("wrote MB ")[1]) <= 64
    else:  # past 256 MB the biggest process is killed, as the OOM killer would (or /tmp, 256 MB, is full)
        assert data["out_of_memory"] or "OSError 28" in data["stdout"], data["stdout"]


SYSV = """\
    import ctypes

    def verify(workspace):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        libc.shmget.argtypes = (ctypes.c_int, ctypes.c_size_t, ctypes.c_int)
        libc.shmat.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
        libc.shmdt.argtypes = (ctypes.c_void_p,)
        for n in range(16):  # 1 GiB in segments of 64 MiB, each detached once written: in no process
            segment = libc.shmget(0, 64 << 20, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
            address = libc.shmat(segment, None, 0)
            ctypes.memset(address, 1, 64 << 20)
            libc.shmdt(address)
        print("held 1 GiB")
        return 1.0
"""


def test_memory_mb_counts_system_v_segments_no_process_attached(tmp_path, env, namespace):
    """A later tour: 1 GiB in System V segments, written and then detached,
    is in no process's memory and scored 1.0 under ``memory_mb = 256``. A
    container's memory cgroup is charged for it, as a run's own is."""
    if not in_a_cgroup("memory"):
        pytest.skip("this user may make no memory cgroup here: the run's memory is measured (docs/sandbox.md)")
    task = make_task(tmp_path / "t", SYSV, toml='version = "1.0"\n[environment]\nmemory_mb = 256\n', cases={"only": {}})
    data = run_json(env, task)
    assert data["rewards"] is None and "held 1 GiB" not in data["stdout"], data["stdout"]
    assert data["out_of_memory"] and data["limits"]["cgroup"] == ["memory"]


def test_without_a_cgroup_an_ordinary_users_run_is_measured_and_bound(ordinary_user):
    """Where no cgroup can be made (an ordinary user on cgroup v1), the view's
    memory is measured and its biggest process killed past ``memory_mb``; the
    limits line says how each limit is applied, and what the measure misses:
    128 full unix socket pairs held 1 GB of buffers under ``memory_mb = 256``
    and scored 1.0 under "256 MB (measured, without a cgroup)"."""
    task = make_task(
        ordinary_user.root / "tasks" / "t",
        MEMORY.format(how="shared anonymous memory", place=None),
        toml='version = "1.0"\n[environment]\nmemory_mb = 256\ncpus = 1\n',
        cases={"only": {}},
    )
    done = ordinary_user.run("run", "--json", task)
    data = json.loads(done.stdout)
    assert data["sandbox"] == "namespace", data["sandbox_words"]
    applied = data["limits"]["cgroup"]
    assert data["rewards"] != {"reward": 1.0} and data["out_of_memory"], data["stdout"]
    if "memory" not in applied:
        assert "run_verifier.py" in data["out_of_memory"][0]
    text = ordinary_user.run("run", task).stdout
    limits = next(line for line in text.splitlines() if line.startswith("limits: "))
    measured = "(measured, without a cgroup: socket and pipe buffers not counted)"
    memory = "(a memory cgroup)" if "memory" in applied else measured
    cpus = "(a quota, as Docker's)" if "cpu" in applied else "(as affinity, not a quota)"
    assert f"256 MB {memory}" in limits and f"1 CPU {cpus}" in limits, limits


def run_measured(ordinary_user, source: str, counts: str) -> tuple[Path, dict]:
    """A task of one case whose verifier is ``source``, under ``memory_mb = 256``,
    and its ``run --json`` as the ordinary user; skipped where that user may make a
    memory cgroup, whose kernel then counts ``counts``."""
    task = make_task(
        ordinary_user.root / "tasks" / "t",
        source,
        toml='version = "1.0"\n[environment]\nmemory_mb = 256\n',
        cases={"only": {}},
    )
    data = json.loads(ordinary_user.run("run", "--json", task).stdout)
    if "memory" in data["limits"]["cgroup"]:
        pytest.skip(f"this user may make a memory cgroup: the kernel counts {counts}")
    return task, data


def test_without_a_cgroup_what_pipes_hold_is_said_not_counted(ordinary_user):
    """A later tour, as an ordinary user (no cgroup): four processes holding
    36,000 full pipes (about 290 MB of the kernel's memory, which a memory
    cgroup is charged for and no file of /proc counts) scored 1.0 under
    ``memory_mb = 256``, while the limits line said only socket buffers went
    uncounted."""
    task, data = run_measured(
        ordinary_user,
        """\
        import os, resource, time

        def verify(workspace):
            resource.setrlimit(resource.RLIMIT_NOFILE, (20000, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
            children = []
            for _ in range(4):
                read, write = os.pipe()
                if os.fork() == 0:
                    for _ in range(9000):
                        out = os.pipe()[1]
                        os.set_blocking(out, False)
                        try:
                            while True:
                                os.write(out, b"x" * 4096)
                        except BlockingIOError:
                            pass
                    os.write(write, b"full")
                    time.sleep(60)
                children.append(read)
            print("held", sum(len(os.read(read, 4)) for read in children) // 4 * 9000, "full pipes")
            return 1.0
    """,
        "what pipes hold",
    )
    if data["rewards"] == {"reward": 1.0}:  # not counted: said so
        text = ordinary_user.run("run", task).stdout
        limits = next(line for line in text.splitlines() if line.startswith("limits: "))
        assert "256 MB (measured, without a cgroup: socket and pipe buffers not counted)" in limits, limits


def test_a_run_that_renames_the_views_init_still_has_its_tmpfs_counted(ordinary_user):
    """Without a cgroup the tool found the view's init (whose root holds the
    run's tmpfs) by the name on its command line, which the run may rewrite:
    the init runs as the run's user, so ``/proc/1/mem`` is the run's to write.
    So renamed, 600 MB written to the view's ``/dev`` under ``memory_mb = 256``
    scored 1.0. The init is now the process whose root is no longer this machine's."""
    _task, data = run_measured(
        ordinary_user,
        """\
        def verify(workspace):
            with open("/proc/1/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            start, end = int(fields[45]), int(fields[46])  # its arguments' place in its memory
            with open("/proc/1/mem", "r+b", buffering=0) as memory:
                memory.seek(start)
                at = memory.read(end - start).index(b"verifier-tui-init")
                memory.seek(start + at)
                memory.write(b"x" * len("verifier-tui-init"))
            chunk = b"x" * (1 << 20)
            with open("/dev/blob", "wb") as handle:
                for _ in range(600):
                    handle.write(chunk)
                    handle.flush()
            print("wrote 600 MB")
            return 1.0
    """,
        "the run's tmpfs",
    )
    assert data["rewards"] != {"reward": 1.0} and data["out_of_memory"], (data["stdout"], data["stderr"])


def test_without_a_cgroup_the_page_tables_of_a_runs_processes_are_counted(ordinary_user):
    """A later review, as an ordinary user (no cgroup): four processes each
    mapping one page of a memory file 60,000 times, 2 MB apart, made about
    940 MB of page tables (which a memory cgroup is charged for, and no
    resident set shows) and scored 1.0 under ``memory_mb = 256``."""
    _task, data = run_measured(
        ordinary_user,
        """\
        import ctypes, mmap, os, time

        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]

        def hold(base):
            page = os.memfd_create("one")
            os.ftruncate(page, 4096)
            for i in range(60000):  # each mapping 2 MB from the last: a page table of its own
                address = libc.mmap(base + i * (2 << 20), 4096, mmap.PROT_READ, 0x01 | 0x100000, page, 0)
                if address in (None, ctypes.c_void_p(-1).value):
                    return
                ctypes.c_char.from_address(address).value

        def verify(workspace):
            answers = []
            for k in range(4):
                read, write = os.pipe()
                if os.fork() == 0:
                    hold(0x100000000000 + k * 0x10000000000)
                    os.write(write, b"x")
                    time.sleep(60)
                    os._exit(0)
                os.close(write)
                answers.append(read)
            held = sum(len(os.read(read, 1)) for read in answers)  # none from a process killed
            print("page tables held in", held, "processes")
            return 1.0 if held == 4 else 0.0
    """,
        "page tables",
    )
    assert data["rewards"] != {"reward": 1.0} and data["out_of_memory"], (data["stdout"], data["stderr"])


def test_without_a_cgroup_the_kernel_stacks_of_a_runs_threads_are_counted(ordinary_user):
    """A later tour, as an ordinary user (no cgroup): 12,000 threads idle in 64 KB
    stacks held 200 MB resident and about 190 MB of kernel stacks (16 KB each, which
    a memory cgroup is charged for and no resident set shows), and scored 1.0 under
    ``memory_mb = 256``, where the run as root, in a memory cgroup, was OOM-killed."""
    _task, data = run_measured(
        ordinary_user,
        """\
        import threading, time

        def verify(workspace):
            threading.stack_size(64 * 1024)
            for _ in range(12000):
                threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
            time.sleep(1)
            return 1.0
    """,
        "kernel stacks",
    )
    assert data["rewards"] != {"reward": 1.0} and data["out_of_memory"], (data["stdout"], data["stderr"])


@pytest.mark.parametrize("place", ["/tmp", "/dev/shm"])
def test_without_a_cgroup_the_kernels_records_of_a_runs_files_are_counted(ordinary_user, place):
    """A later tour: 600,000 empty folders in the view's 64 MB ``/dev/shm``
    use no block of the tmpfs, but about 600 MB of the kernel's memory (an
    inode and a name each), which a container's memory cgroup is charged
    for; measured without a cgroup, they scored 1.0 under ``memory_mb = 256``.
    A later review: in ``/tmp``, which is on a container's disk (where its
    memory cgroup reclaims those records), they score 1.0 in Harbor too, and
    were killed here."""
    _task, data = run_measured(
        ordinary_user,
        f"""\
        import os

        def verify(workspace):
            os.mkdir("{place}/d")
            for n in range(600_000):
                os.mkdir(f"{place}/d/{{n}}")
            print("made them all")
            return 1.0
    """,
        "the run's files",
    )
    if place == "/tmp":
        assert data["rewards"] == {"reward": 1.0} and not data["out_of_memory"], (data["stdout"], data["stderr"])
    else:
        assert data["rewards"] != {"reward": 1.0} and data["out_of_memory"], (data["stdout"], data["stderr"])


def test_storage_mb_is_the_size_of_tmp_and_how_cpus_is_applied_is_said(tmp_path, env, namespace):
    task = make_task(
        tmp_path / "t",
        MEMORY.format(how="/tmp", place="/tmp/blob"),
        toml='version = "1.0"\n[environment]\nstorage_mb = 32\ncpus = 1\n',
        cases={"only": {}},
    )
    data = run_json(env, task)
    assert "OSError 28" in data["stdout"] and int(data["stdout"].split("wrote MB ")[1]) <= 32, data["stdout"]
    text = run_tool(env, "run", task, "--python", PY).stdout
    limits = next(line for line in text.splitlines() if line.startswith("limits: "))
    cpus = "1 CPU (a quota, as Docker's)" if in_a_cgroup("cpu") else "1 CPU (as affinity, not a quota)"
    assert cpus in limits and "storage 32 MB (on /tmp only)" in limits


def test_a_bind_planted_in_the_cache_never_opens_the_view(tmp_path, env, namespace, private_cache):
    """A run in the copy sandbox can write the tool's cache: what the view
    binds of this machine, remembered there, is taken only as the tool
    would make it now."""
    from verifier_tui.engine import cache

    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("secret")
    key = f"uid {os.getuid()} groups {sorted(os.getgroups())}"
    os.environ["XDG_CACHE_HOME"] = str(private_cache)
    cache.store("views.json", {key: {"args": ["--ro-bind", str(home), str(home)], "at": time.time()}})
    task = make_task(tmp_path / "t", PROBE_FILES.format(paths=[str(home / ".ssh" / "id_rsa")]), cases={"only": {}})
    data = run_json(dict(env, HOME=str(home)), task)
    assert said(data["stdout"])[str(home / ".ssh" / "id_rsa")] == "FileNotFoundError", data["stdout"]


#: Run in the copy sandbox: every remembered interpreter made to import from
#: (so the view to show) ``{secret}``, with the stamp that makes the entry current.
POISON = """\
    import json, os

    where = {cache!r}
    with open(where) as handle:
        answers = json.load(handle)
    for answer in answers.values():
        answer["path"].append({secret!r})
        answer["stamp"] = [os.stat(p).st_mtime_ns if os.path.exists(p) else None for p in answer["path"]]
    with open(where, "w") as handle:
        json.dump(answers, handle)

    def verify(workspace):
        return 1.0
"""


@pytest.mark.parametrize("command", ["run", "explain"])
def test_what_a_copy_run_writes_in_the_cache_never_shapes_a_later_view(
    tmp_path, env, namespace, private_cache, command
):
    """A run in the copy sandbox (asked for) rewrote the remembered
    interpreter so that every later view showed ``~/.ssh``, and the runner's
    extras compiled so that every later run ran its code. What a run writes
    in the cache is thrown away once it is over, an ``explain``'s too (it
    imports the verifier)."""
    secret = tmp_path / "home" / ".ssh"
    secret.mkdir(parents=True)
    (secret / "id_rsa").write_text("secret")
    probe = make_task(tmp_path / "probe", PROBE_FILES.format(paths=[str(secret / "id_rsa")]), cases={"only": {}})
    first = run_json(env, probe)  # the interpreter's answer is remembered
    assert said(first["stdout"])[str(secret / "id_rsa")] == "FileNotFoundError"
    remembered = private_cache / "verifier-tui" / "interpreters-2.json"
    source = POISON.format(cache=str(remembered), secret=str(secret))
    poison = make_task(tmp_path / "poison", source, cases={"only": {}})
    done = run_tool(dict(env, VERIFIER_TUI_SANDBOX="copy"), command, "--json", poison, "--python", PY)
    assert json.loads(done.stdout)["sandbox" if command == "run" else "problems"] in ("copy", []), done.stdout
    assert not remembered.exists()
    later = run_json(env, probe)
    assert later["sandbox"] == "namespace"
    assert said(later["stdout"])[str(secret / "id_rsa")] == "FileNotFoundError", later["stdout"]


INTERFACES = """\
    def verify(workspace):
        with open("/proc/net/dev") as table:
            print(sorted(line.split(":")[0].strip() for line in table.readlines()[2:]))
        print(open("/etc/resolv.conf").read().split())
        return 1.0
"""


def test_a_public_task_gets_the_internet_through_slirp4netns_without_this_machines_loopback(tmp_path, namespace):
    from verifier_tui.engine.sandbox.network import RESOLVER, helper
    from verifier_tui.engine.session import Options, Session

    if helper() is None:
        pytest.skip("slirp4netns is not installed here")
    with Session(make_task(tmp_path / "t", INTERFACES, cases={"only": {}}), Options(python=PY)) as session:
        result = session.run()
    interfaces, resolver = result.stdout.text.splitlines()
    assert eval(interfaces) == ["lo", "tap0"], result.notices
    assert eval(resolver) == ["nameserver", RESOLVER]  # slirp4netns's resolver: this machine's is another loopback
    assert result.limits["network_given"] == "user"


FORKS_AND_RETURNS = """\
    import os, time
    def verify(workspace):
        with open("/proc/net/dev") as table:
            print(sorted(line.split(":")[0].strip() for line in table.readlines()[2:]))
        time.sleep(1.2)  # the view is being ended about when the helper's 5 s wait is up
        for _ in range(6000):
            if os.fork() == 0:
                time.sleep(30.4245)
                os._exit(0)
        return 1.0
"""


def test_a_network_given_is_not_said_lost_while_a_big_view_is_ended(tmp_path, namespace):
    """6,000 forks (about 1.5 s), then the view's end: still being torn down when the
    helper's 5 s wait was up, its init neither had its own root nor was a zombie, and
    the run that had tap0 was said to have had no network ("slirp4netns did not give
    the run a network within 5 s", ``network_given: "none"``, 4 runs of 4). The wait
    is for the helper's ready, once it came there is nothing to give up on."""
    from verifier_tui.engine.sandbox.network import helper
    from verifier_tui.engine.session import Options, Session

    if helper() is None:
        pytest.skip("slirp4netns is not installed here")
    with Session(
        make_task(tmp_path / "t", FORKS_AND_RETURNS, timeout=30, cases={"only": {}}), Options(python=PY)
    ) as session:
        result = session.run()
    assert result.outcome.name == "REWARD_WRITTEN", result.stderr.text
    assert eval(result.stdout.text.splitlines()[0]) == ["lo", "tap0"]
    assert not any("had no network" in n for n in result.notices), result.notices
    assert result.limits["network_given"] == "user"


@contextmanager
def network_helpers_seen() -> Iterator[dict[str, str]]:
    """For the block: what a network helper this test started (a descendant of
    this process, whoever it runs as) showed while it ran, looked at every
    50 ms (it confines itself a moment after it starts): its ``Seccomp`` field
    and the top folders of its root."""
    import threading

    from verifier_tui.engine.sandbox.network import HELPER

    seen: dict[str, str] = {}
    over = threading.Event()

    def ours(pid: str) -> bool:
        while pid not in ("0", "1"):
            with open(f"/proc/{pid}/stat") as handle:
                pid = handle.read().rsplit(")", 1)[1].split()[1]
            if pid == str(os.getpid()):
                return True
        return False

    def look() -> None:
        while not over.wait(0.05):
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{pid}/stat") as handle:
                        if HELPER not in handle.read().rsplit(")", 1)[0] or not ours(pid):
                            continue
                    with open(f"/proc/{pid}/status") as handle:
                        seccomp = dict(line.split(":\t", 1) for line in handle if ":\t" in line)["Seccomp"]
                    seen.update(seccomp=seccomp.strip(), root=" ".join(sorted(os.listdir(f"/proc/{pid}/root"))))
                except (OSError, IndexError, ValueError, KeyError):
                    continue

    looking = threading.Thread(target=look)
    looking.start()
    try:
        yield seen
    finally:
        over.set()
        looking.join()


def test_the_network_helper_sees_nothing_of_this_machine_and_runs_under_seccomp(tmp_path, namespace):
    """slirp4netns runs on this machine, as the user, and parses every packet
    the run sends (libslirp has had memory-safety flaws a packet could reach):
    it ran with the whole machine in view and every system call allowed, so a
    run that broke it held the user's files. It runs under a seccomp filter
    always, and, run by root, in a mount namespace of its own."""
    from verifier_tui.engine.sandbox.network import helper
    from verifier_tui.engine.session import Options, Session

    if helper() is None:
        pytest.skip("slirp4netns is not installed here")
    task = make_task(tmp_path / "t", SLEEPS)
    with network_helpers_seen() as seen, Session(task, Options(python=PY)) as session:
        result = session.run()
    assert result.limits["network_given"] == "user" and seen, result.notices
    assert seen["seccomp"] == "2", seen  # a filter in force
    if os.geteuid() == 0:
        assert not {"home", "usr", "tmp"} & set(seen["root"].split()), seen


SLEEPS = "import time\n\ndef verify(workspace):\n    time.sleep(3)\n    return 1.0\n"


def test_an_ordinary_users_network_helper_runs_under_seccomp(ordinary_user):
    """The helper is under a seccomp filter whoever runs the tool; only root's
    run was checked, and an ordinary user's helper starts another way (no
    ``--enable-sandbox``: slirp4netns#317, see the test below)."""
    from verifier_tui.engine.sandbox.network import helper

    if helper() is None:
        pytest.skip("slirp4netns is not installed here")
    around = ordinary_user.with_tun()
    task = make_task(ordinary_user.root / "tasks" / "t", SLEEPS, cases={"only": {}})
    with network_helpers_seen() as seen:
        done = ordinary_user.run("run", "--json", task, around=around)
    data = json.loads(done.stdout)
    assert data["limits"]["network_given"] == "user" and seen, data["notices"]
    assert seen["seccomp"] == "2", seen


def test_an_ordinary_users_public_run_has_its_network(ordinary_user):
    """slirp4netns 1.2.0 given ``--enable-sandbox`` by a user other than root
    fails (its sandbox joins no namespace under ``--netns-type=path``, then
    ``setegid(0)`` fails: rootless-containers/slirp4netns#317): every ordinary
    user's public run quietly had no network, wherever ``/dev/net/tun`` is
    theirs to open (Debian's is 0666)."""
    from verifier_tui.engine.sandbox.network import helper

    if helper() is None:
        pytest.skip("slirp4netns is not installed here")
    around = ordinary_user.with_tun()
    task = make_task(ordinary_user.root / "tasks" / "t", INTERFACES, cases={"only": {}})
    done = ordinary_user.run("run", "--json", task, around=around)
    data = json.loads(done.stdout)
    assert data["limits"]["network_given"] == "user", data["notices"]
    assert eval(data["stdout"].splitlines()[0]) == ["lo", "tap0"], data["notices"]


RENAMED_INIT_SLEEPS = """\
    import time

    def verify(workspace):
        with open("/proc/1/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])
        with open("/proc/1/mem", "r+b", buffering=0) as memory:
            memory.seek(start)
            at = memory.read(end - start).index(b"verifier-tui-init")
            memory.seek(start + at)
            memory.write(b"x" * len("verifier-tui-init"))
        time.sleep(6.5)
        with open("/proc/net/dev") as table:
            print(sorted(line.split(":")[0].strip() for line in table.readlines()[2:]))
        return 1.0
"""


def test_a_run_that_renames_its_init_keeps_its_network(tmp_path, namespace):
    """The helper's watchdog told a view still waiting for its network from one
    set up by the init's command line, which the run may rewrite: renamed, and
    5 s on, the run lost its network, told "slirp4netns did not give the run a
    network within 5 s". The view is known set up by its root, which no run can change."""
    from verifier_tui.engine.sandbox.network import helper
    from verifier_tui.engine.session import Options, Session

    if helper() is None:
        pytest.skip("slirp4netns is not installed here")
    with Session(make_task(tmp_path / "t", RENAMED_INIT_SLEEPS, cases={"only": {}}), Options(python=PY)) as session:
        result = session.run()
    assert result.limits["network_given"] == "user", result.notices
    assert eval(result.stdout.text.splitlines()[-1]) == ["lo", "tap0"], (result.stdout.text, result.stderr.text)


FAILING_HELPER = """\
#!/bin/sh
# slirp4netns 1.2.0's own words, parent's and child's interleaved, as it fails on setegid(0)
printf 'sent tapfd=8 for tap0\\nWARNING: Support for seccomp is experimental\\nreceived tapfd=8\\n' >&2
printf 'setegid(0)\\nparent failed\\nWARNING: Support for seccomp is experimental\\nStarting slirp\\n' >&2
printf '* MTU:             1500\\n* DNS:             10.0.2.3\\n' >&2
exit 1
"""


def test_a_network_helper_that_fails_is_said_to_by_its_cause_not_its_progress(tmp_path, namespace, monkeypatch):
    """The note said the helper's first line, "sent tapfd=8 for tap0", which is
    progress: the cause, "setegid(0)", came later among the parent's and the
    child's interleaved lines."""
    from verifier_tui.engine.sandbox import network
    from verifier_tui.engine.session import Options, Session

    fake = tmp_path / "slirp4netns"
    fake.write_text(FAILING_HELPER)
    fake.chmod(0o755)
    monkeypatch.setattr(network, "helper", lambda: str(fake))
    with Session(make_task(tmp_path / "t", INTERFACES, cases={"only": {}}), Options(python=PY)) as session:
        result = session.run()
    assert result.limits["network_given"] == "none"
    assert any("slirp4netns could not give the run a network (setegid(0))" in n for n in result.notices), result.notices


def test_a_network_helper_that_never_says_ready_is_ended_and_the_run_goes_on(tmp_path, namespace, monkeypatch):
    """A helper that neither says ready nor ends would hold the view for its whole
    timeout: past its wait it is ended, the run runs without a network and says so."""
    from verifier_tui.engine.sandbox import network
    from verifier_tui.engine.session import Options, Session

    fake = tmp_path / "slirp4netns"
    fake.write_text("#!/bin/sh\nexec sleep 60\n")
    fake.chmod(0o755)
    monkeypatch.setattr(network, "helper", lambda: str(fake))
    monkeypatch.setattr(network, "_WAIT_S", 0.5)
    with Session(make_task(tmp_path / "t", INTERFACES, cases={"only": {}}), Options(python=PY)) as session:
        result = session.run()
    assert eval(result.stdout.text.splitlines()[0]) == ["lo"]
    assert result.limits["network_given"] == "none"
    assert any("slirp4netns did not give the run a network within 0.5 s" in n for n in result.notices), result.notices


def test_a_network_helper_that_ends_after_it_gave_the_network_says_it_was_lost(tmp_path, namespace, monkeypatch):
    """A helper that said ready, then ended while the run went on: the run had its
    network (tap0), and was said to have had none ("could not give the run a
    network", network_given none)."""
    import shutil

    from verifier_tui.engine.sandbox import network
    from verifier_tui.engine.session import Options, Session

    real = shutil.which("slirp4netns")
    if real is None:
        pytest.skip("slirp4netns is not installed")
    fake = tmp_path / "slirp4netns"
    fake.write_text(f'#!/bin/sh\n"{real}" "$@" &\nsleep 1\nkill $!\nwait\n')
    fake.chmod(0o755)
    monkeypatch.setattr(network, "helper", lambda: str(fake))
    verifier = INTERFACES.replace("        return 1.0", "        __import__('time').sleep(2.5)\n        return 1.0")
    with Session(make_task(tmp_path / "t", verifier, cases={"only": {}}), Options(python=PY)) as session:
        result = session.run()
    if "tap0" not in result.stdout.text:
        pytest.skip(f"slirp4netns gives no network here: {result.notices}")
    assert result.limits["network_given"] == "user"
    assert any(
        "this run lost its network during the run: slirp4netns ended during the run" in n for n in result.notices
    ), result.notices


def test_without_slirp4netns_a_public_task_has_no_network_and_says_how_to_get_it(tmp_path, namespace, monkeypatch):
    from verifier_tui.engine.sandbox import network
    from verifier_tui.engine.session import Options, Session
    from verifier_tui.words.run import limits_words

    monkeypatch.setattr(network, "helper", lambda: None)
    with Session(make_task(tmp_path / "t", INTERFACES, cases={"only": {}}), Options(python=PY)) as session:
        result = session.run()
        words = limits_words(session.limits(), namespace=True)
        short = limits_words(session.limits(), namespace=True, short=True)
    assert eval(result.stdout.text.splitlines()[0]) == ["lo"]
    assert result.limits["network_given"] == "none"
    assert f"no network (network public: slirp4netns is not installed; {network.INSTALL})" in words
    assert short == "no network (network public: slirp4netns is not installed)"


# ---------------------------------------------------------------------------
# A tree deeper than Python's recursion limit, left where the tool cleans up

DEEP_TREE = """\
    import os

    def verify(workspace):
        fd = os.open({where!r}, os.O_RDONLY)
        for _ in range(3000):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open("f", "w", opener=lambda name, flags: os.open(name, flags, dir_fd=fd)) as handle:
            handle.write("x")
        return 1.0
"""


@pytest.mark.parametrize("where", ["/logs/verifier", "/app", "/tests"])
def test_a_tree_nested_past_pythons_recursion_limit_is_removed_without_a_traceback(tmp_path, env, namespace, where):
    """A verifier nested 3,000 folders in its reward folder (or the workspace,
    or /tests): the tool's clean-up of the run's stage (``shutil.rmtree``,
    recursive before Python 3.13) raised RecursionError, ``run`` ended on a
    traceback and the stage stayed in the scratch folder."""
    task = make_task(tmp_path / "t", DEEP_TREE.format(where=where), cases={"only": {}})
    env["VERIFIER_TUI_SANDBOX"] = "namespace"
    done = run_tool(env, "run", task, "--python", PY)
    no_traceback(done)
    assert 'verdict: {"reward": 1.0}' in done.stdout, done.stdout + done.stderr
    assert os.listdir(env["TMPDIR"]) == [], "the run's stage was left behind"


COUNT_DEPTH = """\
    import os

    def verify(workspace):
        depth, here = 0, workspace
        while os.path.isdir(os.path.join(here, "d")):
            depth, here = depth + 1, os.path.join(here, "d")
            os.chdir(here)
            here = "."
        print("depth", depth)
        return 1.0
"""


def test_a_workspace_nested_past_pythons_recursion_limit_is_staged_or_refused_in_one_line(tmp_path, env, sandbox):
    """A trial's workspace (what the agent left) nested 900 folders deep: staging
    its copy (``Mirror``, recursive) raised RecursionError and ``run`` ended on a
    traceback. The view now lays such a workspace over as an overlay, as it does a
    big one; the copy sandbox, asked for, refuses the run in its one line."""
    task = make_task(tmp_path / "t", COUNT_DEPTH, cases={"only": {}})
    nest(task / "cases" / "only" / "workspace", 900)
    env["VERIFIER_TUI_SANDBOX"] = sandbox
    done = run_tool(env, "run", task, "--python", PY)
    no_traceback(done)
    if sandbox == "namespace":
        assert "depth 900" in done.stdout, done.stdout + done.stderr
        assert 'verdict: {"reward": 1.0}' in done.stdout
    else:
        assert "the workspace could not be copied whole: folders nested too deep to copy" in done.stdout, done.stdout
        assert "the verifier was not run" in done.stdout


FORGE_STATUS = """\
    import os

    def verify(workspace):
        # The view's init keeps the tool's status file open as its fd 4:
        # the run, the same user in the same namespaces, may open it again.
        try:
            fd = os.open("/proc/1/fd/4", os.O_WRONLY)
            os.write(fd, b"exit 0\\n\\n")
            os.close(fd)
        finally:
            os._exit(3)
"""


def test_the_runners_exit_is_not_the_runs_to_rewrite(tmp_path, env, namespace):
    """A verifier that exits 3 rewrote, through ``/proc/1/fd/4``, the file in
    which the view's init writes the runner's status: ``run`` said "exit 0"."""
    task = make_task(tmp_path / "t", FORGE_STATUS, cases={"only": {}})
    env["VERIFIER_TUI_SANDBOX"] = "namespace"
    data = run_json(env, task)
    assert data["exit_code"] == 3, data


CTRL_C_TO_ITS_GROUP = """\
    import os, signal, subprocess, time

    def verify(workspace):
        # Left running, deaf to Ctrl+C: the run's end lists it.
        subprocess.Popen(["sleep", "900"], preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        try:
            os.kill(0, signal.SIGINT)  # Ctrl+C to its own process group, as a CLI under test may send
            time.sleep(30)
        except KeyboardInterrupt:
            print("interrupted, and went on")
        return 1.0
"""


def test_ctrl_c_a_verifier_sends_its_own_group_leaves_its_exit_and_strays_as_they_are(tmp_path, env, sandbox):
    """A verifier that sent SIGINT to its process group, caught its own
    KeyboardInterrupt and returned 1.0 (exit 0 in the copy sandbox, and in
    Harbor, whose ``docker exec`` group holds no container init): the view's
    init, in that group and a ``sh -c`` that catches SIGINT, left as the
    runner ended with status 130, so ``run`` said "killed by signal 2" and
    listed none of what the run left running."""
    task = make_task(tmp_path / "t", CTRL_C_TO_ITS_GROUP, cases={"only": {}})
    env["VERIFIER_TUI_SANDBOX"] = sandbox
    data = run_json(env, task)
    assert "interrupted, and went on" in data["stdout"], data
    assert (data["exit_code"], data["signal"], data["rewards"]) == (0, None, {"reward": 1.0}), data
    assert data["strays"] == ["sleep 900"], data


FORGE_SETUP_FAILURE = """\
    import os, sys

    def verify(workspace):
        try:
            os.close(os.open("/proc/1/fd/4", os.O_WRONLY | os.O_TRUNC))  # the init's "started", erased
        except OSError as exc:
            print("not reached:", exc.strerror)
        sys.stderr.write("bwrap: Creating new namespace failed: Operation not permitted\\n")
        return 1.0
"""


def test_the_run_cannot_say_its_view_was_never_set_up(tmp_path, env, namespace):
    """A verifier emptied the init's status file through ``/proc/1/fd/4`` and
    printed a bwrap-like line: ``run`` said "could not set up the run's
    sandbox ... user namespaces refused here?", the verdict "the verifier was
    not run" above the reward it wrote, and the probe was thrown away."""
    task = make_task(tmp_path / "t", FORGE_SETUP_FAILURE, cases={"only": {}})
    env["VERIFIER_TUI_SANDBOX"] = "namespace"
    data = run_json(env, task)
    assert data["rewards"] == {"reward": 1.0}, data
    assert "not reached: No such file or directory" in data["stdout"]


HALF_EXITED_RUNNER = """\
    import ctypes, os, threading, time

    IMPORTED = time.monotonic()

    def worker():
        fd = os.open("/proc/1/fd/5", os.O_WRONLY | os.O_APPEND)
        os.write(fd, b"rc 0\\n")  # as the view's init says its runner exited 0
        os.close(fd)
        time.sleep(max(0.0, IMPORTED + 3.0 - time.monotonic()))  # past the 2 s timeout
        with open("/logs/verifier/reward.txt", "w") as handle:
            handle.write("1.0")
        time.sleep(1000)

    def verify(workspace):
        threading.Thread(target=worker).start()
        time.sleep(0.3)
        ctypes.CDLL(None).syscall(60, 0)  # SYS_exit: its main thread alone; the runner lives on
"""


def test_a_runner_whose_main_thread_exited_still_times_out(tmp_path, env, namespace):
    """A verifier wrote "rc 0" to the init's strays file and ended its main
    thread alone (``SYS_exit``): the runner showed as a zombie while its other
    thread ran on and wrote a reward past the timeout, and the run was said to
    have ended in time, exit 0, reward 1.0. Harbor's ``docker exec`` waits for
    the whole process: timed out (VerifierTimeoutError)."""
    task = make_task(tmp_path / "t", HALF_EXITED_RUNNER, timeout=2, cases={"only": {}})
    env["VERIFIER_TUI_SANDBOX"] = "namespace"
    data = run_json(env, task)
    assert data["outcome"] == "timed_out", (data["outcome_words"], data["rewards"])


FLOOD_STRAYS = """\
    import os

    def verify(workspace):
        # The init lists the strays in a file it holds open as fd 5, which the
        # run may open again: one "command line" of 200 MB of hex.
        fd = os.open("/proc/1/fd/5", os.O_WRONLY)
        os.write(fd, b"2\\n")
        chunk = b"41" * (1 << 20)
        for _ in range(100):
            os.write(fd, chunk)
        os.close(fd)
        return 1.0
"""


def test_a_flood_in_the_strays_list_is_read_within_bounds(tmp_path, env, namespace):
    """A verifier wrote a 200 MB line into the init's strays list through
    ``/proc/1/fd/5``: the tool, outside every limit of the run, read it whole
    (and decoded it), past 500 MB of its own memory for one note."""
    import subprocess

    task = make_task(tmp_path / "t", FLOOD_STRAYS, cases={"only": {}})
    env["VERIFIER_TUI_SANDBOX"] = "namespace"
    probe = "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); " + (
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run(
        [PY, "-c", probe, *TOOL, "run", str(task), "--python", PY],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert int(done.stdout) < 250_000, f"the tool held {int(done.stdout) >> 10} MB"  # ru_maxrss: KiB


FORGED_LISTING = """\
    import os, time

    def verify(workspace):
        # As the init's "rc" line and 1.5 million strays' pids, one short line each
        fd = os.open("/proc/1/fd/5", os.O_WRONLY)
        os.write(fd, b"rc 0\\n" + b"1\\n" * 1_500_000 + b"more -5\\n")
        os.close(fd)
        time.sleep(1000)
"""


def test_a_forged_listing_neither_delays_the_timeout_nor_is_read_whole(tmp_path, env, namespace):
    """A verifier wrote "rc 0" and 1.5 million one-line "strays" into the
    init's list through ``/proc/1/fd/5``, then slept: at its 2 s timeout the
    tool parsed them all before it sent SIGTERM (ended at 3.3 s), parsed them
    again after, and said 1.5 million strays in 20 MB of ``--json``. The init's
    status is the list's first line (its own writes begin the file), and no
    more than isolation.STRAYS_MOST strays are read; a count below 0 is none."""
    from verifier_tui.engine.sandbox import isolation

    task = make_task(tmp_path / "t", FORGED_LISTING, timeout=2, cases={"only": {}})
    env["VERIFIER_TUI_SANDBOX"] = "namespace"
    data = run_json(env, task)
    assert data["outcome"] == "timed_out", data["outcome_words"]
    # SIGTERM ends a sleeping runner at once; the parse this guards against ended it at 3.3 s, and a
    # loaded machine may take a few tenths of a second past the 2 s timeout to reap it
    assert data["duration_s"] < 3.0, data["duration_s"]
    assert len(data["strays"]) <= isolation.STRAYS_MOST
    assert not any("-4 process" in n or "-5" in n for n in data["notices"]), data["notices"]


def test_a_run_the_network_helper_failed_is_not_said_to_have_the_internet(ordinary_user):
    """As an ordinary user where ``/dev/net/tun`` is root's, slirp4netns fails:
    the note said the run had no network, while the limits line above it said
    "network public (user-mode)" and ``--json`` ``network_given: "user"``."""
    from verifier_tui.engine.sandbox.network import helper

    if helper() is None:
        pytest.skip("slirp4netns is not installed here")
    task = make_task(ordinary_user.root / "tasks" / "t", INTERFACES, cases={"only": {}})
    done = ordinary_user.run("run", "--json", task)
    data = json.loads(done.stdout)
    if not any("this run had no network" in notice for notice in data["notices"]):
        pytest.skip("slirp4netns gives this user a network here")
    assert data["limits"]["network_given"] == "none"
    text = ordinary_user.run("run", task).stdout
    assert "network public (user-mode)" not in text, text
    assert "no network (network public: slirp4netns failed this run; the note says why)" in text, text
