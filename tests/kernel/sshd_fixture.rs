//! The ssh fixture (tests/common/sshd.rs) driven by plain `ssh`: its hosts log in and run
//! commands, each on its own address; its failing aliases fail at once, each its own way; and
//! `password` really asks for a password on a terminal.

use std::io::Read;
use std::process::{Command, Output, Stdio};

use portable_pty::{CommandBuilder, PtySize};

use crate::common::sshd::{self, ADDRESSES, HOSTS, Sshd};
use crate::common::{self, LONG};

fn ssh(sshd: &Sshd, args: &[&str]) -> Output {
    let what = format!("ssh {}", args.join(" "));
    sshd::output_within(LONG, &what, sshd.ssh().args(args))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn each_host_runs_a_command_on_its_own_address() {
    let sshd = Sshd::start();
    for (host, address) in HOSTS.into_iter().zip(ADDRESSES) {
        let command = "echo hi-$((6*7)); echo $SSH_CONNECTION";
        let output = ssh(&sshd, &["-o", "BatchMode=yes", host, command]);
        assert!(
            output.status.success(),
            "ssh {host} failed ({}): {}\nsshd logged:\n{}",
            output.status,
            stderr(&output),
            sshd.log()
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.first(), Some(&"hi-42"), "{host} printed {stdout:?}");
        // SSH_CONNECTION: client address and port, server address and port.
        let connection: Vec<&str> = lines.get(1).unwrap_or(&"").split(' ').collect();
        let port = sshd.port().to_string();
        assert_eq!(
            connection.get(2..),
            Some(&[address, port.as_str()][..]),
            "{host}'s SSH_CONNECTION"
        );
    }
}

#[test]
fn the_ssh_command_runs_as_a_shell_would_split_it() {
    let sshd = Sshd::start();
    let command = sshd.ssh_command();
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words.len(), 3, "{command:?}");
    assert_eq!(words[..2], ["ssh", "-F"]);
    assert_eq!(words[2], sshd.config().to_str().unwrap());
    let mut ssh = Command::new(words[0]);
    ssh.args(&words[1..])
        .args([
            "-o",
            "BatchMode=yes",
            "-tt",
            "--",
            "h3",
            "tty >/dev/null && echo on-a-tty",
        ])
        .stdin(Stdio::null());
    let output = sshd::output_within(LONG, "ssh -tt h3", &mut ssh);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("on-a-tty"),
        "{output:?}"
    );
}

#[test]
fn the_failing_aliases_fail_at_once_each_its_own_way() {
    let sshd = Sshd::start();
    for (host, expected) in [
        ("down", "Connection refused"),
        ("badkey", "Host key verification failed"),
        ("badkey", "REMOTE HOST IDENTIFICATION HAS CHANGED"),
        ("password", "Permission denied"),
    ] {
        let output = ssh(&sshd, &["-o", "BatchMode=yes", host, "true"]);
        assert!(!output.status.success(), "ssh {host} succeeded");
        assert!(
            stderr(&output).contains(expected),
            "ssh {host} failed without {expected:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn password_asks_for_a_password_on_its_terminal() {
    let sshd = Sshd::start();
    let pty = portable_pty::native_pty_system()
        .openpty(PtySize {
            rows: 24,
            cols: 80,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut command = CommandBuilder::new("ssh");
    command.arg("-F");
    command.arg(sshd.config());
    command.args(["password", "true"]);
    let mut child = pty.slave.spawn_command(command).unwrap();
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().unwrap();
    let (chunks, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 1024];
        while let Ok(n @ 1..) = reader.read(&mut buffer) {
            if chunks.send(buffer[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut screen = Vec::new();
    common::wait_until(LONG, "ssh's password prompt", || {
        screen.extend(received.try_iter().flatten());
        let text = String::from_utf8_lossy(&screen).to_lowercase();
        if let Some(status) = child.try_wait().unwrap() {
            panic!("ssh exited ({status:?}) without asking for a password: {text:?}");
        }
        text.contains("password").then_some(())
    });
    child.kill().unwrap();
    child.wait().unwrap();
}
