//! The bearer token every HTTP request must carry: the user's own (`FLOWDECK_HTTP_TOKEN`), or
//! one made at start and written where only the user can read it, beside the folder's
//! socket. The token itself never goes to a log, the audit log or the screen: its file's path
//! does.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The variable a user sets to choose the token (for a client configured ahead).
pub const TOKEN_VARIABLE: &str = "FLOWDECK_HTTP_TOKEN";

/// A shorter token is too easy to guess for something that types into terminals.
const SHORTEST: usize = 16;

/// Random bytes in a made token (hex: twice as many characters).
const MADE_BYTES: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error(
        "{TOKEN_VARIABLE} holds {length} characters; a token that guards your terminals needs at least {SHORTEST} (unset it and flowdeck makes one)"
    )]
    TooShort { length: usize },
    #[error("{TOKEN_VARIABLE} must be visible ASCII without spaces (it travels in an HTTP header)")]
    NotAscii,
    #[error("no randomness for a token: {0}")]
    Random(String),
    #[error("cannot write the HTTP token to {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The token, and its file when flowdeck made it (beside `socket`, the folder's socket).
pub fn obtain(socket: &Path) -> Result<(String, Option<PathBuf>), TokenError> {
    if let Some(given) = std::env::var_os(TOKEN_VARIABLE).filter(|v| !v.is_empty()) {
        let given = given.to_str().ok_or(TokenError::NotAscii)?.to_string();
        check(&given)?;
        return Ok((given, None));
    }
    let mut bytes = [0u8; MADE_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
    let token = hex::encode(bytes);
    let path = socket.with_extension("http-token");
    write_private(&path, &token).map_err(|source| TokenError::Write {
        path: path.clone(),
        source,
    })?;
    Ok((token, Some(path)))
}

fn check(token: &str) -> Result<(), TokenError> {
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(TokenError::NotAscii);
    }
    if token.len() < SHORTEST {
        return Err(TokenError::TooShort {
            length: token.len(),
        });
    }
    Ok(())
}

/// Writes the token readable by the owner alone, from the first byte: the file is created
/// with its mode (never widened after), and one left by an earlier server is replaced.
fn write_private(path: &Path, token: &str) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(token.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_must_be_long_and_fit_a_header() {
        assert!(matches!(
            check("short"),
            Err(TokenError::TooShort { length: 5 })
        ));
        assert!(matches!(
            check("a token with spaces in it"),
            Err(TokenError::NotAscii)
        ));
        assert!(check("0123456789abcdef").is_ok());
    }

    #[test]
    fn a_made_token_is_written_for_the_owner_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.http-token");
        std::fs::write(&path, "old, readable by all").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&path, "abc").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "abc\n");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
