"""How paths, durations and verifier text are put on screen.

One :class:`Display` per app. In *deterministic* mode (snapshot tests and the
screenshots) nothing that changes between runs or machines reaches the screen:
durations read ``-- ms``, the home folder reads ``~`` and no clock is shown, so
an SVG of the same state is byte-for-byte the same every time.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.content import Content

from verifier_tui.engine.advice import (
    CASE_OPTION,
    CHOOSE_ROW,
    CHOOSE_ROW_OR_NONE,
    CHOOSE_VERIFIER,
    DEBUG_UNDER_PDB,
    GIVE_RESPONSE,
    GIVE_TASK,
    NEMO_GYM_COPY,
    OPEN_IN_EDITOR,
    OUR_RUNNER,
    PASS_ENV,
    PYTHON_OPTION,
    STAND_IN,
    STEP_NAMED,
    STEP_OPTION,
    STEP_TESTS,
    TASK_RUNNER,
    VERIFIER_OPTION,
    Action,
    worded,
)
from verifier_tui.engine.readback import INTERPRETER
from verifier_tui.engine.record import field, record
from verifier_tui.words.paths import home_folder, path_from, text_from, tilde
from verifier_tui.words.run import duration_text
from verifier_tui.words.text import one_line, plain_text

if TYPE_CHECKING:
    from verifier_tui.engine.readback import Explanation

#: Every kind of the engine's actions as the main screen says it: its keys,
#: since its user never typed a flag; where it has no key (the interpreter),
#: the flag to start it again with. None: the command line's words, on
#: purpose (said only before the screen opens, or only of a trial). An
#: option given with its value (advice.OPTION_COMMANDS) keeps the command line's
#: words too: verifier-tui takes the same options when started.
KEY_WORDS: dict[str, str | None] = {
    # Each sentence that names the interpreter option has room for a clause there ("...: X").
    PYTHON_OPTION.kind: "start verifier-tui again with --python EXE",
    # Never on this screen: only the report command says words/run.py's nemo_gym hint (missing_nemo_gym_hint).
    NEMO_GYM_COPY.kind: None,
    DEBUG_UNDER_PDB.kind: "press d",
    CHOOSE_ROW.kind: "choose a row with t",
    CHOOSE_ROW_OR_NONE.kind: "choose one with t (",
    TASK_RUNNER.kind: "R",
    OUR_RUNNER.kind: "(R back to verifier-tui's runner shows it)",
    GIVE_RESPONSE.kind: "choose one with p",
    CHOOSE_VERIFIER.kind: "choose one with v",
    VERIFIER_OPTION.kind: "the file",  # picked with v: "the file x.py: not a verifier"
    # Never on this screen: only a trial's replay lacks a workspace (harbor/inputs.py), and the
    # trial screen says its own keys for it on a line of their own (TrialDisplay.action).
    STAND_IN.kind: None,
    OPEN_IN_EDITOR.kind: " (e opens it)",
    STEP_OPTION.kind: "S chooses one step, run as Harbor would",
    STEP_TESTS.kind: "S chooses the step, whose steps/NAME/tests are looked in too, as Harbor verifies it",
    STEP_NAMED.kind: "step",  # chosen with --step or S: "step second: task.toml no longer has it"
    PASS_ENV.kind: "start verifier-tui again with --env NAME to pass one",
    CASE_OPTION.kind: None,  # "--case NAME: no such case" stops the start, before the screen opens
    GIVE_TASK.kind: None,  # a trial's task not found: said before the trial screen opens, never on this one
}


def key_words(action: Action) -> str:
    """``action`` as the main screen says it (:data:`KEY_WORDS`)."""
    return KEY_WORDS.get(action.kind) or action.flag


#: A panel's heading, and its quieter words (theme variables: every built-in theme keeps working).
HEAD = "bold $text-primary"
MUTED = "$text-muted"


def content(*parts: Any) -> Content:
    """``Content.assemble``, the text of every part made harmless
    (:func:`plain_text`): names, reward files, result.json's words and
    exception messages from files the tool did not write reach every panel,
    and none may act on the terminal (escape codes, a bidi override). A part
    that is Content already was made here. A name that must keep to its line
    goes through :func:`one_line` first."""
    return Content.assemble(*(_harmless(part) for part in parts))


def _harmless(part: Any) -> Any:
    if isinstance(part, str):
        return plain_text(part)
    if isinstance(part, tuple):
        return (plain_text(part[0]), *part[1:])
    return part


def started_in() -> Path:
    """The folder the user started the tool in (``/`` if it was removed since)."""
    try:
        return Path.cwd()
    except OSError:
        return Path("/")


@record
class Display:
    """Paths and durations in the words of this session."""

    task_root: Path
    deterministic: bool = False
    python_prefixes: tuple[str, ...] = ()
    """In deterministic mode, the interpreter's install folders, shown as
    ``<python>`` (they differ from machine to machine)."""
    cwd: Path = field(default_factory=started_in)
    """The folder the user started the tool in: paths are shown as they resolve from it."""
    home: str = field(default_factory=home_folder)
    """The user's home folder, shown as ``~`` (read once: :meth:`text` runs on every output line)."""

    def learn_interpreter(self, explain: Explanation | None) -> None:
        """Note where the run's interpreter lives, from its explain document."""
        if not self.deterministic or explain is None:
            return
        prefixes = set(self.python_prefixes)
        for row in explain.sys_path:
            if row.role == INTERPRETER and "/lib/python" in row.path:
                prefixes.add(row.path.split("/lib/python", 1)[0])
        self.python_prefixes = tuple(sorted(prefixes, key=len, reverse=True))

    @property
    def origin(self) -> Path:
        """The folder paths are shown from: where the user started the tool."""
        return self.cwd

    def path(self, path: Path | str | None) -> str:
        """A path as it resolves from :attr:`origin`: relative to it when
        inside it (``tests/verifier.py`` started in the task,
        ``hello-file/tests/verifier.py`` in its parent), else absolute, the
        home folder as ``~``."""
        if path is None:
            return "(none)"
        return one_line(self._home(path_from(path, self.origin)))

    def duration(self, seconds: float | None) -> str:
        if self.deterministic or seconds is None:
            return "-- ms"
        return duration_text(seconds)

    def elapsed(self, seconds: float) -> str:
        """A running run's elapsed time (hidden in deterministic mode)."""
        if self.deterministic:
            return ""
        return duration_text(seconds)

    def text(self, text: str) -> str:
        """Verifier output made readable: escapes removed, and absolute paths
        under :attr:`origin` shown relative to it, as everywhere else on
        screen (the files are still the user's own)."""
        return self._home(text_from(plain_text(text), self.origin))

    def words(self, text: str) -> str:
        """The tool's own words (a notice, a contract problem) as the TUI says
        them: made readable as :meth:`text` does, each action the engine
        suggests (:class:`~verifier_tui.engine.advice.Advice`) worded by
        :meth:`action`."""
        return worded(text, self.action, self.text)

    def action(self, action: Action) -> str:
        """How this screen says an action the engine suggests."""
        return key_words(action)

    def _home(self, text: str) -> str:
        for prefix in self.python_prefixes:
            if prefix and prefix in text:
                text = text.replace(prefix, "<python>")
        return tilde(text, self.home)
