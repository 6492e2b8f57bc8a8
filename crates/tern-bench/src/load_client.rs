//! This process as the load client of the socket labs (`ws`, `realtime`):
//! pinned to the load cores, a runtime of one thread per core, and room
//! for every socket it holds.

use std::process::{Command, Stdio};

use anyhow::{ensure, Context, Result};
use tokio::runtime::Runtime;

/// Pins every thread of this process (and so the threads and children it
/// starts later) to `cores`.
pub(crate) fn pin_self(cores: &str) -> Result<()> {
    let status = Command::new("taskset")
        .args(["-a", "-cp", cores, &std::process::id().to_string()])
        .stdout(Stdio::null())
        .status()
        .context("cannot run taskset (is it installed?)")?;
    ensure!(status.success(), "taskset -a -cp {cores} failed");
    Ok(())
}

/// The number of cores in a `taskset` list (`1`, `0-3`, `1,3`).
pub(crate) fn cores_in(list: &str) -> usize {
    list.split(',')
        .map(|part| match part.split_once('-') {
            Some((a, b)) => match (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 1,
            },
            None => 1,
        })
        .sum::<usize>()
        .max(1)
}

/// One thread per client core: a current-thread runtime for one.
pub(crate) fn client_runtime(cores: usize) -> Result<Runtime> {
    let rt = if cores == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cores)
            .enable_all()
            .build()?
    };
    Ok(rt)
}

/// Raises this process's open-file limit (children inherit it) to `want`;
/// fails with "`{needs}` {want} open files, and the hard limit allows ..."
/// when the hard limit is lower.
pub(crate) fn raise_open_files(want: u64, needs: &str) -> Result<()> {
    let got = rlimit::increase_nofile_limit(want).context("raising RLIMIT_NOFILE")?;
    ensure!(
        got >= want,
        "{needs} {want} open files, and the hard limit allows {got}"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_lists() {
        for (list, n) in [("1", 1), ("0-3", 4), ("1,3", 2), ("0-1,3", 3), ("", 1)] {
            assert_eq!(cores_in(list), n, "{list}");
        }
    }
}
