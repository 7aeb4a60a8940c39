"""``DefaultRequestProcessor``: every request the 4.9.4 name server answers, answered the same way.

Each handler takes the request command (and the connection it came on) and returns the response
command: codes, remarks, headers and bodies as
``namesrv/src/main/java/org/apache/rocketmq/namesrv/processor/DefaultRequestProcessor.java`` builds
them — including its quirks, which the chapter on the name server lists:

* a request with a code it does not know gets **no answer at all** (the processor returns null and
  the caller times out), so that is what happens here too;
* headers are decoded leniently: a missing field is null and the request goes on (a missing topic is
  "No topic route info … for the topic: null"); where Java then fails on a null it answers
  SYSTEM_ERROR with the ``NullPointerException`` as remark, and so do we;
* route data goes out in standard JSON (quoted, sorted map keys) to clients of version ≥ 401 or that
  ask for it, in fastjson's default form (bare numeric keys) to older ones.

One deliberate difference: UPDATE_NAMESRV_CONFIG refuses to change the paths the name server writes
to (``kvConfigPath``, ``configStorePath``, ``rocketmqHome``), as RocketMQ itself does after 4.9.4.
No sockets here: the server (:mod:`pymq_ref.namesrv.server`) feeds requests in.
"""

from __future__ import annotations

import logging
import zlib
from typing import Any, Callable

from pymq_ref.formats.beans import DataVersion
from pymq_ref.remoting import headers as H
from pymq_ref.remoting.bodies import (BodyError, TopicConfigSerializeWrapper, decode_json, decode_register_body,
                                      encode_body)
from pymq_ref.remoting.codes import V3_0_11, V4_9_4, RequestCode, ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import ProcessorError, java_remark, java_str, npe_unboxing

from .config import BLACKLISTED_KEYS, format_properties, parse_properties
from .kvconfig import NAMESPACE_ORDER_TOPIC_CONFIG, KVConfigManager
from .route_info import RouteInfoManager

log = logging.getLogger("pymq_ref.namesrv")

#: Encoded routes kept at most (one per topic, JSON form and order config asked for).
ROUTE_CACHE_ENTRIES = 4096

FAQ_SUFFIX = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."


def java_npe(header_cls, field: str, where: str) -> ProcessorError:
    """SYSTEM_ERROR as 4.9.4 answers when it unboxes a null header field (a JDK 17 NPE text)."""
    return ProcessorError(ResponseCode.SYSTEM_ERROR, java_remark(npe_unboxing(header_cls, field), where))


def crc32_of(body: bytes | None) -> int:
    """``UtilAll.crc32``: CRC32 masked to 31 bits; 0 for no body."""
    return zlib.crc32(body) & 0x7FFFFFFF if body else 0


