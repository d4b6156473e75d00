"""Confluent's Python client against liteconnect's embedded Schema Registry and its Kafka listener.

Usage: schema_registry_client.py REGISTRY_URL BOOTSTRAP TOPIC

SchemaRegistryClient registers, looks up, lists, tests compatibility, sets levels and modes and deletes;
AvroSerializer then produces records through the Kafka listener with the registry's IDs, and a consumer
with AvroDeserializer reads them back. Prints one JSON line of what it saw; the test checks it.
"""

import json
import sys

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

registry_url, bootstrap, topic = sys.argv[1], sys.argv[2], sys.argv[3]
seen = {}

V1 = json.dumps({"type": "record", "name": "Reading", "namespace": "edge",
                 "fields": [{"name": "sensor", "type": "string"},
                            {"name": "value", "type": "double"}]})
V2 = json.dumps({"type": "record", "name": "Reading", "namespace": "edge",
                 "fields": [{"name": "sensor", "type": "string"},
                            {"name": "value", "type": "double"},
                            {"name": "unit", "type": "string", "default": "C"}]})
V2_NO_DEFAULT = json.dumps({"type": "record", "name": "Reading", "namespace": "edge",
                            "fields": [{"name": "sensor", "type": "string"},
                                       {"name": "value", "type": "double"},
                                       {"name": "unit", "type": "string"}]})


def error_code(call):
    try:
        call()
    except SchemaRegistryError as e:
        return e.error_code
    return None


client = SchemaRegistryClient({"url": registry_url})
subject = "sr-test-value"
seen["id1"] = client.register_schema(subject, Schema(V1, "AVRO"))
seen["id1_again"] = SchemaRegistryClient({"url": registry_url}).register_schema(subject, Schema(V1, "AVRO"))
seen["types"] = client.get_schema_types()
seen["incompatible_allowed"] = client.test_compatibility(subject, Schema(V2_NO_DEFAULT, "AVRO"))
seen["compatible_allowed"] = client.test_compatibility(subject, Schema(V2, "AVRO"))
seen["incompatible_code"] = error_code(lambda: client.register_schema(subject, Schema(V2_NO_DEFAULT, "AVRO")))
seen["id2"] = client.register_schema(subject, Schema(V2, "AVRO"))
seen["versions"] = client.get_versions(subject)
latest = client.get_latest_version(subject)
seen["latest"] = [latest.schema_id, latest.version, latest.subject]
seen["version1_id"] = client.get_version(subject, 1).schema_id
seen["lookup"] = client.lookup_schema(subject, Schema(V1, "AVRO")).version
seen["schema_by_id_is_v1"] = json.loads(client.get_schema(seen["id1"]).schema_str) == json.loads(V1)
seen["subjects"] = client.get_subjects()
seen["subjects_of_id"] = client.get_subjects_by_schema_id(seen["id1"])
seen["compat_default"] = client.get_compatibility()
seen["compat_set"] = client.set_compatibility(subject, "FULL")
seen["compat_subject"] = client.get_compatibility(subject)
seen["unknown_subject_code"] = error_code(lambda: client.get_versions("nope"))
seen["invalid_schema_code"] = error_code(
    lambda: client.register_schema("bad", Schema('{"type":"record","name":"X"}', "AVRO")))
seen["mode_set"] = client.update_mode("scratch", "READONLY")
seen["mode_get"] = client.get_mode("scratch")
seen["readonly_code"] = error_code(lambda: client.register_schema("scratch", Schema('"int"', "AVRO")))
client.delete_mode("scratch")
seen["scratch_id"] = client.register_schema("scratch", Schema('"int"', "AVRO"))
seen["soft_deleted"] = client.delete_subject("scratch")
seen["deleted_only"] = client.get_subjects(deleted_only=True)
seen["permanently_deleted"] = client.delete_subject("scratch", permanent=True)

# Avro records through the Kafka listener, with the registry's IDs in Confluent's wire format: the
# serializer registers V2 under the topic's subject (readings-value), where it keeps the ID it already has.
serializer = AvroSerializer(client, V2, conf={"auto.register.schemas": True})
producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
records = [{"sensor": f"s{i}", "value": i * 1.5, "unit": "C"} for i in range(5)]
framed = []
for r in records:
    payload = serializer(r, SerializationContext(topic, MessageField.VALUE))
    framed.append(payload[:5].hex())
    producer.produce(topic, value=payload)
producer.flush(20)
seen["header_of_first"] = framed[0]

deserializer = AvroDeserializer(client)
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "sr-test", "auto.offset.reset": "earliest",
                     "enable.auto.commit": False})
consumer.subscribe([topic])
read = []
for _ in range(200):
    message = consumer.poll(0.1)
    if message is None or message.error():
        if len(read) == len(records):
            break
        continue
    read.append(deserializer(message.value(), SerializationContext(topic, MessageField.VALUE)))
    if len(read) == len(records):
        break
consumer.close()
seen["read"] = read
seen["read_matches"] = read == records
print(json.dumps(seen))
