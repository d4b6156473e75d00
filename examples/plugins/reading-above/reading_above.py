"""A predicate: whether the value's field `field` is a number above `threshold`."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "..", "sdk", "python")]

from liteconnect_plugin import ConfigKey, Predicate, run  # noqa: E402


class ReadingAbove(Predicate):
    def config_def(self):
        return [
            ConfigKey("threshold", "DOUBLE", importance="HIGH", documentation="Records above it match."),
            ConfigKey("field", "STRING", default="reading", documentation="The field compared."),
        ]

    def configure(self, config):
        self.threshold = float(config["threshold"])
        self.field = config.get("field", "reading")

    def test(self, record):
        value = record.value
        reading = value.get(self.field) if isinstance(value, dict) else None
        return isinstance(reading, (int, float)) and reading > self.threshold


if __name__ == "__main__":
    run(predicate=ReadingAbove)