class NamesrvProcessor:
    """The name server's request handling over a :class:`RouteInfoManager` and a :class:`KVConfigManager`.

    ``clock`` returns ms; ``settings`` is the live NamesrvConfig + NettyServerConfig (strings).
    """

    def __init__(self, routes: RouteInfoManager, kv: KVConfigManager, clock: Callable[[], int],
                 settings: dict[str, str]):
        self.routes = routes
        self.kv = kv
        self.clock = clock
        self.settings = settings
        self._route_cache: dict[tuple, RemotingCommand] = {}
        self._route_cache_version = -1
        R = RequestCode
        self.handlers: dict[int, Callable[[RemotingCommand, Any], RemotingCommand]] = {
            R.PUT_KV_CONFIG: self.put_kv_config, R.GET_KV_CONFIG: self.get_kv_config,
            R.DELETE_KV_CONFIG: self.delete_kv_config, R.QUERY_DATA_VERSION: self.query_data_version,
            R.REGISTER_BROKER: self.register_broker, R.UNREGISTER_BROKER: self.unregister_broker,
            R.GET_ROUTEINFO_BY_TOPIC: self.get_route_info_by_topic,
            R.GET_BROKER_CLUSTER_INFO: self.get_broker_cluster_info,
            R.WIPE_WRITE_PERM_OF_BROKER: self.wipe_write_perm, R.ADD_WRITE_PERM_OF_BROKER: self.add_write_perm,
            R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER: self.get_all_topic_list,
            R.DELETE_TOPIC_IN_NAMESRV: self.delete_topic_in_namesrv,
            R.GET_KVLIST_BY_NAMESPACE: self.get_kv_list_by_namespace,
            R.GET_TOPICS_BY_CLUSTER: self.get_topics_by_cluster,
            R.GET_SYSTEM_TOPIC_LIST_FROM_NS: lambda req, ch: self._topic_list(self.routes.get_system_topic_list()),
            R.GET_UNIT_TOPIC_LIST: lambda req, ch: self._topic_list(self.routes.get_unit_topics()),
            R.GET_HAS_UNIT_SUB_TOPIC_LIST: lambda req, ch: self._topic_list(self.routes.get_has_unit_sub_topic_list()),
            R.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST:
                lambda req, ch: self._topic_list(self.routes.get_has_unit_sub_un_unit_topic_list()),
            R.UPDATE_NAMESRV_CONFIG: self.update_config, R.GET_NAMESRV_CONFIG: self.get_config,
        }

    # -- KV config ------------------------------------------------------------------------------
    def put_kv_config(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        h = req.header(H.PutKVConfigRequestHeader)
        if h.namespace is None or h.key is None:
            return RemotingCommand.response(ResponseCode.SYSTEM_ERROR, "namespace or key is null")
        self.kv.put(h.namespace, h.key, h.value)
        return RemotingCommand.response(ResponseCode.SUCCESS)

    def get_kv_config(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        h = req.header(H.GetKVConfigRequestHeader)
        value = self.kv.get(h.namespace, h.key)
        if value is not None:
            return RemotingCommand.response(ResponseCode.SUCCESS, None, H.GetKVConfigResponseHeader(value=value))
        return RemotingCommand.response(ResponseCode.QUERY_NOT_FOUND,
                                        f"No config item, Namespace: {java_str(h.namespace)} Key: {java_str(h.key)}",
                                        H.GetKVConfigResponseHeader())

    def delete_kv_config(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        h = req.header(H.DeleteKVConfigRequestHeader)
        self.kv.delete(h.namespace, h.key)
        return RemotingCommand.response(ResponseCode.SUCCESS)

    def get_kv_list_by_namespace(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        h = req.header(H.GetKVListByNamespaceRequestHeader)
        body = self.kv.kv_list_body(h.namespace)
        if body is not None:
            return RemotingCommand.response(ResponseCode.SUCCESS, body=body)
        return RemotingCommand.response(ResponseCode.QUERY_NOT_FOUND, f"No config item, Namespace: {java_str(h.namespace)}")

    # -- brokers --------------------------------------------------------------------------------
    def register_broker(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        h = req.header(H.RegisterBrokerRequestHeader)
        if h.body_crc32 != 0 and crc32_of(req.body) != h.body_crc32:
            return RemotingCommand.response(ResponseCode.SYSTEM_ERROR, "crc32 not match", H.RegisterBrokerResponseHeader())
        if h.broker_id is None:
            raise java_npe(H.RegisterBrokerRequestHeader, "brokerId", "pymq_ref.namesrv.processor.register_broker")
        try:
            if req.version >= V3_0_11:
                body = decode_register_body(req.body, h.compressed)
                wrapper, filters = body.topic_config_serialize_wrapper, body.filter_server_list
            else:
                wrapper = (decode_json(TopicConfigSerializeWrapper, req.body) if req.body is not None
                           else TopicConfigSerializeWrapper({}, DataVersion(0, 0)))
                filters = None
        except BodyError as e:
            log.warning("namesrv: REGISTER_BROKER from %s: %s", getattr(channel, "remote_address", "?"), e)
            raise ProcessorError(ResponseCode.SYSTEM_ERROR, java_remark(
                "org.apache.rocketmq.remoting.exception.RemotingCommandException: Failed to decode RegisterBrokerBody",
                "pymq_ref.namesrv.processor.register_broker")) from None
        result = self.routes.register_broker(h.cluster_name, h.broker_addr, h.broker_name, h.broker_id,
                                             h.ha_server_addr, wrapper, filters, channel, self.clock())
        return RemotingCommand.response(
            ResponseCode.SUCCESS, None,
            H.RegisterBrokerResponseHeader(ha_server_addr=result.ha_server_addr, master_addr=result.master_addr),
            self.kv.kv_list_body(NAMESPACE_ORDER_TOPIC_CONFIG))

    def unregister_broker(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        h = req.header(H.UnRegisterBrokerRequestHeader)
        if h.broker_id is None:
            raise java_npe(H.UnRegisterBrokerRequestHeader, "brokerId", "pymq_ref.namesrv.processor.unregister_broker")
        self.routes.unregister_broker(h.cluster_name, h.broker_addr, h.broker_name, h.broker_id)
        return RemotingCommand.response(ResponseCode.SUCCESS)

    def query_data_version(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        h = req.header(H.QueryDataVersionRequestHeader)
        try:
            version = decode_json(DataVersion, req.body) if req.body else None
        except BodyError:
            version = None
        changed = self.routes.is_broker_topic_config_changed(h.broker_addr, version)
        if not changed:
            self.routes.update_broker_info_update_timestamp(h.broker_addr, self.clock())
        stored = self.routes.query_broker_topic_config(h.broker_addr)
        return RemotingCommand.response(ResponseCode.SUCCESS, None, H.QueryDataVersionResponseHeader(changed=changed),
                                        encode_body(stored) if stored is not None else None)

    def wipe_write_perm(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        h = req.header(H.WipeWritePermOfBrokerRequestHeader)
        count = self.routes.operate_write_perm_of_broker(h.broker_name, wipe=True)
        return RemotingCommand.response(ResponseCode.SUCCESS, None, H.WipeWritePermOfBrokerResponseHeader(wipe_topic_count=count))

    def add_write_perm(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        h = req.header(H.AddWritePermOfBrokerRequestHeader)
        count = self.routes.operate_write_perm_of_broker(h.broker_name, wipe=False)
        return RemotingCommand.response(ResponseCode.SUCCESS, None, H.AddWritePermOfBrokerResponseHeader(add_topic_count=count))

    # -- routes ---------------------------------------------------------------------------------
    def get_route_info_by_topic(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        h = req.header(H.GetRouteInfoRequestHeader)
        standard = req.version >= V4_9_4 or h.accept_standard_json_only is True
        order_conf = None
        if self.settings.get("orderMessageEnable", "false").lower() == "true":
            order_conf = self.kv.get(NAMESPACE_ORDER_TOPIC_CONFIG, h.topic)
        answer = self._route_answer(h.topic, standard, order_conf)
        if answer is None:
            return RemotingCommand.response(
                ResponseCode.TOPIC_NOT_EXIST, f"No topic route info in name server for the topic: {java_str(h.topic)}{FAQ_SUFFIX}")
        return answer

    def _route_answer(self, topic: str | None, standard: bool, order_conf: str | None) -> RemotingCommand | None:
        """The SUCCESS answer carrying the encoded TopicRouteData of ``topic``, built once per
        version of the route tables: clients ask for the same routes every 30 s, and encoding is
        most of the cost of an answer (Java builds it every time; the bytes are the same). None
        when the topic has no route (never cached)."""
        if self._route_cache_version != self.routes.version:
            self._route_cache.clear()
            self._route_cache_version = self.routes.version
        key = (topic, standard, order_conf)
        answer = self._route_cache.get(key)
        if answer is None:
            route = self.routes.pickup_topic_route_data(topic)
            if route is None:
                return None
            route.order_topic_conf = order_conf
            answer = RemotingCommand.response(ResponseCode.SUCCESS, body=encode_body(route, standard=standard))
            if len(self._route_cache) >= ROUTE_CACHE_ENTRIES:
                self._route_cache.clear()
            self._route_cache[key] = answer
        return answer

    def get_broker_cluster_info(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        return RemotingCommand.response(ResponseCode.SUCCESS, body=encode_body(self.routes.get_all_cluster_info()))

    def get_all_topic_list(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        return self._topic_list(self.routes.get_all_topic_list())

    def get_topics_by_cluster(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        h = req.header(H.GetTopicsByClusterRequestHeader)
        return self._topic_list(self.routes.get_topics_by_cluster(h.cluster))

    def delete_topic_in_namesrv(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        h = req.header(H.DeleteTopicFromNamesrvRequestHeader)
        self.routes.delete_topic(h.topic, h.cluster_name or None)
        return RemotingCommand.response(ResponseCode.SUCCESS)

    @staticmethod
    def _topic_list(topics) -> RemotingCommand:
        return RemotingCommand.response(ResponseCode.SUCCESS, body=encode_body(topics))

    # -- configuration --------------------------------------------------------------------------
    def update_config(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        if req.body is not None:
            props = parse_properties(req.body.decode("utf-8", "replace"))
            if BLACKLISTED_KEYS & set(props):
                return RemotingCommand.response(ResponseCode.NO_PERMISSION, "Can not update config in black list.")
            for key, value in props.items():
                if key in self.settings:
                    self.settings[key] = value
        return RemotingCommand.response(ResponseCode.SUCCESS)

    def get_config(self, req: RemotingCommand, channel=None) -> RemotingCommand:
        return RemotingCommand.response(ResponseCode.SUCCESS, body=format_properties(self.settings).encode("utf-8"))
