"""The vocabulary of a conformance scenario: pure, declarative steps and the values they read.

A :class:`Scenario` is a named list of steps. A step says what to send and what to check; it never
touches a socket (the runner, :mod:`.runner`, does). Requests are built by pure functions of a
:class:`Vars` value — the run's names (topics and groups carry a per-run id, so a broker that keeps
its store between runs answers the same way), the broker's address and name, and what earlier steps
saved from their answers (a message's CommitLog offset, a msgId).

Step kinds:

* :class:`Call` — a two-way request to the broker or the name server; its answer is compared with
  the recorded 4.9.4 answer and checked; values may be saved for later steps.
* :class:`Oneway` — a oneway request (no answer; a later step shows what it did).
* :class:`Start` / :class:`Await` — a request sent now and answered later (a held pull); ``Start``
  may check that nothing came back yet.
* :class:`Poll` — a request repeated until a predicate holds or a timeout passes (a delayed message
  appearing, a route registered).
* :class:`ExpectRequest` — wait for the broker to send *us* a request (CHECK_TRANSACTION_STATE) and
  answer it.
* :class:`Raw` — bytes that are not a valid request, on a fresh connection; the outcome (answer or
  connection closed) is compared.

Checks are pure functions ``(vars, command) -> message | None``: the message says what is wrong.
A step that meets a broker lacking a feature answers through ``unsupported(command) -> reason | None``:
the scenario then ends as "not supported" instead of failing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Mapping

from pymq_ref.remoting.command import RemotingCommand

Check = Callable[["Vars", RemotingCommand], "str | None"]
Build = Callable[["Vars"], RemotingCommand]
Save = Callable[["Vars", RemotingCommand], Mapping[str, object]]


@dataclass(frozen=True)
class Vars:
    """What a step's builder and checks may read: the run's names and earlier answers."""

    run: str
    broker: str
    namesrv: str | None = None
    broker_name: str = "broker-a"
    cluster: str = "DefaultCluster"
    saved: Mapping[str, object] = field(default_factory=dict)
    born_timestamp: int = 1700000000000  # the runner puts the run's start time here (a broker skips old half messages)

    def name(self, what: str) -> str:
        """A topic or group name private to this run (``cf-<run>-<what>``)."""
        return f"cf-{self.run}-{what}"

    def __getitem__(self, key: str):
        return self.saved[key]

    def with_saved(self, values: Mapping[str, object]) -> "Vars":
        return dataclasses.replace(self, saved={**self.saved, **values})


@dataclass(frozen=True)
class Compare:
    """How an answer is compared with the recorded one (see :mod:`.normalize`).

    ``ignore``: ext keys whose values vary from run to run (their presence is still compared);
    ``body``: ``"records"`` (stored messages, field by field), ``"json"`` (a JSON bean), ``"text"``,
    ``"length"`` or ``"ignore"``; ``remark``: compare the remark text.
    """

    ignore: tuple[str, ...] = ()
    body: str = "json"
    remark: bool = True
    ignore_body_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Call:
    name: str
    build: Build
    target: str = "broker"  # or "namesrv"
    compare: Compare | None = Compare()  # None: a set-up step, neither compared nor required to succeed
    checks: tuple[Check, ...] = ()
    save: Save | None = None
    unsupported: Callable[[RemotingCommand], "str | None"] | None = None
    timeout: float = 5.0
    required: bool = False  # a set-up step the scenario cannot do without: failing, it is "not supported"


@dataclass(frozen=True)
class Oneway:
    """A oneway request (no answer is expected; a later step shows its effect)."""

    name: str
    build: Build
    target: str = "broker"


@dataclass(frozen=True)
class Start:
    """Send now, answer later (collected by the :class:`Await` of the same name)."""

    name: str
    build: Build
    target: str = "broker"
    still_pending_after: float | None = 0.5  # seconds after which the answer must not have come yet


@dataclass(frozen=True)
class Await:
    name: str  # the Start's name
    compare: Compare | None = Compare()
    checks: tuple[Check, ...] = ()
    save: Save | None = None
    timeout: float = 30.0


@dataclass(frozen=True)
class Poll:
    """Repeat ``build`` every ``every`` seconds until ``until`` holds (then compare that answer)."""

    name: str
    build: Build
    until: Callable[[Vars, RemotingCommand], bool]
    target: str = "broker"
    compare: Compare | None = Compare()
    checks: tuple[Check, ...] = ()
    save: Save | None = None
    timeout: float = 20.0
    every: float = 0.25


@dataclass(frozen=True)
class ExpectRequest:
    """Wait for the broker to send us a request with ``code``; ``reply`` builds our answer (a oneway
    request on the same connection, e.g. END_TRANSACTION) from the vars and the received request."""

    name: str
    code: int
    reply: Callable[[Vars, RemotingCommand], RemotingCommand] | None = None
    compare: Compare | None = Compare(body="records")
    checks: tuple[Check, ...] = ()
    save: Save | None = None
    timeout: float = 75.0


@dataclass(frozen=True)
class Raw:
    """Bytes sent on a fresh connection; the outcome is an answer, or the connection closed."""

    name: str
    data: Callable[[Vars], bytes]
    target: str = "broker"
    compare: Compare | None = Compare()
    timeout: float = 5.0


Step = Call | Oneway | Start | Await | Poll | ExpectRequest | Raw


@dataclass(frozen=True)
class Scenario:
    """A named behaviour of 4.9.4, checked by its steps. ``slow``: waits on the broker's timers."""

    id: str
    group: str
    title: str
    steps: tuple[Step, ...]
    needs_namesrv: bool = False
    slow: bool = False
    doc: str = ""
