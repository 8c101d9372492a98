"""A test fixture: the numpy port, waiting DELAY seconds before each request; with LOG it appends every request
it reads and, at its end of input, "eof" to LOG. Usage: slow_port.py EXAMPLES DELAY LOG|- [numpy_port options]"""
import sys
import time

examples, delay, log = sys.argv[1], float(sys.argv[2]), sys.argv[3]
sys.path.insert(0, examples)
import numpy_port  # noqa: E402 - found through the path set above
from kvconform_port import protocol  # noqa: E402

run = protocol.run


def slow(lines):
    with open(log if log != "-" else "/dev/null", "ab") as out:
        for line in lines:
            out.write(line)
            out.flush()
            time.sleep(delay)
            yield line
        out.write(b"eof\n")


protocol.run = lambda port, lines, out, err: run(port, slow(lines), out, err)
protocol.serve("slow-numpy", numpy_port.CACHES, numpy_port.BUGS, sys.argv[4:])
