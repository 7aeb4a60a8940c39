#!/bin/sh
# Run one recording program:  tools/rocketmq_client_logic/run.sh clientlogic.AllocateCheck IN OUT
# The client's log goes to a temporary folder (never ~/logs); String.getBytes() is UTF-8.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
real=${PYMQ_REAL_ROCKETMQ:-/tmp/realrmq}
out=${CLIENT_LOGIC_CLASSES:-$here/../../_build/rocketmq-client-logic}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
timeout 600 java -Dfile.encoding=UTF-8 -Drocketmq.client.logRoot="$logs" -Duser.home="$logs" \
  -cp "$out:$(cat "$real/classpath")" "$@"
