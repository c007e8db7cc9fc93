//! Output that scrolls off the screen before anyone could see it is not drawn into the grid.
//!
//! vt100 draws every character into its grid, about 10 ns a byte, and allocates and clears a
//! row for every line that scrolls. A flood (`seq`, a `cat` of a big file, a chatty build)
//! pushes thousands of lines through a 30-row grid in one batch of reads, and all but the
//! last screenful are overwritten before the batch is done: drawing them made the grid the
//! ceiling of ingest (docs/PERFORMANCE.md). The transcript (history, and what waits match)
//! still gets every byte; only the grid skips.
//!
//! What may be skipped, so that the grid ends in exactly the state drawing everything would
//! leave (a property test below feeds random streams both ways and compares):
//! - whole lines of plain text: printable characters, CR, LF, tab, backspace, bell, and SGR
//!   colour sequences, started in the parser's ground state after a LF;
//! - the last skipped line ends with CR LF, so the column afterwards is 0 either way;
//! - the cursor is on the bottom row when the skipped lines begin, and at least a screenful
//!   of plain lines follows in the same batch: every line scrolls, so whatever the skipped
//!   lines (or, skipping, the older rows) left on screen has scrolled away by the end. (A
//!   cursor higher up would first move down over old rows; the grid then draws everything.)
//! - no scroll region other than the whole screen was ever set (until a reset): with one, a
//!   cursor outside it does not scroll at all.
//!
//! The pen (SGR state) and the last character drawn carry over the skipped part, so the
//! grid is given the skipped part's SGR sequences (from its last plain reset) and its last
//! line, after a CR.
//!
//! A reader that keeps up gets one PTY read (at most 4 KiB, some 50 lines of text) a batch,
//! too little to hold a screenful after the lines it would skip. So the plain lines at the
//! end of a batch may wait, undrawn, for the next batch: drawn first thing when anything
//! looks at the grid, skipped if enough lines follow them.

use std::ops::Range;

/// Where the byte scanner is, between calls: in ground state, or inside an escape sequence
/// (which a skip may never cut).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    Ground,
    /// After ESC (at `at` in this batch, `None` if in an earlier one); `intermediate` once
    /// a byte 0x20..=0x2f came.
    Escape {
        at: Option<usize>,
        intermediate: bool,
    },
    /// A CSI sequence that began at `at` (`None`: in an earlier batch, or malformed; such a
    /// sequence is never kept as an SGR of the run).
    Csi {
        at: Option<usize>,
        private: bool,
        intermediate: bool,
    },
    /// An OSC, DCS, SOS, PM or APC string, until BEL or ST.
    Str {
        escape: bool,
    },
}

/// What a byte does to the scan: the next state (the byte is taken), or a stretch of bytes
/// that cannot matter, skipped in one go to this index (in the same state).
enum Step {
    Next(Scan),
    SkipTo(usize),
}

/// How to feed a batch to the grid.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Fed as is first.
    pub before: Range<usize>,
    /// Lines after `before` that may skip the grid, if the cursor is then on the bottom row.
    pub skip: Option<Skip>,
    /// What follows `before`, or the skip, up to the end of the batch is whole plain lines
    /// from a line start (and maybe the start of one more): it may wait for the next batch.
    pub defer: bool,
}

/// Lines that skip the grid: it is given their pen and their last line instead.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Skip {
    /// SGR sequences of the skipped lines that still shape the pen, in order.
    pub pen: Vec<Range<usize>>,
    /// The last skipped line (its last character and pen), fed after a CR; the skip ends
    /// where it ends.
    pub last_line: Range<usize>,
}

/// A run of plain lines in the batch being scanned.
#[derive(Debug, Default)]
struct Run {
    /// Where the run starts: just after a LF, in ground state.
    start: usize,
    /// Positions of the LFs in the run.
    lfs: Vec<usize>,
    /// SGR sequences in the run, and the index of the last one that resets the pen.
    sgr: Vec<Range<usize>>,
}

