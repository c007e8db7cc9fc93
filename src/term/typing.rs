//! When typed input reaches the PTY: the writer thread, and how it tells whether anyone is
//! reading the terminal.
//!
//! Input written while nobody reads it is typed ahead, and typed-ahead input is echoed in
//! ways the echo recogniser (echo.rs) cannot follow. A shell that is still busy when the
//! input comes (finishing a command, building its next prompt, running `PROMPT_COMMAND`)
//! leaves the terminal in cooked mode, so the kernel echoes the line at once; readline reads
//! it when it starts and draws it again after the prompt. Two echoes: the recogniser took
//! the first, and `since: last_input` matched the second, the command line it typed. And a
//! line typed while readline is still handling the previous Enter, with echo off, is read by
//! the program that Enter starts and never echoed at all, so the program's own output of it
//! was taken for its echo.
//!
//! So the writer does what a person does and types when someone listens: a typed input
//! waits until a process of the terminal's foreground group is blocked reading the terminal
//! (or polling descriptors, which may include it), for at most [`HOLD_MAX`]. Interrupt
//! characters (meant for whatever runs) and answers to terminal queries (the program that
//! asked waits for them) never wait. Where /proc cannot tell, nothing waits. A far shell
//! (remote.rs) is its own witness: its prompt marker, or else a pause in its output.

use portable_pty::MasterPty;
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::termios::{LocalModes, SpecialCodeIndex};
use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// Input is written in pieces this large, the size of the kernel's PTY line buffer.
const WRITE_CHUNK: usize = 4096;
/// Longest a typed input waits for a reader. Past it, the input is typed ahead anyway: the
/// reader may read in a way /proc does not show.
pub const HOLD_MAX: Duration = Duration::from_secs(5);
/// A reader that starts without printing anything (a `read` builtin, a program reaching its
/// first read) is noticed by looking again, first often, then less often.
const FIRST_LOOK: Duration = Duration::from_micros(50);
const LAST_LOOK: Duration = Duration::from_millis(10);

/// A descriptor of the PTY's master side of our own, for waiting on output without taking
/// it and for reading the terminal's modes, which portable-pty's wrappers do not offer.
pub fn master_file(master: &dyn MasterPty) -> std::io::Result<File> {
    struct Borrowed(RawFd);
    impl AsRawFd for Borrowed {
        fn as_raw_fd(&self) -> RawFd {
            self.0
        }
    }
    let fd = master
        .as_raw_fd()
        .ok_or_else(|| std::io::Error::other("the PTY has no descriptor"))?;
    // The master is open for as long as this runs; the duplicate is ours to close.
    filedescriptor::FileDescriptor::dup(&Borrowed(fd))
        .and_then(|d| d.as_file())
        .map_err(|e| std::io::Error::other(e.to_string()))
}

/// One piece of input for the writer.
#[derive(Debug)]
pub enum Input {
    /// Typed by a caller; `seq` numbers the inputs of a session, `echo` is the text whose
    /// echo `since: last_input` skips.
    Typed {
        bytes: Vec<u8>,
        seq: u64,
        echo: String,
    },
    /// The terminal's answer to a query; the program that asked is waiting for it.
    Reply(Vec<u8>),
}

/// What the writer needs from its session.
pub trait Host {
    /// Typed input `seq` (`bytes`) is about to be written: if it is the latest, output that
    /// came before it is taken in and `since: last_input` starts here. `buf` is room to read
    /// into. Returns answers to terminal queries found in that output, to write first;
    /// `None` when its sender withdrew it, and it is dropped.
    fn typing(&self, seq: u64, bytes: &[u8], echo: &str, buf: &mut [u8]) -> Option<Vec<u8>>;
    /// Blocks until output arrives or `wait` passes.
    fn wait_for_output(&self, wait: Duration);
    /// Whether the program has ended (nothing will read any more).
    fn ended(&self) -> bool;
    /// For a far shell, whose readers /proc cannot see: whether input goes now (remote.rs).
    /// `None` for a local one.
    fn far_listens(&self) -> Option<bool>;
    /// `bytes` of typed input left the queue (written, or failed to be).
    fn dequeued(&self, bytes: usize);
}

/// Looks at the terminal from the master side: its modes and who is in its foreground.
#[derive(Debug, Clone)]
pub struct Probe {
    pty: Arc<File>,
    /// The terminal's device path, to tell a read of the terminal from a read of a pipe.
    tty: Option<PathBuf>,
}

