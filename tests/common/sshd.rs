//! A real OpenSSH server on loopback addresses, and an ssh client config to reach it, for tests of
//! terminals on hosts.
//!
//! [`Sshd::start`] runs one `/usr/sbin/sshd` (a child process, in its own temporary directory
//! with its own keys and config) listening on 127.0.0.2, 127.0.0.3 and 127.0.0.4 at one port
//! (Linux routes all of 127/8 to the loopback interface), and writes a client config for
//! `ssh -F` whose aliases are:
//!
//! - `h1`, `h2`, `h3`: 127.0.0.2, .3 and .4, logged into as the current user with a generated
//!   key the server accepts, the server's host key known: `ssh h1 CMD` just runs CMD.
//! - `down`: a loopback port where nothing listens: ssh fails at once with "Connection refused".
//! - `badkey`: 127.0.0.2 with a wrong host key in its known_hosts: ssh fails with "Host key
//!   verification failed" (after "REMOTE HOST IDENTIFICATION HAS CHANGED").
//! - `password`: 127.0.0.3 with public keys off, so ssh asks for a password on its terminal
//!   (and fails at once with "Permission denied" under `BatchMode=yes`). The prompt is real but
//!   no password succeeds: sshd checks the system's accounts, which the tests leave alone.
//! - `passphrase`: 127.0.0.4 with a key the server accepts that is locked by [`PASSPHRASE`]:
//!   ssh asks for the passphrase on its terminal, and typing it there logs in.
//!
//! Run as root, the fixture's keys are readable by other accounts, and
//! [`account_with_login_shell`] makes one (with fish as its login shell, say) that `NAME@h1`
//! logs into.
//!
//! No alias ever prompts for anything but that password, and the client reads and writes none
//! of the real user's `~/.ssh` files nor the system's known hosts.

use std::collections::HashMap;
use std::io::Read;
use std::net::TcpListener;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::{LONG, wait_until};

/// Where sshd is: it must be run by an absolute path, to re-execute itself per connection.
const SSHD: &str = "/usr/sbin/sshd";

/// The addresses sshd listens on, those of `h1`, `h2` and `h3` in that order.
pub const ADDRESSES: [&str; 3] = ["127.0.0.2", "127.0.0.3", "127.0.0.4"];

/// The aliases that reach the server and log in, in the order of [`ADDRESSES`].
pub const HOSTS: [&str; 3] = ["h1", "h2", "h3"];

/// A workflow that takes a literal value and a secret, works on the host, and returns what
/// it found there.
pub const ON_A_HOST: &str = r#"name: on_a_host
description: Works on a host.
arguments:
  MESSAGE: { description: any text }
  TOKEN: { description: a token, secret: true }
