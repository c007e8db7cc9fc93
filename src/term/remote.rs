//! A shell that flowdeck reaches through another program: `ssh HOST`, `docker exec -it`,
//! `kubectl exec -it`, `sudo -i`. The PTY and the screen stay on this side; the shell, and
//! whatever it runs, are on the far side, where /proc cannot look. So the far shell tells
//! flowdeck itself what /proc tells it of a local one, in the byte stream, with OSC
//! sequences that a terminal does not draw (like the semantic prompts of OSC 133) and that
//! carry a nonce of the session's:
//!
//! - **ready**: the connect command is given a last argument, a tiny shell command run on
//!   the far side once it is reached (authenticated, the container entered), which says so
//!   and then becomes the far side's login shell. Until it says so, nothing is typed:
//!   typed text would answer ssh's own questions (a password, a host key);
//! - **prompt**: once ready, one hidden framed line (shell/) appends the prompt marker to
//!   the shell's prompt (`PS1`, written for bash, zsh or a plain POSIX shell), with the last
//!   command's exit status (`$?`, `%?`). From then on, the shell is at its prompt, reading
//!   its next line, from the moment a prompt marker arrives until a line is typed; the
//!   statuses are told to the session's deeds (deeds/).
//!
//! Everything else (markers around framed commands, exit statuses, echo recognition, waits)
//! is the byte stream's already, and works through any far shell as it does locally. A
//! prompt that the shell's own configuration rebuilds each time (a `PROMPT_COMMAND` that
//! sets `PS1`) loses the marker: the session then cannot tell when the shell is at its
//! prompt, and acts as where /proc cannot tell locally (it assumes it is).

use std::time::Duration;

/// How long a far program's output must pause before typed input goes to it while its
/// shell is not at its prompt. Nothing on this side can see whether the far program reads;
/// a pause is what a person waits for too. It keeps a line typed right after a command's
/// last output from reaching the terminal before the next prompt does (it would be echoed
/// twice), and costs an interactive program at most this much after it last printed.
pub const FAR_SETTLE: Duration = Duration::from_millis(50);

/// The far terminal's interrupt, quit and suspend characters (its defaults): they never
/// wait. The local PTY is raw under ssh, so its own settings say nothing of them.
pub const FAR_SIGNALS: [u8; 3] = [0x03, 0x1c, 0x1a];

/// The OSC number of flowdeck's markers (private: no terminal gives it a meaning).
pub(crate) const OSC: &str = "7770";

/// The far side of a session, as its markers tell it.
#[derive(Debug)]
pub struct Remote {
    /// Where the session is, for messages (`h1`, `docker:app`).
    pub place: String,
    /// How long to wait for the far side to be reached.
    pub patience: Duration,
    /// Someone can answer questions (a password) in the pane.
    pub person: bool,
    nonce: String,
    ready: Vec<u8>,
    prompt: Vec<u8>,
    /// The end of the last chunk, when it could be the start of a marker.
    carry: Vec<u8>,
    /// The far side said it was reached.
    pub is_ready: bool,
    /// Prompt markers seen.
    pub prompts: u64,
    /// A prompt marker came after the last line typed: the shell reads its next line.
    pub at_prompt: bool,
    /// The exit statuses the prompt markers carried, not yet taken.
    statuses: Vec<i32>,
}

/// Login shells a far session keeps as its shell (a `case` pattern of their names): those
/// that read the POSIX prompt setup and framed lines. Any other (fish, nu, tcsh, csh, xonsh,
/// elvish) is not started; bash (or sh) is, in its place.
const POSIX_SHELLS: &str = "sh|bash|zsh|dash|ash|ksh|ksh93|mksh|pdksh|yash|posh";

/// More than a status's digits: a prompt marker not ended by then is none of flowdeck's.
const STATUS_MAX: usize = 12;

impl Remote {
    pub fn new(place: String, patience: Duration, person: bool) -> Self {
        let nonce = crate::term::nonce::nonce();
        Remote {
            place,
            patience,
            person,
            ready: marker("ready", &nonce),
            // Then `;STATUS` where the shell expands it, and BEL.
            prompt: format!("\x1b]{OSC};flowdeck-prompt;{nonce}").into_bytes(),
            nonce,
            carry: Vec::new(),
            is_ready: false,
            prompts: 0,
            at_prompt: false,
            statuses: Vec::new(),
        }
    }

