//! The process metrics of the Prometheus client conventions (`process_cpu_seconds_total`,
//! `process_resident_memory_bytes`, …), read from `/proc` at scrape time. Where `/proc` is missing
//! (not Linux), they are left out.

/// Linux's `USER_HZ`: the unit of the CPU times in `/proc/<pid>/stat` (100 on every architecture Linux
/// exposes to user space).
const TICKS_PER_SECOND: f64 = 100.0;

/// One reading of the process's resources.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProcessStats {
    /// User and system CPU time, in seconds.
    pub cpu_seconds: f64,
    /// Resident memory, in bytes.
    pub resident_bytes: u64,
    /// Virtual memory, in bytes.
    pub virtual_bytes: u64,
    /// Open file descriptors.
    pub open_fds: u64,
    /// The soft limit on open file descriptors.
    pub max_fds: Option<u64>,
    /// Threads.
    pub threads: u64,
    /// When the process started, in seconds since the epoch.
    pub start_time_seconds: f64,
}

/// The fields of `/proc/<pid>/stat` after the command name, the first being field 3 (`state`).
fn stat_fields(stat: &str) -> Vec<&str> {
    stat.rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default()
}

fn status_kb(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Reads the stats of this process; None when `/proc` cannot be read.
pub fn read() -> Option<ProcessStats> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let boot = std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("btime "))
                .and_then(|v| v.trim().parse::<f64>().ok())
        })
        .unwrap_or(0.0);
    let f = stat_fields(&stat);
    let field = |n: usize| -> f64 {
        f.get(n - 3)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let open_fds = std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count() as u64)
        .unwrap_or(0);
    // "Max open files  <soft>  <hard>  files"
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let max_fds = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok());
    Some(ProcessStats {
        cpu_seconds: (field(14) + field(15)) / TICKS_PER_SECOND,
        resident_bytes: status_kb(&status, "VmRSS:").unwrap_or(0) * 1024,
        virtual_bytes: field(23) as u64,
        open_fds,
        max_fds,
        threads: field(20) as u64,
        start_time_seconds: boot + field(22) / TICKS_PER_SECOND,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_threads_memory_and_a_start_time() {
        let p = read().expect("/proc is there on Linux");
        assert!(p.threads >= 1, "{p:?}");
        assert!(p.resident_bytes > 1 << 20, "{p:?}");
        assert!(p.open_fds >= 3, "{p:?}");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(
            p.start_time_seconds > now - 86_400.0 && p.start_time_seconds <= now + 1.0,
            "{p:?}"
        );
    }
}
