"""A warm ``verifier-tui`` for the tests: this process imports the tool once,
then forks one child per command a test runs (:func:`tests.helpers.commands.run_tool`).

Each child is a process of its own, as the console script is: the request's
arguments, environment, working folder and stdin/stdout/stderr, the tool's
own ``main()`` and its exit path, and real runner subprocesses. What it
shares is what every start of the console script does the same: the
interpreter's start and the tool's imports (about 70 ms of CPU each, on
hundreds of commands). So the client sends here only what those cannot
depend on; anything else (another interpreter, ``python -m``, a different
locale or ``PYTHON*`` variable) is started for real.

Run as ``python tests/tool_server.py FD`` with the console script's path in
``VERIFIER_TUI_TESTS_SCRIPT`` (not in this command line, where tests that
look for processes by their command line would find it). FD is a
``SOCK_SEQPACKET`` socket. Each request is one JSON message (argv, env, cwd)
carrying three descriptors (stdin, stdout, stderr); the answers are the
child's pid, then its wait status. The server ends when the socket closes.
Standard library only, and nothing but ``os`` and ``sys`` imported before
``sys.path`` is the console script's.
"""

import os
import sys

# The console script's sys.path: its own folder first, never the tests' folder.
CONSOLE_SCRIPT = os.environ.pop("VERIFIER_TUI_TESTS_SCRIPT")
sys.path[0] = os.path.dirname(CONSOLE_SCRIPT)

import atexit  # noqa: E402
import json  # noqa: E402
import socket  # noqa: E402
import traceback  # noqa: E402

import verifier_tui.cli  # noqa: E402,F401  (what every start of the tool imports)
import verifier_tui.commands.headless  # noqa: E402,F401
import verifier_tui.engine.session  # noqa: E402,F401


def _child(request: dict, fds: list[int]) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = [CONSOLE_SCRIPT, *request["args"]]
    try:
        code = verifier_tui.cli.main()  # a headless command ends the process itself
    except SystemExit as stop:  # as the interpreter reads it
        code = stop.code
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code or 0)


def serve(channel: socket.socket) -> None:
    while True:
        message, fds, _flags, _address = socket.recv_fds(channel, 1 << 20, 3)
        if not message:
            return
        pid = os.fork()
        if pid == 0:
            channel.close()
            _child(json.loads(message), fds)
        for fd in fds:
            os.close(fd)
        channel.send(str(pid).encode())
        _pid, status = os.waitpid(pid, 0)
        channel.send(str(status).encode())


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
