"""Test plugins of the protocol's 1.1 additions.

`source`: a connector that discovers devices, one a line of the file `devices.file`, while it runs, and
asks for a reconfiguration whenever the list changes; one task a device. A line `exit` makes the
connector's process exit. Its task configs come from
what the running connector has discovered: a connector process that was not started has none.

`sink`: a sink whose tasks append each assignment they are given (the start's, then each `open`) to
`partitions.file` as one line, `<topic>-<partition> ...`, and log it."""

import os
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "..", "..", "sdk", "python")]

from liteconnect_plugin import (  # noqa: E402
    SinkConnector, SinkTask, SourceConnector, SourceTask, log, run)


def read_lines(path):
    try:
        with open(path) as f:
            return [line.strip() for line in f if line.strip()]
    except FileNotFoundError:
        return []


class DiscoveringSourceConnector(SourceConnector):
    monitors = True
    devices = []

    def start(self, config, context):
        self.path = config["devices.file"]
        self.devices = read_lines(self.path)
        self.context = context
        self.stopping = threading.Event()
        threading.Thread(target=self.watch, daemon=True).start()
        log("watching", self.path, "with", len(self.devices), "devices")

    def watch(self):
        while not self.stopping.wait(0.05):
            now = read_lines(self.path)
            if "exit" in now:
                log("told to exit")
                os._exit(3)
            if now != self.devices:
                self.devices = now
                log("the devices changed:", ",".join(now))
                self.context.request_task_reconfiguration()

    def stop(self):
        self.stopping.set()

    def task_configs(self, config, max_tasks):
        return [{"device": d, "topic": config["topic"]} for d in self.devices[:max_tasks]]


class DeviceTask(SourceTask):
    def start(self, config, context):
        log("reading device", config["device"])

    def poll(self, context):
        context.idle(1000)
        return []


class PartitionsSinkConnector(SinkConnector):
    def task_configs(self, config, max_tasks):
        return [dict(config) for _ in range(max_tasks)]


class PartitionsSinkTask(SinkTask):
    def start(self, config, context):
        self.file = config["partitions.file"]

    def open(self, partitions):
        line = " ".join("%s-%d" % tp for tp in partitions)
        log("opened", line)
        with open(self.file, "a") as f:
            f.write("%s\n" % line)


if sys.argv[1:] == ["source"]:
    run(DiscoveringSourceConnector, source_task=DeviceTask)
else:
    run(PartitionsSinkConnector, sink_task=PartitionsSinkTask)