/// Decides, batch by batch, what the grid may skip; keeps the scanner's state between
/// batches.
#[derive(Debug)]
pub struct FastForward {
    scan: Scan,
    /// A scroll region other than the whole screen was set (sticky until a reset).
    region: bool,
    run: Option<Run>,
    best: Option<Run>,
    /// The run still open at the end of the batch, in ground state.
    last: Option<Run>,
    /// The run of the lines that wait for the next batch (positions from their start), so
    /// that they are not scanned again.
    waiting: Option<Run>,
    /// Reused allocations.
    spare: Vec<Run>,
}

impl Default for FastForward {
    fn default() -> Self {
        FastForward {
            scan: Scan::Ground,
            region: false,
            run: None,
            best: None,
            last: None,
            waiting: None,
            spare: Vec::new(),
        }
    }
}

impl FastForward {
    /// Scans a batch (always, to follow escape sequences and scroll regions) and plans how
    /// to feed it to a grid of `rows` rows. `bytes[..scanned]` are lines that waited from
    /// the last batch (see [`FastForward::keep_waiting`]): they are not scanned again.
    pub fn plan(&mut self, bytes: &[u8], scanned: usize, rows: u16) -> Plan {
        if let Some(run) = self.last.take() {
            self.recycle(run);
        }
        match self.waiting.take() {
            Some(run) if scanned > 0 => self.run = Some(run),
            Some(run) => self.recycle(run),
            None => {}
        }
        self.scan_batch(bytes, scanned, usize::from(rows));
        let best = self.best.take();
        let (run, defer) = match (&self.last, best) {
            (Some(_), best) => {
                if let Some(best) = best {
                    self.recycle(best);
                }
                (self.last.as_ref(), true)
            }
            (None, best) => {
                self.last = best;
                (self.last.as_ref(), false)
            }
        };
        match run {
            Some(run) => Plan {
                before: 0..run.start,
                skip: self.plan_skip(bytes, run, usize::from(rows)),
                defer,
            },
            None => Plan {
                before: 0..bytes.len(),
                skip: None,
                defer: false,
            },
        }
    }

    /// The batch's lines from `from` on wait for the next batch (the plan said they may):
    /// their run is kept, counted from `from`. Otherwise, nothing waits.
    pub fn keep_waiting(&mut self, from: Option<usize>) {
        let Some(mut run) = self.last.take() else {
            return;
        };
        match from {
            Some(from) => {
                run.start = 0;
                run.lfs.retain(|&p| p >= from);
                run.lfs.iter_mut().for_each(|p| *p -= from);
                run.sgr.retain(|r| r.start >= from);
                run.sgr
                    .iter_mut()
                    .for_each(|r| *r = r.start - from..r.end - from);
                self.waiting = Some(run);
            }
            None => self.recycle(run),
        }
    }

    fn recycle(&mut self, mut run: Run) {
        run.lfs.clear();
        run.sgr.clear();
        self.spare.push(run);
    }

    fn new_run(&mut self, start: usize) -> Run {
        let mut run = self.spare.pop().unwrap_or_default();
        run.start = start;
        run
    }

    /// Ends the current run at a byte that is not plain; keeps it if it is the longest.
    fn break_run(&mut self) {
        if let Some(run) = self.run.take() {
            let longer = self
                .best
                .as_ref()
                .is_none_or(|best| run.lfs.len() > best.lfs.len());
            if longer {
                if let Some(old) = self.best.replace(run) {
                    self.recycle(old);
                }
            } else {
                self.recycle(run);
            }
        }
    }

