//! The folder's server against clients that misbehave (issue 35): a first line that is no
//! request, or a hello the server does not understand, gets an answer saying so rather than
//! silence. The real binary on a socket of its own, spoken to as raw lines.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::{Killed, LONG, socket_in};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// `flowdeck serve` on `folder`, killed when the test ends however it ends.
fn serve(folder: &Path, runtime: &Path) -> Killed {
    Killed(common::serve_with(folder, runtime, &[]))
}

/// A raw connection to the server answering under `runtime`, whose reads give up after
/// [`LONG`].
fn connect(runtime: &Path) -> UnixStream {
    let stream = UnixStream::connect(socket_in(runtime)).unwrap();
    stream.set_read_timeout(Some(LONG)).unwrap();
    stream
}

/// The next line the server sends on `reader`, as JSON.
fn next_line(reader: &mut BufReader<UnixStream>, what: &str) -> Value {
    let mut line = String::new();
    let read = reader.read_line(&mut line);
    assert!(
        matches!(read, Ok(n) if n > 0),
        "no line from the server for {what}: {read:?}"
    );
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{what}: {e}: {line:?}"))
}

#[test]
fn a_first_line_that_is_json_but_no_request_is_answered_invalid_request() {
    let (folder, runtime) = common::tiny_folder();
    let _server = serve(folder.path(), runtime.path());
    let client = connect(runtime.path());
    let mut reader = BufReader::new(client.try_clone().unwrap());
    (&client).write_all(b"{\"a\":1}\n").unwrap();
    let answer = next_line(&mut reader, "a first line that is no request");
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    // The connection goes on: a request after it is served.
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    (&client)
        .write_all(format!("{initialize}\n").as_bytes())
        .unwrap();
    let answer = next_line(&mut reader, "initialize after it");
    assert_eq!(
        answer["result"]["serverInfo"]["name"], "flowdeck",
        "{answer}"
    );
}

#[test]
fn a_hello_the_server_does_not_understand_is_refused_saying_what_and_which_kinds_exist() {
    let (folder, runtime) = common::tiny_folder();
    let _server = serve(folder.path(), runtime.path());
    let version = env!("CARGO_PKG_VERSION");
    let unknown_kind = json!({"flowdeck": {"protocol": 1, "version": version, "client": "robot"}});
    let no_kind = json!({"flowdeck": {"protocol": 1, "version": version}});
    let not_a_hello = json!({"flowdeck": 7});
    for (hello, named) in [
        (&unknown_kind, "robot"),
        (&no_kind, "client"),
        (&not_a_hello, "hello"),
    ] {
        let client = connect(runtime.path());
        let mut reader = BufReader::new(client.try_clone().unwrap());
        (&client)
            .write_all(format!("{hello}\n").as_bytes())
            .unwrap();
        let answer = next_line(&mut reader, &format!("the hello {hello}"));
        let refused = answer["flowdeck"]["refused"]
            .as_str()
            .unwrap_or_else(|| panic!("{hello} was not refused: {answer}"));
        for part in [named, "mcp", "studio", "cli", "approve"] {
            assert!(refused.contains(part), "{part} in {refused:?}");
        }
        // And the connection ends.
        let mut rest = Vec::new();
        let ended = reader.read_to_end(&mut rest);
        assert!(matches!(ended, Ok(0)), "{hello}: {ended:?} {rest:?}");
    }
}
