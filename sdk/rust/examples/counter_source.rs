//! A source that counts as fast as it is polled: `batch.size` records a poll (1,000 by default) up to
//! `count` in all (-1: no end), each value `"<n>"` with `{"n": n}` as its source offset. The plugin
//! benchmark runs it against the worker's built-in sources.

use liteconnect_plugin::{
    Config, ConfigKey, Connector, Data, Plugin, Record, Result, SourceContext, SourceTask,
};
use serde_json::json;

struct CounterSourceConnector;

impl Connector for CounterSourceConnector {
    fn config_def(&self) -> Vec<ConfigKey> {
        vec![
            ConfigKey::new("topic", "STRING")
                .importance("HIGH")
                .doc("The topic counts go to."),
            ConfigKey::new("batch.size", "INT")
                .default_value(Some("1000"))
                .doc("Records a poll."),
            ConfigKey::new("count", "LONG")
                .default_value(Some("-1"))
                .doc("Records in all (-1: no end)."),
        ]
    }
}

#[derive(Default)]
struct CounterTask {
    topic: String,
    n: i64,
    batch: i64,
    count: i64,
}

impl SourceTask for CounterTask {
    fn start(&mut self, config: &Config, ctx: &mut SourceContext<'_>) -> Result<()> {
        let number = |k: &str, d: i64| config.get(k).and_then(|v| v.parse().ok()).unwrap_or(d);
        self.topic = config.get("topic").cloned().unwrap_or_default();
        self.batch = number("batch.size", 1000);
        self.count = number("count", -1);
        self.n = ctx
            .offset(&json!({"counter": self.topic}))?
            .and_then(|o| o["n"].as_i64())
            .unwrap_or(0);
        Ok(())
    }

    fn poll(&mut self, ctx: &mut SourceContext<'_>) -> Result<Vec<Record>> {
        let end = if self.count < 0 {
            self.n + self.batch
        } else {
            (self.n + self.batch).min(self.count)
        };
        if end <= self.n {
            ctx.idle(1000);
            return Ok(Vec::new());
        }
        let records = (self.n + 1..=end)
            .map(|n| {
                Record::source(
                    &self.topic,
                    Data::schemaless(json!(n.to_string())),
                    json!({"counter": self.topic}),
                    json!({"n": n}),
                )
            })
            .collect();
        self.n = end;
        Ok(records)
    }
}

fn main() {
    Plugin::new()
        .connector(CounterSourceConnector)
        .source_task(|| Box::new(CounterTask::default()))
        .run();
}
