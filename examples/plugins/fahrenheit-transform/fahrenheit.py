"""A transformation: the value's field `field` (a temperature in degrees Celsius) in degrees
Fahrenheit, in place; records whose value has no such field pass unchanged."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "..", "sdk", "python")]

from liteconnect_plugin import ConfigKey, Transformation, run  # noqa: E402


class CelsiusToFahrenheit(Transformation):
    def config_def(self):
        return [ConfigKey("field", "STRING", default="reading", documentation="The field to convert.")]

    def configure(self, config):
        self.field = config.get("field", "reading")

    def apply(self, record):
        value = record.value
        if isinstance(value, dict) and isinstance(value.get(self.field), (int, float)):
            value[self.field] = round(value[self.field] * 9 / 5 + 32, 3)
        return record


if __name__ == "__main__":
    run(transformation=CelsiusToFahrenheit)
