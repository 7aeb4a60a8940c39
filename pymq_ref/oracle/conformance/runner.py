"""Plays scenarios against a live name server + broker and judges every answer.

The only I/O of the kit: a :class:`~pymq_ref.remoting.transport.RemotingClient` (one connection per
address, as a client has) whose dispatcher takes the requests the broker sends us
(CHECK_TRANSACTION_STATE), a tap on those connections that keeps each answer's bytes for the hex
views, and plain sockets for :class:`~.steps.Raw` steps. Everything it decides comes from the pure
parts: the steps (:mod:`.steps`), the normalization (:mod:`.normalize`) and the expectations
recorded from 4.9.4 (:mod:`.expected`).

Per scenario the outcome is ``pass``, ``fail`` (with the steps that differ or whose checks failed)
or ``not supported`` (a step met a feature the broker lacks: a request code answered
REQUEST_CODE_NOT_SUPPORTED, or a step's own ``unsupported`` rule). ``record=True`` plays the same
steps and returns the answers as the new expectations instead of comparing.

Legal call order: ``Runner(...)``, then ``await run(scenarios)`` once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from pymq_ref.remoting.codec import decode, frame_length
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import RequestDispatcher
from pymq_ref.remoting.errors import RemotingError
from pymq_ref.remoting.transport import RemotingClient, parse_address

from .normalize import Difference, differences, normalize
from .steps import Await, Call, Compare, ExpectRequest, Oneway, Poll, Raw, Scenario, Start, Vars

PASS, FAIL, NOT_SUPPORTED = "pass", "fail", "not supported"


@dataclass
class StepResult:
    """One step's outcome: the normalized answers, their differences, failed checks, the frames."""

    name: str
    expected: Any = None
    actual: Any = None
    differences: list[Difference] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    expected_frame: bytes | None = None
    actual_frame: bytes | None = None
    request_code: int | None = None

    @property
    def ok(self) -> bool:
        return not self.differences and not self.failures


@dataclass
class ScenarioResult:
    id: str
    group: str
    title: str
    status: str = PASS
    reason: str = ""
    steps: list[StepResult] = field(default_factory=list)
    seconds: float = 0.0


class _Unsupported(Exception):
    pass


class _Abort(Exception):
    pass


class FrameTap:
    """Keeps the bytes of every frame a connection receives, by (is response, opaque)."""

    def __init__(self):
        self.buffer = bytearray()
        self.frames: dict[tuple[bool, int], bytes] = {}
        self.error: str | None = None  # why a frame the peer sent does not decode (the connection then closes)

    def feed(self, data: bytes) -> None:
        self.buffer += data
        while True:
            try:
                length = frame_length(self.buffer, 0, max_frame_length=1 << 30)
            except Exception as e:  # noqa: BLE001 — the connection itself closes on bad frames
                self.error = f"{e} (bytes {bytes(self.buffer[:16]).hex()}...)"
                self.buffer.clear()
                return
            if length is None or len(self.buffer) < length:
                return
            frame = bytes(self.buffer[:length])
            del self.buffer[:length]
            try:
                cmd = decode(frame).command
            except Exception as e:  # noqa: BLE001
                self.error = f"{e} (frame {frame[:24].hex()}...)"
                continue
            if len(self.frames) > 4096:
                self.frames.pop(next(iter(self.frames)))
            self.frames[(cmd.is_response, cmd.opaque)] = frame


