"""Building responses in the broker server: a facade refusal (:class:`~pymq_ref.broker.response.BrokerError`)
becomes the code and remark 4.9.4 answers with, around the response header of the request's kind.

The facade's :class:`~pymq_ref.broker.response.ResponseCode` and the remoting layer's share their
numbers; responses carry plain ints. No I/O.
"""

from __future__ import annotations

from pymq_ref.broker.response import BrokerError
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import stamp


def ok(header=None, body: bytes | None = None, **fields) -> RemotingCommand:
    return RemotingCommand.response(0, None, header, body, **fields)


def refused(e: BrokerError, header=None, **fields) -> RemotingCommand:
    """The response to a request the facade refused: its code and remark, ``header`` (usually the
    response header of the request's kind with no values, as Java creates it up front)."""
    return RemotingCommand.response(int(e.code), e.remark, header, **fields)


def answer_later(channel, request: RemotingCommand, response: RemotingCommand | None) -> None:
    """Write a late answer (a held pull's, for instance) if the connection is still there."""
    if response is None or request.is_oneway or getattr(channel, "closed", True):
        return
    try:
        channel.send_response(stamp(response, request))
    except Exception:  # the client went away meanwhile: nothing to answer
        pass
