"""User-facing errors.

Every error a user can cause (bad config, bad params, not a Hudi table, unreadable timeline file, corrupt
plan) is a :class:`HudiClusterError`: the CLI prints its message alone and exits with code 2, without a
stack trace. The message names the key, file or value and what is accepted. Anything else is a bug.
"""

from __future__ import annotations


class HudiClusterError(Exception):
    """Base of every error caused by input: the CLI exits 2 and prints only the message."""

    exit_code = 2


class ConfigError(HudiClusterError):
    """A configuration key or value is wrong (unknown key, bad type, out of range)."""


class TableError(HudiClusterError):
    """The path is not a readable Hudi table, or a table file is missing or corrupt."""


class StorageError(HudiClusterError):
    """The table's storage cannot be reached or used: unsupported scheme, unreachable endpoint, wrong
    credentials, missing bucket."""


class PlanError(HudiClusterError):
    """A clustering plan cannot be read, or cannot be built or executed as asked."""


class PluginError(HudiClusterError):
    """A strategy name does not resolve to an installed plugin, or a plugin misbehaves."""


class StrategyFailed(HudiClusterError):
    """A strategy's hook raised an error that is not one of these (a bug in the plugin, or in what it called): not
    bad input, so exit 1; the line names the strategy, its plugin and the error, ``-v`` shows the traceback."""

    exit_code = 1


class RunFailed(HudiClusterError):
    """A clustering failed while it ran (not because of its input); its instant was rolled back."""

    exit_code = 1


class RewriteMismatch(RunFailed):
    """A group's output differs from its input (run/digest.py: row counts, per-column digests, file footers);
    the group failed and the run's instant was rolled back."""


class WriteConflict(HudiClusterError):
    """A writer reached the clustering's file groups after the plan was made; the writer wins, the clustering was
    rolled back."""

    exit_code = 1


class TimelineChanged(TableError):
    """A timeline file listed a moment ago is gone (archived, or rolled back by another writer): read again."""

    exit_code = 1


class Interrupted(HudiClusterError):
    """Ctrl-C or SIGTERM stopped a run; its instant was rolled back."""

    exit_code = 130


class UpdateRejected(HudiClusterError):
    """The configured update strategy (``hoodie.clustering.updates.strategy``, Hudi's default: reject) refused a
    write that updates file groups under pending clustering; nothing was written. Not an input error: retry once
    the clustering completed, or configure an allowing strategy."""

    exit_code = 1
