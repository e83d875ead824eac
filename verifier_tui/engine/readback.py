"""Files the tool reads back are checked before they are trusted, once, here.

The runner's explanation (``explain.json``, or its stdout in explain mode) is
written into the run's scratch folder, whose path the verifier can read in
``sys.argv``: a verifier may overwrite it (by mistake or not) while it runs.
Whatever it holds, it is read here into :class:`Explanation` and its records,
in the shape the runner writes (runner/run_verifier.py, ``_explain_document``):
a value of another type is left out (the record's default stands, as if the
runner had not said it), a row that is not an object is dropped from its list,
and keys the runner never writes are not read. Nothing after this module checks
a type again; ``to_json`` says the document back (docs/json-output.md). The
runner's ``--phases-to`` lines are cut to their shape the same way (:func:`conform`).

The tool's cache files are checked the same way by :mod:`verifier_tui.engine.cache`
and their owners' checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from verifier_tui.engine.record import AsJson, field, record

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

_T = TypeVar("_T")
#: The role of every sys.path entry the runner did not place.
INTERPRETER = "interpreter"


class _Fields:
    """One JSON object read back: each value taken only when it has the type
    the runner writes; otherwise what the record gets when the runner says nothing."""

    __slots__ = ("data",)

    def __init__(self, value: Any) -> None:
        self.data = value if isinstance(value, dict) else {}

    def text(self, key: str) -> str | None:
        value = self.data.get(key)
        return value if isinstance(value, str) else None

    def flag(self, key: str, default: bool = False) -> bool:
        value = self.data.get(key)
        return value if isinstance(value, bool) else default

    def whole(self, key: str) -> int | None:
        value = self.data.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None  # True is no line number

    def texts(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key)
        return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()

    def files_by_name(self, key: str) -> dict[str, str | None]:
        """An object of strings or nulls (anything else in it dropped)."""
        value = self.data.get(key)
        if not isinstance(value, dict):
            return {}
        return {name: item for name, item in value.items() if isinstance(name, str) and isinstance(item, (str, _NONE))}

    def objects(self, key: str) -> list[_Fields]:
        """The objects of a list (anything else in it dropped)."""
        value = self.data.get(key)
        return [_Fields(item) for item in value if isinstance(item, dict)] if isinstance(value, list) else []

    def members(self, key: str) -> dict[str, _Fields]:
        """The members of an object that are objects themselves, by name."""
        value = self.data.get(key)
        if not isinstance(value, dict):
            return {}
        return {name: _Fields(item) for name, item in value.items() if isinstance(name, str) and isinstance(item, dict)}

    def one(self, key: str, read: Callable[[_Fields], _T]) -> _T | None:
        value = self.data.get(key)
        return read(_Fields(value)) if isinstance(value, dict) else None


@record(frozen=True)
class PathEntry:
    """One entry of sys.path as the runner placed it: its place, the path,
    what it is for (``roles``: ``"vendored helpers"``, ``"verifier's folder"``,
    ``"tests folder"``, or :data:`INTERPRETER` for every other entry) and
    whether the folder or zip file exists."""

    index: int
    path: str
    roles: tuple[str, ...]
    exists: bool = True
    #: Under ``--step``: the step's own tests folder, laid over this one in /tests (its files win).
    laid_over: str | None = None

    @property
    def role(self) -> str:
        """The first of its roles."""
        return self.roles[0] if self.roles else ""

    @classmethod
    def read(cls, row: _Fields, place: int) -> PathEntry:
        index, role = row.whole("index"), row.text("role")
        roles = row.texts("roles") or ((role,) if role else ())
        return cls(place if index is None else index, row.text("path") or "", roles, row.flag("exists", True))

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "path": self.path,
            "role": self.role,
            "roles": list(self.roles),
            "exists": self.exists,
            **({"laid_over": self.laid_over} if self.laid_over is not None else {}),
        }


@record(frozen=True)
class Parameter(AsJson):
    """One parameter of ``verify`` and what the runner does with it
    (``binding``: ``"argument"``, ``"default"``, ``"nothing"`` or ``"missing"``):
    which value it gets (``source``; for ``**kwargs``, the names it receives),
    passed how (``"positional"`` or ``"keyword"``), and its default's repr."""

    name: str
    kind: str
    default: str | None = None
    has_default: bool = False
    binding: str = ""
    source: str | tuple[str, ...] | None = None
    passed: str | None = None

    @property
    def missing(self) -> bool:
        """Required, and nothing can fill it: a contract error."""
        return self.binding == "missing"

    @classmethod
    def read(cls, row: _Fields) -> Parameter:
        source = row.text("source") or (row.texts("source") if isinstance(row.data.get("source"), list) else None)
        return cls(
            row.text("name") or "",
            row.text("kind") or "",
            row.text("default"),
            row.flag("has_default"),
            row.text("binding") or "",
            source,
            row.text("passed"),
        )


