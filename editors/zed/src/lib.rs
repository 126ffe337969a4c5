//! typed-pallas's findings in Zed: starts `typed-pallas lsp` for Python files. The command
//! is the `typed-pallas` on the PATH of the project's shell (its environment, activated),
//! or the one Zed's settings name: "lsp": {"typed-pallas": {"binary": {"path":
//! "/path/to/project/.venv/bin/typed-pallas", "arguments": ["lsp"]}}}.

use zed_extension_api::{self as zed, settings::LspSettings, LanguageServerId, Result};

struct TypedPallas;

impl zed::Extension for TypedPallas {
    fn new() -> Self {
        TypedPallas
    }

    fn language_server_command(
        &mut self,
        language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<zed::Command> {
        let binary = LspSettings::for_worktree(language_server_id.as_ref(), worktree)
            .ok()
            .and_then(|settings| settings.binary);
        let (path, arguments) = match binary {
            Some(binary) => (binary.path, binary.arguments),
            None => (None, None),
        };
        let command = path
            .or_else(|| worktree.which("typed-pallas"))
            .ok_or_else(|| {
                "typed-pallas is not on the PATH of the project's shell: install it with \
                 its lsp extra into the project's environment from your clone of it (pip \
                 install \"/path/to/typed-pallas[lsp]\"; it is on no package index, so not \
                 by name), or set lsp.typed-pallas.binary.path in Zed's settings"
                    .to_string()
            })?;
        Ok(zed::Command {
            command,
            args: arguments.unwrap_or_else(|| vec!["lsp".to_string()]),
            env: worktree.shell_env(),
        })
    }
}

zed::register_extension!(TypedPallas);
