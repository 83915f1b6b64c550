"""The command line's exit without the interpreter's teardown keeps what a normal exit does: the code, buffered
output, atexit functions, and a thread still working is waited for."""

import subprocess
import sys
import textwrap


def _run(body: str) -> subprocess.CompletedProcess:
    script = textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)


def test_exit_keeps_the_code_buffered_output_and_atexit_functions():
    done = _run("""
        import atexit, logging, sys
        from hudi_cluster_core.process_exit import exit_now
        logging.basicConfig(stream=sys.stderr, format="%(message)s")
        atexit.register(lambda: print("atexit ran"))
        sys.stdout.write("result " * 2000)  # more than a pipe's buffer: flushed in parts, the rest at exit
        logging.getLogger("x").warning("a warning")
        exit_now(3)
    """)
    assert done.returncode == 3
    assert done.stdout == "result " * 2000 + "atexit ran\n"
    assert done.stderr == "a warning\n"


def test_a_thread_still_working_is_waited_for():
    done = _run("""
        import threading, time
        from hudi_cluster_core.process_exit import exit_now
        def work():
            time.sleep(0.3)
            print("thread finished", flush=True)
        threading.Thread(target=work).start()
        exit_now(0)
    """)
    assert done.returncode == 0
    assert done.stdout == "thread finished\n"
