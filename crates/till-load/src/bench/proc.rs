//! What the nodes and the load generator used, read from `/proc` (Linux).

/// User and system CPU time the processes have used, in microseconds, from `/proc` (Linux;
/// 0 elsewhere).
pub(super) fn cpu_us(pids: &[u32]) -> u64 {
    // SAFETY: sysconf only reads a configuration value.
    let ticks_per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(0);
    let ticks: u64 = pids
        .iter()
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // Fields after the command name, which may hold spaces, closed by the last ')'.
            let fields: Vec<&str> = stat.get(stat.rfind(')')? + 2..)?.split_whitespace().collect();
            Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
        })
        .sum();
    (ticks * 1_000_000).checked_div(ticks_per_second).unwrap_or(0)
}

/// Starts a process's peak resident set over from its current size (Linux 4.0 and later,
/// `/proc/PID/clear_refs`); false where that is refused or unknown.
pub(super) fn reset_peak_rss(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// Peak resident set of a process, from `/proc` (Linux).
pub(super) fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
