//! The process's standard streams as async byte streams, whatever they are.
//!
//! Agent hosts start `flowdeck mcp` with pipes (Python, rmcp), Unix socket pairs (every host
//! built on Node), pipes that belong to another user, a terminal (a person typing JSON lines),
//! or a file and `/dev/null`. Only some of those can be registered with epoll, and switching a
//! shared descriptor to non-blocking mode would leak into whoever shares it. So each direction
//! gets a thread that does plain blocking I/O on its own duplicate of the descriptor and talks
//! to the async side through an in-memory pipe: one code path that works for every kind of
//! stream, and that never touches `std::io::stdout()`'s lock (which a caller may hold).

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

/// How much either direction buffers between its thread and the async side.
const BUFFER: usize = 256 * 1024;

/// The async ends: bytes read from standard input, and a sink for standard output. Each is
/// one end of its own in-memory pipe, so that either thread ending is seen at once on the
/// other side (end of stream, or `BrokenPipe`).
#[derive(Debug)]
pub struct StdioStreams {
    pub input: DuplexStream,
    pub output: DuplexStream,
    /// Told once the output's thread has written everything it was given (after `output` was
    /// shut down) or standard output failed. A process that ends without waiting for it may
    /// lose the last answers it wrote: they can still be in the pipe.
    pub written: tokio::sync::oneshot::Receiver<()>,
}

/// Duplicates descriptors 0 and 1 and starts a thread for each. Must be called inside a tokio
/// runtime. Standard input ending (or failing) reads as end of stream; standard output failing
/// (the client went away) makes writes fail with `BrokenPipe`.
pub fn stdio_streams() -> std::io::Result<StdioStreams> {
    let input = std::io::stdin().as_fd().try_clone_to_owned()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned()?;
    streams(input, output)
}

/// The same over any two descriptors (tests use socket pairs and files).
pub fn streams(input: OwnedFd, output: OwnedFd) -> std::io::Result<StdioStreams> {
    let handle = tokio::runtime::Handle::current();
    let (from_input, mut to_server) = tokio::io::duplex(BUFFER);
    let (mut from_server, to_output) = tokio::io::duplex(BUFFER);
    let (written, all_written) = tokio::sync::oneshot::channel();

    let reader_handle = handle.clone();
    std::thread::Builder::new()
        .name("mcp-stdin".into())
        .spawn(move || {
            let mut file = File::from(input);
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match file.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if reader_handle
                            .block_on(to_server.write_all(&buf[..n]))
                            .is_err()
                        {
                            break;
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    // A descriptor someone else made non-blocking: wait until it is readable.
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        wait_until_ready(file.as_fd(), nix::poll::PollFlags::POLLIN)
                    }
                    Err(e) => {
                        tracing::warn!("standard input failed: {e}");
                        break;
                    }
                }
            }
            // Dropping `to_server` is the end of stream the server sees.
        })?;

    std::thread::Builder::new()
        .name("mcp-stdout".into())
        .spawn(move || {
            let mut file = File::from(output);
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = match handle.block_on(from_server.read(&mut buf)) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                if let Err(e) = write_all(&mut file, &buf[..n]) {
                    tracing::info!("standard output closed: {e}");
                    break;
                }
            }
            // Dropping `from_server` makes the server's next write fail with `BrokenPipe`.
            let _ = written.send(());
        })?;

    Ok(StdioStreams {
        input: from_input,
        output: to_output,
        written: all_written,
    })
}

/// `write_all` that also waits out a non-blocking descriptor.
fn write_all(file: &mut File, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match file.write(bytes) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                wait_until_ready(file.as_fd(), nix::poll::PollFlags::POLLOUT)
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn wait_until_ready(fd: BorrowedFd<'_>, events: nix::poll::PollFlags) {
    let mut fds = [nix::poll::PollFd::new(fd, events)];
    // Errors and hang-ups show up again in the read or write that follows.
    let _ = nix::poll::poll(&mut fds, nix::poll::PollTimeout::NONE);
}
