#!/bin/sh
# Compile the recording programs against the real RocketMQ 4.9.4 client classes.
#   tools/rocketmq_client_logic/build.sh
# The classpath is read from $PYMQ_REAL_ROCKETMQ/classpath (default /tmp/realrmq, the build made by
# build-real-rocketmq.sh); classes go to $CLIENT_LOGIC_CLASSES (default _build/rocketmq-client-logic).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
real=${PYMQ_REAL_ROCKETMQ:-/tmp/realrmq}
[ -f "$real/classpath" ] || { echo "no RocketMQ 4.9.4 build at $real (set PYMQ_REAL_ROCKETMQ)" >&2; exit 2; }
out=${CLIENT_LOGIC_CLASSES:-$here/../../_build/rocketmq-client-logic}
rm -rf "$out" && mkdir -p "$out"
javac -nowarn -encoding UTF-8 -d "$out" -cp "$(cat "$real/classpath")" "$here"/src/clientlogic/*.java
echo "rocketmq client logic: classes in $out"
