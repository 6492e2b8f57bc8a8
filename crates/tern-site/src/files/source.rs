//! Where files come from: a directory on disk, or files embedded in the
//! binary (`rust-embed`).

use std::{
    collections::HashMap,
    io,
    path::{Path, PathBuf},
    sync::Mutex,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use bytes::Bytes;
use sha2::{Digest, Sha256};

/// A file found: its bytes (or an open file), its length, its last
/// modification and the SHA-256 of its content.
pub(crate) struct Found {
    pub(crate) content: Content,
    pub(crate) len: u64,
    pub(crate) modified: Option<SystemTime>,
    pub(crate) hash: [u8; 32],
}

pub(crate) enum Content {
    Bytes(Bytes),
    File(tokio::fs::File),
}

type Get = fn(&str) -> Option<rust_embed::EmbeddedFile>;

pub(crate) enum Source {
    Dir(Dir),
    Embedded(Get),
}

impl Source {
    /// The file at `rel` (already checked by `path::relative`), `None`
    /// when there is none (or it is not a regular file, or a link out of
    /// the root).
    pub(crate) async fn open(&self, rel: &str) -> io::Result<Option<Found>> {
        match self {
            Source::Dir(dir) => dir.open(rel).await,
            Source::Embedded(get) => Ok(get(rel).map(embedded)),
        }
    }

    /// The SHA-256 of `rel`'s content, without the content (for URLs).
    pub(crate) fn hash(&self, rel: &str) -> Option<[u8; 32]> {
        match self {
            Source::Dir(dir) => dir.hash_now(rel),
            Source::Embedded(get) => get(rel).map(|f| f.metadata.sha256_hash()),
        }
    }
}

fn embedded(file: rust_embed::EmbeddedFile) -> Found {
    let content = match file.data {
        std::borrow::Cow::Borrowed(b) => Bytes::from_static(b),
        std::borrow::Cow::Owned(v) => Bytes::from(v),
    };
    Found {
        len: content.len() as u64,
        modified: file
            .metadata
            .last_modified()
            .map(|s| UNIX_EPOCH + Duration::from_secs(s)),
        hash: file.metadata.sha256_hash(),
        content: Content::Bytes(content),
    }
}

/// A directory: files are read as they are asked for, so changes show at
/// once; content hashes are kept while a file's length and modification
/// time stay the same.
pub(crate) struct Dir {
    root: PathBuf,
    hashes: Mutex<HashMap<PathBuf, Known>>,
}

/// A file's hash, with the modification time and length it was taken at.
type Known = (SystemTime, u64, [u8; 32]);

/// Files this small are read whole and sent from memory.
const SMALL: u64 = 64 * 1024;

impl Dir {
    pub(crate) fn new(root: &Path) -> io::Result<Dir> {
        let root = std::fs::canonicalize(root).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("the static files' directory {}: {e}", root.display()),
            )
        })?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!(
                    "the static files' directory {} is not a directory",
                    root.display()
                ),
            ));
        }
        Ok(Dir {
            root,
            hashes: Mutex::new(HashMap::new()),
        })
    }

    /// The canonical path of `rel`, if it stays under the root.
    fn resolve(&self, rel: &str) -> io::Result<Option<PathBuf>> {
        match std::fs::canonicalize(self.root.join(rel)) {
            Ok(path) if path.starts_with(&self.root) => Ok(Some(path)),
            Ok(_) => Ok(None),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn open(&self, rel: &str) -> io::Result<Option<Found>> {
        let path = match tokio::fs::canonicalize(self.root.join(rel)).await {
            Ok(path) if path.starts_with(&self.root) => Some(path),
            // A link out of the root.
            Ok(_) => None,
            Err(e) if is_missing(&e) => None,
            Err(e) => return Err(e),
        };
        let Some(path) = path else { return Ok(None) };
        let mut file = match tokio::fs::File::open(&path).await {
            Ok(f) => f,
            Err(e) if is_missing(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        // The open file's own metadata: what is served is what is
        // described, whatever happens to the path meanwhile.
        let meta = file.metadata().await?;
        if !meta.is_file() {
            return Ok(None);
        }
        let (len, modified) = (meta.len(), meta.modified().ok());
        if len <= SMALL {
            use tokio::io::AsyncReadExt;
            let mut content = Vec::with_capacity(len as usize);
            (&mut file)
                .take(SMALL + 1)
                .read_to_end(&mut content)
                .await?;
            let hash: [u8; 32] = Sha256::digest(&content).into();
            return Ok(Some(Found {
                len: content.len() as u64,
                modified,
                hash,
                content: Content::Bytes(Bytes::from(content)),
            }));
        }
        let hash = match self.cached(&path, modified, len) {
            Some(hash) => hash,
            None => {
                let p = path.clone();
                let hash = tokio::task::spawn_blocking(move || hash_file(&p))
                    .await
                    .map_err(io::Error::other)??;
                self.remember(path, modified, len, hash);
                hash
            }
        };
        Ok(Some(Found {
            content: Content::File(file),
            len,
            modified,
            hash,
        }))
    }

    fn cached(&self, path: &Path, modified: Option<SystemTime>, len: u64) -> Option<[u8; 32]> {
        let modified = modified?;
        let hashes = self.hashes.lock().unwrap_or_else(|e| e.into_inner());
        match hashes.get(path) {
            Some(&(m, l, hash)) if m == modified && l == len => Some(hash),
            _ => None,
        }
    }

    fn remember(&self, path: PathBuf, modified: Option<SystemTime>, len: u64, hash: [u8; 32]) {
        if let Some(modified) = modified {
            let mut hashes = self.hashes.lock().unwrap_or_else(|e| e.into_inner());
            hashes.insert(path, (modified, len, hash));
        }
    }

    /// `rel`'s hash, read now if it is not known (a blocking read: asset
    /// URLs are built from small files).
    fn hash_now(&self, rel: &str) -> Option<[u8; 32]> {
        let path = self.resolve(rel).ok()??;
        let meta = std::fs::metadata(&path).ok()?;
        if !meta.is_file() {
            return None;
        }
        let modified = meta.modified().ok();
        if let Some(hash) = self.cached(&path, modified, meta.len()) {
            return Some(hash);
        }
        let hash = hash_file(&path).ok()?;
        self.remember(path, modified, meta.len(), hash);
        Some(hash)
    }
}

fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory | io::ErrorKind::InvalidFilename
    )
}

fn hash_file(path: &Path) -> io::Result<[u8; 32]> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    io::copy(&mut file, &mut hasher)?;
    Ok(hasher.finalize().into())
}
