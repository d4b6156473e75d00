"""aiokafka (PyPI) against liteconnect's Kafka listener: admin create_topics, produce, a consumer from the
earliest offset, one from the latest, a consumer group of two sharing two partitions, the end offsets and
the admin's list_consumer_groups. Prints one JSON line of what it saw; exits non-zero on any failure.
Usage: python aiokafka_client.py <bootstrap> <topic prefix>"""

import asyncio
import json
import sys
import time

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

N = 20
DEADLINE = 60.0


async def until(what, check):
    end = time.monotonic() + DEADLINE
    while not await check():
        if time.monotonic() > end:
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def produce(producer, topic, tag, count):
    for i in range(count):
        await producer.send_and_wait(
            topic, key=f"k{i}".encode(), value=f"{tag}-{i}".encode(), partition=i % 2
        )


async def drain(consumer, into):
    batches = await consumer.getmany(timeout_ms=100)
    for records in batches.values():
        into.extend(r.value.decode() for r in records)


async def main(bootstrap, prefix):
    seen = {}
    topic = f"{prefix}-aiokafka"
    pair_topic = f"{prefix}-aiokafka-pair"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    await admin.create_topics(
        [NewTopic(topic, num_partitions=2, replication_factor=1),
         NewTopic(pair_topic, num_partitions=2, replication_factor=1)]
    )

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    await produce(producer, topic, "first", N)

    # From the earliest offset.
    earliest = []
    c1 = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"{prefix}-aio-earliest",
                          auto_offset_reset="earliest")
    await c1.start()

    async def read_earliest():
        await drain(c1, earliest)
        return len(earliest) >= N

    await until("the earliest consumer", read_earliest)
    seen["earliest"] = len(earliest)

    # From the latest offset: the positions are resolved first, then more is produced.
    latest = []
    c2 = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"{prefix}-aio-latest",
                          auto_offset_reset="latest")
    await c2.start()

    async def assigned():
        await drain(c2, latest)
        return len(c2.assignment()) == 2

    await until("the latest consumer's assignment", assigned)
    for tp in c2.assignment():
        await c2.position(tp)
    await produce(producer, topic, "second", 4)

    async def read_latest():
        await drain(c2, latest)
        return len(latest) >= 4

    await until("the latest consumer", read_latest)
    seen["latest"] = len(latest)
    seen["latest_only_new"] = all(v.startswith("second-") for v in latest)

    # A group of two sharing two partitions.
    members = [
        AIOKafkaConsumer(pair_topic, bootstrap_servers=bootstrap, group_id=f"{prefix}-aio-pair",
                         auto_offset_reset="earliest")
        for _ in range(2)
    ]
    got = [[], []]
    for m in members:
        await m.start()

    async def balanced():
        for i, m in enumerate(members):
            await drain(m, got[i])
        return all(len(m.assignment()) == 1 for m in members)

    await until("both members to hold one partition", balanced)
    await produce(producer, pair_topic, "pair", N)

    async def read_pair():
        for i, m in enumerate(members):
            await drain(m, got[i])
        return len(set(got[0]) | set(got[1])) >= N

    await until("the group to read everything", read_pair)
    seen["pair"] = [len(got[0]), len(got[1])]
    seen["pair_distinct"] = len(set(got[0]) | set(got[1]))

    # End and beginning offsets (ListOffsets), and the groups the admin lists.
    tps = [TopicPartition(topic, p) for p in (0, 1)]
    seen["high_watermarks"] = sum((await c1.end_offsets(tps)).values())
    seen["low_watermarks"] = sum((await c1.beginning_offsets(tps)).values())
    groups = await admin.list_consumer_groups()
    seen["groups"] = sorted(g[0] for g in groups if g[0].startswith(prefix))

    for c in [c1, c2, *members]:
        await c.stop()
    await producer.stop()
    await admin.close()
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
