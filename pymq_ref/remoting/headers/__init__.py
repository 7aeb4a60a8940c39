"""Every custom header class of RocketMQ 4.9.4, typed (see :mod:`pymq_ref.remoting.header`).

Grouped by what they are for: :mod:`.send`, :mod:`.pull`, :mod:`.offsets`, :mod:`.clients`,
:mod:`.transaction`, :mod:`.admin`, :mod:`.namesrv`; all importable from here. ``ALL_HEADERS``
maps the Java simple class name to the class. Which request code uses which class is in
:mod:`pymq_ref.remoting.protocol`.
"""

from __future__ import annotations

from ..header import CommandHeader
from .admin import *  # noqa: F401,F403
from .clients import *  # noqa: F401,F403
from .namesrv import *  # noqa: F401,F403
from .offsets import *  # noqa: F401,F403
from .pull import *  # noqa: F401,F403
from .send import *  # noqa: F401,F403
from .transaction import *  # noqa: F401,F403

ALL_HEADERS: dict[str, type[CommandHeader]] = {
    cls.JAVA: cls for cls in sorted(CommandHeader.__subclasses__(), key=lambda c: c.__name__)
    if cls.__module__.startswith(__name__ + ".") and cls.__module__ != __name__ + ".pop"}
# 5.x POP headers live in .pop (HEADERS_5X), apart from the 4.9.4 set

__all__ = sorted(ALL_HEADERS) + ["ALL_HEADERS"]