impl Probe {
    pub fn new(pty: Arc<File>, tty: Option<PathBuf>) -> Self {
        Probe { pty, tty }
    }

    /// The interrupt, quit and suspend characters, when the terminal turns them into
    /// signals.
    fn signal_characters(&self) -> Option<[u8; 3]> {
        let termios = rustix::termios::tcgetattr(&*self.pty).ok()?;
        let cc = &termios.special_codes;
        termios.local_modes.contains(LocalModes::ISIG).then(|| {
            [
                cc[SpecialCodeIndex::VINTR],
                cc[SpecialCodeIndex::VQUIT],
                cc[SpecialCodeIndex::VSUSP],
            ]
        })
    }

    /// Whether input typed now is read at once: a process in the foreground is blocked
    /// waiting for terminal input, and everything typed before has been read (a reader that
    /// has not yet woken for the last input would otherwise look idle). Unknown counts as
    /// yes, as it did before flowdeck looked.
    pub fn someone_reads(&self) -> bool {
        let Ok(pgid) = rustix::termios::tcgetpgrp(&*self.pty) else {
            return true;
        };
        // The queue first: a reader that is about to wake for earlier input still looks
        // blocked.
        self.unread_input().is_none_or(|n| n == 0)
            && reading(pgid.as_raw_nonzero().get(), self.tty.as_deref()).unwrap_or(true)
    }

    /// Bytes typed but not yet read by the program (in cooked mode, of whole lines). Only
    /// the terminal's side knows; it is opened for the question and closed at once.
    fn unread_input(&self) -> Option<u64> {
        use std::os::unix::fs::OpenOptionsExt;
        let tty = self.tty.as_deref()?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            // Never become flowdeck's controlling terminal; never block on a hung-up one.
            .custom_flags(nix::libc::O_NOCTTY | nix::libc::O_NONBLOCK)
            .open(tty)
            .ok()?;
        // Input written a moment ago may still be on its way to the terminal's queue (the
        // kernel moves it in a work item); polling finishes that move.
        let mut fds = [PollFd::new(&file, PollFlags::IN)];
        let _ = rustix::event::poll(&mut fds, Some(&Timespec::default()));
        rustix::io::ioctl_fionread(&file).ok()
    }

    /// Whether `bytes` hold a character the terminal turns into a signal: meant for
    /// whatever runs now, it never waits, and it goes before typed input that waits.
    fn interrupts(&self, bytes: &[u8]) -> bool {
        // 0 disables a control character.
        self.signal_characters()
            .is_some_and(|s| bytes.iter().any(|b| *b != 0 && s.contains(b)))
    }
}

/// Whether `bytes`, typed now, must wait for a reader: see the module's documentation. For a
/// far shell only a line waits (a line typed too early is what gets echoed twice): a key
/// for a far program that never pauses (`q` for `watch`) goes at once.
fn must_wait(probe: &Probe, host: &impl Host, bytes: &[u8]) -> bool {
    if host.far_listens().is_some() && !bytes.iter().any(|b| matches!(b, b'\r' | b'\n')) {
        return false;
    }
    !interrupts(probe, host, bytes) && !listening(probe, host)
}

/// Whether input typed now is read at once, as far as this side can tell.
fn listening(probe: &Probe, host: &impl Host) -> bool {
    host.far_listens().unwrap_or_else(|| probe.someone_reads())
}

/// Whether `bytes` hold a character that the terminal, here or on the far side, turns into
/// a signal.
fn interrupts(probe: &Probe, host: &impl Host, bytes: &[u8]) -> bool {
    match host.far_listens() {
        Some(_) => bytes
            .iter()
            .any(|b| crate::term::remote::FAR_SIGNALS.contains(b)),
        None => probe.interrupts(bytes),
    }
}

/// Whether the leader of the foreground group `pgid` waits for terminal input: a thread of
/// it blocked in a read of the terminal, or in a poll of descriptors (which may include the
/// terminal). A group whose leader is gone, or going (a zombie, exiting, or in the middle
/// of an `exec`, when /proc shows no such call), reads nothing now. `None` when /proc
/// refuses to tell.
#[cfg(target_os = "linux")]
fn reading(pgid: i32, tty: Option<&Path>) -> Option<bool> {
    let refused = |e: &std::io::Error| e.kind() == std::io::ErrorKind::PermissionDenied;
    // The main thread first: it is where most programs read the terminal, and it needs no
    // listing of threads.
    match std::fs::read_to_string(format!("/proc/{pgid}/syscall")) {
        Ok(syscall) if waits_for_input(pgid, &syscall, tty) => return Some(true),
        Ok(_) => {}
        Err(e) if refused(&e) => return None,
        Err(_) => return Some(false),
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pgid}/task")) else {
        return Some(false);
    };
    let main = pgid.to_string();
    for task in tasks.flatten().filter(|t| t.file_name() != main.as_str()) {
        match std::fs::read_to_string(task.path().join("syscall")) {
            Ok(syscall) if waits_for_input(pgid, &syscall, tty) => return Some(true),
            Ok(_) => {}
            Err(e) if refused(&e) => return None,
            Err(_) => {}
        }
    }
    Some(false)
}

