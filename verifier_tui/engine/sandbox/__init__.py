"""The sandbox a run gets: the stage, the view or the copy, the limits, and what escapes it."""
