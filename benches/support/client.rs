//! An rmcp client of a `flowdeck serve` host, as the benchmarks that measure calls use it.
//! Included by the benchmarks that also include `tests/common` (for its deadlines).

#![allow(dead_code)]

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `FLOWDECK_BENCH_QUICK`: fewer samples, for a look rather than a figure.
pub fn quick() -> bool {
    std::env::var_os("FLOWDECK_BENCH_QUICK").is_some()
}

pub type Client = RunningService<RoleClient, ()>;

/// A tool call that must succeed; its structured result.
pub async fn call(client: &Client, name: &'static str, a: Value) -> Value {
    let Value::Object(arguments) = a else {
        unreachable!()
    };
    let r = client
        .call_tool(CallToolRequestParams::new(name).with_arguments(arguments))
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{name}: {:?}", r.content);
    r.structured_content.unwrap_or(Value::Null)
}

/// The folder's socket under the runtime folder `runtime`, once its host answers on it.
pub fn socket_of(runtime: &Path) -> PathBuf {
    crate::common::wait_until(Duration::from_secs(30), "the host's socket", || {
        std::fs::read_dir(runtime.join("flowdeck"))
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| {
                p.extension().is_some_and(|x| x == "sock")
                    && std::os::unix::net::UnixStream::connect(p).is_ok()
            })
    })
}

/// An MCP client straight on the host's socket.
pub async fn direct(socket: &Path) -> Client {
    let stream = tokio::net::UnixStream::connect(socket).await.unwrap();
    let (read, write) = stream.into_split();
    ().serve((read, write)).await.unwrap()
}