@record(frozen=True)
class Resolution(AsJson):
    """Where a module resolves on sys.path: the file or folder ``import``
    loads (None: not importable), the ``role`` of the entry it is found under
    (worked out by the tool), and the copies further down that it shadows."""

    resolved: str | None
    shadowed: tuple[str, ...] = ()
    role: str | None = None


@record(frozen=True)
class VerifyFunction(AsJson):
    """The ``verify`` the runner found: its signature as written, whether it is
    awaited, what it is (``"function"``), and where it is defined."""

    signature: str
    is_async: bool = False
    type: str = ""
    defined_in: str | None = None
    line: int | None = None
    #: What a call returns when verify's code yields ("generator", "async generator"): never a reward.
    yields: str | None = None

    @classmethod
    def read(cls, info: _Fields) -> VerifyFunction:
        return cls(
            info.text("signature") or "verify(?)",
            info.flag("is_async"),
            info.text("type") or "",
            info.text("defined_in"),
            info.whole("line"),
            info.text("yields"),
        )


def exception_words(kind: str, message: str | None) -> str:
    """An exception as its traceback's last line says it: ``ValueError: boom``,
    ``ValueError`` without a message; the message as it is (its own trailing colons kept)."""
    return f"{kind}: {message}" if message else kind


@record(frozen=True)
class ImportFailure(AsJson):
    """What importing the verifier module raised: the exception's type, its
    message and the traceback."""

    type: str
    message: str = ""
    traceback: str = ""

    @classmethod
    def read(cls, error: _Fields) -> ImportFailure:
        return cls(error.text("type") or "", error.text("message") or "", error.text("traceback") or "")

    @property
    def said(self) -> str:
        """As the traceback's last line says it: ``ValueError: boom``, or ``ValueError`` without a message."""
        return exception_words(self.type, self.message)


@record(frozen=True)
class Interpreter(AsJson):
    """The interpreter that ran the runner."""

    executable: str | None
    version: str = ""
    implementation: str = ""
    flags: dict[str, bool] = field(default_factory=dict)  # isolated, no_site, dont_write_bytecode

    @classmethod
    def read(cls, python: _Fields) -> Interpreter:
        flags = python.one("flags", lambda f: {k: v for k, v in f.data.items() if isinstance(v, bool)})
        return cls(
            python.text("executable"), python.text("version") or "", python.text("implementation") or "", flags or {}
        )


