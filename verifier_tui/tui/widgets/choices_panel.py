"""Workspace, response, task data and interpreter of the current choices, on one line under
the header, each with the key that changes it (wrapped between them, as the header)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier_tui.tui.display import content
from verifier_tui.tui.widgets.header_line import KEY, LABEL, Flowing

if TYPE_CHECKING:
    from verifier_tui.engine.readback import Explanation
    from verifier_tui.engine.session import Session
    from verifier_tui.tui.display import Display


class ChoicesPanel(Flowing):
    def show(self, session: Session, fmt: Display, explain: Explanation | None = None) -> None:
        python = session.options.python  # its version and path: in the resolution panel
        workspace = fmt.path(session.workspace) if session.workspace else "(an empty scratch folder)"
        response = session.response
        if response is None:
            response_text, response_style = "none", "$text-muted"
        elif response.path is None:
            response_text, response_style = f"typed {'JSON' if response.kind == 'json' else 'text'}", "$accent"
        else:
            response_text, response_style = fmt.path(response.path), ""
        task_data = fmt.path(session.task_data) if session.task_data else "none"
        if session.task_id is not None:
            task_data = f"row {session.task_id} of {task_data}"
        self.flow(
            [
                content(("workspace ", LABEL), (workspace, "bold"), (" f", KEY)),
                content(("response ", LABEL), (response_text, response_style or "bold"), (" p", KEY)),
                content(
                    ("task data ", LABEL), (task_data, "bold" if session.task_data else "$text-muted"), (" t", KEY)
                ),
                content((python, "bold")),
            ]
        )
