#!/bin/sh
# Compile the golden-frame recorder (src/wire) and RocketMQ 4.9.4's common + remoting modules.
#   tools/rocketmq_wire/build.sh
# Classpath: $WIRE_CLASSPATH, else the contents of /tmp/realrmq/classpath (a 4.9.4 build made by
# build-real-rocketmq.sh: RocketMQ classes, fastjson 1.2.69, Netty and the other jars).
# common and remoting (the protocol classes, RemotingCommand, the codecs) are recompiled here from
# $RMQ_SRC (default /tmp/src/rocketmq-all-4.9.4) with javac -g, as Maven builds the Apache
# release: fastjson reads constructor parameter names from the LocalVariableTable to decode
# classes without a no-argument constructor (ProducerInfo, MessageQueueForC, ...), and a build
# without -g cannot decode them. run.sh puts these classes first.
# Output: $WIRE_CLASSES (default _build/rocketmq-wire).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/classpath.sh"
out=${WIRE_CLASSES:-$here/../../_build/rocketmq-wire}
rm -rf "$out" && mkdir -p "$out"
list="$out/sources.txt"
find "$RMQ_SRC/common/src/main/java" "$RMQ_SRC/remoting/src/main/java" -name '*.java' > "$list"
find "$here/src/wire" -name '*.java' >> "$list"
javac -g -nowarn -XDsuppressNotes -encoding UTF-8 -d "$out" -cp "$WIRE_CP" @"$list"
rm -f "$list"
echo "rocketmq wire: classes in $out (common + remoting of $RMQ_SRC compiled with -g, and src/wire)"
