#!/bin/sh
# Compile the harness against an unmodified rocketmq-all-4.9.4 source tree.
#   RMQ_SRC=/path/to/rocketmq-all-4.9.4 tools/rocketmq_harness/build.sh
# Classes go to $HARNESS_CLASSES (default: _build/rocketmq-harness). Needs a JDK (17) and the
# Debian packages listed in README.md for RocketMQ's own dependencies.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${RMQ_SRC:?set RMQ_SRC to a rocketmq-all-4.9.4 source tree (see README.md)}"
. "$here/classpath.sh"
out=${HARNESS_CLASSES:-$here/../../_build/rocketmq-harness}
rm -rf "$out" && mkdir -p "$out"
src="$here/stubs:$RMQ_SRC/store/src/main/java:$RMQ_SRC/common/src/main/java"
src="$src:$RMQ_SRC/remoting/src/main/java:$RMQ_SRC/logging/src/main/java:$here/src"
javac -nowarn -XDsuppressNotes -encoding UTF-8 --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
  -d "$out" -sourcepath "$src" -cp "$DEPS" -implicit:class "$here"/src/gen/*.java
echo "rocketmq harness: classes in $out"
