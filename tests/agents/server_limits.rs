//! The folder's server against clients that misbehave (issue 35): no client can starve it.
//! A studio-protocol client that calls and never reads costs a bounded queue, not the
//! server's memory; connections that never speak cost neither CPU nor log when descriptors
//! run out, and are closed after their first line's deadline; a first line that is no
//! request, or a hello the server does not understand, gets an answer saying so rather than
//! silence. The real binary on a socket of its own, spoken to as raw lines.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::{Killed, LONG, socket_in};
use flowdeck::engine::request::Request;
use flowdeck::server::hello::{Client, Hello};
use flowdeck::server::protocol::{self, ToServer};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// How long the flood of unread calls goes on, at most, and how many it writes; it ends
/// sooner once the server has taken none of it for [`HELD_OFF`] (it stopped reading).
const FLOOD_TIME: Duration = Duration::from_secs(10);
const FLOOD_CALLS: u64 = 200_000;
const HELD_OFF: Duration = Duration::from_secs(3);
/// What the server may add to its memory for a client that never reads: its queue of
/// answers is bounded at a few MiB (studio.rs); unbounded, the same flood grew a server by
/// gigabytes in 10 s.
const FLOOD_GROWTH: u64 = 200 * 1024 * 1024;

#[test]
fn a_studio_client_that_calls_and_never_reads_stays_bounded_and_the_server_serves_the_next() {
    // The bundled workflows: a folder of the usual kind, whose snapshot is what each unread
    // answer costs.
    let folder = common::bundled_workflows_copy();
    let runtime = tempfile::tempdir().unwrap();
    let server = serve(folder.path(), runtime.path());
    let pid = server.0.id();
    let before = common::rss_of(pid);

    // The studio's hello, then snapshot calls as fast as it can write, never reading a byte
    // (the welcome included). Its writes time out rather than block, so that the flood ends
    // at its count or its time, or as soon as the server has grown past the limit.
    let mut flooder = connect(runtime.path());
    let hello = Hello::new(Client::Studio {
        approve_agent_runs: false,
    });
    flooder.write_all(hello.line().as_bytes()).unwrap();
    flooder
        .set_write_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let grown = Arc::new(AtomicBool::new(false));
    let flood = {
        let grown = grown.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let mut taken = Instant::now();
            let mut calls = 0u64;
            let mut batch: Vec<u8> = Vec::new();
            let mut at = 0;
            while calls < FLOOD_CALLS
                && started.elapsed() < FLOOD_TIME
                && taken.elapsed() < HELD_OFF
                && !grown.load(Ordering::Relaxed)
            {
                if at == batch.len() {
                    batch = (calls..calls + 100)
                        .flat_map(|id| {
                            protocol::line(&ToServer::Call {
                                id,
                                request: Request::Snapshot,
                            })
                            .unwrap()
                        })
                        .collect();
                    calls += 100;
                    at = 0;
                }
                match flooder.write(&batch[at..]) {
                    Ok(n) => {
                        at += n;
                        taken = Instant::now();
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) => {}
                    Err(e) => panic!("the flood's write failed after {calls} calls: {e}"),
                }
            }
            (calls, flooder)
        })
    };
    let mut peak = before;
    while !flood.is_finished() {
        peak = peak.max(common::rss_of(pid));
        if peak > before + FLOOD_GROWTH {
            grown.store(true, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let (calls, flooder) = flood.join().unwrap();
    println!(
        "a studio client calling without reading: {calls} snapshot calls written; server RSS {} MB before, {} MB at the peak",
        before >> 20,
        peak >> 20
    );
    assert!(
        peak <= before + FLOOD_GROWTH,
        "the server grew from {} MB to {} MB under a studio client that never reads ({calls} calls written)",
        before >> 20,
        peak >> 20
    );

    // The flooder goes: the server serves the next client, and holds nothing more for the
    // one that left.
    drop(flooder);
    let mut agent = common::mcp_agent(folder.path(), runtime.path(), &[]);
    let listed = agent.call(2, "workflow_list", json!({}));
    assert!(listed.to_string().contains("archive_logs"), "{listed}");
    let after = common::rss_of(pid);
    println!("server RSS {} MB with the next client", after >> 20);
    assert!(
        after <= peak + 20 * 1024 * 1024,
        "the server went on growing after the client left: {} MB, peak {} MB",
        after >> 20,
        peak >> 20
    );
    drop(agent.stdin.take());
    assert_eq!(agent.exit_within(LONG), Some(0));
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

/// A studio whose loop fell behind drops what it was told and asks to start again (`resync`):
/// the server sends a fresh snapshot (without it, none would come and the read would time out).
#[test]
fn a_studio_that_fell_behind_is_sent_a_fresh_snapshot_when_it_asks() {
    let (folder, runtime) = common::tiny_folder();
    let _server = serve(folder.path(), runtime.path());
    let stream = connect(runtime.path());
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let hello = Hello::new(Client::Studio {
        approve_agent_runs: false,
    });
    writer.write_all(hello.line().as_bytes()).unwrap();
    let welcome = next_line(&mut reader, "the welcome");
    assert!(welcome["flowdeck"]["refused"].is_null(), "{welcome}");
    let snapshots = |reader: &mut BufReader<UnixStream>, what: &str| loop {
        let line = next_line(reader, what);
        if let Some(snapshot) = line.get("snapshot") {
            return snapshot["seq"].as_u64().unwrap();
        }
    };
    let first = snapshots(&mut reader, "the first snapshot");
    writer
        .write_all(&protocol::line(&ToServer::Resync).unwrap())
        .unwrap();
    let again = snapshots(&mut reader, "the snapshot asked for");
    assert!(
        again >= first,
        "a snapshot older than the first: {again} < {first}"
    );
}