return_values:
  WHERE: { description: the address the run's shell was reached at }
  ECHOED: { description: "the message, as the host saw it" }
initial_state: look
states:
  look:
    action: { tool: run_command, params: { command: 'export WHERE="${SSH_CONNECTION#* * }"; export ECHOED="$MESSAGE"; echo "token $TOKEN"' } }
    transitions: [ { condition: success, next_state: wait } ]
  wait:
    action: { tool: await_output, params: { pattern: "token (\\S+)", since: all, timeout: 10 } }
"#;

/// The passphrase of the `passphrase` alias's key.
pub const PASSPHRASE: &str = "open-sesame-42";

/// How many bytes of sshd's log are kept for failure messages (the newest).
const LOG_LIMIT: usize = 256 * 1024;

/// A running sshd and the client config that reaches it; dropping it kills the server (and
/// every process serving a connection) and removes its directory.
#[derive(Debug)]
pub struct Sshd {
    // Declared before `dir`, so the server is killed before its files are removed.
    server: Server,
    port: u16,
    config: PathBuf,
    user: String,
    dir: tempfile::TempDir,
}

impl Sshd {
    /// Starts sshd on [`ADDRESSES`] at a free port and returns once it listens on all of them
    /// and `ssh h1 true` succeeds. Panics with sshd's log if it does not within
    /// [`LONG`], and with a hint to install openssh-server if sshd is not installed.
    pub fn start() -> Sshd {
        assert!(
            Path::new(SSHD).exists(),
            "{SSHD} is missing: install the OpenSSH server (Debian: apt-get install openssh-server) \
             and client (openssh-client) to run the tests of terminals on hosts"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        assert!(
            !path.to_string_lossy().contains(char::is_whitespace),
            "the fixture's directory {} has whitespace in its path, which ssh_command cannot carry",
            path.display()
        );
        if running_as_root() {
            privilege_separation_directory();
        }
        for key in ["host_key", "user_key", "wrong_host_key"] {
            generate_key(&path.join(key), "");
        }
        generate_key(&path.join("locked_key"), PASSPHRASE);
        let authorized: String = ["user_key.pub", "locked_key.pub"]
            .iter()
            .map(|k| std::fs::read_to_string(path.join(k)).unwrap())
            .collect();
        std::fs::write(path.join("authorized_keys"), authorized).unwrap();
        if running_as_root() {
            // sshd reads a user's authorized keys as that user: another account the tests
            // make ([`account_with_login_shell`]) must reach them. The private keys stay 0600.
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o711)).unwrap();
            std::fs::set_permissions(
                path.join("authorized_keys"),
                std::fs::Permissions::from_mode(0o644),
            )
            .unwrap();
        }
        let user = current_user();
        let config = path.join("ssh_config");
        // A port free on 127.0.0.2 may be taken on another address (another fixture's sshd):
        // sshd then fails, or serves only some of them, and the fixture starts over.
        for attempt in 1..=3 {
            let port = free_port(ADDRESSES[0]);
            write_configs(path, port, &user);
            let mut server = Server::spawn(&path.join("sshd_config"));
            match server.ready(port, &config) {
                Ready::Yes => {
                    return Sshd {
                        server,
                        port,
                        config,
                        user,
                        dir,
                    };
                }
                Ready::PortTaken if attempt < 3 => drop(server),
                Ready::PortTaken => {
                    panic!("sshd found its port taken three times:\n{}", server.log())
                }
            }
        }
        unreachable!("the last attempt returns or panics")
    }

    /// The value for `FLOWDECK_SSH_COMMAND`: `ssh -F <config>`.
    pub fn ssh_command(&self) -> String {
        format!("ssh -F {}", self.config.display())
    }

    /// The generated ssh client config, defining the aliases of this module's documentation.
    pub fn config(&self) -> &Path {
        &self.config
    }

    /// `ssh -F <config>` with stdin from /dev/null, for the caller to add options, a host and
    /// a command to.
    pub fn ssh(&self) -> Command {
        let mut command = Command::new("ssh");
        command.arg("-F").arg(&self.config).stdin(Stdio::null());
        command
    }

    /// The port sshd listens on, at each of [`ADDRESSES`].
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The user `h1`, `h2` and `h3` log in as: the one running the tests.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The fixture's directory: keys, configs and known_hosts files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// What sshd has logged so far (its newest part), for failure messages.
    pub fn log(&self) -> String {
        self.server.log()
    }
}

/// Runs `command` to its end with its output collected, for at most `deadline`; past it the
/// process is killed and the test fails with `what` and what it printed.
pub fn output_within(deadline: Duration, what: &str, command: &mut Command) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start {command:?}: {e}"));
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    // A test whose engine closes sessions reaps the zombies among this process's children
    // (flowdeck is their subreaper; term/processes.rs `reap_adopted`), so it may take this
    // one's status first: it did end, and what it printed tells the rest.
    let status = poll_within(deadline, what, || match child.try_wait() {
        Err(e) if e.raw_os_error() == Some(nix::libc::ECHILD) => {
            Some(std::os::unix::process::ExitStatusExt::from_raw(0))
        }
        waited => waited.unwrap(),
    });
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let stdout = stdout.join().unwrap();
    let stderr = stderr.join().unwrap();
    let Some(status) = status else {
        panic!(
            "timed out after {deadline:?} waiting for {what}; it printed:\n{}{}",
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        );
    };
    Output {
        status,
        stdout,
        stderr,
    }
}

/// Polls `check` until it returns `Some` or `deadline` passes (then `None`): a
/// [`wait_until`] whose caller handles the timeout itself, to say more about it.
fn poll_within<T>(
    deadline: Duration,
    what: &str,
    mut check: impl FnMut() -> Option<T>,
) -> Option<T> {
    let end = Instant::now() + deadline;
    // The outer deadline only bounds a `check` that itself hangs.
    wait_until(deadline * 2, what, || match check() {
        Some(value) => Some(Some(value)),
        None if Instant::now() >= end => Some(None),
        None => None,
    })
}

fn drain(mut from: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        bytes
    })
}

/// The sshd process and its log, collected from its stderr.
#[derive(Debug)]
struct Server {
    child: Child,
    log: Arc<Mutex<Vec<u8>>>,
}

