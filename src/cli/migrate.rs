//! Moving connectors with their offsets between Kafka Connect REST endpoints (liteconnect or Apache Kafka
//! Connect), by KIP-980's recipe: check that the target can take the connector, stop it on the source,
//! read its config and offsets, create it STOPPED on the target, write the offsets there, check them,
//! resume. Only the public REST API is used.
//!
//! Source connectors move before sinks. A sink's offsets are positions in the source worker's topics, which
//! the target does not hold, so by default they are not copied: the sink is first left to deliver what its
//! topics hold on the source (once the source connectors feeding it are stopped), then it starts on the
//! target from the beginning of the target's topics.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value as Json;

use super::drain::{drain, feeders, normalised, DrainError};
use super::endpoint::{seg, Endpoint, RequestError, Status};
use super::schemas;

/// What `migrate` does with a sink connector's offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SinkOffsets {
    /// Let the sink deliver everything its topics hold on the source, then start it on the target without
    /// offsets (from the beginning of the target's topics).
    #[default]
    Drain,
    /// Copy them, for a target whose topics hold the same records at the same offsets (the same Kafka
    /// cluster).
    Copy,
}

/// `--sink-offsets` was given a value other than `drain` or `copy`.
#[derive(Debug, thiserror::Error)]
#[error("unknown sink offsets mode '{0}': use 'drain' (the default) or 'copy'")]
pub struct UnknownSinkOffsets(String);

impl std::str::FromStr for SinkOffsets {
    type Err = UnknownSinkOffsets;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "drain" => Ok(SinkOffsets::Drain),
            "copy" => Ok(SinkOffsets::Copy),
            _ => Err(UnknownSinkOffsets(s.to_string())),
        }
    }
}

/// A `--drain-timeout` that is not a duration.
#[derive(Debug, thiserror::Error)]
#[error("invalid duration '{0}': give seconds (60), or a number with ms, s or m (500ms, 90s, 2m)")]
pub struct BadDuration(String);