@record(frozen=True)
class Explanation:
    """The runner's explain document (docs/json-output.md, "The explain
    document"), typed: how sys.path was placed, where ``nemo_gym`` resolves,
    ``verify`` and each parameter's binding, the contract problems. The tool
    adds ``environment`` (what the runner got), ``notices`` (explain mode) and
    ``from_contract`` (a task runner that reports nothing: what the contract
    places). When there is no explanation, ``error`` says why, with the
    runner's ``stderr``, ``exit_code`` and ``timed_out``, and ``ran`` when a runner started (its
    import may have run, and written in the sandbox, before it failed)."""

    sys_path: tuple[PathEntry, ...] = ()
    modules: dict[str, Resolution] = field(default_factory=dict)
    verify: VerifyFunction | None = None
    parameters: tuple[Parameter, ...] = ()
    problems: tuple[str, ...] = ()
    import_error: ImportFailure | None = None
    python: Interpreter | None = None
    preloaded_nemo_gym: str | None = None
    #: That nemo_gym was imported by ``--preload`` (a run started ahead), not the interpreter's start-up.
    nemo_gym_by_preload: bool = False
    #: The modules already imported as the runner placed its folders that a file there is named after: their files.
    imported_before: dict[str, str | None] = field(default_factory=dict)
    #: Those of them that ``--preload`` imported (a run started ahead), not the interpreter's start-up.
    imported_by_preload: tuple[str, ...] = ()
    preload_failed: tuple[str, ...] = ()
    # The rest of the runner's document, said back as it came.
    explain_version: int | None = None
    verifier: str | None = None
    workspace: str | None = None
    workspace_exists: bool = False
    reward_dir: str | None = None
    available: tuple[str, ...] = ()
    would_exit: int | None = None
    would_call_verify: bool = False
    # The tool's own. ``environment`` is a ChildEnvironment (engine/sandbox/environment.py), not
    # named here: the sandbox's modules import the model, which names this module.
    environment: Any = None
    notices: tuple[str, ...] = ()
    from_contract: bool = False
    error: str | None = None
    stderr: str | None = None
    exit_code: int | None = None
    timed_out: bool = False
    ran: bool = False

    @property
    def imported(self) -> bool:
        """Whether a runner started, so that it may have imported the verifier (whose top-level code runs
        then) somewhere: only then is a sandbox said, and a runner's stderr."""
        return self.error is None or self.ran

    @classmethod
    def read(cls, document: Any, roles: Mapping[str, str | None] | None = None) -> Explanation | None:
        """The document read back (None when it is not a JSON object at all);
        ``roles``: each module's, as :meth:`module_roles` gave them."""
        if not isinstance(document, dict):
            return None
        doc = _Fields(document)
        return cls(
            sys_path=tuple(PathEntry.read(row, place) for place, row in enumerate(doc.objects("sys_path"))),
            modules={
                name: Resolution(info.text("resolved"), info.texts("shadowed"), (roles or {}).get(name))
                for name, info in doc.members("modules").items()
            },
            verify=doc.one("verify", VerifyFunction.read),
            parameters=tuple(map(Parameter.read, doc.objects("parameters"))),
            problems=doc.texts("problems"),
            import_error=doc.one("import_error", ImportFailure.read),
            python=doc.one("python", Interpreter.read),
            preloaded_nemo_gym=doc.text("preloaded_nemo_gym"),
            nemo_gym_by_preload=doc.flag("nemo_gym_by_preload"),
            imported_before=doc.files_by_name("imported_before"),
            imported_by_preload=doc.texts("imported_by_preload"),
            preload_failed=doc.texts("preload_failed"),
            explain_version=doc.whole("explain_version"),
            verifier=doc.text("verifier"),
            workspace=doc.text("workspace"),
            workspace_exists=doc.flag("workspace_exists"),
            reward_dir=doc.text("reward_dir"),
            available=doc.texts("available"),
            would_exit=doc.whole("would_exit"),
            would_call_verify=doc.flag("would_call_verify"),
            from_contract=doc.flag("from_contract"),
        )

    @property
    def placed(self) -> bool:
        """Whether the runner placed its folders on sys.path. It stops before
        when a --response or --task-data file is bad, or the verifier file is
        missing: ``sys_path`` is then the interpreter's own, as it started, and
        ``modules`` were looked up on that."""
        return any(row.role != INTERPRETER for row in self.sys_path)

    def module_roles(self) -> dict[str, str | None]:
        """Each module's ``role``: the role of the longest sys.path entry it
        resolves under, None when it does not resolve."""
        out: dict[str, str | None] = {}
        for name, info in self.modules.items():
            resolved = info.resolved or ""
            holders = [
                row
                for row in self.sys_path
                if row.path and resolved and (resolved == row.path or resolved.startswith(row.path.rstrip("/") + "/"))
            ]
            out[name] = max(holders, key=lambda row: len(row.path)).role if holders else None
        return out

    def to_json(self) -> dict[str, Any]:
        """The document as docs/json-output.md says it."""
        if self.error is not None:
            ran = {"stderr": self.stderr, "exit_code": self.exit_code, "timed_out": self.timed_out} if self.ran else {}
            return {"error": self.error, **ran}
        return {
            "explain_version": self.explain_version,
            "python": _json(self.python),
            "verifier": self.verifier,
            "workspace": self.workspace,
            "workspace_exists": self.workspace_exists,
            "reward_dir": self.reward_dir,
            "sys_path": [row.to_json() for row in self.sys_path],
            "modules": {name: info.to_json() for name, info in self.modules.items()},
            "preloaded_nemo_gym": self.preloaded_nemo_gym,
            "nemo_gym_by_preload": self.nemo_gym_by_preload,
            "imported_before": dict(self.imported_before),
            "imported_by_preload": list(self.imported_by_preload),
            "preload_failed": list(self.preload_failed),
            "available": list(self.available),
            "verify": _json(self.verify),
            "parameters": [row.to_json() for row in self.parameters],
            "problems": list(self.problems),
            "import_error": _json(self.import_error),
            "would_exit": self.would_exit,
            "would_call_verify": self.would_call_verify,
            **({"from_contract": True} if self.from_contract else {}),
            "environment": _json(self.environment),
            "notices": list(self.notices),
        }