    fn scan_batch(&mut self, bytes: &[u8], from: usize, rows: usize) {
        let mut i = from;
        while i < bytes.len() {
            let b = bytes[i];
            let step = match self.scan {
                Scan::Ground => self.scan_ground(bytes, i),
                Scan::Escape { at, intermediate } => {
                    Step::Next(self.scan_escape(b, i, at, intermediate))
                }
                Scan::Csi {
                    at,
                    private,
                    intermediate,
                } => self.scan_csi(bytes, i, rows, at, private, intermediate),
                Scan::Str { escape } => Step::Next(match b {
                    0x07 | 0x18 | 0x1a => Scan::Ground,
                    b'\\' if escape => Scan::Ground,
                    0x1b => Scan::Str { escape: true },
                    _ => Scan::Str { escape: false },
                }),
            };
            match step {
                Step::Next(scan) => {
                    self.scan = scan;
                    i += 1;
                }
                Step::SkipTo(at) => i = at,
            }
        }
        self.end_batch();
    }

    /// The byte at `i` in ground state.
    fn scan_ground(&mut self, bytes: &[u8], i: usize) -> Step {
        Step::Next(match bytes[i] {
            0x1b => Scan::Escape {
                at: Some(i),
                intermediate: false,
            },
            b'\n' => {
                if let Some(run) = &mut self.run {
                    run.lfs.push(i);
                } else {
                    let run = self.new_run(i + 1);
                    self.run = Some(run);
                }
                Scan::Ground
            }
            b'\r' | b'\t' | 0x08 | 0x07 => Scan::Ground,
            // Other controls (VT, FF, SO, SI, ...) move the cursor or switch
            // character sets: not plain.
            0x00..=0x1f => {
                self.break_run();
                Scan::Ground
            }
            // Text, UTF-8 included (vt100 ignores a stray C1 byte): on to the next
            // byte that can matter.
            _ => {
                let rest = &bytes[i..];
                return Step::SkipTo(i + rest.iter().position(|&c| c < 0x20).unwrap_or(rest.len()));
            }
        })
    }

    /// Byte `b` (at `i`) after an ESC that came at `at`.
    fn scan_escape(&mut self, b: u8, i: usize, at: Option<usize>, intermediate: bool) -> Scan {
        if b == b'[' && !intermediate {
            return Scan::Csi {
                at,
                private: false,
                intermediate: false,
            };
        }
        self.break_run();
        match b {
            b']' | b'P' | b'X' | b'^' | b'_' if !intermediate => Scan::Str { escape: false },
            0x20..=0x2f => Scan::Escape {
                at,
                intermediate: true,
            },
            0x18 | 0x1a => Scan::Ground,
            0x1b => Scan::Escape {
                at: Some(i),
                intermediate: false,
            },
            // Executed inside the sequence, which goes on.
            0x00..=0x1f => Scan::Escape { at, intermediate },
            _ => {
                if b == b'c' && !intermediate {
                    // RIS resets everything, scroll regions included.
                    self.region = false;
                }
                Scan::Ground
            }
        }
    }

    /// The byte at `i` inside a CSI sequence that began at `at`.
    fn scan_csi(
        &mut self,
        bytes: &[u8],
        i: usize,
        rows: usize,
        at: Option<usize>,
        private: bool,
        intermediate: bool,
    ) -> Step {
        let b = bytes[i];
        Step::Next(match b {
            b'0'..=b'9' | b';' | b':' if !intermediate => {
                // Parameters, in one go.
                let rest = &bytes[i..];
                return Step::SkipTo(
                    i + rest
                        .iter()
                        .position(|c| !matches!(c, b'0'..=b'9' | b';' | b':'))
                        .unwrap_or(rest.len()),
                );
            }
            b'<' | b'=' | b'>' | b'?' if !intermediate => Scan::Csi {
                at,
                private: true,
                intermediate,
            },
            0x20..=0x2f => Scan::Csi {
                at,
                private,
                intermediate: true,
            },
            0x40..=0x7e => {
                let params = at.map(|at| &bytes[at + 2..i]);
                match (b, at) {
                    (b'm', Some(at)) if !private && !intermediate => {
                        if let Some(run) = &mut self.run {
                            run.sgr.push(at..i + 1);
                        }
                    }
                    (b'r', _) if !private && !intermediate => {
                        if !full_region(params, rows) {
                            self.region = true;
                        }
                        self.break_run();
                    }
                    _ => self.break_run(),
                }
                Scan::Ground
            }
            0x18 | 0x1a => {
                self.break_run();
                Scan::Ground
            }
            0x1b => {
                self.break_run();
                Scan::Escape {
                    at: Some(i),
                    intermediate: false,
                }
            }
            // A control is executed inside the sequence; any other byte makes it
            // malformed. Either way it is no longer a plain SGR.
            _ => {
                self.break_run();
                Scan::Csi {
                    at: None,
                    private,
                    intermediate,
                }
            }
        })
    }