#[cfg(not(target_os = "linux"))]
fn reading(_: i32, _: Option<&Path>) -> Option<bool> {
    None
}

/// Reads `/proc/PID/task/TID/syscall`: the number of the system call a thread is blocked
/// in and its arguments, or `running`.
#[cfg(target_os = "linux")]
fn waits_for_input(pid: i32, syscall: &str, tty: Option<&Path>) -> bool {
    let mut fields = syscall.split_ascii_whitespace();
    let Some(number) = fields.next().and_then(|n| n.parse::<i64>().ok()) else {
        return false;
    };
    if syscalls::POLLS.contains(&number) {
        return true;
    }
    if !syscalls::READS.contains(&number) {
        return false;
    }
    let Some(fd) = fields
        .next()
        .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
    else {
        return false;
    };
    match std::fs::read_link(format!("/proc/{pid}/fd/{fd}")) {
        Ok(target) => tty.is_some_and(|t| target == t) || target == Path::new("/dev/tty"),
        Err(_) => false,
    }
}

#[cfg(target_os = "linux")]
mod syscalls {
    use nix::libc;

    /// Calls that read one descriptor (the first argument).
    pub const READS: &[i64] = &[libc::SYS_read, libc::SYS_readv, libc::SYS_pread64];
    /// Calls that wait on several descriptors.
    #[cfg(target_arch = "x86_64")]
    pub const POLLS: &[i64] = &[
        libc::SYS_poll,
        libc::SYS_select,
        libc::SYS_epoll_wait,
        libc::SYS_ppoll,
        libc::SYS_pselect6,
        libc::SYS_epoll_pwait,
        libc::SYS_epoll_pwait2,
    ];
    #[cfg(not(target_arch = "x86_64"))]
    pub const POLLS: &[i64] = &[
        libc::SYS_ppoll,
        libc::SYS_pselect6,
        libc::SYS_epoll_pwait,
        libc::SYS_epoll_pwait2,
    ];
}

/// The writer thread: owns the PTY's input side and writes queued input in chunks, so that
/// a program that stops reading blocks only this thread.
pub fn write_loop(
    mut writer: Box<dyn Write + Send>,
    queue: Receiver<Input>,
    probe: Probe,
    host: &impl Host,
) {
    let mut later: VecDeque<Input> = VecDeque::new();
    // The PTY hands out at most 4 KiB a read.
    let mut buf = vec![0u8; 4096];
    // A far input waited its longest: until the far side listens again, what follows it
    // goes at once, rather than each line waiting as long again.
    let mut waited_out = false;
    loop {
        let input = match later.pop_front() {
            Some(input) => input,
            None => match queue.recv() {
                Ok(input) => input,
                Err(_) => return,
            },
        };
        let written = match input {
            Input::Reply(bytes) => write(&mut writer, &bytes),
            Input::Typed { bytes, seq, echo } => {
                waited_out &= host.far_listens() == Some(false);
                if !waited_out && must_wait(&probe, host, &bytes) {
                    match hold(&mut writer, &queue, &mut later, &probe, host, &mut buf) {
                        Held::Gone => return,
                        Held::Listening => {}
                        Held::WaitedOut => waited_out = host.far_listens().is_some(),
                    }
                }
                type_in(&mut writer, host, seq, &echo, &bytes, &mut buf)
            }
        };
        if written.is_err() {
            return;
        }
    }
}

/// How a hold ended.
enum Held {
    /// Someone reads, the program ended, or the session is closing.
    Listening,
    /// [`HOLD_MAX`] passed.
    WaitedOut,
    /// A write failed: the terminal is gone.
    Gone,
}

