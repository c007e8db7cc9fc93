//! What a studio and the folder's server say to each other after the hello: the engine's own
//! contract on the wire. The studio sends engine [`Request`]s and says which sessions it
//! shows; the server sends the answers, a [`Snapshot`] to start from, the engine's events in
//! order after it, and the changed rows of the screens shown. One JSON object per line.
//!
//! Why this is enough to follow the engine without a race: the server subscribes to the
//! events before it takes the snapshot, sends the snapshot before any event (only the count
//! of studios attached comes before it), and then every event; a
//! studio applies events above the snapshot's `seq`, as a local observer does. When the
//! studio falls behind (it stopped reading), the server sends a fresh snapshot instead of the
//! events it missed, and the screens as they are now rather than every frame in between.

use crate::engine::request::{Answer, Request};
use crate::engine::{EngineEvent, Snapshot};
use crate::term::mirror::Changes;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt};

/// At most one frame of a screen per this long, however fast it changes: the server's pace
/// of sending a screen, and the studio's of drawing.
pub const FRAME: std::time::Duration = std::time::Duration::from_millis(16);

/// For this long after a key is typed into a pane, the pane's changes (its echo) are sent and
/// drawn as they come, not at the next frame. A window, not "the next change": a change that
/// was on its way before the key would use up a one-change exemption, and the echo would wait
/// a frame after all. Bounded all the same: the engine tells a pane's activity at most once
/// per 8 ms.
pub const ECHO_WINDOW: std::time::Duration = std::time::Duration::from_millis(100);

/// The longest line either side reads: a manifest's text at the store's limit, escaped, fits.
pub const MAX_LINE: u64 = 16 * 1024 * 1024;

/// From a studio to the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToServer {
    /// An engine call; its answer comes back with the same `id`.
    Call { id: u64, request: Request },
    /// The sessions whose screens the studio shows now: only theirs are sent.
    Watch { sessions: Vec<String> },
    /// An answer to an agent's run waiting for approval: the request shown, by its run and
    /// its [`fingerprint`](crate::engine::approval::ApprovalRequest::fingerprint).
    Decide {
        id: u64,
        run_id: String,
        fingerprint: String,
        approve: bool,
    },
    /// The studio fell behind what it was told and dropped some of it: the server sends a
    /// fresh snapshot, in order with its events, and every shown screen again.
    Resync,
}

/// From the server to a studio.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToStudio {
    /// The engine's state to start from (before any event, and again whenever the studio fell
    /// behind).
    Snapshot(Box<Snapshot>),
    Event(Box<EngineEvent>),
    Answer {
        id: u64,
        answer: Answer,
    },
    /// How many studios the server has attached, this one included (sent as it changes).
    Studios {
        attached: usize,
    },
    /// Why the server cannot write its log (`None`: it can again), sent when it changes.
    ServerLog {
        trouble: Option<String>,
    },
    /// The rows of a shown session's screen that changed since the last sent.
    Screen {
        session_id: String,
        changes: Changes,
    },
}

/// The server's answer to `flowdeck approve` for one workflow: the content version approved,
/// or why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approved {
    pub workflow: String,
    pub approved: Result<String, String>,
}

/// Reads one line (without its newline) into `line`; `Ok(false)` at the end of the stream.
/// A line longer than [`MAX_LINE`] is an error: the other side is not speaking this protocol.
pub async fn read_line<R: AsyncRead + Unpin + AsyncBufReadExt>(
    read: &mut R,
    line: &mut Vec<u8>,
) -> std::io::Result<bool> {
    line.clear();
    let n = (&mut *read).take(MAX_LINE).read_until(b'\n', line).await?;
    if n == 0 {
        return Ok(false);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        Ok(true)
    } else if n as u64 >= MAX_LINE {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a message longer than {MAX_LINE} bytes"),
        ))
    } else {
        // The last line, without a newline: the stream ended.
        Ok(true)
    }
}

/// A message as its line.
pub fn line<T: Serialize>(message: &T) -> std::io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(message)?;
    bytes.push(b'\n');
    Ok(bytes)
}
