"""Harbor trials and jobs: what the sandbox did, read back from the folders
Harbor wrote, and the inputs to replay it locally.

One job per module, each mirroring a named piece of Harbor 0.26.0:

- ``folders``: read a trial or job folder's files (``harbor/models/trial/paths.py``,
  ``result.py``, ``config.py``); telling one by its files is
  ``engine/task/target.py``'s, with every other kind of path.
- ``reading``: Harbor's JSON, logs, times and exception records, read without trust.
- ``ignore_rules``: gitignore patterns as the ``pathspec`` library Harbor
  uses matches them (for the digest).
- ``digest``: the task's content digest (``harbor/publisher/packager.py``) and
  what changed since the run.
- ``locate``: where the task is (``harbor/models/task/id.py``,
  ``harbor/tasks/client.py`` cache paths).
- ``runner_output``: the runner's own output recognised in ``test-stdout.txt``.
- ``phases``: the runner's phases as steps, one model for the sandbox (from
  its output) and the replay (from the runner's ``--phases-to``); the first
  wrong step explained; where the two part.
- ``facts``: mode, effective timeout (``harbor/trial/trial.py``), durations,
  failures hidden in ``trial.log``.
- ``sandbox``: the sandbox side of one trial or step.
- ``root_cause``: the first thing that went wrong in a trial, in Harbor's
  order (environment, agent, verifier; ``harbor/trial/trial.py``).
- ``trial_files``: a trial's Harbor files for reading (``trial.log``,
  ``exception.txt``, the agent's logs, the ATIF trajectory as a
  conversation, the instruction, the artifacts manifest).
- ``inputs``: the replay's workspace and verifier environment
  (``harbor/utils/env.py``, ``harbor/environments/base.py``).
- ``agreement``: sandbox against a local run.
- ``walkthrough``: everything about one trial or step, assembled; the JSON
  object of ``run TRIAL --json`` and a multi-step trial's steps.
- ``overview``: a job at a glance and a folder of jobs as a list, counted and
  averaged as Harbor does (``harbor/models/job/result.py``, ``harbor/metrics/``).
- ``replay``: the local run's plan: workspace, verifier, environment, timeout.
- ``trial_session``: a trial opened for replays, through one
  :class:`~verifier_tui.engine.session.Session` kept open (live reload).

``task.toml`` is read by the one reader, ``engine/task/config.py`` (through
``discovery.read_task_config``), as every other command reads it.

Nothing here imports Textual or the command line.
"""
