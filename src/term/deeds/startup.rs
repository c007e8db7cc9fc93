//! How a local shell is started so that it prints its markers (markers.rs): bash through its
//! environment (`PS0`, `PROMPT_COMMAND`); zsh, which takes hooks only from its startup files,
//! through a folder of startup files of the session's own (`ZDOTDIR`) that read the person's
//! own files first, then add the hooks, then give `ZDOTDIR` back, as terminals' shell
//! integrations do.

use super::Deeds;
use std::path::Path;

/// A shell's start: its environment, and the folder of startup files it reads (removed when
/// the session ends).
#[derive(Debug)]
pub struct Startup {
    pub env: Vec<(String, String)>,
    pub folder: Option<tempfile::TempDir>,
}

/// How the shell `shell` (its name, without folder) is started with `env`, for `deeds`.
pub fn startup(shell: &str, env: &[(String, String)], deeds: &mut Deeds) -> Startup {
    let given = |name: &str| {
        env.iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(name).ok())
    };
    let mut env = env.to_vec();
    match shell {
        "bash" => {
            deeds.expect_starts();
            env.push((
                "PROMPT_COMMAND".into(),
                deeds.prompt_command(given("PROMPT_COMMAND").as_deref()),
            ));
            env.push(("PS0".into(), deeds.ps0(given("PS0").as_deref())));
            Startup { env, folder: None }
        }
        "zsh" => match zsh_folder(deeds) {
            Ok(folder) => {
                deeds.expect_starts();
                if let Some(own) = given("ZDOTDIR") {
                    env.push(("FLOWDECK_ZDOTDIR".into(), own));
                }
                env.push(("ZDOTDIR".into(), folder.path().display().to_string()));
                Startup {
                    env,
                    folder: Some(folder),
                }
            }
            // Without it, zsh's commands are followed without statuses.
            Err(e) => {
                tracing::warn!("zsh's startup files for flowdeck could not be written: {e}");
                Startup { env, folder: None }
            }
        },
        _ => Startup { env, folder: None },
    }
}

/// The folder of zsh startup files: each reads the person's own from where their `ZDOTDIR`
/// says (their home when none), and `.zshrc` then adds the hooks and gives `ZDOTDIR` back, so
/// that `.zlogin` and any zsh started inside are the person's alone.
fn zsh_folder(deeds: &Deeds) -> std::io::Result<tempfile::TempDir> {
    let folder = tempfile::Builder::new().prefix("flowdeck-zsh-").tempdir()?;
    let theirs = |file: &str| {
        format!(
            "ZDOTDIR=$__flowdeck_user_zdotdir\n\
             [ -r \"$ZDOTDIR/{file}\" ] && . \"$ZDOTDIR/{file}\"\n\
             __flowdeck_user_zdotdir=$ZDOTDIR\n"
        )
    };
    let back_to_own = "ZDOTDIR=$__flowdeck_own_zdotdir\n";
    let zshenv = format!(
        "# flowdeck: the person's own startup files, then the session's markers.\n\
         __flowdeck_own_zdotdir=$ZDOTDIR\n\
         __flowdeck_user_zdotdir=${{FLOWDECK_ZDOTDIR:-$HOME}}\n\
         {}{back_to_own}",
        theirs(".zshenv")
    );
    let zprofile = format!("{}{back_to_own}", theirs(".zprofile"));
    let zshrc = format!(
        "{}{}\
         export ZDOTDIR=$__flowdeck_user_zdotdir\n\
         unset FLOWDECK_ZDOTDIR __flowdeck_own_zdotdir __flowdeck_user_zdotdir\n",
        theirs(".zshrc"),
        deeds.markers.zsh_hooks()
    );
    write(folder.path(), ".zshenv", &zshenv)?;
    write(folder.path(), ".zprofile", &zprofile)?;
    write(folder.path(), ".zshrc", &zshrc)?;
    Ok(folder)
}

fn write(folder: &Path, file: &str, text: &str) -> std::io::Result<()> {
    std::fs::write(folder.join(file), text)
}
