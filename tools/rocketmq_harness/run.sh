#!/bin/sh
# Run one harness class:  tools/rocketmq_harness/run.sh gen.CorpusCheck ARGS...
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/classpath.sh"
out=${HARNESS_CLASSES:-$here/../../_build/rocketmq-harness}
exec timeout 300 java --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED \
  --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
  -cp "$out:$DEPS" "$@"
