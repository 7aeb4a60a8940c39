# RocketMQ 4.9.4's store dependencies, from Debian packages (sourced by build.sh and run.sh).
DEPS=""
for jar in commons-lang3 commons-validator guava jna lz4-java netty-buffer netty-codec netty-common \
           netty-handler netty-resolver netty-transport slf4j-api zstd-jni; do
  if [ ! -f "/usr/share/java/$jar.jar" ]; then
    echo "missing /usr/share/java/$jar.jar: apt-get install default-jdk-headless libcommons-lang3-java" \
         "libcommons-validator-java libguava-java libjna-java liblz4-java libnetty-java libslf4j-java" \
         "libzstd-jni-java" >&2
    exit 2
  fi
  DEPS="$DEPS${DEPS:+:}/usr/share/java/$jar.jar"
done
