//! The file-system rules every native Paragraf writer follows, in one place.
//!
//! * [`write_atomic`]: a file appears whole or not at all. The bytes go to a hidden temporary sibling
//!   (`.<name>.tmp-<pid>`), are synced, renamed over the target, and the folder is synced so the rename itself
//!   survives a power cut. Readers (the browser, a second build, the proxy) never see half a file.
//! * [`remove_leftovers`]: the temporary files a killed writer left behind are deleted by the next writer in
//!   that folder; files of writers that are still running are kept.
//! * [`open_regular`] / [`read_regular`]: a path read as a file is one. A FIFO where a bundle should be would
//!   block the reader forever (opening one waits for a writer), a device never ends: both are refused by their
//!   kind before they are opened.
//! * [`join_name`]: a name that comes from data or a user (a law abbreviation, a manifest entry) becomes a path
//!   only after [`paragraf_format::names`] accepts it, so it cannot leave the folder it is joined to.
//!
//! Why a crate of its own: the corpus fetcher, the bundler, the embedding cache and the model fetcher all write
//! files; before, each had its own rename routine and only two synced. The IO-free crates stay IO-free, so the rules live here.
#![warn(missing_docs)]

use std::io::Write;
use std::path::{Path, PathBuf};

use paragraf_format::names::{self, NameError};

/// What went wrong, with the path it concerns.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// An OS error while doing `action` on `path`.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done ("write", "rename", ...).
        action: &'static str,
        /// The file or folder.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A name from data or a user that must not become a path.
    #[error(transparent)]
    Name(#[from] NameError),
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> FsError + 'a {
    move |source| FsError::Io {
        action,
        path: path.display().to_string(),
        source,
    }
}

/// Opens `path` for reading when it is a regular file (symlinks followed); a folder, FIFO, device or socket is
/// refused by its kind before it is opened (an `InvalidInput` error).
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let kind = std::fs::metadata(path)?.file_type();
    if !kind.is_file() {
        return Err(not_regular(kind));
    }
    std::fs::File::open(path)
}

/// The whole regular file `path` ([`open_regular`]).
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = open_regular(path)?;
    let mut bytes = Vec::with_capacity(file.metadata().map_or(0, |m| m.len() as usize));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn not_regular(kind: std::fs::FileType) -> std::io::Error {
    #[cfg(unix)]
    let what = {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_dir() {
            "a folder"
        } else {
            "something else"
        }
    };
    #[cfg(not(unix))]
    let what = if kind.is_dir() {
        "a folder"
    } else {
        "something else"
    };
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("{what}, not a regular file (refused unopened)"),
    )
}

/// The marker between a file's name and the writer's process id in temporary files.
const TMP_MARKER: &str = ".tmp-";

/// The hidden temporary sibling `path` is written through: `.<name>.tmp-<pid>`.
fn temporary_sibling(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}{TMP_MARKER}{}", std::process::id()))
}

/// Writes `bytes` to `path` atomically and durably (see the module docs). The folder must exist.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FsError> {
    let tmp = temporary_sibling(path);
    let written = (|| {
        let mut file = std::fs::File::create(&tmp).map_err(io("create", &tmp))?;
        file.write_all(bytes).map_err(io("write", &tmp))?;
        file.sync_all().map_err(io("sync", &tmp))?;
        std::fs::rename(&tmp, path).map_err(io("rename into place", path))
    })();
    if written.is_err() {
        // A full disk or a bad folder: leave nothing half-written behind.
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    sync_folder(path.parent().unwrap_or(Path::new(".")))
}

/// Syncs a folder so that renames and new files in it are durable.
pub fn sync_folder(dir: &Path) -> Result<(), FsError> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    std::fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(io("sync folder", dir))
}

/// Whether a process with this id is running (Linux: `/proc/<pid>`; elsewhere every writer counts as gone
/// unless it is this process).
fn process_alive(pid: u32) -> bool {
    pid == std::process::id()
        || (cfg!(target_os = "linux") && Path::new(&format!("/proc/{pid}")).exists())
}

