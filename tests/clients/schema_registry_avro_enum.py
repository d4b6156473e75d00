"""Produces two shop.Payment records, whose schema has an enum and a fixed type, to TOPIC through the Kafka
listener with Confluent's AvroSerializer (which registers the schema under TOPIC-value). Prints the
registered schema's ID and each framed value in hex as one JSON line.

Usage: schema_registry_avro_enum.py REGISTRY_URL BOOTSTRAP TOPIC
"""

import json
import sys

from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

registry_url, bootstrap, topic = sys.argv[1], sys.argv[2], sys.argv[3]

# Written as the converter writes named types: each with its namespace, no doc or default on the enum.
PAYMENT = json.dumps({
    "type": "record", "name": "Payment", "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "status", "type": {"type": "enum", "name": "Status", "namespace": "shop",
                                    "symbols": ["NEW", "PAID", "SHIPPED"]}},
        {"name": "digest", "type": {"type": "fixed", "name": "Md5", "namespace": "shop", "size": 4}},
    ],
})

client = SchemaRegistryClient({"url": registry_url})
serializer = AvroSerializer(client, PAYMENT, conf={"auto.register.schemas": True})
producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
records = [
    {"id": 1, "status": "PAID", "digest": b"\xde\xad\xbe\xef"},
    {"id": 2, "status": "SHIPPED", "digest": b"\x00\x01\x02\x03"},
]
payloads = []
for r in records:
    payload = serializer(r, SerializationContext(topic, MessageField.VALUE))
    payloads.append(payload.hex())
    producer.produce(topic, value=payload)
producer.flush(20)
print(json.dumps({"id": int(payloads[0][2:10], 16), "payloads": payloads}))
