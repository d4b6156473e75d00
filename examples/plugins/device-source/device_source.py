"""A source that reads a simulated device: one reading every interval.ms, numbered by a sequence that
is the record's source offset, so a restarted task goes on after the last committed reading."""

import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "..", "sdk", "python")]

from liteconnect_plugin import (  # noqa: E402
    ConfigKey, Record, SourceConnector, SourceTask, log, run, with_schema)

READING = {
    "type": "struct", "name": "com.example.device.Reading", "optional": False,
    "fields": [
        {"field": "device", "type": "string", "optional": False},
        {"field": "seq", "type": "int64", "optional": False},
        {"field": "reading", "type": "double", "optional": False},
    ],
}


class DeviceSourceConnector(SourceConnector):
    def config_def(self):
        return [
            ConfigKey("topic", "STRING", importance="HIGH", documentation="The topic readings go to."),
            ConfigKey("device", "STRING", default="device-1", documentation="The device's name: the source partition."),
            ConfigKey("interval.ms", "LONG", default="1000", documentation="One reading every this many milliseconds (0: as fast as polled)."),
            ConfigKey("count", "LONG", default="-1", documentation="Stop after this many readings in all (-1: never)."),
            ConfigKey("batch.size", "INT", default="100", documentation="The most readings one poll returns."),
            ConfigKey("ack.file", "STRING", default=None, documentation="A file the last acknowledged sequence number is written to."),
        ]

    def validate(self, config):
        errors = {}
        for key in ("interval.ms", "batch.size"):
            value = config.get(key)
            if value is not None and (not value.lstrip("-").isdigit() or int(value) < 0):
                errors[key] = ["%s must be a number of at least 0" % key]
        return errors

    def task_configs(self, config, max_tasks):
        return [dict(config)]


class DeviceSourceTask(SourceTask):
    def start(self, config, context):
        self.topic = config["topic"]
        self.device = config.get("device", "device-1")
        self.interval = int(config.get("interval.ms", "1000")) / 1000.0
        self.count = int(config.get("count", "-1"))
        self.batch = int(config.get("batch.size", "100"))
        self.ack_file = config.get("ack.file")
        stored = context.offset({"device": self.device}) or {}
        self.seq = int(stored.get("seq", 0))
        self.started = time.monotonic()
        self.first = self.seq
        log("device %s starts after reading %d" % (self.device, self.seq))

    def poll(self, context):
        want = self.batch
        if self.interval > 0:
            due = int((time.monotonic() - self.started) / self.interval) + 1
            want = min(want, self.first + due - self.seq)
        if self.count >= 0:
            want = min(want, self.count - self.seq)
        if want <= 0:
            if self.count >= 0 and self.seq >= self.count:
                context.idle(1000)
            else:
                next_at = self.started + (self.seq - self.first + 1) * self.interval
                context.idle(max(1, (next_at - time.monotonic()) * 1000))
            return []
        records = []
        for _ in range(want):
            self.seq += 1
            value = {"device": self.device, "seq": self.seq,
                     "reading": round(20 + 5 * math.sin(self.seq / 10.0), 3)}
            records.append(Record(self.topic, with_schema(READING, value), key=self.device,
                                  source_partition={"device": self.device},
                                  source_offset={"seq": self.seq}))
        return records

    def commit(self, offsets):
        if self.ack_file:
            last = max(int(o.get("seq", 0)) for _, o in offsets) if offsets else None
            if last is not None:
                with open(self.ack_file, "w") as f:
                    f.write("%d\n" % last)


if __name__ == "__main__":
    run(DeviceSourceConnector, source_task=DeviceSourceTask)
