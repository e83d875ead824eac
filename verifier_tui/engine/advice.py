"""Advice as data: the engine's sentences keep what they suggest doing apart
from their words, so that each face names the action its own way (the
headless commands the option, the TUI its key) and none rewrites another's
sentence.

An :class:`Advice` is a ``str`` (the headless commands', the JSON's and the
pytest plugin's words, unchanged wherever it is printed, stored or compared)
that also keeps its ``parts``: plain text and :class:`Action` values, which a
face words with :meth:`Advice.worded`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier_tui.engine.record import record

if TYPE_CHECKING:
    from collections.abc import Callable


@record(frozen=True)
class Action:
    """Something the user can do: ``kind`` says what (the faces key their
    words on it), ``flag`` how the command line does it, as a phrase."""

    kind: str
    flag: str


Part = str | Action

DEBUG_UNDER_PDB = Action("debug under pdb", "open the task in the TUI (verifier-tui TASK) and press d")
CHOOSE_ROW = Action("choose a row", "choose a row with --task-id ID")
#: Its phrase opens the parenthesis that the list of task ids closes.
CHOOSE_ROW_OR_NONE = Action("choose a row, or none", "choose one with --task-id ID (t in the TUI; ")
#: The option that runs the task's own tests/.ng/run_verifier.py, as the sandbox does
#: (a run, or a trial's replay: the sentence says which).
TASK_RUNNER = Action("the task's runner", "--runner task")
OUR_RUNNER = Action("verifier-tui's runner", "(verifier-tui's runner, without --runner task, shows it)")
GIVE_RESPONSE = Action("give a response", "give --response FILE")
#: Said after a sentence, so its phrase starts with the semicolon that joins them.
STAND_IN = Action("a stand-in for /app", "; give --workspace DIR, --case NAME or --stand-in empty")
CHOOSE_VERIFIER = Action("choose a verifier", "choose one with --verifier")
#: The option that named a verifier, said before the name given ("--verifier x.py: not a verifier").
VERIFIER_OPTION = Action("the verifier option", "--verifier")
GIVE_TASK = Action("give the task folder", "give the task folder with --task DIR")
#: The option that runs one step of a multi-step task as Harbor verifies it (the TUI's S chooses one).
STEP_OPTION = Action("choose a step", "--step NAME runs one step as Harbor would")
#: The option that looks in a step's own tests for the verifier tests/ lacks (a multi-step task's "no verifier found").
STEP_TESTS = Action("look in a step's tests", "--step NAME looks in steps/NAME/tests too, as Harbor verifies it")
#: The option that named a step, said before the name given ("--step NAME: task.toml no longer has it").
STEP_NAMED = Action("the step option", "--step")
#: The option that chose a case, said before the name given ("--case NAME: no such case").
CASE_OPTION = Action("the case option", "--case")
#: The user's variables the runner was not given: on the command line one more option, in the TUI a restart.
PASS_ENV = Action("pass a variable", "--env NAME passes one")
NEMO_GYM_COPY = Action("name a copy of nemo_gym", "--nemo-gym DIR naming a copy of nemo_gym/verifiers")
#: The option that names the interpreter: another one (that has a module, or newer), or the one to check.
PYTHON_OPTION = Action("the interpreter option", "--python EXE")
#: The kind of :func:`by_name`'s actions.
BY_NAME = "give a file by name"
#: The kinds of actions that are an option of one verifier-tui command (given with its value):
#: a face without that option (the pytest plugin) names the command that takes it.
OF_RUN_TRIAL = "an option of run TRIAL"
OF_TEST = "an option of test"
#: The kinds whose action is an option given with its value, made by a function
#: (:func:`by_name`, :func:`of_run_trial`, :func:`of_test`), not one constant, each
#: with the command it is an option of: what a face without it (the pytest plugin) names.
OPTION_COMMANDS = {
    BY_NAME: "verifier-tui run TASK",  # a file of the task's given by name all the same
    OF_RUN_TRIAL: "verifier-tui run TRIAL",
    OF_TEST: "verifier-tui test PATH",  # what the plugin's --verifier-cases PATH runs
    # options of test too, which the TUI words as its key S
    STEP_OPTION.kind: "verifier-tui test PATH",
    STEP_TESTS.kind: "verifier-tui test PATH",
    PASS_ENV.kind: "verifier-tui run TASK",  # an option of every command's
}


def with_its_command(action: Action) -> str | None:
    """An option given with its value (:data:`OPTION_COMMANDS`), said with the command that takes it
    (``verifier-tui test PATH --step NAME``), for a face that has no such option (the pytest plugin,
    audit); None for an action of another kind."""
    command = OPTION_COMMANDS.get(action.kind)
    return f"{command} {action.flag}" if command is not None else None


def of_run_trial(option: str) -> Action:
    """An option of ``verifier-tui run TRIAL``, said as the command line gives
    it (``--env W=VALUE gives the one it had``)."""
    return Action(OF_RUN_TRIAL, option)


def of_test(option: str) -> Action:
    """An option every command has, said where a run of a task or a trial may
    be reported (``--network host shares this machine's instead``): the plugin's
    runs are ``verifier-tui test PATH``'s."""
    return Action(OF_TEST, option)


def by_name(option: str) -> Action:
    """A file of the task's that is not read (it leads out of the task),
    given all the same with ``option`` (``--workspace DIR``)."""
    return Action(BY_NAME, option)


#: After the failing line is named: the trial screen's e opens it; the command line has no such key.
OPEN_IN_EDITOR = Action("open in the editor", "")


class Advice(str):
    """A sentence made of text and actions; as a ``str``, its command-line words."""

    parts: tuple[Part, ...]

    def __new__(cls, *parts: Part) -> Advice:
        flat: list[Part] = []
        for part in parts:
            flat.extend(part.parts if isinstance(part, Advice) else (part,))
        self = super().__new__(cls, "".join(p if isinstance(p, str) else p.flag for p in flat))
        self.parts = tuple(flat)
        return self

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(p for p in self.parts if isinstance(p, Action))

    def worded(self, action: Callable[[Action], str], text: Callable[[str], str] = str) -> str:
        """The sentence in a face's words: ``action`` words each action,
        ``text`` each piece of plain text (a face's paths, say)."""
        return "".join(text(p) if isinstance(p, str) else action(p) for p in self.parts)


def worded(sentence: str, action: Callable[[Action], str], text: Callable[[str], str] = str) -> str:
    """``sentence`` in a face's words when it is :class:`Advice`, else through ``text``."""
    return sentence.worded(action, text) if isinstance(sentence, Advice) else text(sentence)
