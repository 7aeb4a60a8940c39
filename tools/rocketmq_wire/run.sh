#!/bin/sh
# Run one recorder program:  tools/rocketmq_wire/run.sh wire.HeaderFrames CATALOG OUT
# common + remoting as build.sh compiled them (javac -g) come first, then the 4.9.4 build's
# classpath; version 401 is set before RemotingCommand loads
# (as MQClientAPIImpl, BrokerStartup and NamesrvStartup do); the time zone is pinned because
# QueueTimeSpan's JSON carries formatted local times.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/classpath.sh"
out=${WIRE_CLASSES:-$here/../../_build/rocketmq-wire}
exec timeout 600 java -Drocketmq.remoting.version=401 -Duser.timezone=UTC -Dfile.encoding=UTF-8 \
  -Dlogback.configurationFile="$here/logback.xml" -cp "$out:$WIRE_CP" "$@"
