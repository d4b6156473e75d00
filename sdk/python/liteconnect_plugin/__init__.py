"""Write liteconnect plugins in Python: connectors that run as separate programs on ``plugin.path``.

Standard library only. The module speaks the plugin protocol (docs/plugins/protocol.md, version 1.1):
newline-delimited JSON on stdin and stdout. Write logs to stderr (``log``); never print to stdout.

A source plugin::

    from liteconnect_plugin import SourceConnector, SourceTask, ConfigKey, Record, run

    class Connector(SourceConnector):
        def config_def(self):
            return [ConfigKey("topic", "STRING", importance="HIGH", documentation="Where to write")]

        def task_configs(self, config, max_tasks):
            return [config]

    class Task(SourceTask):
        def start(self, config, context):
            stored = context.offset({"device": "d1"}) or {}
            self.seq = stored.get("seq", 0)
            self.topic = config["topic"]

        def poll(self, context):
            self.seq += 1
            return [Record(self.topic, {"seq": self.seq},
                           source_partition={"device": "d1"}, source_offset={"seq": self.seq})]

    run(Connector, source_task=Task)
"""

import base64
import json
import sys
import threading
import traceback

PROTOCOL_VERSION = 1
#: The minor version of the protocol this module speaks (1: long-lived connectors that may ask for
#: a reconfiguration; the sink task's assigned partitions).
PROTOCOL_MINOR = 1

__all__ = [
    "ConfigKey",
    "ConnectError",
    "ConnectorContext",
    "Data",
    "Predicate",
    "Record",
    "RetriableError",
    "SinkConnector",
    "SinkTask",
    "SourceConnector",
    "SourceTask",
    "Transformation",
    "log",
    "raw",
    "run",
    "schemaless",
    "with_schema",
]


class ConnectError(Exception):
    """A fatal error: the task fails with this message (Kafka's ConnectException)."""


class RetriableError(Exception):
    """A passing error: the worker retries with backoff and shows the message as the task's trace."""


def log(*parts):
    """Writes a line to the worker's log (through stderr), under the connector and task's name."""
    print(*parts, file=sys.stderr, flush=True)


class Data:
    """Connect data as the protocol carries it: a JsonConverter envelope or raw bytes."""

    __slots__ = ("json",)

    def __init__(self, json_form):
        self.json = json_form


def schemaless(value):
    """A value without a schema (JSON: objects become maps, numbers int64 or float64)."""
    return Data({"schema": None, "payload": value})


def with_schema(schema, payload):
    """A value with a Connect schema, as JsonConverter writes it, e.g. ``{"type": "int64"}``."""
    return Data({"schema": schema, "payload": payload})


def raw(data):
    """Raw bytes (an optional BYTES value)."""
    return Data({"bytes": base64.b64encode(bytes(data)).decode("ascii")})


def _data(value, schema=None):
    if isinstance(value, Data):
        return value.json
    if schema is not None:
        return with_schema(schema, value).json
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return raw(value).json
    return schemaless(value).json


class Record:
    """A record for the worker: a source record, or a record a sink is given (with ``offset``)."""

    def __init__(self, topic, value=None, key=None, source_partition=None, source_offset=None,
                 headers=None, timestamp=None, partition=None):
        self.topic = topic
        self.value = value
        self.key = key
        self.source_partition = source_partition
        self.source_offset = source_offset
        self.headers = headers or []
        self.timestamp = timestamp
        self.partition = partition
        self.offset = None
        self.key_schema = None
        self.value_schema = None

    def to_json(self):
        """The protocol form. A plain key or value is sent with ``key_schema``/``value_schema`` when
        set (records a worker gave keep theirs), else schemaless."""
        out = {"topic": self.topic, "key": _data(self.key, self.key_schema),
               "value": _data(self.value, self.value_schema)}
        if self.source_partition is not None:
            out["source_partition"] = self.source_partition
        if self.source_offset is not None:
            out["source_offset"] = self.source_offset
        if self.headers:
            out["headers"] = [{"key": k, "value": _data(v)} for k, v in self.headers]
        if self.timestamp is not None:
            out["timestamp"] = self.timestamp
        if self.partition is not None:
            out["partition"] = self.partition
        return out


