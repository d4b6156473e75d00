"""Confluent's Python client with JSON Schema against liteconnect's embedded Schema Registry and its Kafka
listener.

Usage: schema_registry_json.py REGISTRY_URL BOOTSTRAP TOPIC

SchemaRegistryClient registers, looks up and tests the compatibility of JSON schemas; JSONSerializer then
produces five records through the Kafka listener with the registry's IDs, and a consumer with
JSONDeserializer reads them back. Prints one JSON line of what it saw; the test checks it.
"""

import json
import sys

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

registry_url, bootstrap, topic = sys.argv[1], sys.argv[2], sys.argv[3]
seen = {}


def reading(extra=None, required=("sensor", "value")):
    properties = {"sensor": {"type": "string"}, "value": {"type": "number"}}
    properties.update(extra or {})
    return json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": "Reading",
                       "type": "object", "properties": properties, "required": list(required),
                       "additionalProperties": False})


V1 = reading()
V2 = reading({"unit": {"type": "string"}})
V2_REQUIRED = reading({"unit": {"type": "string"}}, ("sensor", "value", "unit"))


def error_code(call):
    try:
        call()
    except SchemaRegistryError as e:
        return e.error_code
    return None


client = SchemaRegistryClient({"url": registry_url})
subject = "js-test-value"
seen["id1"] = client.register_schema(subject, Schema(V1, "JSON"))
seen["id1_again"] = SchemaRegistryClient({"url": registry_url}).register_schema(subject, Schema(V1, "JSON"))
seen["types"] = client.get_schema_types()
seen["required_added_allowed"] = client.test_compatibility(subject, Schema(V2_REQUIRED, "JSON"))
seen["optional_added_allowed"] = client.test_compatibility(subject, Schema(V2, "JSON"))
seen["incompatible_code"] = error_code(lambda: client.register_schema(subject, Schema(V2_REQUIRED, "JSON")))
seen["id2"] = client.register_schema(subject, Schema(V2, "JSON"))
seen["lookup"] = client.lookup_schema(subject, Schema(V1, "JSON")).version
fetched = client.get_schema(seen["id2"])
seen["schema_by_id"] = [fetched.schema_type, json.loads(fetched.schema_str) == json.loads(V2)]
seen["invalid_schema_code"] = error_code(
    lambda: client.register_schema("bad", Schema('{"type": "strin"}', "JSON")))
seen["not_json_code"] = error_code(lambda: client.register_schema("bad", Schema("{not json", "JSON")))

serializer = JSONSerializer(V2, client)
producer = Producer({"bootstrap.servers": bootstrap})
sent = [{"sensor": f"s{i}", "value": i * 1.5, "unit": "C"} for i in range(5)]
for value in sent:
    producer.produce(topic, serializer(value, SerializationContext(topic, MessageField.VALUE)))
producer.flush(30)

deserializer = JSONDeserializer(None, schema_registry_client=client)
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "js-check", "auto.offset.reset": "earliest",
                     "enable.auto.commit": False})
consumer.subscribe([topic])
read, headers = [], []
for _ in range(300):
    message = consumer.poll(0.1)
    if message is None or message.error():
        continue
    headers.append(message.value()[:5].hex())
    read.append(deserializer(message.value(), SerializationContext(topic, MessageField.VALUE)))
    if len(read) == len(sent):
        break
consumer.close()
seen["header_of_first"] = headers[0] if headers else None
seen["read_matches"] = read == sent
print(json.dumps(seen))