enum Ready {
    Yes,
    /// Another process holds the port on one of the addresses.
    PortTaken,
}

impl Server {
    fn spawn(config: &Path) -> Server {
        let mut child = Command::new(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own process group, which the drop kills.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {SSHD}: {e}"));
        let log = Arc::new(Mutex::new(Vec::new()));
        collect_log(child.stderr.take().unwrap(), Arc::clone(&log));
        Server { child, log }
    }

    fn log(&self) -> String {
        String::from_utf8_lossy(&self.log.lock().unwrap()).into_owned()
    }

    fn port_taken(&self) -> bool {
        self.log().contains("Address already in use")
    }

    /// Waits until sshd listens on every address and `ssh h1 true` succeeds. sshd logs "Server
    /// listening on ADDRESS port PORT." once it listens there, and that it alone holds the port
    /// on each address: a port taken on one is only logged ("Address already in use"), and sshd
    /// serves the others.
    fn ready(&mut self, port: u16, config: &Path) -> Ready {
        let what = format!("sshd to listen at port {port}");
        let listening = poll_within(LONG, &what, || {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(Err(status)),
                // Reaped by an engine of this process (see `output_within`): it ended.
                Err(_) => return Some(Err(std::os::unix::process::ExitStatusExt::from_raw(0))),
                Ok(None) => {}
            }
            let log = self.log();
            if log.contains("Address already in use") {
                return Some(Ok(false));
            }
            let all = ADDRESSES.iter().all(|address| {
                log.contains(&format!("Server listening on {address} port {port}."))
            });
            all.then_some(Ok(true))
        });
        match listening {
            Some(Ok(true)) => {}
            Some(Ok(false)) => return Ready::PortTaken,
            Some(Err(_)) if self.port_taken() => return Ready::PortTaken,
            Some(Err(status)) => {
                panic!("sshd exited ({status}) before it listened:\n{}", self.log())
            }
            None => panic!(
                "timed out after {LONG:?} waiting for {what}; sshd logged:\n{}",
                self.log()
            ),
        }
        let mut ssh = Command::new("ssh");
        ssh.arg("-F")
            .arg(config)
            .args(["-o", "BatchMode=yes", HOSTS[0], "true"])
            .stdin(Stdio::null());
        let login = output_within(LONG, "`ssh h1 true` to the fixture's sshd", &mut ssh);
        assert!(
            login.status.success(),
            "sshd listens but `ssh h1 true` fails ({}): {}\nsshd logged:\n{}",
            login.status,
            String::from_utf8_lossy(&login.stderr).trim(),
            self.log()
        );
        Ready::Yes
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let pid = i32::try_from(self.child.id()).unwrap();
        // The processes serving connections start sessions of their own, out of the group's
        // reach: found before the listener dies and they lose it as their ancestor.
        let serving = descendants(pid);
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
        for pid in serving {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.wait();
    }
}

/// Reads sshd's stderr into `log` until it closes, keeping the newest [`LOG_LIMIT`] bytes: read
/// all along so that sshd never blocks on a full pipe.
fn collect_log(mut stderr: ChildStderr, log: Arc<Mutex<Vec<u8>>>) {
    std::thread::spawn(move || {
        let mut buffer = [0u8; 8192];
        while let Ok(n @ 1..) = stderr.read(&mut buffer) {
            let mut log = log.lock().unwrap();
            log.extend_from_slice(&buffer[..n]);
            if log.len() > LOG_LIMIT {
                let excess = log.len() - LOG_LIMIT;
                log.drain(..excess);
            }
        }
    });
}

/// Every live process descending from `root`, found through `/proc`.
fn descendants(root: i32) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        // `pid (comm) state ppid ...`, where comm may hold anything, spaces and parentheses too.
        let parent = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                let rest = stat.get(stat.rfind(')')? + 2..)?;
                rest.split(' ').nth(1)?.parse::<i32>().ok()
            });
        if let Some(parent) = parent {
            children.entry(parent).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut next = vec![root];
    while let Some(pid) = next.pop() {
        for &child in children.get(&pid).into_iter().flatten() {
            found.push(child);
            next.push(child);
        }
    }
    found
}

