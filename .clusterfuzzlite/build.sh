#!/bin/bash -eu
# ClusterFuzzLite runs the same build as OSS-Fuzz.
exec "$SRC/kvconform/fuzz/build.sh"
