"""The command line's last step: exit with the outcome's code without Python's interpreter teardown.

After a run the teardown (every module's and object's clean-up: pyarrow, py4j, pyspark and the rest) took 0.1-0.8 s
of wall time after the result was printed, with nothing left to do: the run is committed and said. What a normal
exit does that matters is done here first: every ``atexit`` function (logging's flush and close among them, and any
a plugin registered), then stdout and stderr flushed. A process with a thread still working (one not a daemon:
a normal exit would wait for it) or streams that cannot be flushed (a reader gone) exits the normal way.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


def exit_now(code: int) -> NoReturn:
    if any(t is not threading.main_thread() and not t.daemon and t.is_alive() for t in threading.enumerate()):
        sys.exit(code)  # a normal exit joins it
    atexit._run_exitfuncs()  # noqa: SLF001 - what sys.exit would run, in the same order; each runs once
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a reader gone, or stderr closed after a broken pipe: the normal exit copes
        sys.exit(code)
    os._exit(code)
