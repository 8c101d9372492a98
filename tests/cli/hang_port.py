"""A test fixture: the numpy port, which hangs once the file HANG exists: it appends the next request it reads other
than hello to HANG and sleeps for five minutes instead of answering. With --ignore-term it ignores SIGTERM while it sleeps (only SIGKILL
ends it). Usage: hang_port.py EXAMPLES HANG [--ignore-term] [numpy_port options]"""
import os
import signal
import sys
import time

examples, hang = sys.argv[1], sys.argv[2]
ignore_term = sys.argv[3:4] == ["--ignore-term"]
options = sys.argv[4:] if ignore_term else sys.argv[3:]
sys.path.insert(0, examples)
import numpy_port  # noqa: E402 - found through the path set above
from kvconform_port import protocol  # noqa: E402

run = protocol.run


def hanging(lines):
    for line in lines:
        if os.path.exists(hang) and b'"op":"hello"' not in line:
            if ignore_term:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
            with open(hang, "ab") as out:
                out.write(line)
            time.sleep(300)
        yield line


protocol.run = lambda port, lines, out, err: run(port, hanging(lines), out, err)
protocol.serve("hanging-numpy", numpy_port.CACHES, numpy_port.BUGS, options)
