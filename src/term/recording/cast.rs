//! Reading an asciicast file back, one event at a time (a recording may be as large as its
//! cap): its header, then its events in order, each at its time from the start. Both
//! formats flowdeck has written: v3 (asciinema 3's, the default: a `term` object in the
//! header, each event's time the interval since the one before, `#` comment lines) and v2
//! (absolute times, `width` and `height`). Damage is reported with the line it is on.

use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader, Lines};
use std::path::{Path, PathBuf};

/// Which asciicast a file is, or a recording is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// asciinema 2's: absolute times.
    V2,
    /// asciinema 3's: intervals, a `term` header, markers and exit statuses.
    #[default]
    V3,
}

impl Format {
    /// `v2` or `v3` (as FLOWDECK_RECORDING_FORMAT writes it; `2` and `3` too).
    pub fn parse(text: &str) -> Option<Format> {
        match text.trim().to_ascii_lowercase().as_str() {
            "v2" | "2" => Some(Format::V2),
            "v3" | "3" => Some(Format::V3),
            _ => None,
        }
    }
}

/// The header's fields a player needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub format: Format,
    pub width: u16,
    pub height: u16,
    /// When the recording began, in seconds since the Unix epoch.
    pub timestamp: Option<u64>,
    pub title: Option<String>,
}

/// One event of a recording, at its time in seconds from the start (v3's intervals added up).
#[derive(Debug, Clone, PartialEq)]
pub enum CastEvent {
    Output(f64, String),
    Resize(f64, u16, u16),
    /// A marker (`m`): flowdeck names each one after the state the run entered.
    Marker(f64, String),
    /// The session's program exited with this status (`x`).
    Exit(f64, i32),
    /// Input (`i`) and kinds a later format adds: kept, not played.
    Other(f64, String, String),
}

impl CastEvent {
    pub fn time(&self) -> f64 {
        match self {
            CastEvent::Output(t, _)
            | CastEvent::Resize(t, ..)
            | CastEvent::Marker(t, _)
            | CastEvent::Exit(t, _)
            | CastEvent::Other(t, ..) => *t,
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
    /// The time of the last event read (v3's intervals are added to it).
    clock: f64,
}

impl CastReader {
    pub fn open(path: &Path) -> Result<CastReader, CastError> {
        let io = |source| CastError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut lines = BufReader::new(File::open(path).map_err(io)?).lines();
        let first = lines.next().transpose().map_err(io)?.unwrap_or_default();
        let header = header(&first).map_err(|reason| CastError::Damaged {
            path: path.to_path_buf(),
            line: 1,
            reason,
        })?;
        Ok(CastReader {
            header,
            path: path.to_path_buf(),
            lines,
            line: 1,
            clock: 0.0,
        })
    }

    fn parse(&mut self, text: &str) -> Result<CastEvent, CastError> {
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
        let t = match self.header.format {
            Format::V2 => t,
            // An interval since the event before: a sum too large to be a time is one still.
            Format::V3 => (self.clock + t).min(f64::MAX),
        };
        self.clock = t;
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
            "m" => CastEvent::Marker(t, data),
            "x" => match data.trim().parse() {
                Ok(status) => CastEvent::Exit(t, status),
                Err(_) => CastEvent::Other(t, kind, data),
            },
            _ => CastEvent::Other(t, kind, data),
        })
    }
}

/// The header line: v2's `width` and `height`, or v3's `term` object.
fn header(first: &str) -> Result<Header, String> {
    let header: Value =
        serde_json::from_str(first).map_err(|e| format!("the header is not JSON ({e})"))?;
    let format = match header.get("version").and_then(Value::as_u64) {
        Some(2) => Format::V2,
        Some(3) => Format::V3,
        _ => {
            return Err(
                "not an asciicast v2 or v3 recording (its header has no \"version\": 2 or 3)"
                    .into(),
            );
        }
    };
    let (size, names) = match format {
        Format::V2 => (&header, ["width", "height"]),
        Format::V3 => (
            header
                .get("term")
                .ok_or("the header has no \"term\" (an asciicast v3 header has one)")?,
            ["cols", "rows"],
        ),
    };
    let dimension = |name: &str| {
        size.get(name)
            .and_then(Value::as_u64)
            .and_then(|n| u16::try_from(n).ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("the header's \"{name}\" is not a size"))
    };
    Ok(Header {
        format,
        width: dimension(names[0])?,
        height: dimension(names[1])?,
        timestamp: header.get("timestamp").and_then(Value::as_u64),
        title: header
            .get("title")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
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
            // asciinema's own files may end with an empty line; v3 has comment lines.
            let comment = self.header.format == Format::V3 && line.starts_with('#');
            if !line.trim().is_empty() && !comment {
                return Some(self.parse(&line));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Header, Vec<CastEvent>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.cast");
        std::fs::write(&path, text).unwrap();
        let reader = CastReader::open(&path).unwrap();
        let header = reader.header.clone();
        let events = reader.map(Result::unwrap).collect();
        (header, events)
    }

    #[test]
    fn v3_intervals_are_added_up_and_its_markers_and_exits_read() {
        let (header, events) = read(concat!(
            "{\"version\": 3, \"term\": {\"cols\": 90, \"rows\": 20, \"type\": \"xterm\"}, \"title\": \"t\"}\n",
            "# a comment\n",
            "[0.5, \"m\", \"first\"]\n",
            "[0.25, \"o\", \"hi\"]\n",
            "[1.0, \"r\", \"80x24\"]\n",
            "[0.0, \"x\", \"3\"]\n",
            "[0.25, \"i\", \"k\"]\n",
        ));
        assert_eq!(
            (header.format, header.width, header.height),
            (Format::V3, 90, 20)
        );
        assert_eq!(
            events,
            vec![
                CastEvent::Marker(0.5, "first".into()),
                CastEvent::Output(0.75, "hi".into()),
                CastEvent::Resize(1.75, 80, 24),
                CastEvent::Exit(1.75, 3),
                CastEvent::Other(2.0, "i".into(), "k".into()),
            ]
        );
    }

    #[test]
    fn v2_times_are_absolute() {
        let (header, events) = read(concat!(
            "{\"version\": 2, \"width\": 80, \"height\": 24}\n",
            "[0.5, \"o\", \"a\"]\n",
            "[0.75, \"m\", \"\"]\n",
        ));
        assert_eq!(header.format, Format::V2);
        assert_eq!(
            events,
            vec![
                CastEvent::Output(0.5, "a".into()),
                CastEvent::Marker(0.75, String::new()),
            ]
        );
    }

    #[test]
    fn a_v3_header_without_its_term_is_told() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.cast");
        std::fs::write(&path, "{\"version\": 3, \"width\": 80}\n").unwrap();
        let told = CastReader::open(&path).map(|_| ()).unwrap_err().to_string();
        assert!(
            told.contains("t.cast:1: the header has no \"term\""),
            "{told}"
        );
    }
}
