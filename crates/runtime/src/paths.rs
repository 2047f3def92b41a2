//! Confinement of file tools to the run's roots.

use std::path::{Component, Path, PathBuf};

use crate::{Error, Result};

/// The directories a run's file tools may touch: the working directory first, then any added
/// directories, and directories they may only read (a loaded skill's folder outside the
/// project). Paths are resolved against the working directory; `..` components, absolute
/// paths outside every root, and symlinks that lead outside are refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Roots {
    /// Canonical root directories; `dirs[0]` is the working directory.
    dirs: Vec<PathBuf>,
    /// Canonical directories the reading tools (ls, read_file, glob, grep) reach besides.
    read_only: Vec<PathBuf>,
    /// Canonical roots whose new files are private to the user (0600): an agent's memory.
    private: Vec<PathBuf>,
}

impl Roots {
    /// Roots made of `cwd` (canonicalized). `Config` when it does not exist.
    pub fn new(cwd: impl AsRef<Path>) -> Result<Self> {
        Self::with_dirs(cwd, std::iter::empty::<PathBuf>())
    }

    /// Roots made of `cwd` and `extra` directories (all canonicalized).
    pub fn with_dirs(
        cwd: impl AsRef<Path>,
        extra: impl IntoIterator<Item = impl AsRef<Path>>,
    ) -> Result<Self> {
        let mut dirs = Vec::new();
        for dir in std::iter::once(cwd.as_ref().to_path_buf())
            .chain(extra.into_iter().map(|d| d.as_ref().to_path_buf()))
        {
            let canonical = dir
                .canonicalize()
                .map_err(|e| Error::Config(format!("root directory {}: {e}", dir.display())))?;
            dirs.push(canonical);
        }
        Ok(Self {
            dirs,
            read_only: Vec::new(),
            private: Vec::new(),
        })
    }

    /// These roots and `dir` (which must exist), a root whose new files the writing tools make
    /// private to the user (mode 0600): an agent's memory directory, which the run reads and
    /// writes wherever it is. `Config` when it does not exist.
    pub fn with_private(mut self, dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref();
        let canonical = dir
            .canonicalize()
            .map_err(|e| Error::Config(format!("root directory {}: {e}", dir.display())))?;
        if !self.dirs.contains(&canonical) {
            self.dirs.push(canonical.clone());
        }
        if !self.private.contains(&canonical) {
            self.private.push(canonical);
        }
        Ok(self)
    }

    /// Whether a resolved path is in a private root (its new files are made 0600).
    pub fn is_private(&self, path: &Path) -> bool {
        self.private.iter().any(|dir| path.starts_with(dir))
    }

    /// These roots, and `dirs` for reading only (those that do not exist, or are inside a root
    /// already, are left out).
    #[must_use]
    pub fn with_read_only(mut self, dirs: impl IntoIterator<Item = impl AsRef<Path>>) -> Self {
        for dir in dirs {
            if let Ok(canonical) = dir.as_ref().canonicalize()
                && !self.inside(&canonical, false)
                && !self.read_only.contains(&canonical)
            {
                self.read_only.push(canonical);
            }
        }
        self
    }

    /// The directories the reading tools reach besides the roots.
    pub fn read_only(&self) -> &[PathBuf] {
        &self.read_only
    }

    /// The working directory.
    pub fn cwd(&self) -> &Path {
        &self.dirs[0]
    }

    /// Every root, working directory first.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    fn describe(&self) -> String {
        self.dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn escape(&self, path: &str, reason: impl Into<String>) -> Error {
        Error::PathEscape {
            path: path.to_owned(),
            roots: self.describe(),
            reason: reason.into(),
        }
    }

    fn inside(&self, path: &Path, reading: bool) -> bool {
        self.dirs.iter().any(|root| path.starts_with(root))
            || (reading && self.read_only.iter().any(|dir| path.starts_with(dir)))
    }

