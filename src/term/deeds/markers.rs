//! The markers a local bash prints for the session's deeds, found in its output however it
//! is cut: *start* (`PS0`, once a whole command was read, before it runs) and *status*
//! (`PROMPT_COMMAND`, with `$?`, before each prompt). OSC sequences no terminal draws, with
//! the session's nonce.

/// A marker found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Start,
    Status(i32),
}

#[derive(Debug)]
pub struct Markers {
    start: Vec<u8>,
    status: Vec<u8>,
    /// The end of the last chunk, when it could begin a marker.
    carry: Vec<u8>,
}

/// Longer than any status's digits: a marker not ended by then is none of flowdeck's.
const STATUS_DIGITS: usize = 12;

impl Markers {
    pub fn new(nonce: &str) -> Self {
        let osc = super::super::remote::OSC;
        Markers {
            start: format!("\x1b]{osc};flowdeck-start;{nonce}\x07").into_bytes(),
            status: format!("\x1b]{osc};flowdeck-status;{nonce};").into_bytes(),
            carry: Vec::new(),
        }
    }

    /// The markers in a chunk of output, in order.
    pub fn scan(&mut self, chunk: &[u8]) -> Vec<Marker> {
        let mut found = Vec::new();
        if self.carry.is_empty() && !chunk.contains(&0x1b) {
            return found;
        }
        let mut data = std::mem::take(&mut self.carry);
        data.extend_from_slice(chunk);
        let mut at = 0;
        while let Some(start) = find(&data[at..], b"\x1b]").map(|i| at + i) {
            let rest = &data[start..];
            if rest.starts_with(&self.start) {
                found.push(Marker::Start);
                at = start + self.start.len();
            } else if let Some(digits) = rest.strip_prefix(self.status.as_slice()) {
                match digits.iter().position(|b| *b == 0x07) {
                    Some(end) => {
                        if let Some(code) = std::str::from_utf8(&digits[..end])
                            .ok()
                            .and_then(|s| s.parse::<i32>().ok())
                        {
                            found.push(Marker::Status(code));
                        }
                        at = start + self.status.len() + end + 1;
                    }
                    None if digits.len() < STATUS_DIGITS => {
                        self.carry = rest.to_vec();
                        return found;
                    }
                    None => at = start + 2,
                }
            } else if self.start.starts_with(rest) || self.status.starts_with(rest) {
                // Cut by the chunk's end: kept for the next one.
                self.carry = rest.to_vec();
                return found;
            } else {
                at = start + 2;
            }
        }
        if data.last() == Some(&0x1b) {
            self.carry = vec![0x1b];
        }
        found
    }

    /// bash's `PS0`: the start marker (its prompt decodes `\e`), before `inherited`.
    pub fn ps0(&self, inherited: Option<&str>) -> String {
        let marker = String::from_utf8_lossy(&self.start)
            .replace('\x1b', "\\e")
            .replace('\x07', "\\a");
        format!("{marker}{}", inherited.unwrap_or_default())
    }

    /// bash's `PROMPT_COMMAND` that prints the status marker before each prompt, followed by
    /// `inherited`. bash keeps `$?` for its prompt across it; what follows it gets `$?` back
    /// too. It takes itself and `PS0` out of the environment at the first prompt, so that a
    /// shell started inside (another bash, a `nix-shell`) prints no marker of this one's.
    pub fn prompt_command(&self, inherited: Option<&str>) -> String {
        let marker = String::from_utf8_lossy(&self.status).replace('\x1b', "\\033");
        let print = format!("printf '{marker}%s\\007' \"$__flowdeck_status\"");
        let own =
            format!("__flowdeck_status=$?; export -n PROMPT_COMMAND PS0 2>/dev/null; {print}");
        match inherited.filter(|c| !c.trim().is_empty()) {
            None => own,
            Some(theirs) => format!("{own}; (exit $__flowdeck_status); {theirs}"),
        }
    }
}

impl Markers {
    /// zsh's hooks: `preexec` prints the start marker, a first `precmd` the status with
    /// `$?`, which it gives back to the ones after it.
    pub fn zsh_hooks(&self) -> String {
        let start = String::from_utf8_lossy(&self.start)
            .replace('\x1b', "\\033")
            .replace('\x07', "\\007");
        let status = String::from_utf8_lossy(&self.status).replace('\x1b', "\\033");
        format!(
            "__flowdeck_precmd() {{ local s=$?; printf '{status}%s\\007' \"$s\"; return $s; }}\n\
             __flowdeck_preexec() {{ printf '{start}'; }}\n\
             precmd_functions=(__flowdeck_precmd $precmd_functions)\n\
             preexec_functions=($preexec_functions __flowdeck_preexec)\n"
        )
    }
}

pub(super) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_found_in_order_however_the_output_is_cut() {
        let mut stream = b"$ ls\r\n".to_vec();
        let markers = Markers::new("n0");
        stream.extend_from_slice(&markers.start);
        stream.extend_from_slice(b"a b\r\n");
        stream.extend_from_slice(&markers.status);
        stream.extend_from_slice(b"127\x07$ ");
        for cut in 0..stream.len() {
            let mut m = Markers::new("n0");
            let mut found = m.scan(&stream[..cut]);
            found.extend(m.scan(&stream[cut..]));
            assert_eq!(found, [Marker::Start, Marker::Status(127)], "cut at {cut}");
        }
        let mut m = Markers::new("n0");
        assert!(
            m.scan(b"\x1b]7770;flowdeck-status;other;3\x07").is_empty(),
            "another session's"
        );
    }

    #[test]
    fn the_prompt_command_prints_the_status_and_gives_it_back_to_what_follows() {
        let markers = Markers::new("n0");
        let own = markers.prompt_command(None);
        assert!(own.starts_with("__flowdeck_status=$?; export -n PROMPT_COMMAND PS0"));
        assert!(
            own.ends_with("printf '\\033]7770;flowdeck-status;n0;%s\\007' \"$__flowdeck_status\"")
        );
        let chained = markers.prompt_command(Some("history -a"));
        assert!(chained.ends_with("; (exit $__flowdeck_status); history -a"));
        assert_eq!(
            markers.ps0(Some("[ps0]")),
            "\\e]7770;flowdeck-start;n0\\a[ps0]"
        );
    }
}