    /// The batch is scanned: positions in the scan forgotten, the open run kept or ended.
    fn end_batch(&mut self) {
        // Positions are in this batch: a sequence that goes on into the next one has none.
        self.scan = match self.scan {
            Scan::Escape { intermediate, .. } => Scan::Escape {
                at: None,
                intermediate,
            },
            Scan::Csi {
                private,
                intermediate,
                ..
            } => Scan::Csi {
                at: None,
                private,
                intermediate,
            },
            other => other,
        };
        // A run still open at the end of the batch in ground state runs to its end; one
        // cut by an unfinished sequence ends where that sequence began (its lines are whole).
        if self.scan == Scan::Ground {
            self.last = self.run.take();
        } else {
            self.break_run();
        }
    }

    fn plan_skip(&self, bytes: &[u8], run: &Run, rows: usize) -> Option<Skip> {
        if self.region {
            return None;
        }
        // The skip ends after a CR LF that is followed by a screenful of LFs of the run.
        let keep = rows;
        let last = run.lfs.len().checked_sub(keep + 1)?;
        let lf = (0..=last)
            .rev()
            .take(8)
            .map(|j| run.lfs[j])
            .find(|&lf| lf > run.start && bytes[lf - 1] == b'\r')?;
        let end = lf + 1;
        let line_start = run
            .lfs
            .iter()
            .rev()
            .find(|&&p| p < lf)
            .map_or(run.start, |&p| p + 1);
        if line_start <= run.start {
            // One line only: nothing to gain.
            return None;
        }
        // Only the SGR sequences before the last line, from the last reset on, shape the pen.
        let before_line = run.sgr.partition_point(|r| r.end <= line_start);
        let pen = &run.sgr[..before_line];
        let from = pen
            .iter()
            .rposition(|r| is_reset(&bytes[r.clone()]))
            .unwrap_or(0);
        Some(Skip {
            pen: pen[from..].to_vec(),
            last_line: line_start..end,
        })
    }
}

/// `ESC [ m` or `ESC [ 0 m` (any number of zeros).
fn is_reset(sgr: &[u8]) -> bool {
    sgr.get(2..sgr.len() - 1)
        .is_some_and(|p| p.iter().all(|&b| b == b'0'))
}

