//! The subcommands of `till-load`, one module each holding its arguments, its run and the
//! printing of its report, and what they share: the workspace a run's nodes live in.

pub(crate) mod bench;
pub(crate) mod catalog;
pub(crate) mod crash;
pub(crate) mod customers;
pub(crate) mod drawer;
pub(crate) mod mail;
pub(crate) mod prefill;
pub(crate) mod reads;
pub(crate) mod receipts;

use std::path::PathBuf;

/// What every subcommand that starts nodes is given: where the nodes come from and write, and
/// the seed of the run's random choices.
#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// The `till` binary (default: next to this one).
    #[arg(long)]
    till: Option<PathBuf>,
    /// Where node logs and keys go (default: a new temporary directory).
    #[arg(long)]
    work_dir: Option<PathBuf>,
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
}

impl RunArgs {
    pub(crate) fn workspace(&self) -> anyhow::Result<Workspace> {
        Workspace::new(self.till.clone(), self.work_dir.clone())
    }
}

/// Where a run's nodes come from and write: the `till` binary (by default the one beside this
/// one) and a work directory (by default a temporary one, removed after a successful run and
/// kept with the nodes' logs after a failed one).
pub(crate) struct Workspace {
    pub(crate) binary: PathBuf,
    pub(crate) work_dir: PathBuf,
    temporary: bool,
}

impl Workspace {
    pub(crate) fn new(till: Option<PathBuf>, work_dir: Option<PathBuf>) -> anyhow::Result<Workspace> {
        let binary = match till {
            Some(path) => path,
            None => std::env::current_exe()?.with_file_name("till"),
        };
        let temporary = work_dir.is_none();
        let work_dir = match work_dir {
            Some(dir) => {
                std::fs::create_dir_all(&dir)?;
                dir
            }
            // A name of its own: a failed run leaves its directory (the node logs) behind, and
            // a later process may get the same id.
            None => tempfile::Builder::new().prefix("till-load-").tempdir()?.keep(),
        };
        Ok(Workspace {
            binary,
            work_dir,
            temporary,
        })
    }

    pub(crate) fn clean_up(self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.work_dir);
        }
    }
}

/// Prints `report` as JSON, or as `print` writes it for a person.
pub(crate) fn show<R: serde::Serialize>(report: &R, json: bool, print: fn(&R)) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print(report);
    }
    Ok(())
}