class ConfigKey:
    """One key of a connector's config definition, with Kafka's types (STRING, INT, LONG, DOUBLE,
    BOOLEAN, LIST, PASSWORD, CLASS, SHORT) and importance (HIGH, MEDIUM, LOW). A key without
    ``default`` is required."""

    _REQUIRED = object()

    def __init__(self, name, type="STRING", default=_REQUIRED, importance="MEDIUM",
                 documentation="", group=None, display_name=None):
        self.name = name
        self.type = type
        self.default = default
        self.importance = importance
        self.documentation = documentation
        self.group = group
        self.display_name = display_name

    def to_json(self):
        out = {"name": self.name, "type": self.type, "importance": self.importance,
               "documentation": self.documentation}
        if self.default is not ConfigKey._REQUIRED:
            out["default"] = self.default
        if self.group is not None:
            out["group"] = self.group
        if self.display_name is not None:
            out["display_name"] = self.display_name
        return out


class ConnectorContext:
    """What a running connector may ask the worker, from any thread."""

    def __init__(self, channel):
        self._channel = channel

    def request_task_reconfiguration(self):
        """Asks the worker to call ``task_configs`` again (Kafka's requestTaskReconfiguration): when
        the answer differs from the running tasks' configs, the tasks are replaced."""
        self._channel.write({"type": "request_task_reconfiguration"})


class _Connector:
    #: Set to True for a connector that keeps running while the connector runs, to watch its source
    #: and ask for a reconfiguration when it changes: ``start`` is called then, and ``task_configs``
    #: is asked of the running connector. Otherwise each question runs in a process of its own.
    monitors = False

    def start(self, config, context):
        """Called once when the connector starts running (not for the validation and config
        questions): ``context`` is a ConnectorContext, which may be kept, e.g. by a thread that
        watches the source and asks for a reconfiguration when it changes."""

    def stop(self):
        """Called when the connector stops running."""

    def config_def(self):
        """The connector's own keys, a list of ConfigKey."""
        return []

    def validate(self, config):
        """Checks beyond the definition: a dict of key -> list of messages (empty when valid)."""
        return {}

    def task_configs(self, config, max_tasks):
        """At most ``max_tasks`` task configs (dicts of strings)."""
        return [dict(config)]


class SourceConnector(_Connector):
    """The connector side of a source plugin."""


class SinkConnector(_Connector):
    """The connector side of a sink plugin."""


class SourceTask:
    """A source task. ``poll`` returns a list of Record; an empty list may say through
    ``context.idle(ms)`` when to be polled again."""

    def start(self, config, context):
        pass

    def poll(self, context):
        return []

    def commit(self, offsets):
        """Called once the records of the last poll and their offsets are committed to the worker's
        log: ``offsets`` is a list of (source_partition, source_offset), the last of each partition.
        Acknowledge upstream here, never earlier."""

    def stop(self):
        pass


class SinkTask:
    """A sink task. ``put`` receives records; ``flush`` returns the offsets made durable."""

    def start(self, config, context):
        pass

    def open(self, partitions):
        """The partitions assigned to the task, a list of (topic, partition): called right after
        ``start`` with the first assignment (maybe empty), then with each partition added later (a
        topic created or grown). Partitions are never taken away from a running task."""

    def put(self, records):
        pass

    def flush(self, offsets):
        """Makes what ``put`` received durable and returns the offsets that are: a list of
        (topic, partition, next_offset). The default returns the ``offsets`` asked for."""
        return offsets

    def stop(self):
        pass


class Transformation:
    """A single message transformation: ``apply`` returns the record (changed or not), or None to
    drop it. A record's ``value`` and ``key`` are plain values with ``value_schema`` and
    ``key_schema`` kept, so a changed value keeps its schema unless it is given a new one."""

    def config_def(self):
        return []

    def configure(self, config):
        pass

    def apply(self, record):
        return record

    def close(self):
        pass