/// Whether DECSTBM parameters select the whole screen of `rows` rows (as vt100 reads
/// them: missing or 0 is the default).
fn full_region(params: Option<&[u8]>, rows: usize) -> bool {
    let Some(params) = params else {
        return false;
    };
    if params.contains(&b':') {
        return false;
    }
    let mut parts = params.split(|&b| b == b';');
    let number = |p: Option<&[u8]>| -> Option<usize> {
        match p {
            None | Some([]) => Some(0),
            Some(d) => std::str::from_utf8(d).ok()?.parse().ok(),
        }
    };
    let (Some(top), Some(bottom)) = (number(parts.next()), number(parts.next())) else {
        return false;
    };
    parts.next().is_none() && top <= 1 && (bottom == 0 || bottom >= rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| format!("line {i}\r\n").into_bytes())
            .collect()
    }

    #[test]
    fn a_flood_of_plain_lines_skips_all_but_a_screenful() {
        let mut ff = FastForward::default();
        let mut bytes = b"\x1b[1m$ cat big\r\n".to_vec();
        bytes.extend(lines(1000));
        let plan = ff.plan(&bytes, 0, 30);
        assert_eq!(plan.before, 0..15);
        let skip = plan.skip.unwrap();
        let after = &bytes[skip.last_line.end..];
        assert_eq!(after.iter().filter(|&&b| b == b'\n').count(), 30);
        assert_eq!(&bytes[skip.last_line.clone()], b"line 969\r\n");
        assert!(skip.pen.is_empty());
        assert!(plan.defer, "the lines left may wait for the next batch");
    }

    #[test]
    fn lines_that_waited_start_the_next_batch() {
        let mut ff = FastForward::default();
        let mut bytes = b"$ ls\r\n".to_vec();
        bytes.extend(lines(10));
        let plan = ff.plan(&bytes, 0, 30);
        assert_eq!(
            (plan.before.clone(), plan.skip, plan.defer),
            (0..6, None, true)
        );
        ff.keep_waiting(Some(plan.before.end));
        // They come back first, not scanned again; with enough lines after them, they skip.
        let mut next = bytes[6..].to_vec();
        next.extend(lines(40));
        let plan = ff.plan(&next, bytes.len() - 6, 30);
        assert_eq!(plan.before, 0..0);
        // 50 lines: the 20th is the last to skip (the 10th of the new ones).
        let last_line = plan.skip.unwrap().last_line;
        assert_eq!(&next[last_line.clone()], b"line 9\r\n");
        assert!(last_line.start > bytes.len() - 6);
        ff.keep_waiting(None);
        // A batch that ends in an escape sequence has nothing to wait.
        let mut bytes = lines(10);
        bytes.extend(b"\x1b[");
        assert!(!ff.plan(&bytes, 0, 30).defer);
        ff.keep_waiting(None);
        let plan = ff.plan(b"1mtext\r\n", 0, 30);
        assert_eq!((plan.before, plan.defer), (0..8, true));
    }

    #[test]
    fn the_pen_carries_from_the_last_reset() {
        let mut ff = FastForward::default();
        let mut bytes = b"\n".to_vec();
        for i in 0..200 {
            bytes.extend(format!("\x1b[0m\x1b[1;3{}mred {i}\x1b[4m\r\n", i % 8).into_bytes());
        }
        let skip = ff.plan(&bytes, 0, 30).skip.unwrap();
        let pen: Vec<&[u8]> = skip.pen.iter().map(|r| &bytes[r.clone()]).collect();
        assert_eq!(pen.first().copied(), Some(&b"\x1b[0m"[..]));
        assert_eq!(pen.len(), 3);
    }

    #[test]
    fn scroll_regions_and_cut_sequences_are_respected() {
        let mut ff = FastForward::default();
        let skips = |ff: &mut FastForward, bytes: &[u8]| ff.plan(bytes, 0, 30).skip.is_some();
        let mut bytes = b"\x1b[1;30r\n".to_vec();
        bytes.extend(lines(500));
        assert!(skips(&mut ff, &bytes), "a full-screen region is fine");
        let mut bytes = b"\x1b[2;20r\n".to_vec();
        bytes.extend(lines(500));
        assert!(!skips(&mut ff, &bytes));
        assert!(!skips(&mut ff, &lines(500)), "until a reset");
        let mut bytes = b"\x1bc\n".to_vec();
        bytes.extend(lines(500));
        assert!(skips(&mut ff, &bytes));
        // A batch that starts inside an OSC string plans nothing before it ends.
        let mut ff = FastForward::default();
        ff.plan(b"\x1b]0;title", 0, 30);
        let mut bytes = lines(500);
        bytes.extend(b"\x07");
        assert!(!skips(&mut ff, &bytes));
    }

    #[test]
    fn region_parameters_are_read_as_vt100_reads_them() {
        assert!(full_region(Some(b""), 30));
        assert!(full_region(Some(b"1;30"), 30));
        assert!(full_region(Some(b"0;0"), 30));
        assert!(full_region(Some(b";"), 30));
        assert!(!full_region(Some(b"2;30"), 30));
        assert!(!full_region(Some(b"1;29"), 30));
        assert!(!full_region(None, 30));
    }
}