/// Parses `60`, `60s`, `500ms` or `2m`.
///
/// # Errors
/// Anything else.
pub fn parse_duration(s: &str) -> Result<Duration, BadDuration> {
    let t = s.trim();
    let (number, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: u64 = number.parse().map_err(|_| BadDuration(s.to_string()))?;
    match unit.trim() {
        "" | "s" => Ok(Duration::from_secs(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "m" => Ok(Duration::from_secs(n.saturating_mul(60))),
        _ => Err(BadDuration(s.to_string())),
    }
}

/// What `migrate` should do besides the recipe.
#[derive(Debug, Clone)]
pub struct MigrateOptions {
    /// Leave the connector STOPPED on the target.
    pub leave_stopped: bool,
    /// Delete the connector from the source once it runs on the target.
    pub delete_source: bool,
    /// Whether sink offsets are copied.
    pub sink_offsets: SinkOffsets,
    /// How long a sink may take to deliver what its topics hold before it is stopped on the source.
    pub drain_timeout: Duration,
    /// `--schema-registry-to`: the registry the connectors' subjects are carried to, and their
    /// converters' `schema.registry.url` on the target.
    pub schema_registry_to: Option<super::schemas::SchemaTarget>,
}

impl Default for MigrateOptions {
    fn default() -> Self {
        MigrateOptions {
            leave_stopped: false,
            delete_source: false,
            sink_offsets: SinkOffsets::Drain,
            drain_timeout: Duration::from_secs(60),
            schema_registry_to: None,
        }
    }
}

/// A reason a connector cannot be moved, found before anything was stopped.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// Neither endpoint has the connector.
    #[error("Connector {name} was not found on {from}")]
    NotFound {
        /// The connector's name.
        name: String,
        /// The worker read from (its REST URL).
        from: String,
    },
    /// The target could not be asked.
    #[error("{to} cannot be asked whether it can run {name}: {source}")]
    Target {
        /// The connector's name.
        name: String,
        /// The target worker or cluster (its REST URL).
        to: String,
        /// The underlying error.
        #[source]
        source: RequestError,
    },
    /// The source could not be asked.
    #[error("{from} cannot be asked about {name}: {source}")]
    Source {
        /// The connector's name.
        name: String,
        /// The worker read from (its REST URL).
        from: String,
        /// The underlying error.
        #[source]
        source: RequestError,
    },
    /// The config names no plugin.
    #[error("Connector {name} has no connector.class in its config")]
    NoClass {
        /// The connector's name.
        name: String,
    },
    /// The target lacks the plugin.
    #[error("{to} has no connector plugin {class} (needed by {name}): install it there first")]
    NoPlugin {
        /// The connector's name.
        name: String,
        /// The target worker or cluster (its REST URL).
        to: String,
        /// The connector class the target lacks.
        class: String,
    },
    /// The target finds errors in the config.
    #[error("{to} rejects the config of {name}: {}; fix it there (for example the worker's config providers or paths) first", errors.join("; "))]
    Invalid {
        /// The connector's name.
        name: String,
        /// The target worker or cluster (its REST URL).
        to: String,
        /// The target's validation errors.
        errors: Vec<String>,
    },
    /// The target holds another connector of that name.
    #[error("A connector named {name} already exists on {to} with a different config: delete it there, or give it another name, first")]
    Taken {
        /// The connector's name.
        name: String,
        /// The target worker or cluster (its REST URL).
        to: String,
    },
    /// A sink would not be able to deliver everything before moving.
    #[error("Sink {name} reads topics that source connector {feeder} still writes on {from}: migrate {feeder} too, stop it there, or use --sink-offsets copy if the target's topics hold the same records")]
    Fed {
        /// The connector's name.
        name: String,
        /// The connector that feeds it.
        feeder: String,
        /// The worker read from (its REST URL).
        from: String,
    },
}

/// A step that failed once the connector was, or was being, moved.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// A request failed.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The connector did not stop on the source.
    #[error("{name} did not reach STOPPED on {from} within 60 s")]
    NotStopped {
        /// The connector's name.
        name: String,
        /// The worker read from (its REST URL).
        from: String,
    },
    /// The offsets read back differ.
    #[error("The offsets read back from {to} differ from those written: {written}")]
    OffsetsDiffer {
        /// The target worker or cluster (its REST URL).
        to: String,
        /// The offsets written.
        written: Json,
    },
    /// `--schema-registry-to`: the subjects could not be carried.
    #[error("The schemas could not be carried to the target's registry: {0}")]
    Schemas(String),
}

/// Why `migrate` failed.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// The connectors could not be listed on the source.
    #[error("Cannot list the connectors of {from}: {source}")]
    List {
        /// The worker read from (its REST URL).
        from: String,
        /// The underlying error.
        #[source]
        source: RequestError,
    },
    /// Checks failed before anything was stopped.
    #[error("{}\nNothing was stopped: the connectors on {from} are as they were.", problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Checks {
        /// The worker read from (its REST URL).
        from: String,
        /// What the checks found.
        problems: Vec<CheckError>,
    },
    /// A sink did not finish delivering; it still runs on the source.
    #[error("{source}\nConnector {name} was not stopped: it still runs on {from}, and nothing of it was moved. Run the same command again (finished steps are recognised).")]
    Drain {
        /// The connector's name.
        name: String,
        /// The worker read from (its REST URL).
        from: String,
        /// The underlying error.
        #[source]
        source: DrainError,
    },
    /// A step failed after the connector was stopped on the source.
    #[error("{source}\nConnector {name} is STOPPED on {from} with its config and offsets intact. Fix the problem and run the same command again (finished steps are recognised), or resume it there with PUT /connectors/{}/resume.", seg(name))]
    Step {
        /// The connector's name.
        name: String,
        /// The worker read from (its REST URL).
        from: String,
        /// The underlying error.
        #[source]
        source: StepError,
    },
}

/// One connector to move, as found by the checks.
#[derive(Debug)]
struct Plan {
    name: String,
    /// Its status on the source; `None` when only the target has it (moved by an earlier run).
    source: Option<Status>,
    /// Its status on the target when the target already has it with the same config.
    target: Option<Status>,
}

