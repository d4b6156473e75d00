// kafkajs (npm) against liteconnect's Kafka listener: admin createTopics, produce, a consumer from the
// earliest offset, one from the latest, a consumer group of two sharing two partitions, and the admin's
// fetchTopicOffsets and listGroups. Prints one JSON line of what it saw; exits non-zero on any failure.
// Usage: node kafkajs.js <bootstrap> <topic prefix>
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const [bootstrap, prefix] = process.argv.slice(2);
const N = 20;
const DEADLINE_MS = 60000;

const kafka = new Kafka({
  clientId: 'kafkajs-test',
  brokers: [bootstrap],
  logLevel: logLevel.WARN,
  retry: { retries: 5 },
});

async function until(what, check) {
  const end = Date.now() + DEADLINE_MS;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function messages(tag, count) {
  return [...Array(count)].map((_, i) => ({ key: `k${i}`, value: `${tag}-${i}`, partition: i % 2 }));
}

async function main() {
  const seen = {};
  const admin = kafka.admin();
  await admin.connect();
  const topic = `${prefix}-kafkajs`;
  const pairTopic = `${prefix}-kafkajs-pair`;
  await admin.createTopics({
    topics: [
      { topic, numPartitions: 2 },
      { topic: pairTopic, numPartitions: 2 },
    ],
    waitForLeaders: true,
  });

  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: messages('first', N) });

  // From the earliest offset.
  const earliest = [];
  const c1 = kafka.consumer({ groupId: `${prefix}-kjs-earliest` });
  await c1.connect();
  await c1.subscribe({ topic, fromBeginning: true });
  await c1.run({ eachMessage: async ({ message }) => { earliest.push(message.value.toString()); } });
  await until('the earliest consumer', () => earliest.length >= N);
  seen.earliest = earliest.length;

  // From the latest offset: only what is produced once it fetches.
  const latest = [];
  let fetched = false;
  const c2 = kafka.consumer({ groupId: `${prefix}-kjs-latest` });
  c2.on(c2.events.FETCH, () => { fetched = true; });
  await c2.connect();
  await c2.subscribe({ topic, fromBeginning: false });
  await c2.run({ eachMessage: async ({ message }) => { latest.push(message.value.toString()); } });
  await until('the latest consumer to fetch', () => fetched);
  await producer.send({ topic, acks: -1, messages: messages('second', 4) });
  await until('the latest consumer', () => latest.length >= 4);
  seen.latest = latest.length;
  seen.latest_only_new = latest.every((v) => v.startsWith('second-'));

  // A group of two sharing two partitions.
  const members = [0, 1].map(() => kafka.consumer({ groupId: `${prefix}-kjs-pair` }));
  const assigned = [[], []];
  const got = [[], []];
  for (const [i, m] of members.entries()) {
    m.on(m.events.GROUP_JOIN, (e) => { assigned[i] = e.payload.memberAssignment[pairTopic] || []; });
    await m.connect();
    await m.subscribe({ topic: pairTopic, fromBeginning: true });
    await m.run({ eachMessage: async ({ message }) => { got[i].push(message.value.toString()); } });
  }
  await until('both members to hold one partition', () => assigned[0].length === 1 && assigned[1].length === 1);
  await producer.send({ topic: pairTopic, acks: -1, messages: messages('pair', N) });
  await until('the group to read everything', () => new Set([...got[0], ...got[1]]).size >= N);
  seen.pair = [got[0].length, got[1].length];
  seen.pair_distinct = new Set([...got[0], ...got[1]]).size;

  // The admin's views.
  const offsets = await admin.fetchTopicOffsets(topic);
  seen.high_watermarks = offsets.map((o) => Number(o.high)).reduce((a, b) => a + b, 0);
  seen.low_watermarks = offsets.map((o) => Number(o.low)).reduce((a, b) => a + b, 0);
  const groups = (await admin.listGroups()).groups.map((g) => g.groupId);
  seen.groups = groups.filter((g) => g.startsWith(prefix)).sort();

  for (const m of [c1, c2, ...members]) await m.disconnect();
  await producer.disconnect();
  await admin.disconnect();
  console.log(JSON.stringify(seen));
}

main().then(
  () => process.exit(0),
  (e) => { console.error(e && e.stack ? e.stack : String(e)); process.exit(1); },
);
