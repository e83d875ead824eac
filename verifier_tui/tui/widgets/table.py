"""The table of the job screens: Textual's DataTable, its cells drawn again
once their columns' widths are known."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import DataTable

if TYPE_CHECKING:
    from collections.abc import Iterable

    from textual.widgets.data_table import RowKey


class Table(DataTable[Any]):
    """Textual 8.2.8 measures new rows' columns when the table is next idle,
    and caches each cell it draws under a key that holds no width. A frame
    drawn in between (the cursor's row is repainted as soon as rows arrive)
    kept those cells at the old widths until something else changed: on a
    busy machine the jobs list showed its first row cut to the headers'
    widths ("mul" for multi-step, "2026-12" for the date)."""

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        super()._update_dimensions(new_rows)
        self._update_count += 1  # the key of every cached cell, row and line
        self.refresh()
