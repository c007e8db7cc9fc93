//! The recording's thread: turns the session's chunks into asciicast events and writes them,
//! within the cap. Times are kept in whole microseconds (as asciinema writes them), so that
//! v3's intervals add up to the times they came at, however many there are.

use super::cast::Format;
use super::{DropMarkers, Frame, Learned, RecordOptions, Recorded, Utf8Stream};
use crate::term::mask::{Masker, Needles};
use crate::term::screen::Size;
use serde_json::json;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Receiver;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Room kept under the cap for the last event, which says what the cap left out.
const RESERVE: u64 = 512;

/// The terminal a session's programs are told they have (term/session/open.rs sets it).
const TERM: &str = "xterm-256color";

/// Creates the file (the owner's only, as the journal beside it) and writes its header.
pub(super) fn create(options: &RecordOptions, size: Size) -> std::io::Result<(File, u64)> {
    if let Some(dir) = options.path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&options.path)?;
    let timestamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // The title names the run and its workflow: masked as everything else is.
    let title = Needles::new(&options.secrets).mask(&options.title, &options.mask);
    let header = match options.format {
        Format::V2 => json!({
            "version": 2,
            "width": size.cols,
            "height": size.rows,
            "timestamp": timestamp,
            "title": title,
            "env": {"TERM": TERM},
        }),
        Format::V3 => json!({
            "version": 3,
            "term": {"cols": size.cols, "rows": size.rows, "type": TERM},
            "timestamp": timestamp,
            "title": title,
        }),
    };
    let line = format!("{header}\n");
    file.write_all(line.as_bytes())?;
    Ok((file, line.len() as u64))
}

pub(super) struct Writer {
    out: BufWriter<File>,
    options: RecordOptions,
    started: Instant,
    written: u64,
    utf8: Utf8Stream,
    markers: DropMarkers,
    mask: Masker,
    full: Arc<AtomicBool>,
    left_out: Arc<AtomicU64>,
    /// When the cap was reached, in seconds from the start.
    cut_at: Option<f64>,
    /// The time of the last event written, in microseconds from the start (v3 writes each
    /// event's time as the interval since it).
    last: u64,
    /// The secrets, for what is masked whole (markers) rather than as a stream.
    needles: Needles,
    error: Option<String>,
    /// The event being written.
    line: Vec<u8>,
    /// Secrets learned after the recording began (mod.rs).
    learned: Learned,
    /// Events were written before a secret was learned: the file is masked again at the end.
    late: bool,
    events: u64,
}

impl Writer {
    pub(super) fn new(
        (file, header): (File, u64),
        options: RecordOptions,
        started: Instant,
        full: Arc<AtomicBool>,
        left_out: Arc<AtomicU64>,
        learned: Learned,
    ) -> Writer {
        Writer {
            out: BufWriter::with_capacity(64 << 10, file),
            mask: Masker::new(Needles::new(&options.secrets), &options.mask),
            needles: Needles::new(&options.secrets),
            options,
            started,
            written: header,
            utf8: Utf8Stream::default(),
            markers: DropMarkers::default(),
            full,
            left_out,
            cut_at: None,
            last: 0,
            error: None,
            line: Vec::new(),
            learned,
            late: false,
            events: 0,
        }
    }