impl Plan {
    fn is_sink(&self) -> bool {
        self.source.as_ref().is_some_and(|s| s.kind == "sink")
    }

    /// A running sink whose offsets are not copied delivers what its topics hold before it is stopped.
    fn drains(&self, options: &MigrateOptions) -> bool {
        options.sink_offsets == SinkOffsets::Drain
            && self.is_sink()
            && self.source.as_ref().is_some_and(|s| s.state == "RUNNING")
    }
}

/// Moves connectors from one endpoint to another; `report` receives one line per step.
///
/// # Errors
/// When a check fails, nothing was stopped and every problem is listed. At the first failing step after
/// that, a message saying what failed and how to retry; the source connector is then STOPPED but intact.
pub async fn migrate(
    from: &Endpoint,
    to: &Endpoint,
    names: &[String],
    options: &MigrateOptions,
    report: &mut dyn FnMut(&str),
) -> Result<(), MigrateError> {
    let names = if names.is_empty() {
        from.connectors()
            .await
            .map_err(|source| MigrateError::List {
                from: from.url().to_string(),
                source,
            })?
    } else {
        names.to_vec()
    };
    let mut plans = check_all(from, to, &names, options).await?;
    // Sources first, so that a sink moved in the same run has nothing left to receive on the source.
    plans.sort_by_key(|p| p.is_sink());
    for plan in &plans {
        move_one(from, to, plan, options, report).await?;
    }
    Ok(())
}

async fn check_all(
    from: &Endpoint,
    to: &Endpoint,
    names: &[String],
    options: &MigrateOptions,
) -> Result<Vec<Plan>, MigrateError> {
    let failed = |problems| MigrateError::Checks {
        from: from.url().to_string(),
        problems,
    };
    let Some(first) = names.first().cloned() else {
        return Ok(Vec::new());
    };
    let plugins = to.plugin_classes().await.map_err(|source| {
        failed(vec![CheckError::Target {
            name: first,
            to: to.url().to_string(),
            source,
        }])
    })?;
    let mut plans = Vec::new();
    let mut problems = Vec::new();
    for name in names {
        match check_one(from, to, name, &plugins, options).await {
            Ok(plan) => plans.push(plan),
            Err(e) => problems.push(e),
        }
    }
    problems.extend(check_feeders(from, &plans, names, options).await);
    if problems.is_empty() {
        Ok(plans)
    } else {
        Err(failed(problems))
    }
}

/// Sinks to be drained must not be fed by a source connector that keeps running on the source.
async fn check_feeders(
    from: &Endpoint,
    plans: &[Plan],
    names: &[String],
    options: &MigrateOptions,
) -> Vec<CheckError> {
    let moving: BTreeSet<&str> = names.iter().map(String::as_str).collect();
    let mut problems = Vec::new();
    for plan in plans {
        if !plan.drains(options) {
            continue;
        }
        match feeders(from, &plan.name).await {
            Ok(list) => problems.extend(
                list.into_iter()
                    .filter(|f| !moving.contains(f.as_str()))
                    .map(|feeder| CheckError::Fed {
                        name: plan.name.clone(),
                        feeder,
                        from: from.url().to_string(),
                    }),
            ),
            Err(source) => problems.push(CheckError::Source {
                name: plan.name.clone(),
                from: from.url().to_string(),
                source,
            }),
        }
    }
    problems
}

/// Kafka resolves a plugin by its class name, its simple name, or its simple name without `Connector`.
fn has_plugin(plugins: &[String], class: &str) -> bool {
    plugins.iter().any(|p| {
        let simple = p.rsplit('.').next().unwrap_or(p);
        p == class || simple == class || simple.strip_suffix("Connector") == Some(class)
    })
}

