//! A tmux server of a test's own, on a socket of its own, for what a person's tmux does with
//! what flowdeck writes (its clipboard buffer, its pane titles).

#![allow(clippy::unwrap_used)]

use std::process::Command;

/// A tmux server of the test's own, ended when dropped.
pub struct Tmux {
    pub socket: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmux {
    pub fn start() -> Option<Tmux> {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("sock");
        let started = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["-f", "/dev/null", "new-session", "-d", "-s", "t"])
            .status()
            .ok()?;
        started.success().then_some(Tmux { socket, _dir: dir })
    }

    pub fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}