class Predicate:
    """A predicate: ``test`` says whether a record matches (a connector's transformation with it runs
    only on matching records, or only on the others when negated)."""

    def config_def(self):
        return []

    def configure(self, config):
        pass

    def test(self, record):
        return False

    def close(self):
        pass


class _Channel:
    def __init__(self, stdin, stdout):
        self._in = stdin
        self._out = stdout
        self._lock = threading.Lock()

    def read(self):
        line = self._in.readline()
        if not line:
            return None
        return json.loads(line)

    def write(self, message):
        line = json.dumps(message, separators=(",", ":")) + "\n"
        with self._lock:
            self._out.write(line)
            self._out.flush()


class SourceContext:
    """What a source task may ask the worker."""

    def __init__(self, channel):
        self._channel = channel
        self.idle_ms = None

    def offsets(self, partitions):
        """The stored offsets of ``partitions`` (source partition dicts), in order (None when none)."""
        self._channel.write({"type": "offset_request", "partitions": list(partitions)})
        answer = self._channel.read()
        if answer is None:
            raise SystemExit(0)
        if answer.get("type") != "offsets":
            raise ConnectError("expected offsets, got %s" % answer.get("type"))
        return [o.get("offset") for o in answer.get("offsets", [])]

    def offset(self, partition):
        """The stored offset of one source partition, or None."""
        return self.offsets([partition])[0]

    def idle(self, ms):
        """With an empty poll: be polled again after ``ms`` milliseconds."""
        self.idle_ms = int(ms)


def _error(exc):
    retriable = isinstance(exc, RetriableError)
    message = str(exc) or type(exc).__name__
    out = {"type": "error", "retriable": retriable, "message": message}
    if not retriable and not isinstance(exc, ConnectError):
        out["trace"] = traceback.format_exc()
    return out


def _serve_connector(channel, connector):
    started = False
    while True:
        msg = channel.read()
        if msg is None or msg.get("type") == "stop":
            if started:
                connector.stop()
            return
        kind = msg.get("type")
        try:
            if kind == "start":
                connector.start(msg.get("config", {}), ConnectorContext(channel))
                started = True
                answer = {"type": "started"}
            elif kind == "config_def":
                answer = {"type": "config_def", "keys": [k.to_json() for k in connector.config_def()]}
            elif kind == "validate":
                answer = {"type": "validate", "errors": connector.validate(msg.get("config", {})) or {}}
            elif kind == "task_configs":
                tasks = connector.task_configs(msg.get("config", {}), msg.get("max_tasks", 1))
                answer = {"type": "task_configs", "tasks": [dict(t) for t in tasks]}
            else:
                answer = {"type": "error", "retriable": False, "message": "unknown request %s" % kind}
        except Exception as exc:  # every failure goes back to the worker
            answer = _error(exc)
        channel.write(answer)


def _serve_source(channel, task):
    context = SourceContext(channel)
    while True:
        msg = channel.read()
        if msg is None or msg.get("type") == "stop":
            task.stop()
            return
        kind = msg.get("type")
        try:
            if kind == "start":
                task.start(msg.get("config", {}), context)
                channel.write({"type": "started"})
            elif kind == "poll":
                context.idle_ms = None
                records = task.poll(context) or []
                answer = {"type": "records", "records": [r.to_json() for r in records]}
                if not records and context.idle_ms is not None:
                    answer["idle_ms"] = context.idle_ms
                channel.write(answer)
            elif kind == "commit":
                task.commit([(o.get("partition"), o.get("offset")) for o in msg.get("offsets", [])])
            else:
                channel.write({"type": "error", "retriable": False, "message": "unknown request %s" % kind})
        except Exception as exc:
            if kind == "commit":
                log("commit failed:", exc)
            else:
                channel.write(_error(exc))


def _record_in(j):
    def value(d):
        if d is None:
            return None
        if "bytes" in d:
            return base64.b64decode(d["bytes"])
        return d.get("payload")

    r = Record(j.get("topic"), value(j.get("value")), key=value(j.get("key")),
               headers=[(h.get("key"), value(h.get("value"))) for h in j.get("headers", [])],
               timestamp=j.get("timestamp"), partition=j.get("partition"))
    r.offset = j.get("offset")
    r.key_schema = (j.get("key") or {}).get("schema")
    r.value_schema = (j.get("value") or {}).get("schema")
    return r


