"""A sink that appends each record's value, as one JSON line, to a file. A flush writes and syncs the
file and reports the offsets that are then durable: the worker commits exactly those."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "..", "sdk", "python")]

from liteconnect_plugin import ConfigKey, ConnectError, SinkConnector, SinkTask, run  # noqa: E402


class AppendFileSinkConnector(SinkConnector):
    def config_def(self):
        return [ConfigKey("file", "STRING", importance="HIGH", documentation="The file records are appended to.")]

    def validate(self, config):
        path = config.get("file")
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            return {"file": ["The directory of %s does not exist" % path]}
        return {}


class AppendFileSinkTask(SinkTask):
    def start(self, config, context):
        self.path = config.get("file")
        if not self.path:
            raise ConnectError("file is required")
        self.cut_partial_line()
        self.out = open(self.path, "a")
        self.pending = {}

    def cut_partial_line(self):
        """A task killed mid-write may have left half a line: it is cut, and written again when the
        worker redelivers what was not committed."""
        if not os.path.exists(self.path):
            return
        with open(self.path, "rb+") as f:
            data = f.read()
            if data and not data.endswith(b"\n"):
                f.truncate(data.rfind(b"\n") + 1)

    def put(self, records):
        for r in records:
            self.out.write(json.dumps(r.value, separators=(",", ":"), sort_keys=True) + "\n")
            self.pending[(r.topic, r.partition)] = r.offset + 1

    def flush(self, offsets):
        self.out.flush()
        os.fsync(self.out.fileno())
        done = [(t, p, o) for (t, p), o in sorted(self.pending.items())]
        return done

    def stop(self):
        self.out.close()


if __name__ == "__main__":
    run(AppendFileSinkConnector, sink_task=AppendFileSinkTask)