/// Deletes the temporary files and work folders ([`temp_dir_in`]) that killed writers left in `dir` and returns
/// their names. Those of running processes, this one included, are kept. A missing folder has no leftovers.
pub fn remove_leftovers(dir: &Path) -> Result<Vec<String>, FsError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io("list", dir)(e)),
    };
    let mut removed = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io("list", dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = leftover_pid(&name) else {
            continue;
        };
        if process_alive(pid) {
            continue;
        }
        let path = entry.path();
        // A work folder (`temp_dir_in`) goes with everything in it.
        let removal = if entry.file_type().is_ok_and(|t| t.is_dir()) {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        match removal {
            Ok(()) => removed.push(name),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io("remove leftover", &path)(e)),
        }
    }
    removed.sort();
    Ok(removed)
}

/// A fresh work folder `dir/.<purpose>.tmp-<pid>` for a long job whose result is moved into place at the end (a
/// model fetch); a killed job's folder is removed by the next [`remove_leftovers`] in `dir`, which runs first.
pub fn temp_dir_in(dir: &Path, purpose: &str) -> Result<PathBuf, FsError> {
    remove_leftovers(dir)?;
    let path = dir.join(format!(".{purpose}{TMP_MARKER}{}", std::process::id()));
    match std::fs::remove_dir_all(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("clear", &path)(e)),
    }
    std::fs::create_dir_all(&path).map_err(io("create", &path))?;
    Ok(path)
}

/// The writer's pid when `name` is one of [`write_atomic`]'s temporary files or a [`temp_dir_in`] folder.
fn leftover_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (_, pid) = rest.rsplit_once(TMP_MARKER)?;
    pid.parse().ok()
}

/// `dir/name` for a name from data or a user, after [`names::check_file_name`] accepted it: the result is
/// always directly inside `dir`.
pub fn join_name(dir: &Path, name: &str) -> Result<PathBuf, FsError> {
    names::check_file_name(name)?;
    Ok(dir.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_jobs_work_folder_is_removed_and_a_running_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        // pid 4294967 does not run (Linux pids stay below 2^22).
        let dead = dir.path().join(".fetch.tmp-4294967");
        std::fs::create_dir_all(dead.join("wheel-0.2.1")).unwrap();
        std::fs::write(dead.join("wheel-0.2.1/chunk.bin"), b"x").unwrap();
        let mine = temp_dir_in(dir.path(), "fetch").unwrap();
        assert!(!dead.exists(), "the dead job's folder is gone");
        assert!(mine.is_dir());
        assert_eq!(
            mine.file_name().unwrap().to_string_lossy(),
            format!(".fetch.tmp-{}", std::process::id())
        );
        assert!(
            remove_leftovers(dir.path()).unwrap().is_empty(),
            "this process's folder is kept"
        );
        assert!(mine.is_dir());
    }

    #[test]
    fn writes_whole_files_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
    }

    #[test]
    fn a_failed_write_names_the_file_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing-folder").join("a.json");
        let err = write_atomic(&path, b"x").unwrap_err().to_string();
        assert!(err.starts_with("cannot create "), "{err}");
        assert!(err.contains("missing-folder/.a.json.tmp-"), "{err}");
    }

    #[test]
    fn leftovers_of_dead_writers_go_and_live_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        // Pid 0 is never a user process; u32::MAX is above any pid_max.
        let dead = format!(".BGB.section.pgb{TMP_MARKER}{}", u32::MAX);
        let mine = format!(".manifest.json{TMP_MARKER}{}", std::process::id());
        for name in [
            dead.as_str(),
            mine.as_str(),
            "keep.pgb",
            ".hidden",
            "x.tmp-12",
        ] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        assert_eq!(remove_leftovers(dir.path()).unwrap(), vec![dead.clone()]);
        assert!(dir.path().join(&mine).exists());
        assert!(dir.path().join("keep.pgb").exists());
        assert!(dir.path().join("x.tmp-12").exists());
        assert!(remove_leftovers(&dir.path().join("nope"))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn names_that_would_leave_the_folder_are_refused() {
        let dir = Path::new("/data");
        assert_eq!(
            join_name(dir, "BGB.xml").unwrap(),
            PathBuf::from("/data/BGB.xml")
        );
        for bad in ["../x", "/tmp/x", "", "a/b", ".hidden", "a\0b"] {
            assert!(join_name(dir, bad).is_err(), "{bad:?} accepted");
        }
    }
}