/// Waits until someone reads the terminal, the program ends or [`HOLD_MAX`] passes. Replies
/// and interrupts that come meanwhile are written at once; other input queues behind.
fn hold(
    writer: &mut Box<dyn Write + Send>,
    queue: &Receiver<Input>,
    later: &mut VecDeque<Input>,
    probe: &Probe,
    host: &impl Host,
    buf: &mut [u8],
) -> Held {
    let deadline = Instant::now() + HOLD_MAX;
    let mut look = FIRST_LOOK;
    let mut open = true;
    loop {
        while open {
            match queue.try_recv() {
                Ok(Input::Reply(bytes)) => {
                    if write(writer, &bytes).is_err() {
                        return Held::Gone;
                    }
                }
                Ok(Input::Typed { bytes, seq, echo }) if interrupts(probe, host, &bytes) => {
                    if type_in(writer, host, seq, &echo, &bytes, buf).is_err() {
                        return Held::Gone;
                    }
                }
                Ok(input) => later.push_back(input),
                Err(TryRecvError::Empty) => break,
                // The session is closing; what is held is written and the loop ends.
                Err(TryRecvError::Disconnected) => open = false,
            }
        }
        let now = Instant::now();
        if !open || host.ended() || listening(probe, host) {
            return Held::Listening;
        }
        if now >= deadline {
            return Held::WaitedOut;
        }
        host.wait_for_output(look.min(deadline - now));
        look = (look * 2).min(LAST_LOOK);
    }
}

/// Writes a typed input, after the answers to queries in the output that came before it.
fn type_in(
    writer: &mut Box<dyn Write + Send>,
    host: &impl Host,
    seq: u64,
    echo: &str,
    bytes: &[u8],
    buf: &mut [u8],
) -> std::io::Result<()> {
    let Some(answer) = host.typing(seq, bytes, echo, buf) else {
        host.dequeued(bytes.len());
        return Ok(());
    };
    let written = if answer.is_empty() {
        Ok(())
    } else {
        write(writer, &answer)
    }
    .and_then(|()| write(writer, bytes));
    host.dequeued(bytes.len());
    written
}

fn write(writer: &mut Box<dyn Write + Send>, bytes: &[u8]) -> std::io::Result<()> {
    for chunk in bytes.chunks(WRITE_CHUNK) {
        writer.write_all(chunk)?;
        writer.flush()?;
    }
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_blocked_read_of_the_terminal_is_waiting_for_input() {
        let me = std::process::id() as i32;
        let tty = std::fs::read_link(format!("/proc/{me}/fd/0")).ok();
        let read = format!("{} 0x0 0x7ffd 0x1", syscalls::READS[0]);
        if let Some(tty) = &tty {
            assert!(waits_for_input(me, &read, Some(tty)));
        }
        assert!(!waits_for_input(me, "running", tty.as_deref()));
        assert!(!waits_for_input(me, "-1 0x7ffd 0x1", tty.as_deref()));
        // A read of a descriptor that is not the terminal (a command substitution's pipe).
        let pipe = format!("{} 0x3ff 0x7ffd 0x1", syscalls::READS[0]);
        assert!(!waits_for_input(me, &pipe, tty.as_deref()));
    }

    #[test]
    fn a_group_whose_leader_is_gone_reads_nothing() {
        assert_eq!(reading(i32::MAX, None), Some(false));
    }

    /// A far shell as its markers describe it, for the writer's rules.
    struct Far {
        listens: bool,
    }

    impl Host for Far {
        fn typing(&self, _: u64, _: &[u8], _: &str, _: &mut [u8]) -> Option<Vec<u8>> {
            Some(Vec::new())
        }
        fn wait_for_output(&self, wait: Duration) {
            std::thread::sleep(wait.min(Duration::from_millis(1)));
        }
        fn ended(&self) -> bool {
            false
        }
        fn dequeued(&self, _: usize) {}
        fn far_listens(&self) -> Option<bool> {
            Some(self.listens)
        }
    }

    #[test]
    fn to_a_busy_far_program_only_a_line_waits_and_interrupts_never_do() {
        let null = std::fs::File::open("/dev/null").unwrap();
        let probe = Probe::new(Arc::new(null), None);
        let busy = Far { listens: false };
        assert!(
            must_wait(&probe, &busy, b"make\r"),
            "a line waits for the prompt"
        );
        assert!(!must_wait(&probe, &busy, b"q"), "a key goes at once");
        assert!(!must_wait(&probe, &busy, b"\x03\r"), "Ctrl-C goes at once");
        assert!(!must_wait(&probe, &Far { listens: true }, b"make\r"));
    }
}
