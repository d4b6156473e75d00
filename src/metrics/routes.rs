//! Route templates for the REST metrics: a request's path with its names and numbers replaced by
//! placeholders, so the label has a bounded number of values.

/// The REST API's routes; `{…}` matches any one segment.
const ROUTES: &[&str] = &[
    "/",
    "/health",
    "/metrics",
    "/connectors",
    "/connectors/{connector}",
    "/connectors/{connector}/config",
    "/connectors/{connector}/status",
    "/connectors/{connector}/restart",
    "/connectors/{connector}/pause",
    "/connectors/{connector}/resume",
    "/connectors/{connector}/stop",
    "/connectors/{connector}/tasks",
    "/connectors/{connector}/tasks/{task}/status",
    "/connectors/{connector}/tasks/{task}/restart",
    "/connectors/{connector}/topics",
    "/connectors/{connector}/topics/reset",
    "/connectors/{connector}/offsets",
    "/connector-plugins",
    "/connector-plugins/{plugin}/config",
    "/connector-plugins/{plugin}/config/validate",
    "/topics",
    "/topics/{topic}",
    "/topics/{topic}/partitions",
    "/topics/{topic}/partitions/{partition}",
    "/topics/{topic}/partitions/{partition}/records",
    "/topics/{topic}/partitions/{partition}/offsets",
    "/admin/loggers",
    "/admin/loggers/{logger}",
];

/// The route template of a raw request path (`/connectors/{connector}/status`); `other` for a path
/// the API does not serve.
pub fn route_template(path: &str) -> &'static str {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    ROUTES
        .iter()
        .find(|route| {
            let mut parts = route.split('/').filter(|s| !s.is_empty());
            let mut given = segments.iter();
            loop {
                match (parts.next(), given.next()) {
                    (None, None) => return true,
                    (Some(p), Some(s)) if p.starts_with('{') || p == *s => {}
                    _ => return false,
                }
            }
        })
        .copied()
        .unwrap_or("other")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_templates() {
        for (path, template) in [
            ("/", "/"),
            ("/metrics", "/metrics"),
            (
                "/connectors/a%2Fb/tasks/3/status",
                "/connectors/{connector}/tasks/{task}/status",
            ),
            ("/connectors/status", "/connectors/{connector}"),
            ("/connectors/x/nope", "other"),
            ("/admin/loggers/root", "/admin/loggers/{logger}"),
        ] {
            assert_eq!(route_template(path), template, "{path}");
        }
    }
}