    /// Resolves a path given to a tool to an absolute path inside the roots. The path need not
    /// exist (a file about to be written), but its nearest existing ancestor, symlinks
    /// resolved, must be inside a root, and so must the path itself when it exists.
    pub fn resolve(&self, given: &str) -> Result<PathBuf> {
        self.resolve_in(given, false)
    }

    /// [`Roots::resolve`] for a tool that only reads: the read-only directories count too.
    pub fn resolve_read(&self, given: &str) -> Result<PathBuf> {
        self.resolve_in(given, true)
    }

    fn resolve_in(&self, given: &str, reading: bool) -> Result<PathBuf> {
        let raw = Path::new(given);
        if raw.components().any(|c| matches!(c, Component::ParentDir)) {
            return Err(self.escape(given, "\"..\" components are not allowed"));
        }
        let joined = if raw.is_absolute() {
            raw.to_path_buf()
        } else {
            self.cwd().join(raw)
        };
        // Lexical normalization: drop `.` components.
        let lexical: PathBuf = joined
            .components()
            .filter(|c| !matches!(c, Component::CurDir))
            .collect();
        if !self.inside(&lexical, reading) {
            return Err(self.escape(given, "it is not under any root"));
        }
        // Resolve symlinks on the longest existing prefix.
        let mut existing = lexical.as_path();
        let mut rest = Vec::new();
        loop {
            match existing.symlink_metadata() {
                Ok(_) => break,
                Err(_) => match (existing.parent(), existing.file_name()) {
                    (Some(parent), Some(name)) => {
                        rest.push(name.to_owned());
                        existing = parent;
                    }
                    _ => return Err(self.escape(given, "no part of it exists")),
                },
            }
        }
        let canonical = existing
            .canonicalize()
            .map_err(|e| self.escape(given, format!("cannot resolve it: {e}")))?;
        if !self.inside(&canonical, reading) {
            return Err(self.escape(
                given,
                format!("it resolves through a symlink to {}", canonical.display()),
            ));
        }
        let mut resolved = canonical;
        for name in rest.into_iter().rev() {
            resolved.push(name);
        }
        Ok(resolved)
    }

    /// The spellings permission rules are matched against for a path given to a tool: the path
    /// as resolved (relative to the working directory when inside it), its absolute resolved
    /// form, and the path as given. A path that does not resolve keeps only its given spelling
    /// (the tool refuses it anyway).
    pub fn permission_subjects(&self, given: &str) -> Vec<String> {
        let mut subjects = Vec::new();
        if let Ok(resolved) = self.resolve_read(given) {
            subjects.push(self.display(&resolved));
            subjects.push(resolved.display().to_string());
        }
        subjects.push(given.to_owned());
        let mut unique = Vec::with_capacity(subjects.len());
        for subject in subjects {
            if !unique.contains(&subject) {
                unique.push(subject);
            }
        }
        unique
    }

    /// The path shown back to the model: relative to the working directory when inside it.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(self.cwd()) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let roots = Roots::new(dir.path()).unwrap();
        assert!(roots.resolve("a/b.txt").is_ok());
        assert!(roots.resolve("./a").is_ok());
        for bad in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "link/secret",
            "link/new-file",
        ] {
            let err = roots.resolve(bad).unwrap_err();
            assert!(matches!(err, Error::PathEscape { .. }), "{bad}: {err}");
        }
        let abs = dir.path().join("inside.txt");
        assert!(roots.resolve(abs.to_str().unwrap()).is_ok());
        // A read-only directory is read, never written.
        let read_only = roots.clone().with_read_only([outside.path()]);
        let secret = outside.path().join("secret");
        let secret = secret.to_str().unwrap();
        assert!(read_only.resolve_read(secret).is_ok());
        assert!(read_only.resolve_read("link/secret").is_ok());
        assert!(read_only.resolve(secret).is_err());
        assert!(roots.resolve_read(secret).is_err());
    }
}
