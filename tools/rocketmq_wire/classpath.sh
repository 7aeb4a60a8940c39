# Classpath of the real RocketMQ 4.9.4 build (sourced by build.sh and run.sh).
if [ -n "${WIRE_CLASSPATH:-}" ]; then
  WIRE_CP=$WIRE_CLASSPATH
elif [ -f /tmp/realrmq/classpath ]; then
  WIRE_CP=$(cat /tmp/realrmq/classpath)
else
  echo "no RocketMQ 4.9.4 classpath: build it (see tools/rocketmq_wire/README.md) or set WIRE_CLASSPATH" >&2
  exit 2
fi
RMQ_SRC=${RMQ_SRC:-/tmp/src/rocketmq-all-4.9.4}
