//! The folder's server: the process that owns a workflows folder's engine and listens on the
//! folder's owner-only Unix socket (SPEC §4.4), and the front ends' side of that socket.
//!
//! - [`socket`]: where a folder's socket lives, its private folder, binding it and finding a
//!   stale one;
//! - [`connect`]: the one way a front end reaches the server, checking that the socket, its
//!   folder and the listening process are this user's before it writes a byte;
//! - [`hello`]: the versioned first exchange, in which a client says what it is and a server
//!   of another version refuses it;
//! - [`host`]: accepting connections (peer uid checked) and serving each: an agent's MCP
//!   session on the shared engine;
//! - [`approve`]: `flowdeck approve` answered by the server;
//! - [`status`], [`attendance`]: what a server holds and who is attached, for `flowdeck ls`
//!   and `flowdeck stop`;
//! - [`peer`]: whether a connecting process may answer approval requests (the threat model);
//! - [`lifetime`], [`spawn`]: a server started in the background by the first front end
//!   that needs it, detached from it, and ending by itself once idle;
//! - [`relay`]: `flowdeck mcp` beside a server, relaying an agent's stdio to it;
//! - [`protocol`], [`studio`], [`client`], [`inbound`]: a studio attached to the server: the
//!   engine's requests, snapshot, events and screens on the wire, the server's side of it and
//!   the studio's (with its bounded queue of what the server told).
//!
//! It is not MCP's: MCP is one of the protocols served here.

pub mod approve;
pub mod attendance;
pub mod client;
pub mod connect;
pub mod hello;
pub mod host;
pub mod http;
pub mod inbound;
pub mod lifetime;
pub mod peer;
pub mod protocol;
pub mod relay;
pub mod socket;
pub mod spawn;
pub mod status;
pub mod studio;
