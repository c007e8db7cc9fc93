//! The folder's server against clients that misbehave (issue 35): no client can starve it.
//! Connections that never speak cost neither CPU nor log when descriptors run out, and are
//! closed after their first line's deadline; a first line that is no request, or a hello the
//! server does not understand, gets an answer saying so rather than silence. The real binary
//! on a socket of its own, spoken to as raw lines.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::{Killed, LONG, socket_in};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

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

/// Descriptors the server may open in the test of silent connections, and how many such
/// connections the test opens: more than it can accept.
const FEW_DESCRIPTORS: u32 = 256;
const SILENT: usize = 300;

#[test]
fn silent_connections_past_the_descriptor_limit_cost_no_cpu_or_log_and_the_next_client_is_served() {
    let (folder, runtime) = common::tiny_folder();
    let log = runtime.path().join("server.stderr");
    // Its information logged too, as a server started in the background logs it.
    let mut command = common::serve_command(folder.path(), runtime.path(), &[]);
    command.env("FLOWDECK_LOG", "warn,flowdeck=info");
    let server = Killed(
        common::with_descriptors(&command, FEW_DESCRIPTORS)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let pid = server.0.id();
    common::answering(runtime.path());

    let socket = socket_in(runtime.path());
    let connected = Instant::now();
    let silent: Vec<UnixStream> = (0..SILENT)
        .map(|_| UnixStream::connect(&socket).unwrap())
        .collect();
    // The server has taken every descriptor it may: the rest wait to be accepted.
    let open = || {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|fds| fds.count())
            .unwrap_or(0)
    };
    common::wait_until(LONG, "the server out of descriptors", || {
        (open() + 8 >= FEW_DESCRIPTORS as usize).then_some(())
    });

    let span = Duration::from_secs(5);
    let (cpu_before, log_before) = (common::cpu_seconds(pid), log_size(&log));
    // A measurement over a span, not a wait for something to happen.
    std::thread::sleep(span);
    let cpu_per_second = (common::cpu_seconds(pid) - cpu_before) / span.as_secs_f64();
    let logged = log_size(&log) - log_before;
    println!(
        "out of descriptors with {SILENT} silent connections: {cpu_per_second:.3} s of CPU a second, {logged} bytes of log in {span:?}"
    );
    assert!(
        cpu_per_second < 0.3,
        "the server spent {cpu_per_second:.3} s of CPU a second out of descriptors"
    );
    assert!(
        logged < 1024 * 1024,
        "the server logged {logged} bytes in {span:?} out of descriptors"
    );

    // The first of them, silent past its first line's deadline (10 s after it was
    // accepted), is closed by the server.
    let mut first = &silent[0];
    first.set_read_timeout(Some(LONG)).unwrap();
    let mut rest = Vec::new();
    let ended = first.read_to_end(&mut rest);
    assert!(
        ended.is_ok(),
        "a silent connection was not closed within {LONG:?}: {ended:?}"
    );
    println!(
        "the first silent connection closed {:?} after it connected",
        connected.elapsed()
    );
    assert!(
        connected.elapsed() >= Duration::from_secs(9),
        "closed after {:?}, before its first line was due",
        connected.elapsed()
    );

    // They go: a new MCP client straight on the socket is served.
    drop(silent);
    let client = connect(runtime.path());
    let mut reader = BufReader::new(client.try_clone().unwrap());
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "after-the-silent", "version": "0"}}});
    (&client)
        .write_all(format!("{initialize}\n").as_bytes())
        .unwrap();
    let answer = next_line(&mut reader, "initialize after the silent connections left");
    assert_eq!(
        answer["result"]["serverInfo"]["name"], "flowdeck",
        "{answer}"
    );
}

fn log_size(log: &Path) -> u64 {
    std::fs::metadata(log).map(|m| m.len()).unwrap_or(0)
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
