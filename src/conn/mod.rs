//! What every connection flowdeck serves is held to, whatever it speaks (MCP on the folder's
//! socket, the studio protocol, `flowdeck approve`, MCP over HTTP), so that no client can
//! starve the server (SPEC §4.4):
//!
//! - [`outbox`]: the lines queued for one client, bounded in bytes and messages, past which
//!   nothing more is read from it; one writer sends them whole and in order, and a client that
//!   takes nothing for too long may be given up;
//! - [`accept`]: an accept loop that backs off when accepting fails (descriptors run out)
//!   rather than spinning, and says so once in a while with a count;
//! - [`throttle`]: a log line a client can make repeat, said at most once per period with the
//!   count of those held back;
//! - [`FIRST_LINE`]: how long a connection has to say what it is.
//!
//! A leaf: it knows nothing of the engine or of any protocol.

pub mod accept;
pub mod outbox;
pub mod throttle;

use std::time::Duration;

/// A connection that has not sent its first line (a hello, or its first MCP message) this
/// long after it was accepted is closed: a front end sends its hello at once, so only a
/// client that holds a connection without using it waits longer. After the first line the
/// protocol's own rules apply (a stopped studio may stay silent for hours).
pub const FIRST_LINE: Duration = Duration::from_secs(10);
