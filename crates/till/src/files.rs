//! The files the fiscal tools read and write on an auditor's behalf. Read: regular files
//! only, never past a size, and inside a bundle's folder never through a link, so that a
//! planted link, a device or a pipe is refused rather than followed or read without end.
//! Written: a bundle goes into a folder of its own, each file created new, never through a
//! link and never over a file that is there.

use anyhow::{Context, bail};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Whether a read may follow a symbolic link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// A path the person named on the command line: theirs to point anywhere.
    Follow,
    /// A file of a bundle's folder: the folder's own files only.
    Refuse,
}

/// Why a file was not read.
#[derive(Debug)]
pub enum Unreadable {
    Missing,
    Link,
    NotAFile,
    TooLarge { bytes: u64, limit: u64 },
    Io(std::io::Error),
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unreadable::Missing => write!(f, "is missing"),
            Unreadable::Link => write!(f, "is a symbolic link, not a file of the folder"),
            Unreadable::NotAFile => write!(f, "is not a regular file"),
            Unreadable::TooLarge { bytes, limit } => {
                write!(f, "holds {bytes} bytes, more than the {limit} a file of this kind may")
            }
            Unreadable::Io(error) => write!(f, "cannot be read ({error})"),
        }
    }
}

impl std::error::Error for Unreadable {}

/// The bytes of the regular file at `path`, at most `limit` of them. A pipe or a device is
/// refused from its metadata before anything is read (opening it does not wait for a writer),
/// and a file that grows while read stops at `limit`.
pub fn read_file(path: &Path, limit: u64, links: Links) -> Result<Vec<u8>, Unreadable> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let no_follow = if links == Links::Refuse { libc::O_NOFOLLOW } else { 0 };
        options.custom_flags(libc::O_NONBLOCK | no_follow);
    }
    #[cfg(not(unix))]
    if links == Links::Refuse && std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
        return Err(Unreadable::Link);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Err(Unreadable::Missing),
        #[cfg(unix)]
        Err(error) if links == Links::Refuse && error.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Unreadable::Link);
        }
        Err(error) => return Err(Unreadable::Io(error)),
    };
    let meta = file.metadata().map_err(Unreadable::Io)?;
    if !meta.is_file() {
        return Err(Unreadable::NotAFile);
    }
    if meta.len() > limit {
        return Err(Unreadable::TooLarge {
            bytes: meta.len(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or_default());
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Unreadable::Io)?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read > limit {
        return Err(Unreadable::TooLarge { bytes: read, limit });
    }
    Ok(bytes)
}

/// The folder a bundle is written in.
pub struct NewFolder {
    path: PathBuf,
}

impl NewFolder {
    /// Refuses, before anything is made, an `--out` that is a link, a file, or a folder that
    /// holds anything.
    pub fn check(path: &Path) -> anyhow::Result<()> {
        let shown = path.display();
        match std::fs::symlink_metadata(path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(error).with_context(|| format!("cannot read --out {shown}")),
            Ok(meta) if meta.file_type().is_symlink() => {
                bail!("--out {shown} is a symbolic link; name a new folder")
            }
            Ok(meta) if !meta.is_dir() => bail!("--out {shown} is a file; name a new folder"),
            Ok(_) => {
                let mut entries = std::fs::read_dir(path).with_context(|| format!("cannot read --out {shown}"))?;
                if entries.next().is_some() {
                    bail!("--out {shown} already holds files; name a new or empty folder");
                }
                Ok(())
            }
        }
    }

    /// Makes the folder (and its missing parents), or takes it as it is when it is an empty
    /// folder that [`NewFolder::check`] let through.
    pub fn create(path: &Path) -> anyhow::Result<NewFolder> {
        NewFolder::check(path)?;
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        match std::fs::create_dir(path) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => {}
            Err(error) => return Err(error).with_context(|| format!("cannot create {}", path.display())),
        }
        Ok(NewFolder {
            path: path.to_path_buf(),
        })
    }

    /// Creates the file `name` with `bytes`: a file or a link already there under that name
    /// (put there since the folder was checked) makes it fail rather than be written through.
    pub fn write(&self, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
        let path = self.path.join(name);
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
        let mut file: File = match options.open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                bail!("cannot create {}: a file or a link is already there", path.display())
            }
            Err(error) => return Err(error).with_context(|| format!("cannot create {}", path.display())),
        };
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .with_context(|| format!("cannot write {}", path.display()))
    }
}