async fn check_one(
    from: &Endpoint,
    to: &Endpoint,
    name: &str,
    plugins: &[String],
    options: &MigrateOptions,
) -> Result<Plan, CheckError> {
    let on_source = |source| CheckError::Source {
        name: name.to_string(),
        from: from.url().to_string(),
        source,
    };
    let on_target = |source| CheckError::Target {
        name: name.to_string(),
        to: to.url().to_string(),
        source,
    };
    let config = from.config(name).await.map_err(on_source)?;
    let config = config.map(|c| target_config(&c, options));
    let existing = to.config(name).await.map_err(on_target)?;
    let Some(config) = config else {
        // Gone from the source but on the target: an earlier run moved it with --delete-source.
        return match existing {
            Some(_) => Ok(Plan {
                name: name.to_string(),
                source: None,
                target: None,
            }),
            None => Err(CheckError::NotFound {
                name: name.to_string(),
                from: from.url().to_string(),
            }),
        };
    };
    let source = from.status(name).await.map_err(on_source)?;
    let target = match existing {
        Some(e) if e != config => {
            return Err(CheckError::Taken {
                name: name.to_string(),
                to: to.url().to_string(),
            })
        }
        Some(_) => to.status(name).await.map_err(on_target)?,
        None => {
            check_target_takes(to, name, &config, plugins).await?;
            None
        }
    };
    Ok(Plan {
        name: name.to_string(),
        source,
        target,
    })
}

/// The target has the plugin and accepts the config.
async fn check_target_takes(
    to: &Endpoint,
    name: &str,
    config: &Json,
    plugins: &[String],
) -> Result<(), CheckError> {
    let class = config[crate::config::keys::CONNECTOR_CLASS]
        .as_str()
        .ok_or_else(|| CheckError::NoClass {
            name: name.to_string(),
        })?;
    if !has_plugin(plugins, class) {
        return Err(CheckError::NoPlugin {
            name: name.to_string(),
            to: to.url().to_string(),
            class: class.to_string(),
        });
    }
    let errors = to
        .validation_errors(class, config)
        .await
        .map_err(|source| CheckError::Target {
            name: name.to_string(),
            to: to.url().to_string(),
            source,
        })?;
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CheckError::Invalid {
            name: name.to_string(),
            to: to.url().to_string(),
            errors,
        })
    }
}

async fn move_one(
    from: &Endpoint,
    to: &Endpoint,
    plan: &Plan,
    options: &MigrateOptions,
    report: &mut dyn FnMut(&str),
) -> Result<(), MigrateError> {
    let name = plan.name.as_str();
    let Some(source) = &plan.source else {
        report(&format!(
            "{name}: not on {} any more; {} has it (moved by an earlier run)",
            from.url(),
            to.url()
        ));
        return Ok(());
    };
    let undrained = plan.is_sink() && plan.target.is_none() && !plan.drains(options);
    if undrained && options.sink_offsets == SinkOffsets::Drain {
        report(&format!(
            "{name}: not drained, as it is {} on {}: records its topics there hold beyond its offsets are not delivered",
            source.state,
            from.url()
        ));
    }
    if plan.drains(options) {
        drain(from, name, options.drain_timeout, report)
            .await
            .map_err(|source| MigrateError::Drain {
                name: name.to_string(),
                from: from.url().to_string(),
                source,
            })?;
    }
    steps(from, to, plan, source, options, report)
        .await
        .map_err(|source| MigrateError::Step {
            name: name.to_string(),
            from: from.url().to_string(),
            source,
        })
}