def _partitions(msg):
    return [(p.get("topic"), p.get("partition")) for p in msg.get("partitions", [])]


def _serve_sink(channel, task):
    while True:
        msg = channel.read()
        if msg is None or msg.get("type") == "stop":
            task.stop()
            return
        kind = msg.get("type")
        try:
            if kind == "start":
                task.start(msg.get("config", {}), None)
                if "partitions" in msg:
                    task.open(_partitions(msg))
                answer = {"type": "started"}
            elif kind == "open":
                task.open(_partitions(msg))
                answer = {"type": "opened"}
            elif kind == "put":
                task.put([_record_in(r) for r in msg.get("records", [])])
                answer = {"type": "put"}
            elif kind == "flush":
                asked = [(o["topic"], o["partition"], o["offset"]) for o in msg.get("offsets", [])]
                done = task.flush(asked) or []
                answer = {"type": "flushed",
                          "offsets": [{"topic": t, "partition": p, "offset": o} for t, p, o in done]}
            else:
                answer = {"type": "error", "retriable": False, "message": "unknown request %s" % kind}
        except Exception as exc:
            answer = _error(exc)
        channel.write(answer)


def _serve_record_plugin(channel, plugin, request, apply):
    """Serves a transformation or a predicate: ``request`` is the per-record request's type, ``apply``
    turns a record into the answer."""
    while True:
        msg = channel.read()
        if msg is None or msg.get("type") == "stop":
            plugin.close()
            return
        kind = msg.get("type")
        try:
            if kind == "config_def":
                answer = {"type": "config_def", "keys": [k.to_json() for k in plugin.config_def()]}
            elif kind == "start":
                plugin.configure(msg.get("config", {}))
                answer = {"type": "started"}
            elif kind == request:
                answer = apply(_record_in(msg.get("record", {})))
            else:
                answer = {"type": "error", "retriable": False, "message": "unknown request %s" % kind}
        except Exception as exc:
            answer = _error(exc)
        channel.write(answer)


def _serve_transformation(channel, transformation):
    def apply(record):
        out = transformation.apply(record)
        return {"type": "transformed", "record": None if out is None else out.to_json()}

    _serve_record_plugin(channel, transformation, "transform", apply)


def _serve_predicate(channel, predicate):
    _serve_record_plugin(channel, predicate, "test",
                         lambda record: {"type": "tested", "matches": bool(predicate.test(record))})


def run(connector=None, source_task=None, sink_task=None, transformation=None, predicate=None,
        stdin=None, stdout=None):
    """Serves one plugin process: the worker says in its first message which class and role it runs
    (a connector, one of its tasks, or a transformation); the arguments are classes."""
    channel = _Channel(stdin or sys.stdin, stdout or sys.stdout)
    hello = channel.read()
    if hello is None:
        return
    if hello.get("type") != "hello" or PROTOCOL_VERSION not in hello.get("protocol", []):
        channel.write({"type": "error", "retriable": False,
                       "message": "this plugin speaks protocol %d only" % PROTOCOL_VERSION})
        return
    role = hello.get("role")
    answer = {"type": "hello", "protocol": PROTOCOL_VERSION, "minor": PROTOCOL_MINOR}
    if role == "connector" and connector is not None and connector.monitors:
        answer["monitors"] = True
    channel.write(answer)
    try:
        if role == "connector" and connector is not None:
            _serve_connector(channel, connector())
        elif role == "transformation" and transformation is not None:
            _serve_transformation(channel, transformation())
        elif role == "predicate" and predicate is not None:
            _serve_predicate(channel, predicate())
        elif role == "source_task" and source_task is not None:
            _serve_source(channel, source_task())
        elif role == "sink_task" and sink_task is not None:
            _serve_sink(channel, sink_task())
        else:
            channel.write({"type": "error", "retriable": False,
                           "message": "this plugin has no %s" % role})
    except (BrokenPipeError, KeyboardInterrupt):
        pass
