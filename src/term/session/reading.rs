//! Reading what a session shows and has shown: its screen, its history, searches, mirrors.

use super::Session;
use super::info::Content;
use crate::term::error::TermError;
use crate::term::hush::{self};
use crate::term::screen::ScreenSnapshot;
use crate::term::search::{self, Cursor, Found, Order, Owner, Query};
use crate::term::transcript::{render_line, render_text};

impl Session {
    /// Reads the screen, the history or part of it, as plain text.
    pub fn content(&self, what: Content) -> String {
        let mut live = self.shared.lock();
        match what {
            Content::Screen => live.screen.text(),
            Content::History => {
                let t = &live.transcript;
                render_text(t.since(t.start()).trim_end_matches('\n'))
            }
            Content::Tail(n) => {
                let lines: Vec<String> = live.transcript.last_lines(n).map(render_line).collect();
                lines.join("\n")
            }
            Content::SinceInput(by) => render_text(
                live.transcript
                    .since(live.inputs.last(by.as_deref()).end_or_start())
                    .trim_end_matches('\n'),
            ),
        }
    }

    /// Searches the history and, while a full-screen program is in front, its screen
    /// (search.rs). The history is read a slice per hold of the lock, so that the reader is
    /// never kept waiting for a whole search.
    pub fn search(&self, query: &Query) -> Found {
        let screen = search::screen_rows(self.shared.lock().screen.vt());
        search::search(query, &self.search_owner(), screen, |read| {
            read(&self.shared.lock().transcript)
        })
    }

    /// Reads a cursor a page of this session's searches gave, for a search in `order`; one
    /// that another session (or an earlier session of this id) gave is refused.
    pub fn search_cursor(&self, text: &str, order: Order) -> Result<Cursor, TermError> {
        Cursor::parse(text, order, &self.search_owner())
    }

    fn search_owner(&self) -> Owner {
        Owner {
            session: self.id.clone(),
            instance: self.instance.clone(),
        }
    }

    /// The screen with colours and attributes.
    pub fn snapshot(&self) -> ScreenSnapshot {
        self.shared.lock().screen.snapshot()
    }

    /// Runs `f` on the live vt100 screen (for drawing without copying it).
    pub fn with_screen<R>(&self, f: impl FnOnce(&vt100::Screen) -> R) -> R {
        f(self.shared.lock().screen.vt())
    }

    /// A copy of the screen as it is now, for a front end to draw.
    pub fn mirror(&self) -> crate::term::mirror::Mirror {
        self.with_screen(crate::term::mirror::Mirror::of)
    }

    /// Global stream offset of the newest output (for [`Since::After`](crate::term::Since::After)).
    pub fn output_end(&self) -> u64 {
        self.shared.lock().transcript.end()
    }

    /// The plain-text output after a stream offset, raw (carriage returns kept).
    pub fn output_since(&self, offset: u64) -> String {
        self.shared.lock().transcript.since(offset).to_string()
    }

    /// A shown command's output from `offset` to now, as `run_command` returns it (hush.rs).
    pub(in crate::term) fn command_output(&self, offset: u64) -> String {
        let live = self.shared.lock();
        hush::output_between(&live.transcript, offset, live.transcript.end())
    }

    /// What was done by hand in this shell session since it opened or since its last mark
    /// (deeds.rs): `None` when it is no shell's session.
    pub fn deeds(&self) -> Option<Vec<crate::term::deeds::Deed>> {
        let mut live = self.shared.lock();
        let live = &mut *live;
        let deeds = live.deeds.as_ref()?;
        let ended = live.exit.is_some();
        Some(deeds.list(live.screen.vt(), ended))
    }

    /// Forgets what was done so far: the next draft starts here. False when it is no shell's
    /// session.
    pub fn mark_deeds(&self) -> bool {
        match self.shared.lock().deeds.as_mut() {
            Some(deeds) => {
                deeds.mark();
                true
            }
            None => false,
        }
    }

    /// Values the session's deeds never keep (a run's secrets, which its steps may type).
    pub fn learn_secrets(&self, secrets: &[String]) {
        if let Some(deeds) = self.shared.lock().deeds.as_mut() {
            deeds.learn_secrets(secrets);
        }
    }

    /// A command flowdeck ran in the shell ended (shell/): a deed like one typed by hand.
    pub(in crate::term) fn note_ran(&self, line: &str, exit: Option<i32>, seconds: f64) {
        if let Some(deeds) = self.shared.lock().deeds.as_mut() {
            deeds.ran(line, exit, seconds);
        }
    }
}
