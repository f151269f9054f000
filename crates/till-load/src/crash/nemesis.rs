//! Faults of the database beneath the nodes: an outside command injects one (kills the
//! primary, pauses its Patroni, switches over...) and says when it struck and when the
//! database was whole again; the tills' acknowledgements say how long writes stopped.

use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// One fault as its command reported it, in milliseconds since the epoch.
#[derive(Clone, Debug)]
pub struct Fault {
    pub kind: String,
    pub struck_at: u64,
    pub healthy_at: u64,
}

/// Runs `command KIND` (through the shell) and reads its `fault MS` and `healthy MS` lines.
pub(super) async fn strike(command: &str, kind: &str) -> Result<Fault> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("{command} {kind}"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {command}"))?;
    let stdout = child.stdout.take().context("the nemesis's output")?;
    let mut lines = BufReader::new(stdout).lines();
    let (mut struck_at, mut healthy_at) = (None, None);
    while let Some(line) = lines.next_line().await? {
        match line.split_once(' ') {
            Some(("fault", at)) => struck_at = at.trim().parse().ok(),
            Some(("healthy", at)) => healthy_at = at.trim().parse().ok(),
            _ => {}
        }
    }
    let status = child.wait().await?;
    if !status.success() {
        bail!("the fault {kind} left the database broken ({status})");
    }
    match (struck_at, healthy_at) {
        (Some(struck_at), Some(healthy_at)) => Ok(Fault {
            kind: kind.to_owned(),
            struck_at,
            healthy_at,
        }),
        _ => bail!("the fault {kind} did not say when it struck and when it healed"),
    }
}

/// How long writes stopped around `fault`: the longest stretch without an acknowledgement
/// from the moment it struck to the first acknowledgement once the database was whole again.
/// `acknowledged` is sorted.
pub(super) fn downtime_ms(fault: &Fault, acknowledged: &[u64]) -> u64 {
    let mut previous = fault.struck_at;
    let mut longest = 0;
    for &at in acknowledged.iter().filter(|&&at| at > fault.struck_at) {
        longest = longest.max(at - previous);
        previous = at;
        if at > fault.healthy_at {
            return longest;
        }
    }
    longest.max(fault.healthy_at.saturating_sub(previous))
}

/// Per kind of fault: how many struck and the longest and the mean downtime, in seconds.
pub fn downtimes(faults: &[(Fault, u64)]) -> BTreeMap<String, (usize, f64, f64)> {
    let mut per_kind: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (fault, downtime) in faults {
        per_kind.entry(fault.kind.clone()).or_default().push(*downtime);
    }
    per_kind
        .into_iter()
        .map(|(kind, times)| {
            let longest = times.iter().copied().max().unwrap_or(0) as f64 / 1000.0;
            let mean = times.iter().sum::<u64>() as f64 / times.len() as f64 / 1000.0;
            (kind, (times.len(), longest, mean))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(struck_at: u64, healthy_at: u64) -> Fault {
        Fault {
            kind: "kill-primary".into(),
            struck_at,
            healthy_at,
        }
    }

    #[test]
    fn downtime_is_the_longest_silence_from_the_fault_to_the_first_write_after_recovery() {
        // Writes stop at 1_000, resume at 21_000; the database is whole at 25_000.
        let acks = [500, 900, 21_000, 21_010, 24_000, 25_500, 26_000];
        assert_eq!(downtime_ms(&fault(1_000, 25_000), &acks), 20_000);
        // No write until well after recovery: the silence runs to that write.
        assert_eq!(downtime_ms(&fault(1_000, 5_000), &[500, 9_000]), 8_000);
        // No write at all after the fault: up to recovery.
        assert_eq!(downtime_ms(&fault(1_000, 5_000), &[500]), 4_000);
    }
}