class Runner:
    """Plays scenarios against ``broker`` (and ``namesrv``) — see the module docstring."""

    def __init__(self, broker: str, namesrv: str | None = None, *, expected: dict | None = None,
                 record: bool = False, run_id: str | None = None, skip_slow: bool = False,
                 check_timeout: float | None = None, progress=None):
        parse_address(broker)
        if namesrv:
            parse_address(namesrv)
        self.vars = Vars(run_id or secrets.token_hex(3), broker, namesrv, born_timestamp=int(time.time() * 1000))
        self.expected = expected or {}
        self.record = record
        self.skip_slow = skip_slow
        self.check_timeout = check_timeout
        self.progress = progress
        self.incoming: asyncio.Queue | None = None
        self.taps: dict[int, FrameTap] = {}

    # -- set-up -----------------------------------------------------------------------------
    async def _open(self) -> None:
        self.incoming = asyncio.Queue()
        self.taps = {}
        dispatcher = RequestDispatcher()

        def take(request: RemotingCommand, channel):
            self.incoming.put_nowait((request, channel))
            return None

        for code in (RequestCode.CHECK_TRANSACTION_STATE, RequestCode.NOTIFY_CONSUMER_IDS_CHANGED,
                     RequestCode.GET_CONSUMER_RUNNING_INFO):
            dispatcher.register(code, take)
        self.client = RemotingClient(dispatcher, name="conformance", close_on_timeout=False)

    async def _channel(self, target: str):
        address = self.vars.broker if target == "broker" else self.vars.namesrv
        channel = await self.client.channel(address)
        protocol = channel._protocol
        if id(protocol) not in self.taps:
            tap = self.taps[id(protocol)] = FrameTap()
            original = protocol.data_received

            def data_received(data: bytes, _tap=tap, _original=original) -> None:
                _tap.feed(data)
                _original(data)

            protocol.data_received = data_received
        return channel, self.taps[id(protocol)]

    async def _discover(self) -> None:
        """The broker's name and cluster from the name server's cluster table (when given)."""
        if not self.vars.namesrv:
            return
        try:
            answer = await self.client.invoke(self.vars.namesrv, RemotingCommand.request(
                RequestCode.GET_BROKER_CLUSTER_INFO), 5.0)
            from pymq_ref.remoting.bodies.bean import parse_json
            info = parse_json(answer.body or b"{}")
        except Exception:  # noqa: BLE001 — the namesrv scenarios will report it
            return
        for name, data in (info.get("brokerAddrTable") or {}).items():
            if self.vars.broker in (data.get("brokerAddrs") or {}).values():
                cluster = data.get("cluster") or self.vars.cluster
                self.vars = dataclasses.replace(self.vars, broker_name=name, cluster=cluster)
                return

    # -- running ----------------------------------------------------------------------------
    async def run(self, scenarios: list[Scenario]) -> list[ScenarioResult]:
        """Each scenario on connections of its own (a fresh client: its frames do not depend on the
        scenarios before it)."""
        await self._open()
        try:
            await self._discover()
        finally:
            await self.client.close()
        results = []
        for scenario in scenarios:
            if self.progress:
                self.progress(f"{scenario.id} ...")
            await self._open()
            try:
                results.append(await self._scenario(scenario))
            finally:
                await self.client.close()
            if self.progress:
                self.progress(f"{scenario.id}: {results[-1].status} {results[-1].reason}".rstrip())
        return results

    async def _scenario(self, scenario: Scenario) -> ScenarioResult:
        result = ScenarioResult(scenario.id, scenario.group, scenario.title)
        began = time.monotonic()
        if scenario.needs_namesrv and not self.vars.namesrv:
            result.status, result.reason = NOT_SUPPORTED, "needs the name server (--namesrv)"
            return result
        if scenario.slow and self.skip_slow:
            result.status, result.reason = NOT_SUPPORTED, "slow scenario skipped (--skip-slow)"
            return result
        if not self.record and scenario.id not in self.expected:
            result.status, result.reason = FAIL, "no recorded 4.9.4 answer for this scenario"
            return result
        v = self.vars
        pending: dict[str, tuple[asyncio.Future, FrameTap, int]] = {}
        try:
            for step in scenario.steps:
                v = await self._step(scenario, step, v, pending, result)
        except _Unsupported as e:
            result.status, result.reason = NOT_SUPPORTED, str(e)
        except _Abort as e:
            result.status, result.reason = FAIL, str(e)
        except (RemotingError, OSError, asyncio.TimeoutError) as e:
            result.status, result.reason = FAIL, f"{type(e).__name__}: {e}"
            bad = [tap.error for tap in self.taps.values() if tap.error]
            if bad:
                result.reason += "; the broker sent a frame that does not decode: " + bad[0]
        except Exception as e:  # noqa: BLE001 — an answer the steps cannot read fails its scenario, not the run
            result.status, result.reason = FAIL, f"cannot go on: {type(e).__name__}: {e}"
        finally:
            for future, _, _ in pending.values():
                future.cancel()
        if result.status == PASS and any(not s.ok for s in result.steps):
            result.status = FAIL
            bad = [s.name for s in result.steps if not s.ok]
            result.reason = "differs from 4.9.4 at: " + ", ".join(bad)
        result.seconds = time.monotonic() - began
        return result

    def _expected_step(self, scenario: Scenario, name: str) -> dict | None:
        return (self.expected.get(scenario.id) or {}).get("steps", {}).get(name)

    async def _invoke(self, target: str, request: RemotingCommand, timeout: float):
        channel, tap = await self._channel(target)
        response = await channel.invoke(request, timeout)
        return response, tap.frames.pop((True, response.opaque), None)

    async def _step(self, scenario: Scenario, step, v: Vars, pending: dict, result: ScenarioResult) -> Vars:
        if isinstance(step, Start):
            channel, tap = await self._channel(step.target)
            request = step.build(v)
            future = asyncio.ensure_future(channel.invoke(request, 3600.0))
            pending[step.name] = (future, tap, request.code)
            if step.still_pending_after:
                await asyncio.sleep(step.still_pending_after)
                if future.done():
                    response = future.exception() or future.result()
                    raise _Abort(f"{step.name}: answered at once ({response!r}); the request should have been held")
            return v
        if isinstance(step, Oneway):
            channel, _ = await self._channel(step.target)
            channel.invoke_oneway(step.build(v))
            return v
        if isinstance(step, Await):
            future, tap, code = pending.pop(step.name)
            try:
                response = await asyncio.wait_for(future, step.timeout)
            except asyncio.TimeoutError:
                raise _Abort(f"{step.name}: no answer within {step.timeout:g} s") from None
            frame = tap.frames.pop((True, response.opaque), None)
            return self._judge(scenario, step.name, step, v, response, frame, code, result)
        if isinstance(step, Call):
            request = step.build(v)
            response, frame = await self._invoke(step.target, request, step.timeout)
            if step.compare is None and step.required and response.code != ResponseCode.SUCCESS:
                raise _Unsupported(f"set-up step {step.name!r} answered {response.code_name} ({response.remark})")
            if step.unsupported is not None:
                reason = step.unsupported(response)
                if reason:
                    raise _Unsupported(reason)
            return self._judge(scenario, step.name, step, v, response, frame, request.code, result)
        if isinstance(step, Poll):
            deadline = time.monotonic() + step.timeout
            while True:
                request = step.build(v)
                response, frame = await self._invoke(step.target, request, 5.0)
                if step.until(v, response):
                    break
                self._check_served(scenario, step.name, response, request.code)
                if time.monotonic() > deadline:
                    result.steps.append(StepResult(step.name, failures=[
                        f"still not there after {step.timeout:g} s; last answer {response!r}"]))
                    raise _Abort(f"{step.name}: gave up after {step.timeout:g} s")
                await asyncio.sleep(step.every)
            return self._judge(scenario, step.name, step, v, response, frame, request.code, result)
        if isinstance(step, ExpectRequest):
            timeout = self.check_timeout or step.timeout
            deadline = time.monotonic() + timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _Abort(f"{step.name}: the broker sent no {RequestCode(step.code).name} within {timeout:g} s")
                try:
                    request, channel = await asyncio.wait_for(self.incoming.get(), left)
                except asyncio.TimeoutError:
                    continue
                if request.code == step.code:
                    break
            tap = self.taps.get(id(channel._protocol))
            frame = tap.frames.pop((False, request.opaque), None) if tap else None
            v = self._judge(scenario, step.name, step, v, request, frame, None, result, outcome="request")
            if step.reply is not None:
                channel.invoke_oneway(step.reply(v, request))
            return v
        if isinstance(step, Raw):
            outcome, response, frame = await self._raw(step, v)
            return self._judge(scenario, step.name, step, v, response, frame, None, result, outcome=outcome)
        raise TypeError(f"unknown step {step!r}")

    async def _raw(self, step: Raw, v: Vars):
        host, port = parse_address(v.broker if step.target == "broker" else v.namesrv)
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(step.data(v))
            await writer.drain()
            data = bytearray()
            try:
                while True:
                    chunk = await asyncio.wait_for(reader.read(65536), step.timeout)
                    if not chunk:
                        return ("closed", None, None) if not data else ("answer", decode(bytes(data)).command,
                                                                         bytes(data))
                    data += chunk
                    length = frame_length(data, 0, max_frame_length=1 << 30)
                    if length is not None and len(data) >= length:
                        return "answer", decode(bytes(data[:length])).command, bytes(data[:length])
            except asyncio.TimeoutError:
                return "no answer", None, None
            except ConnectionError:
                return "closed", None, None
        finally:
            writer.close()

    def _check_served(self, scenario: Scenario, name: str, response: RemotingCommand | None, request_code: int) -> None:
        """REQUEST_CODE_NOT_SUPPORTED where 4.9.4 served the request: the scenario is not supported."""
        if response is None or response.code != ResponseCode.REQUEST_CODE_NOT_SUPPORTED or self.record:
            return
        exp = self._expected_step(scenario, name)
        if exp is not None and exp["answer"].get("code") != ResponseCode.REQUEST_CODE_NOT_SUPPORTED:
            raise _Unsupported(f"{name}: the broker does not serve request code {request_code}")

    def _judge(self, scenario: Scenario, name: str, step, v: Vars, response: RemotingCommand | None,
               frame: bytes | None, request_code: int | None, result: ScenarioResult, outcome: str = "answer") -> Vars:
        how: Compare | None = getattr(step, "compare", None)
        sr = StepResult(name, actual_frame=frame, request_code=request_code)
        if how is not None:
            if outcome == "answer" and request_code is not None:
                self._check_served(scenario, name, response, request_code)
            sr.actual = normalize(response, v, how, outcome)
            if not self.record:
                exp = self._expected_step(scenario, name)
                if exp is None:
                    sr.failures.append("no recorded 4.9.4 answer for this step")
                else:
                    sr.expected = exp["answer"]
                    sr.expected_frame = bytes.fromhex(exp["frame"]) if exp.get("frame") else None
                    sr.differences = differences(sr.expected, sr.actual)
        for check in getattr(step, "checks", ()):
            try:
                problem = check(v, response)
            except Exception as e:  # noqa: BLE001 — a check that cannot read the answer is a failure
                problem = f"{type(e).__name__}: {e}"
            if problem:
                sr.failures.append(problem)
        result.steps.append(sr)
        save = getattr(step, "save", None)
        if save is not None and response is not None:
            try:
                v = v.with_saved(save(v, response))
            except Exception as e:  # noqa: BLE001
                sr.failures.append(f"cannot read the answer: {type(e).__name__}: {e}")
                raise _Abort(f"{name}: the answer lacks what later steps need ({e})") from None
        return v


def expectations(results: list[ScenarioResult]) -> dict:
    """What a recording run keeps: per scenario, per compared step, the normalized answer and its bytes."""
    out = {}
    for r in results:
        steps = {s.name: {"answer": s.actual, "frame": s.actual_frame.hex() if s.actual_frame else None}
                 for s in r.steps if s.actual is not None}
        out[r.id] = {"status": r.status, "reason": r.reason, "steps": steps}
    return out
