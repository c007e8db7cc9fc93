use super::*;
use crate::term::recording::cast::Format;

fn header() -> Header {
    Header {
        format: Format::V3,
        width: 20,
        height: 4,
        timestamp: None,
        title: None,
    }
}

fn out(t: f64, text: &str) -> CastEvent {
    CastEvent::Output(t, text.into())
}

fn mark(t: f64, name: &str) -> CastEvent {
    CastEvent::Marker(t, name.into())
}

/// Three states, each printing a line, one second apart; `clear` clears the screen at 2.5 s.
fn timeline() -> Timeline {
    Timeline::new(
        header(),
        vec![
            mark(0.0, "one"),
            out(0.5, "first\r\n"),
            mark(1.0, "two"),
            out(1.5, "sec\x1b[1mo\x1b[0mnd\r\n"),
            out(2.5, "\x1b[2J\x1b[Hclear"),
            mark(3.0, "three"),
            out(3.5, "third\r\n"),
        ],
    )
}

fn text(player: &mut Player) -> String {
    player.screen().contents()
}

#[test]
fn markers_name_the_state_played_and_lead_to_the_next_and_previous() {
    let mut player = Player::new(timeline(), 1.0, None);
    assert_eq!(player.state(), None);
    assert!(player.next_state());
    assert_eq!((player.state(), player.time()), (Some("one"), 0.0));
    assert!(player.next_state());
    assert_eq!((player.state(), player.time()), (Some("two"), 1.0));
    assert_eq!(text(&mut player), "first");
    // Inside "two": back to its start; at its start: to the one before.
    player.step();
    player.previous_state();
    assert_eq!(player.state(), Some("two"));
    player.previous_state();
    assert_eq!(player.state(), Some("one"));
    assert!(player.go_to_state("three"));
    assert!(!player.next_state());
    assert!(!player.go_to_state("four"));
}

#[test]
fn going_back_draws_the_screen_again_as_it_was_then() {
    let mut player = Player::new(timeline(), 1.0, None);
    player.seek(10.0);
    assert_eq!(player.time(), 3.5);
    assert_eq!(text(&mut player), "clearthird");
    // Before the clear: both lines, as the terminal showed them.
    player.skip(-1.5);
    assert_eq!(player.time(), 2.0);
    assert_eq!(text(&mut player), "first\nsecond");
    assert_eq!(player.state(), Some("two"));
    player.skip(-5.0);
    assert_eq!((player.time(), text(&mut player).as_str()), (0.0, ""));
}

#[test]
fn search_finds_printed_text_across_sequences_and_goes_on_from_there() {
    let mut player = Player::new(timeline(), 1.0, None);
    assert!(player.search("second"));
    assert_eq!(player.time(), 1.5);
    assert_eq!(player.state(), Some("two"));
    // Not again further on; any case unless the text has a capital.
    assert!(!player.search("second"));
    assert!(!player.search("THIRD"));
    assert!(player.search("third"));
    assert_eq!(player.state(), Some("three"));
}

#[test]
fn forward_plays_what_is_due_at_its_speed_with_idle_time_capped() {
    let events = vec![out(0.5, "a"), out(100.5, "b"), out(101.0, "c")];
    let mut player = Player::new(Timeline::new(header(), events), 2.0, Some(1.0));
    assert_eq!(player.due_in(), Some(Duration::from_millis(250)));
    assert!(!player.forward(Duration::from_millis(200)));
    assert!(player.forward(Duration::from_millis(50)));
    assert_eq!(text(&mut player), "a");
    // 100 s of idle time take the limit's 1 s, at twice the pace.
    assert_eq!(player.due_in(), Some(Duration::from_millis(500)));
    assert!(player.forward(Duration::from_millis(750)));
    assert_eq!(text(&mut player), "abc");
    assert!(player.ended());
    player.paused = true;
    assert_eq!(player.due_in(), None);
}

#[test]
fn speed_doubles_and_halves_within_bounds_and_the_status_says_it() {
    let mut player = Player::new(timeline(), 1.0, None);
    player.faster();
    assert_eq!(player.speed(), 2.0);
    for _ in 0..10 {
        player.slower();
    }
    assert_eq!(player.speed(), 1.0 / 16.0);
    player.go_to_state("two");
    player.paused = true;
    assert_eq!(
        player.status(),
        "state two  0:01.0 / 0:03.5  0.0625x  paused"
    );
    assert_eq!(clock(3725.0), "1:02:05");
}
