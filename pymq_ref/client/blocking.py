"""A blocking facade over the asyncio client, for scripts and notebooks: each object runs its
asyncio producer or consumer on a private event loop in a background thread.

    producer = Producer("pg", "127.0.0.1:9876"); producer.start()
    print(producer.send(Message("T", b"hi")).line())
    producer.shutdown()

Every coroutine method of the wrapped object becomes a blocking call (with the object's own
timeouts; ``call_timeout`` bounds how long the caller waits in any case); ``send_async`` returns a
``concurrent.futures.Future``. Plain listeners of a push consumer run on the consumer's thread pool, as
in Java. Legal call order: as the wrapped class; ``shutdown()`` always returns (after at most
``call_timeout`` seconds) and stops the thread — the object cannot be restarted.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading

from .consumer.lite_pull import DefaultLitePullConsumer
from .consumer.push import DefaultMQPushConsumer
from .producer import DefaultMQProducer
from .transaction import TransactionMQProducer


class LoopThread:
    """An event loop running in a daemon thread until :meth:`stop`."""

    def __init__(self, name: str = "pymq-client-loop"):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()
        pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self.loop.close()

    def run(self, coro, timeout: float | None = None):
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout} s") from None

    def call(self, fn, *args, **kwargs):
        async def call():
            return fn(*args, **kwargs)
        return self.run(call())

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        if threading.current_thread() is not self.thread:
            self.thread.join(10)


class _Blocking:
    _cls: type = object

    def __init__(self, *args, call_timeout: float = 60.0, **kwargs):
        self._loop_thread = LoopThread(f"pymq-{self._cls.__name__}")
        self._call_timeout = call_timeout
        self._target = self._loop_thread.call(self._cls, *args, **kwargs)

    @property
    def target(self):
        """The wrapped asyncio object (use it only from its loop)."""
        return self._target

    def __getattr__(self, name):
        attr = getattr(self._target, name)
        if not callable(attr):
            return attr
        if inspect.iscoroutinefunction(attr):
            def blocking(*args, **kwargs):
                return self._loop_thread.run(attr(*args, **kwargs), self._call_timeout)
        else:
            def blocking(*args, **kwargs):
                return self._loop_thread.call(attr, *args, **kwargs)
        blocking.__name__ = name
        blocking.__doc__ = attr.__doc__
        return blocking

    def shutdown(self) -> None:
        try:
            self._loop_thread.run(self._target.shutdown(), self._call_timeout)
        except Exception:
            pass
        finally:
            self._loop_thread.stop()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()


class Producer(_Blocking):
    _cls = DefaultMQProducer

    def send_async(self, msg, *args, **kwargs) -> concurrent.futures.Future:
        async def send():
            return await self._target.send_async(msg, *args, **kwargs)
        return asyncio.run_coroutine_threadsafe(send(), self._loop_thread.loop)


class TransactionProducer(Producer):
    _cls = TransactionMQProducer


class PushConsumer(_Blocking):
    _cls = DefaultMQPushConsumer


class LitePullConsumer(_Blocking):
    _cls = DefaultLitePullConsumer
