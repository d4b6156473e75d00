"""Confluent's Python client with Protobuf against the embedded Schema Registry and the Kafka listener.
Message classes are built at run time from FileDescriptorProtos (no protoc). Prints one JSON line.

Usage:
  schema_registry_protobuf.py registry REGISTRY_URL
      registers ex/address.proto and ex/reading.proto (importing it, by reference) as .proto text, looks
      the latter up, checks an evolution that adds a field and one that changes a field's type.
  schema_registry_protobuf.py produce REGISTRY_URL BOOTSTRAP TOPIC COUNT
      produces COUNT ex.Reading records with ProtobufSerializer (which registers both files itself).
  schema_registry_protobuf.py consume REGISTRY_URL BOOTSTRAP TOPIC COUNT
      reads COUNT records of a one-string-field message (`line`) with ProtobufDeserializer.
  schema_registry_protobuf.py produce-shapes REGISTRY_URL BOOTSTRAP TOPIC
      produces three ex.Shape records (a oneof `kind` of `radius` or `side`, an enum `color`) with
      ProtobufSerializer (which registers the file as a base64 FileDescriptorProto).
  schema_registry_protobuf.py consume-shapes REGISTRY_URL BOOTSTRAP TOPIC COUNT
      reads COUNT ex.Shape records with ProtobufDeserializer: each one's id, oneof branch and value,
      and color name.
"""

import json
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient

ADDRESS = 'syntax = "proto3";\npackage ex;\n\nmessage Address {\n  string city = 1;\n}\n'
READING = ('syntax = "proto3";\npackage ex;\n\nimport "ex/address.proto";\n\nmessage Reading {\n'
           '  string sensor = 1;\n  double value = 2;\n  ex.Address place = 3;\n  int32 count = 4;\n}\n')
F = descriptor_pb2.FieldDescriptorProto


def file_proto(name, package, deps, messages):
    """A FileDescriptorProto: messages as (name, [(field, number, type, type_name)])."""
    f = descriptor_pb2.FileDescriptorProto(name=name, package=package, syntax="proto3")
    f.dependency.extend(deps)
    for message, fields in messages:
        m = f.message_type.add(name=message)
        for field, number, kind, type_name in fields:
            fd = m.field.add(name=field, number=number, type=kind, label=F.LABEL_OPTIONAL)
            if type_name:
                fd.type_name = type_name
    return f


def classes(*files):
    pool = descriptor_pool.DescriptorPool()
    for f in files:
        pool.Add(f)
    return lambda full: message_factory.GetMessageClass(pool.FindMessageTypeByName(full))


def reading_class():
    address = file_proto("ex/address.proto", "ex", [], [("Address", [("city", 1, F.TYPE_STRING, None)])])
    reading = file_proto("ex/reading.proto", "ex", ["ex/address.proto"], [("Reading", [
        ("sensor", 1, F.TYPE_STRING, None), ("value", 2, F.TYPE_DOUBLE, None),
        ("place", 3, F.TYPE_MESSAGE, ".ex.Address"), ("count", 4, F.TYPE_INT32, None)])])
    return classes(address, reading)("ex.Reading")


