"""The RocketMQ 4.x remoting protocol: placeholder docstring (rewritten below)."""