async fn steps(
    from: &Endpoint,
    to: &Endpoint,
    plan: &Plan,
    source: &Status,
    options: &MigrateOptions,
    report: &mut dyn FnMut(&str),
) -> Result<(), StepError> {
    let name = plan.name.as_str();
    if source.is_stopped() {
        report(&format!("{name}: already stopped on {}", from.url()));
    } else {
        stop(from, name).await?;
        report(&format!("{name}: stopped on {}", from.url()));
    }
    let config = from.config(name).await?.unwrap_or(Json::Null);
    if let Some(target) = options.schema_registry_to.clone() {
        let read = config.clone();
        let carried = tokio::task::spawn_blocking(move || schemas::carry(&read, &target))
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
            .map_err(StepError::Schemas)?;
        report(&format!(
            "{name}: carried {carried} schema version(s) to the target's registry"
        ));
    }
    let config = target_config(&config, options);
    let offsets = from.offsets(name).await?;
    report(&format!(
        "{name}: read config and {} offset(s)",
        offsets.as_array().map_or(0, Vec::len)
    ));
    match &plan.target {
        Some(_) => report(&format!(
            "{name}: already created on {} by an earlier run",
            to.url()
        )),
        None => {
            to.create_stopped(name, &config).await?;
            report(&format!("{name}: created STOPPED on {}", to.url()));
        }
    }
    if let Some(t) = plan.target.as_ref().filter(|t| t.state != "STOPPED") {
        report(&format!(
            "{name}: already {} on {}; its offsets there are left as they are",
            t.state,
            to.url()
        ));
    } else {
        write_offsets(to, plan, &offsets, options, report).await?;
        if !options.leave_stopped {
            to.resume(name).await?;
            report(&format!("{name}: resumed on {}", to.url()));
        }
    }
    if options.delete_source {
        from.delete(name).await?;
        report(&format!("{name}: deleted from {}", from.url()));
    }
    Ok(())
}

/// The config as the target gets it: with `--schema-registry-to`, its converters name that registry.
fn target_config(config: &Json, options: &MigrateOptions) -> Json {
    match &options.schema_registry_to {
        Some(target) => schemas::rewrite(config, target),
        None => config.clone(),
    }
}

async fn stop(from: &Endpoint, name: &str) -> Result<(), StepError> {
    from.stop(name).await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        if from.status(name).await?.is_some_and(|s| s.is_stopped()) {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            return Err(StepError::NotStopped {
                name: name.to_string(),
                from: from.url().to_string(),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn write_offsets(
    to: &Endpoint,
    plan: &Plan,
    offsets: &Json,
    options: &MigrateOptions,
    report: &mut dyn FnMut(&str),
) -> Result<(), StepError> {
    let name = plan.name.as_str();
    if plan.is_sink() && options.sink_offsets == SinkOffsets::Drain {
        report(&format!(
            "{name}: sink offsets not copied (they are positions in the source's topics): on {} it starts from the beginning of its topics there; --sink-offsets copy copies them",
            to.url()
        ));
        return Ok(());
    }
    if offsets.as_array().is_none_or(Vec::is_empty) {
        return Ok(());
    }
    if plan.target.is_some() && normalised(&to.offsets(name).await?) == normalised(offsets) {
        report(&format!(
            "{name}: offsets already written on {} by an earlier run",
            to.url()
        ));
        return Ok(());
    }
    to.alter_offsets(name, offsets).await?;
    let written = to.offsets(name).await?;
    if normalised(&written) != normalised(offsets) {
        return Err(StepError::OffsetsDiffer {
            to: to.url().to_string(),
            written,
        });
    }
    report(&format!(
        "{name}: offsets written and verified on {}",
        to.url()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugins_match_by_class_simple_name_or_alias() {
        let plugins = vec!["org.apache.kafka.connect.file.FileStreamSourceConnector".to_string()];
        for class in [
            "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "FileStreamSourceConnector",
            "FileStreamSource",
        ] {
            assert!(has_plugin(&plugins, class), "{class}");
        }
        assert!(!has_plugin(&plugins, "FileStreamSink"));
        assert!(!has_plugin(&plugins, "Connector"));
    }

    #[test]
    fn sink_offsets_modes() {
        assert_eq!("copy".parse::<SinkOffsets>().unwrap(), SinkOffsets::Copy);
        assert_eq!("DRAIN".parse::<SinkOffsets>().unwrap(), SinkOffsets::Drain);
        assert!("skip".parse::<SinkOffsets>().is_err());
    }

    #[test]
    fn drain_timeouts() {
        assert_eq!(parse_duration("60").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        for bad in ["", "s", "1h", "-1", "1.5"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
