"""Text read from files cut to fit where it is shown, on one line, made
harmless by the rule :mod:`verifier_tui.engine.plain` says once."""

from __future__ import annotations

# Re-exported: the faces name text harmless through this module.
from verifier_tui.engine.plain import ONE_LINE_MOST as ONE_LINE_MOST
from verifier_tui.engine.plain import code_point as code_point
from verifier_tui.engine.plain import cut_middle
from verifier_tui.engine.plain import one_line as one_line
from verifier_tui.engine.plain import plain_surrogates as plain_surrogates
from verifier_tui.engine.plain import plain_text as plain_text
from verifier_tui.engine.plain import unbroken as unbroken

#: The most of a name read from a file shown where one name goes: an exception type
#: (Harbor's is a class name, ``RewardFileNotFoundError``: tens of characters), a task's
#: name in a table (a dataset's short name). One of 100,000 a result.json named filled ten
#: lines of a screen; a task's of 5,000 pushed every figure of the table off it (:func:`one_name`).
NAME_MOST = 60


def one_name(text: str) -> str:
    """``text``, a name read from a file (an exception type, a task's), on one line and in a
    name's room (:data:`NAME_MOST`), said the same on every face: its start and end
    with a count of the rest (:func:`one_line`)."""
    return one_line(text, NAME_MOST)


def one_id(text: str) -> str:
    """``text`` as a test id and JUnit's classname name it: on one line and cut as
    :func:`one_line` puts it, what draws nothing kept (an id is typed back to pytest), with
    Unicode's non-characters U+FFFE and U+FFFF (all it leaves that XML 1.0 cannot hold)
    spelled as pytest's junitxml spells them in a name, ``#xFFFE``: pytest writes a classname
    as the id has it, unescaped, and a raw one made the whole ``--junitxml`` file one no reader takes."""
    return cut_middle(unbroken(text).replace("\ufffe", "#xFFFE").replace("\uffff", "#xFFFF"))