def shape_class():
    f = descriptor_pb2.FileDescriptorProto(name="ex/shape.proto", package="ex", syntax="proto3")
    m = f.message_type.add(name="Shape")
    m.field.add(name="id", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    m.oneof_decl.add(name="kind")
    m.field.add(name="radius", number=2, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL, oneof_index=0)
    m.field.add(name="side", number=3, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL, oneof_index=0)
    m.field.add(name="color", number=4, type=F.TYPE_ENUM, label=F.LABEL_OPTIONAL,
                type_name=".ex.Shape.Color")
    color = m.enum_type.add(name="Color")
    for number, name in enumerate(["RED", "GREEN", "BLUE"]):
        color.value.add(name=name, number=number)
    return classes(f)("ex.Shape")


def registry(url):
    client = SchemaRegistryClient({"url": url})
    address_id = client.register_schema("ex/address.proto", Schema(ADDRESS, "PROTOBUF"))
    refs = [SchemaReference("ex/address.proto", "ex/address.proto", 1)]
    reading = Schema(READING, "PROTOBUF", refs)
    reading_id = client.register_schema("reading-value", reading)
    found = client.lookup_schema("reading-value", reading)
    fetched = client.get_schema(reading_id)
    added = Schema(READING.replace("  int32 count = 4;\n", "  int32 count = 4;\n  string unit = 5;\n"),
                   "PROTOBUF", refs)
    changed = Schema(READING.replace("double value = 2", "string value = 2"), "PROTOBUF", refs)
    print(json.dumps({
        "address_id": address_id, "reading_id": reading_id, "found_id": found.schema_id,
        "found_version": found.version, "schema_type": fetched.schema_type,
        "references": [r.name for r in fetched.references],
        "added_ok": client.test_compatibility("reading-value", added),
        "changed_ok": client.test_compatibility("reading-value", changed),
    }))


def produce(url, bootstrap, topic, count):
    from confluent_kafka import Producer
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    reading = reading_class()
    serializer = ProtobufSerializer(reading, SchemaRegistryClient({"url": url}), {"use.deprecated.format": False})
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        value = reading(sensor=f"s{i}", value=i * 1.5, count=i)
        value.place.city = f"c{i}"
        producer.produce(topic, serializer(value, SerializationContext(topic, MessageField.VALUE)))
    left = producer.flush(30)
    print(json.dumps({"produced": count, "unsent": left}))


def consume(url, bootstrap, topic, count):
    from confluent_kafka import Consumer
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    line = classes(file_proto("line.proto", "", [], [("ConnectDefault1", [("line", 1, F.TYPE_STRING, None)])]))
    deserializer = ProtobufDeserializer(line("ConnectDefault1"), {"use.deprecated.format": False},
                                        SchemaRegistryClient({"url": url}))
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "pb-consume",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    values, ids = [], []
    for _ in range(300):
        message = consumer.poll(0.1)
        if message is None or message.error():
            continue
        ids.append(int.from_bytes(message.value()[1:5], "big"))
        values.append(deserializer(message.value(), SerializationContext(topic, MessageField.VALUE)).line)
        if len(values) == count:
            break
    consumer.close()
    print(json.dumps({"values": values, "ids": ids}))


def produce_shapes(url, bootstrap, topic):
    from confluent_kafka import Producer
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    shape = shape_class()
    serializer = ProtobufSerializer(shape, SchemaRegistryClient({"url": url}), {"use.deprecated.format": False})
    producer = Producer({"bootstrap.servers": bootstrap})
    values = [shape(id="a", radius=1.5, color=1), shape(id="b", side=4, color=2), shape(id="c")]
    for value in values:
        producer.produce(topic, serializer(value, SerializationContext(topic, MessageField.VALUE)))
    left = producer.flush(30)
    print(json.dumps({"produced": len(values), "unsent": left}))


def consume_shapes(url, bootstrap, topic, count):
    from confluent_kafka import Consumer
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    shape = shape_class()
    deserializer = ProtobufDeserializer(shape, {"use.deprecated.format": False},
                                        SchemaRegistryClient({"url": url}))
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "pb-shapes",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    shapes, ids = [], []
    for _ in range(300):
        message = consumer.poll(0.1)
        if message is None or message.error():
            continue
        ids.append(int.from_bytes(message.value()[1:5], "big"))
        value = deserializer(message.value(), SerializationContext(topic, MessageField.VALUE))
        kind = value.WhichOneof("kind")
        shapes.append({"id": value.id, "kind": kind, "size": getattr(value, kind) if kind else None,
                       "color": shape.DESCRIPTOR.enum_types_by_name["Color"].values_by_number[value.color].name})
        if len(shapes) == count:
            break
    consumer.close()
    print(json.dumps({"shapes": shapes, "ids": ids}))


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "produce-shapes":
        produce_shapes(args[0], args[1], args[2])
    elif mode == "consume-shapes":
        consume_shapes(args[0], args[1], args[2], int(args[3]))
    elif mode == "registry":
        registry(args[0])
    elif mode == "produce":
        produce(args[0], args[1], args[2], int(args[3]))
    else:
        consume(args[0], args[1], args[2], int(args[3]))