    /// Writes until the session lets the tap go, then completes the file.
    pub(super) fn run(mut self, frames: Receiver<Frame>, first: Option<String>) -> Recorded {
        if let Some(first) = first {
            // The screen as it was, drawn whole: nothing of it waits for what comes next.
            let mut shown = self.mask.push(&first);
            shown.push_str(&self.mask.finish());
            self.event(0.0, "o", &shown, 0);
        }
        for frame in frames {
            self.take_learned();
            match frame {
                Frame::Output(at, bytes) => {
                    let text = self.markers.push(self.utf8.decode(&bytes));
                    let shown = self.mask.push(&text);
                    self.event(self.seconds(at), "o", &shown, bytes.len());
                }
                // What the mask holds stays held: a secret may go on after the resize.
                Frame::Resize(at, size) => {
                    let t = self.seconds(at);
                    self.event(t, "r", &format!("{}x{}", size.cols, size.rows), 0);
                }
                // A marker ends what came before it, as a step's output ends in the journal:
                // what the mask holds (the end of that output, that could begin a secret) is
                // masked and written first, so that the marker stands after it.
                Frame::Marker(at, name) => {
                    let t = self.seconds(at);
                    let held = self.mask.finish();
                    self.event(t, "o", &held, 0);
                    let name = self.needles.mask(&name, &self.options.mask).into_owned();
                    self.event(t, "m", &name, 0);
                }
                // The program's output is over: all of it goes before its exit. v2 has no
                // exit event.
                Frame::Exit(at, status) if self.options.format == Format::V3 => {
                    let t = self.seconds(at);
                    let held = self.mask.finish();
                    self.event(t, "o", &held, 0);
                    self.event(t, "x", &status.to_string(), 0);
                }
                Frame::Exit(..) => {}
            }
        }
        self.take_learned();
        let end = self.seconds(Instant::now());
        let mut tail = self.markers.push(self.utf8.finish());
        tail.push_str(&self.markers.finish());
        let mut rest = self.mask.push(&tail);
        rest.push_str(&self.mask.finish());
        self.event(end, "o", &rest, 0);
        self.note_the_cut(end);
        if let Err(e) = self.out.flush() {
            self.error.get_or_insert(e.to_string());
        }
        if self.late && self.error.is_none() {
            self.mask_again();
        }
        Recorded {
            path: self.options.path,
            bytes: self.written,
            left_out: self.left_out.load(Ordering::Relaxed),
            error: self.error,
        }
    }

    /// Takes the secrets learned since the last event: masked from here on (what the old
    /// mask held is looked at again), and in the whole file at the end if events were
    /// written before.
    fn take_learned(&mut self) {
        let learned = std::mem::take(&mut *self.learned.lock().unwrap_or_else(|p| p.into_inner()));
        if learned.is_empty() {
            return;
        }
        self.options.secrets.extend(learned);
        self.options.secrets.sort();
        self.options.secrets.dedup();
        self.needles = Needles::new(&self.options.secrets);
        let mut mask = Masker::new(self.needles.clone(), &self.options.mask);
        let held = mask.push(&self.mask.take_held());
        self.mask = mask;
        self.late |= self.events > 0;
        let t = self.seconds(Instant::now());
        self.event(t, "o", &held, 0);
    }