def _json(value: Any) -> Any:
    return None if value is None else value.to_json()


_NONE = type(None)
_TEXT = (str, _NONE)

#: One line of the runner's ``--phases-to`` file (runner/run_verifier.py,
#: ``_write_phase`` and ``_stop``): the keys of every phase together, each
#: with the type the runner writes.
PHASE_LINE_SHAPE: dict[str, Any] = {
    "phase": str,
    "status": str,
    "removed": [{"name": str, "kind": str}],
    "file": _TEXT,
    "available": [str],
    "front": [str],
    "sys_path": [str],
    "module": str,
    "plan": [Parameter],
    "awaited": bool,
    "result_type": str,
    "text": str,
    "exit": int,
    "problem": str,
    "problems": [str],
    "error": {"type": str, "message": str, "frames": [{"file": str, "line": int}]},
}

_MISSING = object()


def conform(value: Any, shape: Any) -> Any:
    """``value`` cut to ``shape``: a type or tuple of types (a plain value), a
    dict (an object with those keys: another key is left out), a one-item
    list (a list of that shape: an item of another is dropped),
    or a record class with ``read`` (an object read into it and said back); a
    sentinel when it does not fit at all. Use :func:`checked_document` for a
    whole document."""
    if hasattr(shape, "read"):
        return shape.read(_Fields(value)).to_json() if isinstance(value, dict) else _MISSING
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return _MISSING
        out = {}
        for key, item in value.items():
            inner = shape.get(key, _MISSING) if isinstance(key, str) else _MISSING
            if inner is _MISSING:
                continue
            kept = conform(item, inner)
            if kept is not _MISSING:
                out[key] = kept
        return out
    if isinstance(shape, list):
        if not isinstance(value, list):
            return _MISSING
        kept = [conform(item, shape[0]) for item in value]
        return [item for item in kept if item is not _MISSING]
    int_shape = shape is int or (isinstance(shape, tuple) and int in shape)
    if int_shape and isinstance(value, bool) and bool not in (shape if isinstance(shape, tuple) else (shape,)):
        return _MISSING  # True is an int to Python, not a line number or an exit code
    return value if isinstance(value, shape) else _MISSING


def checked_document(data: Any, shape: dict[str, Any]) -> dict[str, Any] | None:
    """A document read back from a file, cut to ``shape``; None when it is not
    a JSON object at all."""
    out = conform(data, shape)
    return None if out is _MISSING else out
