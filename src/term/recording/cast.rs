//! Reading an asciicast v2 file back, one event at a time (a recording may be as large as its
//! cap): its header, then its events in order. Damage is reported with the line it is on.

use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader, Lines};
use std::path::{Path, PathBuf};

/// The header's fields a player needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub width: u16,
    pub height: u16,
    /// When the recording began, in seconds since the Unix epoch.
    pub timestamp: Option<u64>,
    pub title: Option<String>,
}

/// One event of a recording, at its time in seconds from the start.
#[derive(Debug, Clone, PartialEq)]
pub enum CastEvent {
    Output(f64, String),
    Resize(f64, u16, u16),
    /// Input (`i`), markers (`m`) and kinds a later format adds: kept, not played.
    Other(f64, String, String),
}

impl CastEvent {
    pub fn time(&self) -> f64 {
        match self {
            CastEvent::Output(t, _) | CastEvent::Resize(t, ..) | CastEvent::Other(t, ..) => *t,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CastError {
    #[error("cannot read the recording {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {reason}")]
    Damaged {
        path: PathBuf,
        line: usize,
        reason: String,
    },
}

/// A recording being read.
#[derive(Debug)]
pub struct CastReader {
    pub header: Header,
    path: PathBuf,
    lines: Lines<BufReader<File>>,
    line: usize,
}

impl CastReader {
    pub fn open(path: &Path) -> Result<CastReader, CastError> {
        let io = |source| CastError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut lines = BufReader::new(File::open(path).map_err(io)?).lines();
        let first = lines.next().transpose().map_err(io)?.unwrap_or_default();
        let damaged = |reason: String| CastError::Damaged {
            path: path.to_path_buf(),
            line: 1,
            reason,
        };
        let header: Value = serde_json::from_str(&first)
            .map_err(|e| damaged(format!("the header is not JSON ({e})")))?;
        if header.get("version").and_then(Value::as_u64) != Some(2) {
            return Err(damaged(
                "not an asciicast v2 recording (its header has no \"version\": 2)".into(),
            ));
        }
        let dimension = |name: &str| {
            header
                .get(name)
                .and_then(Value::as_u64)
                .and_then(|n| u16::try_from(n).ok())
                .filter(|n| *n > 0)
                .ok_or_else(|| damaged(format!("the header's \"{name}\" is not a size")))
        };
        let header = Header {
            width: dimension("width")?,
            height: dimension("height")?,
            timestamp: header.get("timestamp").and_then(Value::as_u64),
            title: header
                .get("title")
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        Ok(CastReader {
            header,
            path: path.to_path_buf(),
            lines,
            line: 1,
        })
    }

    fn parse(&self, text: &str) -> Result<CastEvent, CastError> {
        let damaged = |reason: &str| CastError::Damaged {
            path: self.path.clone(),
            line: self.line,
            reason: reason.to_string(),
        };
        let event: (f64, String, String) = serde_json::from_str(text)
            .map_err(|_| damaged("not an event ([seconds, \"kind\", \"data\"])"))?;
        let (t, kind, data) = event;
        if !t.is_finite() || t < 0.0 {
            return Err(damaged("the event's time is not a number of seconds"));
        }
        Ok(match kind.as_str() {
            "o" => CastEvent::Output(t, data),
            "r" => {
                let size = data
                    .split_once('x')
                    .and_then(|(c, r)| Some((c.parse().ok()?, r.parse().ok()?)));
                match size {
                    Some((cols, rows)) => CastEvent::Resize(t, cols, rows),
                    None => return Err(damaged("a resize that is not COLSxROWS")),
                }
            }
            _ => CastEvent::Other(t, kind, data),
        })
    }
}

impl Iterator for CastReader {
    type Item = Result<CastEvent, CastError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let line = match self.lines.next()? {
                Ok(line) => line,
                Err(source) => {
                    return Some(Err(CastError::Io {
                        path: self.path.clone(),
                        source,
                    }));
                }
            };
            self.line += 1;
            // asciinema's own files may end with an empty line.
            if !line.trim().is_empty() {
                return Some(self.parse(&line));
            }
        }
    }
}
