//! `flowdeck mcp` spoken to as raw JSON-RPC lines over its standard streams: for tests of the
//! wire itself and of how the process ends.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use super::LONG;

/// A `flowdeck mcp` child with piped standard streams.
pub struct LineServer {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl LineServer {
    /// Starts `flowdeck --workflows DIR mcp` with bash as the shell.
    pub fn start(workflows: &Path) -> LineServer {
        Self::start_with(workflows, &[])
    }

    /// Starts `flowdeck --workflows DIR mcp OPTIONS...` with bash as the shell, offering every
    /// tool unless OPTIONS name the toolsets.
    pub fn start_with(workflows: &Path, options: &[&str]) -> LineServer {
        let mut command = Command::new(env!("CARGO_BIN_EXE_flowdeck"));
        command
            .arg("--workflows")
            .arg(workflows)
            .arg("mcp")
            .args(options)
            .env("FLOWDECK_TOOLSETS", "all")
            .env("SHELL", "/bin/bash")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        Self::spawn(command)
    }

    /// Starts a prepared command; its stdin and stdout must be piped.
    pub fn spawn(mut command: Command) -> LineServer {
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        LineServer {
            child,
            stdin,
            lines,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        self.response(id)
    }

    /// The next message on stdout, which must be a JSON-RPC line.
    pub fn next_message(&mut self) -> Value {
        self.message_by(Instant::now() + LONG)
            .expect("no message from the server")
    }

    /// The response with this id (messages before it are skipped), within [`LONG`].
    pub fn response(&mut self, id: u64) -> Value {
        self.response_after(id).0
    }

    /// The response with this id, and the messages that came before it, within [`LONG`].
    pub fn response_after(&mut self, id: u64) -> (Value, Vec<Value>) {
        self.answer_within(LONG, "a response", id)
    }

    /// [`Self::request`] that must be answered within `deadline`, failing with `what`.
    pub fn request_within(
        &mut self,
        deadline: Duration,
        what: &str,
        id: u64,
        method: &str,
        params: Value,
    ) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        self.answer_within(deadline, what, id).0
    }

    /// The response with this id and the messages before it, failing with `what` unless it
    /// comes within `deadline`: one deadline for all of them, so that a server that keeps
    /// talking without answering still fails.
    fn answer_within(&mut self, deadline: Duration, what: &str, id: u64) -> (Value, Vec<Value>) {
        let end = Instant::now() + deadline;
        let mut before = Vec::new();
        loop {
            let Some(message) = self.message_by(end) else {
                // Gone or silent: which, and what it said on stderr, is the diagnosis.
                let exited = self.child.try_wait().ok().flatten();
                let mut said = String::new();
                if exited.is_some()
                    && let Some(mut stderr) = self.child.stderr.take()
                {
                    let _ = std::io::Read::read_to_string(&mut stderr, &mut said);
                }
                panic!(
                    "{what}: request {id} not answered within {deadline:?} (exited: {exited:?}; stderr: {said})"
                );
            };
            if message["id"] == json!(id) {
                return (message, before);
            }
            before.push(message);
        }
    }

    /// The next message on stdout, which must be a JSON-RPC line; `None` when none came by
    /// `end` (or the server closed its stdout).
    fn message_by(&mut self, end: Instant) -> Option<Value> {
        let left = end.saturating_duration_since(Instant::now());
        let line = self.lines.recv_timeout(left).ok()?;
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("stdout carried a non-JSON line: {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        Some(message)
    }

    pub fn initialize(&mut self) {
        let init = self.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "wire", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "flowdeck", "{init}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    /// A call that must succeed: its structuredContent. An error result carries its payload
    /// as JSON text in `content`, shown when the call fails.
    pub fn call(&mut self, id: u64, tool: &str, args: Value) -> Value {
        let r = self.request(id, "tools/call", json!({"name": tool, "arguments": args}));
        assert_ne!(
            r["result"]["isError"], true,
            "{tool} failed: {}",
            r["result"]["content"][0]["text"]
        );
        r["result"]["structuredContent"].clone()
    }

    /// The `attention` tool's answer once `ok` holds for the item of `id` (`None`: it has
    /// none), asked again until then (calls numbered from `calls` on); fails with `what`.
    pub fn attention_until(
        &mut self,
        calls: &mut u64,
        id: &str,
        what: &str,
        ok: impl Fn(Option<&Value>) -> bool,
    ) -> Value {
        let end = Instant::now() + LONG;
        loop {
            *calls += 1;
            let list = self.call(*calls, "attention", json!({}));
            let item = list["items"]
                .as_array()
                .and_then(|items| items.iter().find(|i| i["id"] == id));
            if ok(item) {
                return list;
            }
            assert!(
                Instant::now() < end,
                "{what} within {LONG:?}; the list: {list:#}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Opens a bash terminal as an agent does (call `id`), its prompt `$ `: its session id.
    pub fn open_bash(&mut self, id: u64) -> String {
        let opened = self.call(
            id,
            "open_terminal",
            json!({"command": ["bash", "--norc", "--noprofile"], "env": {"PS1": "$ "}}),
        );
        opened["session_id"].as_str().unwrap().to_string()
    }

    /// Types `text` into `session` (call `id`).
    pub fn type_into(&mut self, id: u64, session: &str, text: &str) {
        self.call(
            id,
            "send_input",
            json!({"session_id": session, "input_text": text}),
        );
    }

    /// Waits for the process to exit on its own, within `deadline`.
    pub fn exit_within(&mut self, deadline: Duration) -> Option<i32> {
        let end = Instant::now() + deadline;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                Instant::now() < end,
                "flowdeck mcp did not exit within {deadline:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn exit_status(&mut self) -> Option<i32> {
        self.exit_within(LONG)
    }
}

impl Drop for LineServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An agent's terminal, off the async runtime that the studios under test need: bash opened
/// (call 2) and, when given, `line` typed into it (call 3). The agent and the session's id.
pub async fn agent_terminal(agent: LineServer, line: Option<&str>) -> (LineServer, String) {
    let line = line.map(str::to_string);
    tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        let id = agent.open_bash(2);
        if let Some(line) = line {
            agent.type_into(3, &id, &line);
        }
        (agent, id)
    })
    .await
    .unwrap()
}