/// Makes sure this machine has an account `name` whose login shell is `shell`, which the
/// fixture's key logs into (`NAME@h1`: every account shares the fixture's authorized keys).
/// Made with `useradd` the first time and kept (for the next run, and for a test process
/// running beside this one), its shell set again when it differs; it has no password anyone
/// could type (`*`, which sshd does not take for a locked account). `Err` with why when
/// the tests do not run as root, who alone can make accounts; a missing shell or a
/// failing `useradd` fails the test.
pub fn account_with_login_shell(name: &str, shell: &str) -> Result<(), String> {
    if !running_as_root() {
        return Err(format!(
            "making the account {name} needs root, and the tests run as {}",
            current_user()
        ));
    }
    assert!(
        Path::new(shell).exists(),
        "{shell} is missing: install it (Debian: apt-get install {}) to run this test",
        Path::new(shell)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    let exists = |name: &str| {
        output_within(LONG, "id", Command::new("id").arg("-u").arg(name))
            .status
            .success()
    };
    if !exists(name) {
        let made = output_within(
            LONG,
            &format!("useradd {name}"),
            Command::new("useradd")
                .args(["-m", "-p", "*", "-s", shell])
                .arg(name),
        );
        // Another test process may have made it at the same moment.
        assert!(
            made.status.success() || exists(name),
            "useradd {name} failed ({}): {}",
            made.status,
            String::from_utf8_lossy(&made.stderr).trim()
        );
    }
    let entry = output_within(
        LONG,
        "getent passwd",
        Command::new("getent").arg("passwd").arg(name),
    );
    let entry = String::from_utf8_lossy(&entry.stdout).into_owned();
    if entry.trim_end().rsplit(':').next() != Some(shell) {
        let set = output_within(
            LONG,
            &format!("usermod {name}"),
            Command::new("usermod").args(["-s", shell]).arg(name),
        );
        assert!(
            set.status.success(),
            "usermod {name} failed ({}): {}",
            set.status,
            String::from_utf8_lossy(&set.stderr).trim()
        );
    }
    Ok(())
}

fn running_as_root() -> bool {
    // `/proc/self` belongs to the process's effective user.
    std::fs::metadata("/proc/self").unwrap().uid() == 0
}

/// sshd run as root refuses to start without its privilege-separation directory, which a
/// system that never ran the ssh service may lack.
fn privilege_separation_directory() {
    let dir = Path::new("/run/sshd");
    if !dir.is_dir() {
        // Another test's fixture may create it at the same moment.
        if let Err(e) = std::fs::create_dir_all(dir) {
            assert!(dir.is_dir(), "cannot create {}: {e}", dir.display());
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// An ed25519 key pair without a passphrase: `path` and `path.pub`.
fn generate_key(path: &Path, passphrase: &str) {
    let mut keygen = Command::new("ssh-keygen");
    keygen
        .args(["-q", "-t", "ed25519", "-N", passphrase, "-C", "", "-f"])
        .arg(path)
        .stdin(Stdio::null());
    let what = format!("ssh-keygen to write {}", path.display());
    let output = output_within(LONG, &what, &mut keygen);
    assert!(
        output.status.success(),
        "{what} failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The name of the user running the tests, whom `h1`–`h3` log in as.
fn current_user() -> String {
    let output = output_within(LONG, "id -un", Command::new("id").arg("-un"));
    let name = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if output.status.success() && !name.is_empty() {
        return name;
    }
    std::env::var("USER")
        .ok()
        .filter(|user| !user.is_empty())
        .expect("neither `id -un` nor $USER names the current user")
}

/// A port nothing listens on at `address` right now (a race with other processes, accepted:
/// a taken port makes the fixture start over).
fn free_port(address: &str) -> u16 {
    TcpListener::bind((address, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Writes sshd's config, the client's config and the known_hosts files for `port`.
fn write_configs(dir: &Path, port: u16, user: &str) {
    let file = |name: &str| dir.join(name).display().to_string();
    let mut sshd = format!(
        "Port {port}\n\
         {listen}\
         HostKey {host_key}\n\
         PidFile {pid}\n\
         AuthorizedKeysFile {authorized}\n\
         AuthorizedPrincipalsFile none\n\
         StrictModes no\n\
         UsePAM no\n\
         PermitRootLogin yes\n\
         PubkeyAuthentication yes\n\
         PasswordAuthentication yes\n\
         PermitEmptyPasswords no\n\
         KbdInteractiveAuthentication no\n\
         HostbasedAuthentication no\n\
         IgnoreRhosts yes\n\
         PermitUserRC no\n\
         PermitUserEnvironment no\n\
         UseDNS no\n\
         SetEnv HISTFILE=/dev/null\n\
         PrintMotd no\n\
         PrintLastLog no\n\
         X11Forwarding no\n\
         LoginGraceTime 30\n\
         MaxStartups 100:30:200\n\
         PerSourceMaxStartups none\n\
         MaxSessions 100\n\
         MaxAuthTries 10\n\
         LogLevel VERBOSE\n",
        listen = ADDRESSES
            .iter()
            .map(|address| format!("ListenAddress {address}\n"))
            .collect::<String>(),
        host_key = file("host_key"),
        pid = file("sshd.pid"),
        authorized = file("authorized_keys"),
    );
    // Newer OpenSSH (9.8 on) penalizes addresses whose logins fail, by refusing them for a
    // while: that would turn one test's `password` or `badkey` into another's failure.
    if penalties_option_known(dir, &sshd) {
        sshd.push_str("PerSourcePenalties no\n");
    }
    std::fs::write(dir.join("sshd_config"), sshd).unwrap();

    let key_of = |name: &str| {
        let public = std::fs::read_to_string(dir.join(format!("{name}.pub"))).unwrap();
        public.trim().to_owned()
    };
    let known = |key: &str| {
        ADDRESSES
            .iter()
            .map(|address| format!("[{address}]:{port} {key}\n"))
            .collect::<String>()
    };
    std::fs::write(dir.join("known_hosts"), known(&key_of("host_key"))).unwrap();
    std::fs::write(
        dir.join("wrong_known_hosts"),
        known(&key_of("wrong_host_key")),
    )
    .unwrap();

    let down_port = free_port("127.0.0.1");
    let client = format!(
        "Host h1\n  HostName {h1}\n\
         Host h2\n  HostName {h2}\n\
         Host h3\n  HostName {h3}\n\
         Host h1 h2 h3 badkey down\n  IdentityFile {user_key}\n  PreferredAuthentications publickey\n\
         Host down\n  HostName 127.0.0.1\n  Port {down_port}\n\
         Host badkey\n  HostName {h1}\n  UserKnownHostsFile {wrong_known_hosts}\n\
         Host password\n  HostName {h2}\n  PubkeyAuthentication no\n  \
           PreferredAuthentications keyboard-interactive,password\n  NumberOfPasswordPrompts 1\n\
         Host passphrase\n  HostName {h3}\n  IdentityFile {locked_key}\n  \
           PreferredAuthentications publickey\n  NumberOfPasswordPrompts 1\n\
         Host *\n  Port {port}\n  User {user}\n  IdentitiesOnly yes\n  IdentityAgent none\n  \
           UserKnownHostsFile {known_hosts}\n  GlobalKnownHostsFile /dev/null\n  \
           StrictHostKeyChecking yes\n  UpdateHostKeys no\n  CheckHostIP no\n  \
           HashKnownHosts no\n  VerifyHostKeyDNS no\n  HostbasedAuthentication no\n  \
           AddKeysToAgent no\n  ForwardAgent no\n  ForwardX11 no\n  ControlMaster no\n  \
           ControlPath none\n  PermitLocalCommand no\n  LogLevel ERROR\n  ConnectTimeout 5\n  \
           ServerAliveInterval 2\n  ServerAliveCountMax 3\n",
        h1 = ADDRESSES[0],
        h2 = ADDRESSES[1],
        h3 = ADDRESSES[2],
        user_key = file("user_key"),
        locked_key = file("locked_key"),
        wrong_known_hosts = file("wrong_known_hosts"),
        known_hosts = file("known_hosts"),
    );
    std::fs::write(dir.join("ssh_config"), client).unwrap();
}

/// Whether the installed sshd knows `PerSourcePenalties` (OpenSSH 9.8 and later), asked once
/// by checking `config` with it added (`sshd -t`), which checks the rest of the config too.
fn penalties_option_known(dir: &Path, config: &str) -> bool {
    static KNOWN: OnceLock<bool> = OnceLock::new();
    *KNOWN.get_or_init(|| {
        let probe = dir.join("sshd_config_probe");
        std::fs::write(&probe, format!("{config}PerSourcePenalties no\n")).unwrap();
        let mut check = Command::new(SSHD);
        check.arg("-t").arg("-f").arg(&probe).stdin(Stdio::null());
        let output = output_within(LONG, "`sshd -t` to check its config", &mut check);
        let _ = std::fs::remove_file(&probe);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if output.status.success() {
            true
        } else if stderr.contains("PerSourcePenalties") {
            false
        } else {
            panic!(
                "sshd rejects the fixture's config ({}):\n{stderr}",
                output.status
            )
        }
    })
}
