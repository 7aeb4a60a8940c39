"""The broker's tables of connected clients: ``ConsumerManager`` and ``ProducerManager`` (4.9.4).

* consumers: group -> :class:`ConsumerGroupInfo` (the channels of its clients, how the group
  consumes, its subscriptions by topic). :meth:`ConsumerManager.register_consumer` is what a
  HEART_BEAT does for each consumer group (``updateChannel`` + ``updateSubscription``) and says
  whether the group changed — the caller then sends NOTIFY_CONSUMER_IDS_CHANGED to every member.
* producers: group -> channels; a transaction check goes to one of them.

A channel is any hashable object (the transport's :class:`~pymq_ref.remoting.transport.Channel`).
Pure bookkeeping: no I/O, no clock reads (timestamps are passed in).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pymq_ref.remoting.bodies import SubscriptionData


@dataclass
class ClientChannelInfo:
    channel: object
    client_id: str
    language: str
    version: int
    last_update_timestamp: int = 0


@dataclass
class ConsumerGroupInfo:
    group_name: str
    consume_type: str | None = None
    message_model: str | None = None
    consume_from_where: str | None = None
    channels: dict = field(default_factory=dict)  # channel -> ClientChannelInfo (insertion order)
    subscriptions: dict[str, SubscriptionData] = field(default_factory=dict)
    last_update_timestamp: int = 0

    def all_channels(self) -> list:
        return list(self.channels)

    def all_client_ids(self) -> list[str]:
        return [info.client_id for info in self.channels.values()]

    def find_channel(self, client_id: str) -> ClientChannelInfo | None:
        for info in self.channels.values():
            if info.client_id == client_id:
                return info
        return None

    def update_channel(self, info: ClientChannelInfo, consume_type, message_model, consume_from_where,
                       now_ms: int) -> bool:
        """``updateChannel``: True when the channel is new to the group."""
        self.consume_type, self.message_model, self.consume_from_where = consume_type, message_model, consume_from_where
        old = self.channels.get(info.channel)
        updated = old is None
        if old is None or old.client_id != info.client_id:
            self.channels[info.channel] = info
            old = info
        self.last_update_timestamp = now_ms
        old.last_update_timestamp = now_ms
        return updated

    def update_subscription(self, subs: list[SubscriptionData], now_ms: int) -> bool:
        """``updateSubscription``: new topics added, newer versions replace, topics not listed removed."""
        updated = False
        for sub in subs:
            old = self.subscriptions.get(sub.topic)
            if old is None:
                self.subscriptions[sub.topic] = sub
                updated = True
            elif sub.sub_version > old.sub_version:
                self.subscriptions[sub.topic] = sub
        listed = {s.topic for s in subs}
        for topic in [t for t in self.subscriptions if t not in listed]:
            del self.subscriptions[topic]
            updated = True
        self.last_update_timestamp = now_ms
        return updated


class ConsumerManager:
    def __init__(self):
        self.groups: dict[str, ConsumerGroupInfo] = {}

    def get(self, group: str) -> ConsumerGroupInfo | None:
        return self.groups.get(group)

    def register_consumer(self, group: str, info: ClientChannelInfo, consume_type, message_model,
                          consume_from_where, subs: list[SubscriptionData], now_ms: int) -> bool:
        g = self.groups.get(group)
        if g is None:
            g = self.groups[group] = ConsumerGroupInfo(group, consume_type, message_model, consume_from_where)
        r1 = g.update_channel(info, consume_type, message_model, consume_from_where, now_ms)
        r2 = g.update_subscription(subs, now_ms)
        return r1 or r2

    def unregister_consumer(self, group: str, channel) -> bool:
        """``unregisterConsumer``: True when the channel was a member (the group is dropped once empty)."""
        g = self.groups.get(group)
        if g is None or g.channels.pop(channel, None) is None:
            return False
        if not g.channels:
            del self.groups[group]
        return True

    def channel_closed(self, channel) -> list[str]:
        """``doChannelCloseEvent``: the groups that lost a member (emptied ones are dropped)."""
        changed = []
        for name in list(self.groups):
            if self.unregister_consumer(name, channel):
                changed.append(name)
        return changed

    def scan_not_active(self, now_ms: int, expired_ms: int = 120_000) -> list[tuple[str, object]]:
        """``scanNotActiveChannel``: (group, channel) of members silent for longer than ``expired_ms``
        (the caller closes those channels, which removes them)."""
        return [(name, channel) for name, g in self.groups.items() for channel, info in g.channels.items()
                if now_ms - info.last_update_timestamp > expired_ms]


class ProducerManager:
    def __init__(self):
        self.groups: dict[str, dict] = {}  # group -> {channel: ClientChannelInfo}

    def register_producer(self, group: str, info: ClientChannelInfo, now_ms: int) -> None:
        members = self.groups.setdefault(group, {})
        old = members.get(info.channel)
        if old is None:
            members[info.channel] = old = info
        old.last_update_timestamp = now_ms

    def unregister_producer(self, group: str, channel) -> None:
        members = self.groups.get(group)
        if members is not None:
            members.pop(channel, None)
            if not members:
                del self.groups[group]

    def channel_closed(self, channel) -> None:
        for name in list(self.groups):
            self.unregister_producer(name, channel)

    def available_channel(self, group: str):
        """``getAvailableChannel``: a live channel of the group (the first open one), or None."""
        for channel in self.groups.get(group, {}):
            if not getattr(channel, "closed", False):
                return channel
        return None

    def find_channel(self, client_id: str):
        for members in self.groups.values():
            for channel, info in members.items():
                if info.client_id == client_id:
                    return channel
        return None
