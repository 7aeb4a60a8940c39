"""The RocketMQ 4.x remoting protocol: what name servers, brokers and clients say to each other.

Theory of operation. Every message on a RocketMQ connection is a *frame*: a length, a header
(JSON or RocketMQ's binary layout) and a body. A frame carries one :class:`RemotingCommand` — a
request (a ``RequestCode``) or a response (a ``ResponseCode``), matched by ``opaque``, with its
parameters as ``extFields`` (string to string) that a typed *custom header* reads and writes, and a
body that is a message, stored records or a JSON bean. Both ends may send requests on one
connection; a oneway request gets no answer.

Layers, from bytes up (nothing below ``transport`` touches a socket, a clock or a thread):

=================  ==================================================================================
``codes``          request and response codes, languages, serialize types, MQVersion ordinals
``command``        :class:`RemotingCommand`, an immutable value
``header``         the custom-header machinery (Java names and types, lenient decoding as 4.9.4)
``headers``        every custom header class of 4.9.4, declared once, with a meaning per field
``bodies``         every JSON body as a dataclass bean; fastjson's output and a tolerant reader
``codec``          frames <-> commands, both header serializations, spans for the hex view
``connection``     a sans-IO connection (h11-style): bytes in, events out; commands in, bytes out
``dispatch``       what a server does with a request (processors by code, errors, oneway)
``protocol``       the table: code -> who serves it, header and body classes
``record``         a frame as a JSON-ready record (for captures and reports)
``transport``      thin asyncio shells: :class:`~.transport.RemotingServer`, :class:`~.transport.RemotingClient`
``proxy``          ``pymq proxy``: a recording relay
=================  ==================================================================================

Byte compatibility with RocketMQ 4.9.4 is the contract: the encoders reproduce the bytes of the
real 4.9.4 encoders (``corpus/frames/`` was recorded from them), the decoders read what they read.
This package knows nothing of brokers or name servers (:mod:`pymq_ref.namesrv`, :mod:`pymq_ref.broker`
and :mod:`pymq_ref.client` build on it). Sources: ``remoting/src/main/java/org/apache/rocketmq/
remoting/`` and ``common/src/main/java/org/apache/rocketmq/common/protocol/`` at tag
``rocketmq-all-4.9.4``.
"""

from .codec import MAX_FRAME_LENGTH, DecodedFrame, decode, encode  # noqa: F401
from .codes import LanguageCode, RequestCode, ResponseCode, SerializeType  # noqa: F401
from .command import RemotingCommand  # noqa: F401
from .errors import FrameError, RemotingError  # noqa: F401
