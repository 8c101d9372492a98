"""A scripted port for the documents' examples (tests/cli/doc_examples.py): it answers what a document shows.

Usage: doc_port.py hello ANSWER_FILE
         answers hello with the JSON of ANSWER_FILE, every open `unsupported` (so a run is NOT SUPPORTED once the
         harness has read the handshake) and every close `ok`.
       doc_port.py exchange TRANSCRIPT_FILE LOG_FILE
         answers each request whose id the transcript (a JSON list of [">" or "<", line]) shows with the answer
         shown after it, and the requests it leaves out with the numpy caches of examples/python (on PYTHONPATH),
         which see every request so that their state follows the exchange; every request is logged to LOG_FILE.
"""
import json
import sys


def hello(answer_file):
    answer = open(answer_file).read().strip()
    for line in sys.stdin:
        request = json.loads(line)
        op, ident = request.get("op"), request.get("id")
        if op == "hello":
            print(answer, flush=True)
        elif op == "close":
            print(json.dumps({"id": ident, "ok": True}), flush=True)
        else:
            print(json.dumps({"id": ident, "ok": False, "error": "unsupported"}), flush=True)


def exchange(transcript_file, log_file):
    import numpy_port
    from kvconform_port import Port

    shown, last_request = {}, None
    for direction, text in json.load(open(transcript_file)):
        if direction == ">":
            last_request = json.loads(text)["id"]
        else:
            shown[last_request] = text
    port = Port("numpy", numpy_port.CACHES, digest=False)
    with open(log_file, "w") as log:
        for line in sys.stdin:
            log.write(line)
            log.flush()
            request = json.loads(line)
            answer = port.handle(request)
            print(shown.get(request["id"], json.dumps(answer)), flush=True)


if __name__ == "__main__":
    {"hello": hello, "exchange": exchange}[sys.argv[1]](*sys.argv[2:])
