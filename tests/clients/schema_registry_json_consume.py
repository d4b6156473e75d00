"""Reads COUNT records of TOPIC from the Kafka listener with Confluent's JSONDeserializer, which asks the
Schema Registry for each writer schema by the ID in the record. Prints the values as one JSON line.

Usage: schema_registry_json_consume.py REGISTRY_URL BOOTSTRAP TOPIC COUNT
"""

import json
import sys

from confluent_kafka import Consumer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

registry_url, bootstrap, topic, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
deserializer = JSONDeserializer(None, schema_registry_client=SchemaRegistryClient({"url": registry_url}))
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "js-consume", "auto.offset.reset": "earliest",
                     "enable.auto.commit": False})
consumer.subscribe([topic])
values, ids = [], []
for _ in range(300):
    message = consumer.poll(0.1)
    if message is None or message.error():
        continue
    ids.append(int.from_bytes(message.value()[1:5], "big"))
    values.append(deserializer(message.value(), SerializationContext(topic, MessageField.VALUE)))
    if len(values) == count:
        break
consumer.close()
print(json.dumps({"values": values, "ids": ids}))