    /// The connect command's last argument: run by the far side's login shell once it is
    /// reached, it says so and becomes the session's shell there.
    ///
    /// sshd hands it to the account's login shell, whatever that is, and fish, nu, tcsh or
    /// csh cannot parse a POSIX script (`${`, `"$s"`): so it is one single-quoted argument to
    /// `exec sh -c`, which each of them reads the same way (single quotes are literal in all
    /// of them, the script holds none, nor a `!` that csh would expand). Under sh it says it
    /// was reached, then becomes the login shell when that is a POSIX shell, which the prompt
    /// setup and the framed lines are written for; any other login shell gives way to bash
    /// (or sh where there is none), started as a login shell.
    pub fn bootstrap(&self) -> String {
        format!("exec sh -c '{}'", self.far_start())
    }

    /// The sh script of [`Remote::bootstrap`]: no single quote, no `!`, one line.
    fn far_start(&self) -> String {
        format!(
            "printf \"\\033]{OSC};flowdeck-ready;{nonce}\\007\"; s=${{SHELL:-/bin/sh}}; \
             case ${{s##*/}} in {POSIX_SHELLS}) ;; *) s=$(command -v bash) || s=/bin/sh;; esac; \
             exec \"$s\" -l",
            nonce = self.nonce
        )
    }

    /// The line that appends the prompt marker to the far shell's prompt.
    pub fn prompt_setup(&self) -> String {
        let nonce = &self.nonce;
        // bash: `\[ \]` around what takes no room, and its prompt decodes `\033`; zsh:
        // `%{ %}`; any other shell: the bytes themselves (no line editor to mislead).
        // (The nonce is hex: quoted as it is.)
        let bash = format!("'\\[\\033]{OSC};flowdeck-prompt;{nonce};$?\\007\\]'");
        let begin = format!("$(printf '\\033]{OSC};flowdeck-prompt;{nonce};')");
        let end = "$(printf '\\007')";
        format!(
            "if [ -n \"${{BASH_VERSION:-}}\" ]; then PS1=\"$PS1\"{bash}; \
             elif [ -n \"${{ZSH_VERSION:-}}\" ]; then PS1=\"$PS1%{{{begin}%?{end}%}}\"; \
             else PS1=\"$PS1{begin}\\$?{end}\"; fi"
        )
    }

    /// Looks for the markers in a chunk of output (a marker may be cut between chunks).
    pub fn scan(&mut self, chunk: &[u8]) {
        let mut data = std::mem::take(&mut self.carry);
        data.extend_from_slice(chunk);
        let mut at = 0;
        while let Some(start) = find(&data[at..], b"\x1b]").map(|i| at + i) {
            let rest = &data[start..];
            if let Some(tail) = rest.strip_prefix(self.prompt.as_slice()) {
                match tail.iter().position(|b| *b == 0x07) {
                    Some(end) if end <= STATUS_MAX => {
                        self.prompts += 1;
                        self.at_prompt = true;
                        // `;STATUS` where the shell expanded it.
                        if let Some(status) = tail[..end]
                            .strip_prefix(b";")
                            .and_then(|d| std::str::from_utf8(d).ok())
                            .and_then(|d| d.parse::<i32>().ok())
                        {
                            self.statuses.push(status);
                        }
                        at = start + self.prompt.len() + end + 1;
                    }
                    None if tail.len() <= STATUS_MAX => {
                        self.carry = rest.to_vec();
                        return;
                    }
                    _ => at = start + 2,
                }
            } else if rest.starts_with(&self.ready) {
                self.is_ready = true;
                at = start + self.ready.len();
            } else if self.prompt.starts_with(rest) || self.ready.starts_with(rest) {
                // Cut by the chunk's end: kept for the next one.
                self.carry = rest.to_vec();
                return;
            } else {
                at = start + 2;
            }
        }
        // A lone ESC at the very end may start a marker.
        if data.last() == Some(&0x1b) {
            self.carry = vec![0x1b];
        }
    }

    /// Whether typed input is read now: not before the far side is reached (it would answer
    /// ssh's questions); at the shell's prompt; and, where the prompt carries no marker (not
    /// set up yet, or rebuilt by the shell's configuration), as if it were.
    pub fn reads(&self) -> bool {
        self.is_ready && (self.prompts == 0 || self.at_prompt)
    }

    /// Whether typed input goes now, the output having paused for `quiet`: before the far
    /// side is reached (a question of the connect command waits for its answer), at the
    /// shell's prompt or where the prompt carries no marker, and to a far program once its
    /// output paused for [`FAR_SETTLE`].
    pub fn listens(&self, quiet: Duration) -> bool {
        !self.is_ready || self.reads() || quiet >= FAR_SETTLE
    }