    /// Masks the whole file with every secret the recording knows: the output as one stream
    /// (a secret written across two events is masked too), markers each whole, into a file
    /// beside it that then takes its place. Event times stay; text moves to a later event
    /// only where it could begin a secret.
    fn mask_again(&mut self) {
        let path = self.options.path.clone();
        let masked = path.with_extension("cast.masking");
        let result = (|| -> std::io::Result<u64> {
            let text = std::fs::read_to_string(&path)?;
            let mut lines = text.lines();
            let mut out = BufWriter::new(
                OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o600)
                    .open(&masked)?,
            );
            let header = lines.next().unwrap_or_default();
            out.write_all(header.as_bytes())?;
            out.write_all(b"\n")?;
            let mut written = header.len() as u64 + 1;
            let mut mask = Masker::new(self.needles.clone(), &self.options.mask);
            let mut buf = Vec::new();
            let v3 = self.options.format == Format::V3;
            // Times in microseconds: as read (v3's intervals added up), and as last written.
            let (mut at, mut last) = (0_u64, 0_u64);
            let mut write = |out: &mut BufWriter<File>, at: u64, kind: &str, data: &str| {
                let stamp = if v3 { at.saturating_sub(last) } else { at };
                last = at;
                let line = line(&mut buf, stamp, kind, data);
                out.write_all(line)?;
                written += line.len() as u64;
                std::io::Result::Ok(())
            };
            for raw in lines {
                let Ok((t, kind, data)) = serde_json::from_str::<(f64, String, String)>(raw) else {
                    continue;
                };
                let t = micros(t);
                at = if v3 { at.saturating_add(t) } else { t };
                let data = match kind.as_str() {
                    "o" => mask.push(&data),
                    "m" => {
                        // The output before a marker stays before it, as when written.
                        let held = mask.finish();
                        if !held.is_empty() {
                            write(&mut out, at, "o", &held)?;
                        }
                        self.needles.mask(&data, &self.options.mask).into_owned()
                    }
                    _ => data,
                };
                if !data.is_empty() {
                    write(&mut out, at, &kind, &data)?;
                }
            }
            let rest = mask.finish();
            if !rest.is_empty() {
                write(&mut out, at, "o", &rest)?;
            }
            out.flush()?;
            std::fs::rename(&masked, &path)?;
            Ok(written)
        })();
        match result {
            Ok(written) => self.written = written,
            Err(e) => {
                let _ = std::fs::remove_file(&masked);
                // Better no recording than one with a secret in it.
                let _ = std::fs::remove_file(&path);
                self.error = Some(format!(
                    "{}: could not be masked again, so it was removed: {e}",
                    path.display()
                ));
            }
        }
    }

    fn seconds(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.started).as_secs_f64()
    }

    /// What an event at `at` microseconds writes as its time: itself (v2), or the interval
    /// since the last event written (v3).
    fn stamp(&self, at: u64) -> u64 {
        match self.options.format {
            Format::V2 => at,
            Format::V3 => at.saturating_sub(self.last),
        }
    }

    /// Writes one event, unless the cap is reached (then `raw`, the output's bytes, are
    /// counted as left out) or the file failed.
    fn event(&mut self, t: f64, kind: &str, data: &str, raw: usize) {
        if data.is_empty() {
            return;
        }
        if self.cut_at.is_some() || self.error.is_some() {
            self.left_out.fetch_add(raw as u64, Ordering::Relaxed);
            return;
        }
        let at = micros(t).max(self.last);
        let stamp = self.stamp(at);
        let line = line(&mut self.line, stamp, kind, data);
        if self.written + line.len() as u64 + RESERVE > self.options.cap {
            self.cut_at = Some(t);
            self.full.store(true, Ordering::Relaxed);
            self.left_out.fetch_add(raw as u64, Ordering::Relaxed);
            return;
        }
        match self.out.write_all(line) {
            Ok(()) => {
                self.written += line.len() as u64;
                self.events += 1;
                self.last = at;
            }
            Err(e) => {
                self.error = Some(format!("{}: {e}", self.options.path.display()));
                self.full.store(true, Ordering::Relaxed);
            }
        }
    }

    /// The last event of a recording the cap stopped: what was left out, as a player shows
    /// it. Written in the room kept for it.
    fn note_the_cut(&mut self, end: f64) {
        let left_out = self.left_out.load(Ordering::Relaxed);
        let note = match self.cut_at {
            Some(cut_at) => format!(
                "\r\n\x1b[0m[flowdeck: the recording stopped at its cap of {} bytes; {left_out} more bytes of output, over {:.1} s, were not recorded]\r\n",
                self.options.cap,
                (end - cut_at).max(0.0),
            ),
            // The session's tap left chunks out: this thread fell behind a slow disk.
            None if left_out > 0 => format!(
                "\r\n\x1b[0m[flowdeck: {left_out} bytes of output were not recorded: the disk fell behind]\r\n"
            ),
            None => return,
        };
        let at = micros(end).max(self.last);
        let stamp = self.stamp(at);
        let line = line(&mut self.line, stamp, "o", &note);
        if self.error.is_none() && self.out.write_all(line).is_ok() {
            self.written += line.len() as u64;
        }
    }
}

/// Seconds as whole microseconds (a time no event can have is the longest one).
fn micros(seconds: f64) -> u64 {
    // `as` saturates, and a NaN is 0.
    (seconds * 1e6).round() as u64
}

/// `[seconds, "kind", "data"]` and a newline, made in `buf` (kept from event to event, so a
/// flood is not one allocation a chunk): `micros` to the microsecond, as asciinema writes
/// times.
fn line<'a>(buf: &'a mut Vec<u8>, micros: u64, kind: &str, data: &str) -> &'a [u8] {
    use std::io::Write as _;
    buf.clear();
    // Writing to a Vec cannot fail, and a string always serializes.
    let _ = write!(
        buf,
        "[{}.{:06}, \"{kind}\", ",
        micros / 1_000_000,
        micros % 1_000_000
    );
    let _ = serde_json::to_writer(&mut *buf, data);
    buf.extend_from_slice(b"]\n");
    buf
}
