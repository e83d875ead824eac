"""Watching: file changes in, coalesced re-runs out. No Textual here: the
``watch`` command and the TUI share all of it. What is watched and what
changed are the engine's own words (:mod:`verifier_tui.engine.changes`): the
session says the one, and takes the other, without importing the watcher;
which paths no run depends on is :mod:`verifier_tui.engine.filters`'s.

* :mod:`.channel`: one ``watchfiles.watch`` iterated in a thread, roots
  re-created watched again, a save's event burst settled into one change.
* :mod:`.threads`: the targets split into channels, their events turned into changes.
* :mod:`.watcher`: :class:`~.watcher.Watcher`, those threads in a child process
  (:mod:`.child`, which imports no asyncio) or in this one.
* :mod:`.scheduler`: one run at a time, at most one pending, nothing dropped.
* :mod:`.live`: the loop the faces share: watch the session's targets and
  request runs (re-reading the task, restarting the watch, holding changes
  while paused).
"""