    /// What keeps the far shell from its prompt, if anything does: the connection still
    /// being made, or a program it runs.
    pub fn busy(&self) -> Option<&'static str> {
        if !self.is_ready {
            Some("the connection, not made yet,")
        } else if self.prompts > 0 && !self.at_prompt {
            Some("a program")
        } else {
            None
        }
    }

    /// The exit statuses the prompt markers carried since they were last taken.
    pub fn take_statuses(&mut self) -> Vec<i32> {
        std::mem::take(&mut self.statuses)
    }

    /// A line was typed: the shell reads no more until its next prompt.
    pub fn line_typed(&mut self) {
        self.at_prompt = false;
    }
}

fn marker(kind: &str, nonce: &str) -> Vec<u8> {
    format!("\x1b]{OSC};flowdeck-{kind};{nonce}\x07").into_bytes()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_found_whole_or_cut_anywhere() {
        let mut remote = Remote::new("h1".into(), Duration::from_secs(1), false);
        let ready = remote.ready.clone();
        let prompt = closed(&remote.prompt, ";127");
        let mut stream = b"motd\r\n".to_vec();
        stream.extend_from_slice(&ready);
        stream.extend_from_slice(b"\x1b[0m$ ");
        stream.extend_from_slice(&prompt);
        for cut in 0..stream.len() {
            let mut r = Remote::new("h1".into(), Duration::from_secs(1), false);
            r.ready.clone_from(&ready);
            r.prompt.clone_from(&remote.prompt);
            r.scan(&stream[..cut]);
            r.scan(&stream[cut..]);
            assert!(r.is_ready, "cut at {cut}");
            assert_eq!(r.prompts, 1, "cut at {cut}");
            assert!(r.at_prompt);
            assert_eq!(r.take_statuses(), [127], "cut at {cut}");
        }
        remote.scan(b"\x1b]7770;flowdeck-prompt;not-the-nonce\x07");
        assert_eq!(remote.prompts, 0, "another session's marker");
    }

    /// A prompt marker as a shell prints it: `rest` (`;STATUS`, or nothing where the shell
    /// did not expand it), then BEL.
    fn closed(prompt: &[u8], rest: &str) -> Vec<u8> {
        let mut marker = prompt.to_vec();
        marker.extend_from_slice(rest.as_bytes());
        marker.push(0x07);
        marker
    }

    /// Every login shell must read the bootstrap as one word for `sh -c`: a single quote
    /// inside would end it, a `!` is history expansion in csh and tcsh, and a line break
    /// ends a csh command.
    #[test]
    fn the_bootstrap_is_one_single_quoted_sh_script() {
        let remote = Remote::new("h1".into(), Duration::from_secs(1), false);
        let bootstrap = remote.bootstrap();
        let script = bootstrap
            .strip_prefix("exec sh -c '")
            .and_then(|rest| rest.strip_suffix('\''))
            .unwrap_or_else(|| panic!("not `exec sh -c '…'`: {bootstrap}"));
        assert!(!script.contains(['\'', '!', '\n', '\r']), "{script}");
        assert!(script.contains(&remote.nonce), "{script}");
    }

    #[test]
    fn a_typed_line_leaves_the_prompt_until_the_next() {
        let mut remote = Remote::new("h1".into(), Duration::from_secs(1), false);
        let prompt = closed(&remote.prompt, "");
        remote.scan(&prompt);
        assert!(remote.at_prompt);
        remote.line_typed();
        assert!(!remote.at_prompt);
        remote.scan(b"output\r\n");
        assert!(!remote.at_prompt);
        remote.scan(&prompt);
        assert!(remote.at_prompt);
    }

    #[test]
    fn input_goes_to_a_far_program_once_its_output_paused_and_to_the_shell_at_its_prompt() {
        let mut remote = Remote::new("h1".into(), Duration::from_secs(1), true);
        let ready = remote.ready.clone();
        let prompt = closed(&remote.prompt, ";0");
        let now = Duration::ZERO;
        assert!(remote.listens(now), "ssh's own questions are answered");
        remote.scan(&ready);
        assert!(
            remote.listens(now),
            "no prompt marker yet: as if at the prompt"
        );
        remote.scan(&prompt);
        remote.line_typed();
        assert!(!remote.listens(now), "the command prints: not yet");
        assert!(!remote.listens(FAR_SETTLE / 2));
        assert!(remote.listens(FAR_SETTLE), "its output paused");
        remote.scan(&prompt);
        assert!(remote.listens(now), "back at the prompt");
    }
}
