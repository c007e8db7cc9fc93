//! The studio: rendered screens (insta snapshots), and the binary driven in a PTY, attached to
//! servers, with agents beside it. One binary, so that the crate is linked once for all of them.

#[path = "../common/mod.rs"]
mod common;

mod studio_agent;
mod studio_agents_told;
mod studio_attach;
mod studio_attention;
mod studio_drafts;
mod studio_editor;
mod studio_editor_views;
mod studio_faults;
mod studio_hosts;
mod studio_mouse;
mod studio_overlays;
mod studio_pty;
mod studio_render;
mod studio_replay;
mod studio_views;
